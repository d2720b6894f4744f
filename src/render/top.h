/* top.h - prints the table of allocation groups as 80-column text or as JSON (heapscope-top/1, docs/analysis.md) */
#ifndef HS_RENDER_TOP_H
#define HS_RENDER_TOP_H

#include <stdio.h>

#include "../analysis/alloctab.h"
#include "../analysis/filter.h"
#include "../analysis/stacks.h"
#include "../analysis/top.h"

/* What the table is about, for its header. */
struct hs_render_top {
	const char *path;
	const struct hs_alloctab *tab;
	const struct hs_filter *filter;
	struct hs_stacks *st;
	int limit;                /* rows shown, 0: all */
	int frames;               /* backtrace frames under each row (by backtrace) */
	int focus_row;            /* --callers: the number of the row subdivided */
	const char *focus_name;   /* --callers: the name of the subdivided row */
};

void hs_render_top_text(FILE *f, const struct hs_render_top *ctx, const struct hs_top *top);
void hs_render_top_json(FILE *f, const struct hs_render_top *ctx, const struct hs_top *top);

/* A folded backtrace, innermost first: at most `frames` lines of "function  file:line  (module)", or a JSON array of frames. */
void hs_render_frames_text(FILE *f, struct hs_stacks *st, uint32_t folded, int frames);
void hs_render_frames_json(FILE *f, struct hs_stacks *st, uint32_t folded);

/* Name of a row as both outputs show it. */
const char *hs_render_top_row_name(const struct hs_render_top *ctx, const struct hs_top *top,
				   const struct hs_top_row *row, char *buf, size_t n);

#endif
