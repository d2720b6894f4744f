/* stacks.c - backtrace capture and deduplication into a trie of (parent, return address) nodes */
#include <pthread.h>
#include <string.h>

#include "../common/varint.h"
#include "tracer.h"

/*
 * A stack id names a trie node; its record (id, parent, address) is written
 * once, so a new backtrace costs only the frames not seen before. Threads
 * keep a direct-mapped cache from a hash of the whole backtrace to its id,
 * so the shared table (and its lock) is touched only on a miss.
 */
struct node {
	uint64_t ip;
	uint32_t parent;
	uint32_t id;
};

static struct hs_lock stack_lock = HS_LOCK_INIT;
static struct node *table;
static size_t table_cap, table_used;
static uint32_t next_id = 1;
static uint64_t *ip_of;   /* by id (fewer than table_cap): a node's record names its address from its parent's */

static inline uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

int hs_stacks_init(void)
{
	table_cap = 1u << 16;
	table = hs_map(table_cap * sizeof(*table));
	ip_of = hs_map(table_cap * sizeof(*ip_of));
	if (!table || !ip_of)
		return -1;
	return hs_unwind_init();
}

/* Tracing could not start: the program gets the memory back. */
void hs_stacks_release(void)
{
	hs_unmap(table, table_cap * sizeof(*table));
	hs_unmap(ip_of, table_cap * sizeof(*ip_of));
	table = NULL;
	ip_of = NULL;
	hs_unwind_release();
}

void hs_stacks_reset(void)
{
	hs_lock_reset(&stack_lock);
	memset(table, 0, table_cap * sizeof(*table));
	table_used = 0;
	next_id = 1;
}

static int grow(void)
{
	size_t ncap = table_cap * 2;
	struct node *nt = hs_map(ncap * sizeof(*nt));
	uint64_t *nip = hs_map(ncap * sizeof(*nip));

	if (!nt || !nip) {
		if (nt)
			hs_unmap(nt, ncap * sizeof(*nt));
		if (nip)
			hs_unmap(nip, ncap * sizeof(*nip));
		return -1;
	}
	memcpy(nip, ip_of, next_id * sizeof(*nip));
	hs_unmap(ip_of, table_cap * sizeof(*ip_of));
	ip_of = nip;
	for (size_t i = 0; i < table_cap; i++) {
		struct node *o = &table[i];
		if (!o->id)
			continue;
		size_t j = mix(o->ip ^ ((uint64_t)o->parent << 40)) & (ncap - 1);
		while (nt[j].id)
			j = (j + 1) & (ncap - 1);
		nt[j] = *o;
	}
	hs_unmap(table, table_cap * sizeof(*table));
	table = nt;
	table_cap = ncap;
	return 0;
}

static uint32_t node_get(uint32_t parent, uint64_t ip)
{
	size_t j;
	uint8_t rec[1 + 3 * HS_VARINT_MAX], *p;

	if ((table_used + 1) * 2 > table_cap && grow() < 0)
		return 0;
	j = mix(ip ^ ((uint64_t)parent << 40)) & (table_cap - 1);
	while (table[j].id) {
		if (table[j].ip == ip && table[j].parent == parent)
			return table[j].id;
		j = (j + 1) & (table_cap - 1);
	}
	/*
	 * The module map names the node's file before the node is written: a
	 * new address range is scanned at once, and the loader's counters say
	 * whether a library was replaced at a known one since the last scan.
	 */
	if (!hs_modules_contains(ip))
		hs_modules_scan();
	else
		hs_modules_poll();
	table[j].ip = ip;
	table[j].parent = parent;
	table[j].id = next_id++;
	table_used++;
	ip_of[table[j].id] = ip;
	/*
	 * Format 4.0: the id is the next one, so left out (written, it made
	 * every record unlike the others to zstd: python3's table in the file
	 * 100 to 29 KB without it); the parent by its distance, the address
	 * from the parent's (mostly the same library).
	 */
	p = rec;
	*p++ = HS_REC_STACK;
	p = hs_varint_put(p, table[j].id - parent);
	p = hs_varint_put(p, hs_zigzag((int64_t)(ip - (parent ? ip_of[parent] : 0))));
	hs_meta_append(rec, (size_t)(p - rec));
	return table[j].id;
}

/* The cache is 2-way set associative: first slot of the pair's set (the other is the next one). */
static inline size_t pair_set(uint32_t parent, uint64_t ip)
{
	return (size_t)(((ip ^ ((uint64_t)parent << 32)) * 0x9e3779b97f4a7c15ull) >> 40) & (HS_STACK_CACHE - 2);
}

/* Written so that a signal handler reading the slot midway sees an empty one (ip 0). */
static inline void slot_set(struct hs_stack_slot *slot, uint64_t ip, uint32_t parent, uint32_t id)
{
	slot->ip = 0;
	atomic_signal_fence(memory_order_seq_cst);
	slot->parent = parent;
	slot->id = id;
	atomic_signal_fence(memory_order_seq_cst);
	slot->ip = ip;
}

/*
 * Node ids of count frames given the id of the frame outside them (0 at the
 * top): element i sits at base + i * stride bytes, i = count - 1 the
 * outermost. Ids go to out (same layout) when it is not NULL.
 */
static uint32_t nodes_for(struct hs_thread *t, uint32_t parent, const uint64_t *ips, ptrdiff_t stride, int count,
			  uint32_t *out)
{
	int locked = 0;
	sigset_t old;

	for (int i = count - 1; i >= 0; i--) {
		uint64_t ip = *(const uint64_t *)((const char *)ips + i * stride);
		struct hs_stack_slot *set = &t->cache[pair_set(parent, ip)];
		uint32_t id;

		if (ip >= hs_g.self_lo && ip < hs_g.self_hi) {
			/* ours, below the program's frames (an operator new that we forward): never shown */
			id = parent;
		} else if (set[0].ip == ip && set[0].parent == parent) {
			id = set[0].id;
		} else if (set[1].ip == ip && set[1].parent == parent) {
			id = set[1].id;
		} else {
			if (!locked) {
				/* a signal handler nested in a table update of this thread cannot take the lock */
				if (t->in_stack_lock) {
					parent = 0;
					break;
				}
				/* set and cleared with signals blocked: a handler that jumps out (siglongjmp) cannot leave it set */
				hs_internal_enter(t, &old);
				t->in_stack_lock = 1;
				hs_lock_take(&stack_lock);
				locked = 1;
			}
			id = node_get(parent, ip);
			if (!id) {
				parent = 0;
				break;
			}
			/* the newest in the first way, the one it displaces in the second */
			slot_set(&set[1], set[0].ip, set[0].parent, set[0].id);
			slot_set(&set[0], ip, parent, id);
		}
		if (out)
			*(uint32_t *)((char *)out + i * stride) = id;
		parent = id;
	}
	if (locked) {
		hs_lock_release(&stack_lock);
		t->in_stack_lock = 0;
		hs_internal_leave(t, &old);
	}
	return parent;
}

/* A signal handler interrupted this thread's walk: its state is left alone. Out of line: the buffer is no frame's but this one's. */
__attribute__((noinline)) static uint32_t capture_nested(struct hs_thread *t)
{
	uint64_t ips[HS_MAX_FRAMES];
	int k = hs_unwind_plain(t, ips);

	return k ? nodes_for(t, 0, ips, (ptrdiff_t)sizeof(ips[0]), k, NULL) : 0;
}

uint32_t hs_stack_capture(struct hs_thread *t, const void *from)
{
	struct hs_uframe *f = t->uw.f;
	int kept, n;
	uint32_t id;

	if (t->in_unwind)
		return capture_nested(t);
	t->in_unwind = 1;
	id = 0;
	n = hs_unwind(t, &kept, &id, from);
	if (n == 0) {
		t->in_unwind = 0;
		return id;
	}
	/* the usual case: the same call path as last time, node ids and all */
	if (kept == n) {
		t->in_unwind = 0;
		return f[n - 1].node;
	}
	/* new frames are f[kept .. n), outermost first: walked inside out from f[n - 1] */
	id = nodes_for(t, kept ? f[kept - 1].node : 0, &f[n - 1].ip, -(ptrdiff_t)sizeof(*f), n - kept, &f[n - 1].node);
	if (!id)
		t->uw.n = 0; /* node ids incomplete: do not reuse this walk */
	else
		hs_unwind_keep(t);
	t->in_unwind = 0;
	return id;
}
