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

/*
 * The same from one streaming pass, with no table (see hs_leaks_stream):
 * begin with the run's end, hand hs_timeline_sink to hs_alloctab_stream,
 * then finish with the stacks. The sink says -E2BIG when the per-backtrace
 * series would take more memory than the table; the finish says -EAGAIN
 * when the sums are not for the pass's last peak (no fate came after it,
 * which a whole trace cannot do). Either way: use the table.
 */
struct hs_timeline_stream;
int hs_timeline_stream_begin(struct hs_timeline_stream **out, struct hs_filter *f, uint64_t end_ns, uint64_t sample_bytes,
			     uint32_t npoints, uint32_t ngroups, enum hs_top_sort sort);
int hs_timeline_sink(void *arg, const struct hs_fate *fates, size_t n);
int hs_timeline_stream_finish(struct hs_timeline_stream *ts, struct hs_timeline *tl, const struct hs_alloctab *t,
			      struct hs_stacks *st);
void hs_timeline_stream_free(struct hs_timeline_stream *ts);

#endif
