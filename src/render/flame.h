/* flame.h - writes a flame graph as a self-contained interactive SVG, or as folded stacks */
#ifndef HS_RENDER_FLAME_H
#define HS_RENDER_FLAME_H

#include <stdio.h>

#include "../analysis/flame.h"
#include "../analysis/stacks.h"

/*
 * "main;parse;xstrdup 1234" per folded backtrace, root first, integer
 * weights (largest-remainder rounding in sampled mode, so they still sum to
 * the rounded total). Returns 0 or -EIO.
 */
int hs_render_flame_folded(FILE *f, struct hs_stacks *st, const struct hs_flame *fl);

/*
 * The merged frame tree as JSON, schema heapscope-flame/1 (docs/analysis.md):
 * every node, children heaviest first, as d3-flame-graph reads it (name,
 * value, children). Returns 0, -ENOMEM or -EIO.
 */
int hs_render_flame_json(FILE *f, const struct hs_flame *fl, const char *path, const char *filter, int estimated);

/*
 * The share of the total under which hs_render_flame_svg draws neither a
 * frame nor anything under it, halved: a tree for it can leave out what
 * lies under lighter nodes (hs_flame_tree's keep).
 */
double hs_render_flame_svg_keep(void);

/* title: shown on top of the graph (the trace and the filter). Returns 0 or -EIO. */
int hs_render_flame_svg(FILE *f, const struct hs_flame *fl, const char *title, const char *subtitle);

#endif
