/* test_pending.c - the passes' pending blocks: the nursery and pairs against a reference, and whole passes that change ways, against a simple pairing */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "analysis/alloctab.h"
#include "analysis/pending.h"
#include "analysis/report.h"
#include "check.h"
#include "tmpdir.h"
#include "heapscope/reader.h"
#include "tracebuild.h"

/* ---- the structure alone: random sets, clears and finds in both ways, against a plain array ---- */

static void structure(int nur)
{
	struct hs_pending p;
	uint64_t ref[HS_PENDING] = { 0 }, s = 0x2545f4914f6cdd1dull;
	size_t bad = 0, ops = 0;
	char first[160] = "none", name[64];

	hs_pending_init(&p);
	if (!nur)
		hs_pending_switch(&p);
	for (int step = 0; step < 200000; step++) {
		/* few distinct addresses, 16 bytes apart: homes collide and probe runs wrap */
		uint64_t ptr = 0x7f0000001000ull + 16 * (check_rand(&s) % 300);
		uint32_t tidx = (uint32_t)(check_rand(&s) % 40);
		int k = hs_pending_find(&p, ptr, nur), want = -1;

		for (int i = 0; i < HS_PENDING; i++)
			if (ref[i] == ptr)
				want = i;
		if (k != want && !bad++)
			snprintf(first, sizeof(first), "step %d: find 0x%llx gave %d, want %d", step,
				 (unsigned long long)ptr, k, want);
		ops++;
		if (k >= 0) {
			/* freed (or its address handed out again) */
			hs_pending_freed(&p, (unsigned)k, nur);
			ref[k] = 0;
		} else {
			unsigned slot = hs_pending_slot(&p, tidx, nur);
			if (slot >= HS_PENDING || (!nur && slot / 2 != tidx % HS_PENDING_PAIRS)) {
				if (!bad++)
					snprintf(first, sizeof(first), "step %d: slot %u for thread %u", step, slot, tidx);
				break;
			}
			if (hs_pending_taken(&p, slot)) {
				hs_pending_clear(&p, slot, nur);
				ref[slot] = 0;
			}
			hs_pending_set(&p, slot, ptr, nur);
			ref[slot] = ptr;
		}
		int held = 0;
		for (int i = 0; i < HS_PENDING; i++)
			held += ref[i] != 0;
		if (held != __builtin_popcountll(p.mask) && !bad++)
			snprintf(first, sizeof(first), "step %d: %d slots taken, want %d", step,
				 __builtin_popcountll(p.mask), held);
	}
	/* every block still held is found where the reference has it; then let go, the index is empty */
	for (int i = 0; i < HS_PENDING; i++)
		if (ref[i] && hs_pending_find(&p, ref[i], nur) != i && !bad++)
			snprintf(first, sizeof(first), "at the end: 0x%llx not in slot %d", (unsigned long long)ref[i], i);
	for (int k; (k = hs_pending_any(&p)) >= 0;)
		hs_pending_clear(&p, (unsigned)k, nur);
	for (unsigned i = 0; i < HS_PENDING_INDEX; i++)
		if (p.index[i] && !bad++)
			snprintf(first, sizeof(first), "index place %u still holds slot %u", i, p.index[i] - 1u);
	snprintf(name, sizeof(name), "pending-%s-against-reference", nur ? "nursery" : "pairs");
	CHECK_COUNT(name, bad, ops, first);
}

/* ---- whole passes over a trace whose blocks first live long, then die young, then live long ---- */

#define POOL 16384
#define NTHREADS 4
#define RING 4096

struct blk {
	int live;
	uint32_t tid;
	uint64_t size, idx;
};

struct gen {
	struct tb t;
	uint64_t s, ts, nalloc;
	struct blk ref[POOL];
	uint32_t freelist[POOL], nfree;
	uint32_t ring[NTHREADS][RING];     /* each thread's allocations, by pool index, latest at pos - 1 */
	uint64_t pos[NTHREADS];
	uint64_t last_ptr[NTHREADS];       /* the thread's latest allocation, 0 once it freed anything */
	uint64_t *free_at;                 /* by allocation: when it ended, UINT64_MAX never */
	size_t free_cap;
	/* what a report must say */
	uint64_t allocs, frees, untracked, temporary, leaked, leaked_bytes, heap, peak, peak_ns;
};

static uint64_t addr_of(uint32_t i)
{
	return 0x55550000000ull + (uint64_t)i * 48;
}

static void ended(struct gen *g, uint32_t i, uint64_t ns)
{
	g->ref[i].live = 0;
	g->heap -= g->ref[i].size;
	g->free_at[g->ref[i].idx] = ns;
}

/* An allocation by thread th at pool index i (live or not), of fn, replacing old for a realloc. */
static void alloc_at(struct gen *g, int th, uint32_t i, int fn, uint64_t old)
{
	uint64_t size = 8 + check_rand(&g->s) % 500, ns = ++g->ts;

	if (g->ref[i].live)
		ended(g, i, ns);
	if (g->nalloc == g->free_cap) {
		g->free_cap = g->free_cap ? 2 * g->free_cap : 1 << 16;
		g->free_at = realloc(g->free_at, g->free_cap * sizeof(*g->free_at));
	}
	g->free_at[g->nalloc] = UINT64_MAX;
	g->ref[i] = (struct blk){ .live = 1, .tid = (uint32_t)th, .size = size, .idx = g->nalloc++ };
	tb_alloc(&g->t, ns, 11 + (uint32_t)th, fn, addr_of(i), size, 1 + (uint32_t)(size % 3), old);
	g->allocs++;
	g->heap += size;
	if (g->heap > g->peak) {
		g->peak = g->heap;
		g->peak_ns = ns;
	}
	g->ring[th][g->pos[th]++ % RING] = i;
	g->last_ptr[th] = addr_of(i);
}

static uint32_t take_free(struct gen *g)
{
	return g->nfree ? g->freelist[--g->nfree] : (uint32_t)(check_rand(&g->s) % POOL);
}

static void free_by(struct gen *g, int th, uint32_t i, int fn)
{
	uint64_t ns = ++g->ts;

	tb_free_rec(&g->t, ns, 11 + (uint32_t)th, fn, addr_of(i));
	if (!g->ref[i].live) {
		g->untracked++;     /* and the thread's latest allocation stays what it was */
		return;
	}
	g->frees++;
	if (fn == HS_FN_FREE && g->last_ptr[th] == addr_of(i) && g->ref[i].tid == (uint32_t)th)
		g->temporary++;
	ended(g, i, ns);
	g->freelist[g->nfree++] = i;
	g->last_ptr[th] = 0;
}

/* One step of thread th: young (most blocks die within 2 to 30 of its allocations) or old (they live 2000) */
static void step(struct gen *g, int th, int young)
{
	uint64_t r = check_rand(&g->s) % 1000;
	uint32_t i;

	if (r < 5 && g->pos[th]) {
		/* realloc of the latest block: in place, or moved */
		uint32_t o = g->ring[th][(g->pos[th] - 1) % RING];
		if (!g->ref[o].live)
			return;
		if (r < 2) {
			alloc_at(g, th, o, HS_FN_REALLOC, addr_of(o));
		} else {
			free_by(g, th, o, HS_FN_REALLOC);
			i = take_free(g);
			alloc_at(g, th, i, HS_FN_REALLOC, addr_of(o));
		}
		return;
	}
	if (r < 8) {
		/* an address still live handed out again: its free was never recorded */
		alloc_at(g, th, (uint32_t)(check_rand(&g->s) % POOL), HS_FN_MALLOC, 0);
		return;
	}
	if (r < 12) {
		/* a free of an address that holds nothing, or another thread's block */
		free_by(g, th, (uint32_t)(check_rand(&g->s) % POOL), HS_FN_FREE);
		return;
	}
	i = take_free(g);
	alloc_at(g, th, i, HS_FN_MALLOC, 0);
	if (r < 300) {
		free_by(g, th, i, HS_FN_FREE);     /* a temporary, paired at once */
		return;
	}
	if (young) {
		uint64_t back = 2 + check_rand(&g->s) % 29;
		if (g->pos[th] > back) {
			uint32_t j = g->ring[th][(g->pos[th] - 1 - back) % RING];
			if (g->ref[j].live)
				free_by(g, th, j, HS_FN_FREE);
		}
	} else if (g->pos[th] > 2000) {
		uint32_t j = g->ring[th][(g->pos[th] - 2000) % RING];
		if (g->ref[j].live)
			free_by(g, th, j, HS_FN_FREE);
	}
}

static char dir[256], file[300];

static const char *build(struct gen *g)
{
	static const char *const argv[] = { "pending" };
	/* events per phase: pairs' stretch is 2^21 events, so that the nursery comes back in the third */
	static const struct { int young; uint64_t events; } phases[] = {
		{ 0, 200000 }, { 1, 2600000 }, { 0, 300000 }, { 1, 300000 },
	};

	if (tb_init(&g->t, 0, 0, 1700000000000000000ull, 79) < 0)
		return NULL;
	tb_process(&g->t, 79, 1, "/usr/bin/pending", 1, argv);
	tb_stack(&g->t, 1, 0, 0x401000);
	tb_stack(&g->t, 2, 1, 0x401100);
	tb_stack(&g->t, 3, 1, 0x401200);
	for (size_t p = 0; p < sizeof(phases) / sizeof(phases[0]); p++) {
		uint64_t until = g->ts + phases[p].events;
		while (g->ts < until) {
			/* runs of one thread, as a writer merges them */
			int th = (int)(check_rand(&g->s) % NTHREADS);
			for (int n = 1 + (int)(check_rand(&g->s) % 8); n-- > 0;)
				step(g, th, phases[p].young);
			if (g->ts % 65536 < 8 && tb_flush(&g->t) < 0)
				return NULL;
		}
	}
	for (uint32_t i = 0; i < POOL; i++)
		if (g->ref[i].live) {
			g->leaked++;
			g->leaked_bytes += g->ref[i].size;
		}
	tb_end(&g->t, ++g->ts, HS_END_EXIT);
	if (tb_flush(&g->t) < 0)
		return NULL;
	snprintf(file, sizeof(file), "%s/pending.hst", dir);
	if (tb_write(&g->t.file, file) < 0)
		return NULL;
	tb_free(&g->t);
	return file;
}

int main(void)
{
	static struct gen g = { .s = 0x9e3779b97f4a7c15ull };
	struct hs_reader *r = NULL;
	struct hs_report rep;
	struct hs_alloctab tab;
	const char *path;

	structure(1);
	structure(0);

	if (!check_tmpdir(dir, sizeof(dir), "pending-tmpdir"))
		return 0;
	path = build(&g);
	if (!check_report(path != NULL, "pending-build", "expected a trace file got an encoder or I/O error"))
		return 0;

	if (hs_reader_open(&r, path) == 0 && hs_report_build(&rep, r, NULL, NULL) == 0) {
		CHECK_U64("pending-report-allocations", g.allocs, rep.allocations);
		CHECK_U64("pending-report-frees", g.frees, rep.frees);
		CHECK_U64("pending-report-untracked", g.untracked, rep.untracked_frees);
		CHECK_U64("pending-report-temporary", g.temporary, rep.temporary);
		CHECK_U64("pending-report-peak", g.peak, rep.peak_heap);
		CHECK_U64("pending-report-peak-time", g.peak_ns, rep.peak_heap_ns);
		CHECK_U64("pending-report-leaked-count", g.leaked, rep.leaked_count);
		CHECK_U64("pending-report-leaked-bytes", g.leaked_bytes, rep.leaked_bytes);
		hs_report_free(&rep);
	} else {
		check_report(0, "pending-report", "expected a report got %s", r ? hs_reader_error(r) : "no reader");
	}
	hs_reader_close(r);

	r = NULL;
	if (hs_reader_open(&r, path) == 0 && hs_alloctab_load(&tab, r, NULL, NULL) == 0) {
		size_t bad = 0;
		char first[160] = "none";
		CHECK_U64("pending-table-allocations", g.nalloc, tab.n);
		CHECK_U64("pending-table-untracked", g.untracked, tab.untracked_frees);
		CHECK_U64("pending-table-peak", g.peak, tab.peak_heap);
		for (uint64_t i = 0; i < tab.n && i < g.nalloc; i++) {
			const struct hs_alloc *a = hs_alloctab_at(&tab, i);
			int ok = g.free_at[i] == UINT64_MAX ? hs_alloc_leaked(a) :
							       !hs_alloc_leaked(a) && hs_alloc_free_time(a) == g.free_at[i];
			if (!ok && !bad++)
				snprintf(first, sizeof(first), "allocation %llu: ended %s %llu, want %llu",
					 (unsigned long long)i, hs_alloc_leaked(a) ? "never, not" : "at",
					 (unsigned long long)(hs_alloc_leaked(a) ? 0 : hs_alloc_free_time(a)),
					 (unsigned long long)g.free_at[i]);
		}
		CHECK_COUNT("pending-table-fates", bad, g.nalloc, first);
		hs_alloctab_free(&tab);
	} else {
		check_report(0, "pending-table", "expected a table got %s", r ? hs_reader_error(r) : "no reader");
	}
	hs_reader_close(r);
	free(g.free_at);
	unlink(path);
	rmdir(dir);
	return 0;
}
