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

int hs_cmd_leaks(int argc, char **argv)
{
	static const char *const by_names[] = { "backtrace", "function", "line", "library" };
	struct hs_render_leaks ctx = { .limit = 20, .frames = 6 };
	struct hs_cli_trace tr = { 0 };
	struct hs_leaks lk = { 0 };
	struct hs_filter f;
	const char *path = NULL;
	int json = 0, rc = 0, by = HS_BY_BACKTRACE, k;

	hs_filter_init(&f);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
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
		} else if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--all")) {
			ctx.all = 1;
		} else if (!strcmp(a, "--by") || !strcmp(a, "-n") || !strcmp(a, "--frames")) {
			if (!(v = i + 1 < argc ? argv[++i] : NULL)) {
				rc = hs_die("%s needs a value; see 'heapscope leaks --help'", a);
				goto out;
			}
			if (!strcmp(a, "--by") && hs_cli_pick(v, by_names, 4, &by) < 0)
				rc = hs_die("bad value '%s' for --by; use backtrace, function, line or library", v);
			else if (!strcmp(a, "-n") && hs_cli_int(v, &ctx.limit) < 0)
				rc = hs_die("bad value '%s' for -n; give a number of sites (0: all)", v);
			else if (!strcmp(a, "--frames") && hs_cli_int(v, &ctx.frames) < 0)
				rc = hs_die("bad value '%s' for --frames; give a number of frames", v);
			if (rc)
				goto out;
		} else if (a[0] == '-' && a[1]) {
			rc = hs_die("unknown option '%s' for leaks; see 'heapscope leaks --help'", a);
			goto out;
		} else if (path) {
			rc = hs_die("leaks takes one trace, got '%s' and '%s'", path, a);
			goto out;
		} else {
			path = a;
		}
	}
	if (!path) {
		fputs(usage, stderr);
		rc = 2;
		goto out;
	}
	if ((rc = hs_cli_trace_open(&tr, path, &f, by)) != 0)
		goto out;
	if (hs_leaks_build(&lk, &tr.tab, &f, &tr.st) < 0) {
		rc = hs_die("out of memory analysing '%s'", path);
		goto out;
	}
	ctx.path = path;
	ctx.tab = &tr.tab;
	ctx.filter = &f;
	ctx.st = &tr.st;
	if (json)
		hs_render_leaks_json(stdout, &ctx, &lk);
	else
		hs_render_leaks_text(stdout, &ctx, &lk);
out:
	hs_leaks_free(&lk);
	hs_filter_free(&f);
	hs_cli_trace_close(&tr);
	return rc;
}
