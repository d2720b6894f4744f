/* timespec.h - points in time and durations as users write them (1.5s, 250ms, 98%, peak, end-2s) */
#ifndef HS_ANALYSIS_TIMESPEC_H
#define HS_ANALYSIS_TIMESPEC_H

#include <stdint.h>

enum hs_timespec_anchor {
	HS_TIME_START,   /* value_ns is from the start of tracing */
	HS_TIME_PERCENT, /* percent of the run's duration */
	HS_TIME_PEAK,    /* the moment of peak heap */
	HS_TIME_END,     /* the last event of the trace */
};

/*
 * Unresolved until the trace is loaded: "98%" and "peak" need the run's
 * duration and peak, which only a full pass over the trace knows.
 */
struct hs_timespec {
	enum hs_timespec_anchor anchor;
	double percent;
	int64_t offset_ns;   /* added to the anchor ("end-2s" = END, -2e9) */
};

/* Accepted forms, for error messages. */
#define HS_TIMESPEC_FORMS "1.5s, 250ms, 40us, 100ns, 2min, 98% (of the run), peak, end, or peak/end +/- a duration"
#define HS_DURATION_FORMS "1.5s, 250ms, 40us, 100ns, 2min or 2% (of the run)"

/* Parses a point in time; duration=1 parses a duration (no peak/end). Returns 0 or -EINVAL. */
int hs_timespec_parse(struct hs_timespec *t, const char *s, int duration);

/* Nanoseconds since the start of tracing (or the duration), clamped to [0, end_ns] for points. */
uint64_t hs_timespec_resolve(const struct hs_timespec *t, uint64_t end_ns, uint64_t peak_ns);

/*
 * A moment for "live at": "peak" itself is HS_AT_PEAK, the event that made
 * the peak heap, which its unit of time does not pin down (hs_alloc_live_at
 * tells the blocks live then); anything else, peak+1ms included, resolves
 * to a time.
 */
#define HS_AT_PEAK UINT64_MAX
static inline uint64_t hs_timespec_moment(const struct hs_timespec *t, uint64_t end_ns, uint64_t peak_ns)
{
	if (t->anchor == HS_TIME_PEAK && t->offset_ns == 0)
		return HS_AT_PEAK;
	return hs_timespec_resolve(t, end_ns, peak_ns);
}

#endif
