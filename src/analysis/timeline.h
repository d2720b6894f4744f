/* timeline.h - heap in use, RSS and the top groups of a filter sampled at evenly spaced moments of the run */
#ifndef HS_ANALYSIS_TIMELINE_H
#define HS_ANALYSIS_TIMELINE_H

#include <stdint.h>

#include "alloctab.h"
#include "filter.h"
#include "stacks.h"
#include "top.h"

/*
 * Values at time_ns[k] = end * k / (npoints - 1) (integer division): the
 * bytes of the blocks live at that moment, allocated at or before it and
 * freed after it, exactly as --live-at counts them. So the groups plus
 * `other` add up to what 'top --live-at' gives for the same filter.
 */
struct hs_timeline {
	uint32_t npoints;
	uint64_t *time_ns;
	double *heap;             /* every allocation, whatever the filter */
	double *rss;              /* last RSS sample at or before the moment; negative: none yet */
	double *filtered;         /* the allocations that pass the filter */
	uint32_t ngroups;
	uint32_t *keys;           /* hs_stacks key of each group, in the order of hs_top_build */
	uint32_t *stacks;         /* one stack of each group */
	double *groups;           /* ngroups x npoints */
	double *other;            /* filtered allocations outside the groups */
};

/* The ngroups largest groups for `sort` become series; npoints >= 2. */
int hs_timeline_build(struct hs_timeline *tl, const struct hs_alloctab *t, struct hs_filter *f, struct hs_stacks *st,
		      uint32_t npoints, uint32_t ngroups, enum hs_top_sort sort);
void hs_timeline_free(struct hs_timeline *tl);

#endif
