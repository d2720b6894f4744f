/* stacks.c - backtrace capture and deduplication into a trie of (parent, return address) nodes */
#include <pthread.h>
#include <string.h>

#include "../common/varint.h"
#include "tracer.h"

/*
 * A stack id names a trie node; its record (id, parent, address) is written
 * once, so a new backtrace costs only the frames not seen before. Threads
 * keep a 2-way cache of (parent, address) -> id, so the shared table is
 * read only on a miss, and its lock taken only to add a node.
 *
 * The table holds each node's id and 32 more bits of its hash, 8 bytes a
 * slot at most half full; the nodes themselves are arrays by id, which
 * their records need anyway (a node's address is written from its
 * parent's). Slots of 16 bytes that held the node were most of the
 * tracer's memory in a program of many backtraces: clang, 311,000 nodes,
 * 16 MiB of table.
 *
 * A thread whose cache misses looks a node up without the lock first:
 * taking it means blocking signals (two system calls, 2 us on a VM), and
 * a clang compile's 66,500 lookups under the lock found an existing node
 * in 35,500 of them. So a slot is written whole, after the node's
 * arrays and its record, and the table grows into a new generation that
 * is published whole; the old one is unmapped only once no lookup without
 * the lock is under way (readers), else at a later growth.
 */
struct nodes {
	size_t cap;
	_Atomic uint64_t *slots;   /* id | the hash's high half << 32; 0: empty */
	uint64_t *ip_of;           /* by id, up to cap / 2 + 1 of them */
	uint32_t *parent_of;
};

static struct hs_lock stack_lock = HS_LOCK_INIT;
static struct nodes gens[40];          /* generation g: 2^(10 + g) slots */
static int gen, mapped_from;           /* gens[mapped_from .. gen] are mapped; under stack_lock */
static struct nodes *_Atomic cur;      /* gens[gen], for lookups without the lock */
static _Atomic int readers;            /* lookups without the lock under way */
static uint32_t next_id = 1;

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

static void nodes_unmap(struct nodes *n)
{
	hs_unmap((void *)n->slots, n->cap * sizeof(*n->slots));
	hs_unmap(n->ip_of, ids_for(n->cap) * sizeof(*n->ip_of));
	hs_unmap(n->parent_of, ids_for(n->cap) * sizeof(*n->parent_of));
	memset(n, 0, sizeof(*n));
}

static int nodes_map(struct nodes *n, size_t cap)
{
	n->cap = cap;
	n->slots = hs_map(cap * sizeof(*n->slots));
	n->ip_of = hs_map(ids_for(cap) * sizeof(*n->ip_of));
	n->parent_of = hs_map(ids_for(cap) * sizeof(*n->parent_of));
	if (n->slots && n->ip_of && n->parent_of)
		return 0;
	nodes_unmap(n);
	return -1;
}

int hs_stacks_init(void)
{
	/* small, growing: a first size of 65,536 slots scattered a short program's nodes over a page fault each (59 of ls's) */
	gen = mapped_from = 0;
	if (nodes_map(&gens[0], (size_t)1 << 10) < 0)
		return -1;
	atomic_store(&cur, &gens[0]);
	return hs_unwind_init();
}

/* Tracing could not start: the program gets the memory back. */
void hs_stacks_release(void)
{
	atomic_store(&cur, NULL);
	for (int g = mapped_from; g <= gen; g++)
		nodes_unmap(&gens[g]);
	hs_unwind_release();
}

void hs_stacks_reset(void)
{
	hs_lock_reset(&stack_lock);
	hs_zero((void *)gens[gen].slots, gens[gen].cap * sizeof(*gens[gen].slots));
	next_id = 1;
}

/* In a forked child: the lookups other threads of the parent had under way are not the child's. */
void hs_stacks_after_fork(void)
{
	atomic_store(&readers, 0);
	hs_stacks_reset();
}

/* Unmaps the generations before the current one, unless a lookup may still read them. */
static void reclaim(void)
{
	if (atomic_load(&readers) != 0)
		return;
	for (; mapped_from < gen; mapped_from++)
		nodes_unmap(&gens[mapped_from]);
}

static int grow(void)
{
	struct nodes *o = &gens[gen], *n;
	size_t mask;

	if (gen + 1 == (int)(sizeof(gens) / sizeof(gens[0])))
		return -1;
	n = &gens[gen + 1];
	if (nodes_map(n, o->cap * 2) < 0)
		return -1;
	mask = n->cap - 1;
	memcpy(n->ip_of, o->ip_of, next_id * sizeof(*n->ip_of));
	memcpy(n->parent_of, o->parent_of, next_id * sizeof(*n->parent_of));
	for (size_t i = 0; i < o->cap; i++) {
		uint64_t sl = atomic_load_explicit(&o->slots[i], memory_order_relaxed);
		uint32_t id = (uint32_t)sl;
		if (!id)
			continue;
		size_t j = node_hash(n->parent_of[id], n->ip_of[id]) & mask;
		while (atomic_load_explicit(&n->slots[j], memory_order_relaxed))
			j = (j + 1) & mask;
		atomic_store_explicit(&n->slots[j], sl, memory_order_relaxed);
	}
	/* seq_cst: a lookup that counted itself in readers after this store reads the new generation */
	atomic_store(&cur, n);
	gen++;
	reclaim();
	return 0;
}

/*
 * The node's id if it is in the table, else 0, without the lock: from
 * whichever generation is current (one growing meanwhile leaves it
 * mapped). A signal handler's lookup nests in it, counted as well.
 */
static uint32_t node_find(struct hs_thread *t, uint32_t parent, uint64_t ip)
{
	uint64_t h = node_hash(parent, ip);
	uint32_t tag = (uint32_t)(h >> 32), id = 0;
	const struct nodes *n;

	/*
	 * Counted in readers before node_reads, and out of it after: a
	 * handler that jumps out in between leaves readers one too high (old
	 * generations stay mapped), never too low (one unmapped under a lookup).
	 */
	atomic_fetch_add(&readers, 1);
	atomic_signal_fence(memory_order_seq_cst);
	t->node_reads++;
	n = atomic_load(&cur);
	for (size_t j = h & (n->cap - 1);; j = (j + 1) & (n->cap - 1)) {
		uint64_t sl = atomic_load_explicit(&n->slots[j], memory_order_acquire);
		if (!sl)
			break;
		if ((uint32_t)(sl >> 32) == tag && n->ip_of[(uint32_t)sl] == ip && n->parent_of[(uint32_t)sl] == parent) {
			id = (uint32_t)sl;
			break;
		}
	}
	t->node_reads--;
	atomic_signal_fence(memory_order_seq_cst);
	atomic_fetch_sub(&readers, 1);
	return id;
}

/* A signal handler jumped out of this thread's lookups (hooks.c jump_out): they read no more. */
void hs_stacks_jumped_out(struct hs_thread *t)
{
	if (t->node_reads) {
		atomic_fetch_sub(&readers, t->node_reads);
		t->node_reads = 0;
	}
}

static uint32_t node_get(uint32_t parent, uint64_t ip)
{
	struct nodes *n;
	size_t j;
	uint8_t rec[1 + 3 * HS_VARINT_MAX], *p;
	uint64_t h;
	uint32_t tag, id;

	/* next_id - 1 nodes in the table: it grows before it is half full */
	if ((size_t)next_id * 2 > gens[gen].cap && grow() < 0)
		return 0;
	n = &gens[gen];
	h = node_hash(parent, ip);
	tag = (uint32_t)(h >> 32);
	j = h & (n->cap - 1);
	for (uint64_t sl; (sl = atomic_load_explicit(&n->slots[j], memory_order_relaxed)) != 0;) {
		id = (uint32_t)sl;
		if ((uint32_t)(sl >> 32) == tag && n->ip_of[id] == ip && n->parent_of[id] == parent)
			return id;
		j = (j + 1) & (n->cap - 1);
	}
	/*
	 * The module map names the node's file before the node is written: a
	 * new address range is scanned at once. Whether a library was replaced
	 * at a known one, the section asked the loader when it opened: the
	 * node's address is on this thread's stack, so its library was loaded
	 * before this capture began and stays until the capture ends.
	 */
	if (!hs_modules_contains(ip))
		hs_modules_scan();
	id = next_id;
	n->ip_of[id] = ip;
	n->parent_of[id] = parent;
	/*
	 * Format 4.0: the id is the next one, so left out (written, it made
	 * every record unlike the others to zstd: python3's table in the file
	 * 100 to 29 KB without it); the parent by its distance, the address
	 * from the parent's (mostly the same library). The record goes before
	 * the slot: a thread that finds the node without the lock may name it
	 * in an event at once, and the writer takes records before events.
	 */
	p = rec;
	*p++ = HS_REC_STACK;
	p = hs_varint_put(p, id - parent);
	p = hs_varint_put(p, hs_zigzag((int64_t)(ip - (parent ? n->ip_of[parent] : 0))));
	hs_meta_append(rec, (size_t)(p - rec));
	atomic_store_explicit(&n->slots[j], (uint64_t)tag << 32 | id, memory_order_release);
	next_id++;
	/* generations a lookup still read when the table grew */
	if (mapped_from < gen)
		reclaim();
	return id;
}

/*
 * The section spans the capture rather than each step: blocking signals
 * and giving the mask back are two system calls, 2 us a pair in a KVM
 * guest, and clang's walks took 17,000 pairs for new unwind rules and
 * 30,000 for new nodes, most in the same captures (0.1 s of a 1 s
 * compile). The loader is asked once per section, not per new node.
 */
void hs_section_open(struct hs_thread *t)
{
	if (t->in_section)
		return;
	hs_internal_enter(t, &t->section_old);
	t->in_section = 1;
	hs_modules_poll();
}

static inline void section_close(struct hs_thread *t)
{
	if (!t->in_section)
		return;
	t->in_section = 0;
	hs_internal_leave(t, &t->section_old);
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
			/* under the lock, a frame past a new node is new too: no lookup without it first */
			id = locked ? 0 : node_find(t, parent, ip);
			if (!id && !locked) {
				/* a signal handler nested in a table update of this thread cannot take the lock */
				if (t->in_stack_lock) {
					parent = 0;
					break;
				}
				/* set and cleared with signals blocked: a handler that jumps out (siglongjmp) cannot leave it set */
				hs_section_open(t);
				t->in_stack_lock = 1;
				hs_lock_take(&stack_lock);
				locked = 1;
			}
			if (!id && !(id = node_get(parent, ip))) {
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
	}
	return parent;
}

/* A signal handler interrupted this thread's walk: its state is left alone. Out of line: the buffer is no frame's but this one's. */
__attribute__((noinline)) static uint32_t capture_nested(struct hs_thread *t)
{
	uint64_t ips[HS_MAX_FRAMES];
	int k = hs_unwind_plain(t, ips);
	uint32_t id = k ? nodes_for(t, 0, ips, (ptrdiff_t)sizeof(ips[0]), k, NULL) : 0;

	section_close(t);
	return id;
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
	if (n == 0)
		goto out;
	/* the usual case: the same call path as last time, node ids and all */
	if (kept == n) {
		id = f[n - 1].node;
		goto out;
	}
	/* new frames are f[kept .. n), outermost first: walked inside out from f[n - 1] */
	id = nodes_for(t, kept ? f[kept - 1].node : 0, &f[n - 1].ip, -(ptrdiff_t)sizeof(*f), n - kept, &f[n - 1].node);
	if (!id)
		t->uw.n = 0; /* node ids incomplete: do not reuse this walk */
	else
		hs_unwind_keep(t);
out:
	section_close(t);
	t->in_unwind = 0;
	return id;
}
