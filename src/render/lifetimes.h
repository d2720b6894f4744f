/* lifetimes.h - writes allocation time against lifetime as an SVG scatter or as TSV */
#ifndef HS_RENDER_LIFETIMES_H
#define HS_RENDER_LIFETIMES_H

#include <stdio.h>

#include "../analysis/alloctab.h"
#include "../analysis/filter.h"
#include "../analysis/lifetimes.h"

/* Each returns 0, or -EIO when writing failed. */
int hs_render_lifetimes_svg(FILE *f, const char *path, const struct hs_alloctab *t, const struct hs_filter *filter,
			    const struct hs_lifetimes *lt);
/* Every filtered allocation as JSON, schema heapscope-lifetimes/1 (docs/analysis.md). */
int hs_render_lifetimes_json(FILE *f, const char *path, const struct hs_alloctab *t, struct hs_filter *filter);
/* Every filtered allocation: "alloc_time_s lifetime_s size stack_id leaked". */
int hs_render_lifetimes_tsv(FILE *f, const struct hs_alloctab *t, struct hs_filter *filter);

#endif
