/* pending.h - each thread's latest two allocations, kept out of the live set until its thread allocates twice more */
#ifndef HS_ANALYSIS_PENDING_H
#define HS_ANALYSIS_PENDING_H

#include <stdint.h>

/*
 * Most blocks are freed by their own thread before it allocates twice
 * more, so a pass that holds each thread's latest two blocks aside never
 * puts them in its live set. CPython's loops free the one before last as
 * often as the last: with one block held, half its frees of recent blocks
 * went through the live set. Threads whose index is j modulo HS_PENDING_PAIRS
 * share slots 2j and 2j + 1; the pass keeps what it needs of each block in
 * its own array beside this one.
 */
#define HS_PENDING_PAIRS 16
#define HS_PENDING (2 * HS_PENDING_PAIRS)

struct hs_pending {
	uint64_t ptr[HS_PENDING];
	uint32_t mask;          /* slots in use */
	uint32_t newer;         /* bit j: slot 2j + 1 was set after slot 2j */
};

/* The slot holding a live block at ptr, or -1. */
static inline int hs_pending_find(const struct hs_pending *p, uint64_t ptr)
{
	for (uint32_t m = p->mask; m; m &= m - 1) {
		unsigned k = (unsigned)__builtin_ctz(m);
		if (p->ptr[k] == ptr)
			return (int)k;
	}
	return -1;
}

static inline int hs_pending_taken(const struct hs_pending *p, unsigned k)
{
	return (int)(p->mask >> k & 1);
}

/* Where the next block of thread index tidx goes: a free slot of its pair, else the older (for the caller to flush first). */
static inline unsigned hs_pending_slot(const struct hs_pending *p, uint32_t tidx)
{
	unsigned j = tidx % HS_PENDING_PAIRS, k = 2 * j;

	if (!(p->mask >> k & 1))
		return k;
	if (!(p->mask >> (k + 1) & 1))
		return k + 1;
	return k + !(p->newer >> j & 1);
}

static inline void hs_pending_set(struct hs_pending *p, unsigned k, uint64_t ptr)
{
	unsigned j = k / 2;

	p->ptr[k] = ptr;
	p->mask |= 1u << k;
	p->newer = (p->newer & ~(1u << j)) | (k & 1u) << j;
}

static inline void hs_pending_clear(struct hs_pending *p, unsigned k)
{
	p->mask &= ~(1u << k);
}

/* Some taken slot, or -1 when none is. */
static inline int hs_pending_any(const struct hs_pending *p)
{
	return p->mask ? __builtin_ctz(p->mask) : -1;
}

#endif
