/* diff.h - prints the changes between two traces as 80-column text or as JSON (heapscope-diff/1, docs/analysis.md) */
#ifndef HS_RENDER_DIFF_H
#define HS_RENDER_DIFF_H

#include <stdio.h>

#include "../analysis/alloctab.h"
#include "../analysis/diff.h"
#include "../analysis/filter.h"
#include "../analysis/stacks.h"
#include "../analysis/top.h"

struct hs_render_diff {
	const char *base_path, *new_path;
	const struct hs_alloctab *base_tab, *new_tab;
	const struct hs_top *base_top, *new_top;   /* for the totals */
	struct hs_stacks *base_st, *new_st;
	const struct hs_filter *filter;
	int limit;                /* rows shown, 0: all */
	int frames;
};

void hs_render_diff_text(FILE *f, const struct hs_render_diff *ctx, const struct hs_diff *d);
void hs_render_diff_json(FILE *f, const struct hs_render_diff *ctx, const struct hs_diff *d);

#endif
