/* timeline.h - writes a memory timeline as a self-contained SVG chart, as CSV, or as JSON (heapscope-timeline/1) */
#ifndef HS_RENDER_TIMELINE_H
#define HS_RENDER_TIMELINE_H

#include <stdio.h>

#include "../analysis/alloctab.h"
#include "../analysis/filter.h"
#include "../analysis/stacks.h"
#include "../analysis/timeline.h"

struct hs_render_timeline {
	const char *path;
	const struct hs_alloctab *tab;   /* for its markers */
	const struct hs_filter *filter;
	struct hs_stacks *st;
	int no_rss;                      /* SVG: no RSS line, so a small heap gets the whole height */
};

/* Each returns 0, or -EIO when writing failed. */
int hs_render_timeline_svg(FILE *f, const struct hs_render_timeline *ctx, const struct hs_timeline *tl);
int hs_render_timeline_csv(FILE *f, const struct hs_render_timeline *ctx, const struct hs_timeline *tl);
int hs_render_timeline_json(FILE *f, const struct hs_render_timeline *ctx, const struct hs_timeline *tl);

#endif
