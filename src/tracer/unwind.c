/* unwind.c - fast backtraces: cached CFI rules per return address, and reuse of the unchanged outer frames */
#define UNW_LOCAL_ONLY
#include <errno.h>
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common/ehframe.h"
#include "tracer.h"

/*
 * Why not libunwind alone: unw_backtrace costs ~8-10 ns a frame here, and
 * allocations are typically 15-60 frames deep. Two things make it cheaper:
 *
 * 1. The unwind rule of a return address (CFA from rsp or rbp plus an
 *    offset, where the return address and rbp were saved) is read once
 *    from the loaded .eh_frame (src/common/ehframe.c) and kept in a
 *    lock-free table.
 *
 * 2. A thread's previous backtrace is kept with the stack words it read. When
 *    the walk reaches a frame whose registers (ip, sp, bp) equal a frame of
 *    the previous walk, the rest of the walk can only differ if one of the
 *    words read for it changed; checking them is a load and a compare per
 *    frame, and their trie node ids are reused as they are.
 *
 * Anything the rules cannot express (CFA expressions, signal frames, frames
 * outside the thread's stack) falls back to libunwind for the whole walk.
 */

#define REG_SP 7
#define REG_BP 6

/*
 * RULE_NONE: no CFI covers the address. libunwind then takes a frame whose
 * rbp is 0 for the outermost (the ABI's mark, which _start and ld.so's
 * _dl_start_user set), and so does the walk here; with another rbp, the
 * walk is libunwind's. _dl_start_user, which has no CFI, calls the
 * libraries' constructors: each of their allocations (libselinux's in ls,
 * a C++ library's static objects) was walked by libunwind, whose start
 * alone cost 64 page faults.
 */
enum { RULE_OK = 1, RULE_LAST = 2, RULE_BAD = 3, RULE_NONE = 4 };
enum { BP_SAME = 0, BP_SAVED = 1, BP_LOST = 2 };
enum { CFA_SP = 0, CFA_BP = 1 };

struct rule {
	_Atomic uint64_t ip; /* the return address; 0: empty slot */
	int32_t cfa_off;
	int16_t ra_off;
	int16_t bp_off;
	uint8_t kind, cfa_reg, bp_rule;
};

/*
 * The rules of return addresses, read without a lock. The table starts
 * small and doubles before it is half full: a first size of 65,536 slots
 * spread a short program's few hundred rules over as many pages, each a
 * page fault (62 of ls's), and capped a large one at 32,768 rules, the
 * walks through any other address being libunwind's. A replaced table
 * stays mapped, since a walk may still be reading it.
 */
struct rules {
	size_t mask;
	size_t map_size;
	struct rule slot[];
};

#define RULES_FIRST (1u << 10)
#define RULES_MAX (1u << 21)
#define RULES_OLD 11                        /* doublings from RULES_FIRST to RULES_MAX */
_Static_assert(RULES_FIRST << RULES_OLD == RULES_MAX, "room for every replaced rule table");
static struct rules *_Atomic rules;
static struct rules *rules_old[RULES_OLD]; /* the replaced ones, smaller each */
static int nrules_old;
static size_t rules_used;                   /* slots taken in the current table, tombstones too */
static struct hs_lock rules_lock = HS_LOCK_INIT;

/* A module's loaded range and its tables; eh.count 0: none to read */
struct cfi_module {
	uintptr_t lo, hi;
	struct hs_eh_frame eh;
};

#define CFI_MODULES 512
static struct cfi_module cfi_mods[CFI_MODULES];
static int ncfi_mods;

static inline size_t rule_slot(uint64_t ip, size_t mask)
{
	return (size_t)((ip * 0x9e3779b97f4a7c15ull) >> 40) & mask;
}

static inline const struct rule *rule_find(uint64_t ip)
{
	struct rules *rt = atomic_load_explicit(&rules, memory_order_acquire);
	size_t i = rule_slot(ip, rt->mask);

	for (;;) {
		uint64_t k = atomic_load_explicit(&rt->slot[i].ip, memory_order_acquire);
		if (k == ip)
			return &rt->slot[i];
		if (k == 0)
			return NULL;
		i = (i + 1) & rt->mask;
	}
}

static struct rules *rules_map(size_t cap)
{
	size_t len = sizeof(struct rules) + cap * sizeof(struct rule);
	struct rules *rt = hs_map(len);

	if (rt) {
		rt->mask = cap - 1;
		rt->map_size = len;
	}
	return rt;
}

/* Under rules_lock: the next size, with the rules (tombstones left behind); NULL at the largest or without memory. */
static struct rules *rules_grow(struct rules *rt)
{
	size_t cap = (rt->mask + 1) * 2, used = 0;
	struct rules *nt;

	if (cap > RULES_MAX || !(nt = rules_map(cap)))
		return NULL;
	for (size_t i = 0; i <= rt->mask; i++) {
		uint64_t ip = atomic_load_explicit(&rt->slot[i].ip, memory_order_relaxed);
		size_t j;
		if (ip <= 1)
			continue;
		j = rule_slot(ip, nt->mask);
		while (atomic_load_explicit(&nt->slot[j].ip, memory_order_relaxed))
			j = (j + 1) & nt->mask;
		memcpy(&nt->slot[j], &rt->slot[i], sizeof(struct rule));
		used++;
	}
	/*
	 * Published first: a child forked midway (this thread's lock is reset
	 * there) then counts too many rules in its table, which only makes it
	 * grow early, never too few, which could fill it.
	 */
	atomic_store_explicit(&rules, nt, memory_order_release);
	rules_used = used;
	rules_old[nrules_old++] = rt;
	return nt;
}

struct find_ctx {
	uintptr_t ip;
	struct cfi_module *m;
};

/* A module at [lo, hi) with the tables eh (NULL: none), opened; NULL when the table of modules is full. */
static struct cfi_module *cfi_open(uintptr_t lo, uintptr_t hi, const struct hs_eh_frame *eh)
{
	struct cfi_module *m;

	if (ncfi_mods == CFI_MODULES)
		return NULL;
	m = &cfi_mods[ncfi_mods++];
	m->lo = lo;
	m->hi = hi;
	if (eh) {
		m->eh = *eh;
		hs_eh_frame_open(&m->eh); /* count stays 0 when unusable: the module's walks are libunwind's */
	} else {
		memset(&m->eh, 0, sizeof(m->eh));
	}
	return m;
}

static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_ctx *c = data;
	struct hs_eh_frame eh;
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	(void)size;
	hs_module_range(info, &lo, &hi);
	if (c->ip < lo || c->ip >= hi)
		return 0;
	c->m = cfi_open(lo, hi, hs_eh_frame_of(info->dlpi_phdr, info->dlpi_phnum, info->dlpi_addr, &eh) == 0 ? &eh : NULL);
	return 1;
}

static struct cfi_module *module_for(uintptr_t ip)
{
	struct find_ctx c = { .ip = ip };

	for (int i = 0; i < ncfi_mods; i++)
		if (ip >= cfi_mods[i].lo && ip < cfi_mods[i].hi)
			return &cfi_mods[i];
	if (hs_loader_iterate(find_module, &c) < 0) {
		/* the loader is stuck: the module map kept each module's tables when it was scanned */
		struct hs_eh_frame eh;
		uintptr_t lo, hi;
		if (hs_modules_eh_of(ip, &lo, &hi, &eh) < 0)
			return NULL;
		return cfi_open(lo, hi, &eh);
	}
	return c.m;
}

static void compute(struct rule *r, uint64_t ret)
{
	uintptr_t pc = ret - 1; /* inside the call instruction, even after a noreturn call */
	struct cfi_module *m = module_for(pc);
	struct hs_eh_row row;
	int rc;

	r->kind = RULE_BAD;
	if (!m || !m->eh.count)
		return;
	rc = hs_eh_row_at(&m->eh, pc, &row);
	if (rc == 0)
		r->kind = RULE_NONE;
	/* a signal frame's return address is where the handler interrupted, not a call's: libunwind's to walk */
	if (rc <= 0 || row.signal_frame || row.cfa_expr || (row.cfa_reg != REG_SP && row.cfa_reg != REG_BP) ||
	    row.cfa_off > INT32_MAX || row.cfa_off < INT32_MIN)
		return;
	r->cfa_reg = row.cfa_reg == REG_SP ? CFA_SP : CFA_BP;
	r->cfa_off = (int32_t)row.cfa_off;
	if (row.ra.rule == HS_EH_UNDEF) {
		/* undefined return address: the outermost frame */
		r->kind = RULE_LAST;
		return;
	}
	if (row.ra.rule != HS_EH_OFFSET || row.ra.off < INT16_MIN || row.ra.off > INT16_MAX)
		return;
	r->ra_off = (int16_t)row.ra.off;
	if (row.bp.rule == HS_EH_SAME) {
		r->bp_rule = BP_SAME;
	} else if (row.bp.rule == HS_EH_UNDEF) {
		r->bp_rule = BP_LOST;
	} else if (row.bp.rule == HS_EH_OFFSET && row.bp.off >= INT16_MIN && row.bp.off <= INT16_MAX) {
		r->bp_rule = BP_SAVED;
		r->bp_off = (int16_t)row.bp.off;
	} else {
		return;
	}
	r->kind = RULE_OK;
}

/* Slow path: under the lock, in the capture's section (the loader is asked, and its lock taken). */
static const struct rule *rule_add(struct hs_thread *t, uint64_t ip)
{
	const struct rule *found;
	struct rule tmp = { 0 };
	struct rules *rt;
	size_t i;

	if (t->in_stack_lock)
		return NULL;
	/* its opening asks the loader: a library replaced since the last scan must not lend its CFI to the new code */
	hs_section_open(t);
	t->in_stack_lock = 1;
	hs_lock_take(&rules_lock);
	found = rule_find(ip);
	rt = atomic_load_explicit(&rules, memory_order_relaxed);
	if (!found && (rules_used + 1) * 2 > rt->mask + 1)
		rt = rules_grow(rt);
	if (!found && rt) {
		compute(&tmp, ip);
		i = rule_slot(ip, rt->mask);
		while (atomic_load_explicit(&rt->slot[i].ip, memory_order_relaxed))
			i = (i + 1) & rt->mask;
		rt->slot[i].cfa_off = tmp.cfa_off;
		rt->slot[i].ra_off = tmp.ra_off;
		rt->slot[i].bp_off = tmp.bp_off;
		rt->slot[i].kind = tmp.kind;
		rt->slot[i].cfa_reg = tmp.cfa_reg;
		rt->slot[i].bp_rule = tmp.bp_rule;
		atomic_store_explicit(&rt->slot[i].ip, ip, memory_order_release);
		rules_used++;
		found = &rt->slot[i];
	}
	hs_lock_release(&rules_lock);
	t->in_stack_lock = 0;
	return found;
}

/*
 * A library left [lo, hi): its rules and its CFI go, since another may be
 * mapped there next with other code at the same addresses. Tombstones (ip 1,
 * never a return address) keep the probe runs of the lock-free readers whole.
 */
static void forget_in(struct rules *rt, uintptr_t lo, uintptr_t hi)
{
	for (size_t i = 0; i <= rt->mask; i++) {
		uint64_t ip = atomic_load_explicit(&rt->slot[i].ip, memory_order_relaxed);
		if (ip >= lo && ip < hi)
			atomic_store_explicit(&rt->slot[i].ip, 1, memory_order_release);
	}
}

void hs_unwind_forget(uintptr_t lo, uintptr_t hi)
{
	if (!atomic_load_explicit(&rules, memory_order_relaxed))
		return;
	hs_lock_take(&rules_lock);
	for (int i = 0; i < ncfi_mods; i++)
		if (cfi_mods[i].lo < hi && cfi_mods[i].hi > lo)
			cfi_mods[i--] = cfi_mods[--ncfi_mods];
	/* the replaced tables too: a walk that began before a table grew may still read its old one */
	forget_in(atomic_load_explicit(&rules, memory_order_relaxed), lo, hi);
	for (int i = 0; i < nrules_old; i++)
		forget_in(rules_old[i], lo, hi);
	hs_lock_release(&rules_lock);
}

/*
 * In a forked child that traces on: another thread of the parent may have
 * been computing a rule (holding rules_lock, maybe halfway through adding a
 * module) when the fork came. The lock starts free, and the modules are
 * forgotten, to be found again as the child needs them. Rules already in
 * the table are whole: a slot is published last.
 */
void hs_unwind_after_fork(void)
{
	hs_lock_reset(&rules_lock);
	ncfi_mods = 0;
}

/* Tracing could not start: the program gets the memory back. */
void hs_unwind_release(void)
{
	struct rules *rt = atomic_load_explicit(&rules, memory_order_relaxed);

	if (rt)
		hs_unmap(rt, rt->map_size);
	for (int i = 0; i < nrules_old; i++)
		hs_unmap(rules_old[i], rules_old[i]->map_size);
	nrules_old = 0;
	rules_used = 0;
	atomic_store_explicit(&rules, NULL, memory_order_relaxed);
}

int hs_unwind_init(void)
{
	struct rules *rt = rules_map(RULES_FIRST);

	if (!rt)
		return -1;
	atomic_store_explicit(&rules, rt, memory_order_release);
	return 0;
}

extern void *__libc_stack_end;

/*
 * The initial thread's stack, as glibc's pthread_getattr_np computes it:
 * up to the page above __libc_stack_end, down by RLIMIT_STACK less what
 * the mapping holds above that page, and not below the mapping before it.
 * glibc reads /proc/self/maps with stdio and sscanf for this (malloc, a
 * FILE, the locale): 0.21-0.32 ms as a process's first use of them here,
 * against 0.05-0.07 ms for the raw read. -1 when this is not the initial
 * thread's stack (a forked child of another thread): glibc answers then.
 */
static int initial_stack(uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), from, to, last_to, top, size;
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	struct rlimit rl;

	/* another thread's stack is elsewhere: it asks glibc, which does not read the file for it */
	if (!__libc_stack_end || here >= (uintptr_t)__libc_stack_end || (uintptr_t)__libc_stack_end - here > (64u << 20) ||
	    syscall(SYS_prlimit64, 0, RLIMIT_STACK, NULL, &rl) != 0 ||
	    hs_maps_find((uintptr_t)__libc_stack_end, &from, &to, &last_to, NULL, 0) < 0)
		return -1;
	top = ((uintptr_t)__libc_stack_end & -page) + page;
	size = (uintptr_t)rl.rlim_cur - (to - top);
	size &= -page;
	if (size > top - last_to)
		size = top - last_to;
	if (here < top - size || here >= top)
		return -1;
	*lo = top - size;
	*hi = top;
	return 0;
}

void hs_unwind_thread_init(struct hs_thread *t)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	sigset_t old;

	hs_internal_enter(t, &old);
	if (initial_stack(&t->stack_lo, &t->stack_hi) == 0) {
		hs_internal_leave(t, &old);
		return;
	}
	/* glibc's copies of the thread's CPU set (2 blocks) are the tracer's: not in the program's heap */
	hs_scratch_begin(t);
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
			t->stack_lo = (uintptr_t)addr;
			t->stack_hi = (uintptr_t)addr + size;
		}
		pthread_attr_destroy(&attr);
	}
	hs_scratch_end(t);
	hs_internal_leave(t, &old);
}

static inline int in_stack(const struct hs_thread *t, uintptr_t a)
{
	return a >= t->stack_lo && a + 8 <= t->stack_hi && !(a & 7);
}

/*
 * libunwind's walk takes several KiB of stack. A hook with less than
 * WALK_ROOM left where it runs, or on a stack it does not know the bounds
 * of (an alternate signal stack, a coroutine's: ucontext, boost.context,
 * often 8-64 KiB from malloc), walks on the thread's own walk stack
 * instead. Before, such a walk ran where the hook was: a handler that
 * allocated on an 8 KiB alternate stack overflowed it, and a coroutine on
 * an 8 KiB stack wrote over the heap below it (glibc then aborted: 11.8
 * KiB of a 64 KiB coroutine stack used, 3.9 KiB untraced).
 */
#define WALK_ROOM (24u << 10)

/* hs_on_stack(top, fn, arg): fn(arg) with the stack pointer at top (16-byte aligned), then back */
__asm__(".text\n"
	".p2align 4\n"
	".globl hs_on_stack\n"
	".hidden hs_on_stack\n"
	".type hs_on_stack, @function\n"
	"hs_on_stack:\n"
	".cfi_startproc\n"
	"\tpush %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"\tmov %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"\tmov %rdi, %rsp\n"
	"\tmov %rdx, %rdi\n"
	"\tcall *%rsi\n"
	"\tmov %rbp, %rsp\n"
	"\tpop %rbp\n"
	".cfi_def_cfa %rsp, 8\n"
	"\tret\n"
	".cfi_endproc\n"
	".size hs_on_stack, .-hs_on_stack\n");
void hs_on_stack(void *top, void (*fn)(void *), void *arg);

/*
 * libunwind holds a pipe from its first use on (it checks addresses with
 * it), two descriptors at the lowest free numbers: set up at start, it
 * gave the program's own first open() 5 instead of 3, and under a low
 * RLIMIT_NOFILE no file at all. It starts at the first walk that needs it
 * (many programs never do), and its pipe goes high (pipe2 below).
 */
static atomic_int unw_started;
static __thread int unw_starting __attribute__((tls_model("initial-exec")));

static void unw_start(void)
{
	if (!atomic_load_explicit(&unw_started, memory_order_acquire)) {
		/* two threads at once only set the same policy twice */
		unw_starting = 1;
		unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
		unw_starting = 0;
		atomic_store_explicit(&unw_started, 1, memory_order_release);
	}
}

/*
 * libunwind's pipe, made while it starts (from its pipe2 call, through the
 * PLT, to here): moved high like the trace's own descriptors, out of the
 * way of the program's numbers. Every other call is the system call alone.
 */
HS_EXPORT int pipe2(int fds[2], int flags)
{
	int rc = (int)syscall(SYS_pipe2, fds, flags);

	if (rc == 0 && unw_starting) {
		fds[0] = hs_fd_move_high(fds[0]);
		fds[1] = hs_fd_move_high(fds[1]);
	}
	return rc;
}

/* Out of line: its frame (the walk's buffer) only where the walk runs in place. */
__attribute__((noinline)) static int walk_in_place(uint64_t *ips)
{
	void *raw[HS_MAX_FRAMES + 16];
	int n, i, k = 0, e = errno;   /* libunwind probes addresses with calls that fail: the program's errno stays */

	unw_start();
	n = unw_backtrace(raw, HS_MAX_FRAMES + 16);
	errno = e;

	for (i = 0; i < n && k < HS_MAX_FRAMES; i++)
		if ((uintptr_t)raw[i] < hs_g.self_lo || (uintptr_t)raw[i] >= hs_g.self_hi)
			ips[k++] = (uint64_t)(uintptr_t)raw[i];
	/* frames left over, or libunwind's buffer full: the outermost kept says the rest is missing */
	if (k == HS_MAX_FRAMES && (i < n || n == HS_MAX_FRAMES + 16))
		ips[k - 1] = HS_ADDR_TRUNCATED;
	return k;
}

/*
 * The same walk on the walk stack: libunwind goes back to the hook's
 * stack through hs_on_stack's frame (its CFA is rbp + 16). unw_step from a
 * context captured before the switch, instead, took a signal mask call
 * per frame: 12 times as long for a coroutine's allocations.
 */
struct walk_job {
	uint64_t *ips;
	int n;
};

static void walk_there(void *arg)
{
	struct walk_job *j = arg;

	j->n = walk_in_place(j->ips);
}

/*
 * libunwind's walk, for what our rules cannot do: return addresses,
 * innermost first, ours left out (at the top, or above a signal frame when
 * a handler interrupted a hook). None in a forked child whose loader is
 * stuck (hs_loader_stuck), which libunwind would ask, nor in a handler
 * that interrupted a walk on the walk stack with too little of it left.
 */
int hs_unwind_plain(struct hs_thread *t, uint64_t *ips)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uintptr_t wlo = (uintptr_t)t->walk_stack, whi = wlo + sizeof(t->walk_stack);
	struct walk_job *j;

	if (hs_loader_stuck)
		return 0;
	if (in_stack(t, sp) && sp - t->stack_lo >= WALK_ROOM)
		return walk_in_place(ips);
	if (sp >= wlo && sp < whi)
		return sp - wlo >= WALK_ROOM ? walk_in_place(ips) : 0;
	if (t->on_walk_stack)
		return 0;
	j = (struct walk_job *)(whi - 64);
	j->ips = ips;
	j->n = 0;
	t->on_walk_stack = 1;
	hs_on_stack(j, walk_there, j);
	t->on_walk_stack = 0;
	return j->n;
}

/*
 * The walk libunwind makes; where it cannot, the nn frames our rules walked
 * before they could not go on (u->cur, innermost first). Stored outermost
 * first, with no registers (sp 0), so that no later walk starts from them.
 */
static int slow_walk(struct hs_thread *t, int nn)
{
	struct hs_unwind_state *u = &t->uw;
	uint64_t *ips = u->slow_ips;
	int k = hs_unwind_plain(t, ips);

	if (k == 0) {
		for (; k < nn; k++)
			ips[k] = u->cur[k].ip;
		/* our rules stopped at the depth we keep, not at a frame they could not walk */
		if (k == HS_MAX_FRAMES)
			ips[k - 1] = HS_ADDR_TRUNCATED;
	}
	for (int i = 0; i < k; i++) {
		memset(&u->f[i], 0, sizeof(u->f[i]));
		u->f[i].ip = ips[k - 1 - i];
	}
	u->n = k;
	u->chk_n = 0;
	return k;
}

/*
 * Field by field: GCC turns a 64-byte struct copy (or memcpy) into rep movs
 * here, whose start-up cost was most of the time of a short walk.
 */
static inline void copy_frame(struct hs_uframe *dst, const struct hs_uframe *src)
{
	dst->ip = src->ip;
	dst->sp = src->sp;
	dst->bp = src->bp;
	dst->ra_addr = src->ra_addr;
	dst->ra_val = src->ra_val;
	dst->bp_addr = src->bp_addr;
	dst->bp_val = src->bp_val;
	dst->node = src->node;
	dst->bp_ok = src->bp_ok;
	dst->uses_bp = src->uses_bp;
	dst->bp_rule = src->bp_rule;
	dst->need_bp = src->need_bp;
}

/*
 * None of the n words a walk read changed: innermost first, where walks
 * that share their outer frames differ; four words per branch, since most
 * walks check a dozen or more and they rarely differ.
 */
static inline int words_unchanged(const uint64_t *addr, const uint64_t *val, int n)
{
	uint64_t diff = 0;

	for (; n >= 4; n -= 4) {
		diff = (*(const uint64_t *)(uintptr_t)addr[n - 1] ^ val[n - 1]) |
		       (*(const uint64_t *)(uintptr_t)addr[n - 2] ^ val[n - 2]) |
		       (*(const uint64_t *)(uintptr_t)addr[n - 3] ^ val[n - 3]) |
		       (*(const uint64_t *)(uintptr_t)addr[n - 4] ^ val[n - 4]);
		if (diff)
			return 0;
	}
	for (; n > 0; n--)
		diff |= *(const uint64_t *)(uintptr_t)addr[n - 1] ^ val[n - 1];
	return diff == 0;
}

/* The last walk's frames from f[m] outwards are this walk's: f[m] has its registers, and none of their words changed. */
static inline int unchanged(const struct hs_unwind_state *u, int m)
{
	return words_unchanged(u->chk_addr, u->chk_val, u->chk_end[m]);
}

/*
 * Keeps f[0 .. keep) and appends the walk's nn new frames outside in. The
 * words to check later: every saved return address, but a saved rbp only
 * where the frame outside computes its CFA from rbp before restoring it
 * (rarely, in code without frame pointers, where rbp is just a register).
 */
static void append_walk(struct hs_unwind_state *u, int keep, int nn)
{
	int c = keep ? u->chk_end[keep - 1] : 0;

	for (int i = nn - 1, k = keep; i >= 0; i--, k++) {
		struct hs_uframe *f = &u->f[k];
		int outer_needs = k > 0 && u->f[k - 1].need_bp;

		copy_frame(f, &u->cur[i]);
		f->need_bp = f->uses_bp || (f->bp_rule == BP_SAME && outer_needs);
		if (f->ra_addr) {
			u->chk_addr[c] = f->ra_addr;
			u->chk_val[c++] = f->ra_val;
		}
		if (f->bp_addr && outer_needs) {
			u->chk_addr[c] = f->bp_addr;
			u->chk_val[c++] = f->bp_val;
		}
		u->chk_end[k] = (uint16_t)c;
	}
	u->n = keep + nn;
	u->chk_n = c;
}

/*
 * The previous walk's frame at index m or further out (lower index) whose
 * sp is at least sp, or -1. Its own function, so that the index stays in a
 * register: spilled in hs_unwind's loop, each step waited on the store
 * before.
 */
static inline int frame_below(const struct hs_unwind_state *u, int m, uint64_t sp)
{
	const struct hs_uframe *f = u->f;
	int i = m;

	while (i >= 0 && f[i].sp < sp)
		i--;
	return i;
}

/* f, a frame of an earlier walk, has the registers this walk has reached (rbp only where the walk from f on needs it) */
static inline int same_frame(const struct hs_uframe *f, uint64_t ip, uint64_t sp, uint64_t bp, int bp_ok)
{
	return f->sp == sp && f->ip == ip && (!f->need_bp || (f->bp == bp && f->bp_ok == bp_ok && bp_ok));
}

static inline size_t walk_set(uint64_t ip, uint64_t sp)
{
	return (size_t)((((ip ^ (sp << 16)) * 0x9e3779b97f4a7c15ull) >> 40) & (HS_WALK_SETS - 1));
}

/* None of the words w read changed (words_unchanged with w's places above its first frame's sp). */
static inline int walk_unchanged(const struct hs_walk *w, uint64_t sp)
{
	const uint64_t *base = (const uint64_t *)(uintptr_t)sp;
	const uint16_t *off = w->chk_off;
	const uint64_t *val = w->chk_val;
	uint64_t diff = 0;
	int n = w->nchk;

	for (; n >= 4; n -= 4) {
		diff = (base[off[n - 1]] ^ val[n - 1]) | (base[off[n - 2]] ^ val[n - 2]) |
		       (base[off[n - 3]] ^ val[n - 3]) | (base[off[n - 4]] ^ val[n - 4]);
		if (diff)
			return 0;
	}
	for (; n > 0; n--)
		diff |= base[off[n - 1]] ^ val[n - 1];
	return diff == 0;
}

/*
 * The recent walk (hs_unwind_keep) that starts with these registers and
 * whose words are unchanged, or NULL. Out of the walk's loop, which it
 * would slow. Several walks share their first registers when they differ
 * further out (sqlite's allocations all leave through one call in
 * sqlite3MemMalloc); and where the stack's random start puts two such
 * first frames in one set, five walks an insert cycled through four ways,
 * so that every lookup missed in one run of sqlite3 out of three or four
 * (a fifth of its walks then stepped ten frames each): eight ways.
 */
__attribute__((noinline)) static const struct hs_walk *kept_walk(const struct hs_thread *t, uint64_t ip, uint64_t sp,
								  uint64_t bp, int bp_ok)
{
	size_t set = walk_set(ip, sp);
	const uint64_t *kip = t->walk_ip[set], *ksp = t->walk_sp[set];

	for (int i = 0; i < HS_WALK_WAYS; i++) {
		const struct hs_walk *w = &t->walks[set][i];
		if (kip[i] == ip && ksp[i] == sp && (!w->need_bp || (w->bp == bp && w->bp_ok == bp_ok && bp_ok)) &&
		    walk_unchanged(w, sp))
			return w;
	}
	return NULL;
}

/*
 * After a walk whose frames all have node ids: keeps it among the recent
 * walks. Not a libunwind walk (no registers, no words to check), nor one
 * that read more words than a slot holds.
 */
void hs_unwind_keep(struct hs_thread *t)
{
	const struct hs_unwind_state *u = &t->uw;
	const struct hs_uframe *f;
	struct hs_walk *w;
	size_t set;

	if (u->n < 1 || u->chk_n > HS_WALK_WORDS)
		return;
	f = &u->f[u->n - 1];
	if (!f->sp)
		return;
	for (int i = 0; i < u->chk_n; i++)
		if (u->chk_addr[i] < f->sp || u->chk_addr[i] - f->sp >= (uint64_t)8 << 16 || ((u->chk_addr[i] - f->sp) & 7))
			return;
	set = walk_set(f->ip, f->sp);
	w = &t->walks[set][t->walk_next[set]];
	/* t->in_unwind is set: a signal handler interrupting us walks with libunwind, not from these */
	t->walk_ip[set][t->walk_next[set]] = f->ip;
	t->walk_sp[set][t->walk_next[set]] = f->sp;
	t->walk_next[set] = (uint8_t)((t->walk_next[set] + 1) % HS_WALK_WAYS);
	w->bp = f->bp;
	w->node = f->node;
	w->bp_ok = f->bp_ok;
	w->need_bp = f->need_bp;
	w->nchk = (uint8_t)u->chk_n;
	for (int i = 0; i < u->chk_n; i++) {
		w->chk_off[i] = (uint16_t)((u->chk_addr[i] - f->sp) >> 3);
		w->chk_val[i] = u->chk_val[i];
	}
}

/*
 * Leaves the backtrace of the hook's caller in t->uw.f[0 .. return value),
 * outermost first. *kept tells how many outer frames (with their node ids)
 * were kept from the previous walk; the others are new. Or, when a recent
 * walk (hs_unwind_keep) is this one, returns 0 with its stack id in *node
 * and t->uw untouched. from: a frame of ours further out on this stack,
 * where the walk of our own frames may start (fewer of them), or NULL.
 * Not kept out of line: a call more here cost 5-7% of a traced malloc/free
 * pair, and the walk of our frames starts from whichever frame holds it.
 */
int hs_unwind(struct hs_thread *t, int *kept, uint32_t *node, const void *from)
{
	struct hs_unwind_state *u = &t->uw;
	/* a caller's frame of ours (an argument: a signal handler's hook, nested, has its own), else this one */
	uintptr_t *fp = from ? (uintptr_t *)(uintptr_t)from : __builtin_frame_address(0);
	uint64_t ip = 0, sp = 0, bp = 0;
	int bp_ok = 1, nn = 0, m = u->n - 1, keep = 0;

	*kept = 0;
	if (!t->stack_hi || hs_g.cfg.libunwind_only)
		goto slow;
	/* our own frames keep frame pointers: walk them to the first foreign frame */
	for (int i = 0; i < 32; i++) {
		if (!in_stack(t, (uintptr_t)fp) || !in_stack(t, (uintptr_t)(fp + 1)))
			goto slow;
		ip = fp[1];
		if (ip < hs_g.self_lo || ip >= hs_g.self_hi) {
			sp = (uint64_t)(uintptr_t)(fp + 2);
			bp = fp[0];
			break;
		}
		if (fp[0] <= (uintptr_t)fp)
			goto slow;
		fp = (uintptr_t *)fp[0];
	}
	if (!sp)
		goto slow;
	/*
	 * The first frame: maybe one of the recent walks, whole. Not where the
	 * last full walk's innermost frame is this one, as in a loop allocating
	 * at one place, which the loop below keeps from that walk; elsewhere
	 * the loop would step through that walk's frames, a cache line each,
	 * before finding none (sqlite3 traced, 1.38x to 1.26x native: its last
	 * full walk is mostly deeper than the walks the recent ones answer).
	 */
	if (m < 0 || u->f[m].sp != sp || u->f[m].ip != ip) {
		const struct hs_walk *w = kept_walk(t, ip, sp, bp, bp_ok);
		if (w) {
			*node = w->node;
			return 0;
		}
	}

	for (;;) {
		const struct rule *r;
		struct hs_uframe *f;
		uint64_t cfa;

		/* the previous walk's frames, inside out, have rising sp: look for one with these registers */
		m = frame_below(u, m, sp);
		if (m >= 0 && same_frame(&u->f[m], ip, sp, bp, bp_ok)) {
			if (unchanged(u, m)) {
				keep = m + 1;
				break;
			}
			m = -1; /* a word outside changed: no frame further out can match either */
		}
		if (nn == HS_MAX_FRAMES)
			goto slow; /* deeper than we keep: libunwind's walk keeps the innermost frames */
		r = rule_find(ip);
		/*
		 * a new rule asks the loader, whose lock a thread in dlopen may
		 * hold while it waits for the allocator's: not from inside one
		 */
		if (!r && t->no_alloc)
			goto slow;
		if (!r)
			r = rule_add(t, ip);
		if (!r || (r->kind >= RULE_BAD && (r->kind == RULE_BAD || !bp_ok || bp)))
			goto slow;
		f = &u->cur[nn++];
		f->ip = ip;
		f->sp = sp;
		f->bp = bp;
		f->bp_ok = (uint8_t)bp_ok;
		f->ra_addr = 0;
		f->bp_addr = 0;
		/* a frame without CFI ends the walk for its rbp of 0: a walk kept from it needs the same */
		f->uses_bp = (r->kind == RULE_OK && r->cfa_reg == CFA_BP) || r->kind == RULE_NONE;
		f->bp_rule = r->kind == RULE_OK ? r->bp_rule : BP_LOST;
		if (r->kind != RULE_OK)
			break;
		if (r->cfa_reg == CFA_BP && !bp_ok)
			goto slow;
		cfa = (r->cfa_reg == CFA_SP ? sp : bp) + (uint64_t)(int64_t)r->cfa_off;
		f->ra_addr = cfa + (uint64_t)(int64_t)r->ra_off;
		if (cfa <= sp || !in_stack(t, f->ra_addr))
			goto slow;
		f->ra_val = *(const uint64_t *)(uintptr_t)f->ra_addr;
		if (r->bp_rule == BP_SAVED) {
			f->bp_addr = cfa + (uint64_t)(int64_t)r->bp_off;
			if (!in_stack(t, f->bp_addr))
				goto slow;
			f->bp_val = *(const uint64_t *)(uintptr_t)f->bp_addr;
			bp = f->bp_val;
			bp_ok = 1;
		} else if (r->bp_rule == BP_LOST) {
			bp_ok = 0;
		}
		ip = f->ra_val;
		sp = cfa;
		if (ip == 0)
			break;
	}
	if (keep + nn > HS_MAX_FRAMES)
		goto slow;
	if (nn || keep != u->n)
		append_walk(u, keep, nn);
	*kept = keep;
	return keep + nn;

slow:
	return slow_walk(t, nn);
}
