/* cmd-top.c - heapscope top: filtered allocations summed per site, function, line or library */
#define _POSIX_C_SOURCE 200809L
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/alloctab.h"
#include "../analysis/filter.h"
#include "../analysis/stacks.h"
#include "../analysis/top.h"
#include "../render/top.h"
#include "cli.h"
#include "heapscope/reader.h"

static const char usage[] =
	"usage: heapscope top TRACE [FILTERS] [OPTIONS]\n"
	"  --by backtrace|function|line|library   what a row is (default: backtrace)\n"
	"  --sort calls|bytes|peak|leaked|temporary   (default: bytes)\n"
	"  -n N              rows to show (default 20; 0: all)\n"
	"  --frames N        backtrace frames under each row (default 6)\n"
	"  --callers ROW|RE  subdivide one row by its callers: its number in the listing\n"
	"                    with the same filters, or a regex on its name\n"
	"  --json            the same table as JSON (schema: docs/analysis.md)\n";

/* --callers: a row number of the plain listing, or the first row whose name matches */
static int find_focus(struct hs_render_top *ctx, const struct hs_top *top, const char *spec, uint32_t *key,
		      char *name, size_t n)
{
	char buf[1100];
	regex_t re;
	int row;

	if (hs_cli_int(spec, &row) == 0) {
		if (row < 1 || (uint32_t)row > top->nrows)
			return hs_die("no row %d for --callers: the listing with these filters has %u rows", row, top->nrows);
		*key = top->rows[row - 1].key;
		ctx->focus_row = row;
		snprintf(name, n, "%s", hs_render_top_row_name(ctx, top, &top->rows[row - 1], buf, sizeof(buf)));
		return 0;
	}
	if (regcomp(&re, spec, REG_EXTENDED | REG_NOSUB) != 0)
		return hs_die("bad regex '%s' for --callers; give a row number or a POSIX extended regex", spec);
	for (uint32_t i = 0; i < top->nrows; i++) {
		const char *nm = hs_render_top_row_name(ctx, top, &top->rows[i], buf, sizeof(buf));
		if (regexec(&re, nm, 0, NULL, 0) == 0) {
			snprintf(name, n, "%s", nm);
			*key = top->rows[i].key;
			ctx->focus_row = (int)i + 1;
			regfree(&re);
			return 0;
		}
	}
	regfree(&re);
	return hs_die("no row matches '%s' for --callers; run 'heapscope top' with the same options to see the names", spec);
}

struct opts {
	struct hs_render_top *ctx;
	int json, by, sort;
	const char *callers;
};

static int take(void *arg, const char *opt, const char *v)
{
	struct opts *o = arg;

	if (!strcmp(opt, "--json"))
		o->json = 1;
	else if (!strcmp(opt, "--by"))
		return hs_cli_args_by(v, &o->by);
	else if (!strcmp(opt, "--sort") && hs_cli_pick(v, hs_top_sort_names, HS_SORT_COUNT, &o->sort) < 0)
		return hs_die("bad value '%s' for --sort; use calls, bytes, peak, leaked or temporary", v);
	else if (!strcmp(opt, "-n") && hs_cli_int(v, &o->ctx->limit) < 0)
		return hs_die("bad value '%s' for -n; give a number of rows (0: all)", v);
	else if (!strcmp(opt, "--frames") && hs_cli_int(v, &o->ctx->frames) < 0)
		return hs_die("bad value '%s' for --frames; give a number of frames", v);
	else if (!strcmp(opt, "--callers"))
		o->callers = v;
	return 0;
}

int hs_cmd_top(int argc, char **argv)
{
	static const char *const flags[] = { "--json", NULL };
	static const char *const valued[] = { "--by", "--sort", "-n", "--frames", "--callers", NULL };
	const char *path = NULL, *callers;
	struct hs_render_top ctx = { .limit = 20, .frames = 6 };
	struct opts o = { .ctx = &ctx, .by = HS_BY_BACKTRACE, .sort = HS_SORT_BYTES };
	struct hs_reader *r = NULL;
	struct hs_alloctab tab = { 0 };
	struct hs_stacks st = { 0 };
	struct hs_filter f;
	struct hs_cli_args args = { .cmd = "top", .usage = usage, .f = &f, .flags = flags, .valued = valued,
				    .take = take, .ctx = &o, .want = 1 };
	struct hs_top top = { 0 }, sub = { 0 };
	char focus_name[1100];
	int json, rc, by, sort;
	uint32_t focus = HS_STACKS_NO_KEY;

	hs_filter_init(&f);
	if ((rc = hs_cli_args_parse(&args, argc, argv)) != 0 || args.help)
		goto out;
	path = args.paths[0];
	json = o.json;
	by = o.by;
	sort = o.sort;
	callers = o.callers;
	if ((rc = hs_cli_load(&r, &tab, path)) != 0)
		goto out;
	if (hs_stacks_init(&st, r, f.hide, f.nhide, !f.no_default_hide, (enum hs_group_by)by) < 0 ||
	    hs_filter_prepare(&f, &tab, &st) < 0 || hs_top_build(&top, &tab, &f, &st, (enum hs_top_sort)sort, HS_STACKS_NO_KEY) < 0) {
		rc = hs_die("out of memory analysing '%s'" HS_OOM_ADVICE, path);
		goto out;
	}
	if (f.warn[0])
		fprintf(stderr, "heapscope: warning: %s\n", f.warn);
	ctx.path = path;
	ctx.tab = &tab;
	ctx.filter = &f;
	ctx.st = &st;
	if (callers) {
		if ((rc = find_focus(&ctx, &top, callers, &focus, focus_name, sizeof(focus_name))) != 0)
			goto out;
		ctx.focus_name = focus_name;
		if (hs_top_build(&sub, &tab, &f, &st, (enum hs_top_sort)sort, focus) < 0) {
			rc = hs_die("out of memory analysing '%s'" HS_OOM_ADVICE, path);
			goto out;
		}
	}
	if (json)
		hs_render_top_json(stdout, &ctx, callers ? &sub : &top);
	else
		hs_render_top_text(stdout, &ctx, callers ? &sub : &top);
	hs_cli_warn_unnamed(r);
out:
	hs_top_free(&sub);
	hs_top_free(&top);
	hs_filter_free(&f);
	if (st.r)
		hs_stacks_free(&st);
	hs_alloctab_free(&tab);
	hs_reader_close(r);
	return rc;
}
