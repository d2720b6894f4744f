/* cmd-flame.c - heapscope flame: a memory flame graph of the filtered allocations, as SVG or folded stacks */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
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
	"  --weight bytes|count|leaked|live   what a frame's width is (default: bytes allocated)\n"
	"  --at T             with --weight live: the moment (default: peak)\n"
	"  --direction down|up   down: allocation sites on top, callers below (default);\n"
	"                     up: from main upward to the sites\n"
	"  --folded           write folded stacks (flamegraph.pl, inferno, speedscope) instead of SVG\n";

int hs_cmd_flame(int argc, char **argv)
{
	const char *path = NULL, *out_path = NULL, *at = NULL;
	struct hs_reader *r = NULL;
	struct hs_alloctab tab = { 0 };
	struct hs_stacks st = { 0 };
	struct hs_filter f;
	struct hs_flame fl = { 0 };
	struct hs_timespec at_spec = { .anchor = HS_TIME_PEAK };
	FILE *out = NULL;
	char title[1200], sub[1400], tbuf[64];
	int folded = 0, down = 1, weight = -1, rc = 0, k;
	uint64_t at_ns = 0;

	hs_filter_init(&f);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((k = hs_filter_parse(&f, argc, argv, &i)) < 0) {
			rc = hs_die("%s", f.err);
			goto out;
		} else if (k > 0) {
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			fputs(hs_filter_usage, stdout);
			goto out;
		} else if (!strcmp(a, "--folded")) {
			folded = 1;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--weight") || !strcmp(a, "--at") || !strcmp(a, "--direction")) {
			const char *v = i + 1 < argc ? argv[++i] : NULL;
			if (!v) {
				rc = hs_die("%s needs a value; see 'heapscope flame --help'", a);
				goto out;
			}
			if (!strcmp(a, "-o")) {
				out_path = v;
			} else if (!strcmp(a, "--at")) {
				if (hs_timespec_parse(&at_spec, v, 0) < 0) {
					rc = hs_die("bad time '%s' for --at; use %s", v, HS_TIMESPEC_FORMS);
					goto out;
				}
				at = v;
			} else if (!strcmp(a, "--direction")) {
				if (strcmp(v, "down") && strcmp(v, "up")) {
					rc = hs_die("bad value '%s' for --direction; use down (sites on top) or up (from main)", v);
					goto out;
				}
				down = !strcmp(v, "down");
			} else {
				for (k = 0; k < HS_WEIGHT_COUNT_ && strcmp(v, hs_flame_weight_names[k]); k++)
					;
				if (k == HS_WEIGHT_COUNT_) {
					rc = hs_die("bad value '%s' for --weight; use bytes, count, leaked or live", v);
					goto out;
				}
				weight = k;
			}
		} else if ((rc = hs_cli_trace_arg("flame", a, &path)) != 0) {
			goto out;
		}
	}
	if (!path) {
		fputs(usage, stderr);
		rc = 2;
		goto out;
	}
	if (at && weight >= 0 && weight != HS_WEIGHT_LIVE) {
		rc = hs_die("--at applies to --weight live, not '%s'; drop one of them", hs_flame_weight_names[weight]);
		goto out;
	}
	if (weight < 0)
		weight = at ? HS_WEIGHT_LIVE : HS_WEIGHT_BYTES;
	if (!out_path && !folded) {
		rc = hs_die("flame needs '-o OUT.svg' (or --folded to write folded stacks to stdout)");
		goto out;
	}
	if ((rc = hs_cli_load(&r, &tab, path)) != 0)
		goto out;
	if (hs_stacks_init(&st, r, f.hide, f.nhide, !f.no_default_hide, HS_BY_BACKTRACE) < 0 ||
	    hs_filter_prepare(&f, &tab, &st) < 0) {
		rc = hs_die("out of memory analysing '%s'", path);
		goto out;
	}
	if (f.warn[0])
		fprintf(stderr, "heapscope: warning: %s\n", f.warn);
	at_ns = hs_timespec_resolve(&at_spec, tab.end_ns, tab.peak_ns);
	if (hs_flame_build(&fl, &tab, &f, &st, (enum hs_flame_weight)weight, at_ns, down) < 0) {
		rc = hs_die("out of memory analysing '%s'", path);
		goto out;
	}
	out = out_path && strcmp(out_path, "-") ? fopen(out_path, "w") : stdout;
	if (!out) {
		rc = hs_die("cannot write '%s': %s; check that its directory exists and is writable", out_path, strerror(errno));
		goto out;
	}
	if (folded) {
		k = hs_render_flame_folded(out, &st, &fl);
	} else {
		snprintf(title, sizeof(title), "heapscope %s flame graph of %s",
			 weight == HS_WEIGHT_COUNT ? "allocation count" : weight == HS_WEIGHT_LEAKED ? "leaked memory"
			 : weight == HS_WEIGHT_LIVE ? "live memory" : "allocated memory", path);
		if (weight == HS_WEIGHT_LIVE)
			snprintf(sub, sizeof(sub), "live at %s%s%s; %s", hs_fmt_duration(tbuf, sizeof(tbuf), at_ns),
				 f.desc[0] ? ", filter: " : "", f.desc, down ? "allocation sites on top, callers below" : "from main up");
		else
			snprintf(sub, sizeof(sub), "%s%s%s", f.desc[0] ? "filter: " : "", f.desc,
				 down ? (f.desc[0] ? "; sites on top, callers below" : "allocation sites on top, callers below")
				      : (f.desc[0] ? "; from main up" : "from main up"));
		k = hs_render_flame_svg(out, &fl, title, sub);
	}
	if (out != stdout && fclose(out) != 0)
		k = -EIO;
	out = NULL;
	if (k < 0) {
		rc = hs_die("cannot write '%s': %s; check free space", out_path ? out_path : "stdout", strerror(-k));
		goto out;
	}
	if (out_path && strcmp(out_path, "-"))
		fprintf(stderr, "heapscope: %s written to '%s'\n", folded ? "folded stacks" : "flame graph", out_path);
out:
	hs_flame_free(&fl);
	hs_filter_free(&f);
	if (st.r)
		hs_stacks_free(&st);
	hs_alloctab_free(&tab);
	hs_reader_close(r);
	return rc;
}
