/*
 * fuzz_analysis.c - libFuzzer target for the analysis passes over whatever
 * events a trace holds (wrap.h makes them a well-formed file): report,
 * the allocation table and the streaming pass must not crash, leak or trip
 * a sanitizer, and must agree with each other.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/alloctab.h"
#include "analysis/report.h"
#include "heapscope/reader.h"
#include "wrap.h"

struct tally {
	uint64_t fates, at_peak_bytes, last_rises;
	uint64_t max_seq;
};

/* Streaming: one fate per allocation; the peak's blocks are summed for the last peak only. */
static int count_fates(void *arg, const struct hs_fate *fates, size_t n)
{
	struct tally *ty = arg;

	for (size_t i = 0; i < n; i++) {
		if (fates[i].peak_rises != ty->last_rises) {
			ty->last_rises = fates[i].peak_rises;
			ty->at_peak_bytes = 0;
		}
		if (hs_alloc_at_peak(&fates[i].a))
			ty->at_peak_bytes += hs_alloc_size(&fates[i].a);
		if (fates[i].seq > ty->max_seq)
			ty->max_seq = fates[i].seq;
		ty->fates++;
	}
	return 0;
}

static void disagree(const char *what, double a, double b)
{
	fprintf(stderr, "fuzz_analysis: %s: %.17g vs %.17g\n", what, a, b);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_trace_file(data, size);
	struct hs_reader *r = NULL;
	struct hs_report rep;
	struct hs_alloctab tab, st;
	struct tally ty = { 0 };
	int rep_ok = 0, tab_ok = 0, st_ok = 0;

	memset(&rep, 0, sizeof(rep));
	memset(&tab, 0, sizeof(tab));
	memset(&st, 0, sizeof(st));
	if (hs_reader_open(&r, path) == 0)
		rep_ok = hs_report_build(&rep, r) == 0;
	hs_reader_close(r);
	r = NULL;
	if (hs_reader_open(&r, path) == 0)
		tab_ok = hs_alloctab_load(&tab, r, NULL, NULL) == 0;
	hs_reader_close(r);
	r = NULL;
	if (hs_reader_open(&r, path) == 0)
		st_ok = hs_alloctab_stream(&st, r, count_fates, &ty, NULL, NULL) == 0;
	hs_reader_close(r);

	if (tab_ok) {
		uint64_t at_peak = 0;
		for (uint64_t i = 0; i < tab.n; i++) {
			const struct hs_alloc *a = hs_alloctab_at(&tab, i);
			if (hs_alloc_at_peak(a))
				at_peak += hs_alloc_size(a);
		}
		/* the blocks live at the peak add up to it (full mode: exact integers) */
		if (!tab.sample_bytes && (double)at_peak != tab.peak_heap)
			disagree("table: bytes live at the peak against the peak", (double)at_peak, tab.peak_heap);
		if (st_ok) {
			if (ty.fates != tab.n || st.n != tab.n)
				disagree("fates streamed against table entries", (double)ty.fates, (double)tab.n);
			if (st.peak_heap != tab.peak_heap || st.peak_end != tab.peak_end)
				disagree("streamed peak against the table's", st.peak_heap, tab.peak_heap);
			if (!tab.sample_bytes && ty.at_peak_bytes != at_peak)
				disagree("streamed bytes live at the peak against the table's", (double)ty.at_peak_bytes,
					 (double)at_peak);
		}
		if (rep_ok && !tab.sample_bytes) {
			if (rep.allocations != (double)tab.n)
				disagree("report's allocations against table entries", rep.allocations, (double)tab.n);
			if (rep.peak_heap != tab.peak_heap)
				disagree("report's peak against the table's", rep.peak_heap, tab.peak_heap);
		}
	}
	/* after an error too: what a failed pass leaves is its caller's to free */
	hs_report_free(&rep);
	hs_alloctab_free(&tab);
	hs_alloctab_free(&st);
	return 0;
}
