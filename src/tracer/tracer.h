/* tracer.h - internal state shared by the parts of the preload library */
#ifndef HS_TRACER_H
#define HS_TRACER_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <x86intrin.h>

/* the functions of the program's libraries that the tracer replaces */
#define HS_EXPORT __attribute__((visibility("default")))

#include "../common/decimal.h"
#include "../common/pages.h"
#include "../format/records.h"
#include "lock.h"

#define HS_MAX_FRAMES 128
/* fine enough for lifetimes and timelines; each finer step costs trace size (docs/FORMAT.md) */
#define HS_DEFAULT_RESOLUTION_NS 100000
/*
 * A thread's run of events shares one stamp: up to HS_STAMP_RUN events,
 * within one writer pass of about HS_STAMP_TICK_NS, so a stamp is early
 * by less than a pass (hooks.c unfenced). Only at resolutions of a tick or
 * coarser; finer ones stamp every event.
 */
#define HS_STAMP_TICK_NS 100000
#define HS_STAMP_RUN 32
/*
 * Runs, and the writer's passes every tick that bound them, only while
 * events come at least this often (one per so many ns): each pass wakes
 * the writer, which on a busy machine takes a core from the program.
 * Sampled at 512 KiB, 4 threads churning made 55 events a millisecond,
 * and 1,100 context switches in 0.1 s instead of 90 cost 12% of its time;
 * fresh stamps for them cost nothing to see.
 */
#define HS_STAMP_RUN_GAP_NS 500
/*
 * A thread that stamps this many events in an epoch without runs, as fast
 * as that, asks the writer for runs (hooks.c ask_runs): after a pass that
 * found few events, the writer sleeps till its tick.
 */
#define HS_STAMP_ASK 256
#define HS_RING_EVENTS (32u << 10)
#define HS_STACK_CACHE 8192  /* slots of the (parent, ip) -> node cache, 2 per set */
#define HS_WALK_SETS 32      /* recent whole walks per thread, by their first frame: sets of HS_WALK_WAYS */
#define HS_WALK_WAYS 8
#define HS_WALK_WORDS 32     /* stack words a walk may read and still be kept there */

/* An event as the hooks leave it in their thread's ring; the writer encodes it. */
enum hs_ev_type { HS_EV_ALLOC = 1, HS_EV_FREE, HS_EV_MMAP, HS_EV_MUNMAP, HS_EV_MREMAP, HS_EV_BRK };
/*
 * Or'ed into an event's type: no other thread's event on its block came
 * since this thread's previous one (the stamp needed no fence), so the
 * writer may put it ahead of other threads' events of its unit of time
 * (writer.c, drain). Events without it keep their place in time order.
 */
#define HS_EV_OWN 0x80

struct hs_ev {
	uint64_t ts;
	uint64_t a, b;
	uint32_t stack;
	uint8_t type;
	uint8_t fn;
	uint16_t ext;     /* 1: the next slot holds struct hs_ev_ext */
};

/*
 * Half a cache line an event: the writer reads what another core wrote, so
 * lines are the cost. The few events with more fields (realloc's old block,
 * mmap's protection, mremap) take a second slot.
 */
struct hs_ev_ext {
	uint64_t c, d;
	uint64_t pad[2];
};

/* (parent node, return address) -> node id, a thread's view of the shared stack trie */
struct hs_stack_slot {
	uint64_t ip;
	uint32_t parent;
	uint32_t id;
};

/* One frame of a walk, with the stack words read to get past it (see unwind.c). */
struct hs_uframe {
	uint64_t ip, sp, bp;
	uint64_t ra_addr, ra_val;
	uint64_t bp_addr, bp_val;
	uint32_t node;
	uint8_t bp_ok;
	uint8_t uses_bp;    /* its CFA is computed from rbp */
	uint8_t bp_rule;    /* what it does with its caller's rbp (unwind.c) */
	uint8_t need_bp;    /* the walk from here on depends on the incoming rbp */
};

/*
 * The last walk, outermost frame first: a new walk that meets one of its
 * frames keeps everything outside it in place and appends its own inner
 * frames. chk_* are the stack words the walk read, outermost first, flat so
 * that checking a prefix is a tight loop: f[0 .. k]'s are chk[0 .. chk_end[k]).
 */
struct hs_unwind_state {
	int n;
	struct hs_uframe f[HS_MAX_FRAMES];
	struct hs_uframe cur[HS_MAX_FRAMES];   /* a walk's new frames, innermost first */
	uint64_t slow_ips[HS_MAX_FRAMES];      /* libunwind's walk (not on the hook's stack: it may be a small one) */
	int chk_n;
	uint16_t chk_end[HS_MAX_FRAMES];
	uint64_t chk_addr[2 * HS_MAX_FRAMES];
	uint64_t chk_val[2 * HS_MAX_FRAMES];
};

/*
 * A whole walk, kept by the registers of its first frame (the hook's
 * caller) with the stack words it read: when a later walk starts with the
 * same registers and none of the words changed, it is the same walk, and
 * node is its stack id. Programs cycle through a few call paths (CPython's
 * loop here through 10, sqlite's inserts through 60): the last walk alone
 * shares only its outer frames with the next one. Walks that differ only
 * further out share their first registers (sqlite allocates through one
 * call site): a set holds several.
 */
struct hs_walk {
	uint64_t bp;                /* the first frame's (its ip and sp are the set's keys) */
	uint32_t node;
	uint8_t bp_ok, need_bp;
	uint8_t nchk;
	/*
	 * Each word's place above sp in 8-byte steps: every word a walk reads
	 * is above its first frame's sp. Half the bytes of full addresses, so a
	 * check loads fewer lines (a thread keeps HS_WALK_SETS * HS_WALK_WAYS).
	 */
	uint16_t chk_off[HS_WALK_WORDS];
	uint64_t chk_val[HS_WALK_WORDS];
};

/*
 * Per-thread state. The owning thread is the only producer of its ring, the
 * writer the only consumer: no lock on the hot path.
 */
#define HS_SET_PENDING 16
#define HS_SET_HAZARDS 4

struct hs_thread {
	struct hs_thread *next;
	uint32_t tid;
	/*
	 * head and tail each have a cache line of their own, and the owner's
	 * words a third: the writer reading head or moving tail then never
	 * takes away the line the owner works in (measured: a load of tail on
	 * every event was a fifth of the recorded allocation's time).
	 */
	_Alignas(64) atomic_uint_fast64_t head;  /* published events, written by the owner */
	_Alignas(64) atomic_uint_fast64_t tail;  /* consumed events, written by the writer */
	_Alignas(64) uint64_t reserve;           /* owner only: slots handed out, may run ahead of head */
	uint64_t room;              /* owner only: reserve may reach this without asking tail (a past tail + ring size) */
	int depth;                  /* owner only: nesting of recording (signal handlers) */
	uintptr_t hook_sp;          /* owner only: the stack pointer of the outermost recording under way (depth > 0) */
	int internal;               /* owner only: >0 while tracer code that may allocate runs */
	int saved_errno;            /* the program's errno, while internal: given back when it ends */
	int in_stack_lock;          /* owner only: holds the stack table lock */
	int in_section;             /* owner only: a capture's section is open (hs_section_open) */
	int node_reads;             /* owner only: stack table lookups without the lock under way (nested: more) */
	int in_unwind;              /* owner only: t->uw is being rewritten */
	int no_alloc;               /* owner only: the walk must not allocate (an allocator may hold its lock) */
	int on_walk_stack;          /* owner only: a libunwind walk runs on walk_stack (unwind.c) */
	int dtor_rounds;
	int orphan;                 /* made after the thread's own state died: reaped once the thread is gone */
	int set_held;               /* owner only: holds the sampled set's lock (hooks.c) */
	int set_hazards;            /* owner only: probes of the set under way (nested by handlers) */
	void *_Atomic set_hazard[HS_SET_HAZARDS]; /* the tables they probe: not unmapped meanwhile */
	/* owner only: blocks that signal handlers freed while set_held, to leave the set */
	uint64_t set_pend_head, set_pend_tail;
	uintptr_t set_pend[HS_SET_PENDING];
	atomic_int dead;
	int64_t sample_left;
	uint64_t rng;
	uint64_t tag;               /* bits 47..62: this thread among the live ones (0: none left), see hooks.c "own" */
	uint64_t last_ts;           /* the thread's latest stamp: an unfenced one never goes below it */
	uint32_t stamp_left;        /* owner only: events that may still take last_ts as their stamp (hooks.c unfenced) */
	uint32_t stamp_epoch;       /* ... while hs_g.stamp_epoch is this */
	uint32_t ask_count;         /* owner only: fresh stamps since ask_from, in an epoch without runs */
	uint64_t ask_from;
	uint64_t calls[HS_FN_COUNT];  /* owner adds with hs_local_add, the writer reads (__atomic_load_n) */
	uint64_t bytes[HS_FN_COUNT];
	/* calls and bytes when tracing last started: the hot hooks count even while it is not active */
	uint64_t calls_base[HS_FN_COUNT], bytes_base[HS_FN_COUNT];
	sigset_t section_old;       /* owner only: the signal mask to give back when the section closes */
	uintptr_t stack_lo, stack_hi;
	uint8_t scratch;            /* owner only: 1 + the boot buffer's scratch slot it allocates from, 0: none (hooks.c) */
	uint16_t scratch_used;
	struct hs_unwind_state uw;
	/* each kept walk's first ip and sp (ip 0: none), apart from the walks so that a lookup reads two lines */
	uint64_t walk_ip[HS_WALK_SETS][HS_WALK_WAYS];
	uint64_t walk_sp[HS_WALK_SETS][HS_WALK_WAYS];
	struct hs_walk walks[HS_WALK_SETS][HS_WALK_WAYS];
	uint8_t walk_next[HS_WALK_SETS];   /* the way a set's next new walk replaces */
	/*
	 * From here to the end, the pages are wiped in a forked child (state.c
	 * thread_new): one range, so that a thread's state stays two mappings
	 * (a program near vm.max_map_count with thousands of threads).
	 */
	struct hs_stack_slot cache[HS_STACK_CACHE];
	struct hs_ev ring[HS_RING_EVENTS];
	/* where libunwind walks when the hook's stack is small or unknown (unwind.c); resident only once used */
	_Alignas(4096) uint8_t walk_stack[64u << 10];
};

enum hs_state { HS_UNINIT, HS_INITIALIZING, HS_ACTIVE, HS_INERT };

struct hs_config {
	char output[4096];
	uint64_t sample_bytes;
	uint32_t time_resolution_ns;
	int libunwind_only;          /* HEAPSCOPE_UNWIND=libunwind: the reference unwinder, for comparison */
	int no_single;               /* HEAPSCOPE_TEST_NO_SINGLE=1 (tests, bench): leave glibc's single-threaded flag cleared (single.c) */
	long raise_at;               /* HEAPSCOPE_TEST_RAISE_AT=n (tests): SIGUSR1 the n-th time a ring's room is looked for (hooks.c, test_raise) */
	int raise_full;              /* HEAPSCOPE_TEST_RAISE_FULL=1: ... then the writer stalls, and SIGUSR1 comes once the ring is full */
	int follow_fork;
	int follow_exec;
	int is_child;
};

struct hs_global {
	_Atomic int state;
	struct hs_config cfg;
	pid_t pid;
	uint64_t t0_ns;               /* CLOCK_MONOTONIC at start: events are relative to it */
	uintptr_t self_lo, self_hi;   /* our own text, skipped in backtraces */
	int after_fini;               /* our destructor ran: flush synchronously */

	struct hs_lock threads_lock;
	struct hs_thread *threads;
	_Atomic uint64_t folded_calls[HS_FN_COUNT]; /* totals of threads already reclaimed */
	_Atomic uint64_t folded_bytes[HS_FN_COUNT];
	_Atomic uint64_t untraced_children; /* children not traced (fork without follow-fork, spawn without follow-exec): their number ends the trace (CHILDREN) */

	struct hs_lock writer_lock;
	int writer_running;
	pthread_t writer;
	atomic_int writer_stop;
	atomic_int wake;
	/*
	 * Threads whose ring is full sleep on room, which the writer bumps when
	 * it frees some, instead of yielding: yielding threads took a fifth of
	 * the CPU the writer they wait for needed (4 threads on 2 cores).
	 */
	_Alignas(64) atomic_uint room;
	atomic_int room_waiters;
	atomic_int to_reap;             /* thread states that may be reapable: the writer reaps before its next sleep */
	atomic_int poll_modules;        /* the writer's tick asks a recording thread to poll the loader (single.c: not itself) */
	/*
	 * Read at every event, ended by the writer at each pass while events
	 * come, about every HS_STAMP_TICK_NS (hs_stamp_epoch_end): a thread's
	 * events share a stamp only within one epoch, and only in an odd one,
	 * which the writer will end soon (hooks.c unfenced).
	 */
	_Alignas(64) _Atomic uint32_t stamp_epoch;
	_Atomic uint64_t ask_ticks;     /* HS_STAMP_ASK fresh stamps within this many ticks ask for runs */
	atomic_int runs_asked;          /* ... and set this: the writer's next pass lets runs start */
	atomic_int test_stall;          /* tests (raise_full): the writer drains nothing meanwhile */
};

extern struct hs_global hs_g;

/* Ends the stamp epoch; runs of shared stamps may start in the next one (odd) only when runs says so. */
static inline void hs_stamp_epoch_end(int runs)
{
	uint32_t e = atomic_load_explicit(&hs_g.stamp_epoch, memory_order_relaxed), n;

	do
		n = e + 1 + ((e + 1) % 2 != (uint32_t)!!runs);
	while (!atomic_compare_exchange_weak_explicit(&hs_g.stamp_epoch, &e, n, memory_order_relaxed,
						      memory_order_relaxed));
}

/* state.c */
struct hs_thread *hs_thread_create(void);
void hs_thread_retire(struct hs_thread *t);
void hs_thread_spares_trim(void);
extern __thread struct hs_thread *hs_tls_thread __attribute__((tls_model("initial-exec")));
/*
 * The same while the thread's calls are the program's, NULL while it is
 * internal (or has no state yet): the hot hooks ask one word instead of two.
 */
extern __thread struct hs_thread *hs_tls_hook __attribute__((tls_model("initial-exec")));

/* The calling thread's state, created on its first event. */
static inline struct hs_thread *hs_thread_get(void)
{
	struct hs_thread *t = hs_tls_thread;
	return __builtin_expect(t != NULL, 1) ? t : hs_thread_create();
}
uint64_t hs_now_ns(void);   /* nanoseconds since the start, for records written directly */
uint64_t hs_ticks_to_unit(uint64_t ticks, uint64_t res, uint64_t *until);
uint64_t hs_ns_to_ticks(uint64_t ns);
void hs_clock_refine(void);
void hs_disable(const char *why);
void hs_ensure_writer(void);

/*
 * Read-modify-write of a thread's own words in one instruction: a signal
 * handler that records an event can interrupt between instructions, never
 * inside one; no lock prefix, since no other thread writes them.
 */
static inline uint64_t hs_local_xadd(uint64_t *p, uint64_t v)
{
	__asm__ volatile("xaddq %0, %1" : "+r"(v), "+m"(*p));
	return v;
}

static inline void hs_local_add(uint64_t *p, uint64_t v)
{
	__asm__ volatile("addq %1, %0" : "+m"(*p) : "er"(v));
}

/*
 * Event stamps, converted to nanoseconds by the writer. The fence keeps the
 * TSC read from running ahead of the loads before it: unfenced, a free in
 * one thread could be stamped before the allocation, in another thread, of
 * the pointer it frees (measured here: up to 90 ticks out of order).
 * hooks.c's stamp() leaves it out where the block cannot have changed threads.
 */
extern int hs_use_tsc;
static inline uint64_t hs_ticks(void)
{
	if (!hs_use_tsc)
		return hs_now_ns();
	_mm_lfence();
	return __rdtsc();
}

/* stacks.c */
int hs_stacks_init(void);
uint32_t hs_stack_capture(struct hs_thread *t, const void *from);
void hs_stacks_reset(void);
void hs_stacks_after_fork(void);
void hs_stacks_jumped_out(struct hs_thread *t);
/*
 * A capture's section: from the first step of a capture that needs the
 * tracer's locks (a new unwind rule, a new stack node) to the capture's
 * end, signals blocked and the thread internal, once. It opens with the
 * module map brought up to date (hs_modules_poll).
 */
void hs_section_open(struct hs_thread *t);

/* unwind.c */
int hs_unwind_init(void);
void hs_unwind_forget(uintptr_t lo, uintptr_t hi);
void hs_unwind_after_fork(void);
void hs_unwind_release(void);
void hs_stacks_release(void);
void hs_meta_release(void);
void hs_modules_release(void);
void hs_writer_release(void);
void hs_writer_disabled(const char *why);
extern int hs_loader_stuck;
void hs_loader_after_fork(void);
void hs_modules_replay(void);
struct hs_eh_frame;
/* The module holding ip, as the last scan found it: its range and unwind tables; -1 for none. */
int hs_modules_eh_of(uintptr_t ip, uintptr_t *lo, uintptr_t *hi, struct hs_eh_frame *eh);
void hs_unwind_thread_init(struct hs_thread *t);
/*
 * Around glibc calls the tracer makes for itself whose blocks all die
 * before the call returns: their allocations come from a slot of the
 * tracer's own buffer, not the program's heap (hooks.c).
 */
void hs_scratch_begin(struct hs_thread *t);
void hs_scratch_end(struct hs_thread *t);
int hs_unwind(struct hs_thread *t, int *kept, uint32_t *node, const void *from);
void hs_unwind_keep(struct hs_thread *t);
int hs_unwind_plain(struct hs_thread *t, uint64_t *ips);

/* modules.c */
struct dl_phdr_info;
int hs_loader_iterate(int (*fn)(struct dl_phdr_info *, size_t, void *), void *data);
void hs_module_range(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi);
int hs_module_path(const struct dl_phdr_info *info, char *out, size_t cap);
int hs_maps_find(uintptr_t addr, uintptr_t *lo, uintptr_t *hi, uintptr_t *prev_hi, char *path, size_t cap);
int hs_modules_init(void);
void hs_modules_scan(void);
void hs_modules_poll(void);
int hs_modules_contains(uintptr_t ip);
void hs_modules_reset(void);

/* meta.c: records that are not per-thread events (stacks, modules, rss, markers) */
int hs_meta_init(void);
void hs_meta_append(const uint8_t *rec, size_t len);
size_t hs_meta_take(uint8_t *dst, size_t cap, int *more);
void hs_meta_reset(void);

/* hooks.c */
void hs_stamps_reset(void);
void hs_hooks_resolve(void);
void hs_hooks_configure(int forked);
uint64_t hs_thread_tag(void);

/* writer.c */
int hs_writer_open(void);
int hs_writer_start(void);
/* Reads RSS and records it now (the writer reads it every 10 ms once started). */
void hs_writer_rss_now(void);
int hs_writer_up(void);
void hs_writer_stop(void);
uint64_t hs_writer_flush(int force);
void hs_writer_finish(int reason);
void hs_writer_finish_disabled(void);
/* state.c: flushes everything and writes END(reason) before the process image goes away (exec, _exit, quick_exit) */
void hs_flush_before_exit(int reason);
void hs_writer_after_fork_child(void);
void hs_writer_wake(void);
void hs_writer_wait_room(uint32_t seen);
void hs_writer_crash(int sig);

/* signals.c */
void hs_signals_install(void);

/*
 * Tracer code that may allocate runs marked internal, so its allocations pass
 * through untraced, and with signals blocked, so a signal handler's
 * allocations are never mistaken for the tracer's own.
 */
void hs_internal_enter(struct hs_thread *t, sigset_t *old);
void hs_internal_leave(struct hs_thread *t, const sigset_t *old);

/* util.c: no malloc, no stdio */
void hs_log_init(void);
void hs_log(const char *what, const char *thing, const char *then);
const char *hs_errno_text(int e);
/* f moved to a high number (programs close every descriptor or reuse numbers), close-on-exec; f when it cannot be. */
int hs_fd_move_high(int f);

/* single.c: glibc's single-threaded flag, set again once our writer runs beside a single-threaded program */
void hs_single_init(void);
int hs_single_before_start(void);
void hs_single_keep(void);
int hs_single_kept(void);
void *hs_map(size_t len);
void hs_unmap(void *p, size_t len);
void hs_zero(void *p, size_t len);
pid_t hs_gettid(void);
void hs_strlcat(char *dst, const char *src, size_t cap);

/*
 * state.c: the variables a followed exec carries to the new image, kept as
 * they were once tracing was configured: a program that clears its
 * environment (env -i, a daemon's clean slate) before it execs must not
 * take the programs it runs out of the trace. hs_follow_env(k) is
 * hs_follow_vars[k]'s "NAME=value", NULL when it was unset.
 */
#define HS_FOLLOW_VARS 6
extern const char *const hs_follow_vars[HS_FOLLOW_VARS];
const char *hs_follow_env(unsigned k);

#endif
