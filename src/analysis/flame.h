/* flame.h - weights of folded backtraces and the merged frame tree a flame graph draws */
#ifndef HS_ANALYSIS_FLAME_H
#define HS_ANALYSIS_FLAME_H

#include <stdint.h>

#include "alloctab.h"
#include "filter.h"
#include "names.h"
#include "stacks.h"

enum hs_flame_weight {
	HS_WEIGHT_BYTES,    /* bytes allocated */
	HS_WEIGHT_COUNT,    /* allocations */
	HS_WEIGHT_LEAKED,   /* bytes never freed */
	HS_WEIGHT_LIVE,     /* bytes live at a moment */
	HS_WEIGHT_COUNT_
};

extern const char *const hs_flame_weight_names[HS_WEIGHT_COUNT_];

/* One frame of the merged tree: siblings with the same name are one node. */
struct hs_flame_node {
	uint32_t parent, name;
	uint32_t first_child, next_sibling;   /* 0: none (node 0 is the root) */
	double weight;
	double count;                         /* allocations under this node */
	const char *file;                     /* of the first frame merged here; reader-owned */
	int line;
	int several_lines;                    /* frames from different lines were merged */
	int inlined;
};

struct hs_flame {
	enum hs_flame_weight weight;
	int down;                 /* 1: allocation sites at the root, callers below (icicle) */
	uint64_t at_ns;           /* HS_WEIGHT_LIVE: the moment (the peak's time for HS_AT_PEAK) */
	double *w;                /* folded backtrace id -> weight */
	double *c;                /* folded backtrace id -> allocations */
	uint32_t nw;
	double total;
	double count;             /* allocations weighted (estimates when sampled) */

	struct hs_flame_node *nodes;   /* nodes[0]: the root, "all" */
	uint32_t nnodes, nodes_cap;
	struct hs_names names;    /* the nodes' names */
	uint32_t depth;           /* deepest node, root = 0 */
};

/*
 * Sums the filtered allocations per folded backtrace, then merges them into
 * a tree: from the site down to main (down=1) or from main up to the site.
 */
int hs_flame_build(struct hs_flame *fl, const struct hs_alloctab *t, struct hs_filter *f, struct hs_stacks *st,
		   enum hs_flame_weight weight, uint64_t at_ns, int down);
/*
 * The sums alone, without the tree (nodes stays NULL): what the folded
 * format prints. Merging a clang compile's 31,000 backtraces of 40 frames
 * into the tree was half the time of writing them folded, for nothing.
 */
int hs_flame_weights(struct hs_flame *fl, const struct hs_alloctab *t, struct hs_filter *f, struct hs_stacks *st,
		     enum hs_flame_weight weight, uint64_t at_ns, int down);
/*
 * The tree of the sums that hs_flame_weights or hs_flame_stream_weights
 * made, as hs_flame_build makes it, but a node lighter than keep times the
 * total keeps its weight and count without the nodes under it (keep 0:
 * every node). A graph that draws no frame so narrow needs no more: a
 * clang compile's tree had 640,000 nodes, and its SVG drew 41,000.
 */
int hs_flame_tree(struct hs_flame *fl, struct hs_stacks *st, double keep);
void hs_flame_free(struct hs_flame *fl);

/*
 * The sums of hs_flame_weights from one streaming pass, with no table (see
 * hs_leaks_stream): begin with the run's end, hand hs_flame_sink to
 * hs_alloctab_stream, then sum with the stacks (hs_flame_tree makes the
 * tree of them). The filter must be hs_filter_streamable, and at_ns known
 * before the pass (not the peak).
 */
struct hs_flame_stream;
int hs_flame_stream_begin(struct hs_flame_stream **out, struct hs_filter *f, uint64_t end_ns, uint64_t sample_bytes,
			  enum hs_flame_weight weight, uint64_t at_ns);
int hs_flame_sink(void *arg, const struct hs_fate *fates, size_t n);
int hs_flame_stream_weights(struct hs_flame_stream *fs, struct hs_flame *fl, const struct hs_alloctab *t,
			    struct hs_stacks *st, int down);
void hs_flame_stream_free(struct hs_flame_stream *fs);

/* Frame name as flame graphs and the folded format show it (never contains ';'). */
void hs_flame_frame_name(const struct hs_frame *fr, char *buf, size_t n);

/* A frame as flame graphs name it: its id in a table of names, and where it is. */
struct hs_flame_frame {
	uint32_t name;
	int line, inlined;
	const char *file;
};

/*
 * Backtrace folded's frames as flame graphs name them, innermost first
 * (its innermost HS_STACKS_MAX_FRAMES), into out (room for that many):
 * names go to the table names, and each step of the folded tree is named once
 * in *steps (start it NULL; hs_flame_steps_free it), since backtraces
 * share their callers. A backtrace without a frame is one frame, "[no
 * backtrace]". The count (at least 1), or -ENOMEM.
 */
struct hs_flame_steps;
int hs_flame_line(struct hs_names *names, struct hs_flame_steps **steps, struct hs_stacks *st, uint32_t folded,
		  struct hs_flame_frame *out);
void hs_flame_steps_free(struct hs_flame_steps *steps);

/* A frame's text into buf (n bytes at most, terminator included) */
typedef void (*hs_frame_namer)(const struct hs_frame *fr, char *buf, size_t n);
#define HS_FRAME_NAME_MAX 1100
/*
 * hs_flame_line with frames named by namer into at most name_max bytes
 * (up to HS_FRAME_NAME_MAX), and nothing in place of a missing backtrace:
 * the count (0 for none) or -ENOMEM. *steps keeps the namer it was started
 * with, for the same table of names.
 */
int hs_flame_steps_line(struct hs_names *names, struct hs_flame_steps **steps, struct hs_stacks *st, uint32_t folded,
			struct hs_flame_frame *out, hs_frame_namer namer, size_t name_max);

/*
 * Lines order[0 .. n) sorted by their keys, line k's being keys[start[k]
 * .. start[k] + count[k]), compared as numbers from the first, a line
 * that ends after those that go on past it. Lines that begin alike end up
 * side by side, however deep they agree.
 */
void hs_flame_sort_lines(const uint32_t *keys, const size_t *start, const uint32_t *count, uint32_t *order, size_t n);

#endif
