/* state.c - start-up, configuration, per-thread state, fork, exit and the public control API */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <cpuid.h>
#include <x86intrin.h>
#include <unistd.h>

#include "../../include/heapscope/heapscope.h"
#include "../common/size.h"
#include "../common/varint.h"
#include "tracer.h"

struct hs_global hs_g = {
	.threads_lock = HS_LOCK_INIT,
	.writer_lock = HS_LOCK_INIT,
};

__thread struct hs_thread *hs_tls_thread __attribute__((tls_model("initial-exec")));
__thread struct hs_thread *hs_tls_hook __attribute__((tls_model("initial-exec")));
static __thread int tls_gone __attribute__((tls_model("initial-exec")));
static pthread_key_t thread_key;
static uint64_t mono_base;
static int ctor_done, once_done, started_once;
static char self_path[4096];

uint64_t hs_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - mono_base;
}

/*
 * Event stamps are raw TSC ticks when the TSC is invariant (11 ns here
 * against 28 ns for clock_gettime); the writer turns them into nanoseconds
 * with a rate it refines against CLOCK_MONOTONIC over the whole run.
 *
 * The conversion must never go back: a free stamped after its block's
 * allocation in another thread must not come out before it, or readers
 * take it for the late free of an older block. Re-anchoring on each
 * reading of the clock made it jump by the reading's error (a writer
 * preempted between rdtsc and clock_gettime on a busy machine: hundreds
 * of untracked frees in a two-thread ping-pong). So the conversion is a
 * chain of segments, each starting where the one before ends: when the
 * clock is ahead, the next segment steps forward to it; when behind, the
 * next segment runs slower until it meets it. Ticks before a segment's
 * start keep the segment they fell in.
 */
int hs_use_tsc;
static uint64_t cal_ns0, cal_tsc0;
static double cal_rate = 1.0;
/* HEAPSCOPE_TEST_CLOCK_ERROR: every other reading that much behind, as when the writer is preempted in it */
static uint32_t clock_error_ns;
/* HEAPSCOPE_TEST_CLOCK=gettime: clock_gettime for every stamp, as on a CPU without an invariant TSC */
static int clock_gettime_only;
/* HEAPSCOPE_TEST_FAIL_THREAD=n (tests only): the n-th thread state cannot be mapped, as when out of memory */
static long fail_thread, threads_made;

struct clock_seg {
	uint64_t tsc, ns;
	uint64_t mult; /* ns per tick, fixed point with 24 fraction bits */
};
#define CLOCK_SEGS 64 /* at one per writer tick, 640 ms: older events use the oldest, extrapolated */
static struct clock_seg segs[CLOCK_SEGS];
static unsigned seg_last, seg_count;

/* The pair read closest together of three: a reading the writer was preempted in is off by the preemption. */
static void clock_pair(uint64_t *ns, uint64_t *tsc)
{
	uint64_t best = UINT64_MAX;

	*ns = *tsc = 0;
	for (int i = 0; i < 3; i++) {
		uint64_t a = __rdtsc(), n = hs_now_ns(), b = __rdtsc();
		if (b - a < best) {
			best = b - a;
			*ns = n;
			*tsc = a + (b - a) / 2;
		}
	}
}

static uint64_t seg_at(const struct clock_seg *s, uint64_t t)
{
	if (t >= s->tsc)
		return s->ns + (uint64_t)(((unsigned __int128)(t - s->tsc) * s->mult) >> 24);
	uint64_t back = (uint64_t)(((unsigned __int128)(s->tsc - t) * s->mult) >> 24);
	return back < s->ns ? s->ns - back : 0;
}

static void seg_push(uint64_t tsc, uint64_t ns, double rate)
{
	seg_last = (seg_last + 1) % CLOCK_SEGS;
	segs[seg_last] = (struct clock_seg){ tsc, ns, (uint64_t)(rate * (double)(1u << 24)) };
	if (seg_count < CLOCK_SEGS)
		seg_count++;
}

/*
 * The kernel checks at boot that the cores' TSCs agree, and if they do
 * not it clocks itself by the HPET or the ACPI PM timer instead. Stamps
 * from different cores are then not comparable, and frees could sort
 * before the allocations they free in another thread. (A hypervisor's
 * clock, kvm-clock or the like, says nothing either way.)
 */
static int kernel_refused_tsc(void)
{
	char buf[32];
	ssize_t n;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/sys/devices/system/clocksource/clocksource0/current_clocksource",
			      O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return !strncmp(buf, "hpet", 4) || !strncmp(buf, "acpi_pm", 7);
}

static void clock_init(void)
{
	unsigned a, b, c, d;

	hs_use_tsc = !clock_gettime_only && __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)) &&
		     !kernel_refused_tsc();
	if (hs_use_tsc)
		clock_pair(&cal_ns0, &cal_tsc0);
}

/*
 * The first segment, with the rate over the time since clock_init (at
 * least 50 µs: two readings' error is then 0.1% of it at most). Taken by
 * the first conversion or the writer's first tick, not at start: a spin of
 * 200 µs there was a seventh of what tracing adds to a short process.
 */
static void clock_first(void)
{
	uint64_t ns, tsc;

	do
		clock_pair(&ns, &tsc);
	while (ns - cal_ns0 < 50000);
	cal_rate = (double)(ns - cal_ns0) / (double)(tsc - cal_tsc0);
	seg_push(tsc, ns, cal_rate);
}

/* Writer only (under its lock), every few ms: one more segment. */
void hs_clock_refine(void)
{
	const struct clock_seg *s;
	uint64_t ns, tsc, at;
	double rate;

	if (!hs_use_tsc)
		return;
	if (!seg_count) {
		clock_first();
		return;
	}
	s = &segs[seg_last];
	clock_pair(&ns, &tsc);
	if (clock_error_ns && (seg_last & 1) && ns > clock_error_ns)
		ns -= clock_error_ns;
	if (tsc <= s->tsc)
		return;
	if (ns - cal_ns0 > 10000000)
		cal_rate = (double)(ns - cal_ns0) / (double)(tsc - cal_tsc0);
	at = seg_at(s, tsc);
	rate = cal_rate;
	if (ns >= at) {
		at = ns;
	} else {
		/* meet the clock when as many ticks have passed again as since the last segment, at most 1/64 slower */
		rate -= (double)(at - ns) / (double)(tsc - s->tsc);
		if (rate < cal_rate * (63.0 / 64.0))
			rate = cal_rate * (63.0 / 64.0);
	}
	seg_push(tsc, at, rate);
}

/* The segment tick t falls in (nearly every event's is the newest or the one before), else the oldest. */
static unsigned seg_of(uint64_t t)
{
	unsigned i = seg_last;

	for (unsigned n = 1; n < seg_count && t < segs[i].tsc; n++)
		i = (i + CLOCK_SEGS - 1) % CLOCK_SEGS;
	return i;
}

/*
 * The start of the unit of res ns that tick t falls in, and in *until a
 * tick before which every later tick falls in it too: the writer then
 * converts once per unit instead of once per event (a 128-bit product per
 * event was 3% of four churning threads' time). Until the next
 * hs_clock_refine().
 */
uint64_t hs_ticks_to_unit(uint64_t t, uint64_t res, uint64_t *until)
{
	const struct clock_seg *s;
	uint64_t start, end;
	unsigned i;

	if (!hs_use_tsc) {
		start = t / res * res;
		*until = start + res;
		return start;
	}
	if (!seg_count)
		clock_first();
	i = seg_of(t);
	s = &segs[i];
	start = seg_at(s, t) / res * res;
	*until = t + 1;
	if (t < s->tsc || !s->mult)
		return start;
	/* below this many ticks past s->tsc, the product stays below (start + res - s->ns) << 24 */
	end = s->tsc + (uint64_t)(((unsigned __int128)(start + res - s->ns) << 24) / s->mult);
	if (i != seg_last && end > segs[(i + 1) % CLOCK_SEGS].tsc)
		end = segs[(i + 1) % CLOCK_SEGS].tsc;
	if (end > t)
		*until = end;
	return start;
}

uint64_t hs_ns_to_ticks(uint64_t ns)
{
	return hs_use_tsc ? (uint64_t)((double)ns / cal_rate) : ns;
}

void hs_disable(const char *why)
{
	int expected = HS_ACTIVE;
	if (atomic_compare_exchange_strong(&hs_g.state, &expected, HS_INERT)) {
		hs_log(why, NULL, NULL);
		hs_writer_disabled(why);
	}
}

static void thread_dtor(void *arg)
{
	struct hs_thread *t = arg;

	/* come back in the next round: other destructors may still allocate */
	if (++t->dtor_rounds < PTHREAD_DESTRUCTOR_ITERATIONS - 1) {
		pthread_setspecific(thread_key, t);
		return;
	}
	hs_tls_thread = NULL;
	hs_tls_hook = NULL;
	tls_gone = 1;
	atomic_store(&t->dead, 1);
	atomic_fetch_add(&hs_g.to_reap, 1);
	hs_writer_wake();
}

/*
 * States of exited threads, for new threads to take (under threads_lock).
 * A fresh state faults its pages in as the thread first touches them, twice
 * where it reads before it writes, and the second fault flushes the TLBs of
 * every CPU the process runs on: 70,000 threads started 8 at a time took
 * 8.6 s traced against 2.5-2.8 s natively, most of it in the kernel; now
 * 2.9 s. An ending thread wakes the writer, which reaps its state at once,
 * so a few spares keep up (waiting for the writer's tick took 256 spares
 * and 48 MB to come near). A spare gives its ring back to the kernel (a
 * ring is written before it is read: its pages fault in once, without a
 * flush), and one unused for a second goes.
 */
#define SPARE_THREADS 16
#define SPARE_KEEP_NS 1000000000ull
static struct hs_thread *spare[SPARE_THREADS]; /* oldest first */
static uint64_t spare_since[SPARE_THREADS];
static int nspare;

/* Spares unused for SPARE_KEEP_NS go; under threads_lock. */
void hs_thread_spares_trim(void)
{
	uint64_t now = hs_now_ns();
	int gone = 0;

	while (gone < nspare && now - spare_since[gone] > SPARE_KEEP_NS)
		hs_unmap(spare[gone++], sizeof(*spare[0]));
	if (gone) {
		memmove(spare, spare + gone, (size_t)(nspare - gone) * sizeof(spare[0]));
		memmove(spare_since, spare_since + gone, (size_t)(nspare - gone) * sizeof(spare_since[0]));
		nspare -= gone;
	}
}

/* An exited thread's state whose events are all written: a spare, or gone; under threads_lock. */
void hs_thread_retire(struct hs_thread *t)
{
	if (nspare == SPARE_THREADS) {
		hs_unmap(t, sizeof(*t));
		return;
	}
	syscall(SYS_madvise, t->ring, sizeof(t->ring), MADV_DONTNEED);
	spare[nspare] = t;
	spare_since[nspare++] = hs_now_ns();
}

/* The spares go: their stack ids are an old trace's, or they are a forked parent's. Under threads_lock. */
static void spares_drop(void)
{
	while (nspare > 0)
		hs_unmap(spare[--nspare], sizeof(*spare[0]));
}

/* No kept walk matches a later one: the last walk's frames are gone, and a set's way with ip 0 never matches. */
static void walks_forget(struct hs_thread *t)
{
	t->uw.n = 0;
	memset(t->walk_ip, 0, sizeof(t->walk_ip));
}

/* A new file: none of a thread's stack ids (cached, or in kept walks) carry over. */
static void thread_forget(struct hs_thread *t)
{
	walks_forget(t);
	hs_zero(t->cache, sizeof(t->cache));
}

/*
 * A spare as new: what precedes its unwinding state zeroed, no kept walks.
 * The cache stays (its ids are the trace's, whichever thread found them),
 * and so does the tag: the thread that had it exited, and its events were
 * all written, before this one can make any. Reusing tags keeps a program
 * that starts thread after thread from running out of them (65,535), after
 * which every stamp takes the fence.
 */
static void thread_reuse(struct hs_thread *t)
{
	uint64_t tag = t->tag;

	memset(t, 0, offsetof(struct hs_thread, uw));
	t->tag = tag;
	walks_forget(t);
}

#define WIPED_THREADS 64
static atomic_uint wiped_threads;

static struct hs_thread *thread_new(void)
{
	struct hs_thread *t = NULL;

	if (fail_thread && __atomic_add_fetch(&threads_made, 1, __ATOMIC_RELAXED) == fail_thread)
		return NULL;
	hs_lock_take(&hs_g.threads_lock);
	if (nspare > 0)
		t = spare[--nspare];
	hs_lock_release(&hs_g.threads_lock);
	if (t) {
		thread_reuse(t);
	} else {
		if (!(t = hs_map(sizeof(*t))))
			return NULL;
		/*
		 * A followed child starts its cache and ring afresh (fork_child),
		 * an unfollowed one never reads them. The mark splits the state
		 * into two mappings the kernel cannot merge with its neighbours':
		 * 200 threads took 913 mappings, not 585 (native 454), and a
		 * program of thousands of threads nears vm.max_map_count (65,530).
		 * The first WIPED_THREADS states made have it (spares keep it).
		 */
		if (atomic_fetch_add_explicit(&wiped_threads, 1, memory_order_relaxed) < WIPED_THREADS)
			hs_wipe_on_fork(t->cache, sizeof(*t) - offsetof(struct hs_thread, cache));
		t->tag = hs_thread_tag();
	}
	t->tid = (uint32_t)hs_gettid();
	t->rng = ((uint64_t)t->tid << 32) ^ (uint64_t)(uintptr_t)t ^ 0x2545f4914f6cdd1dull;
	t->sample_left = 0;
	hs_lock_take(&hs_g.threads_lock);
	t->next = hs_g.threads;
	hs_g.threads = t;
	hs_lock_release(&hs_g.threads_lock);
	return t;
}

struct hs_thread *hs_thread_create(void)
{
	struct hs_thread *t = thread_new();

	if (!t) {
		/* a thread whose events would go unrecorded makes every figure wrong: stop, and say so */
		hs_disable("out of memory for a thread's event buffer; tracing stopped");
		return NULL;
	}
	hs_tls_thread = t;
	/* an exiting thread's late frees (libc's own, after our destructor ran): no destructor will say when it is gone */
	t->orphan = tls_gone;
	if (tls_gone)
		atomic_fetch_add(&hs_g.to_reap, 1);
	hs_unwind_thread_init(t);
	if (!tls_gone) {
		sigset_t old;
		hs_internal_enter(t, &old);
		pthread_setspecific(thread_key, t);
		hs_internal_leave(t, &old);
	}
	hs_tls_hook = t->internal ? NULL : t;
	return t;
}

/* "250ns", "10us", "1ms", or a number of ns, 1 ns to 1 s; 0: unset, out of range or malformed */
static uint32_t parse_duration(const char *s)
{
	uint64_t v = 0;
	int digits = 0;

	if (!s || !*s)
		return 0;
	while (*s >= '0' && *s <= '9' && v < 1000000000000ull) {
		v = v * 10 + (uint64_t)(*s++ - '0');
		digits++;
	}
	if (!digits)
		return 0;
	if (!strcmp(s, "us"))
		v *= 1000;
	else if (!strcmp(s, "ms"))
		v *= 1000000;
	else if (!strcmp(s, "s"))
		v *= 1000000000;
	else if (*s && strcmp(s, "ns"))
		return 0;
	return v >= 1 && v <= 1000000000 ? (uint32_t)v : 0;
}

static int env_true(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") != 0 && strcmp(v, "no") != 0;
}

/* Removes our library from LD_PRELOAD in place, so exec'd programs run untraced. */
static void strip_preload(void)
{
	char *v = getenv("LD_PRELOAD");
	char *r, *w;

	if (!v || !self_path[0])
		return;
	for (r = w = v; *r;) {
		size_t n = strcspn(r, ": ");
		const char *base = r;
		for (size_t i = 0; i < n; i++)
			if (r[i] == '/')
				base = r + i + 1;
		int ours = (n == strlen(self_path) && !strncmp(r, self_path, n)) ||
			   ((size_t)(r + n - base) == strlen("libheapscope.so") && !strncmp(base, "libheapscope.so", 15));
		if (!ours) {
			if (w != v)
				*w++ = ':';
			memmove(w, r, n);
			w += n;
		}
		r += n;
		while (*r == ':' || *r == ' ')
			r++;
	}
	*w = 0;
	if (!*v)
		unsetenv("LD_PRELOAD");
}

static void find_self(void)
{
	Dl_info info;
	struct link_map *lm = NULL;

	if (dladdr1((void *)&find_self, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm) {
		const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)info.dli_fbase;
		const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
		hs_g.self_lo = UINTPTR_MAX;
		for (int i = 0; i < eh->e_phnum; i++) {
			if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
				continue;
			uintptr_t lo = lm->l_addr + ph[i].p_vaddr;
			if (lo < hs_g.self_lo)
				hs_g.self_lo = lo;
			if (lo + ph[i].p_memsz > hs_g.self_hi)
				hs_g.self_hi = lo + ph[i].p_memsz;
		}
		if (info.dli_fname && strlen(info.dli_fname) < sizeof(self_path))
			strcpy(self_path, info.dli_fname);
	}
}

const char *hs_self_path(void) { return self_path; }

static void fork_parent(void);
static void fork_child(void);
static int writer_start(void);
static void quick_exit_flush(void);

/* Work done once per process image, whether or not tracing starts. */
static void init_once(void)
{
	struct timespec ts;

	if (once_done)
		return;
	once_done = 1;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	mono_base = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	find_self();
	pthread_key_create(&thread_key, thread_dtor);
	pthread_atfork(NULL, fork_parent, fork_child);
	/* the first registered runs last: after the program's own at_quick_exit handlers */
	at_quick_exit(quick_exit_flush);
}

/* Just before tracing becomes active: the calls counted so far are not this trace's. */
static void counts_rebase(void)
{
	hs_lock_take(&hs_g.threads_lock);
	for (struct hs_thread *t = hs_g.threads; t; t = t->next)
		for (int i = 0; i < HS_FN_COUNT; i++) {
			__atomic_store_n(&t->calls_base[i], __atomic_load_n(&t->calls[i], __ATOMIC_RELAXED), __ATOMIC_RELAXED);
			__atomic_store_n(&t->bytes_base[i], __atomic_load_n(&t->bytes[i], __ATOMIC_RELAXED), __ATOMIC_RELAXED);
		}
	hs_lock_release(&hs_g.threads_lock);
}

/*
 * hs_start() after hs_stop(): a new file knows none of the old stack ids or
 * modules, and whatever threads left in their rings belongs to the old one.
 */
static void restart(void)
{
	hs_meta_reset();
	hs_stacks_reset();
	hs_modules_reset();
	hs_lock_take(&hs_g.threads_lock);
	for (struct hs_thread *t = hs_g.threads; t; t = t->next) {
		atomic_store(&t->tail, t->reserve);
		atomic_store(&t->head, t->reserve);
		thread_forget(t);
	}
	spares_drop();
	hs_lock_release(&hs_g.threads_lock);
	for (int i = 0; i < HS_FN_COUNT; i++) {
		atomic_store(&hs_g.folded_calls[i], 0);
		atomic_store(&hs_g.folded_bytes[i], 0);
	}
	atomic_store(&hs_g.untraced_children, 0);
}

/*
 * Another library's malloc found before ours (jemalloc ahead of us in
 * LD_PRELOAD): the program's calls never reach our hooks, and its trace
 * would hold no allocation without a word why.
 */
static void *malloc_called(void)
{
	void *m = dlsym(RTLD_DEFAULT, "malloc"), *main_h, *h, *p;
	const ElfW(Sym) *sym = NULL;
	struct link_map *lm, *at;
	Dl_info di;

	if (!m || !dladdr1(m, &di, (void **)&sym, RTLD_DL_SYMENT) || !sym || sym->st_shndx != SHN_UNDEF)
		return m;
	/*
	 * A non-PIE program that takes malloc's address (python3 does) makes
	 * the PLT slot in its own image malloc's address: the definition its
	 * calls reach is the first one in load order.
	 */
	main_h = dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD);
	if (!main_h)
		return NULL;
	if (dlinfo(main_h, RTLD_DI_LINKMAP, &lm) != 0)
		lm = NULL;
	dlclose(main_h);
	for (m = NULL; lm && !m; lm = lm->l_next) {
		if (!lm->l_name[0] || !(h = dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD)))
			continue;
		/* searches the object's dependencies too: keep it only if defined in the object itself */
		p = dlsym(h, "malloc");
		if (p && dladdr1(p, &di, (void **)&at, RTLD_DL_LINKMAP) && at == lm)
			m = p;
		dlclose(h);
	}
	return m;
}

static void check_malloc_is_ours(void)
{
	void *m = malloc_called();
	struct link_map *lm = NULL;
	Dl_info di;

	if (!m || ((uintptr_t)m >= hs_g.self_lo && (uintptr_t)m < hs_g.self_hi))
		return;
	if (!dladdr1(m, &di, (void **)&lm, RTLD_DL_LINKMAP) || !di.dli_fname)
		return;
	/* the program's own image comes before any preload: no order of LD_PRELOAD helps */
	if (lm && !lm->l_name[0])
		hs_log("malloc here is the program's own, linked into", di.dli_fname,
		       ": preloading cannot trace its calls; build it with the system malloc or a shared allocator library to trace them");
	else
		hs_log("malloc here is that of", di.dli_fname,
		       ", loaded before libheapscope.so: its calls are not traced; put libheapscope.so first in LD_PRELOAD");
}

/*
 * The template, made absolute from the working directory at the start: a
 * program that changes directory before it forks or execs had its followed
 * children's traces written there, where `record` did not look for them.
 * The writer reopens the file by this path too, should the program take its
 * descriptor.
 */
static int absolute_output(const char *path)
{
	char cwd[sizeof(hs_g.cfg.output)];
	size_t n;

	cwd[0] = 0;
	/* no working directory (deleted, or too long): relative it stays, as before */
	if (path[0] != '/' && syscall(SYS_getcwd, cwd, sizeof(cwd)) <= 0)
		cwd[0] = 0;
	n = strlen(cwd);
	if (n && cwd[n - 1] != '/')
		cwd[n++] = '/';
	if (n + strlen(path) >= sizeof(hs_g.cfg.output))
		return -1;
	memcpy(cwd + n, path, strlen(path) + 1);
	memcpy(hs_g.cfg.output, cwd, strlen(cwd) + 1);
	return 0;
}

static int start(const char *path)
{
	struct hs_thread *t;
	sigset_t old;
	int first = !started_once;

	if (absolute_output(path) < 0) {
		hs_log("the output path is too long:", path, "; give HEAPSCOPE_OUTPUT a shorter one");
		return -1;
	}
	hs_g.pid = getpid();
	if (!started_once) {
		/* here, not at load: a process that never traces (no HEAPSCOPE_OUTPUT) reads neither CPUID nor sysfs */
		clock_init();
		if (hs_meta_init() < 0 || hs_stacks_init() < 0 || hs_modules_init() < 0) {
			hs_log("out of memory at start-up; tracing disabled", NULL, NULL);
			goto release;
		}
		started_once = 1;
	} else {
		restart();
	}
	hs_log_init();
	if (hs_writer_open() < 0)
		goto release;
	t = hs_thread_get();
	hs_internal_enter(t, &old);
	/* RSS from the start: the writer, which reads it later, starts after the constructors, and late on a loaded machine */
	hs_writer_rss_now();
	hs_modules_scan();
	if (first)
		check_malloc_is_ours();
	hs_single_init();
	hs_internal_leave(t, &old);
	/* before tracing: dlsym may allocate */
	hs_signals_install();
	hs_stamps_reset();
	counts_rebase();
	hs_hooks_configure(0);
	atomic_store(&hs_g.state, HS_ACTIVE);
	if (ctor_done && writer_start() < 0) {
		hs_log("cannot start the writer thread; tracing disabled", NULL, NULL);
		atomic_store(&hs_g.state, HS_INERT);
		return -1;
	}
	return 0;

release:
	/*
	 * Out of memory, as a rule: what start-up mapped goes back, so that the
	 * program, which runs on untraced, is not the one short of it (under
	 * ulimit -v 10 MB, 'basic' got NULL from malloc and crashed on it).
	 * Not after an earlier trace (hs_start again), whose tables stay.
	 */
	if (!first)
		return -1;
	started_once = 0;
	hs_writer_release();
	hs_modules_release();
	hs_stacks_release();
	hs_meta_release();
	return -1;
}

/*
 * HEAPSCOPE_SAMPLE and HEAPSCOPE_TIME_RESOLUTION as `heapscope record`
 * reads its options. Read loosely, "1.5M" sampled at every byte, "abc"
 * traced every call and a bad resolution fell back to 100 us, silently: a
 * value that is no size or time now leaves the program untraced, and says
 * so when a trace was asked for. -1: such a value.
 */
static int configure(const char *out)
{
	const char *v = getenv("HEAPSCOPE_SAMPLE"), *res = getenv("HEAPSCOPE_TIME_RESOLUTION");
	uint64_t bytes = 0;
	int e = errno, rc = 0;

	/* 0, as unset: every call */
	if (v && *v && hs_parse_size(v, &bytes) < 0) {
		if (out && *out)
			hs_log("bad HEAPSCOPE_SAMPLE", v, ": give a number of bytes, e.g. 512K or 1M (0: every call); not tracing");
		rc = -1;
		bytes = 0;
	}
	errno = e;  /* strtoull: the program's malloc must not change it */
	hs_g.cfg.sample_bytes = bytes;
	hs_g.cfg.time_resolution_ns = parse_duration(res);
	if (res && *res && !hs_g.cfg.time_resolution_ns) {
		if (out && *out)
			hs_log("bad HEAPSCOPE_TIME_RESOLUTION", res, ": give 1ns to 1s, e.g. 250ns, 10us or 1ms; not tracing");
		rc = -1;
	}
	if (!hs_g.cfg.time_resolution_ns)
		hs_g.cfg.time_resolution_ns = HS_DEFAULT_RESOLUTION_NS;
	return rc;
}

const char *const hs_follow_vars[HS_FOLLOW_VARS] = { "HEAPSCOPE_OUTPUT", "HEAPSCOPE_SAMPLE", "HEAPSCOPE_FOLLOW_FORK",
						     "HEAPSCOPE_FOLLOW_EXEC", "HEAPSCOPE_TIME_RESOLUTION", "HEAPSCOPE_UNWIND" };
static char follow_buf[2 * 4096];
static const char *follow_env[HS_FOLLOW_VARS];

/* copies, not environ's pointers: a program may hand its environment's strings to putenv and change them */
static void follow_env_save(void)
{
	size_t used = 0;

	for (unsigned k = 0; k < HS_FOLLOW_VARS; k++) {
		const char *v = getenv(hs_follow_vars[k]);
		size_t nl = strlen(hs_follow_vars[k]), vl = v ? strlen(v) : 0;

		follow_env[k] = NULL;
		if (!v || used + nl + vl + 2 > sizeof(follow_buf))
			continue;
		memcpy(follow_buf + used, hs_follow_vars[k], nl);
		follow_buf[used + nl] = '=';
		memcpy(follow_buf + used + nl + 1, v, vl + 1);
		follow_env[k] = follow_buf + used;
		used += nl + vl + 2;
	}
}

const char *hs_follow_env(unsigned k)
{
	return k < HS_FOLLOW_VARS ? follow_env[k] : NULL;
}

/* First call into any hook, or our constructor, whichever comes first. */
void hs_init(void)
{
	int expected = HS_UNINIT, bad;
	const char *out;

	hs_hooks_resolve();
	if (!atomic_compare_exchange_strong(&hs_g.state, &expected, HS_INITIALIZING))
		return;
	init_once();
	out = getenv("HEAPSCOPE_OUTPUT");
	bad = configure(out) < 0;
	hs_g.cfg.follow_fork = env_true("HEAPSCOPE_FOLLOW_FORK");
	hs_g.cfg.libunwind_only = getenv("HEAPSCOPE_UNWIND") && !strcmp(getenv("HEAPSCOPE_UNWIND"), "libunwind");
	hs_g.cfg.follow_exec = env_true("HEAPSCOPE_FOLLOW_EXEC");
	hs_g.cfg.no_single = env_true("HEAPSCOPE_TEST_NO_SINGLE");
	hs_g.cfg.raise_at = getenv("HEAPSCOPE_TEST_RAISE_AT") ? atol(getenv("HEAPSCOPE_TEST_RAISE_AT")) : 0;
	hs_g.cfg.raise_full = env_true("HEAPSCOPE_TEST_RAISE_FULL");
	hs_g.cfg.is_child = env_true("HEAPSCOPE_CHILD");
	clock_error_ns = parse_duration(getenv("HEAPSCOPE_TEST_CLOCK_ERROR"));
	clock_gettime_only = getenv("HEAPSCOPE_TEST_CLOCK") && !strcmp(getenv("HEAPSCOPE_TEST_CLOCK"), "gettime");
	fail_thread = getenv("HEAPSCOPE_TEST_FAIL_THREAD") ? atol(getenv("HEAPSCOPE_TEST_FAIL_THREAD")) : 0;
	/*
	 * Whatever this process starts with its environment (posix_spawn,
	 * system, popen, a vfork child's exec) is a child: without the mark, a
	 * spawned program traced into the root's own file and corrupted it.
	 */
	if (hs_g.cfg.follow_exec && !hs_g.cfg.is_child)
		setenv("HEAPSCOPE_CHILD", "1", 1);
	/* the programs it runs write beside it, wherever they start (before tracing: setenv allocates) */
	if (!bad && hs_g.cfg.follow_exec && out && out[0] && out[0] != '/' && absolute_output(out) == 0 &&
	    setenv("HEAPSCOPE_OUTPUT", hs_g.cfg.output, 1) == 0)
		out = getenv("HEAPSCOPE_OUTPUT");
	if (hs_g.cfg.follow_exec)
		follow_env_save();
	if (!hs_g.cfg.follow_exec) {
		strip_preload();
		unsetenv("HEAPSCOPE_OUTPUT");
		unsetenv("HEAPSCOPE_SAMPLE");
		unsetenv("HEAPSCOPE_TIME_RESOLUTION");
		unsetenv("HEAPSCOPE_UNWIND");
		unsetenv("HEAPSCOPE_TEST_CLOCK_ERROR");
		unsetenv("HEAPSCOPE_TEST_CLOCK");
		unsetenv("HEAPSCOPE_TEST_FAIL_THREAD");
		unsetenv("HEAPSCOPE_TEST_NO_SINGLE");
		unsetenv("HEAPSCOPE_TEST_RAISE_AT");
		unsetenv("HEAPSCOPE_TEST_RAISE_FULL");
		unsetenv("HEAPSCOPE_FOLLOW_FORK");
		unsetenv("HEAPSCOPE_FOLLOW_EXEC");
		unsetenv("HEAPSCOPE_CHILD");
	}
	if (bad || !out || !*out || start(out) < 0)
		atomic_store(&hs_g.state, HS_INERT);
}

/* pthread_create allocates (the new thread's TLS): that is ours, not the program's */
static int writer_start(void)
{
	struct hs_thread *t = hs_thread_get();
	sigset_t old;
	int rc;
	int was_single = hs_single_before_start();

	hs_internal_enter(t, &old);
	rc = hs_writer_start();
	hs_internal_leave(t, &old);
	if (rc == 0 && was_single && hs_writer_up())
		hs_single_keep();
	return rc;
}

void hs_ensure_writer(void)
{
	if (ctor_done && !hs_g.writer_running && !hs_g.after_fini && atomic_load(&hs_g.state) == HS_ACTIVE)
		writer_start();
}

/* The trace's end at exit: the writer stops and writes the END; later events (after_fini) are written one by one. */
static void finish_at_exit(void)
{
	struct hs_thread *t = hs_tls_thread;
	sigset_t old;

	if (getpid() != hs_g.pid || hs_g.after_fini)
		return;
	if (atomic_load(&hs_g.state) != HS_ACTIVE) {
		hs_writer_finish_disabled();
		return;
	}
	hs_internal_enter(t, &old);
	hs_writer_stop();
	hs_writer_finish(HS_END_EXIT);
	hs_internal_leave(t, &old);
	hs_g.after_fini = 1;
}

/*
 * The loader runs the libraries' destructors in its own order, and ours
 * came before libLLVM's, whose static objects free memory: clang's 2,000
 * frees at exit came after the END, each written alone (a chunk, a zstd
 * frame and three system calls each: 4% of its trace). So the
 * end waits for an exit handler registered here, in a library
 * constructor, before __libc_start_main registers the loader's _dl_fini:
 * handlers run last-registered first, so it runs after every library's
 * destructor. Registered without a library handle, or __cxa_finalize in
 * our own destructor would run it at once; the library is never unloaded
 * (linked -z nodelete), so the handler outlives no code. Loaded later by
 * dlopen, the handler runs before _dl_fini instead, as the destructor did.
 */
extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);
static int end_at_exit;

static void last_exit(void *arg)
{
	(void)arg;
	finish_at_exit();
}

__attribute__((constructor)) static void hs_ctor(void)
{
	sigset_t old;

	ctor_done = 1;
	hs_init();
	hs_ensure_writer();
	/* internal: should libc need memory for the handler, that is not the program's allocation */
	hs_internal_enter(hs_tls_thread, &old);
	end_at_exit = __cxa_atexit(last_exit, NULL, NULL) == 0;
	hs_internal_leave(hs_tls_thread, &old);
}

__attribute__((destructor)) static void hs_dtor(void)
{
	if (!end_at_exit)
		finish_at_exit();
}

/*
 * quick_exit runs no atexit handler nor destructor, and ends with an
 * internal _exit our hook does not see: a program that left by it had a
 * trace with its header alone (1,000 allocations lost).
 */
static void quick_exit_flush(void)
{
	hs_flush_before_exit(HS_END_UNDERSCORE_EXIT);
}

/*
 * A child that is not followed goes untraced: a daemon that forks and lets
 * its parent exit leaves a trace of a few allocations, and the report then
 * says why (CHILDREN).
 */
static void fork_parent(void)
{
	if (atomic_load(&hs_g.state) == HS_ACTIVE && !hs_g.cfg.follow_fork)
		atomic_fetch_add(&hs_g.untraced_children, 1);
}

static void fork_child(void)
{
	struct hs_thread *self = hs_tls_thread;
	sigset_t old;

	if (atomic_load(&hs_g.state) != HS_ACTIVE)
		return;
	hs_writer_after_fork_child();
	/* the other threads do not exist in the child; their rings belong to the parent */
	hs_lock_reset(&hs_g.threads_lock);
	for (struct hs_thread *t = hs_g.threads, *n; t; t = n) {
		n = t->next;
		if (t != self)
			hs_unmap(t, sizeof(*t));
	}
	spares_drop();
	hs_g.threads = self;
	if (!hs_g.cfg.follow_fork) {
		atomic_store(&hs_g.state, HS_INERT);
		return;
	}
	/* the new file's buffers are mapped by libc's mmap: not the program's events */
	atomic_store(&hs_g.state, HS_INITIALIZING);
	hs_g.pid = getpid();
	hs_g.cfg.is_child = 1;
	hs_loader_after_fork();
	hs_meta_reset();
	hs_stacks_after_fork();
	hs_unwind_after_fork();
	for (int i = 0; i < HS_FN_COUNT; i++) {
		atomic_store(&hs_g.folded_calls[i], 0);
		atomic_store(&hs_g.folded_bytes[i], 0);
	}
	if (self) {
		self->next = NULL;
		self->tid = (uint32_t)hs_gettid();
		atomic_store(&self->head, 0);
		atomic_store(&self->tail, 0);
		self->reserve = 0;
		self->room = 0;
		thread_forget(self);
	}
	if (hs_writer_open() < 0) {
		atomic_store(&hs_g.state, HS_INERT);
		return;
	}
	hs_internal_enter(self, &old);
	hs_writer_rss_now();
	/* the parent's modules, then what the loader changed since (when it can be asked) */
	hs_modules_replay();
	hs_modules_poll();
	hs_internal_leave(self, &old);
	hs_stamps_reset();
	counts_rebase();
	hs_hooks_configure(1);
	atomic_store(&hs_g.state, HS_ACTIVE);
	writer_start();
}

/* Flushes everything before the process image goes away (exec, _exit). */
void hs_flush_before_exit(int reason)
{
	struct hs_thread *t = hs_tls_thread;
	sigset_t old;

	if (getpid() != hs_g.pid)
		return;
	if (atomic_load(&hs_g.state) != HS_ACTIVE) {
		hs_writer_finish_disabled();
		return;
	}
	hs_internal_enter(t, &old);
	hs_writer_finish(reason);
	hs_internal_leave(t, &old);
}

/* public API, include/heapscope/heapscope.h */

__attribute__((visibility("default"))) int hs_trace_if_requested(void)
{
	hs_init();
	return atomic_load(&hs_g.state) == HS_ACTIVE;
}

__attribute__((visibility("default"))) int hs_start(const char *path)
{
	int expected = HS_INERT;

	hs_init();
	if (atomic_load(&hs_g.state) == HS_ACTIVE)
		return 0;
	if (!path || !atomic_compare_exchange_strong(&hs_g.state, &expected, HS_INITIALIZING))
		return -1;
	hs_g.after_fini = 0;
	if (start(path) < 0) {
		atomic_store(&hs_g.state, HS_INERT);
		return -1;
	}
	return 0;
}

__attribute__((visibility("default"))) int hs_stop(void)
{
	struct hs_thread *t = hs_tls_thread;
	sigset_t old;

	if (atomic_load(&hs_g.state) != HS_ACTIVE)
		return -1;
	hs_internal_enter(t, &old);
	hs_writer_stop();
	hs_internal_leave(t, &old);
	hs_flush_before_exit(HS_END_STOP);
	atomic_store(&hs_g.state, HS_INERT);
	return 0;
}

__attribute__((visibility("default"))) int hs_marker(const char *label)
{
	uint8_t rec[1 + 3 * HS_VARINT_MAX + 256], *p = rec;
	size_t n = label ? strlen(label) : 0;

	if (atomic_load(&hs_g.state) != HS_ACTIVE)
		return -1;
	if (n > 256)
		n = 256;
	*p++ = HS_REC_MARKER;
	p = hs_varint_put(p, hs_now_ns());
	p = hs_varint_put(p, (uint64_t)hs_gettid());
	p = hs_varint_put(p, n);
	memcpy(p, label, n);
	p += n;
	hs_meta_append(rec, (size_t)(p - rec));
	return 0;
}
