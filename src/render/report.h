/* report.h - prints a report as text for a terminal or as JSON (schema: docs/report-json.md) */
#ifndef HS_RENDER_REPORT_H
#define HS_RENDER_REPORT_H

#include <stdio.h>

#include "../analysis/report.h"

void hs_render_report_text(FILE *f, struct hs_reader *r, const struct hs_report *rep, const char *path);
void hs_render_report_json(FILE *f, struct hs_reader *r, const struct hs_report *rep, const char *path);

#endif
