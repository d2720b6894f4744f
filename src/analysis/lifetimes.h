/* lifetimes.h - allocation time against lifetime for the filtered allocations, downsampled for drawing */
#ifndef HS_ANALYSIS_LIFETIMES_H
#define HS_ANALYSIS_LIFETIMES_H

#include <stdint.h>

#include "alloctab.h"
#include "filter.h"

struct hs_lifetimes_point {
	uint64_t time_ns;         /* allocated at */
	uint64_t life_ns;         /* until its free, or until the end of the run when never freed */
	uint64_t size;
	uint32_t stack;
	int leaked;
};

struct hs_lifetimes {
	struct hs_lifetimes_point *pts;
	uint64_t n;
	uint64_t matched;         /* allocations that passed the filter */
	uint64_t stride;          /* every stride-th matched allocation was kept (1: all) */
	uint64_t max_life_ns;
};

/*
 * Keeps at most max_points of the filtered allocations: every k-th in
 * table (allocation) order, so the same trace always gives the same points.
 */
int hs_lifetimes_build(struct hs_lifetimes *lt, const struct hs_alloctab *t, struct hs_filter *f, uint64_t max_points);
void hs_lifetimes_free(struct hs_lifetimes *lt);

/*
 * Every filtered allocation's point, in allocation order, to fn, none kept:
 * for outputs of all of them, which an array beside the table would take
 * 32 more bytes per allocation for (1 GB for python3's 19 million). Stops
 * at fn's first negative return, and returns it; else 0.
 */
typedef int (*hs_lifetimes_fn)(void *arg, const struct hs_lifetimes_point *p);
int hs_lifetimes_each(const struct hs_alloctab *t, struct hs_filter *f, hs_lifetimes_fn fn, void *arg);

#endif
