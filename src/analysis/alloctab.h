/* alloctab.h - every recorded allocation paired with its free, 24 bytes each, built in one pass over a trace */
#ifndef HS_ANALYSIS_ALLOCTAB_H
#define HS_ANALYSIS_ALLOCTAB_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "heapscope/reader.h"
#include "timespec.h"

/*
 * One allocation. Times are ns since the start of tracing in 48 bits (78
 * hours; later times saturate), which leaves room to pack the thread and
 * the high bits of the size into the same words:
 *   a = alloc time | thread index << 48
 *   f = free time (HS_ALLOC_NEVER: never freed) | size bits 32..46 << 48
 *       | HS_ALLOC_AT_PEAK
 * While the table is being built, f holds the block's address instead of
 * a free time, so the live-block index needs no key of its own.
 */
struct hs_alloc {
	uint64_t a;
	uint64_t f;
	uint32_t size_lo;
	uint32_t stack;
};

#define HS_ALLOC_TIME_MASK ((1ull << 48) - 1)
#define HS_ALLOC_NEVER HS_ALLOC_TIME_MASK
#define HS_ALLOC_SIZE_HI 0x7fffull   /* sizes below 2^47: no address space holds more */
/*
 * Live at the peak: allocated at or before the event that made the peak
 * heap and freed after it, in the trace's order. Exact whatever the time
 * resolution: many events share the peak's unit of time, and which of
 * them came before the peak only their order says.
 */
#define HS_ALLOC_AT_PEAK (1ull << 63)
#define HS_ALLOCTAB_SHIFT 18 /* allocations per block: 2^18, 6 MiB = 3 huge pages */

/* A realloc that replaced block `from` by block `to` (table indexes): one link of a growing chain. */
struct hs_alloctab_link {
	uint32_t from, to;
};

struct hs_alloctab_rss {
	uint64_t time_ns, rss;
};

struct hs_alloctab_marker {
	uint64_t time_ns;
	char *label;
};

struct hs_alloctab {
	struct hs_alloc **blocks;    /* fixed-size blocks: no copy of the whole table when it grows */
	size_t nblocks, blocks_cap;
	uint64_t n;

	uint32_t *tids;              /* thread index -> tid */
	uint32_t ntids;

	uint64_t sample_bytes;       /* 0: every call recorded; else weights are 1/p(size) */
	uint64_t end_ns;             /* time of the last event */
	uint64_t peak_ns;            /* moment of peak heap (all allocations, weighted) */
	uint64_t peak_rises;         /* how many events raised the peak: the last one made it */
	uint64_t peak_end;           /* allocations numbered below it were made at or before the peak */
	double peak_heap;
	uint64_t untracked_frees;    /* frees of blocks allocated before tracing, or late */
	uint64_t events;

	/* kept aside during the same pass: few, and timelines and leak verdicts need them */
	struct hs_alloctab_link *links;   /* in order of `to` */
	uint64_t nlinks;
	struct hs_alloctab_rss *rss;      /* in time order */
	uint64_t nrss;
	struct hs_alloctab_marker *markers;
	uint64_t nmarkers;
	/* how the process ended, as in struct hs_report */
	int clean_exit;
	int end_reason;              /* enum hs_end_reason when clean_exit */
	int signal;                  /* the signal that ended it, when the tracer caught it; 0: none */
};

/* Called about every million events with the reader's file offset. */
typedef void (*hs_alloctab_progress)(void *arg, uint64_t offset);

/* A pass that had read done events and reads n more passes a million (2^20): time to call its progress */
static inline int hs_progress_due(uint64_t done, uint64_t n)
{
	return (done >> 20) != ((done + n) >> 20);
}

/* Reads the whole trace once. On a reader error returns <0 and hs_reader_error(r) tells why. */
int hs_alloctab_load(struct hs_alloctab *t, struct hs_reader *r, hs_alloctab_progress progress, void *arg);
void hs_alloctab_free(struct hs_alloctab *t);

/*
 * Streaming instead of a table, for questions that one look at each
 * allocation answers: the same pass hands each allocation to sink once its
 * fate is known (freed, or never freed at the end), in that order and in
 * batches, with its sequence number (its index in the table
 * hs_alloctab_load would build), HS_ALLOC_* flags and how many times the
 * peak had risen when it went out: its HS_ALLOC_AT_PEAK is for that peak,
 * and every fate that went out before a later rise was freed before the
 * later peak. Only live blocks are kept meanwhile, so memory follows the live
 * set, not the trace. t gets every field but the table and its links (n
 * counts the allocations). A sink's error stops the pass and is returned.
 */
#define HS_ALLOC_CONT 1u    /* the block a realloc moved or grew: one link of a chain (hs_alloctab_link) */
#define HS_ALLOC_GROWN 2u   /* ... and larger than the block it replaced */
struct hs_fate {
	struct hs_alloc a;      /* f: the free time, or HS_ALLOC_NEVER */
	uint64_t seq;
	uint64_t peak_rises;    /* t->peak_rises when this fate went out */
	uint32_t flags;
};
typedef int (*hs_alloctab_sink)(void *arg, const struct hs_fate *fates, size_t n);
int hs_alloctab_stream(struct hs_alloctab *t, struct hs_reader *r, hs_alloctab_sink sink, void *sink_arg,
		       hs_alloctab_progress progress, void *arg);

/*
 * Allocations alone, for questions their fates do not change (bytes or
 * calls allocated, by backtrace, size or thread): the same hand-over as
 * hs_alloctab_stream, in trace order, but each allocation goes out as it is
 * made, without pairing: f holds HS_ALLOC_NEVER whatever its fate, and no
 * peak is known (peak_rises 0, no HS_ALLOC_AT_PEAK). t gets end_ns, n,
 * events, sample_bytes, the thread indexes, rss, markers and how the
 * process ended; not the peak, nor untracked frees.
 */
int hs_alloctab_scan(struct hs_alloctab *t, struct hs_reader *r, hs_alloctab_sink sink, void *sink_arg,
		     hs_alloctab_progress progress, void *arg);

/* Unbiased weight of one recorded allocation: 1, or 1/p(size) in sampled mode (see docs/FORMAT.md). */
static inline double hs_alloctab_weight(const struct hs_alloctab *t, uint64_t size)
{
	return t->sample_bytes ? hs_sample_weight(t->sample_bytes, size) : 1.0;
}

static inline struct hs_alloc *hs_alloctab_at(const struct hs_alloctab *t, uint64_t i)
{
	return &t->blocks[i >> HS_ALLOCTAB_SHIFT][i & ((1u << HS_ALLOCTAB_SHIFT) - 1)];
}

static inline uint64_t hs_alloc_time(const struct hs_alloc *a)
{
	return a->a & HS_ALLOC_TIME_MASK;
}

static inline uint64_t hs_alloc_free_time(const struct hs_alloc *a)
{
	return a->f & HS_ALLOC_TIME_MASK;
}

static inline int hs_alloc_leaked(const struct hs_alloc *a)
{
	return (a->f & HS_ALLOC_TIME_MASK) == HS_ALLOC_NEVER;
}

static inline uint64_t hs_alloc_size(const struct hs_alloc *a)
{
	return (uint64_t)a->size_lo | (a->f >> 48 & HS_ALLOC_SIZE_HI) << 32;
}

static inline int hs_alloc_at_peak(const struct hs_alloc *a)
{
	return (int)(a->f >> 63);
}

/* Live at a moment (hs_timespec_moment): allocated at or before it and freed after it. */
static inline int hs_alloc_live_at(const struct hs_alloc *a, uint64_t at_ns)
{
	if (at_ns == HS_AT_PEAK)
		return hs_alloc_at_peak(a);
	return hs_alloc_time(a) <= at_ns && hs_alloc_free_time(a) > at_ns;
}

static inline uint32_t hs_alloc_thread(const struct hs_alloc *a)
{
	return (uint32_t)(a->a >> 48);
}

/* Freed allocations: free - alloc; leaked ones count as freed at the end of the run. */
static inline uint64_t hs_alloc_lifetime(const struct hs_alloc *a, uint64_t end_ns)
{
	uint64_t t0 = hs_alloc_time(a), t1 = hs_alloc_leaked(a) ? end_ns : hs_alloc_free_time(a);
	return t1 > t0 ? t1 - t0 : 0;
}

#endif
