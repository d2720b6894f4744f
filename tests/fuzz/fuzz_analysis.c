/*
 * fuzz_analysis.c - libFuzzer target for the analysis over whatever events
 * a trace holds (wrap.h makes them a well-formed file): report, the
 * allocation table and the streaming pass, then top, leaks, flame,
 * timeline and lifetimes over the table, must not crash, leak or trip a
 * sanitizer, and must agree with each other. The input's size picks the
 * grouping and the filter of the second half.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/alloctab.h"
#include "analysis/filter.h"
#include "analysis/flame.h"
#include "analysis/leaks.h"
#include "analysis/lifetimes.h"
#include "analysis/report.h"
#include "analysis/stacks.h"
#include "analysis/timeline.h"
#include "analysis/top.h"
#include "render/flame.h"
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

/*
 * The commands' builders over the table: a grouping and a filter chosen by
 * the input's size (a filter that keeps every allocation half the time, so
 * that the totals can be held to the table's).
 */
/* The folded lines' weights add up to the rounded total (lines of one text merged, sampled weights rounded). */
static void folded_sum(const struct hs_flame *fl, struct hs_stacks *st)
{
	char *buf = NULL, *p;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	double got = 0;

	if (!m)
		return;
	if (hs_render_flame_folded(m, st, fl) != 0) {
		fclose(m);
		free(buf);
		return;
	}
	fclose(m);
	for (p = buf; p && (p = strchr(p, '\n')); p++) {
		const char *sp = p;
		while (sp > buf && sp[-1] != ' ')
			sp--;
		got += strtod(sp, NULL);
	}
	if (got != (double)llround(fl->total))
		disagree("folded lines' weights against flame's total", got, (double)llround(fl->total));
	free(buf);
}

static void consumers(const struct hs_alloctab *tab, const char *path, size_t size)
{
	static const enum hs_group_by by[] = { HS_BY_BACKTRACE, HS_BY_FUNCTION, HS_BY_LINE, HS_BY_LIBRARY };
	static char *filters[][3] = {
		{ "--live-at", "peak", NULL }, { "--leaked", NULL, NULL }, { "--allocated-between", "10%", "peak" },
		{ "--lifetime-max", "1ms", NULL }, { "--size-min", "100", NULL }, { "--not-through", "main", NULL },
	};
	struct hs_reader *r = NULL;
	struct hs_stacks st;
	struct hs_filter f;
	struct hs_top top;
	struct hs_leaks lk;
	struct hs_flame fl;
	struct hs_timeline tl;
	struct hs_lifetimes lt;
	int all = (size >> 3) & 1, i = 0, have_st = 0;
	uint64_t sum = 0;

	memset(&top, 0, sizeof(top));
	memset(&lk, 0, sizeof(lk));
	memset(&fl, 0, sizeof(fl));
	memset(&tl, 0, sizeof(tl));
	memset(&lt, 0, sizeof(lt));
	hs_filter_init(&f);
	if (!all) {
		char **args = filters[(size >> 4) % (sizeof(filters) / sizeof(filters[0]))];
		int argc = args[2] ? 3 : args[1] ? 2 : 1;
		if (hs_filter_parse(&f, argc, args, &i) != 1)
			abort();
	}
	if (hs_reader_open(&r, path) < 0)
		goto out;
	if (hs_stacks_init(&st, r, f.hide, f.nhide, !f.no_default_hide, by[(size >> 1) & 3]) < 0)
		goto out;
	have_st = 1;
	if (hs_filter_prepare(&f, tab, &st) < 0)
		goto out;
	for (uint64_t k = 0; k < tab->n; k++)
		if (hs_filter_match(&f, tab, hs_alloctab_at(tab, k), k))
			sum++;
	if (hs_top_build(&top, tab, &f, &st, HS_SORT_PEAK, HS_STACKS_NO_KEY) == 0) {
		if (top.records != sum)
			disagree("top's allocations against the filter's", (double)top.records, (double)sum);
		if (all && !tab->sample_bytes && top.total.peak_bytes != tab->peak_heap)
			disagree("top's peak column against the peak", top.total.peak_bytes, tab->peak_heap);
		if (top.nrows) {
			uint32_t path0[1];
			struct hs_top callers;
			memset(&callers, 0, sizeof(callers));
			if (hs_stacks_caller_keys(&st, top.rows[0].key, path0, 1) >= 0 &&
			    hs_top_build_path(&callers, tab, &f, &st, HS_SORT_BYTES, top.rows[0].key, path0, 1) == 0)
				hs_top_free(&callers);
		}
	}
	if (hs_leaks_build(&lk, tab, &f, &st) == 0 && lk.records != sum)
		disagree("leaks' allocations against the filter's", (double)lk.records, (double)sum);
	if (hs_flame_build(&fl, tab, &f, &st, HS_WEIGHT_COUNT, 0, (size >> 5) & 1) == 0) {
		if (!tab->sample_bytes && fl.total != (double)sum)
			disagree("flame's count against the filter's", fl.total, (double)sum);
		folded_sum(&fl, &st);
	}
	hs_flame_free(&fl);
	memset(&fl, 0, sizeof(fl));
	/* a tree that leaves out what lies under light nodes, as SVGs are drawn: its root weighs the total */
	if (hs_flame_weights(&fl, tab, &f, &st, HS_WEIGHT_BYTES, 0, (size >> 6) & 1) == 0 &&
	    hs_flame_tree(&fl, &st, (double)(size % 16) / 256) == 0 && !tab->sample_bytes &&
	    fl.nodes[0].weight != fl.total)
		disagree("a pruned flame tree's root against its total", fl.nodes[0].weight, fl.total);
	hs_flame_free(&fl);
	memset(&fl, 0, sizeof(fl));
	if (hs_flame_build(&fl, tab, &f, &st, HS_WEIGHT_LIVE, HS_AT_PEAK, 1) == 0) {
		if (all && !tab->sample_bytes && fl.total != tab->peak_heap)
			disagree("flame's bytes live at the peak against the peak", fl.total, tab->peak_heap);
		folded_sum(&fl, &st);
	}
	(void)hs_timeline_build(&tl, tab, &f, &st, 2 + (uint32_t)(size % 50), (uint32_t)(size % 7), HS_SORT_PEAK);
	if (hs_lifetimes_build(&lt, tab, &f, 1 + size % 100) == 0 && lt.matched != sum)
		disagree("lifetimes' allocations against the filter's", (double)lt.matched, (double)sum);
out:
	hs_top_free(&top);
	hs_leaks_free(&lk);
	hs_flame_free(&fl);
	hs_timeline_free(&tl);
	hs_lifetimes_free(&lt);
	if (have_st)
		hs_stacks_free(&st);
	hs_filter_free(&f);
	hs_reader_close(r);
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
		rep_ok = hs_report_build(&rep, r, NULL, NULL) == 0;
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
	if (tab_ok && tab.n)
		consumers(&tab, path, size);
	/* after an error too: what a failed pass leaves is its caller's to free */
	hs_report_free(&rep);
	hs_alloctab_free(&tab);
	hs_alloctab_free(&st);
	return 0;
}
