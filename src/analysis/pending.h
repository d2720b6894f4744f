/* pending.h - the latest allocations, kept out of a pass's live set until they have lived a while */
#ifndef HS_ANALYSIS_PENDING_H
#define HS_ANALYSIS_PENDING_H

#include <stdint.h>
#include <string.h>

/*
 * Most blocks are freed soon, and a pass that holds the latest ones aside
 * never puts those in its live set. Only the streaming pass (alloctab.c)
 * still does: there a block that waits here takes no slot of the table,
 * while the table's pass and the report's now gain nothing by it
 * (docs/analysis.md). How soon differs:
 *  - CPython's loops free the block before last as often as the last, and
 *    the others (71%) live on for thousands of allocations;
 *  - sqlite3's (make bench (c)) are freed within 2 allocations of their
 *    thread for 24% of them, within 16 for 88%, within 32 for all but 0.1%.
 * So there are two ways to hold them:
 *  - pairs: each thread's latest two blocks (threads whose index is j
 *    modulo HS_PENDING_PAIRS share slots 2j and 2j + 1), found by a scan of
 *    the slots in use. Cheap, and enough for CPython;
 *  - nursery: the latest HS_PENDING blocks of all threads, in the order
 *    they came, found through a hash of their addresses small enough for
 *    the first-level cache. sqlite3's report took 11% less time, CPython's
 *    8-12% more, for nothing caught.
 * A pass starts with the nursery and counts, over a stretch of events, the
 * frees it caught that pairs would have missed: blocks two or more
 * allocations old. Those are allocations of any thread, so with several
 * threads the count also takes in blocks that pairs would have held, and
 * leans to the nursery. Under one in 16 events, the pass holds pairs for a long
 * stretch, then tries the nursery again. Between stretches the pass moves
 * every pending block into its live set (hs_pending_stretch says when).
 * The pass keeps what it needs of each block in its own array beside this
 * one, by slot.
 */
#define HS_PENDING 64
#define HS_PENDING_PAIRS 16
#define HS_PENDING_INDEX_BITS 10        /* 64 blocks in 1024 places: most probes of an address not here end at once */
#define HS_PENDING_INDEX (1u << HS_PENDING_INDEX_BITS)
#define HS_PENDING_TRIAL (1u << 16)     /* events: the nursery's stretch, after which it is judged */
#define HS_PENDING_PAIRS_RUN (1u << 21) /* events: pairs' stretch, after which the nursery is tried again */

struct hs_pending {
	uint64_t ptr[HS_PENDING];
	uint64_t mask;                          /* slots in use */
	int nursery;                            /* the way blocks are held now (1: nursery, 0: pairs) */
	unsigned head;                          /* nursery: the slot the next block takes */
	uint32_t newer;                         /* pairs: bit j, slot 2j + 1 was set after slot 2j */
	uint32_t events, late;                  /* this stretch: events, and frees pairs would have missed */
	uint8_t index[HS_PENDING_INDEX];        /* nursery: by address, 1 + the slot; 0: empty */
	uint16_t at[HS_PENDING];                /* nursery: where in index each slot is */
	uint16_t home[HS_PENDING];              /* nursery: each slot's hs_pending_home(), not hashed again */
};

_Static_assert(HS_PENDING <= 64 && 2 * HS_PENDING_PAIRS <= HS_PENDING, "slots are bits of mask");
_Static_assert(HS_PENDING_INDEX <= 1u << 16, "places in the index fit at[] and home[]");

/* A pass starts with the nursery. */
static inline void hs_pending_init(struct hs_pending *p)
{
	memset(p, 0, sizeof(*p));
	p->nursery = 1;
}

static inline unsigned hs_pending_home(uint64_t ptr)
{
	return (unsigned)(((ptr >> 4) * 0x9e3779b97f4a7c15ull) >> (64 - HS_PENDING_INDEX_BITS));
}

/*
 * The functions a pass calls for each event take the way (nur, p->nursery)
 * as an argument: a pass that inlines them with a constant has each way's
 * code without the other's tests, which CPython's events (a pass in pairs)
 * would pay for each.
 */

/* The slot holding a live block at ptr, or -1. */
static inline int hs_pending_find(const struct hs_pending *p, uint64_t ptr, int nur)
{
	if (nur) {
		for (unsigned i = hs_pending_home(ptr), s; (s = p->index[i]) != 0; i = (i + 1) & (HS_PENDING_INDEX - 1))
			if (p->ptr[s - 1] == ptr)
				return (int)s - 1;
		return -1;
	}
	for (uint64_t m = p->mask; m; m &= m - 1) {
		unsigned k = (unsigned)__builtin_ctzll(m);
		if (p->ptr[k] == ptr)
			return (int)k;
	}
	return -1;
}

static inline int hs_pending_taken(const struct hs_pending *p, unsigned k)
{
	return (int)(p->mask >> k & 1);
}

/*
 * Where the next block of thread index tidx goes: the nursery's oldest
 * slot, or a free slot of the thread's pair, else the pair's older one.
 * The caller moves a block still there into its live set first.
 */
static inline unsigned hs_pending_slot(const struct hs_pending *p, uint32_t tidx, int nur)
{
	unsigned j = tidx % HS_PENDING_PAIRS, k = 2 * j;

	if (nur)
		return p->head;
	if (!(p->mask >> k & 1))
		return k;
	if (!(p->mask >> (k + 1) & 1))
		return k + 1;
	return k + !(p->newer >> j & 1);
}

/* Slot k (free) takes the block at ptr, where no other pending block is. */
static inline void hs_pending_set(struct hs_pending *p, unsigned k, uint64_t ptr, int nur)
{
	p->ptr[k] = ptr;
	p->mask |= (uint64_t)1 << k;
	if (nur) {
		unsigned h = hs_pending_home(ptr), i = h;
		while (p->index[i])
			i = (i + 1) & (HS_PENDING_INDEX - 1);
		p->index[i] = (uint8_t)(k + 1);
		p->at[k] = (uint16_t)i;
		p->home[k] = (uint16_t)h;
		p->head = (k + 1) % HS_PENDING;
	} else {
		unsigned j = k / 2;
		p->newer = (p->newer & ~(1u << j)) | (k & 1u) << j;
	}
}

/* Slot k (taken) is let go; in the nursery, later members of its probe run shift back so that lookups never stop early. */
static inline void hs_pending_clear(struct hs_pending *p, unsigned k, int nur)
{
	p->mask &= ~((uint64_t)1 << k);
	if (!nur)
		return;
	unsigned i = p->at[k], j;
	for (j = i;;) {
		unsigned h, s;
		j = (j + 1) & (HS_PENDING_INDEX - 1);
		if (!(s = p->index[j]))
			break;
		h = p->home[s - 1];
		/* the member at j may move back to i unless its home lies cyclically in (i, j] */
		if (((j - h) & (HS_PENDING_INDEX - 1)) >= ((j - i) & (HS_PENDING_INDEX - 1))) {
			p->index[i] = (uint8_t)s;
			p->at[s - 1] = (uint16_t)i;
			i = j;
		}
	}
	p->index[i] = 0;
}

/* Slot k's block was freed: let go, and counted when it was two or more allocations (of any thread) old. */
static inline void hs_pending_freed(struct hs_pending *p, unsigned k, int nur)
{
	if (nur)
		p->late += ((p->head + HS_PENDING - 1 - k) % HS_PENDING) >= 2;
	hs_pending_clear(p, k, nur);
}

/*
 * After each block of n events: 1 when the stretch is over and the way
 * should change. The caller then moves every pending block into its live
 * set and calls hs_pending_switch.
 */
static inline int hs_pending_stretch(struct hs_pending *p, uint32_t n)
{
	p->events += n;
	if (p->events < (p->nursery ? HS_PENDING_TRIAL : HS_PENDING_PAIRS_RUN))
		return 0;
	if (p->nursery && p->late >= p->events / 16) {
		/* the nursery pays: another stretch of it */
		p->events = 0;
		p->late = 0;
		return 0;
	}
	return 1;
}

/* The other way, with no block pending (the index is empty then). */
static inline void hs_pending_switch(struct hs_pending *p)
{
	p->nursery = !p->nursery;
	p->head = 0;
	p->newer = 0;
	p->events = 0;
	p->late = 0;
}

/* Some taken slot, or -1 when none is. */
static inline int hs_pending_any(const struct hs_pending *p)
{
	return p->mask ? __builtin_ctzll(p->mask) : -1;
}

#endif
