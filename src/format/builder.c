/* builder.c - one chunk's streams: delta and prediction encoding of events, then one zstd frame */
#define _DEFAULT_SOURCE
#include "builder.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "../common/pages.h"
#include "../common/varint.h"
#include "records.h"

/* A stream never holds more than this; the chunk is flushed well before (HS_CHUNK_MAX_RAW in all). */
#define STREAM_CAP (HS_CHUNK_MAX_RAW / 2)
#define HEAD_MAX (1 + HS_STREAM_COUNT * HS_VARINT_MAX)
#define NO_TID UINT64_MAX           /* no thread id is (they are 32 bits) */
#define PAIR_BITS 16
#define PAIR_SLOTS (1u << PAIR_BITS)   /* the pairs' hash, at most half full */
_Static_assert(2 * HS_PAIRS_MAX <= PAIR_SLOTS, "the pairs' hash keeps empty slots");

/* A (size, stack) pair the chunk has seen; the slots live in the builder's mapping */
struct pair_slot {
	uint64_t size;
	uint32_t stack;
	uint32_t place;             /* in the chunk's table, from 1; 0: an empty slot */
};

struct hs_builder {
	uint8_t *s[HS_STREAM_COUNT];
	size_t n[HS_STREAM_COUNT];
	uint8_t *raw;               /* assembled payload */
	size_t map_size;
	uint32_t resolution;
	uint64_t last_q;            /* delta state of the chunk */
	int runs;                   /* times as runs (5.0), else a delta per event */
	int top;                    /* ALLOC_TOP (6.0) */
	int run_open;               /* a run's delta and length not written yet */
	int64_t run_dt;
	uint64_t run_more;          /* events after the run's first, at its time */
	uint64_t q_lo, q_unit;      /* the times in ns [q_lo, q_lo + resolution) are time unit q_unit */
	uint64_t last_tid;          /* NO_TID: none yet in the chunk */
	struct hs_predict *pr;      /* last_tid's predictions; NULL: look them up (the thread changed) */
	uint32_t chunk_no;
	int pairs;                  /* sizes and stacks as pairs (7.0) */
	uint32_t npairs;            /* the chunk's table of pairs */
	struct pair_slot *pslot;    /* PAIR_SLOTS, by hash */
	uint32_t *pused;            /* the slots of the table's pairs, in order */
	struct hs_predict predict[HS_PREDICT_SLOTS];
};

static void *map(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void reset(struct hs_builder *b)
{
	memset(b->n, 0, sizeof(b->n));
	for (uint32_t i = 0; i < b->npairs; i++)
		b->pslot[b->pused[i]].place = 0;
	b->npairs = 0;
	b->last_q = 0;
	b->run_open = 0;
	b->q_lo = b->q_unit = 0;
	b->last_tid = NO_TID;
	b->pr = NULL;
	b->chunk_no++;
}

int hs_builder_new(struct hs_builder **out, uint32_t resolution)
{
	size_t raw = (HS_CHUNK_MAX_RAW + HEAD_MAX + 63) & ~(size_t)63;
	size_t total = HS_STREAM_COUNT * (size_t)STREAM_CAP + raw + PAIR_SLOTS * sizeof(struct pair_slot) +
		       HS_PAIRS_MAX * sizeof(uint32_t);
	struct hs_builder *b = map(sizeof(*b));
	uint8_t *mem;

	if (!b)
		return -ENOMEM;
	mem = map(total);
	if (!mem) {
		munmap(b, sizeof(*b));
		return -ENOMEM;
	}
	/*
	 * Scratch space, rewritten for every chunk, and the predictions, which
	 * every event updates: a forked child gets them zeroed rather than
	 * shared, so that the parent's next chunks do not copy each page first
	 * (a traced program that forks often: 6 pages of predictions a fork).
	 * A child that traces makes a builder of its own; the fields before
	 * the predictions (the buffers' place) stay, for it to unmap them.
	 */
	hs_wipe_on_fork(mem, total);
	hs_wipe_on_fork(b->predict, sizeof(b->predict));
	for (int i = 0; i < HS_STREAM_COUNT; i++)
		b->s[i] = mem + (size_t)i * STREAM_CAP;
	b->raw = mem + (size_t)HS_STREAM_COUNT * STREAM_CAP;
	b->pslot = (struct pair_slot *)(void *)(b->raw + raw);
	b->pused = (uint32_t *)(void *)(b->pslot + PAIR_SLOTS);
	b->map_size = total;
	b->resolution = resolution ? resolution : 1;
	b->runs = 1;
	b->top = 1;
	b->pairs = 1;
	reset(b);
	*out = b;
	return 0;
}

void hs_builder_free(struct hs_builder *b)
{
	if (!b)
		return;
	munmap(b->s[0], b->map_size);
	munmap(b, sizeof(*b));
}

static inline void put(struct hs_builder *b, int s, uint64_t v)
{
	b->n[s] = (size_t)(hs_varint_put(b->s[s] + b->n[s], v) - b->s[s]);
}

static inline void put_s(struct hs_builder *b, int s, int64_t v)
{
	put(b, s, hs_zigzag(v));
}

static inline void put_type(struct hs_builder *b, uint8_t t)
{
	b->s[HS_STREAM_TYPE][b->n[HS_STREAM_TYPE]++] = t;
}

void hs_builder_set_major(struct hs_builder *b, unsigned major)
{
	b->runs = major >= HS_VERSION_TIME_RUNS;
	b->top = major >= HS_VERSION_TOP;
	b->pairs = major >= HS_VERSION_PAIRS;
}

/*
 * Most events share the time unit of the one before (threads' events take
 * one clock reading for up to 32): a run writes nothing per event. A delta
 * per event, mostly 0, was a quarter of a CPython trace after compression
 * and 37 MB of its raw chunks. The delta's low bit says whether a length
 * follows: at a resolution of 1 ns, where runs are mostly of one event,
 * a length for each made sqlite3's trace 13% larger.
 */
static void put_run(struct hs_builder *b)
{
	put(b, HS_STREAM_TIME, hs_zigzag(b->run_dt) << 1 | (b->run_more != 0));
	if (b->run_more)
		put(b, HS_STREAM_TIME, b->run_more);
}

static inline void close_run(struct hs_builder *b)
{
	if (b->run_open) {
		put_run(b);
		b->run_open = 0;
	}
}

static inline void put_time(struct hs_builder *b, int64_t dt)
{
	/* the usual event first: a run is never open without runs */
	if (dt == 0 && b->run_open) {
		b->run_more++;
		return;
	}
	if (!b->runs) {
		put_s(b, HS_STREAM_TIME, dt);
		return;
	}
	close_run(b);
	b->run_open = 1;
	b->run_dt = dt;
	b->run_more = 0;
}

size_t hs_builder_size(const struct hs_builder *b)
{
	size_t n = 0;

	for (int i = 0; i < HS_STREAM_COUNT; i++)
		n += b->n[i];
	return n;
}

int hs_builder_fits(const struct hs_builder *b, size_t len)
{
	for (int i = 0; i < HS_STREAM_COUNT; i++)
		if (b->n[i] + len + 64 > STREAM_CAP)
			return 0;
	return hs_builder_size(b) + len + 64 + HEAD_MAX <= HS_CHUNK_MAX_RAW;
}

/* The current thread's predictions: within its run no other thread can take its slot, so looked up once a run. */
static inline struct hs_predict *thread_predict(struct hs_builder *b, uint32_t tid)
{
	if (!b->pr)
		b->pr = hs_predict_for(b->predict, tid, b->chunk_no);
	return b->pr;
}

/* The pair's place in the chunk's table, from 1; 0: new to the chunk, and then added while the table has room. */
static inline uint32_t pair_place(struct hs_builder *b, uint64_t size, uint32_t stack)
{
	size_t i = (size_t)(((size ^ (uint64_t)stack << 32) * 0x9e3779b97f4a7c15ull) >> (64 - PAIR_BITS));
	struct pair_slot *p;

	for (;; i = (i + 1) & (PAIR_SLOTS - 1)) {
		p = &b->pslot[i];
		if (!p->place)
			break;
		if (p->size == size && p->stack == stack)
			return p->place;
	}
	if (b->npairs < HS_PAIRS_MAX) {
		p->size = size;
		p->stack = stack;
		p->place = ++b->npairs;
		b->pused[b->npairs - 1] = (uint32_t)i;
	}
	return 0;
}

/* An allocation's size and stack: as a pair (HS_PAIRS_MAX), or each in its stream as before 7.0. */
static inline void put_site(struct hs_builder *b, uint64_t size, uint32_t stack)
{
	if (b->pairs) {
		uint32_t k = pair_place(b, size, stack);

		put(b, HS_STREAM_STACK, k);
		if (k)
			return;
	}
	put(b, HS_STREAM_SIZE, size);
	put(b, HS_STREAM_STACK, stack);
}

/* The records of mappings and the break: 0, or -1 for a kind that has none. */
static int put_other(struct hs_builder *b, const struct hs_event *ev)
{
	switch (ev->kind) {
	case HS_EVENT_MMAP:
		put_type(b, HS_REC_MMAP);
		put(b, HS_STREAM_MISC, ev->addr);
		put(b, HS_STREAM_MISC, ev->len);
		put(b, HS_STREAM_MISC, ev->prot);
		put(b, HS_STREAM_MISC, ev->flags);
		put(b, HS_STREAM_STACK, ev->stack);
		break;
	case HS_EVENT_MUNMAP:
		put_type(b, HS_REC_MUNMAP);
		put(b, HS_STREAM_MISC, ev->addr);
		put(b, HS_STREAM_MISC, ev->len);
		break;
	case HS_EVENT_MREMAP:
		put_type(b, HS_REC_MREMAP);
		put(b, HS_STREAM_MISC, ev->addr);
		put(b, HS_STREAM_MISC, ev->len);
		put(b, HS_STREAM_MISC, ev->new_addr);
		put(b, HS_STREAM_MISC, ev->new_len);
		put(b, HS_STREAM_STACK, ev->stack);
		break;
	case HS_EVENT_BRK:
		put_type(b, ev->fn == HS_FN_SBRK ? HS_REC_SBRK : HS_REC_BRK);
		put(b, HS_STREAM_MISC, ev->addr);
		put(b, HS_STREAM_MISC, ev->new_addr);
		put(b, HS_STREAM_STACK, ev->stack);
		break;
	default:
		return -1;
	}
	return 0;
}

void hs_builder_event(struct hs_builder *b, const struct hs_event *ev)
{
	uint64_t q;
	uint64_t predicted;
	unsigned cls;
	struct hs_predict *pr;

	/* most events fall in the unit of the one before: a 64-bit division is dear on the writer's hot path */
	if (ev->time_ns - b->q_lo < b->resolution) {
		q = b->q_unit;
	} else {
		q = ev->time_ns / b->resolution;
		b->q_unit = q;
		b->q_lo = q * b->resolution;
	}
	if (ev->tid != b->last_tid) {
		put_type(b, HS_REC_THREAD);
		put(b, HS_STREAM_MISC, ev->tid);
		b->last_tid = ev->tid;
		b->pr = NULL;
	}
	/* allocations and frees before the switch, which costs them a jump through a table */
	if (ev->kind == HS_EVENT_ALLOC) {
		pr = thread_predict(b, ev->tid);
		cls = hs_size_class(ev->size);
		predicted = hs_predict_alloc(pr, cls, 1);
		/* not for realloc: its old address follows in ptr anyway, and the folded type made (c) larger */
		if (ev->ptr == predicted && ev->fn != HS_FN_REALLOC && ev->fn != HS_FN_REALLOCARRAY) {
			put_type(b, (uint8_t)(HS_REC_ALLOC_AT + ev->fn));
		} else {
			if (ev->ptr == pr->top && b->top && ev->fn != HS_FN_REALLOC && ev->fn != HS_FN_REALLOCARRAY) {
				put_type(b, (uint8_t)(HS_REC_ALLOC_TOP + ev->fn));
			} else {
				put_type(b, (uint8_t)(HS_REC_ALLOC + ev->fn));
				put_s(b, HS_STREAM_PTR, (int64_t)(ev->ptr - predicted));
			}
			hs_predict_top(pr, ev->ptr, ev->size);
		}
		put_site(b, ev->size, ev->stack);
		if (ev->fn == HS_FN_REALLOC || ev->fn == HS_FN_REALLOCARRAY)
			put(b, HS_STREAM_PTR, hs_realloc_old_code(ev->old_ptr, ev->ptr, pr->last));
		pr->cls[cls] = ev->ptr;
		pr->last = ev->ptr;
		hs_recent_push(pr, ev->ptr, cls);
	} else if (ev->kind == HS_EVENT_FREE) {
		int i;
		pr = thread_predict(b, ev->tid);
		i = hs_recent_find(pr, ev->ptr);
		if (i >= 0) {
			put_type(b, (uint8_t)hs_free_recent_type(ev->fn, (unsigned)i));
			hs_recent_take(pr, (uint32_t)i, 1);
		} else {
			put_type(b, ev->fn == HS_FN_REALLOC ? HS_REC_FREE_REALLOC :
				    ev->fn == HS_FN_REALLOCARRAY ? HS_REC_FREE_REALLOCARRAY : HS_REC_FREE);
			put_s(b, HS_STREAM_PTR, (int64_t)(ev->ptr - pr->last));
		}
		pr->last = ev->ptr;
	} else if (put_other(b, ev) < 0) {
		return;
	}
	/* late events (see docs/FORMAT.md) make the delta negative */
	put_time(b, (int64_t)(q - b->last_q));
	b->last_q = q;
}

int hs_builder_record(struct hs_builder *b, const uint8_t *rec, size_t len)
{
	if (len < 1 || !hs_builder_fits(b, len))
		return -E2BIG;
	put_type(b, rec[0]);
	memcpy(b->s[HS_STREAM_MISC] + b->n[HS_STREAM_MISC], rec + 1, len - 1);
	b->n[HS_STREAM_MISC] += len - 1;
	return 0;
}

void hs_builder_clear(struct hs_builder *b)
{
	reset(b);
}

int hs_builder_flush(struct hs_builder *b, struct hs_encoder *enc, const void **chunk, size_t *chunk_len)
{
	uint8_t *p = b->raw;
	size_t cuts[HS_STREAM_COUNT - 1];
	int rc;

	close_run(b);
	p = hs_varint_put(p, HS_STREAM_COUNT);
	for (int i = 0; i < HS_STREAM_COUNT; i++)
		p = hs_varint_put(p, b->n[i]);
	for (int i = 0; i < HS_STREAM_COUNT; i++) {
		memcpy(p, b->s[i], b->n[i]);
		p += b->n[i];
		if (i < HS_STREAM_COUNT - 1)
			cuts[i] = (size_t)(p - b->raw);
	}
	rc = hs_encoder_chunk_parts(enc, b->raw, (size_t)(p - b->raw), cuts, HS_STREAM_COUNT - 1, chunk, chunk_len);
	reset(b);
	return rc;
}
