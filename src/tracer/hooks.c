/* hooks.c - the interposed entry points: the malloc family, mmap/brk, exec and _exit */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tracer.h"

void hs_init(void);
const char *hs_self_path(void);

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
/*
 * The entry points whose usual path is a tail call (the real function, or
 * the out-of-line recorded part): their own frame is gone before anything
 * walks the stack, so setting up a frame pointer is pure cost, a fifth of a
 * sampled malloc. Without optimization there are no tail calls: keep it then.
 */
#if defined(__OPTIMIZE__) && defined(__GNUC__) && !defined(__clang__)
#define HS_TAIL_HOOK __attribute__((optimize("omit-frame-pointer")))
#else
#define HS_TAIL_HOOK
#endif

static struct {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*malloc_usable_size)(void *);
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	int (*munmap)(void *, size_t);
	void *(*mremap)(void *, size_t, size_t, int, ...);
	int (*brk)(void *);
	void *(*sbrk)(intptr_t);
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
	int (*execveat)(int, const char *, char *const[], char *const[], int);
	void (*_exit)(int) __attribute__((noreturn));
	int (*posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
			   char *const[], char *const[]);
	int (*posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
			    char *const[], char *const[]);
	int (*system)(const char *);
	FILE *(*popen)(const char *, const char *);
	void (*longjmp)(struct __jmp_buf_tag *, int) __attribute__((noreturn));
	void (*_longjmp)(struct __jmp_buf_tag *, int) __attribute__((noreturn));
	void (*siglongjmp)(struct __jmp_buf_tag *, int) __attribute__((noreturn));
	void (*__longjmp_chk)(struct __jmp_buf_tag *, int) __attribute__((noreturn));
} real;

/*
 * dlsym() itself allocates: while the real functions are being looked up,
 * allocations are served from this buffer and never freed.
 */
#define BOOT_BYTES (64u << 10)
/*
 * After them, the scratch slots (hs_scratch_begin): the glibc calls the
 * tracer makes for itself whose blocks all die before the call returns
 * take their blocks there, not from the program's heap. A thread's stack
 * bounds (pthread_getattr_np, which copies the thread's CPU set) made 3
 * calls into the C library's malloc for each thread: 10,200 for a program
 * that starts 3,400. free ignores them, as it does boot blocks.
 */
#define SCRATCH_SLOTS 32
#define SCRATCH_BYTES (8u << 10)
static char boot_buf[BOOT_BYTES + SCRATCH_SLOTS * SCRATCH_BYTES] __attribute__((aligned(64)));
static size_t boot_used;
static _Atomic uint32_t scratch_taken;  /* a bit per slot */
static _Atomic int resolving;
/*
 * Every block handed out (at least 64 bytes each, so 1024 at most): the
 * sampled-mode free asks only the sampled set, which then holds these too.
 */
#define BOOT_MAX (BOOT_BYTES / 64)
static void *boot_list[BOOT_MAX];
static _Atomic unsigned boot_n;

static void *boot_alloc(size_t n)
{
	size_t off = __atomic_fetch_add(&boot_used, n ? (n + 63) & ~(size_t)63 : 64, __ATOMIC_RELAXED);
	unsigned i;

	if (off + n > BOOT_BYTES)
		return NULL;
	i = atomic_fetch_add(&boot_n, 1);
	if (i < BOOT_MAX)
		boot_list[i] = boot_buf + off;
	return boot_buf + off;
}

/* A boot block or a scratch one: never the real free's */
static int is_boot(const void *p)
{
	return (uintptr_t)p - (uintptr_t)boot_buf < sizeof(boot_buf);
}

/* A slot for t's scratch blocks until hs_scratch_end; none free, and the blocks come from the real malloc as before. */
void hs_scratch_begin(struct hs_thread *t)
{
	uint32_t taken = atomic_load(&scratch_taken);

	t->scratch = 0;
	while (~taken) {
		unsigned k = (unsigned)__builtin_ctz(~taken);
		if (atomic_compare_exchange_weak(&scratch_taken, &taken, taken | 1u << k)) {
			t->scratch = (uint8_t)(k + 1);
			t->scratch_used = 0;
			return;
		}
	}
}

/* Every block of the slot was freed: the next section may have it. */
void hs_scratch_end(struct hs_thread *t)
{
	if (t->scratch)
		atomic_fetch_and(&scratch_taken, ~(1u << (t->scratch - 1)));
	t->scratch = 0;
}

/* A block from the calling thread's scratch slot (zeroed if zero), or NULL: none open, or full. */
static void *scratch_alloc(size_t n, int zero)
{
	struct hs_thread *t = hs_tls_thread;
	size_t need = n ? (n + 15) & ~(size_t)15 : 16;
	char *p;

	if (!t || !t->scratch || n > SCRATCH_BYTES || need > SCRATCH_BYTES - t->scratch_used)
		return NULL;
	p = boot_buf + BOOT_BYTES + (size_t)(t->scratch - 1) * SCRATCH_BYTES + t->scratch_used;
	t->scratch_used += (uint16_t)need;
	if (zero)
		memset(p, 0, n);
	return p;
}

/* The kernel's system call, as glibc's syscall() makes it: -1 and errno on failure */
static long raw_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long r;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	if ((unsigned long)r > -4096ul) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

#define RESOLVE(name) real.name = (__typeof__(real.name))dlsym(RTLD_NEXT, #name)

__attribute__((noinline)) static void resolve(void)
{
	if (atomic_exchange(&resolving, 1))
		return;
	RESOLVE(calloc);
	RESOLVE(malloc);
	RESOLVE(free);
	RESOLVE(realloc);
	RESOLVE(reallocarray);
	RESOLVE(posix_memalign);
	RESOLVE(aligned_alloc);
	RESOLVE(memalign);
	RESOLVE(valloc);
	RESOLVE(pvalloc);
	RESOLVE(malloc_usable_size);
	RESOLVE(mmap);
	RESOLVE(munmap);
	RESOLVE(mremap);
	RESOLVE(brk);
	RESOLVE(sbrk);
	RESOLVE(execve);
	RESOLVE(execvpe);
	RESOLVE(fexecve);
	RESOLVE(execveat);
	RESOLVE(_exit);
	RESOLVE(posix_spawn);
	RESOLVE(posix_spawnp);
	RESOLVE(system);
	RESOLVE(popen);
	RESOLVE(longjmp);
	RESOLVE(_longjmp);
	RESOLVE(siglongjmp);
	RESOLVE(__longjmp_chk);
	if (!real.malloc || !real.free || !real.calloc || !real.realloc) {
		hs_log("cannot find the real malloc; aborting", NULL, NULL);
		raw_syscall(SYS_exit_group, 127, 0, 0, 0, 0, 0);
	}
	hs_init();
}

static inline int ensure_ready(void)
{
	if (unlikely(!real.free)) {
		if (atomic_load(&resolving))
			return 0;
		resolve();
	}
	return 1;
}

/* hs_init() before tracing starts: the hot hooks take "active" to mean the real functions are known. */
void hs_hooks_resolve(void)
{
	ensure_ready();
}

/*
 * Sampled mode: the set of sampled live blocks, so that their frees are
 * recorded. Every free first asks a filter: one bit per 16-byte granule of
 * address, modulo 16 MiB, set while a live entry starts in that granule. It
 * is a static array, so the question is one load that waits for nothing but
 * p and the mask. In full mode the mask is 0 and bit 0 is set: every free
 * goes the recorded way. Before a start nothing records, so the answer does
 * not matter.
 *
 * Behind it, a hash table that frees probe without a lock (sampled blocks
 * and the filter's false answers: about one free in 64 when 16,000 samples
 * live, a heap of 8 GiB sampled every 512 KiB) and that set_lock guards for
 * changes. A table is replaced once half its slots hold entries or
 * tombstones; the old one is unmapped when no thread's hazard names it (a
 * thread names the table it probes). Left mapped, as they once were, they
 * grew a pool sampled every KiB by 7.4 MB in 3M iterations, without end.
 *
 * A signal handler's hook on the thread that holds set_lock must not wait
 * for it: that hung `signals` sampled at every byte, 5 runs out of 5. It
 * queues its change, which the thread makes before it lets go of the lock.
 */

#define FILTER_BITS (1u << 20)
static _Atomic uint64_t filter[FILTER_BITS / 64] __attribute__((aligned(64)));
/* lines of their own: every free reads the mask, each sampled event writes the lock (4 threads: 5% more pairs) */
static _Atomic uintptr_t filter_mask __attribute__((aligned(64)));
static uint16_t *filter_count; /* under set_lock: live entries per bit, up to 0xffff, which then stays */

#define SET_TOMB ((uintptr_t)1)
#define SET_MIN (1u << 12)

struct sset {
	size_t mask;
	size_t used; /* slots not empty: live entries and tombstones */
	size_t live;
	_Atomic uintptr_t slot[];
};

static struct sset *_Atomic set_cur; /* changed under set_lock; NULL: empty */
static struct hs_lock set_lock __attribute__((aligned(64))) = HS_LOCK_INIT;

/* Replaced tables that a hazard still named; under set_lock. A full list leaves the next one mapped. */
#define SET_RETIRED 64
static struct sset *retired[SET_RETIRED];
static int nretired;

static inline size_t filter_index(uintptr_t p)
{
	return (size_t)(p >> 4) & (FILTER_BITS - 1);
}

static void filter_set(size_t i)
{
	atomic_fetch_or_explicit(&filter[i >> 6], 1ull << (i & 63), memory_order_relaxed);
}

static void filter_clear(size_t i)
{
	atomic_fetch_and_explicit(&filter[i >> 6], ~(1ull << (i & 63)), memory_order_relaxed);
}

static int filter_add(uintptr_t p)
{
	size_t i = filter_index(p);

	if (!filter_count && !(filter_count = hs_map(FILTER_BITS * sizeof(*filter_count))))
		return -1;
	if (filter_count[i] != 0xffff)
		filter_count[i]++;
	filter_set(i);
	return 0;
}

static void filter_sub(uintptr_t p)
{
	size_t i = filter_index(p);

	if (filter_count[i] != 0xffff && --filter_count[i] == 0)
		filter_clear(i);
}

/*
 * Every free of a thread with state asks: the usual answer (no live entry
 * starts in p's granule) from the filter, without a call. Always yes in
 * full mode.
 */
static inline int set_may_hold(uintptr_t p)
{
	size_t i = (size_t)(p >> 4) & atomic_load_explicit(&filter_mask, memory_order_relaxed);

	return (atomic_load_explicit(&filter[i >> 6], memory_order_relaxed) >> (i & 63)) & 1;
}

static inline size_t set_hash(const struct sset *s, uintptr_t p)
{
	return (size_t)((p * 0x9e3779b97f4a7c15ull) >> 32) & s->mask;
}

static size_t set_bytes(size_t cap)
{
	return sizeof(struct sset) + cap * sizeof(uintptr_t);
}

static void set_put(struct sset *s, uintptr_t p)
{
	size_t i = set_hash(s, p);

	while (atomic_load_explicit(&s->slot[i], memory_order_relaxed) > SET_TOMB)
		i = (i + 1) & s->mask;
	if (atomic_load_explicit(&s->slot[i], memory_order_relaxed) == 0)
		s->used++;
	s->live++;
	atomic_store_explicit(&s->slot[i], p, memory_order_release);
}

static _Atomic uintptr_t *set_find(struct sset *s, uintptr_t p)
{
	if (!s)
		return NULL;
	for (size_t i = set_hash(s, p);; i = (i + 1) & s->mask) {
		uintptr_t v = atomic_load_explicit(&s->slot[i], memory_order_acquire);
		if (v == 0)
			return NULL;
		if (v == p)
			return &s->slot[i];
	}
}

/* Whether some thread's hazard names s; under set_lock. */
static int set_named(const struct sset *s)
{
	int named = 0;

	hs_lock_take(&hs_g.threads_lock);
	for (struct hs_thread *t = hs_g.threads; t && !named; t = t->next)
		for (int i = 0; i < HS_SET_HAZARDS; i++)
			if (atomic_load(&t->set_hazard[i]) == (const void *)s)
				named = 1;
	hs_lock_release(&hs_g.threads_lock);
	return named;
}

/* Under the lock: s, just replaced, and the tables replaced before it go once no hazard names them. */
static void set_retire(struct sset *s)
{
	if (nretired < SET_RETIRED)
		retired[nretired++] = s;
	for (int i = 0; i < nretired; i++)
		if (!set_named(retired[i])) {
			hs_unmap(retired[i], set_bytes(retired[i]->mask + 1));
			retired[i--] = retired[--nretired];
		}
}

/* Under the lock. */
static int set_add_locked(uintptr_t p)
{
	struct sset *s = atomic_load_explicit(&set_cur, memory_order_relaxed);

	if (!s || (s->used + 1) * 2 > s->mask + 1) {
		size_t cap = SET_MIN, live = s ? s->live : 0;
		struct sset *n;
		while (cap < (live + 1) * 4)
			cap *= 2;
		if (!(n = hs_map(set_bytes(cap))))
			return -1;
		n->mask = cap - 1;
		for (size_t i = 0; s && i <= s->mask; i++) {
			uintptr_t v = atomic_load_explicit(&s->slot[i], memory_order_relaxed);
			if (v > SET_TOMB)
				set_put(n, v);
		}
		/* seq_cst, against the probes' hazard then table: one of the two sees the other */
		atomic_store(&set_cur, n);
		if (s)
			set_retire(s);
		s = n;
	}
	if (filter_add(p) < 0)
		return -1;
	set_put(s, p);
	return 0;
}

/* Under the lock. */
static int set_del_locked(uintptr_t p)
{
	struct sset *s = atomic_load_explicit(&set_cur, memory_order_relaxed);
	_Atomic uintptr_t *slot = set_find(s, p);

	if (!slot)
		return 0;
	atomic_store_explicit(slot, SET_TOMB, memory_order_relaxed);
	s->live--;
	filter_sub(p);
	return 1;
}

/*
 * Without the lock: p is in the current table. A hazard names the table for
 * the probe's length; a handler nested in a probe takes the next one (too
 * deep: "maybe", 1).
 */
static int set_probe(struct hs_thread *t, uintptr_t p)
{
	int h = t->set_hazards++, found;
	struct sset *s;

	if (h >= HS_SET_HAZARDS) {
		t->set_hazards--;
		return 1;
	}
	do {
		s = atomic_load_explicit(&set_cur, memory_order_relaxed);
		atomic_store(&t->set_hazard[h], (void *)s);
	} while (s != atomic_load(&set_cur));
	found = set_find(s, p) != NULL;
	atomic_store_explicit(&t->set_hazard[h], NULL, memory_order_release);
	t->set_hazards--;
	return found;
}

/* Takes set_lock, unless t is a handler's hook on the thread that holds it. */
static int set_enter(struct hs_thread *t)
{
	if (t->set_held)
		return 0;
	t->set_held = 1;
	atomic_signal_fence(memory_order_seq_cst);
	hs_lock_take(&set_lock);
	return 1;
}

#define PEND_INSERT ((uintptr_t)1) /* on a queued block: it joins the set (blocks are 16-byte aligned) */

/*
 * Lets go of set_lock, having done first, in order, what handlers queued
 * meanwhile; a handler that queues after that (before set_held goes to 0)
 * has the lock taken again.
 */
static void set_leave(struct hs_thread *t)
{
	for (;;) {
		while (t->set_pend_tail != t->set_pend_head) {
			uintptr_t v;
			atomic_signal_fence(memory_order_seq_cst);
			v = t->set_pend[t->set_pend_tail % HS_SET_PENDING];
			/* out of memory here leaves the block out: its free goes unrecorded */
			if (v & PEND_INSERT)
				(void)set_add_locked(v & ~PEND_INSERT);
			else
				set_del_locked(v);
			t->set_pend_tail++;
		}
		hs_lock_release(&set_lock);
		atomic_signal_fence(memory_order_seq_cst);
		t->set_held = 0;
		atomic_signal_fence(memory_order_seq_cst);
		if (t->set_pend_head == t->set_pend_tail)
			return;
		t->set_held = 1;
		atomic_signal_fence(memory_order_seq_cst);
		hs_lock_take(&set_lock);
	}
}

/* A handler's change to the set, on the thread that holds its lock: done when the thread lets go. -1: the queue is full. */
static int set_defer(struct hs_thread *t, uintptr_t v)
{
	uint64_t i;

	if (t->set_pend_head - t->set_pend_tail >= HS_SET_PENDING)
		return -1;
	i = hs_local_xadd(&t->set_pend_head, 1);
	t->set_pend[i % HS_SET_PENDING] = v;
	return 0;
}

/* Whether a handler queued p to join the set and not yet to leave it. */
static int set_deferred(const struct hs_thread *t, uintptr_t p)
{
	int in = 0;

	for (uint64_t i = t->set_pend_tail; i != t->set_pend_head; i++) {
		uintptr_t v = t->set_pend[i % HS_SET_PENDING];
		if ((v & ~PEND_INSERT) == p)
			in = (v & PEND_INSERT) != 0;
	}
	return in;
}

/* p, just sampled, joins the set: -1 when it cannot (then it is not recorded). */
static int set_insert(struct hs_thread *t, uintptr_t p)
{
	int rc;

	if (!set_enter(t)) {
		if (set_defer(t, p | PEND_INSERT) < 0)
			return -1;
		/* at once: a free of p before the queue is done must ask */
		filter_set(filter_index(p));
		return 0;
	}
	rc = set_add_locked(p);
	set_leave(t);
	if (rc < 0)
		hs_disable("out of memory for the sampled-block set; tracing stopped");
	return rc;
}

/* p was sampled: in the set, or queued by a handler to join it. */
static int set_contains(struct hs_thread *t, uintptr_t p)
{
	return set_probe(t, p) || (t->set_pend_head != t->set_pend_tail && set_deferred(t, p));
}

/* p was sampled, and leaves the set (from a handler interrupting the set's lock, later; a full queue leaves it in). */
static int set_remove_slow(struct hs_thread *t, uintptr_t p)
{
	int found;

	if (!set_contains(t, p))
		return 0;
	if (!set_enter(t)) {
		(void)set_defer(t, p);
		return 1;
	}
	found = set_del_locked(p);
	set_leave(t);
	/* found without the lock but gone under it: freed meanwhile by another thread (a double free) */
	return found;
}

/* Under the lock, with nothing recording: an empty set, its bits cleared (bit 0 too, which full mode sets). */
static void set_clear_locked(void)
{
	struct sset *s = atomic_load_explicit(&set_cur, memory_order_relaxed);

	for (size_t i = 0; s && i <= s->mask; i++) {
		uintptr_t v = atomic_load_explicit(&s->slot[i], memory_order_relaxed);
		if (v > SET_TOMB) {
			filter_count[filter_index(v)] = 0;
			filter_clear(filter_index(v));
		}
	}
	atomic_store(&set_cur, NULL);
	if (s)
		set_retire(s);
	filter_clear(0);
}

/*
 * Before each start, while no hook records (not active): sampled mode
 * starts from an empty set, since the blocks sampled for an earlier trace
 * (or by the parent of a forked child) are not in this one. The boot
 * blocks go in, so that their frees leave the fast path. A forked child
 * is alone: a lock some other thread held at the fork is gone with it.
 */
void hs_hooks_configure(int forked)
{
	unsigned n = atomic_load(&boot_n);
	int rc = 0;

	if (forked)
		hs_lock_reset(&set_lock);
	hs_lock_take(&set_lock);
	set_clear_locked();
	if (!hs_g.cfg.sample_bytes) {
		filter_set(0);
		atomic_store_explicit(&filter_mask, 0, memory_order_relaxed);
	} else {
		atomic_store_explicit(&filter_mask, FILTER_BITS - 1, memory_order_relaxed);
		for (unsigned i = 0; i < n && i < BOOT_MAX && rc == 0; i++)
			rc = set_add_locked((uintptr_t)boot_list[i]);
	}
	hs_lock_release(&set_lock);
	if (rc < 0)
		hs_disable("out of memory for the sampled-block set; tracing stopped");
}

static inline int set_remove(struct hs_thread *t, uintptr_t p)
{
	return set_may_hold(p) && set_remove_slow(t, p);
}

static int64_t next_sample(struct hs_thread *t)
{
	double u;

	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	u = (double)((t->rng * 0x2545f4914f6cdd1dull) >> 11) * (1.0 / 9007199254740992.0);
	return (int64_t)(-log1p(-u) * (double)hs_g.cfg.sample_bytes) + 1;
}

/* the ring */

static void wait_for_room(struct hs_thread *t, uint64_t slot, unsigned n)
{
	unsigned spins = 0;
	int e = errno;   /* a timed-out futex wait sets it: the program's stays */

	while (slot + n - atomic_load_explicit(&t->tail, memory_order_acquire) > HS_RING_EVENTS) {
		if (!hs_g.writer_running || hs_g.after_fini) {
			/* no writer to wait for (early start-up, exit): drain ourselves */
			sigset_t old;
			atomic_store_explicit(&t->head, slot, memory_order_release);
			hs_internal_enter(t, &old);
			hs_writer_flush(1);
			hs_internal_leave(t, &old);
			if (slot + n - atomic_load(&t->tail) > HS_RING_EVENTS) {
				hs_disable("cannot drain the event buffer; tracing stopped");
				errno = e;
				return;
			}
			continue;
		}
		hs_writer_wake();
		if (++spins > 64) {
			uint32_t seen = atomic_load(&hs_g.room);
			atomic_fetch_add(&hs_g.room_waiters, 1);
			/* asked again after saying so: a writer that freed room in between saw the waiter */
			if (slot + n - atomic_load(&t->tail) > HS_RING_EVENTS)
				hs_writer_wait_room(seen);
			atomic_fetch_sub(&hs_g.room_waiters, 1);
		}
		/* a child made by a raw clone() has no writer: stop instead of waiting forever (half a second of sleeps) */
		if ((spins & 0xff) == 0 && getpid() != hs_g.pid) {
			atomic_store(&hs_g.state, HS_INERT);
			break;
		}
	}
	errno = e;
}

/*
 * Enters a recording; the outermost one leaves its stack pointer, which a
 * handler's jump out of it compares with the jump's target (jump_out).
 */
static inline void depth_enter(struct hs_thread *t)
{
	if (t->depth++ == 0) {
		uintptr_t sp;
		__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
		t->hook_sp = sp;
	}
}

/*
 * Tests (HEAPSCOPE_TEST_RAISE_AT=n): SIGUSR1 the n-th time a thread looks
 * for room, its slots taken and not written, as if a timer went off there.
 * With HEAPSCOPE_TEST_RAISE_FULL=1 the writer stalls from then on, and the
 * signal comes once the slots lie past the ring's room: a timer going off
 * while the hook waits for a writer that got no CPU. Off the per-event
 * path: a ring's room is read once per stretch.
 */
__attribute__((noinline, cold)) static void test_raise(struct hs_thread *t, uint64_t slot, unsigned n)
{
	static long looks;

	if (hs_g.cfg.raise_full && atomic_load(&hs_g.test_stall)) {
		if (slot + n > atomic_load(&t->tail) + HS_RING_EVENTS) {
			atomic_store(&hs_g.test_stall, 0);
			raise(SIGUSR1);
		}
		return;
	}
	if (__atomic_add_fetch(&looks, 1, __ATOMIC_RELAXED) != hs_g.cfg.raise_at)
		return;
	if (!hs_g.cfg.raise_full) {
		raise(SIGUSR1);
		return;
	}
	/*
	 * Already past the room (a writer slow on a busy machine let the ring
	 * fill before this look): the hook would wait for a writer stalled
	 * from now on, with no later look to raise the signal, and the test
	 * hung (5 runs of 20 beside two busy loops). The tail read after this
	 * one only moves on, so a look with room left cannot end up waiting.
	 */
	atomic_store(&hs_g.test_stall, 1);
	if (slot + n > atomic_load(&t->tail) + HS_RING_EVENTS) {
		atomic_store(&hs_g.test_stall, 0);
		raise(SIGUSR1);
	}
}

/* How far ahead of its events a thread asks for the ring's lines (ev_begin) */
#define HS_RING_AHEAD 64

/* Reserves n slots (1, or 2 with an extension); NULL when the event cannot be recorded. */
static inline struct hs_ev *ev_begin(struct hs_thread *t, unsigned n)
{
	uint64_t slot;
	struct hs_ev *e;

	depth_enter(t);
	/*
	 * One instruction: a nested handler's event gets the next slots, never
	 * these. A handler may wait for room too: the writer drains everything
	 * up to the interrupted event's slot, and that is room enough.
	 */
	slot = hs_local_xadd(&t->reserve, n);
	if (unlikely(slot + n > t->room)) {
		if (unlikely(hs_g.cfg.raise_at))
			test_raise(t, slot, n);
		/* tail only moves forward: the room it gave stays valid, so it is read once per stretch, not per event */
		uint64_t room = atomic_load_explicit(&t->tail, memory_order_relaxed) + HS_RING_EVENTS;
		if (slot + n > room) {
			wait_for_room(t, slot, n);
			if (atomic_load(&hs_g.state) != HS_ACTIVE) {
				t->reserve -= n;
				t->depth--;
				return NULL;
			}
			room = atomic_load_explicit(&t->tail, memory_order_relaxed) + HS_RING_EVENTS;
		}
		t->room = room;
	}
	e = &t->ring[slot & (HS_RING_EVENTS - 1)];
	/*
	 * The writer read these lines last, from its core: asked for with
	 * intent to write some events ahead, they are ours by the time we
	 * write them. (PREFETCHW: a no-op where the CPU lacks it.)
	 */
	__asm__ volatile("prefetchw %0" : : "m"(t->ring[(slot + HS_RING_AHEAD) & (HS_RING_EVENTS - 1)]));
	e->ext = (uint16_t)(n - 1);
	return e;
}

static inline struct hs_ev_ext *ev_ext(struct hs_thread *t, const struct hs_ev *e)
{
	return (struct hs_ev_ext *)&t->ring[((size_t)(e - t->ring) + 1) & (HS_RING_EVENTS - 1)];
}

static inline void ev_end(struct hs_thread *t)
{
	if (--t->depth == 0) {
		uint64_t h = t->reserve;
		atomic_store_explicit(&t->head, h, memory_order_release);
		/*
		 * every 1024 events, call the writer if half the ring waits: at a
		 * quarter, the events held back for ordering (200 us of them) and
		 * what came during the writer's 100 us nap crossed it, so the
		 * program woke the writer (a futex wake and an IPI) every few
		 * hundred microseconds instead of the writer's own timer
		 */
		if (unlikely((h & 1023) == 0)) {
			if (h - atomic_load_explicit(&t->tail, memory_order_relaxed) >= HS_RING_EVENTS / 2) {
				if (!hs_g.writer_running)
					hs_ensure_writer();
				hs_writer_wake();
			}
			/* the loader's changes, which the writer leaves to us while glibc believes us alone (single.c) */
			if (atomic_load_explicit(&hs_g.poll_modules, memory_order_relaxed) &&
			    atomic_exchange(&hs_g.poll_modules, 0)) {
				sigset_t old;
				hs_internal_enter(t, &old);
				hs_modules_poll();
				hs_internal_leave(t, &old);
			}
		}
		if (unlikely(hs_g.after_fini)) {
			sigset_t old;
			hs_internal_enter(t, &old);
			hs_writer_flush(1);
			hs_internal_leave(t, &old);
		}
	}
}

static inline struct hs_thread *tracing_thread(void)
{
	struct hs_thread *t;

	if (likely(atomic_load_explicit(&hs_g.state, memory_order_relaxed) != HS_ACTIVE))
		return NULL;
	t = hs_thread_get();
	if (!t || t->internal)
		return NULL;
	return t;
}

/*
 * The hot hooks' one question: the thread's state, NULL for the cold path
 * (the real functions not found yet, the thread's first event, tracer code
 * running, or no tracing). The state exists once tracing has started, so
 * the real functions are known; whether tracing is still active is asked
 * only by the paths that record (*_recorded), since counting the calls of
 * an inactive tracer is harmless: start() sets the counts' base.
 */
static inline struct hs_thread *hook_thread(void)
{
	return hs_tls_hook;
}

/*
 * No thread state and no tracing (the library inert, stopped, or not yet
 * started): what the cold path would end in, the real function, taken
 * without a frame or a jump to the cold section. An inert preload cost
 * churn 1.24x native that way.
 */
static inline int passing_through(void)
{
	return likely(real.free != NULL) && atomic_load_explicit(&hs_g.state, memory_order_relaxed) != HS_ACTIVE;
}

static inline int recording(void)
{
	return likely(atomic_load_explicit(&hs_g.state, memory_order_relaxed) == HS_ACTIVE);
}

static inline void count(struct hs_thread *t, int fn, uint64_t bytes)
{
	hs_local_add(&t->calls[fn], 1);
	hs_local_add(&t->bytes[fn], bytes);
}

/*
 * Stamps without the fence. The fence keeps an event's TSC read from
 * running ahead of the load that gave the thread its pointer, so that a
 * free is never stamped before the allocation of its block in another
 * thread, nor an allocation before the free, in another thread, of the
 * block it reuses. It costs as much as the read (9 ns here), twice per
 * block, and most blocks never leave their thread.
 *
 * In full mode each event on block p leaves, in own[] at p's slot, p with
 * its thread's tag (and OWN_FREED for a free), before the call that can
 * hand p to another thread (a free) and before the program sees p (an
 * allocation). An event that finds there its own thread's previous event
 * on this very block needs no fence: no other thread's event on p came
 * in between, since that event would have written the slot first, and
 * x86 loads see stores in the order their causes did (the allocator
 * handing p from one thread to the other included). Anything else found
 * (another thread, another block sharing the slot, nothing) takes the
 * fence. Sampled mode records few events, and not all events on a block:
 * it takes the fence whenever more than one thread has made events.
 */
#define OWN_SLOTS (1u << 20)
#define OWN_FREED (1ull << 63)
#define OWN_TAG_SHIFT 47

static _Atomic uint64_t *own;
static _Atomic uint32_t own_tags;

/*
 * While one thread alone has made events, there is no other thread's event
 * to order against: its stamps need neither the fence nor the slots. This
 * holds that thread's tag, 0 before any event, SOLO_MANY once a second
 * thread has made one (for good). A thread that sees its own tag here saw
 * it after the load that gave it its pointer; had another thread's event
 * handed the block over, that thread would have stored SOLO_MANY before it,
 * and x86 loads would see that store first.
 */
#define SOLO_MANY UINT64_MAX
static _Atomic uint64_t solo_tag;

/* A tag per thread (16 bits); after 65,535 threads, 0: that thread always takes the fence. */
uint64_t hs_thread_tag(void)
{
	uint32_t n = atomic_fetch_add(&own_tags, 1) + 1;

	return n <= 0xffff ? (uint64_t)n << OWN_TAG_SHIFT : 0;
}

/* At every start: a trace's first events must not trust slots left by events that were not recorded. */
void hs_stamps_reset(void)
{
	atomic_store(&solo_tag, 0);
	/* no run outlives a start: a forked child's thread would keep the parent's until its writer ticks */
	hs_stamp_epoch_end(0);
	if (hs_g.cfg.sample_bytes) {
		own = NULL;
		return;
	}
	if (own) {
		hs_zero((void *)own, OWN_SLOTS * sizeof(*own));
		return;
	}
	own = hs_map(OWN_SLOTS * sizeof(*own));
	/* a followed child zeroes it again (above), an unfollowed one never reads it */
	if (own)
		hs_wipe_on_fork((void *)own, OWN_SLOTS * sizeof(*own));
}

/* t's first stamps: 1 when it is the one thread; else the time there was one ends. */
__attribute__((noinline, cold)) static int solo_claim(struct hs_thread *t)
{
	uint64_t expected = 0;

	if (t->tag && (atomic_compare_exchange_strong(&solo_tag, &expected, t->tag) || expected == t->tag))
		return 1;
	atomic_store(&solo_tag, SOLO_MANY);
	return 0;
}

/*
 * In an epoch without runs every stamp is fresh, till the writer's next
 * pass: a tick (10 ms) away when its last pass found few events. After a
 * lull (Python's collector walking its objects) a program allocating fast
 * again read the clock at every event for those milliseconds: 4.8M of
 * Python's 37.7M events did. Events that fast ask the writer for runs.
 */
static void ask_runs(struct hs_thread *t, uint32_t epoch, uint64_t ts)
{
	if (t->stamp_epoch != epoch) {
		t->ask_count = 0;
		t->ask_from = ts;
	} else if (++t->ask_count == HS_STAMP_ASK &&
		   ts - t->ask_from <= atomic_load_explicit(&hs_g.ask_ticks, memory_order_relaxed) &&
		   !atomic_exchange(&hs_g.runs_asked, 1)) {
		hs_writer_wake();
	}
}

/* A fresh stamp without the fence, kept from going back in t's own order; it may start a run. */
__attribute__((noinline)) static uint64_t unfenced_fresh(struct hs_thread *t)
{
	uint32_t epoch = atomic_load_explicit(&hs_g.stamp_epoch, memory_order_relaxed);
	uint64_t ts = hs_use_tsc ? __rdtsc() : hs_now_ns();

	if (!(epoch & 1))
		ask_runs(t, epoch, ts);

	t->stamp_epoch = epoch;
	/* an even epoch is one the writer may not end soon (it sleeps, or compresses): every stamp fresh */
	t->stamp_left = epoch & 1 ? HS_STAMP_RUN - 1 : 0;
	if (ts < t->last_ts)
		ts = t->last_ts;
	return t->last_ts = ts;
}

/*
 * A stamp without the fence. Reading the TSC took 7.7 ns here, a quarter
 * of a traced malloc/free pair's cost; a run of a thread's events in one
 * writer pass (about HS_STAMP_TICK_NS, the default resolution) takes the
 * run's first stamp instead, early by less than the pass. Only
 * for events no other thread's event can have to follow (the caller's
 * rule), so order across threads holds whatever the stamps.
 */
static inline uint64_t unfenced(struct hs_thread *t)
{
	if (likely(t->stamp_left) &&
	    atomic_load_explicit(&hs_g.stamp_epoch, memory_order_relaxed) == t->stamp_epoch) {
		t->stamp_left--;
		return t->last_ts;
	}
	return unfenced_fresh(t);
}

/*
 * The stamp of t's event on p (freed: a free); the slot then names this
 * event. *own_ev is HS_EV_OWN when no other thread's event on p can have
 * come since t's previous one: what lets the stamp skip the fence lets
 * the writer move the event ahead of other threads' events too.
 */
static inline uint64_t stamp(struct hs_thread *t, uintptr_t p, uint64_t freed, uint8_t *own_ev)
{
	_Atomic uint64_t *slot;
	uint64_t key, ts, solo = atomic_load_explicit(&solo_tag, memory_order_relaxed);

	*own_ev = HS_EV_OWN;
	if (likely(solo == t->tag && solo) || (solo != SOLO_MANY && solo_claim(t)))
		return unfenced(t);
	*own_ev = 0;
	if (!own)
		return hs_ticks();
	/*
	 * Neighbouring blocks, neighbouring slots; each 64 MiB of addresses
	 * starts at its own scattered place. glibc's per-thread arenas sit at
	 * multiples of 64 MiB, and threads doing the same work have blocks at
	 * the same offsets in them: folding the higher bits in with a XOR put
	 * those a few slots apart, on one cache line that the threads' cores
	 * then passed around (a sixth of a 4-thread allocation's time).
	 */
	slot = &own[((p >> 4) + ((p >> 26) * 0x9e3779b97f4a7c15ull >> 44)) & (OWN_SLOTS - 1)];
	key = (t->tag && !(p >> OWN_TAG_SHIFT)) ? p | t->tag : 0;
	if (key && atomic_load_explicit(slot, memory_order_relaxed) == (key | (freed ^ OWN_FREED))) {
		ts = unfenced(t);
		*own_ev = HS_EV_OWN;
	} else
		ts = t->last_ts = hs_ticks();
	atomic_store_explicit(slot, key ? key | freed : 0, memory_order_relaxed);
	return ts;
}

/* In sampled mode the caller has checked that p was sampled. */
static void record_free(struct hs_thread *t, int fn, void *p, uint64_t ts, uint8_t own_ev)
{
	struct hs_ev *e;

	e = ev_begin(t, 1);
	if (!e)
		return;
	e->ts = ts;
	e->type = HS_EV_FREE | own_ev;
	e->fn = (uint8_t)fn;
	e->a = (uintptr_t)p;
	ev_end(t);
}

/*
 * Sampled mode decides before the call: an allocation that only counts down
 * is a tail call into the real function, with no frame of its own. The rest
 * is out of line.
 */
static inline int sample_skips(struct hs_thread *t, size_t size)
{
	/* a request of 0 bytes counts as 1: it takes a block, which a leak of them adds up (4.1) */
	uint64_t n = (uint64_t)size + (size == 0);

	/* full mode leaves sample_left at 0, so that no size is below it: no need to ask the mode */
	if (n < (uint64_t)t->sample_left) {
		t->sample_left -= (int64_t)n;
		return 1;
	}
	return 0;
}

/* from: a frame of ours the backtrace's walk may start at (hs_unwind), else NULL */
__attribute__((noinline)) static void record_alloc_slow(struct hs_thread *t, int fn, void *p, size_t size, void *old,
							const void *from)
{
	struct hs_ev *e;
	uint32_t stack;
	uint64_t ts;
	uint8_t own_ev;

	if (hs_g.cfg.sample_bytes) {
		/*
		 * A thread's countdown starts at 0, drawn here at its first
		 * allocation: else that one would be sampled for sure, which
		 * the estimates weigh as if by chance. 3,400 short threads
		 * of 3.2 MB in all were estimated at 1.78 GB.
		 */
		if (unlikely(!t->sample_left)) {
			t->sample_left = next_sample(t);
			if (sample_skips(t, size))
				return;
		}
		t->sample_left = next_sample(t);
		if (set_insert(t, (uintptr_t)p) < 0)
			return;
	}
	/* stamped before the walk: the fence then waits for the allocator's loads, not for the walk's too */
	ts = stamp(t, (uintptr_t)p, 0, &own_ev);
	depth_enter(t);
	stack = hs_stack_capture(t, from);
	t->depth--;
	e = ev_begin(t, old ? 2 : 1);
	if (!e)
		return;
	e->ts = ts;
	e->type = HS_EV_ALLOC | own_ev;
	e->fn = (uint8_t)fn;
	e->a = (uintptr_t)p;
	e->b = size;
	e->stack = stack;
	if (old)
		ev_ext(t, e)->c = (uintptr_t)old;
	ev_end(t);
}

/* After the call (realloc, the aligned family): most sampled allocations only count down. */
static inline void record_alloc(struct hs_thread *t, int fn, void *p, size_t size, void *old)
{
	if (!sample_skips(t, size))
		record_alloc_slow(t, fn, p, size, old, NULL);
}

__attribute__((noinline)) static void *malloc_recorded(struct hs_thread *t, size_t n)
{
	void *p = real.malloc(n);

	if (p && recording())
		/* the walk starts here, not three frames of ours further in: 6% of a traced malloc/free pair */
		record_alloc_slow(t, HS_FN_MALLOC, p, n, NULL, __builtin_frame_address(0));
	return p;
}

/* Before the real functions are found, and a thread's first event: out of line, so malloc needs no frame. */
__attribute__((noinline, cold)) static void *malloc_cold(size_t n)
{
	struct hs_thread *t;

	if (!ensure_ready())
		return boot_alloc(n);
	if ((t = tracing_thread()) != NULL) {
		count(t, HS_FN_MALLOC, n);
		if (!sample_skips(t, n))
			return malloc_recorded(t, n);
	} else if (unlikely(hs_tls_thread && hs_tls_thread->scratch)) {
		void *p = scratch_alloc(n, 0);
		if (p)
			return p;
	}
	return real.malloc(n);
}

HS_EXPORT HS_TAIL_HOOK void *malloc(size_t n)
{
	struct hs_thread *t = hook_thread();

	if (unlikely(!t)) {
		if (passing_through())
			return real.malloc(n);
		return malloc_cold(n);
	}
	count(t, HS_FN_MALLOC, n);
	if (!sample_skips(t, n))
		return malloc_recorded(t, n);
	return real.malloc(n);
}

/* A free of p that set_may_hold() let through: recorded if p was sampled (always in full mode); before the real free, since once freed another thread may get the address. */
static void note_free(struct hs_thread *t, void *p)
{
	uint8_t own_ev;
	uint64_t ts;

	if (!hs_g.cfg.sample_bytes || set_remove_slow(t, (uintptr_t)p)) {
		ts = stamp(t, (uintptr_t)p, OWN_FREED, &own_ev);
		record_free(t, HS_FN_FREE, p, ts, own_ev);
	}
}

/* The recorded part of free, out of line: the usual sampled-mode free then needs no stack frame. */
__attribute__((noinline)) static void free_recorded(struct hs_thread *t, void *p)
{
	if (unlikely(is_boot(p)))
		return;
	if (recording())
		note_free(t, p);
	real.free(p);
}

__attribute__((noinline, cold)) static void free_cold(void *p)
{
	struct hs_thread *t;

	if (is_boot(p) || !ensure_ready())
		return;
	if (p && (t = tracing_thread()) != NULL) {
		hs_local_add(&t->calls[HS_FN_FREE], 1);
		if (set_may_hold((uintptr_t)p)) {
			free_recorded(t, p);
			return;
		}
	}
	real.free(p);
}

/* A boot block takes the cold path, or the recorded one (full mode; sampled mode has it in its set). */
HS_EXPORT HS_TAIL_HOOK void free(void *p)
{
	struct hs_thread *t = hook_thread();

	if (unlikely(!t)) {
		if (passing_through() && !is_boot(p))
			real.free(p);
		else
			free_cold(p);
		return;
	}
	if (p) {
		hs_local_add(&t->calls[HS_FN_FREE], 1);
		if (set_may_hold((uintptr_t)p)) {
			free_recorded(t, p);
			return;
		}
	}
	real.free(p);
}

__attribute__((noinline)) static void *calloc_recorded(struct hs_thread *t, size_t n, size_t size)
{
	void *p = real.calloc(n, size);

	if (p && recording())
		record_alloc_slow(t, HS_FN_CALLOC, p, n * size, NULL, __builtin_frame_address(0));
	return p;
}

__attribute__((noinline, cold)) static void *calloc_cold(size_t n, size_t size)
{
	struct hs_thread *t;

	if (!ensure_ready()) {
		if (size && n > SIZE_MAX / size)
			return NULL;
		return boot_alloc(n * size); /* static memory is already zero */
	}
	if ((t = tracing_thread()) != NULL) {
		count(t, HS_FN_CALLOC, (uint64_t)n * size);
		if (!(size && n > SIZE_MAX / size) && !sample_skips(t, n * size))
			return calloc_recorded(t, n, size);
	} else if (unlikely(hs_tls_thread && hs_tls_thread->scratch) && !(size && n > SIZE_MAX / size)) {
		void *p = scratch_alloc(n * size, 1);
		if (p)
			return p;
	}
	return real.calloc(n, size);
}

HS_EXPORT HS_TAIL_HOOK void *calloc(size_t n, size_t size)
{
	struct hs_thread *t = hook_thread();

	if (unlikely(!t)) {
		if (passing_through())
			return real.calloc(n, size);
		return calloc_cold(n, size);
	}
	count(t, HS_FN_CALLOC, (uint64_t)n * size);
	/* an overflowing n * size fails in the real calloc: never sampled */
	if (!(size && n > SIZE_MAX / size) && !sample_skips(t, n * size))
		return calloc_recorded(t, n, size);
	return real.calloc(n, size);
}

/* A moved or freed old block is recorded as a free stamped before the call, then the new block. */
static void *do_realloc(int fn, void *old, size_t n, size_t size)
{
	struct hs_thread *t;
	uint64_t before = 0;
	uint8_t before_own = 0;
	size_t bytes = n * size;
	int tracked;
	void *p;

	if (unlikely(is_boot(old))) {
		void *np = malloc(bytes);
		if (np)
			memcpy(np, old, bytes < (size_t)(boot_buf + sizeof(boot_buf) - (char *)old) ?
				   bytes : (size_t)(boot_buf + sizeof(boot_buf) - (char *)old));
		return np;
	}
	t = tracing_thread();
	/* a scratch block's realloc came above (a boot block); a new one, in the scratch slot too */
	if (unlikely(!t && !old && hs_tls_thread && hs_tls_thread->scratch) && (p = scratch_alloc(bytes, 0)))
		return p;
	tracked = t && old && (!hs_g.cfg.sample_bytes || (set_may_hold((uintptr_t)old) && set_contains(t, (uintptr_t)old)));
	if (tracked)
		before = stamp(t, (uintptr_t)old, OWN_FREED, &before_own);
	/* glibc's reallocarray calls realloc through the PLT: that would record it twice */
	p = real.realloc(old, bytes);
	if (unlikely(t != NULL)) {
		count(t, fn, bytes);
		if (tracked && (p || bytes == 0) && (!hs_g.cfg.sample_bytes || set_remove(t, (uintptr_t)old)))
			record_free(t, fn, old, before, before_own);
		if (p)
			record_alloc(t, fn, p, bytes, old);
	}
	return p;
}

HS_EXPORT void *realloc(void *old, size_t n)
{
	if (unlikely(!ensure_ready()))
		return boot_alloc(n);
	return do_realloc(HS_FN_REALLOC, old, n, 1);
}

HS_EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
	if (unlikely(!ensure_ready()))
		return NULL;
	if (size && n > SIZE_MAX / size) {
		struct hs_thread *t = tracing_thread();
		if (t)
			count(t, HS_FN_REALLOCARRAY, 0);
		errno = ENOMEM;
		return NULL;
	}
	return do_realloc(HS_FN_REALLOCARRAY, old, n, size);
}

/* After an allocating call that the hook did not count beforehand (the aligned family, C++'s new): count and record it. */
static void *traced_after(int fn, void *p, size_t n)
{
	struct hs_thread *t = tracing_thread();

	if (unlikely(t != NULL)) {
		count(t, fn, n);
		if (p)
			record_alloc(t, fn, p, n, NULL);
	}
	return p;
}

HS_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	int rc;

	if (unlikely(!ensure_ready()))
		return ENOMEM;
	rc = real.posix_memalign(out, align, n);
	traced_after(HS_FN_POSIX_MEMALIGN, rc == 0 ? *out : NULL, n);
	return rc;
}

HS_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (unlikely(!ensure_ready()))
		return NULL;
	return traced_after(HS_FN_ALIGNED_ALLOC, real.aligned_alloc(align, n), n);
}

HS_EXPORT void *memalign(size_t align, size_t n)
{
	if (unlikely(!ensure_ready()))
		return NULL;
	return traced_after(HS_FN_MEMALIGN, real.memalign(align, n), n);
}

HS_EXPORT void *valloc(size_t n)
{
	if (unlikely(!ensure_ready()))
		return NULL;
	return traced_after(HS_FN_VALLOC, real.valloc(n), n);
}

HS_EXPORT void *pvalloc(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (unlikely(!ensure_ready()))
		return NULL;
	/* pvalloc rounds the request up to whole pages: that is what the program gets */
	return traced_after(HS_FN_PVALLOC, real.pvalloc(n), n ? (n + page - 1) & ~(page - 1) : page);
}

HS_EXPORT size_t malloc_usable_size(void *p)
{
	struct hs_thread *t;

	if (unlikely(is_boot(p)))
		return 0;
	if (unlikely(!ensure_ready()) || !real.malloc_usable_size)
		return 0;
	if ((t = tracing_thread()) != NULL)
		count(t, HS_FN_MALLOC_USABLE_SIZE, 0);
	return real.malloc_usable_size(p);
}

/* mappings and the program break: recorded when the program (not the tracer) asks */

static struct hs_thread *mapping_thread(void)
{
	struct hs_thread *t = tracing_thread();
	return t && t->depth == 0 ? t : NULL;
}

static void record_map(struct hs_thread *t, int type, int fn, uint64_t a, uint64_t b, uint64_t c, uint64_t d,
		       int with_stack)
{
	uint32_t stack = 0;
	struct hs_ev *e;

	/*
	 * tcmalloc and jemalloc map and grow their heaps from inside malloc,
	 * holding their own locks: this walk must not allocate (libdw's CFI
	 * reading would, and wait for those locks forever).
	 */
	if (with_stack) {
		depth_enter(t);
		t->no_alloc++;
		stack = hs_stack_capture(t, NULL);
		t->no_alloc--;
		t->depth--;
	}
	e = ev_begin(t, type == HS_EV_MMAP || type == HS_EV_MREMAP ? 2 : 1);
	if (!e)
		return;
	e->ts = hs_ticks();
	e->type = (uint8_t)type;
	e->fn = (uint8_t)fn;
	e->a = a;
	e->b = b;
	e->stack = stack;
	if (e->ext) {
		ev_ext(t, e)->c = c;
		ev_ext(t, e)->d = d;
	}
	ev_end(t);
}

HS_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct hs_thread *t;
	void *p;

	if (unlikely(!real.mmap))
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	p = real.mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED && (t = mapping_thread()) != NULL) {
		count(t, HS_FN_MMAP, len);
		record_map(t, HS_EV_MMAP, HS_FN_MMAP, (uintptr_t)p, len,
			   ((uint64_t)(uint32_t)prot << 32) | (uint32_t)flags, 0, 1);
	}
	return p;
}

HS_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

HS_EXPORT int munmap(void *addr, size_t len)
{
	struct hs_thread *t;

	if (unlikely(!real.munmap))
		return (int)syscall(SYS_munmap, addr, len);
	if ((t = mapping_thread()) != NULL) {
		count(t, HS_FN_MUNMAP, len);
		record_map(t, HS_EV_MUNMAP, HS_FN_MUNMAP, (uintptr_t)addr, len, 0, 0, 0);
	}
	return real.munmap(addr, len);
}

HS_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	struct hs_thread *t;
	void *target = NULL, *p;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		target = va_arg(ap, void *);
		va_end(ap);
	}
	if (unlikely(!real.mremap))
		return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, target);
	p = real.mremap(old, old_len, new_len, flags, target);
	if (p != MAP_FAILED && (t = mapping_thread()) != NULL) {
		count(t, HS_FN_MREMAP, new_len);
		record_map(t, HS_EV_MREMAP, HS_FN_MREMAP, (uintptr_t)old, old_len, (uintptr_t)p, new_len, 1);
	}
	return p;
}

/*
 * An allocator loaded before us (jemalloc first in LD_PRELOAD) calls sbrk
 * holding its own lock, before anything has started us: starting there
 * allocated (pthread_getattr_np opens /proc/self/maps) and waited on that
 * lock for good. Until then brk and sbrk are libc's, with no start.
 */
extern void *__curbrk;
extern void *__sbrk(intptr_t inc);

static int plain_brk(void *addr)
{
	void *cur = (void *)syscall(SYS_brk, addr);

	__curbrk = cur;
	if ((uintptr_t)cur < (uintptr_t)addr) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

HS_EXPORT int brk(void *addr)
{
	struct hs_thread *t;
	void *before;
	int rc;

	if (unlikely(!real.brk || !real.sbrk))
		return plain_brk(addr);
	before = real.sbrk(0);
	rc = real.brk(addr);
	if (rc == 0 && (t = mapping_thread()) != NULL) {
		count(t, HS_FN_BRK, 0);
		record_map(t, HS_EV_BRK, HS_FN_BRK, (uintptr_t)before, (uintptr_t)addr, 0, 0, 1);
	}
	return rc;
}

HS_EXPORT void *sbrk(intptr_t inc)
{
	struct hs_thread *t;
	void *p;

	if (unlikely(!real.sbrk))
		return __sbrk(inc);
	p = real.sbrk(inc);
	if (p != (void *)-1 && inc && (t = mapping_thread()) != NULL) {
		count(t, HS_FN_SBRK, inc > 0 ? (uint64_t)inc : 0);
		record_map(t, HS_EV_BRK, HS_FN_SBRK, (uintptr_t)p, (uintptr_t)p + (uintptr_t)inc, 0, 0, 1);
	}
	return p;
}

/* exec and _exit: the rings would be lost with the process image */

extern char **environ;

/*
 * With --follow-exec the new image must load us again even when the program
 * passes an environment of its own; it also learns it is not the root.
 */
static char **child_env(char *const envp[], char **buf, size_t cap, char *preload, size_t plen)
{
	size_t n = 0;
	const char *self = hs_self_path();
	const char *old_preload = NULL;
	int has[HS_FOLLOW_VARS] = { 0 };

	for (size_t i = 0; envp && envp[i] && n < cap - 8; i++) {
		if (!strncmp(envp[i], "HEAPSCOPE_CHILD=", 16))
			continue;
		if (!strncmp(envp[i], "LD_PRELOAD=", 11)) {
			old_preload = envp[i] + 11;
			continue;
		}
		for (unsigned k = 0; k < HS_FOLLOW_VARS; k++) {
			size_t l = strlen(hs_follow_vars[k]);
			has[k] |= !strncmp(envp[i], hs_follow_vars[k], l) && envp[i][l] == '=';
		}
		buf[n++] = envp[i];
	}
	/* the program's own values stand; ours, as at the start, fill in what it cleared */
	for (unsigned k = 0; k < HS_FOLLOW_VARS; k++)
		if (!has[k] && hs_follow_env(k))
			buf[n++] = (char *)hs_follow_env(k);
	preload[0] = 0;
	hs_strlcat(preload, "LD_PRELOAD=", plen);
	if (!old_preload || !strstr(old_preload, self)) {
		hs_strlcat(preload, self, plen);
		if (old_preload)
			hs_strlcat(preload, ":", plen);
	}
	if (old_preload)
		hs_strlcat(preload, old_preload, plen);
	buf[n++] = preload;
	buf[n++] = "HEAPSCOPE_CHILD=1";
	buf[n] = NULL;
	return buf;
}

/*
 * The new image's environment, in memory mapped for it: an exec that
 * succeeds takes the mapping away, one that fails unmaps it. It was 40 KiB
 * of the calling thread's stack, which a thread with a 16 or 32 KiB stack
 * does not have (its fork child's exec died of it), and it cut
 * environments of over 4,088 variables short.
 */
struct child_env {
	char **env;
	void *map;
	size_t len;
};

/* The size of the new environment and, in vars, how many pointers it may hold. */
static size_t child_env_size(char *const envp[], size_t *vars, size_t *plen)
{
	size_t n = 0;

	*plen = 64 + strlen(hs_self_path());
	for (; envp && envp[n]; n++)
		if (!strncmp(envp[n], "LD_PRELOAD=", 11))
			*plen += strlen(envp[n]);
	*vars = n + 16;
	return *vars * sizeof(char *) + *plen;
}

static int child_env_make(char *const envp[], struct child_env *ce)
{
	size_t vars, plen;

	ce->len = child_env_size(envp, &vars, &plen);
	if (!(ce->map = hs_map(ce->len)))
		return -1;
	ce->env = child_env(envp, ce->map, vars, (char *)ce->map + vars * sizeof(char *), plen);
	return 0;
}

/*
 * A vfork child shares our memory: a mapping it makes outlives its exec,
 * in the parent, which never unmaps it (a shell that runs a command per
 * line lost a page per command). Its environment goes on the stack, which
 * the parent takes back, when it is small enough for any stack.
 */
#define VFORK_ENV_MAX (16u << 10)

#define WITH_CHILD_ENV(envp, call)                                                           \
	do {                                                                                 \
		struct child_env _ce = { 0 };                                                \
		size_t _vars, _plen, _need;                                                  \
		int _rc, _err;                                                               \
		hs_flush_before_exit(HS_END_EXEC);                                           \
		if (hs_g.cfg.follow_exec && atomic_load(&hs_g.state) == HS_ACTIVE) {         \
			_need = child_env_size(envp, &_vars, &_plen);                        \
			if (getpid() != hs_g.pid && _need <= VFORK_ENV_MAX) {                \
				char *_b = __builtin_alloca(_need);                          \
				envp = child_env(envp, (char **)_b, _vars, _b + _vars * sizeof(char *), _plen); \
			} else if (child_env_make(envp, &_ce) == 0) {                        \
				envp = _ce.env;                                              \
			}                                                                    \
		}                                                                            \
		_rc = call;                                                                  \
		_err = errno;                                                                \
		hs_unmap(_ce.map, _ce.len);                                                  \
		errno = _err;                                                                \
		return _rc;                                                                  \
	} while (0)

/*
 * A child that runs a program untraced (without follow-exec, the tracer
 * took itself out of the environment): counted for the trace's CHILDREN
 * record, as fork_parent counts forks. posix_spawn, system and popen
 * start theirs inside libc, where no fork handler runs; a vfork child
 * shares our memory, and is seen at its exec, still active under another
 * pid. Shells start commands by vfork (dash) or posix_spawn: a wrapper
 * script's trace held the shell's few allocations without a word that
 * the program it ran went untraced.
 */
static void count_untraced_child(void)
{
	if (atomic_load(&hs_g.state) == HS_ACTIVE && !hs_g.cfg.follow_exec)
		atomic_fetch_add(&hs_g.untraced_children, 1);
}

/*
 * system() and popen() start their shell with environ as it is now, which
 * we cannot change under the program's other threads: one whose program
 * cleared its environment runs untraced even with follow-exec, and is
 * counted so.
 */
static void count_shell_child(void)
{
	const char *pre = getenv("LD_PRELOAD"), *out = getenv("HEAPSCOPE_OUTPUT");

	if (atomic_load(&hs_g.state) != HS_ACTIVE)
		return;
	if (!hs_g.cfg.follow_exec || !pre || !strstr(pre, hs_self_path()) || !out || !*out)
		atomic_fetch_add(&hs_g.untraced_children, 1);
}

static void exec_in_vfork_child(void)
{
	if (getpid() != hs_g.pid)
		count_untraced_child();
}

HS_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	if (!ensure_ready() || !real.execve)
		return (int)raw_syscall(SYS_execve, (long)path, (long)argv, (long)envp, 0, 0, 0);
	exec_in_vfork_child();
	WITH_CHILD_ENV(envp, real.execve(path, argv, envp));
}

HS_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	if (!ensure_ready() || !real.execvpe)
		return -1;
	exec_in_vfork_child();
	WITH_CHILD_ENV(envp, real.execvpe(file, argv, envp));
}

HS_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	if (!ensure_ready() || !real.fexecve)
		return -1;
	exec_in_vfork_child();
	WITH_CHILD_ENV(envp, real.fexecve(fd, argv, envp));
}

/* With follow-exec, the spawned program is traced even in an environment of the program's own (as exec's) */
static int spawn_env(char *const **envp, struct child_env *ce)
{
	if (!hs_g.cfg.follow_exec || atomic_load(&hs_g.state) != HS_ACTIVE)
		return 0;
	if (child_env_make(*envp, ce) < 0)
		return -1;
	*envp = ce->env;
	return 0;
}

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
			char *const[], char *const[]);

static int spawn(spawn_fn fn, pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	struct child_env ce = { 0 };
	int rc;

	if (!fn)
		return ENOSYS;
	if (spawn_env(&envp, &ce))
		return ENOMEM;
	rc = fn(pid, path, fa, attr, argv, envp);
	hs_unmap(ce.map, ce.len);
	if (rc == 0)
		count_untraced_child();
	return rc;
}

/* glibc 2.34 and later; where the library has none, the system call itself */
HS_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	if (!ensure_ready() || !real.execveat)
		return (int)raw_syscall(SYS_execveat, dirfd, (long)path, (long)argv, (long)envp, flags, 0);
	exec_in_vfork_child();
	WITH_CHILD_ENV(envp, real.execveat(dirfd, path, argv, envp, flags));
}

HS_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return ensure_ready() ? spawn(real.posix_spawn, pid, path, fa, attr, argv, envp) : ENOSYS;
}

HS_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return ensure_ready() ? spawn(real.posix_spawnp, pid, file, fa, attr, argv, envp) : ENOSYS;
}

HS_EXPORT int system(const char *command)
{
	int rc;

	if (!ensure_ready() || !real.system) {
		errno = ENOSYS;
		return -1;
	}
	rc = real.system(command);
	/* system(NULL) only asks whether there is a shell; -1: no child was started */
	if (command && rc != -1)
		count_shell_child();
	return rc;
}

HS_EXPORT FILE *popen(const char *command, const char *type)
{
	FILE *f;

	if (!ensure_ready() || !real.popen) {
		errno = ENOSYS;
		return NULL;
	}
	f = real.popen(command, type);
	if (f)
		count_shell_child();
	return f;
}

HS_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

HS_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

#define COLLECT_ARGS(first, argv, last_is_env, envp)                 \
	do {                                                         \
		va_list ap;                                          \
		size_t n = 1;                                        \
		va_start(ap, first);                                 \
		while (va_arg(ap, char *))                           \
			n++;                                         \
		va_end(ap);                                          \
		argv = __builtin_alloca((n + 1) * sizeof(char *));   \
		argv[0] = (char *)first;                             \
		va_start(ap, first);                                 \
		for (size_t i = 1; i <= n; i++)                      \
			argv[i] = va_arg(ap, char *);                \
		if (last_is_env)                                     \
			envp = va_arg(ap, char **);                  \
		va_end(ap);                                          \
	} while (0)

HS_EXPORT int execl(const char *path, const char *arg, ...)
{
	char **argv, **envp = environ;
	COLLECT_ARGS(arg, argv, 0, envp);
	return execve(path, argv, envp);
}

HS_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char **argv, **envp = environ;
	COLLECT_ARGS(arg, argv, 0, envp);
	return execvpe(file, argv, envp);
}

HS_EXPORT int execle(const char *path, const char *arg, ...)
{
	char **argv, **envp = environ;
	COLLECT_ARGS(arg, argv, 1, envp);
	return execve(path, argv, envp);
}

HS_EXPORT void _exit(int status)
{
	hs_flush_before_exit(HS_END_UNDERSCORE_EXIT);
	if (real._exit)
		real._exit(status);
	raw_syscall(SYS_exit_group, status, 0, 0, 0, 0, 0);
	__builtin_unreachable();
}

HS_EXPORT void _Exit(int status)
{
	_exit(status);
}

/*
 * syscall(): the ways out of the image that skip libc's wrappers. A
 * program that ended with syscall(SYS_exit_group) lost every event since
 * the writer's last chunk (all of a short run's), and one that exec'd so
 * lost them too, its child untraced under --follow-exec. Every other
 * number goes straight to the kernel, as glibc's syscall() does: the
 * tracer's own calls of it come here as well, before anything is resolved.
 */
HS_EXPORT long syscall(long nr, ...)
{
	va_list ap;
	long a[6];

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	switch (nr) {
	case SYS_exit_group:
		_exit((int)a[0]);
	case SYS_execve:
		return execve((const char *)a[0], (char *const *)a[1], (char *const *)a[2]);
	case SYS_execveat:
		return execveat((int)a[0], (const char *)a[1], (char *const *)a[2], (char *const *)a[3], (int)a[4]);
	default:
		return raw_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
}

/*
 * C++'s operators new and delete. libstdc++'s (and libc++'s) call malloc
 * and free, which we see: those are forwarded untouched, so their frames
 * stay in the backtraces. But jemalloc and tcmalloc define the operators
 * themselves and serve them without calling malloc: a C++ program
 * preloading or linking one of them would show almost nothing. Those are
 * recorded here, as malloc (aligned_alloc for the aligned forms) and free.
 */
enum cxx_op {
	CXX_NEW, CXX_NEW_ARRAY, CXX_NEW_NOTHROW, CXX_NEW_ARRAY_NOTHROW,
	CXX_NEW_ALIGN, CXX_NEW_ARRAY_ALIGN, CXX_NEW_ALIGN_NOTHROW, CXX_NEW_ARRAY_ALIGN_NOTHROW,
	CXX_DELETE, CXX_DELETE_ARRAY, CXX_DELETE_SIZED, CXX_DELETE_ARRAY_SIZED,
	CXX_DELETE_NOTHROW, CXX_DELETE_ARRAY_NOTHROW, CXX_DELETE_ALIGN, CXX_DELETE_ARRAY_ALIGN,
	CXX_DELETE_SIZED_ALIGN, CXX_DELETE_ARRAY_SIZED_ALIGN, CXX_DELETE_ALIGN_NOTHROW,
	CXX_DELETE_ARRAY_ALIGN_NOTHROW, CXX_OPS
};

static const char *const cxx_names[CXX_OPS] = {
	"_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
	"_ZnwmSt11align_val_t", "_ZnamSt11align_val_t", "_ZnwmSt11align_val_tRKSt9nothrow_t",
	"_ZnamSt11align_val_tRKSt9nothrow_t",
	"_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm",
	"_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t", "_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t",
	"_ZdlPvmSt11align_val_t", "_ZdaPvmSt11align_val_t", "_ZdlPvSt11align_val_tRKSt9nothrow_t",
	"_ZdaPvSt11align_val_tRKSt9nothrow_t",
};

enum { CXX_UNRESOLVED, CXX_FORWARD, CXX_DIRECT };

static struct {
	void *fn;
	int mode;     /* CXX_DIRECT: it does not go through malloc/free: record here */
} cxx[CXX_OPS];

/*
 * Where no C++ runtime is in the global scope (a C program that dlopen()s
 * a C++ library with RTLD_LOCAL, whose references still bind to ours), the
 * operators come from malloc and free; new cannot throw from here, so a
 * failed one ends the process, as an uncaught bad_alloc would.
 */
static void *cxx_alloc_or_die(size_t n, size_t align, int nothrow)
{
	void *p = align ? aligned_alloc(align, (n + align - 1) / align * align) : malloc(n ? n : 1);

	if (!p && !nothrow) {
		hs_log("operator new failed and cannot throw from here; aborting", NULL, NULL);
		abort();
	}
	return p;
}

static void *fb_new(size_t n) { return cxx_alloc_or_die(n, 0, 0); }
static void *fb_new_nothrow(size_t n, const void *nt) { (void)nt; return cxx_alloc_or_die(n, 0, 1); }
static void *fb_new_align(size_t n, size_t al) { return cxx_alloc_or_die(n, al, 0); }
static void *fb_new_align_nothrow(size_t n, size_t al, const void *nt) { (void)nt; return cxx_alloc_or_die(n, al, 1); }
static void fb_delete(void *p) { free(p); }
static void fb_delete_2(void *p, size_t x) { (void)x; free(p); }
static void fb_delete_3(void *p, size_t x, size_t y) { (void)x; (void)y; free(p); }

static void *const cxx_fallback[CXX_OPS] = {
	(void *)fb_new, (void *)fb_new, (void *)fb_new_nothrow, (void *)fb_new_nothrow,
	(void *)fb_new_align, (void *)fb_new_align, (void *)fb_new_align_nothrow, (void *)fb_new_align_nothrow,
	(void *)fb_delete, (void *)fb_delete, (void *)fb_delete_2, (void *)fb_delete_2,
	(void *)fb_delete_2, (void *)fb_delete_2, (void *)fb_delete_2, (void *)fb_delete_2,
	(void *)fb_delete_3, (void *)fb_delete_3, (void *)fb_delete_3, (void *)fb_delete_3,
};

/* The next definition of an operator, and whether it is one of the C++ runtimes' (which call malloc and free). */
__attribute__((noinline, cold)) static void cxx_resolve(enum cxx_op op)
{
	static const char *const runtimes[] = { "libstdc++.so.6", "libc++.so.1" };
	Dl_info info;
	void *fn = dlsym(RTLD_NEXT, cxx_names[op]);
	const char *base;

	for (size_t i = 0; !fn && i < sizeof(runtimes) / sizeof(runtimes[0]); i++) {
		void *h = dlopen(runtimes[i], RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			fn = dlsym(h, cxx_names[op]);
			dlclose(h);
		}
	}
	if (!fn) {
		cxx[op].fn = cxx_fallback[op];
		__atomic_store_n(&cxx[op].mode, CXX_FORWARD, __ATOMIC_RELEASE);
		return;
	}
	base = dladdr(fn, &info) && info.dli_fname ? strrchr(info.dli_fname, '/') : NULL;
	base = base ? base + 1 : info.dli_fname ? info.dli_fname : "";
	cxx[op].fn = fn;
	__atomic_store_n(&cxx[op].mode, strncmp(base, "libstdc++", 9) && strncmp(base, "libc++", 6) ? CXX_DIRECT : CXX_FORWARD,
			 __ATOMIC_RELEASE);
}

/* Resolved on first use: the C++ runtime may come with a library loaded later. */
static inline void *cxx_fn(enum cxx_op op)
{
	if (unlikely(__atomic_load_n(&cxx[op].mode, __ATOMIC_ACQUIRE) == CXX_UNRESOLVED))
		cxx_resolve(op);
	return cxx[op].fn;
}

/* Before a direct operator delete of p: what free and free_recorded do. */
static void cxx_delete_begin(void *p)
{
	struct hs_thread *t;

	if (p && (t = tracing_thread()) != NULL) {
		hs_local_add(&t->calls[HS_FN_FREE], 1);
		if (set_may_hold((uintptr_t)p))
			note_free(t, p);
	}
}

/*
 * The usual case (the C++ runtime's operators, which call malloc and
 * free) is a tail call with no frame, like a PLT entry; the rest is out
 * of line.
 */
#define CXX_NEW_HOOK(name, op, fnum, params, args, size)                           \
	__attribute__((noinline)) static void *name##_slow params                  \
	{                                                                          \
		void *(*next) params = (void *(*) params)cxx_fn(op);               \
		void *p = next args;                                               \
		return cxx[op].mode == CXX_DIRECT ? traced_after(fnum, p, size) : p; \
	}                                                                          \
	HS_EXPORT HS_TAIL_HOOK void *name params                                   \
	{                                                                          \
		if (likely(__atomic_load_n(&cxx[op].mode, __ATOMIC_ACQUIRE) == CXX_FORWARD)) \
			return ((void *(*) params)cxx[op].fn) args;                \
		return name##_slow args;                                           \
	}

#define CXX_DELETE_HOOK(name, op, params, args, ptr)                               \
	__attribute__((noinline)) static void name##_slow params                   \
	{                                                                          \
		void (*next) params = (void (*) params)cxx_fn(op);                 \
		if (cxx[op].mode == CXX_DIRECT)                                    \
			cxx_delete_begin(ptr);                                     \
		next args;                                                         \
	}                                                                          \
	HS_EXPORT HS_TAIL_HOOK void name params                                    \
	{                                                                          \
		if (likely(__atomic_load_n(&cxx[op].mode, __ATOMIC_ACQUIRE) == CXX_FORWARD)) { \
			((void (*) params)cxx[op].fn) args;                        \
			return;                                                    \
		}                                                                  \
		name##_slow args;                                                  \
	}

typedef struct hs_nothrow hs_nothrow;   /* std::nothrow_t, only ever passed by reference */

CXX_NEW_HOOK(_Znwm, CXX_NEW, HS_FN_MALLOC, (size_t n), (n), n)
CXX_NEW_HOOK(_Znam, CXX_NEW_ARRAY, HS_FN_MALLOC, (size_t n), (n), n)
CXX_NEW_HOOK(_ZnwmRKSt9nothrow_t, CXX_NEW_NOTHROW, HS_FN_MALLOC, (size_t n, const hs_nothrow *nt), (n, nt), n)
CXX_NEW_HOOK(_ZnamRKSt9nothrow_t, CXX_NEW_ARRAY_NOTHROW, HS_FN_MALLOC, (size_t n, const hs_nothrow *nt), (n, nt), n)
CXX_NEW_HOOK(_ZnwmSt11align_val_t, CXX_NEW_ALIGN, HS_FN_ALIGNED_ALLOC, (size_t n, size_t al), (n, al), n)
CXX_NEW_HOOK(_ZnamSt11align_val_t, CXX_NEW_ARRAY_ALIGN, HS_FN_ALIGNED_ALLOC, (size_t n, size_t al), (n, al), n)
CXX_NEW_HOOK(_ZnwmSt11align_val_tRKSt9nothrow_t, CXX_NEW_ALIGN_NOTHROW, HS_FN_ALIGNED_ALLOC,
	     (size_t n, size_t al, const hs_nothrow *nt), (n, al, nt), n)
CXX_NEW_HOOK(_ZnamSt11align_val_tRKSt9nothrow_t, CXX_NEW_ARRAY_ALIGN_NOTHROW, HS_FN_ALIGNED_ALLOC,
	     (size_t n, size_t al, const hs_nothrow *nt), (n, al, nt), n)

CXX_DELETE_HOOK(_ZdlPv, CXX_DELETE, (void *p), (p), p)
CXX_DELETE_HOOK(_ZdaPv, CXX_DELETE_ARRAY, (void *p), (p), p)
CXX_DELETE_HOOK(_ZdlPvm, CXX_DELETE_SIZED, (void *p, size_t n), (p, n), p)
CXX_DELETE_HOOK(_ZdaPvm, CXX_DELETE_ARRAY_SIZED, (void *p, size_t n), (p, n), p)
CXX_DELETE_HOOK(_ZdlPvRKSt9nothrow_t, CXX_DELETE_NOTHROW, (void *p, const hs_nothrow *nt), (p, nt), p)
CXX_DELETE_HOOK(_ZdaPvRKSt9nothrow_t, CXX_DELETE_ARRAY_NOTHROW, (void *p, const hs_nothrow *nt), (p, nt), p)
CXX_DELETE_HOOK(_ZdlPvSt11align_val_t, CXX_DELETE_ALIGN, (void *p, size_t al), (p, al), p)
CXX_DELETE_HOOK(_ZdaPvSt11align_val_t, CXX_DELETE_ARRAY_ALIGN, (void *p, size_t al), (p, al), p)
CXX_DELETE_HOOK(_ZdlPvmSt11align_val_t, CXX_DELETE_SIZED_ALIGN, (void *p, size_t n, size_t al), (p, n, al), p)
CXX_DELETE_HOOK(_ZdaPvmSt11align_val_t, CXX_DELETE_ARRAY_SIZED_ALIGN, (void *p, size_t n, size_t al), (p, n, al), p)
CXX_DELETE_HOOK(_ZdlPvSt11align_val_tRKSt9nothrow_t, CXX_DELETE_ALIGN_NOTHROW,
		(void *p, size_t al, const hs_nothrow *nt), (p, al, nt), p)
CXX_DELETE_HOOK(_ZdaPvSt11align_val_tRKSt9nothrow_t, CXX_DELETE_ARRAY_ALIGN_NOTHROW,
		(void *p, size_t al, const hs_nothrow *nt), (p, al, nt), p)

/*
 * A signal handler that jumps out of a hook it interrupted (siglongjmp, as
 * programs that time out a call with alarm do) left the hook's state for
 * good: its nesting, so that the thread's events were never published
 * again (3 million allocations, 1 recorded), and the slots it had taken.
 * The jump says so before it goes: its target lies above the outermost
 * recording's stack pointer. The slots it took become no events; the
 * walk and the sampled set's hazards are let go. The sampled set's lock
 * held then cannot be: the set may be half changed, and tracing stops.
 */
static void jump_out(struct __jmp_buf_tag *env)
{
	struct hs_thread *t = hs_tls_thread;
	uintptr_t target, guard;
	uint64_t h;

	if (!t || (!t->depth && !t->set_held))
		return;
	/* glibc keeps the target's stack pointer mangled with the thread's pointer guard */
	__asm__ volatile("mov %%fs:0x30, %0" : "=r"(guard));
	target = (uintptr_t)env->__jmpbuf[6];
	target = ((target >> 17) | (target << 47)) ^ guard;
	if (t->depth && target <= t->hook_sp)
		return; /* a jump inside the handler: the hook goes on when it returns */
	h = atomic_load_explicit(&t->head, memory_order_relaxed);
	/*
	 * The slots left behind may lie past the ring's room (the jump came
	 * while the hook waited for it): published so, they overwrote events
	 * not yet written, and the writer, which skips a ring whose head is
	 * more than its size ahead, never drained the thread again, so the
	 * program hung (10 of 45 runs beside two busy loops). Room first; without it
	 * (tracing stopped meanwhile) they are dropped.
	 */
	if (t->reserve - atomic_load(&t->tail) > HS_RING_EVENTS) {
		wait_for_room(t, h, (unsigned)(t->reserve - h));
		if (t->reserve - atomic_load(&t->tail) > HS_RING_EVENTS)
			t->reserve = h;
	}
	for (uint64_t i = h; i != t->reserve; i++) {
		struct hs_ev *e = &t->ring[i & (HS_RING_EVENTS - 1)];
		e->type = 0;
		e->ext = 0;
	}
	atomic_store_explicit(&t->head, t->reserve, memory_order_release);
	t->depth = 0;
	t->no_alloc = 0;
	t->in_unwind = 0;
	t->on_walk_stack = 0;
	hs_stacks_jumped_out(t);
	t->uw.n = 0;
	for (int i = 0; i < HS_SET_HAZARDS; i++)
		atomic_store(&t->set_hazard[i], NULL);
	t->set_hazards = 0;
	if (t->set_held)
		hs_disable("a signal handler jumped out of the tracer while it held the sampled set's lock; tracing stopped");
}

#define JUMP(name)                                                                 \
	HS_EXPORT __attribute__((noreturn)) void name(struct __jmp_buf_tag env[1], int val) \
	{                                                                          \
		ensure_ready();                                                    \
		jump_out(env);                                                     \
		if (!real.name)                                                    \
			raw_syscall(SYS_exit_group, 127, 0, 0, 0, 0, 0);           \
		real.name(env, val);                                               \
	}

JUMP(longjmp)
JUMP(_longjmp)
JUMP(siglongjmp)
JUMP(__longjmp_chk)
