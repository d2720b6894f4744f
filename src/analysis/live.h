/* live.h - the set of live blocks keyed by address, as analyses replay a trace */
#ifndef HS_ANALYSIS_LIVE_H
#define HS_ANALYSIS_LIVE_H

#include <stddef.h>
#include <stdint.h>

/*
 * 24 bytes a block: the table of a large live set is most of an analysis'
 * memory and all of its cache misses. Sizes of 4 GiB and more, rare, are
 * kept aside by address.
 */
#define HS_LIVE_BIG UINT32_MAX
#define HS_LIVE_TIME_MASK ((1ull << 48) - 1)

struct hs_live_block {
	uint64_t ptr;       /* 0: empty slot */
	uint64_t when;      /* allocation time in ns in the low 48 bits (saturating: 78 hours), thread index above */
	uint32_t size;      /* HS_LIVE_BIG: see hs_live_size */
	uint32_t stack;
};

#define HS_LIVE_FIRST_SLOTS (1u << 16)   /* a new table's size: 1.5 MiB */

struct hs_live {
	struct hs_live_block *slots;
	size_t cap, used;
	size_t mask;        /* cap - 1 */
	unsigned shift;     /* 64 - log2(cap) */
	struct { uint64_t ptr, size; } *big;   /* sizes of live blocks of 4 GiB or more */
	size_t nbig, big_cap;
};

/*
 * A block's home: its page's place, scattered by Fibonacci hashing, plus
 * its offset in the page in 16-byte steps. A program's consecutive
 * allocations are mostly neighbours in one page, so their slots share
 * lines and pages of the table instead of each missing the cache (a fifth
 * less time replaying CPython); page-aligned blocks still scatter.
 */
static inline size_t hs_live_slot(const struct hs_live *l, uint64_t ptr)
{
	size_t page = (size_t)(((ptr >> 12) * 0x9e3779b97f4a7c15ull) >> l->shift);

	return (page + ((ptr >> 4) & 0xff)) & l->mask;
}

/*
 * Once the table is far larger than the caches, callers that know the next
 * addresses prefetch their slots, so the misses overlap instead of
 * queueing. At its first size the second-level cache holds it, and the
 * prefetches were a tenth of a churning replay's time for nothing.
 */
static inline void hs_live_prefetch(const struct hs_live *l, uint64_t ptr)
{
	if (l->cap <= HS_LIVE_FIRST_SLOTS)
		return;
	/* asm: GCC drops __builtin_prefetch here as an access without effect */
	__asm__ volatile("prefetcht0 %0" : : "m"(l->slots[hs_live_slot(l, ptr)]));
}

static inline uint64_t hs_live_time(const struct hs_live_block *b)
{
	return b->when & HS_LIVE_TIME_MASK;
}

/* Thread index (the caller's numbering of threads, 16 bits: later ones share the last). */
static inline uint32_t hs_live_thread(const struct hs_live_block *b)
{
	return (uint32_t)(b->when >> 48);
}

void hs_live_note_big(struct hs_live *l, struct hs_live_block *b, uint64_t size);
uint64_t hs_live_big_size(const struct hs_live *l, const struct hs_live_block *b);
void hs_live_forget_big(struct hs_live *l, const struct hs_live_block *b);

/* The block's payload; b->ptr must be set. A block of 4 GiB or more is noted aside until hs_live_forget. */
static inline void hs_live_set(struct hs_live *l, struct hs_live_block *b, uint64_t size, uint64_t time_ns,
			       uint32_t thread, uint32_t stack)
{
	b->when = (time_ns < HS_LIVE_TIME_MASK ? time_ns : HS_LIVE_TIME_MASK) |
		  (uint64_t)(thread < 0xffff ? thread : 0xffff) << 48;
	b->stack = stack;
	b->size = (uint32_t)size;
	if (size >= HS_LIVE_BIG)
		hs_live_note_big(l, b, size);
}

static inline uint64_t hs_live_size(const struct hs_live *l, const struct hs_live_block *b)
{
	return b->size != HS_LIVE_BIG ? b->size : hs_live_big_size(l, b);
}

/* Drops what hs_live_set noted aside for a block that ends outside the table (hs_live_remove does it for those in it). */
static inline void hs_live_forget(struct hs_live *l, const struct hs_live_block *b)
{
	if (b->size == HS_LIVE_BIG)
		hs_live_forget_big(l, b);
}

void hs_live_init(struct hs_live *l);
void hs_live_free(struct hs_live *l);
/* Twice the slots: rare, and out of line, which keeps the inlined insertion small. */
void hs_live_grow(struct hs_live *l);

/*
 * Open addressing with linear probing and backward-shift deletion (no
 * tombstones). The operations are inline: each is a few instructions and
 * a probe, and as calls (six registers saved each, for the growth inlined
 * into the insertion) python3's report took 4.7% more instructions.
 */
static inline struct hs_live_block *hs_live_find(struct hs_live *l, uint64_t ptr)
{
	size_t i = hs_live_slot(l, ptr);

	while (l->slots[i].ptr) {
		if (l->slots[i].ptr == ptr)
			return &l->slots[i];
		i = (i + 1) & l->mask;
	}
	return NULL;
}

/* Inserts (or returns the existing block at that address, for the caller to settle). */
static inline struct hs_live_block *hs_live_put(struct hs_live *l, uint64_t ptr, int *existed)
{
	size_t i;

	if ((l->used + 1) * 2 > l->cap)
		hs_live_grow(l);
	i = hs_live_slot(l, ptr);
	while (l->slots[i].ptr) {
		if (l->slots[i].ptr == ptr) {
			*existed = 1;
			return &l->slots[i];
		}
		i = (i + 1) & l->mask;
	}
	*existed = 0;
	l->used++;
	l->slots[i] = (struct hs_live_block){ .ptr = ptr };
	return &l->slots[i];
}

static inline void hs_live_remove(struct hs_live *l, struct hs_live_block *b)
{
	size_t i = (size_t)(b - l->slots), j = i;

	hs_live_forget(l, b);
	/* shift later members of the probe run back so lookups never stop early (no tombstones) */
	for (;;) {
		size_t home;
		j = (j + 1) & l->mask;
		if (!l->slots[j].ptr)
			break;
		home = hs_live_slot(l, l->slots[j].ptr);
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			l->slots[i] = l->slots[j];
			i = j;
		}
	}
	l->slots[i].ptr = 0;
	l->used--;
}

#define hs_live_foreach(l, b) \
	for (struct hs_live_block *b = (l)->slots; b < (l)->slots + (l)->cap; b++) \
		if (b->ptr)

#endif
