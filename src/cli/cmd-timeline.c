/* cmd-timeline.c - heapscope timeline: heap, RSS and the top groups of a filter over time, as SVG, CSV or JSON */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../analysis/timeline.h"
#include "../analysis/top.h"
#include "../render/timeline.h"
#include "cli.h"

static const char usage[] =
	"usage: heapscope timeline TRACE -o OUT.svg [FILTERS] [OPTIONS]\n"
	"  -o FILE           where to write (with --csv or --json: stdout when not given)\n"
	"  --top N           groups drawn as their own series (default 5)\n"
	"  --by backtrace|function|line|library   what a group is (default: backtrace)\n"
	"  --sort peak|bytes|leaked|calls|temporary   which groups are the top ones\n"
	"                    (default: peak)\n"
	"  --points N        moments sampled over the run (default 500)\n"
	"  --no-rss          leave RSS out of the SVG (its scale dwarfs a small heap)\n"
	"  --csv             time_s, heap, rss, one column per group, other: for gnuplot\n"
	"                    and spreadsheets\n"
	"  --json            the same series as JSON (schema: docs/analysis.md)\n";

struct opts {
	struct hs_render_timeline ctx;
	const char *out_path;
	int csv, json, by, sort, ngroups, points;
};

static int take(void *arg, const char *opt, const char *v)
{
	struct opts *o = arg;

	if (!strcmp(opt, "--csv"))
		o->csv = 1;
	else if (!strcmp(opt, "--json"))
		o->json = 1;
	else if (!strcmp(opt, "--no-rss"))
		o->ctx.no_rss = 1;
	else if (!strcmp(opt, "-o"))
		o->out_path = v;
	else if (!strcmp(opt, "--by"))
		return hs_cli_args_by(v, &o->by);
	else if (!strcmp(opt, "--top") && (hs_cli_int(v, &o->ngroups) < 0 || o->ngroups > 100))
		return hs_die("bad value '%s' for --top; give a number of groups from 0 to 100", v);
	else if (!strcmp(opt, "--sort") && hs_cli_pick(v, hs_top_sort_names, HS_SORT_COUNT, &o->sort) < 0)
		return hs_die("bad value '%s' for --sort; use peak, bytes, leaked, calls or temporary", v);
	else if (!strcmp(opt, "--points") && (hs_cli_int(v, &o->points) < 0 || o->points < 2 || o->points > 65536))
		return hs_die("bad value '%s' for --points; give a number from 2 to 65536", v);
	return 0;
}

struct stream {
	struct hs_timeline_stream *ts;
	struct hs_filter *f;
	const struct opts *o;
};

static int stream_begin(void *ctx, uint64_t end_ns, uint64_t sample_bytes, void **sink_arg)
{
	struct stream *sm = ctx;
	int rc = hs_timeline_stream_begin(&sm->ts, sm->f, end_ns, sample_bytes, (uint32_t)sm->o->points,
					  (uint32_t)sm->o->ngroups, (enum hs_top_sort)sm->o->sort);

	*sink_arg = sm->ts;
	return rc;
}

int hs_cmd_timeline(int argc, char **argv)
{
	static const char *const flags[] = { "--csv", "--json", "--no-rss", NULL };
	static const char *const valued[] = { "-o", "--top", "--by", "--sort", "--points", NULL };
	struct opts o = { .by = HS_BY_BACKTRACE, .sort = HS_SORT_PEAK, .ngroups = 5, .points = 500 };
	struct hs_cli_trace tr = { 0 };
	struct hs_timeline tl = { 0 };
	struct stream sm = { 0 };
	struct hs_filter f;
	struct hs_cli_args args = { .cmd = "timeline", .usage = usage, .f = &f, .flags = flags, .valued = valued,
				    .take = take, .ctx = &o, .want = 1 };
	const char *path;
	FILE *out = NULL;
	int rc, k;

	hs_filter_init(&f);
	if ((rc = hs_cli_args_parse(&args, argc, argv)) != 0 || args.help)
		goto out;
	path = args.paths[0];
	if (o.csv && o.json) {
		rc = hs_die("--csv and --json are exclusive; pick one");
		goto out;
	}
	if (!o.out_path && !o.csv && !o.json) {
		rc = hs_die("timeline needs '-o OUT.svg' (or --csv or --json for stdout)");
		goto out;
	}
	rc = 2;
	if (hs_cli_can_stream(&f)) {
		struct hs_cli_sink sk = { .begin = stream_begin, .sink = hs_timeline_sink, .ctx = &sm };
		int e = 0;
		sm.f = &f;
		sm.o = &o;
		rc = hs_cli_stream(&tr, path, &f, o.by, &sk);
		if (rc == 0 && (e = hs_timeline_stream_finish(sm.ts, &tl, &tr.tab, &tr.st)) < 0)
			rc = e == -EAGAIN ? hs_cli_stream_fall_back(path, "the peak the sums are for is not the last")
					  : hs_die("out of memory analysing '%s'" HS_OOM_ADVICE, path);
		hs_timeline_stream_free(sm.ts);
		if (rc == 1)
			goto out;
		if (rc == 2) {
			/* the table path below, from scratch */
			hs_timeline_free(&tl);
			hs_cli_trace_close(&tr);
		}
	}
	if (rc == 2) {
		if ((rc = hs_cli_trace_open(&tr, path, &f, o.by)) != 0)
			goto out;
		if (hs_timeline_build(&tl, &tr.tab, &f, &tr.st, (uint32_t)o.points, (uint32_t)o.ngroups,
				      (enum hs_top_sort)o.sort) < 0) {
			rc = hs_die("out of memory analysing '%s'" HS_OOM_ADVICE, path);
			goto out;
		}
	}
	if (!(out = hs_cli_out_open(o.out_path))) {
		rc = 1;
		goto out;
	}
	o.ctx.path = path;
	o.ctx.tab = &tr.tab;
	o.ctx.filter = &f;
	o.ctx.st = &tr.st;
	k = o.csv ? hs_render_timeline_csv(out, &o.ctx, &tl) : o.json ? hs_render_timeline_json(out, &o.ctx, &tl) :
		    hs_render_timeline_svg(out, &o.ctx, &tl);
	rc = hs_cli_out_close(out, o.out_path, k, o.csv ? "timeline CSV" : o.json ? "timeline JSON" : "timeline");
out:
	hs_timeline_free(&tl);
	hs_filter_free(&f);
	hs_cli_trace_close(&tr);
	return rc;
}
