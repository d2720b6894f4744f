/* keyed.h - records by group key, kept densely: keys are sparse (a backtrace's is a node of the folded trie) */
#ifndef HS_ANALYSIS_KEYED_H
#define HS_ANALYSIS_KEYED_H

#include <stddef.h>
#include <stdint.h>

/*
 * Indexed by key, a million backtraces of depth 20 took 4 GB of leak sites
 * and series: their keys run to the trie's 2 million nodes, rounded up to a
 * power of two. Here a key costs 4 bytes of index, and only the keys met
 * get a record.
 */
struct hs_keyed {
	void *v;                /* n records of size bytes, in the order their keys were met */
	size_t size;
	uint32_t n, cap;
	uint32_t *index;        /* key -> 1 + record index, 0: none yet */
	uint32_t index_cap;
};

void hs_keyed_init(struct hs_keyed *k, size_t size);
/* The record of key, zeroed when new (*fresh then 1); NULL when out of memory. */
void *hs_keyed_get(struct hs_keyed *k, uint32_t key, int *fresh);
/* The record index of key, or UINT32_MAX when it has none. */
static inline uint32_t hs_keyed_find(const struct hs_keyed *k, uint32_t key)
{
	return key < k->index_cap && k->index[key] ? k->index[key] - 1 : UINT32_MAX;
}
/* hs_keyed_get for a key met before, without a call (hot loops); else the same. */
static inline void *hs_keyed_at(struct hs_keyed *k, uint32_t key, int *fresh)
{
	uint32_t i = hs_keyed_find(k, key);

	if (i == UINT32_MAX)
		return hs_keyed_get(k, key, fresh);
	*fresh = 0;
	return (char *)k->v + (size_t)i * k->size;
}

/* The records, taken over by the caller (free()); the index goes. */
void *hs_keyed_take(struct hs_keyed *k, uint32_t *n);
void hs_keyed_free(struct hs_keyed *k);

#endif
