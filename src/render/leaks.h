/* leaks.h - prints leak verdicts per site as 80-column text or as JSON (heapscope-leaks/1, docs/analysis.md) */
#ifndef HS_RENDER_LEAKS_H
#define HS_RENDER_LEAKS_H

#include <stdio.h>

#include "../analysis/alloctab.h"
#include "../analysis/filter.h"
#include "../analysis/leaks.h"
#include "../analysis/stacks.h"

struct hs_render_leaks {
	const char *path;
	const struct hs_alloctab *tab;
	const struct hs_filter *filter;
	struct hs_stacks *st;
	int limit;                /* sites shown, 0: all */
	int frames;               /* backtrace frames under each site */
	int all;                  /* also the ok and temporary sites */
};

void hs_render_leaks_text(FILE *f, const struct hs_render_leaks *ctx, const struct hs_leaks *lk);
void hs_render_leaks_json(FILE *f, const struct hs_render_leaks *ctx, const struct hs_leaks *lk);

#endif
