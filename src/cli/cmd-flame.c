/* cmd-flame.c - heapscope flame: a memory flame graph of the filtered allocations, as SVG or folded stacks */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "../analysis/alloctab.h"
#include "../analysis/filter.h"
#include "../analysis/flame.h"
#include "../analysis/stacks.h"
#include "../analysis/timespec.h"
#include "../render/flame.h"
#include "../render/format.h"
#include "cli.h"
#include "heapscope/reader.h"

static const char usage[] =
	"usage: heapscope flame TRACE -o OUT.svg [FILTERS] [OPTIONS]\n"
	"  -o FILE            where to write (with --folded: stdout when not given)\n"
	"  --weight bytes|count|leaked|live   what a frame's width is (default: bytes)\n"
	"  --at T             with --weight live: the moment (default: peak)\n"
	"  --direction down|up   down: allocation sites on top, callers below (default);\n"
	"                     up: from main upward to the sites\n"
	"  --folded           write folded stacks instead of SVG (flamegraph.pl, inferno,\n"
	"                     speedscope)\n"
	"  --json             write the frame tree as JSON (schema heapscope-flame/1, in\n"
	"                     d3-flame-graph's shape)\n";

struct opts {
	const char *out_path, *at;
	struct hs_timespec at_spec;
	int folded, json, down, weight;
};

static int take(void *arg, const char *opt, const char *v)
{
	struct opts *o = arg;
	int k;

	if (!strcmp(opt, "--folded")) {
		o->folded = 1;
	} else if (!strcmp(opt, "--json")) {
		o->json = 1;
	} else if (!strcmp(opt, "-o")) {
		o->out_path = v;
	} else if (!strcmp(opt, "--at")) {
		if (hs_timespec_parse(&o->at_spec, v, 0) < 0)
			return hs_die("bad time '%s' for --at; use %s", v, HS_TIMESPEC_FORMS);
		o->at = v;
	} else if (!strcmp(opt, "--direction")) {
		if (strcmp(v, "down") && strcmp(v, "up"))
			return hs_die("bad value '%s' for --direction; use down (sites on top) or up (from main)", v);
		o->down = !strcmp(v, "down");
	} else {
		for (k = 0; k < HS_WEIGHT_COUNT_ && strcmp(v, hs_flame_weight_names[k]); k++)
			;
		if (k == HS_WEIGHT_COUNT_)
			return hs_die("bad value '%s' for --weight; use bytes, count, leaked or live", v);
		o->weight = k;
	}
	return 0;
}

struct stream {
	struct hs_flame_stream *fs;
	struct hs_filter *f;
	enum hs_flame_weight weight;
	const struct hs_timespec *at;
	uint64_t at_ns;
};

static int stream_begin(void *ctx, uint64_t end_ns, uint64_t sample_bytes, void **sink_arg)
{
	struct stream *sm = ctx;
	int rc;

	sm->at_ns = hs_timespec_resolve(sm->at, end_ns, 0);
	rc = hs_flame_stream_begin(&sm->fs, sm->f, end_ns, sample_bytes, sm->weight, sm->at_ns);
	*sink_arg = sm->fs;
	return rc;
}

int hs_cmd_flame(int argc, char **argv)
{
	static const char *const flags[] = { "--folded", "--json", NULL };
	static const char *const valued[] = { "-o", "--weight", "--at", "--direction", NULL };
	struct opts o = { .at_spec = { .anchor = HS_TIME_PEAK }, .down = 1, .weight = -1 };
	const char *path = NULL, *out_path, *at;
	struct hs_cli_trace tr = { 0 };
	struct stream sm = { 0 };
	struct hs_filter f;
	struct hs_cli_args args = { .cmd = "flame", .usage = usage, .f = &f, .flags = flags, .valued = valued,
				    .take = take, .ctx = &o, .want = 1 };
	struct hs_flame fl = { 0 };
	struct hs_timespec at_spec;
	FILE *out = NULL;
	char title[1200], sub[1400], tbuf[64];
	int folded, down, weight, rc, k;
	uint64_t at_ns = 0;

	hs_filter_init(&f);
	if ((rc = hs_cli_args_parse(&args, argc, argv)) != 0 || args.help)
		goto out;
	path = args.paths[0];
	out_path = o.out_path;
	at = o.at;
	at_spec = o.at_spec;
	folded = o.folded;
	down = o.down;
	weight = o.weight;
	if (at && weight >= 0 && weight != HS_WEIGHT_LIVE) {
		rc = hs_die("--at applies to --weight live, not '%s'; drop one of them", hs_flame_weight_names[weight]);
		goto out;
	}
	if (weight < 0)
		weight = at ? HS_WEIGHT_LIVE : HS_WEIGHT_BYTES;
	if (folded && o.json) {
		rc = hs_die("--folded and --json are two formats; give one of them");
		goto out;
	}
	if (!out_path && !folded && !o.json) {
		rc = hs_die("flame needs '-o OUT.svg' (or --folded or --json to write to stdout)");
		goto out;
	}
	sm.f = &f;
	sm.weight = (enum hs_flame_weight)weight;
	sm.at = &at_spec;
	rc = 2;
	if (hs_cli_can_stream(&f) && (weight != HS_WEIGHT_LIVE || at_spec.anchor != HS_TIME_PEAK)) {
		struct hs_cli_sink sk = { .begin = stream_begin, .sink = hs_flame_sink, .ctx = &sm,
					  .allocs_only = (weight == HS_WEIGHT_BYTES || weight == HS_WEIGHT_COUNT) &&
							 hs_filter_fateless(&f) };
		rc = hs_cli_stream(&tr, path, &f, HS_BY_BACKTRACE, &sk);
		if (rc == 0 && (hs_flame_stream_weights(sm.fs, &fl, &tr.tab, &tr.st, down) < 0 ||
				(!folded && hs_flame_tree(&fl, &tr.st, o.json ? 0 : hs_render_flame_svg_keep()) < 0)))
			rc = hs_die("out of memory analysing '%s'" HS_OOM_ADVICE, path);
		hs_flame_stream_free(sm.fs);
		if (rc == 1)
			goto out;
		at_ns = sm.at_ns;
		if (rc == 2) {
			/* the table path below, from scratch */
			hs_flame_free(&fl);
			hs_cli_trace_close(&tr);
		}
	}
	if (rc == 2) {
		if ((rc = hs_cli_trace_open(&tr, path, &f, HS_BY_BACKTRACE)) != 0)
			goto out;
		at_ns = hs_timespec_moment(&at_spec, tr.tab.end_ns, tr.tab.peak_ns);
		if (hs_flame_weights(&fl, &tr.tab, &f, &tr.st, (enum hs_flame_weight)weight, at_ns, down) < 0 ||
		    (!folded && hs_flame_tree(&fl, &tr.st, o.json ? 0 : hs_render_flame_svg_keep()) < 0)) {
			rc = hs_die("out of memory analysing '%s'" HS_OOM_ADVICE, path);
			goto out;
		}
	}
	if (!(out = hs_cli_out_open(out_path))) {
		rc = 1;
		goto out;
	}
	if (folded) {
		k = hs_render_flame_folded(out, &tr.st, &fl);
	} else if (o.json) {
		k = hs_render_flame_json(out, &fl, path, f.desc, tr.tab.sample_bytes != 0);
	} else {
		snprintf(title, sizeof(title), "heapscope %s flame graph of %s",
			 weight == HS_WEIGHT_COUNT ? "allocation count" : weight == HS_WEIGHT_LEAKED ? "leaked memory"
			 : weight == HS_WEIGHT_LIVE ? "live memory" : "allocated memory", path);
		if (weight == HS_WEIGHT_LIVE)
			snprintf(sub, sizeof(sub), "live at %s%s%s%s; %s", hs_fmt_duration(tbuf, sizeof(tbuf), fl.at_ns),
				 at_ns == HS_AT_PEAK ? " (the peak)" : "",
				 f.desc[0] ? ", filter: " : "", f.desc, down ? "allocation sites on top, callers below" : "from main up");
		else
			snprintf(sub, sizeof(sub), "%s%s%s", f.desc[0] ? "filter: " : "", f.desc,
				 down ? (f.desc[0] ? "; sites on top, callers below" : "allocation sites on top, callers below")
				      : (f.desc[0] ? "; from main up" : "from main up"));
		k = hs_render_flame_svg(out, &fl, title, sub);
	}
	rc = hs_cli_out_close(out, out_path, k, folded ? "folded stacks" : o.json ? "flame JSON" : "flame graph");
out:
	hs_flame_free(&fl);
	hs_filter_free(&f);
	hs_cli_trace_close(&tr);
	return rc;
}
