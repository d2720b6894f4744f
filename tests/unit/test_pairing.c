/* test_pairing.c - report and allocation table pair frees with allocations across interleaved threads: cross-thread frees, missing and late frees, reallocs */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "analysis/alloctab.h"
#include "analysis/report.h"
#include "check.h"
#include "tmpdir.h"
#include "heapscope/reader.h"
#include "tracebuild.h"

/*
 * Both passes keep each thread's latest allocation out of the live set until
 * the thread allocates again, and pair an allocation with a free that follows
 * at once; these events take every path of that. Threads 1 and 2, addresses
 * A..F, sizes chosen so that sums tell which blocks were counted.
 *
 *   t   thr event                      heap after
 *   1   1   alloc A 100                100
 *   2   2   alloc B 200                300
 *   3   1   free B                     100   another thread's latest allocation
 *   4   2   alloc C 400                500
 *   5   1   alloc A 1000               1400  A's first block was never freed: it ends here
 *   6   2   free A                     400   another thread's latest allocation
 *   7   1   alloc D 8                  408
 *   8   1   free D                     400   temporary, paired at once
 *   9   2   alloc E 16                 416
 *   10  1   alloc B 32                 448
 *   11  2   free E                     432   temporary for thread 2
 *   14  1   alloc C 2000               2032  C's first block (in the live set by now) ends here
 *   12  2   free C (written late)      2032  stamped before the block at C was born: an older block's, untracked
 *   15  1   realloc B -> F 64          2064
 *   16  2   alloc G 6 GiB              6 GiB + 2064, peak (a size kept aside by the live set)
 * At the end C (2000), F (64) and G (6 GiB) are live.
 */
enum { A = 0x1000, B = 0x2000, C = 0x3000, D = 0x4000, E = 0x5000, F = 0x6000, G = 0x7000 };
#define SIX_GIB (6ull << 30)

static char dir[256], file[300];

static const char *build(void)
{
	static const char *const argv[] = { "pairing" };
	struct tb t;

	if (tb_init(&t, 0, 0, 1700000000000000000ull, 78) < 0)
		return NULL;
	tb_process(&t, 78, 1, "/usr/bin/pairing", 1, argv);
	tb_stack(&t, 1, 0, 0x401000);
	tb_alloc(&t, 1, 1, HS_FN_MALLOC, A, 100, 1, 0);
	tb_alloc(&t, 2, 2, HS_FN_MALLOC, B, 200, 1, 0);
	tb_free_rec(&t, 3, 1, HS_FN_FREE, B);
	tb_alloc(&t, 4, 2, HS_FN_MALLOC, C, 400, 1, 0);
	tb_alloc(&t, 5, 1, HS_FN_MALLOC, A, 1000, 1, 0);
	tb_free_rec(&t, 6, 2, HS_FN_FREE, A);
	tb_alloc(&t, 7, 1, HS_FN_MALLOC, D, 8, 1, 0);
	tb_free_rec(&t, 8, 1, HS_FN_FREE, D);
	tb_alloc(&t, 9, 2, HS_FN_MALLOC, E, 16, 1, 0);
	tb_alloc(&t, 10, 1, HS_FN_MALLOC, B, 32, 1, 0);
	tb_free_rec(&t, 11, 2, HS_FN_FREE, E);
	tb_alloc(&t, 14, 1, HS_FN_MALLOC, C, 2000, 1, 0);
	tb_free_rec(&t, 12, 2, HS_FN_FREE, C);
	tb_free_rec(&t, 15, 1, HS_FN_REALLOC, B);
	tb_alloc(&t, 15, 1, HS_FN_REALLOC, F, 64, 1, B);
	tb_alloc(&t, 16, 2, HS_FN_MALLOC, G, SIX_GIB, 1, 0);
	tb_end(&t, 20, HS_END_EXIT);
	if (tb_flush(&t) < 0)
		return NULL;
	snprintf(file, sizeof(file), "%s/pairing.hst", dir);
	if (tb_write(&t.file, file) < 0)
		return NULL;
	tb_free(&t);
	return file;
}

/* The table entry allocated at time ns (each time above has one), or NULL. */
static const struct hs_alloc *at_time(const struct hs_alloctab *t, uint64_t ns)
{
	for (uint64_t i = 0; i < t->n; i++)
		if (hs_alloc_time(hs_alloctab_at(t, i)) == ns)
			return hs_alloctab_at(t, i);
	return NULL;
}

static void check_freed(const struct hs_alloctab *t, uint64_t born, int64_t freed)
{
	const struct hs_alloc *a = at_time(t, born);
	char name[64];

	snprintf(name, sizeof(name), "pairing-table-block-born-%llu", (unsigned long long)born);
	if (freed < 0)
		check_report(a && hs_alloc_leaked(a), name, "expected never freed got %s",
			     !a ? "no block" : "freed");
	else
		check_report(a && !hs_alloc_leaked(a) && hs_alloc_free_time(a) == (uint64_t)freed, name,
			     "expected freed at %lld got %s %llu", (long long)freed, !a ? "no block" : "free time",
			     a ? (unsigned long long)hs_alloc_free_time(a) : 0ull);
}

int main(void)
{
	struct hs_reader *r = NULL;
	struct hs_report rep;
	struct hs_alloctab tab;
	const char *path;

	if (!check_tmpdir(dir, sizeof(dir), "pairing-tmpdir"))
		return 0;
	path = build();
	if (!check_report(path != NULL, "pairing-build", "expected a trace file got an encoder or I/O error"))
		return 0;

	if (hs_reader_open(&r, path) == 0 && hs_report_build(&rep, r, NULL, NULL) == 0) {
		CHECK_U64("pairing-report-allocations", 10, rep.allocations);
		/* B (cross-thread), A (cross-thread), D, E, B by realloc; C's late free is not one */
		CHECK_U64("pairing-report-frees", 5, rep.frees);
		CHECK_U64("pairing-report-untracked", 1, rep.untracked_frees);
		CHECK_U64("pairing-report-temporary", 2, rep.temporary);
		CHECK_U64("pairing-report-peak", SIX_GIB + 2064, rep.peak_heap);
		CHECK_U64("pairing-report-peak-time", 16, rep.peak_heap_ns);
		CHECK_U64("pairing-report-leaked-count", 3, rep.leaked_count);
		CHECK_U64("pairing-report-leaked-bytes", SIX_GIB + 2064, rep.leaked_bytes);
		hs_report_free(&rep);
	} else {
		check_report(0, "pairing-report", "expected a report got %s", r ? hs_reader_error(r) : "no reader");
	}
	hs_reader_close(r);

	r = NULL;
	if (hs_reader_open(&r, path) == 0 && hs_alloctab_load(&tab, r, NULL, NULL) == 0) {
		CHECK_U64("pairing-table-allocations", 10, tab.n);
		CHECK_U64("pairing-table-untracked", 1, tab.untracked_frees);
		CHECK_U64("pairing-table-peak", SIX_GIB + 2064, tab.peak_heap);
		CHECK_U64("pairing-table-peak-time", 16, tab.peak_ns);
		check_freed(&tab, 1, 5);    /* A: ended when its address was handed out again */
		check_freed(&tab, 2, 3);    /* B: freed by thread 1 */
		check_freed(&tab, 4, 14);   /* C: ended when thread 1 got its address */
		check_freed(&tab, 5, 6);    /* A again: freed by thread 2 */
		check_freed(&tab, 7, 8);
		check_freed(&tab, 9, 11);
		check_freed(&tab, 10, 15);  /* B: moved by realloc */
		check_freed(&tab, 14, -1);  /* C again: the late free was an older block's */
		check_freed(&tab, 16, -1);
		check_report(at_time(&tab, 16) && hs_alloc_size(at_time(&tab, 16)) == SIX_GIB, "pairing-table-big-size",
			     "expected 6 GiB got %llu",
			     at_time(&tab, 16) ? (unsigned long long)hs_alloc_size(at_time(&tab, 16)) : 0ull);
		check_report(tab.nlinks == 1 && hs_alloc_time(hs_alloctab_at(&tab, tab.links[0].from)) == 10 &&
			     hs_alloc_time(hs_alloctab_at(&tab, tab.links[0].to)) == 15,
			     "pairing-table-realloc-link", "expected one link from the block born at 10 to the one at 15 got %llu",
			     (unsigned long long)tab.nlinks);
		hs_alloctab_free(&tab);
	} else {
		check_report(0, "pairing-table", "expected a table got %s", r ? hs_reader_error(r) : "no reader");
	}
	hs_reader_close(r);
	unlink(path);
	rmdir(dir);
	return 0;
}
