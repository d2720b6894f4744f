/* report.h - the summary figures of one trace (heapscope report) */
#ifndef HS_ANALYSIS_REPORT_H
#define HS_ANALYSIS_REPORT_H

#include <stdint.h>

#include "alloctab.h"
#include "heapscope/reader.h"

#define HS_REPORT_TOP 10

enum hs_rank { HS_RANK_BYTES, HS_RANK_CALLS, HS_RANK_PEAK, HS_RANK_LEAKED, HS_RANK_COUNT };

/* One allocation site: a distinct backtrace. Figures are estimates when sampled. */
struct hs_site {
	uint32_t stack;           /* its backtrace's stack id */
	double calls, bytes;
	double peak_bytes;        /* live bytes of this site at the moment of peak heap */
	double leaked_count, leaked_bytes;
	double temporary;
	double live_bytes;        /* internal: running value */
	uint64_t last_change;     /* internal: event sequence of the last change */
};

struct hs_report {
	const struct hs_trace_info *info;
	uint64_t duration_ns;
	int clean_exit;
	int end_reason;                  /* enum hs_end_reason when clean_exit */
	int signal;                      /* the signal that ended the process, when the tracer caught it; 0: none */
	char disabled[160];              /* why the tracer stopped itself mid-run (4.1); "": it did not */
	int sampled;
	uint64_t sample_bytes;

	uint64_t calls[HS_FN_COUNT];     /* exact, from the tracer's counters */
	uint64_t call_bytes[HS_FN_COUNT];
	int have_totals;

	double allocations, frees, bytes_allocated;   /* recorded blocks (estimates when sampled) */
	double temporary;
	double leaked_count, leaked_bytes;
	double peak_heap;
	uint64_t peak_heap_ns;
	uint64_t peak_rss, peak_rss_ns;
	uint64_t untracked_frees;        /* frees of blocks allocated before tracing started */
	uint64_t mmap_calls, munmap_calls;
	uint64_t markers;
	uint64_t untraced_children;      /* (4.2) children forked with no follow-fork: not in this trace */

	struct hs_site *sites;           /* the sites with calls, in the order of their first */
	uint32_t nsites;
	uint32_t sites_cap;              /* internal: room in sites */
	uint32_t top[HS_RANK_COUNT][HS_REPORT_TOP];   /* indexes into sites */
	int ntop[HS_RANK_COUNT];
};

/* Reads the whole trace; on error returns <0 and hs_reader_error(r) tells why. */
int hs_report_build(struct hs_report *rep, struct hs_reader *r, hs_alloctab_progress progress, void *arg);
/* The figure ranking k orders sites by (largest first; ties go to the lower stack id). */
double hs_site_rank_value(const struct hs_site *s, enum hs_rank k);
void hs_report_free(struct hs_report *rep);

#endif
