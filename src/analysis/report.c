/* report.c - one pass over a trace for the summary: counts, peak, leaks, temporaries, top sites */
#define _GNU_SOURCE
#include "report.h"
#include "oom.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "live.h"


struct thread_last {
	uint32_t tid;
	uint64_t ptr;   /* the thread's latest allocation, 0 once anything else was allocated */
};

struct pass {
	struct hs_report *rep;
	struct hs_live live;
	uint64_t seq, peak_seq;
	double heap;
	struct thread_last *threads;
	size_t nthreads, threads_cap;
	size_t last_thread;
	uint32_t tid_memo[64];          /* tid % 64 -> 1 + its index: interleaved threads take turns */
	uint32_t *site_at;                      /* stack id -> 1 + its place in rep->sites; 0: no site yet */
	size_t site_at_cap;
};

/*
 * Weight of a sampled block: the inverse of its chance to be sampled
 * (byte-based geometric sampling). The pass knows its mode as a constant:
 * a full trace's pass then multiplies by nothing and asks nothing
 * (CPython's report: 7 instructions an event less).
 */
static inline __attribute__((always_inline)) double weight(const struct hs_report *rep, uint64_t size,
							   const int sampled)
{
	return sampled ? hs_sample_weight(rep->sample_bytes, size) : 1.0;
}

/*
 * Sites are a dense table, found through a map from stack id to place: a
 * trace's stack ids number every node of its stack trie, and most name no
 * allocation. Indexed by stack id, clang's report of 148,000 stack ids
 * (31,000 sites) touched 4,600 pages of a 19 MB table, half its time in
 * page faults; the map takes 4 bytes a stack id. Both are mapped memory
 * grown by mremap, which copies nothing, and whose new pages come zeroed.
 */
#define SITES_FIRST 256
#define SITE_AT_FIRST 1024

static size_t page_round(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

static void *map_grow(void *p, size_t old_bytes, size_t new_bytes)
{
	void *q = p ? mremap(p, old_bytes, new_bytes, MREMAP_MAYMOVE) :
		      mmap(NULL, new_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (q == MAP_FAILED)
		hs_oom(new_bytes);
	return q;
}

static size_t sites_bytes(uint32_t n)
{
	return page_round((size_t)n * sizeof(struct hs_site));
}

static __attribute__((noinline)) struct hs_site *site_new(struct pass *ps, uint32_t stack)
{
	struct hs_report *rep = ps->rep;
	struct hs_site *s;

	if (stack >= ps->site_at_cap) {
		size_t n = ps->site_at_cap ? ps->site_at_cap : SITE_AT_FIRST;
		while (n <= stack)
			n *= 2;
		ps->site_at = map_grow(ps->site_at, page_round(ps->site_at_cap * sizeof(uint32_t)),
				       page_round(n * sizeof(uint32_t)));
		ps->site_at_cap = n;
	}
	if (rep->nsites == rep->sites_cap) {
		uint32_t n = rep->sites_cap ? rep->sites_cap * 2 : SITES_FIRST;
		rep->sites = map_grow(rep->sites, sites_bytes(rep->sites_cap), sites_bytes(n));
		rep->sites_cap = n;
	}
	ps->site_at[stack] = rep->nsites + 1;
	s = &rep->sites[rep->nsites++];
	s->stack = stack;
	return s;
}

/* Every allocation asks: a new site is made out of line. */
static inline struct hs_site *site(struct pass *ps, uint32_t stack)
{
	uint32_t i = stack < ps->site_at_cap ? ps->site_at[stack] : 0;

	return i ? &ps->rep->sites[i - 1] : site_new(ps, stack);
}

/*
 * Peak contribution without snapshots: a site's value at the latest peak is
 * its value before its first change after that peak.
 */
static void site_change(struct pass *ps, struct hs_site *s, double delta)
{
	if (s->last_change <= ps->peak_seq)
		s->peak_bytes = s->live_bytes;
	s->live_bytes += delta;
	s->last_change = ps->seq;
}

static __attribute__((noinline)) struct thread_last *thread_lookup(struct pass *ps, uint32_t tid)
{
	uint32_t *m = &ps->tid_memo[tid % 64];

	if (*m && ps->threads[*m - 1].tid == tid) {
		ps->last_thread = *m - 1;
		return &ps->threads[*m - 1];
	}
	for (size_t i = 0; i < ps->nthreads; i++)
		if (ps->threads[i].tid == tid) {
			ps->last_thread = i;
			*m = (uint32_t)i + 1;
			return &ps->threads[i];
		}
	if (ps->nthreads == ps->threads_cap) {
		ps->threads_cap = ps->threads_cap ? ps->threads_cap * 2 : 16;
		ps->threads = hs_xrealloc(ps->threads, ps->threads_cap * sizeof(*ps->threads));
	}
	ps->threads[ps->nthreads] = (struct thread_last){ .tid = tid };
	ps->last_thread = ps->nthreads;
	*m = (uint32_t)ps->nthreads + 1;
	return &ps->threads[ps->nthreads++];
}

/* Most events are the same thread's as the one before: that answer inline, the rest out of line. */
static inline struct thread_last *thread_of(struct pass *ps, uint32_t tid)
{
	if (ps->last_thread < ps->nthreads && ps->threads[ps->last_thread].tid == tid)
		return &ps->threads[ps->last_thread];
	return thread_lookup(ps, tid);
}

/*
 * A block that ends now (freed, or its address handed out again): out of
 * the heap and its site's live bytes. Inlined: called, it took 9% of
 * sqlite3's report's samples (the report 3-5% faster inlined).
 */
static inline __attribute__((always_inline)) void settle(struct pass *ps, const struct hs_live_block *b,
							  const int sampled)
{
	uint64_t size = hs_live_size(&ps->live, b);
	double w = weight(ps->rep, size, sampled);

	site_change(ps, site(ps, b->stack), -(double)size * w);
	ps->heap -= (double)size * w;
}

/* A new block in the totals, its site and the heap (and the peak if it makes one). */
static inline void count_alloc(struct pass *ps, struct hs_site *s, const struct hs_event *ev, double w)
{
	struct hs_report *rep = ps->rep;
	double bytes = (double)ev->size * w;

	rep->allocations += w;
	rep->bytes_allocated += bytes;
	s->calls += w;
	s->bytes += bytes;
	site_change(ps, s, bytes);
	ps->heap += bytes;
	if (ps->heap > rep->peak_heap) {
		rep->peak_heap = ps->heap;
		rep->peak_heap_ns = ev->time_ns;
		ps->peak_seq = ps->seq;
	}
}

/*
 * Every block goes straight into the live set. The set once had a stage
 * before it for the latest blocks (most die young), which paid when each
 * insertion missed the cache; with blocks of one page in neighbouring
 * slots and the slots prefetched a batch ahead, the stage cost more than
 * it saved: CPython's report took 18% less time without it (836 -> 683
 * ms; 12.76G -> 10.60G instructions), sqlite3's 5% and clang's 10% fewer
 * instructions, no more cache misses (docs/analysis.md).
 */
static inline __attribute__((always_inline)) void on_alloc(struct pass *ps, const struct hs_event *ev, const int sampled)
{
	struct hs_report *rep = ps->rep;
	double w = weight(rep, ev->size, sampled);
	struct hs_site *s = site(ps, ev->stack);
	struct thread_last *t = thread_of(ps, ev->tid);
	int existed;
	struct hs_live_block *b = hs_live_put(&ps->live, ev->ptr, &existed);

	/* whatever was live there ended when the address was handed out again (its free was never recorded) */
	if (existed) {
		settle(ps, b, sampled);
		hs_live_forget(&ps->live, b);
	}
	hs_live_set(&ps->live, b, ev->size, ev->time_ns, (uint32_t)(t - ps->threads), ev->stack);
	count_alloc(ps, s, ev, w);
	t->ptr = ev->ptr;
}

static inline __attribute__((always_inline)) void on_free(struct pass *ps, const struct hs_event *ev, const int sampled)
{
	struct hs_report *rep = ps->rep;
	struct hs_live_block *b = hs_live_find(&ps->live, ev->ptr);
	struct thread_last *t;
	uint32_t tidx;
	double w;

	/*
	 * A free stamped before the block at this address was allocated belongs
	 * to an older block and came late. A thread's own events are in program
	 * order, so this can only happen between threads.
	 */
	t = thread_of(ps, ev->tid);
	tidx = (uint32_t)(t - ps->threads) < 0xffff ? (uint32_t)(t - ps->threads) : 0xffff;
	if (!b || (hs_live_thread(b) != tidx && hs_live_time(b) > ev->time_ns)) {
		rep->untracked_frees++;
		return;
	}
	w = weight(rep, hs_live_size(&ps->live, b), sampled);
	rep->frees += w;
	if (t->ptr == ev->ptr && ev->fn == HS_FN_FREE && hs_live_thread(b) == tidx) {
		rep->temporary += w;
		site(ps, b->stack)->temporary += w;
	}
	t->ptr = 0;
	settle(ps, b, sampled);
	hs_live_remove(&ps->live, b);
}

/*
 * An allocation its own thread frees as its very next event, at an address
 * not live already (its home slot is empty): most events of a churning
 * program, counted without entering the live set.
 */
static inline __attribute__((always_inline)) int pairs(const struct pass *ps, const struct hs_event *ev,
							 const struct hs_event *fr)
{
	return ev->kind == HS_EVENT_ALLOC && fr->kind == HS_EVENT_FREE && fr->ptr == ev->ptr && fr->tid == ev->tid &&
	       ps->live.slots[hs_live_slot(&ps->live, ev->ptr)].ptr == 0;
}


static inline __attribute__((always_inline)) void on_pair(struct pass *ps, const struct hs_event *ev,
							   const struct hs_event *fr, const int sampled)
{
	struct hs_report *rep = ps->rep;
	double w = weight(rep, ev->size, sampled), bytes = (double)ev->size * w;
	struct hs_site *s = site(ps, ev->stack);

	count_alloc(ps, s, ev, w);
	ps->seq++;
	rep->frees += w;
	if (fr->fn == HS_FN_FREE) {
		rep->temporary += w;
		s->temporary += w;
	}
	thread_of(ps, ev->tid)->ptr = 0;
	site_change(ps, s, -bytes);
	ps->heap -= bytes;
}

double hs_site_rank_value(const struct hs_site *s, enum hs_rank k)
{
	switch (k) {
	case HS_RANK_BYTES: return s->bytes;
	case HS_RANK_CALLS: return s->calls;
	case HS_RANK_PEAK: return s->peak_bytes;
	default: return s->leaked_bytes;
	}
}

/* Site i comes before site j in ranking k: the larger value, then the lower stack id. */
static int before(const struct hs_report *rep, enum hs_rank k, uint32_t i, uint32_t j)
{
	double x = hs_site_rank_value(&rep->sites[i], k), y = hs_site_rank_value(&rep->sites[j], k);

	return x != y ? x > y : rep->sites[i].stack < rep->sites[j].stack;
}

/*
 * The first HS_REPORT_TOP of each ranking, kept in order as the sites come
 * by: sorting every site four times for ten of each was a tenth of the
 * report of a program with many stacks (a clang compile: 34,000 sites).
 */
static void rank(struct hs_report *rep)
{
	for (int k = 0; k < HS_RANK_COUNT; k++)
		rep->ntop[k] = 0;
	for (uint32_t i = 0; i < rep->nsites; i++) {
		for (enum hs_rank k = 0; k < HS_RANK_COUNT; k++) {
			uint32_t *top = rep->top[k];
			int n = rep->ntop[k], j;
			if (!(hs_site_rank_value(&rep->sites[i], k) > 0) || (n == HS_REPORT_TOP && !before(rep, k, i, top[n - 1])))
				continue;
			if (n < HS_REPORT_TOP)
				n = ++rep->ntop[k];
			for (j = n - 1; j > 0 && before(rep, k, i, top[j - 1]); j--)
				top[j] = top[j - 1];
			top[j] = i;
		}
	}
}

/* a few events ahead: enough misses in flight to hide memory latency, few enough for the fill buffers */
#define AHEAD 16

static inline void prefetch(const struct pass *ps, const struct hs_event *ev)
{
	if (ev->kind == HS_EVENT_ALLOC || ev->kind == HS_EVENT_FREE)
		hs_live_prefetch(&ps->live, ev->ptr);
}

/* Events other than allocations and frees. */
static void account(struct pass *ps, const struct hs_event *ev)
{
	struct hs_report *rep = ps->rep;

	switch (ev->kind) {
	case HS_EVENT_RSS:
		if (ev->rss > rep->peak_rss) {
			rep->peak_rss = ev->rss;
			rep->peak_rss_ns = ev->time_ns;
		}
		break;
	case HS_EVENT_TOTALS:
		memcpy(rep->calls, ev->calls, sizeof(rep->calls));
		memcpy(rep->call_bytes, ev->bytes, sizeof(rep->call_bytes));
		rep->have_totals = 1;
		break;
	case HS_EVENT_MMAP:
		rep->mmap_calls++;
		break;
	case HS_EVENT_MUNMAP:
		rep->munmap_calls++;
		break;
	case HS_EVENT_MARKER:
		rep->markers++;
		break;
	case HS_EVENT_CHILDREN:
		rep->untraced_children = ev->len;
		break;
	case HS_EVENT_END:
		rep->clean_exit = 1;
		rep->end_reason = (int)ev->flags;
		break;
	case HS_EVENT_SIGNAL:
		rep->signal = (int)ev->flags;
		break;
	case HS_EVENT_DISABLED:
		snprintf(rep->disabled, sizeof(rep->disabled), "%.*s", (int)(ev->label_len < 159 ? ev->label_len : 159),
			 ev->label ? ev->label : "");
		break;
	default:
		break;
	}
}

/* One block of events of a trace sampled or not (a constant where it is inlined). */
static inline __attribute__((always_inline)) void pass_block(struct pass *ps, const struct hs_event *batch, int nb,
							      uint64_t *last_ns, const int sampled)
{
	for (int i = 0; i < nb && i < AHEAD; i++)
		prefetch(ps, &batch[i]);
	for (int i = 0; i < nb; i++) {
		const struct hs_event *e = &batch[i];
		/* the events' lines from the decoding thread's core first, then (below) their slots */
		__builtin_prefetch(e + 2 * AHEAD);
		if (i + AHEAD < nb)
			prefetch(ps, &batch[i + AHEAD]);
		ps->seq++;
		if (e->time_ns > *last_ns)
			*last_ns = e->time_ns;
		if (i + 1 < nb && pairs(ps, e, e + 1)) {
			on_pair(ps, e, e + 1, sampled);
			if (e[1].time_ns > *last_ns)
				*last_ns = e[1].time_ns;
			if (++i + AHEAD < nb)
				prefetch(ps, &batch[i + AHEAD]);
			continue;
		}
		if (e->kind == HS_EVENT_ALLOC)
			on_alloc(ps, e, sampled);
		else if (e->kind == HS_EVENT_FREE)
			on_free(ps, e, sampled);
		else
			account(ps, e);
	}
}

int hs_report_build(struct hs_report *rep, struct hs_reader *r, hs_alloctab_progress progress, void *arg)
{
	struct pass ps = { .rep = rep };
	const struct hs_event *batch;
	uint64_t last_ns = 0;
	int rc;

	memset(rep, 0, sizeof(*rep));
	rep->info = hs_reader_info(r);
	rep->sample_bytes = rep->info->sample_bytes;
	rep->sampled = rep->sample_bytes != 0;
	hs_live_init(&ps.live);
	do {
		/* read ahead a batch so the live table's cache misses overlap */
		int nb;
		rc = hs_reader_next_block(r, &batch);
		nb = rc > 0 ? rc : 0;
		if (progress && hs_progress_due(ps.seq, (uint64_t)nb))
			progress(arg, hs_reader_offset(r));
		if (rep->sampled)
			pass_block(&ps, batch, nb, &last_ns, 1);
		else
			pass_block(&ps, batch, nb, &last_ns, 0);
	} while (rc > 0);
	if (rc == 0) {
		rep->duration_ns = last_ns;
		for (uint32_t i = 0; i < rep->nsites; i++) {
			struct hs_site *s = &rep->sites[i];
			if (s->last_change <= ps.peak_seq)
				s->peak_bytes = s->live_bytes;
		}
		hs_live_foreach(&ps.live, b) {
			uint64_t size = hs_live_size(&ps.live, b);
			double w = weight(rep, size, rep->sampled);
			struct hs_site *s = site(&ps, b->stack);
			rep->leaked_count += w;
			rep->leaked_bytes += (double)size * w;
			s->leaked_count += w;
			s->leaked_bytes += (double)size * w;
		}
		rank(rep);
	}
	hs_live_free(&ps.live);
	free(ps.threads);
	if (ps.site_at)
		munmap(ps.site_at, page_round(ps.site_at_cap * sizeof(uint32_t)));
	return rc < 0 ? rc : 0;
}

void hs_report_free(struct hs_report *rep)
{
	if (rep->sites)
		munmap(rep->sites, sites_bytes(rep->sites_cap));
	memset(rep, 0, sizeof(*rep));
}
