/* cmd-report.c - heapscope report: the summary of one trace, as text or JSON */
#include <stdio.h>
#include <string.h>

#include "../analysis/report.h"
#include "../render/report.h"
#include "cli.h"
#include "heapscope/reader.h"

static const char usage[] =
	"usage: heapscope report [--json] TRACE\n"
	"  --json   the same figures as JSON (schema: docs/report-json.md)\n";

int hs_cmd_report(int argc, char **argv)
{
	static const char *const flags[] = { "--json", NULL };
	const char *path;
	int json = 0, rc, k;
	struct hs_reader *r = NULL;
	struct hs_report rep;
	struct hs_cli_progress pr;
	hs_alloctab_progress progress;
	struct hs_cli_args args = { .cmd = "report", .usage = usage, .flags = flags, .take = hs_cli_take_flag, .ctx = &json,
				    .want = 1 };

	if ((rc = hs_cli_args_parse(&args, argc, argv)) != 0 || args.help)
		return rc;
	path = args.paths[0];
	if ((rc = hs_cli_reader_open(&r, path)) != 0)
		goto out;
	hs_cli_warn_if_written(r, path);
	progress = hs_cli_progress_start(&pr, path);
	k = hs_report_build(&rep, r, progress, &pr);
	hs_cli_progress_end(&pr);
	if (k < 0) {
		rc = hs_die("%s", hs_reader_error(r));
		goto out;
	}
	if (hs_reader_warning(r)[0])
		fprintf(stderr, "heapscope: warning: %s\n", hs_reader_warning(r));
	if (json)
		hs_render_report_json(stdout, r, &rep, path);
	else
		hs_render_report_text(stdout, r, &rep, path);
	hs_report_free(&rep);
	hs_cli_warn_unnamed(r);
out:
	hs_reader_close(r);
	return rc;
}
