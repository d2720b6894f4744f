/* pending.h - each thread's latest allocation, kept out of the live set until its thread allocates again */
#ifndef HS_ANALYSIS_PENDING_H
#define HS_ANALYSIS_PENDING_H

#include <stdint.h>

/*
 * Most blocks are freed by their own thread before it allocates again, so
 * a pass that holds each thread's latest block aside never puts them in its
 * live set. Slot k belongs to the threads whose index is k modulo
 * HS_PENDING; the pass keeps what it needs of each block in its own array
 * beside this one.
 */
#define HS_PENDING 16

struct hs_pending {
	uint64_t ptr[HS_PENDING];
	uint32_t mask;          /* slots in use */
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

static inline void hs_pending_set(struct hs_pending *p, unsigned k, uint64_t ptr)
{
	p->ptr[k] = ptr;
	p->mask |= 1u << k;
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
