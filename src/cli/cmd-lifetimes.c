/* cmd-lifetimes.c - heapscope lifetimes: allocation time against lifetime of the filtered allocations, SVG or TSV */
#include <stdio.h>
#include <string.h>

#include "../analysis/lifetimes.h"
#include "../render/lifetimes.h"
#include "cli.h"

#define MAX_POINTS 20000   /* more dots than this only blacken the chart and slow the browser */

static const char usage[] =
	"usage: heapscope lifetimes TRACE -o OUT.svg [FILTERS] [OPTIONS]\n"
	"  -o FILE           where to write (with --tsv: stdout when not given)\n"
	"  --tsv             every allocation as a line 'alloc_time_s lifetime_s size\n"
	"                    stack_id leaked' instead of SVG (the SVG draws at most\n"
	"                    20,000, evenly spaced)\n"
	"  --json            every allocation as JSON (schema heapscope-lifetimes/1)\n";

struct opts {
	const char *out_path;
	int tsv, json;
};

static int take(void *arg, const char *opt, const char *v)
{
	struct opts *o = arg;

	if (!strcmp(opt, "--tsv"))
		o->tsv = 1;
	else if (!strcmp(opt, "--json"))
		o->json = 1;
	else
		o->out_path = v;
	return 0;
}

int hs_cmd_lifetimes(int argc, char **argv)
{
	static const char *const flags[] = { "--tsv", "--json", NULL }, *const valued[] = { "-o", NULL };
	struct opts o = { 0 };
	struct hs_cli_trace tr = { 0 };
	struct hs_lifetimes lt = { 0 };
	struct hs_filter f;
	struct hs_cli_args args = { .cmd = "lifetimes", .usage = usage, .f = &f, .flags = flags, .valued = valued,
				    .take = take, .ctx = &o, .want = 1 };
	const char *path;
	FILE *out = NULL;
	int rc, k;

	hs_filter_init(&f);
	if ((rc = hs_cli_args_parse(&args, argc, argv)) != 0 || args.help)
		goto out;
	path = args.paths[0];
	if (o.tsv && o.json) {
		rc = hs_die("--tsv and --json are two formats; give one of them");
		goto out;
	}
	if (!o.out_path && !o.tsv && !o.json) {
		rc = hs_die("lifetimes needs '-o OUT.svg' (or --tsv or --json for stdout)");
		goto out;
	}
	if ((rc = hs_cli_trace_open(&tr, path, &f, HS_BY_BACKTRACE)) != 0)
		goto out;
	if (!o.tsv && !o.json && hs_lifetimes_build(&lt, &tr.tab, &f, MAX_POINTS) < 0) {
		rc = hs_die("out of memory analysing '%s'" HS_OOM_ADVICE, path);
		goto out;
	}
	if (!(out = hs_cli_out_open(o.out_path))) {
		rc = 1;
		goto out;
	}
	k = o.tsv ? hs_render_lifetimes_tsv(out, &tr.tab, &f)
	    : o.json ? hs_render_lifetimes_json(out, path, &tr.tab, &f)
	    : hs_render_lifetimes_svg(out, path, &tr.tab, &f, &lt);
	rc = hs_cli_out_close(out, o.out_path, k, o.tsv ? "lifetimes TSV" : o.json ? "lifetimes JSON" : "lifetime scatter");
out:
	hs_lifetimes_free(&lt);
	hs_filter_free(&f);
	hs_cli_trace_close(&tr);
	return rc;
}
