/* names.c - a table of distinct strings with dense ids, kept in blocks rather than one allocation each */
#include "names.h"
#include "../common/strhash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define EMPTY UINT32_MAX
#define BLOCK_BYTES 65536

struct hs_names_block {
	struct hs_names_block *next;
	char data[];
};

/* Room for one more id with the map at most half full. */
static int grow_map(struct hs_names *t)
{
	unsigned bits = t->bits ? t->bits : 10;
	struct hs_names_slot *m;
	size_t cap, mask;

	while (((size_t)t->n + 1) * 2 > (size_t)1 << bits)
		bits++;
	if (t->map && bits == t->bits)
		return 0;
	cap = (size_t)1 << bits;
	mask = cap - 1;
	if (!(m = malloc(cap * sizeof(*m))))
		return -ENOMEM;
	memset(m, 0xff, cap * sizeof(*m));
	for (size_t i = 0; t->map && i < (size_t)1 << t->bits; i++) {
		size_t j;

		if (t->map[i].id == EMPTY)
			continue;
		for (j = t->map[i].hash & mask; m[j].id != EMPTY; j = (j + 1) & mask)
			;
		m[j] = t->map[i];
	}
	free(t->map);
	t->map = m;
	t->bits = bits;
	return 0;
}

/* A copy of s (len bytes and its NUL) in the blocks, or NULL. */
static char *keep(struct hs_names *t, const char *s, size_t len)
{
	char *p;

	if (len + 1 > t->room - t->used || !t->blocks) {
		size_t room = len + 1 > BLOCK_BYTES ? len + 1 : BLOCK_BYTES;
		struct hs_names_block *b = malloc(sizeof(*b) + room);

		if (!b)
			return NULL;
		b->next = t->blocks;
		t->blocks = b;
		t->used = 0;
		t->room = room;
	}
	p = t->blocks->data + t->used;
	memcpy(p, s, len + 1);
	t->used += len + 1;
	return p;
}

int hs_names_intern(struct hs_names *t, const char *s, uint32_t *id)
{
	uint32_t h = hs_strhash(s);
	size_t mask, j;
	char *copy;

	if (grow_map(t) < 0)
		return -ENOMEM;
	mask = ((size_t)1 << t->bits) - 1;
	for (j = h & mask; t->map[j].id != EMPTY; j = (j + 1) & mask)
		if (t->map[j].hash == h && !strcmp(t->of[t->map[j].id], s)) {
			*id = t->map[j].id;
			return 0;
		}
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;
		char **of = realloc(t->of, cap * sizeof(*of));

		if (t->cap >= EMPTY / 2 || !of) {
			free(of);
			return -ENOMEM;
		}
		t->of = of;
		t->cap = cap;
	}
	if (!(copy = keep(t, s, strlen(s))))
		return -ENOMEM;
	t->of[t->n] = copy;
	t->map[j] = (struct hs_names_slot){ .id = t->n, .hash = h };
	*id = t->n++;
	return 0;
}

void hs_names_free(struct hs_names *t)
{
	while (t->blocks) {
		struct hs_names_block *b = t->blocks;

		t->blocks = b->next;
		free(b);
	}
	free(t->of);
	free(t->map);
	memset(t, 0, sizeof(*t));
}
