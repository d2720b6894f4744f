/* alloctab.c - the pass that pairs allocations with frees, into the allocation table or out to a sink as each fate is known */
#define _DEFAULT_SOURCE /* madvise, strndup */
#include "alloctab.h"
#include "oom.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pending.h"

#define EMPTY UINT32_MAX
/*
 * The ways a pass holds its latest blocks (pending.h): pairs (0), the
 * nursery (1), or not at all (DIRECT): into the index at once. A table's
 * pass goes direct: with blocks of one page in neighbouring slots and the
 * slots prefetched a batch ahead, the pending stage cost more than it
 * saved there (`top` of CPython's trace 1.17 -> 0.82 s, 14.6G -> 12.8G
 * instructions; clang's 4.6% and churn's 2.9% fewer, sqlite3's 0.5% more,
 * the same cache misses). Streaming, a pending block takes no slot of the
 * table until it enters the index, which still pays: sqlite3's `leaks`
 * took 208 ms with pending blocks, 232 without (4x the cache misses).
 */
#define DIRECT 2
#define HUGE_PAGE (2u << 20)
#define MAX_THREADS 0xffff   /* thread indexes past this share the last one */
#define TID_MEMO 64

/*
 * Live blocks: an open-addressing set of table indexes. The keys are the
 * addresses parked in each allocation's f word; each slot also keeps the
 * key's hash, so probing and deleting never read the table, which is
 * where a large live set takes its cache misses.
 */
struct slot {
	uint32_t idx;    /* EMPTY: free slot */
	uint32_t hash;   /* its top bits are the home slot */
};

/*
 * A new index: 2^16 slots. Linear probing slows down as the load nears the
 * 3/4 that makes it grow, and most traces' live sets stay far below 2^16
 * blocks: starting at 2^10 made sqlite's `leaks` 19% slower.
 */
#define INDEX_FIRST_BITS 16

struct index {
	struct slot *slots;
	unsigned bits;
	unsigned down;   /* 32 - bits: home()'s shift */
	size_t mask;     /* 2^bits - 1 */
	size_t used;
};

struct pass {
	struct hs_alloctab *t;
	struct index live;
	uint64_t heap;          /* full mode: exact, and integer adds keep the hot loop short */
	uint64_t peak;
	double heap_est;        /* sampled mode: weighted estimate */
	uint32_t last_tid, last_tidx;
	int have_last;
	struct tid_memo { uint32_t tid, idx; int ok; } tid_memo[TID_MEMO];
	/*
	 * Blocks lately freed by realloc: its ALLOC names the old address and
	 * comes soon after the FREE, but other threads' events may come between.
	 */
	struct { uint64_t ptr, size; uint32_t idx; } recent[8];
	unsigned recent_next;
	struct hs_pending pend;         /* the latest allocations, not yet in the live set (pending.h) */
	uint32_t pend_idx[HS_PENDING];  /* its table index (streaming: once it has left the pending set) */
	/*
	 * Streaming, a pending block takes no slot until it enters the live
	 * set: its entry and its sequence number with flags wait here, and a
	 * block freed while pending goes to the sink from here, without a
	 * slot's free bit, sequence number and entry to write and read back.
	 * sqlite3's blocks are mostly freed within 16 allocations: its `leaks`
	 * went from 0.257 to 0.235 s on one core.
	 */
	struct hs_alloc pend_ent[HS_PENDING];
	uint64_t pend_seq[HS_PENDING];

	/*
	 * The peak: the allocations numbered below peak_end were made at or
	 * before it (0: no peak yet); table only, the blocks freed since that
	 * have HS_ALLOC_AT_PEAK set (they were live at it): a later peak clears
	 * it on them, since they were freed before that one.
	 */
	uint64_t peak_end;
	int oom;
	uint32_t *at_peak;
	uint64_t nat_peak, at_peak_cap;

	/*
	 * Streaming (a sink): slots of the table are reused once their block's
	 * fate went out, so the table holds only live blocks; per slot, the
	 * allocation's sequence number with its HS_ALLOC_* flags in the top
	 * two bits (one array: a free whose slot went cold misses once less,
	 * a tenth of a streaming replay of sqlite). Free slots are
	 * taken in address order from a moving cursor, not last-freed first:
	 * blocks freed together (a container's elements) are often allocated
	 * and freed again in order, and their slots should stay in that order
	 * for the cache, as in the table.
	 */
	hs_alloctab_sink sink;
	void *sink_arg;
	int sink_rc;
	struct hs_fate *fates;                /* gone out, for the sink in batches */
	unsigned nfates;
	uint64_t *seq;
	uint64_t *free_bits;                  /* bit per slot: free */
	uint32_t nfree, slots, cursor;        /* slots: how many exist */
};

#define SEQ_FLAGS 62   /* streaming: a slot's HS_ALLOC_* flags, above its sequence number */
#define SEQ_NUMBER(s) ((s) & ((1ull << SEQ_FLAGS) - 1))

/* The sequence number of the allocation in slot idx: its table index, or, streaming, what the slot keeps */
static inline uint64_t seq_of(const struct pass *ps, uint32_t idx)
{
	return ps->sink ? SEQ_NUMBER(ps->seq[idx]) : idx;
}

static inline unsigned slot_flags(const struct pass *ps, uint32_t idx)
{
	return (unsigned)(ps->seq[idx] >> SEQ_FLAGS);
}

/* Appends one element to an array that doubles at powers of two. */
static int push(void *arrp, uint64_t *n, size_t size, const void *elem)
{
	char **arr = arrp;

	if ((*n & (*n - 1)) == 0) {
		char *p = realloc(*arr, (*n ? *n * 2 : 16) * size);
		if (!p)
			return -ENOMEM;
		*arr = p;
	}
	memcpy(*arr + *n * size, elem, size);
	(*n)++;
	return 0;
}

static int is_realloc(int fn)
{
	return fn == HS_FN_REALLOC || fn == HS_FN_REALLOCARRAY;
}

/*
 * A slot's key: 24 bits of a hash of the block's page (every address bit
 * from 12 up), then its offset in the page in 16-byte steps. A live block's
 * entry keeps only the low 48 bits of its address (struct hs_alloc): the
 * top 16 go into the page's hash, which the index compares first, so that
 * an address past 48 bits (5-level paging, tagged pointers, a damaged
 * trace) is taken for the block at its low 48 bits only where the two
 * pages' hashes meet.
 */
static uint32_t hash_of(uint64_t ptr)
{
	return (uint32_t)(((ptr >> 12) * 0x9e3779b97f4a7c15ull) >> 40) << 8 | (uint32_t)((ptr >> 4) & 0xff);
}

/*
 * A block's home: its page's place, plus its offset. A program's
 * consecutive allocations are mostly neighbours in one page, so their
 * slots share lines (as in the report's live set, live.h). With a hash of
 * the whole address, CPython's `leaks` took 7% longer, its `timeline` 10%.
 */
static size_t home(const struct index *x, uint32_t hash)
{
	/* the page's 24 bits moved to the top of bits (down or up: one shift, as bits <= 32), plus the offset */
	return (((size_t)(hash & ~0xffu) >> x->down) + (hash & 0xff)) & x->mask;
}

/* Huge pages where the size allows: probes land anywhere, and 4K pages would add a TLB miss to each. */
static void *alloc_huge(size_t n)
{
	void *p;

	if (n < HUGE_PAGE)
		return malloc(n);
	p = aligned_alloc(HUGE_PAGE, (n + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1));
	if (p)
		madvise(p, n, MADV_HUGEPAGE);
	return p;
}

/*
 * A block of the table: on huge pages, as frees land on entries anywhere
 * in it and each 4 KiB page would be a TLB miss of its own: `top` of
 * python3's 18.8M allocations 2.73 -> 1.41 s, of 10M churned pairs 1.18 ->
 * 0.69 s (medians of 5, one core). Populated in one call instead of a fault per
 * page, but for the first block's first huge page: a small trace would pay
 * for memory it never uses (half of the analysis fuzzer's time once went
 * to populating and unmapping). The kernel puts a mapping that is a
 * multiple of 2 MiB on a 2 MiB boundary (6.7 on); an older one gives a
 * block two huge pages instead of three.
 */
static struct hs_alloc *alloc_block(int first)
{
	size_t len = sizeof(struct hs_alloc) << HS_ALLOCTAB_SHIFT;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (first) {
		madvise(p + HUGE_PAGE, len - HUGE_PAGE, MADV_HUGEPAGE);
		return (struct hs_alloc *)p;
	}
	madvise(p, len, MADV_HUGEPAGE);
	/* a kernel older than 5.14 says EINVAL, and the pages fault in as they are filled */
	madvise(p, len, MADV_POPULATE_WRITE);
	return (struct hs_alloc *)p;
}

static int index_init(struct index *x, unsigned bits)
{
	x->bits = bits;
	x->down = 32 - bits;
	x->mask = ((size_t)1 << bits) - 1;
	x->used = 0;
	x->slots = alloc_huge(sizeof(*x->slots) << bits);
	if (!x->slots)
		return -ENOMEM;
	for (size_t i = 0; i < (size_t)1 << bits; i++)
		x->slots[i].idx = EMPTY;
	return 0;
}

static __attribute__((noinline)) int index_grow(struct index *x)
{
	struct index nx;
	size_t mask;

	if (x->bits == 32)
		return -EOVERFLOW;
	if (index_init(&nx, x->bits + 1) < 0)
		return -ENOMEM;
	mask = nx.mask;
	for (size_t i = 0; i < (size_t)1 << x->bits; i++) {
		size_t j;
		if (x->slots[i].idx == EMPTY)
			continue;
		j = home(&nx, x->slots[i].hash);
		while (nx.slots[j].idx != EMPTY)
			j = (j + 1) & mask;
		nx.slots[j] = x->slots[i];
	}
	nx.used = x->used;
	free(x->slots);
	*x = nx;
	return 0;
}

/* Slot holding the live block at ptr, or the empty slot where it would go. */
static inline __attribute__((always_inline)) size_t index_probe(const struct index *x, const struct hs_alloctab *t,
							      uint64_t ptr, uint32_t hash)
{
	size_t mask = x->mask, i = home(x, hash);

	ptr &= HS_ALLOC_TIME_MASK;
	while (x->slots[i].idx != EMPTY &&
	       (x->slots[i].hash != hash || (hs_alloctab_at(t, x->slots[i].idx)->f & HS_ALLOC_TIME_MASK) != ptr))
		i = (i + 1) & mask;
	return i;
}

/*
 * index_probe called, for the rarer lookups (an address handed out again):
 * inlined there too, they made sqlite3's pass slower. The flush into the
 * live set and the frees, where most lookups are, inline it.
 */
static __attribute__((noinline)) size_t index_find(const struct index *x, const struct hs_alloctab *t, uint64_t ptr,
						   uint32_t hash)
{
	return index_probe(x, t, ptr, hash);
}

static void index_remove(struct index *x, size_t i)
{
	size_t mask = x->mask, j = i;

	/* backward shift instead of tombstones, so probe runs stay short under churn */
	for (;;) {
		size_t k;
		j = (j + 1) & mask;
		if (x->slots[j].idx == EMPTY)
			break;
		k = home(x, x->slots[j].hash);
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			x->slots[i] = x->slots[j];
			i = j;
		}
	}
	x->slots[i].idx = EMPTY;
	x->used--;
}

static uint32_t thread_index_slow(struct pass *ps, uint32_t tid)
{
	struct hs_alloctab *t = ps->t;

	for (uint32_t i = 0; i < t->ntids; i++)
		if (t->tids[i] == tid) {
			ps->last_tid = tid;
			ps->last_tidx = i;
			ps->have_last = 1;
			return i;
		}
	if (t->ntids == MAX_THREADS)
		return MAX_THREADS - 1;
	if ((t->ntids & (t->ntids - 1)) == 0) {
		t->tids = hs_xrealloc(t->tids, (t->ntids ? t->ntids * 2 : 16) * sizeof(*t->tids));
	}
	t->tids[t->ntids] = tid;
	ps->last_tid = tid;
	ps->last_tidx = t->ntids;
	ps->have_last = 1;
	return t->ntids++;
}

static inline uint32_t thread_index(struct pass *ps, uint32_t tid)
{
	struct tid_memo *m;

	if (ps->have_last && ps->last_tid == tid)
		return ps->last_tidx;
	/* interleaved threads take turns: remember a few */
	m = &ps->tid_memo[tid % TID_MEMO];
	if (m->ok && m->tid == tid) {
		ps->last_tid = tid;
		ps->last_tidx = m->idx;
		return m->idx;
	}
	*m = (struct tid_memo){ .tid = tid, .idx = thread_index_slow(ps, tid), .ok = 1 };
	return m->idx;
}

/* Whole huge pages: a 10M-allocation table otherwise takes 60,000 page faults to fill. */
static int add_block(struct hs_alloctab *t)
{
	if (t->nblocks == t->blocks_cap) {
		size_t cap = t->blocks_cap ? t->blocks_cap * 2 : 64;
		struct hs_alloc **b = realloc(t->blocks, cap * sizeof(*b));
		if (!b)
			return -ENOMEM;
		t->blocks = b;
		t->blocks_cap = cap;
	}
	if (!(t->blocks[t->nblocks] = alloc_block(t->nblocks == 0)))
		return -ENOMEM;
	t->nblocks++;
	return 0;
}

/* The first free slot at or after the cursor, wrapping once; there is one (nfree > 0). */
static uint32_t next_free(struct pass *ps)
{
	uint32_t nwords = (ps->slots + 63) / 64, w = ps->cursor / 64;
	uint64_t bits = ps->free_bits[w] & (~0ull << (ps->cursor % 64));

	while (!bits) {
		w = w + 1 < nwords ? w + 1 : 0;
		bits = ps->free_bits[w];
	}
	return w * 64 + (uint32_t)__builtin_ctzll(bits);
}

/* Streaming: one more block of slots, with their sequence numbers and free bits. */
static __attribute__((noinline)) int slots_grow(struct pass *ps)
{
	struct hs_alloctab *t = ps->t;
	uint64_t cap = (uint64_t)(t->nblocks + 1) << HS_ALLOCTAB_SHIFT;
	uint64_t *nseq, *nfb;
	int rc;

	if ((rc = add_block(t)) < 0)
		return rc;
	if (!(nseq = realloc(ps->seq, cap * sizeof(*nseq))))
		return -ENOMEM;
	ps->seq = nseq;
	if (!(nfb = realloc(ps->free_bits, cap / 8)))
		return -ENOMEM;
	memset(nfb + (cap / 64 - (1u << HS_ALLOCTAB_SHIFT) / 64), 0, (1u << HS_ALLOCTAB_SHIFT) / 8);
	ps->free_bits = nfb;
	return 0;
}

/* Streaming: a free slot, for a block that leaves the pending set. Inlined in each way's pass (pending.h). */
static inline __attribute__((always_inline)) int take_slot(struct pass *ps, uint32_t *idx)
{
	int rc;

	/* reuse while a quarter of the slots is free, so the scan stays short; else grow */
	if (ps->nfree && ps->nfree * 4 >= ps->slots) {
		*idx = next_free(ps);
		ps->free_bits[*idx / 64] &= ~(1ull << (*idx % 64));
		ps->nfree--;
		ps->cursor = *idx + 1 < ps->slots ? *idx + 1 : 0;
	} else {
		if (ps->slots >= UINT32_MAX - 1)
			return -EOVERFLOW;
		if ((ps->slots & ((1u << HS_ALLOCTAB_SHIFT) - 1)) == 0 && (rc = slots_grow(ps)) < 0)
			return rc;
		*idx = ps->slots++;
	}
	return 0;
}

/* The table's next entry (a table, not a sink: streaming, blocks take slots as they leave the pending set). */
static inline __attribute__((always_inline)) int append(struct pass *ps, uint32_t *idx)
{
	struct hs_alloctab *t = ps->t;
	int rc;

	if (t->n >= UINT32_MAX - 1)
		return -EOVERFLOW;
	if ((t->n & ((1u << HS_ALLOCTAB_SHIFT) - 1)) == 0 && (rc = add_block(t)) < 0)
		return rc;
	*idx = (uint32_t)t->n++;
	return 0;
}

static uint64_t clamp_time(uint64_t ns)
{
	return ns < HS_ALLOC_NEVER ? ns : HS_ALLOC_NEVER - 1;
}

#define FATES 256

static void flush_fates(struct pass *ps)
{
	int rc;

	if (ps->nfates && (rc = ps->sink(ps->sink_arg, ps->fates, ps->nfates)) < 0 && !ps->sink_rc)
		ps->sink_rc = rc;
	ps->nfates = 0;
}

/*
 * One allocation's fate, out to the sink (in batches: the sink keeps its
 * state in registers over many), with f in place of a->f. Field by field:
 * a caller that has just stored a->f would otherwise wait for that store,
 * which cannot be forwarded into a load of the whole entry (a twentieth of
 * sqlite3's `leaks`).
 */
static inline void emit_f(struct pass *ps, const struct hs_alloc *a, uint64_t f, uint64_t seq, unsigned flags)
{
	struct hs_fate *o = &ps->fates[ps->nfates];

	o->a.a = a->a;
	o->a.f = f;
	o->a.size_lo = a->size_lo;
	o->a.stack = a->stack;
	o->seq = seq;
	o->peak_rises = ps->t->peak_rises;
	o->flags = flags;
	if (++ps->nfates == FATES)
		flush_fates(ps);
}

static inline void emit(struct pass *ps, const struct hs_alloc *a, uint64_t seq, unsigned flags)
{
	emit_f(ps, a, a->f, seq, flags);
}

static void note_at_peak(struct pass *ps, uint32_t idx)
{
	if (ps->nat_peak == ps->at_peak_cap) {
		uint64_t cap = ps->at_peak_cap ? 2 * ps->at_peak_cap : 1024;
		uint32_t *p = realloc(ps->at_peak, cap * sizeof(*p));
		if (!p) {
			ps->oom = 1;
			return;
		}
		ps->at_peak = p;
		ps->at_peak_cap = cap;
	}
	ps->at_peak[ps->nat_peak++] = idx;
}

/*
 * A block freed at ns (entry a, its sequence number with flags s): its
 * free time and whether it was live at the peak into the entry, out of the
 * heap, and to the sink if there is one.
 */
static inline __attribute__((always_inline)) void retire_entry(struct pass *ps, struct hs_alloc *a, uint64_t s,
							       uint64_t ns)
{
	uint64_t size = hs_alloc_size(a), f = (a->f & ~HS_ALLOC_TIME_MASK) | clamp_time(ns);

	if (SEQ_NUMBER(s) < ps->peak_end)
		f |= HS_ALLOC_AT_PEAK;
	if (ps->t->sample_bytes)
		ps->heap_est -= (double)size * hs_alloctab_weight(ps->t, size);
	else
		ps->heap -= size;
	if (ps->sink)
		emit_f(ps, a, f, SEQ_NUMBER(s), (unsigned)(s >> SEQ_FLAGS));
	a->f = f;
}

/* The block of slot idx was freed at ns: its fate is known, and a sink gets it now. */
static inline __attribute__((always_inline)) void retire(struct pass *ps, uint32_t idx, uint64_t ns)
{
	struct hs_alloc *a = hs_alloctab_at(ps->t, idx);

	if (ps->sink) {
		retire_entry(ps, a, ps->seq[idx], ns);
		ps->free_bits[idx / 64] |= 1ull << (idx % 64);
		ps->nfree++;
		return;
	}
	retire_entry(ps, a, idx, ns);
	if (idx < ps->peak_end)
		note_at_peak(ps, idx);
}

/* Pending block k was freed at ns (settle_address or on_free have let its place go). */
static inline __attribute__((always_inline)) void retire_pending(struct pass *ps, unsigned k, uint64_t ns)
{
	if (ps->sink)
		retire_entry(ps, &ps->pend_ent[k], ps->pend_seq[k], ns);
	else
		retire(ps, ps->pend_idx[k], ns);
}

/* Pending block k's entry: in the table, or, streaming, beside the pending set. */
static inline struct hs_alloc *pending_entry(struct pass *ps, unsigned k)
{
	return ps->sink ? &ps->pend_ent[k] : hs_alloctab_at(ps->t, ps->pend_idx[k]);
}

/* The allocation numbered seq made a new peak: the blocks freed since the last one were not live at this one. */
static void new_peak(struct pass *ps, const struct hs_event *ev, uint64_t seq)
{
	for (uint64_t i = 0; i < ps->nat_peak; i++)
		hs_alloctab_at(ps->t, ps->at_peak[i])->f &= ~HS_ALLOC_AT_PEAK;
	ps->nat_peak = 0;
	ps->peak_end = ps->t->peak_end = seq + 1;
	ps->t->peak_ns = ev->time_ns;
	ps->t->peak_rises++;
}

/* The entry of an ALLOC event of thread index tidx; f: the address while live, the free time, or HS_ALLOC_NEVER */
static inline void entry(struct hs_alloc *a, const struct hs_event *ev, uint32_t tidx, uint64_t f)
{
	a->a = clamp_time(ev->time_ns) | (uint64_t)tidx << 48;
	a->f = f | (ev->size >> 32 & HS_ALLOC_SIZE_HI) << 48;
	a->size_lo = (uint32_t)ev->size;
	a->stack = ev->stack;
}

/* Fills a new table entry (entry()) for allocation number seq and counts it into the heap. */
static inline void fill(struct pass *ps, struct hs_alloc *a, const struct hs_event *ev, uint32_t tidx, uint64_t f,
			uint64_t seq)
{
	struct hs_alloctab *t = ps->t;

	entry(a, ev, tidx, f);
	if (t->sample_bytes) {
		ps->heap_est += (double)ev->size * hs_alloctab_weight(t, ev->size);
		if (ps->heap_est > t->peak_heap) {
			t->peak_heap = ps->heap_est;
			new_peak(ps, ev, seq);
		}
	} else {
		ps->heap += ev->size;
		if (ps->heap > ps->peak) {
			ps->peak = ps->heap;
			t->peak_heap = (double)ps->heap;
			new_peak(ps, ev, seq);
		}
	}
}

/* retire() of a block whose free was never recorded: rare, kept out of the flush's code. */
static __attribute__((noinline, cold)) void retire_replaced(struct pass *ps, uint32_t idx, uint64_t ns)
{
	retire(ps, idx, ns);
}

/* Puts a table entry into the live set; an older live block at its address is settled first (its free was never recorded). */
static int index_put(struct pass *ps, uint64_t ptr, uint32_t idx, uint64_t ns)
{
	struct hs_alloctab *t = ps->t;
	uint32_t hash = hash_of(ptr);
	size_t slot;
	int rc;

	if ((ps->live.used + 1) * 4 > (size_t)3 << ps->live.bits && (rc = index_grow(&ps->live)) < 0)
		return rc;
	slot = index_probe(&ps->live, t, ptr, hash);
	if (ps->live.slots[slot].idx != EMPTY)
		retire_replaced(ps, ps->live.slots[slot].idx, ns);
	else
		ps->live.used++;
	ps->live.slots[slot] = (struct slot){ .idx = idx, .hash = hash };
	return 0;
}

static int pending_flush(struct pass *ps, unsigned k, int nur)
{
	int rc;

	hs_pending_clear(&ps->pend, k, nur);
	if (ps->sink) {
		if ((rc = take_slot(ps, &ps->pend_idx[k])) < 0)
			return rc;
		*hs_alloctab_at(ps->t, ps->pend_idx[k]) = ps->pend_ent[k];
		ps->seq[ps->pend_idx[k]] = ps->pend_seq[k];
	}
	return index_put(ps, ps->pend.ptr[k], ps->pend_idx[k], hs_alloc_time(pending_entry(ps, k)));
}

static int pending_flush_all(struct pass *ps)
{
	int k, rc;

	while ((k = hs_pending_any(&ps->pend)) >= 0)
		if ((rc = pending_flush(ps, (unsigned)k, ps->pend.nursery)) < 0)
			return rc;
	return 0;
}

/*
 * A new block at ptr: whatever is still live at that address ended when the
 * address was handed out again (its free was never recorded).
 */
static inline __attribute__((always_inline)) void settle_address(struct pass *ps, uint64_t ptr, uint64_t ns, const int nur)
{
	int k = nur != DIRECT ? hs_pending_find(&ps->pend, ptr, nur) : -1;

	if (k >= 0) {
		hs_pending_clear(&ps->pend, (unsigned)k, nur);
		retire_pending(ps, (unsigned)k, ns);
	}
	if (ps->live.slots[home(&ps->live, hash_of(ptr))].idx != EMPTY) {
		size_t slot = index_find(&ps->live, ps->t, ptr, hash_of(ptr));
		if (ps->live.slots[slot].idx != EMPTY) {
			uint32_t idx = ps->live.slots[slot].idx;
			/* out of the set first: a sink's slot may be handed out again at once */
			index_remove(&ps->live, slot);
			retire(ps, idx, ns);
		}
	}
}

static inline __attribute__((always_inline)) int on_alloc(struct pass *ps, const struct hs_event *ev, const int nur)
{
	struct hs_alloctab *t = ps->t;
	uint32_t idx, tidx;
	uint64_t old_size = 0;
	unsigned k, link = 0;
	int rc;

	if (is_realloc(ev->fn) && ev->old_ptr) {
		struct hs_alloctab_link ln = { .from = EMPTY, .to = (uint32_t)t->n };
		int found = 0, in_place = ev->old_ptr == ev->ptr;
		int pk = in_place && nur != DIRECT ? hs_pending_find(&ps->pend, ev->ptr, nur) : -1;
		size_t slot = in_place && pk < 0 ? index_find(&ps->live, t, ev->ptr, hash_of(ev->ptr)) : 0;

		/* grown in place: no FREE was written, the block is still live (pending or in the set) */
		/* streaming, a pending block has no table index: only the link's flags are wanted then */
		if (pk >= 0 || (in_place && ps->live.slots[slot].idx != EMPTY)) {
			found = 1;
			ln.from = pk >= 0 ? ps->pend_idx[pk] : ps->live.slots[slot].idx;
			old_size = hs_alloc_size(pk >= 0 ? pending_entry(ps, (unsigned)pk) : hs_alloctab_at(t, ln.from));
		} else {
			for (unsigned j = 0; j < 8; j++)
				if (ps->recent[j].ptr == ev->old_ptr) {
					found = 1;
					ln.from = ps->recent[j].idx;
					old_size = ps->recent[j].size;
					ps->recent[j].ptr = 0;
					break;
				}
		}
		if (found) {
			if (ps->sink)
				link = HS_ALLOC_CONT | (ev->size > old_size ? HS_ALLOC_GROWN : 0);
			else if ((rc = push(&t->links, &t->nlinks, sizeof(ln), &ln)) < 0)
				return rc;
		}
	}
	settle_address(ps, ev->ptr, ev->time_ns, nur);
	tidx = thread_index(ps, ev->tid);
	if (nur == DIRECT) {
		if ((rc = append(ps, &idx)) < 0)
			return rc;
		fill(ps, hs_alloctab_at(t, idx), ev, tidx, ev->ptr & HS_ALLOC_TIME_MASK, idx);
		return index_put(ps, ev->ptr, idx, ev->time_ns);
	}
	k = hs_pending_slot(&ps->pend, tidx, nur);
	if (hs_pending_taken(&ps->pend, k) && (rc = pending_flush(ps, k, nur)) < 0)
		return rc;
	if (ps->sink) {
		ps->pend_seq[k] = t->n | (uint64_t)link << SEQ_FLAGS;
		fill(ps, &ps->pend_ent[k], ev, tidx, ev->ptr & HS_ALLOC_TIME_MASK, t->n++);
	} else {
		if ((rc = append(ps, &idx)) < 0)
			return rc;
		fill(ps, hs_alloctab_at(t, idx), ev, tidx, ev->ptr & HS_ALLOC_TIME_MASK, idx);
		ps->pend_idx[k] = idx;
	}
	hs_pending_set(&ps->pend, k, ev->ptr, nur);
	return 0;
}

/*
 * An allocation its own thread frees as its very next event, at an address
 * not live already: most events of a churning program. The pair goes into
 * the table without entering the live set.
 */
static inline __attribute__((always_inline)) int on_pair(struct pass *ps, const struct hs_event *ev,
							  const struct hs_event *fr)
{
	struct hs_alloc *a, one;
	uint32_t idx;
	int rc;

	if (ps->sink) {
		/* its fate is known already: straight to the sink, no slot */
		fill(ps, &one, ev, thread_index(ps, ev->tid), clamp_time(fr->time_ns), ps->t->n);
		if (ps->t->sample_bytes)
			ps->heap_est -= (double)ev->size * hs_alloctab_weight(ps->t, ev->size);
		else
			ps->heap -= ev->size;
		/* freed at once: live at the peak only if it made it */
		if (ps->t->n < ps->peak_end)
			one.f |= HS_ALLOC_AT_PEAK;
		emit(ps, &one, ps->t->n++, 0);
		return 0;
	}
	if ((rc = append(ps, &idx)) < 0)
		return rc;
	a = hs_alloctab_at(ps->t, idx);
	fill(ps, a, ev, thread_index(ps, ev->tid), clamp_time(fr->time_ns), idx);
	retire(ps, idx, fr->time_ns);
	return 0;
}

static inline __attribute__((always_inline)) int pairs(const struct pass *ps, const struct hs_event *ev,
							 const struct hs_event *fr, const int nur)
{
	return fr->kind == HS_EVENT_FREE && fr->ptr == ev->ptr && fr->tid == ev->tid && fr->fn == HS_FN_FREE &&
	       !is_realloc(ev->fn) && ps->live.slots[home(&ps->live, hash_of(ev->ptr))].idx == EMPTY &&
	       (nur == DIRECT || hs_pending_find(&ps->pend, ev->ptr, nur) < 0);
}

static inline __attribute__((always_inline)) void on_free(struct pass *ps, const struct hs_event *ev, const int nur)
{
	struct hs_alloctab *t = ps->t;
	uint32_t tidx = thread_index(ps, ev->tid), idx;
	int k = nur != DIRECT ? hs_pending_find(&ps->pend, ev->ptr, nur) : -1;
	size_t slot = 0;
	struct hs_alloc *a;

	if (k >= 0) {
		a = pending_entry(ps, (unsigned)k);
		idx = ps->pend_idx[k];
	} else {
		slot = index_probe(&ps->live, t, ev->ptr, hash_of(ev->ptr));
		if (ps->live.slots[slot].idx == EMPTY) {
			t->untracked_frees++;
			return;
		}
		idx = ps->live.slots[slot].idx;
		a = hs_alloctab_at(t, idx);
	}
	/* stamped before the live block was allocated, by another thread: the late free of an older block */
	if (hs_alloc_thread(a) != tidx && hs_alloc_time(a) > ev->time_ns) {
		t->untracked_frees++;
		return;
	}
	if (is_realloc(ev->fn) && ev->ptr) {
		ps->recent[ps->recent_next].ptr = ev->ptr;
		ps->recent[ps->recent_next].size = hs_alloc_size(a);
		ps->recent[ps->recent_next].idx = idx;
		ps->recent_next = (ps->recent_next + 1) & 7;
	}
	if (k >= 0) {
		hs_pending_freed(&ps->pend, (unsigned)k, nur);
		retire_pending(ps, (unsigned)k, ev->time_ns);
	} else {
		index_remove(&ps->live, slot);
		retire(ps, idx, ev->time_ns);
	}
}

/* n more events read: the progress callback about every million */
static void counted(struct hs_alloctab *t, struct hs_reader *r, int n, hs_alloctab_progress progress, void *arg)
{
	if (progress && hs_progress_due(t->events, (uint64_t)n))
		progress(arg, hs_reader_offset(r));
	t->events += (uint64_t)n;
}

/* The events kept aside (rss, markers, how it ended); others are not the table's */
static int on_other(struct hs_alloctab *t, const struct hs_event *ev)
{
	if (ev->kind == HS_EVENT_END) {
		t->clean_exit = 1;
		t->end_reason = (int)ev->flags;
		return 0;
	}
	if (ev->kind == HS_EVENT_SIGNAL) {
		t->signal = (int)ev->flags;
		return 0;
	}
	if (ev->kind == HS_EVENT_RSS) {
		struct hs_alloctab_rss x = { ev->time_ns, ev->rss };
		return push(&t->rss, &t->nrss, sizeof(x), &x);
	}
	if (ev->kind == HS_EVENT_MARKER) {
		struct hs_alloctab_marker m = { ev->time_ns, strndup(ev->label ? ev->label : "", ev->label_len) };
		if (!m.label || push(&t->markers, &t->nmarkers, sizeof(m), &m) < 0) {
			free(m.label);
			return -ENOMEM;
		}
	}
	return 0;
}

/* How far ahead index slots are prefetched: enough misses in flight to hide latency. */
#define AHEAD 16

static inline void prefetch(const struct pass *ps, const struct hs_event *ev)
{
	/* not while the index is at its first size (512 KiB): the second-level cache holds it */
	if (ps->live.bits > INDEX_FIRST_BITS && (ev->kind == HS_EVENT_ALLOC || ev->kind == HS_EVENT_FREE))
		/* asm: GCC drops __builtin_prefetch of this address as an access without effect */
		__asm__ volatile("prefetcht0 %0" : : "m"(ps->live.slots[home(&ps->live, hash_of(ev->ptr))]));
}

/*
 * Half as far ahead, the slot asked for above has come: a FREE whose home
 * slot holds its block has that block's entry (and, streaming, its
 * sequence number) asked for too. Those loads were most of the pass's
 * misses on a live set of millions (python3's leaks: 41% of the time).
 */
static inline void prefetch_entry(const struct pass *ps, const struct hs_event *ev)
{
	if (ps->live.bits > INDEX_FIRST_BITS && ev->kind == HS_EVENT_FREE) {
		uint32_t h = hash_of(ev->ptr);
		const struct slot *sl = &ps->live.slots[home(&ps->live, h)];
		if (sl->idx != EMPTY && sl->hash == h) {
			__builtin_prefetch(hs_alloctab_at(ps->t, sl->idx), 1);
			if (ps->sink)
				__builtin_prefetch(&ps->seq[sl->idx], 1);
		}
	}
}

/* One block of events, with the pending blocks held the way nur (a constant where it is inlined: see pending.h, DIRECT). */
static inline __attribute__((always_inline)) int pass_block(struct pass *ps, const struct hs_event *batch, int n,
							     const int nur)
{
	struct hs_alloctab *t = ps->t;

	for (int i = 0; i < n && i < AHEAD; i++)
		prefetch(ps, &batch[i]);
	for (int i = 0; i < n; i++) {
		const struct hs_event *ev = &batch[i];
		int e = 0;
		/* the events' lines from the decoding thread's core first, then (below) their slots */
		__builtin_prefetch(ev + 2 * AHEAD);
		if (i + AHEAD < n)
			prefetch(ps, &batch[i + AHEAD]);
		if (i + AHEAD / 2 < n)
			prefetch_entry(ps, &batch[i + AHEAD / 2]);
		if (ev->time_ns > t->end_ns)
			t->end_ns = ev->time_ns;
		if (ev->kind == HS_EVENT_ALLOC && i + 1 < n && pairs(ps, ev, ev + 1, nur)) {
			if (ev[1].time_ns > t->end_ns)
				t->end_ns = ev[1].time_ns;
			e = on_pair(ps, ev, ev + 1);
			if (++i + AHEAD < n)
				prefetch(ps, &batch[i + AHEAD]);
			if (i + AHEAD / 2 < n)
				prefetch_entry(ps, &batch[i + AHEAD / 2]);
		} else if (ev->kind == HS_EVENT_ALLOC)
			e = on_alloc(ps, ev, nur);
		else if (ev->kind == HS_EVENT_FREE)
			on_free(ps, ev, nur);
		else
			e = on_other(t, ev);
		if (e < 0)
			return e;
	}
	return 0;
}

static int run(struct pass *ps_, struct hs_reader *r, hs_alloctab_progress progress, void *arg)
{
	struct pass ps = *ps_;
	struct hs_alloctab *t = ps.t;
	const struct hs_event *batch;
	int rc, n;

	memset(t, 0, sizeof(*t));
	hs_pending_init(&ps.pend);
	t->sample_bytes = hs_reader_info(r)->sample_bytes;
	if ((rc = index_init(&ps.live, INDEX_FIRST_BITS)) < 0)
		goto out;
	do {
		int e;
		rc = hs_reader_next_block(r, &batch);
		n = rc > 0 ? rc : 0;
		if (!ps.sink)
			e = pass_block(&ps, batch, n, DIRECT);
		else if ((e = ps.pend.nursery ? pass_block(&ps, batch, n, 1) : pass_block(&ps, batch, n, 0)) == 0 &&
			 hs_pending_stretch(&ps.pend, (uint32_t)n) && (e = pending_flush_all(&ps)) == 0)
			hs_pending_switch(&ps.pend);
		if (e < 0) {
			rc = e;
			goto out;
		}
		if (ps.sink_rc < 0) {
			rc = ps.sink_rc;
			goto out;
		}
		if (ps.oom) {
			rc = -ENOMEM;
			goto out;
		}
		counted(t, r, n, progress, arg);
	} while (rc > 0);
	if (rc == 0)
		rc = pending_flush_all(&ps);
	if (rc == 0)
		for (size_t i = 0; i < (size_t)1 << ps.live.bits; i++)
			if (ps.live.slots[i].idx != EMPTY) {
				uint32_t idx = ps.live.slots[i].idx;
				struct hs_alloc *a = hs_alloctab_at(t, idx);
				a->f = (a->f & ~HS_ALLOC_TIME_MASK) | HS_ALLOC_NEVER;
				if (seq_of(&ps, idx) < ps.peak_end)
					a->f |= HS_ALLOC_AT_PEAK;
				if (ps.sink)
					emit(&ps, a, seq_of(&ps, idx), slot_flags(&ps, idx));
			}
	if (ps.sink) {
		flush_fates(&ps);
		if (rc == 0 && ps.sink_rc < 0)
			rc = ps.sink_rc;
	}
	if (rc == 0 && ps.oom)
		rc = -ENOMEM;
out:
	free(ps.live.slots);
	free(ps.at_peak);
	free(ps.seq);
	free(ps.free_bits);
	free(ps.fates);
	return rc;
}

int hs_alloctab_load(struct hs_alloctab *t, struct hs_reader *r, hs_alloctab_progress progress, void *arg)
{
	struct pass ps = { .t = t };

	return run(&ps, r, progress, arg);
}

int hs_alloctab_stream(struct hs_alloctab *t, struct hs_reader *r, hs_alloctab_sink sink, void *sink_arg,
		       hs_alloctab_progress progress, void *arg)
{
	struct pass ps = { .t = t, .sink = sink, .sink_arg = sink_arg };
	int rc;

	if (!(ps.fates = malloc(FATES * sizeof(*ps.fates))))
		return -ENOMEM;
	rc = run(&ps, r, progress, arg);

	/* the slots are no table: nobody may read them as one */
	for (size_t i = 0; i < t->nblocks; i++)
		munmap(t->blocks[i], sizeof(struct hs_alloc) << HS_ALLOCTAB_SHIFT);
	t->nblocks = 0;
	return rc;
}

/*
 * No pairing, no live set: each ALLOC event goes out as it comes. Memory
 * stays a batch of fates; the reader's decoding is then most of the cost
 * (python3's 37.7M events: a flame graph by bytes took 1.78 s through
 * hs_alloctab_stream, whose pairing it does not need).
 */
int hs_alloctab_scan(struct hs_alloctab *t, struct hs_reader *r, hs_alloctab_sink sink, void *sink_arg,
		     hs_alloctab_progress progress, void *arg)
{
	struct pass ps = { .t = t, .sink = sink, .sink_arg = sink_arg };
	const struct hs_event *batch;
	int rc = 0, n;

	memset(t, 0, sizeof(*t));
	t->sample_bytes = hs_reader_info(r)->sample_bytes;
	if (!(ps.fates = malloc(FATES * sizeof(*ps.fates))))
		return -ENOMEM;
	/* before the first event: else decoding goes on with them (a caller that read some) */
	(void)hs_reader_skip_addresses(r);
	while ((n = hs_reader_next_block(r, &batch)) > 0) {
		for (int i = 0; i < n; i++) {
			const struct hs_event *ev = &batch[i];
			/* the events come from the decoding thread's core: their lines asked for early (5% of a flame graph) */
			__builtin_prefetch(ev + AHEAD);
			if (ev->time_ns > t->end_ns)
				t->end_ns = ev->time_ns;
			if (ev->kind == HS_EVENT_ALLOC) {
				struct hs_alloc a;
				entry(&a, ev, thread_index(&ps, ev->tid), HS_ALLOC_NEVER);
				emit(&ps, &a, t->n++, 0);
			} else if (ev->kind != HS_EVENT_FREE && (rc = on_other(t, ev)) < 0) {
				goto out;
			}
		}
		if ((rc = ps.sink_rc) < 0)
			goto out;
		counted(t, r, n, progress, arg);
	}
	rc = n;
	if (rc == 0) {
		flush_fates(&ps);
		rc = ps.sink_rc;
	}
out:
	free(ps.fates);
	return rc;
}

void hs_alloctab_free(struct hs_alloctab *t)
{
	for (size_t i = 0; i < t->nblocks; i++)
		munmap(t->blocks[i], sizeof(struct hs_alloc) << HS_ALLOCTAB_SHIFT);
	free(t->blocks);
	free(t->tids);
	free(t->links);
	free(t->rss);
	for (uint64_t i = 0; i < t->nmarkers; i++)
		free(t->markers[i].label);
	free(t->markers);
	memset(t, 0, sizeof(*t));
}
