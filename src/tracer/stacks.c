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
/*
 * The table holds each node's id and 32 more bits of its hash, 8 bytes a
 * slot at most half full; the nodes themselves are arrays by id, which
 * their records need anyway (a node's address is written from its
 * parent's). Slots of 16 bytes that held the node were most of the
 * tracer's memory in a program of many backtraces: clang, 311,000 nodes,
 * 16 MiB of table.
 */
struct slot {
	uint32_t id;     /* 0: empty */
	uint32_t tag;    /* the hash's high half: most probes of other nodes stop here */
};

static struct hs_lock stack_lock = HS_LOCK_INIT;
static struct slot *table;
static size_t table_cap, table_used;
static uint32_t next_id = 1;
static uint64_t *ip_of;      /* by id, up to table_cap / 2 + 1 of them */
static uint32_t *parent_of;

static inline uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

static inline uint64_t node_hash(uint32_t parent, uint64_t ip)
{
	return mix(ip ^ ((uint64_t)parent << 40));
}

/* Ids a table of cap slots can hold: it grows before it is half full */
static inline size_t ids_for(size_t cap)
{
	return cap / 2 + 1;
}

static int nodes_map(size_t cap, struct slot **t, uint64_t **ips, uint32_t **parents)
{
	*t = hs_map(cap * sizeof(**t));
	*ips = hs_map(ids_for(cap) * sizeof(**ips));
	*parents = hs_map(ids_for(cap) * sizeof(**parents));
	if (*t && *ips && *parents)
		return 0;
	hs_unmap(*t, cap * sizeof(**t));
	hs_unmap(*ips, ids_for(cap) * sizeof(**ips));
	hs_unmap(*parents, ids_for(cap) * sizeof(**parents));
	return -1;
}

static void nodes_unmap(size_t cap, struct slot *t, uint64_t *ips, uint32_t *parents)
{
	hs_unmap(t, cap * sizeof(*t));
	hs_unmap(ips, ids_for(cap) * sizeof(*ips));
	hs_unmap(parents, ids_for(cap) * sizeof(*parents));
}

int hs_stacks_init(void)
{
	/* small, growing: a first size of 65,536 slots scattered a short program's nodes over a page fault each (59 of ls's) */
	table_cap = 1u << 10;
	if (nodes_map(table_cap, &table, &ip_of, &parent_of) < 0)
		return -1;
	return hs_unwind_init();
}

/* Tracing could not start: the program gets the memory back. */
void hs_stacks_release(void)
{
	nodes_unmap(table_cap, table, ip_of, parent_of);
	table = NULL;
	ip_of = NULL;
	parent_of = NULL;
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
	size_t ncap = table_cap * 2, mask = ncap - 1;
	struct slot *nt;
	uint64_t *nip;
	uint32_t *npar;

	if (nodes_map(ncap, &nt, &nip, &npar) < 0)
		return -1;
	memcpy(nip, ip_of, next_id * sizeof(*nip));
	memcpy(npar, parent_of, next_id * sizeof(*npar));
	for (size_t i = 0; i < table_cap; i++) {
		uint32_t id = table[i].id;
		if (!id)
			continue;
		size_t j = node_hash(npar[id], nip[id]) & mask;
		while (nt[j].id)
			j = (j + 1) & mask;
		nt[j] = table[i];
	}
	nodes_unmap(table_cap, table, ip_of, parent_of);
	table = nt;
	ip_of = nip;
	parent_of = npar;
	table_cap = ncap;
	return 0;
}

static uint32_t node_get(uint32_t parent, uint64_t ip)
{
	size_t j;
	uint8_t rec[1 + 3 * HS_VARINT_MAX], *p;
	uint64_t h;
	uint32_t tag, id;

	if ((table_used + 1) * 2 > table_cap && grow() < 0)
		return 0;
	h = node_hash(parent, ip);
	tag = (uint32_t)(h >> 32);
	j = h & (table_cap - 1);
	while ((id = table[j].id) != 0) {
		if (table[j].tag == tag && ip_of[id] == ip && parent_of[id] == parent)
			return id;
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
	id = next_id++;
	ip_of[id] = ip;
	parent_of[id] = parent;
	table[j].tag = tag;
	table[j].id = id;
	table_used++;
	/*
	 * Format 4.0: the id is the next one, so left out (written, it made
	 * every record unlike the others to zstd: python3's table in the file
	 * 100 to 29 KB without it); the parent by its distance, the address
	 * from the parent's (mostly the same library).
	 */
	p = rec;
	*p++ = HS_REC_STACK;
	p = hs_varint_put(p, id - parent);
	p = hs_varint_put(p, hs_zigzag((int64_t)(ip - (parent ? ip_of[parent] : 0))));
	hs_meta_append(rec, (size_t)(p - rec));
	return id;
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
