/* live.h - the set of live blocks keyed by address, as analyses replay a trace */
#ifndef HS_ANALYSIS_LIVE_H
#define HS_ANALYSIS_LIVE_H

#include <stddef.h>
#include <stdint.h>

struct hs_live_block {
	uint64_t ptr;       /* 0: empty slot */
	uint64_t size;
	uint64_t time_ns;
	uint32_t stack;
	uint32_t tid;
};

struct hs_live {
	struct hs_live_block *slots;
	size_t cap, used;
	unsigned shift;     /* 64 - log2(cap) */
};

/* Fibonacci hashing: the product's top bits mix every bit of the address */
static inline size_t hs_live_slot(const struct hs_live *l, uint64_t ptr)
{
	return (size_t)((ptr * 0x9e3779b97f4a7c15ull) >> l->shift);
}

/*
 * The table is far larger than the caches: callers that know the next
 * addresses prefetch their slots, so the misses overlap instead of queueing.
 */
static inline void hs_live_prefetch(const struct hs_live *l, uint64_t ptr)
{
	/* asm: GCC drops __builtin_prefetch here as an access without effect */
	__asm__ volatile("prefetcht0 %0" : : "m"(l->slots[hs_live_slot(l, ptr)]));
}

void hs_live_init(struct hs_live *l);
void hs_live_free(struct hs_live *l);
struct hs_live_block *hs_live_find(struct hs_live *l, uint64_t ptr);
/* Inserts (or returns the existing block at that address, for the caller to settle). */
struct hs_live_block *hs_live_put(struct hs_live *l, uint64_t ptr, int *existed);
void hs_live_remove(struct hs_live *l, struct hs_live_block *b);

#define hs_live_foreach(l, b) \
	for (struct hs_live_block *b = (l)->slots; b < (l)->slots + (l)->cap; b++) \
		if (b->ptr)

#endif
