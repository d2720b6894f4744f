/* cmd-diff.c - heapscope diff: the sites whose bytes, leaks or peak changed most between two traces of one program */
#include <stdio.h>
#include <string.h>

#include "../analysis/diff.h"
#include "../analysis/top.h"
#include "../render/diff.h"
#include "../render/format.h"
#include "cli.h"

static const char usage[] =
	"usage: heapscope diff BASE NEW [FILTERS] [OPTIONS]\n"
	"  --by backtrace|function|line|library   what a site is (default: backtrace)\n"
	"  --sort change|bytes|peak|leaked|calls  (default change: the largest of the\n"
	"                    changes in bytes allocated, peak and leaked bytes)\n"
	"  -n N              sites to show (default 20; 0: all)\n"
	"  --frames N        backtrace frames under each site (default 6)\n"
	"  --json            the same list as JSON (schema: docs/analysis.md)\n"
	"Filters apply to both traces; times like 98% and peak resolve in each.\n";

struct opts {
	struct hs_render_diff ctx;
	int json, by, sort;
};

static int take(void *arg, const char *opt, const char *v)
{
	struct opts *o = arg;

	if (!strcmp(opt, "--json"))
		o->json = 1;
	else if (!strcmp(opt, "--by"))
		return hs_cli_args_by(v, &o->by);
	else if (!strcmp(opt, "--sort") && hs_cli_pick(v, hs_diff_sort_names, HS_DIFF_SORTS, &o->sort) < 0)
		return hs_die("bad value '%s' for --sort; use change, bytes, peak, leaked or calls", v);
	else if (!strcmp(opt, "-n") && hs_cli_int(v, &o->ctx.limit) < 0)
		return hs_die("bad value '%s' for -n; give a number of sites (0: all)", v);
	else if (!strcmp(opt, "--frames") && hs_cli_int(v, &o->ctx.frames) < 0)
		return hs_die("bad value '%s' for --frames; give a number of frames", v);
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p ? p : "";
}

/* Sites are matched by name: across two programs that gives a long list that means nothing. */
static void warn_other_program(const char *const *paths, const struct hs_trace_info *b, const struct hs_trace_info *n)
{
	if (!b || !n || !strcmp(base_name(b->exe), base_name(n->exe)))
		return;
	fprintf(stderr,
		"heapscope: warning: '%s' traced '%s' and '%s' traced '%s': diff compares two runs of one program, "
		"check that these are the traces you meant\n",
		paths[0], b->exe ? b->exe : "?", paths[1], n->exe ? n->exe : "?");
}

/* How a trace was recorded, for the warning below (the size as the report gives it). */
static const char *mode_text(char *buf, size_t n, const struct hs_trace_info *in)
{
	char size[32];

	if (!in->sample_bytes)
		return "a full trace";
	snprintf(buf, n, "sampled every %s", hs_fmt_bytes(size, sizeof(size), (double)in->sample_bytes));
	return buf;
}

/*
 * A sampled trace's figures are estimates: against a full trace, or one
 * sampled at another rate, the sampling error shows as changes (python3's
 * peak heap "grew" 26.2 to 34.6 MiB, full against sampled at 512 KiB).
 */
static void warn_other_mode(const char *const *paths, const struct hs_trace_info *b, const struct hs_trace_info *n)
{
	char bm[64], nm[64];

	if (!b || !n || b->sample_bytes == n->sample_bytes)
		return;
	fprintf(stderr,
		"heapscope: warning: '%s' is %s and '%s' %s: sampled figures are estimates, whose error shows as "
		"changes; record both the same way (heapscope record --sample)\n",
		paths[0], mode_text(bm, sizeof(bm), b), paths[1], mode_text(nm, sizeof(nm), n));
}

int hs_cmd_diff(int argc, char **argv)
{
	static const char *const flags[] = { "--json", NULL }, *const valued[] = { "--by", "--sort", "-n", "--frames", NULL };
	struct opts o = { .ctx = { .limit = 20, .frames = 6 }, .by = HS_BY_BACKTRACE, .sort = HS_DIFF_CHANGE };
	struct hs_cli_trace bt = { 0 }, nt = { 0 };
	struct hs_top btop = { 0 }, ntop = { 0 };
	struct hs_diff d = { 0 };
	struct hs_filter bf, nf;
	/* one filter per trace: each resolves its times and memoizes its stacks against its own trace */
	struct hs_cli_args args = { .cmd = "diff", .usage = usage, .f = &bf, .f2 = &nf, .flags = flags, .valued = valued,
				    .take = take, .ctx = &o, .want = 2 };
	const char *const *paths = args.paths;
	int rc;

	hs_filter_init(&bf);
	hs_filter_init(&nf);
	if ((rc = hs_cli_args_parse(&args, argc, argv)) != 0 || args.help)
		goto out;
	if ((rc = hs_cli_trace_open(&bt, paths[0], &bf, o.by)) != 0 || (rc = hs_cli_trace_open(&nt, paths[1], &nf, o.by)) != 0)
		goto out;
	warn_other_program(paths, hs_reader_info(bt.r), hs_reader_info(nt.r));
	warn_other_mode(paths, hs_reader_info(bt.r), hs_reader_info(nt.r));
	if (hs_top_build(&btop, &bt.tab, &bf, &bt.st, HS_SORT_BYTES, HS_STACKS_NO_KEY) < 0 ||
	    hs_top_build(&ntop, &nt.tab, &nf, &nt.st, HS_SORT_BYTES, HS_STACKS_NO_KEY) < 0 ||
	    hs_diff_build(&d, &btop, &bt.st, &ntop, &nt.st, (enum hs_diff_sort)o.sort) < 0) {
		rc = hs_die("out of memory comparing '%s' and '%s'" HS_OOM_ADVICE, paths[0], paths[1]);
		goto out;
	}
	o.ctx.base_path = paths[0];
	o.ctx.new_path = paths[1];
	o.ctx.base_tab = &bt.tab;
	o.ctx.new_tab = &nt.tab;
	o.ctx.base_top = &btop;
	o.ctx.new_top = &ntop;
	o.ctx.base_st = &bt.st;
	o.ctx.new_st = &nt.st;
	o.ctx.filter = &nf;
	if (o.json)
		hs_render_diff_json(stdout, &o.ctx, &d);
	else
		hs_render_diff_text(stdout, &o.ctx, &d);
out:
	hs_diff_free(&d);
	hs_top_free(&btop);
	hs_top_free(&ntop);
	hs_filter_free(&bf);
	hs_filter_free(&nf);
	hs_cli_trace_close(&bt);
	hs_cli_trace_close(&nt);
	return rc;
}
