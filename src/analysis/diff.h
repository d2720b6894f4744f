/* diff.h - the groups of two traces of one program matched by their symbolized backtrace (or name), with what changed */
#ifndef HS_ANALYSIS_DIFF_H
#define HS_ANALYSIS_DIFF_H

#include <stdint.h>

#include "flame.h"
#include "names.h"
#include "stacks.h"
#include "top.h"

enum hs_diff_sort { HS_DIFF_CHANGE, HS_DIFF_BYTES, HS_DIFF_PEAK, HS_DIFF_LEAKED, HS_DIFF_CALLS, HS_DIFF_SORTS };

extern const char *const hs_diff_sort_names[HS_DIFF_SORTS];

struct hs_diff_row {
	uint32_t match, match_n;  /* what matched the two sides: match_n ids of frames' "function file:line" from ids[match], innermost first */
	int in_base, in_new;
	uint32_t base_key, new_key;
	struct hs_top_row base, new;   /* zero on a side where the group is absent */
	double score;
	int changed;              /* any difference in calls, bytes, peak or leaks, or present on one side only */
};

struct hs_diff {
	struct hs_diff_row *rows;      /* sorted by |score|, largest change first */
	uint32_t nrows;
	uint32_t nchanged;             /* the first rows, those with a change in calls, bytes, peak or leaks */
	enum hs_diff_sort sort;
	/* the rows' matches: frame texts, each kept once for both traces, and the rows' sequences of them */
	struct hs_names names;
	uint32_t *ids;
	size_t nids, ids_cap;
};

/* Matches the rows of two hs_top_build results (each with its own stacks, same `by`); rows with one name are summed. */
int hs_diff_build(struct hs_diff *d, const struct hs_top *base, struct hs_stacks *base_st, const struct hs_top *nw,
		  struct hs_stacks *new_st, enum hs_diff_sort sort);
void hs_diff_free(struct hs_diff *d);

#define HS_DIFF_NONE UINT32_MAX

/* One frame of two flame trees merged by name: the node on each side, HS_DIFF_NONE where it is absent. */
struct hs_diff_flame_node {
	uint32_t base, new;
	uint32_t first_child, next_sibling;   /* 0: none (node 0 pairs the two roots) */
};

struct hs_diff_flame {
	struct hs_diff_flame_node *nodes;
	uint32_t nnodes, cap;
};

/*
 * Merges two flame trees built with the same weight and direction (one per
 * trace): siblings with the same frame name are one node, so a frame's
 * weight in each trace and its change can be read side by side.
 */
int hs_diff_flame_build(struct hs_diff_flame *d, const struct hs_flame *base, const struct hs_flame *nw);
void hs_diff_flame_free(struct hs_diff_flame *d);

#endif
