/* live.c - the live set's table (live.h): its memory, its growth, and the sizes of 4 GiB and more */
#define _DEFAULT_SOURCE
#include "live.h"
#include "oom.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define slot_of hs_live_slot

/*
 * Lookups land anywhere in a table of tens of MiB: with 4 KiB pages nearly
 * every one also misses the TLB. Huge pages (where the kernel gives them)
 * take that miss away.
 */
static struct hs_live_block *alloc_slots(size_t cap)
{
	size_t len = cap * sizeof(struct hs_live_block);
	void *s = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (s == MAP_FAILED)
		hs_oom(len);
	if (len >= (2u << 20))
		madvise(s, len, MADV_HUGEPAGE);
	/*
	 * Lookups soon land on every page (a grown table's rehash writes them
	 * all): one call maps them, where each page cost a fault, 11 us each
	 * in a KVM guest: 383 of a report of sqlite3's trace, 776 of CPython's.
	 * A kernel older than 5.14 says EINVAL, and the faults come as before.
	 */
	madvise(s, len, MADV_POPULATE_WRITE);
	return s;
}

static void free_slots(struct hs_live_block *s, size_t cap)
{
	munmap(s, cap * sizeof(*s));
}

void hs_live_init(struct hs_live *l)
{
	memset(l, 0, sizeof(*l));
	l->cap = HS_LIVE_FIRST_SLOTS;
	l->mask = l->cap - 1;
	l->shift = 64 - (unsigned)__builtin_ctz(HS_LIVE_FIRST_SLOTS);
	l->used = 0;
	l->slots = alloc_slots(l->cap);
}

void hs_live_free(struct hs_live *l)
{
	free_slots(l->slots, l->cap);
	free(l->big);
	memset(l, 0, sizeof(*l));
}

void hs_live_note_big(struct hs_live *l, struct hs_live_block *b, uint64_t size)
{
	if (l->nbig == l->big_cap) {
		l->big_cap = l->big_cap ? l->big_cap * 2 : 16;
		l->big = hs_xrealloc(l->big, l->big_cap * sizeof(*l->big));
	}
	l->big[l->nbig].ptr = b->ptr;
	l->big[l->nbig++].size = size;
	b->size = HS_LIVE_BIG;
}

uint64_t hs_live_big_size(const struct hs_live *l, const struct hs_live_block *b)
{
	for (size_t i = l->nbig; i-- > 0;)
		if (l->big[i].ptr == b->ptr)
			return l->big[i].size;
	return HS_LIVE_BIG;
}

void hs_live_forget_big(struct hs_live *l, const struct hs_live_block *b)
{
	for (size_t i = l->nbig; i-- > 0;)
		if (l->big[i].ptr == b->ptr) {
			l->big[i] = l->big[--l->nbig];
			return;
		}
}

void hs_live_grow(struct hs_live *l)
{
	struct hs_live_block *old = l->slots;
	size_t ocap = l->cap;

	l->cap *= 2;
	l->mask = l->cap - 1;
	l->shift--;
	l->slots = alloc_slots(l->cap);
	for (size_t i = 0; i < ocap; i++) {
		if (!old[i].ptr)
			continue;
		size_t j = slot_of(l, old[i].ptr);
		while (l->slots[j].ptr)
			j = (j + 1) & l->mask;
		l->slots[j] = old[i];
	}
	free_slots(old, ocap);
}
