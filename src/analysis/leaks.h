/* leaks.h - allocation sites classified by their leak pattern (growing, bounded, rare, freed at exit, container) and ranked */
#ifndef HS_ANALYSIS_LEAKS_H
#define HS_ANALYSIS_LEAKS_H

#include <stdint.h>

#include "alloctab.h"
#include "filter.h"
#include "stacks.h"

/* Most severe first: the order is part of the score (docs/analysis.md). */
enum hs_leaks_verdict {
	HS_LEAK_GROWING,       /* "leak: growing" */
	HS_LEAK_FREED_AT_EXIT, /* "freed at exit" */
	HS_LEAK_RARE,          /* "rare leak" */
	HS_LEAK_BOUNDED,       /* "bounded" */
	HS_LEAK_CONTAINER,     /* "growing container" */
	HS_LEAK_OK,            /* "ok": a few blocks kept */
	HS_LEAK_TEMPORARY,     /* "temporary": nothing kept */
	HS_LEAK_VERDICTS
};

extern const char *const hs_leaks_verdict_names[HS_LEAK_VERDICTS];

/* Buckets of the per-site series: 50 buckets of 2% each, so the last one is exactly the last 2% of the run. */
#define HS_LEAKS_BUCKETS 50

/* Figures are unbiased estimates in sampled mode. */
struct hs_leaks_site {
	uint32_t key;                 /* hs_stacks key */
	uint32_t stack;               /* the stack of the site's first allocation, for its backtrace */
	uint64_t first;               /* internal: that allocation's sequence number (ties sort by it) */
	enum hs_leaks_verdict verdict;
	double score;
	double calls, bytes;
	double leaked_count, leaked_bytes;          /* never freed */
	double freed_end_count, freed_end_bytes;    /* freed in the last 2% of the run */
	double kept_count, kept_bytes;              /* leaked, or freed in the last 2% after living 2% of the run */
	double reallocs;              /* allocations that continued a realloc chain */
	double reallocs_grown;        /* ... to a larger block */
	double chain_ends_kept;       /* kept blocks that ended a realloc chain */
	double growth;                /* 0..1: share of the site's highest live bytes gained after half the run */
	double plateau;               /* 0..1: when live bytes first reached 90% of their highest (before 98%) */
	const float *live;            /* HS_LEAKS_BUCKETS: live bytes at the end of each 2% of the run (zeros but
					 for sites with kept blocks) */
};

struct hs_leaks {
	struct hs_leaks_site *sites;  /* sorted: score, then kept bytes, then key */
	uint32_t nsites;
	float *series;                /* the sites' live arrays (those with kept blocks) */
	uint32_t nsuspects;           /* sites whose verdict is before HS_LEAK_OK */
	uint64_t records;             /* recorded allocations that passed the filter */
	double counts[HS_LEAK_VERDICTS];
};

/* Sums the filtered allocations per hs_stacks_key() and gives each group its verdict. */
int hs_leaks_build(struct hs_leaks *lk, const struct hs_alloctab *t, struct hs_filter *f, struct hs_stacks *st);
void hs_leaks_free(struct hs_leaks *lk);

/*
 * The same figures from one streaming pass, with no table: begin with the
 * run's end (hs_reader_end_hint), hand hs_leaks_sink to hs_alloctab_stream,
 * then finish with the stacks (t: the pass's table, for the trace's facts).
 * The filter must be hs_filter_streamable; it is prepared here.
 */
struct hs_leaks_stream;
int hs_leaks_stream_begin(struct hs_leaks_stream **out, struct hs_filter *f, uint64_t end_ns, uint64_t sample_bytes);
int hs_leaks_sink(void *arg, const struct hs_fate *fates, size_t n);
int hs_leaks_stream_finish(struct hs_leaks_stream *ls, struct hs_leaks *lk, const struct hs_alloctab *t,
			   struct hs_stacks *st);
void hs_leaks_stream_free(struct hs_leaks_stream *ls);

#endif
