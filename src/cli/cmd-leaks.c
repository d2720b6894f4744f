/* cmd-leaks.c - heapscope leaks: allocation sites ranked by how suspicious they are, each with its verdict */
#include <stdio.h>
#include <string.h>

#include "../analysis/leaks.h"
#include "../render/leaks.h"
#include "cli.h"

static const char usage[] =
	"usage: heapscope leaks TRACE [FILTERS] [OPTIONS]\n"
	"  --by backtrace|function|line|library   what a site is (default: backtrace)\n"
	"  -n N              sites to show (default 20; 0: all)\n"
	"  --frames N        backtrace frames under each site (default 6)\n"
	"  --all             also list the sites that are ok or temporary\n"
	"  --json            the same list as JSON (schema: docs/analysis.md)\n";

struct opts {
	struct hs_render_leaks ctx;
	int json, by;
};

static int take(void *arg, const char *opt, const char *v)
{
	struct opts *o = arg;

	if (!strcmp(opt, "--json"))
		o->json = 1;
	else if (!strcmp(opt, "--all"))
		o->ctx.all = 1;
	else if (!strcmp(opt, "--by"))
		return hs_cli_args_by(v, &o->by);
	else if (!strcmp(opt, "-n") && hs_cli_int(v, &o->ctx.limit) < 0)
		return hs_die("bad value '%s' for -n; give a number of sites (0: all)", v);
	else if (!strcmp(opt, "--frames") && hs_cli_int(v, &o->ctx.frames) < 0)
		return hs_die("bad value '%s' for --frames; give a number of frames", v);
	return 0;
}

struct stream {
	struct hs_leaks_stream *ls;
	struct hs_filter *f;
};

static int stream_begin(void *ctx, uint64_t end_ns, uint64_t sample_bytes, void **sink_arg)
{
	struct stream *sm = ctx;
	int rc = hs_leaks_stream_begin(&sm->ls, sm->f, end_ns, sample_bytes);

	*sink_arg = sm->ls;
	return rc;
}

int hs_cmd_leaks(int argc, char **argv)
{
	static const char *const flags[] = { "--json", "--all", NULL }, *const valued[] = { "--by", "-n", "--frames", NULL };
	struct opts o = { .ctx = { .limit = 20, .frames = 6 }, .by = HS_BY_BACKTRACE };
	struct hs_cli_trace tr = { 0 };
	struct hs_leaks lk = { 0 };
	struct hs_filter f;
	struct stream sm = { .f = &f };
	struct hs_cli_args args = { .cmd = "leaks", .usage = usage, .f = &f, .flags = flags, .valued = valued,
				    .take = take, .ctx = &o, .want = 1 };
	const char *path;
	int rc;

	hs_filter_init(&f);
	if ((rc = hs_cli_args_parse(&args, argc, argv)) != 0 || args.help)
		goto out;
	path = args.paths[0];
	if (hs_cli_can_stream(&f)) {
		struct hs_cli_sink sk = { .begin = stream_begin, .sink = hs_leaks_sink, .ctx = &sm };
		rc = hs_cli_stream(&tr, path, &f, o.by, &sk);
		if (rc == 0 && hs_leaks_stream_finish(sm.ls, &lk, &tr.tab, &tr.st) < 0)
			rc = hs_die("out of memory analysing '%s'" HS_OOM_ADVICE, path);
		hs_leaks_stream_free(sm.ls);
		if (rc == 1)
			goto out;
		if (rc == 2)
			hs_cli_trace_close(&tr);   /* the table path below, from scratch */
	}
	if (rc == 2 || !hs_cli_can_stream(&f)) {
		rc = 0;
		if ((rc = hs_cli_trace_open(&tr, path, &f, o.by)) != 0)
			goto out;
		if (hs_leaks_build(&lk, &tr.tab, &f, &tr.st) < 0) {
			rc = hs_die("out of memory analysing '%s'" HS_OOM_ADVICE, path);
			goto out;
		}
	}
	o.ctx.path = path;
	o.ctx.tab = &tr.tab;
	o.ctx.filter = &f;
	o.ctx.st = &tr.st;
	if (o.json)
		hs_render_leaks_json(stdout, &o.ctx, &lk);
	else
		hs_render_leaks_text(stdout, &o.ctx, &lk);
out:
	hs_leaks_free(&lk);
	hs_filter_free(&f);
	hs_cli_trace_close(&tr);
	return rc;
}
