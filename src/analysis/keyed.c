/* keyed.c - records by group key, kept densely */
#include "keyed.h"

#include <stdlib.h>
#include <string.h>

void hs_keyed_init(struct hs_keyed *k, size_t size)
{
	memset(k, 0, sizeof(*k));
	k->size = size;
}

void *hs_keyed_get(struct hs_keyed *k, uint32_t key, int *fresh)
{
	*fresh = 0;
	if (key >= k->index_cap) {
		uint32_t cap = k->index_cap ? k->index_cap : 1024;
		uint32_t *n;
		while (cap <= key)
			cap *= 2;
		if (!(n = realloc(k->index, (size_t)cap * sizeof(*n))))
			return NULL;
		memset(n + k->index_cap, 0, (size_t)(cap - k->index_cap) * sizeof(*n));
		k->index = n;
		k->index_cap = cap;
	}
	if (!k->index[key]) {
		if (k->n == k->cap) {
			uint32_t cap = k->cap ? 2 * k->cap : 256;
			void *v = realloc(k->v, (size_t)cap * k->size);
			if (!v)
				return NULL;
			k->v = v;
			k->cap = cap;
		}
		memset((char *)k->v + (size_t)k->n * k->size, 0, k->size);
		k->index[key] = ++k->n;
		*fresh = 1;
	}
	return (char *)k->v + (size_t)(k->index[key] - 1) * k->size;
}

void *hs_keyed_take(struct hs_keyed *k, uint32_t *n)
{
	void *v = k->v;

	*n = k->n;
	k->v = NULL;
	k->n = k->cap = 0;
	hs_keyed_free(k);
	return v;
}

void hs_keyed_free(struct hs_keyed *k)
{
	free(k->v);
	free(k->index);
	k->v = NULL;
	k->index = NULL;
	k->n = k->cap = k->index_cap = 0;
}
