/* filter.h - the filter language shared by every analysis command: parsing the options, then one verdict per allocation */
#ifndef HS_ANALYSIS_FILTER_H
#define HS_ANALYSIS_FILTER_H

#include <regex.h>
#include <stdint.h>

#include "alloctab.h"
#include "stacks.h"
#include "timespec.h"

#define HS_FILTER_MAX_REGEX 15   /* through and not-through share the 31 bits of a stack mask */

enum hs_filter_time {
	HS_FT_ALLOC_LO, HS_FT_ALLOC_HI,   /* --allocated-between */
	HS_FT_LIVE_LO, HS_FT_LIVE_HI,     /* --live-between */
	HS_FT_LIVE_AT,                    /* --live-at */
	HS_FT_FREED_LO, HS_FT_FREED_HI,   /* --freed-between */
	HS_FT_LOF_AFTER,                  /* --leaked-or-freed-after */
	HS_FT_LIFE_MIN, HS_FT_LIFE_MAX,   /* --lifetime-min/max (durations) */
	HS_FT_COUNT
};

struct hs_filter_ip;

struct hs_filter_regex {
	regex_t re;
	char *src;
};

/*
 * Options add conditions, all of which an allocation must meet. Times stay
 * unresolved (98%, peak) until hs_filter_prepare() sees the loaded trace.
 */
struct hs_filter {
	struct hs_timespec time[HS_FT_COUNT];
	char time_src[HS_FT_COUNT][32];   /* as given, for messages */
	unsigned have_time;               /* bit per enum hs_filter_time */
	uint64_t size_min, size_max;
	char size_src[2][32];             /* --size-min, --size-max as given */
	int leaked, temporary;
	uint32_t *tids;
	int ntids;
	struct hs_filter_regex through[HS_FILTER_MAX_REGEX], not_through[HS_FILTER_MAX_REGEX];
	struct hs_filter_regex site[HS_FILTER_MAX_REGEX];
	int nthrough, nnot_through, nsite;
	regex_t hide[HS_FILTER_MAX_REGEX];
	int nhide;
	int no_default_hide;

	/* after hs_filter_prepare */
	uint64_t t[HS_FT_COUNT];          /* resolved times, ns */
	/*
	 * Bounds given as "peak" itself (bit per enum hs_filter_time): its
	 * unit of time holds events before and after the peak, so these are
	 * tested by order against the allocation that made it (t->peak_end)
	 * instead of by time
	 */
	unsigned peak_bounds;
	uint64_t peak_end;
	int empty;                        /* conditions that no allocation can meet (e.g. an unknown thread) */
	uint8_t *thread_ok;               /* per thread index */
	uint8_t *stack_ok;                /* per stack id: 0 not yet known, 1 passes, 2 fails */
	uint32_t *stack_bits;             /* per stack id: bit i = through i, 16 + i = not-through i matches a frame; bit 31: known */
	struct hs_filter_ip *ips;         /* address -> the same bits for its own frames */
	size_t ips_cap, ips_used;
	uint32_t nstacks;
	struct hs_stacks *st;

	char err[512];
	char warn[512];                   /* after prepare: a condition that matches nothing in this trace, or a time past its end */
	char desc[1024];                  /* the conditions as given, for output headers */
};

/* Accepted option list, for usage texts. */
extern const char hs_filter_usage[];

void hs_filter_init(struct hs_filter *f);
void hs_filter_free(struct hs_filter *f);

/*
 * Tries argv[*i] as a filter option (or --hide / --no-default-hide).
 * Returns 1 and advances *i past its values when it is one, 0 when it is
 * not, -EINVAL with f->err set when its values are bad.
 */
int hs_filter_parse(struct hs_filter *f, int argc, char **argv, int *i);

/* Resolves times against the loaded trace; st must have been made with f->hide. */
int hs_filter_prepare(struct hs_filter *f, const struct hs_alloctab *t, struct hs_stacks *st);

/*
 * 1 when a streaming pass can apply the filter with only the run's end
 * known beforehand: no thread condition (thread indexes come from the
 * pass) and no time relative to the peak (only a pass finds it).
 */
int hs_filter_streamable(const struct hs_filter *f);
/* 1 when no condition needs the allocations' frees: fate, lifetime, live or freed times (hs_alloctab_scan). */
int hs_filter_fateless(const struct hs_filter *f);
/* For such a pass: times resolved against end_ns; the stack conditions wait for hs_filter_prepare. */
void hs_filter_prepare_stream(struct hs_filter *f, uint64_t end_ns);

/* Stack conditions alone (through, not-through, alloc-site), memoized per stack id. */
int hs_filter_stack(struct hs_filter *f, uint32_t stack);

/* 1 when no condition was given: callers can skip hs_filter_match. */
static inline int hs_filter_passes_all(const struct hs_filter *f)
{
	return !f->empty && !f->leaked && !f->temporary && !f->have_time && !f->size_min && f->size_max == UINT64_MAX &&
	       !f->thread_ok && !f->stack_ok;
}

/*
 * The time conditions for an allocation numbered seq with times t0, t1.
 * Against a bound that is the peak: allocated at or before it means
 * numbered below peak_end; freed after it (or never), live at it or
 * allocated after it.
 */
static inline int hs_filter_times(const struct hs_filter *f, const struct hs_alloc *a, uint64_t seq,
				  uint64_t t0, uint64_t t1)
{
	unsigned h = f->have_time, pk = f->peak_bounds;
	int before = seq < f->peak_end, after = hs_alloc_at_peak(a) || !before;

#define HS_FT_PEAK(k) (pk & 1u << (k))
	if (h & 1u << HS_FT_ALLOC_LO) {
		if (HS_FT_PEAK(HS_FT_ALLOC_LO) ? seq + 1 < f->peak_end : t0 < f->t[HS_FT_ALLOC_LO])
			return 0;
		if (HS_FT_PEAK(HS_FT_ALLOC_HI) ? !before : t0 > f->t[HS_FT_ALLOC_HI])
			return 0;
	}
	if (h & 1u << HS_FT_LIVE_LO) {
		if (HS_FT_PEAK(HS_FT_LIVE_HI) ? !before : t0 > f->t[HS_FT_LIVE_HI])
			return 0;
		if (HS_FT_PEAK(HS_FT_LIVE_LO) ? !after : t1 <= f->t[HS_FT_LIVE_LO])
			return 0;
	}
	if ((h & 1u << HS_FT_LIVE_AT) && !hs_alloc_live_at(a, f->t[HS_FT_LIVE_AT]))
		return 0;
	if (h & 1u << HS_FT_FREED_LO) {
		if (t1 == HS_ALLOC_NEVER)
			return 0;
		if (HS_FT_PEAK(HS_FT_FREED_LO) ? !after : t1 < f->t[HS_FT_FREED_LO])
			return 0;
		if (HS_FT_PEAK(HS_FT_FREED_HI) ? after : t1 > f->t[HS_FT_FREED_HI])
			return 0;
	}
	if ((h & 1u << HS_FT_LOF_AFTER) && (HS_FT_PEAK(HS_FT_LOF_AFTER) ? !after : t1 < f->t[HS_FT_LOF_AFTER]))
		return 0;
#undef HS_FT_PEAK
	return 1;
}

/* 1 if the allocation numbered seq (its table index, or hs_fate's seq) meets every condition. */
static inline int hs_filter_match(struct hs_filter *f, const struct hs_alloctab *t, const struct hs_alloc *a,
				  uint64_t seq)
{
	uint64_t t0, t1, size;
	unsigned h = f->have_time;

	if (f->empty)
		return 0;
	t0 = hs_alloc_time(a);
	t1 = hs_alloc_free_time(a);   /* HS_ALLOC_NEVER is later than every time */
	if (f->leaked && t1 != HS_ALLOC_NEVER)
		return 0;
	if (f->temporary && t1 == HS_ALLOC_NEVER)
		return 0;
	if (h) {
		if (!hs_filter_times(f, a, seq, t0, t1))
			return 0;
		if (h & (1u << HS_FT_LIFE_MIN | 1u << HS_FT_LIFE_MAX)) {
			uint64_t life = hs_alloc_lifetime(a, t->end_ns);
			if (((h & 1u << HS_FT_LIFE_MIN) && life < f->t[HS_FT_LIFE_MIN]) ||
			    ((h & 1u << HS_FT_LIFE_MAX) && life > f->t[HS_FT_LIFE_MAX]))
				return 0;
		}
	}
	size = hs_alloc_size(a);
	if (size < f->size_min || size > f->size_max)
		return 0;
	if (f->thread_ok && !f->thread_ok[hs_alloc_thread(a)])
		return 0;
	if (f->stack_ok) {
		uint32_t s = a->stack < f->nstacks ? a->stack : 0;
		if (!f->stack_ok[s])
			f->stack_ok[s] = hs_filter_stack(f, s) ? 1 : 2;
		if (f->stack_ok[s] != 1)
			return 0;
	}
	return 1;
}

#endif
