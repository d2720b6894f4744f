/* ahead.c - a second thread decodes a trace ahead of its consumer, in blocks of events */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "cache.h"
#include "reader-internal.h"

/*
 * Decoding is a fifth to a third of an analysis pass; on a second core it
 * costs the pass nothing but the events' way from one core's cache to the
 * other's, which on some machines costs more than the decoding (reader.c's
 * probe then retires the thread). The thread decodes straight into the
 * block the consumer gets (no copy on either side: a compact form and its
 * expansion cost more than they saved). Blocks are large enough that handing one over is rare, and
 * together (6 MiB of 64-byte events) larger than a core's second-level
 * cache: by the time the thread writes a block again, its lines have left
 * the consumer's cache, and writing them no longer waits to take them back
 * from the other core (6 blocks of 152-byte events: report on 10M pairs
 * 0.29 s; 12: 0.22 s. With 64-byte events, 12 blocks of 2048: timeline
 * on python3's 37.7M events 1.27-1.35 s; of 8192: 0.94-1.08 s).
 */
#define BLOCK_EVENTS 8192
#define BLOCKS 12
#define RETIRED_EVENTS 256      /* a block's events once the consumer fills them itself */
/* pauses the consumer waits for a block before it sleeps: a block takes tens of microseconds, a wake-up as long */
#define SPINS 4000

struct stack_node {
	uint64_t id, parent, ip;
};

/* A label or totals of an event in the block, which point into the reader's chunk: copied here. */
struct fix {
	int i;
	int totals;
	size_t off;     /* label: into strs; totals: index into tot */
};

struct totals {
	uint64_t calls[HS_FN_COUNT], bytes[HS_FN_COUNT];
};

struct hs_block {
	struct hs_event ev[BLOCK_EVENTS];
	int n, rc;                      /* rc: 1 more blocks follow, 0 the trace ended, <0 it failed after these */
	uint64_t chunk_off;
	struct stack_node *stacks;      /* stack nodes read with these events, in order */
	size_t nstacks, stacks_cap;
	struct hs_module **mods;        /* modules loaded, in order: the consumer's once applied */
	size_t nmods, mods_cap, mods_applied;
	char *strs;
	size_t nstrs, strs_cap;
	struct fix *fix;
	size_t nfix, fix_cap;
	struct totals *tot;
	size_t ntot, tot_cap;
};

struct hs_ahead {
	struct hs_reader *h;            /* the thread's reader: the decoding half of the consumer's */
	struct hs_block *blocks;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t ready, room;
	_Atomic unsigned long filled, consumed;
	atomic_int stop;
	int sleeping;                   /* under lock: the consumer waits on ready */
	int waiting;                    /* under lock: the thread waits on room, until half the blocks are free */
	struct hs_block *cur;           /* the consumer's block, until its next call */
	int pos;
	int done, end_rc;               /* the last block was taken; what comes after it */
	int retired;                    /* the thread is gone: the consumer fills the blocks itself */
};

/* realloc of an array of n elements of size that keeps *p on failure */
static int ensure(void *pp, size_t *cap, size_t need, size_t size)
{
	void **p = pp;
	size_t c = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

int hs_block_stack(struct hs_block *b, uint64_t id, uint64_t parent, uint64_t ip)
{
	if (ensure(&b->stacks, &b->stacks_cap, b->nstacks + 1, sizeof(*b->stacks)))
		return -ENOMEM;
	b->stacks[b->nstacks++] = (struct stack_node){ id, parent, ip };
	return 0;
}

int hs_block_module(struct hs_block *b, struct hs_module *m)
{
	if (ensure(&b->mods, &b->mods_cap, b->nmods + 1, sizeof(*b->mods)))
		return -ENOMEM;
	b->mods[b->nmods++] = m;
	return 0;
}

/* The block's last event, if it points into the chunk, gets its own copy. */
static int keep_last(struct hs_reader *h, struct hs_block *b)
{
	struct hs_event *ev = &b->ev[b->n - 1];
	struct fix f = { .i = b->n - 1 };

	if (ev->kind == HS_EVENT_MARKER || ev->kind == HS_EVENT_DISABLED) {
		if (ensure(&b->strs, &b->strs_cap, b->nstrs + ev->label_len + 1, 1))
			return hs_reader_no_memory(h, "a marker");
		f.off = b->nstrs;
		memcpy(b->strs + b->nstrs, ev->label, ev->label_len);
		b->nstrs += ev->label_len;
		b->strs[b->nstrs++] = 0;
	} else if (ev->kind == HS_EVENT_TOTALS) {
		if (ensure(&b->tot, &b->tot_cap, b->ntot + 1, sizeof(*b->tot)))
			return hs_reader_no_memory(h, "the totals");
		f.totals = 1;
		f.off = b->ntot;
		memcpy(b->tot[b->ntot].calls, ev->calls, sizeof(b->tot[b->ntot].calls));
		memcpy(b->tot[b->ntot].bytes, ev->bytes, sizeof(b->tot[b->ntot].bytes));
		b->ntot++;
	} else {
		return 0;
	}
	if (ensure(&b->fix, &b->fix_cap, b->nfix + 1, sizeof(*b->fix)))
		return hs_reader_no_memory(h, "a marker");
	b->fix[b->nfix++] = f;
	return 0;
}

/* Up to max events into b */
static void fill(struct hs_reader *h, struct hs_block *b, int max)
{
	int rc = 1;

	b->n = 0;
	b->nstacks = b->nmods = b->mods_applied = b->nstrs = b->nfix = b->ntot = 0;
	h->ho = b;
	while (b->n < max) {
		rc = hs_reader_next_batch(h, b->ev + b->n, max - b->n);
		if (rc <= 0)
			break;
		b->n += rc;
		/* a batch ends with the event that points into the chunk, if it has one */
		if ((rc = keep_last(h, b)) < 0)
			break;
		rc = 1;
	}
	h->ho = NULL;
	b->rc = rc;
	b->chunk_off = h->chunk_off;
}

static void *run(void *arg)
{
	struct hs_ahead *a = arg;

	for (;;) {
		struct hs_block *b;
		unsigned long f = atomic_load(&a->filled);

		/*
		 * A full ring waits until half of it is free: woken for each
		 * block, the thread and a slower consumer (python3's trace, whose
		 * frees miss in the live table) handed every block over with a
		 * wake-up and the thread's cache lines, and report took 1.4 s on
		 * two cores against 0.83 s on one.
		 */
		pthread_mutex_lock(&a->lock);
		if (f - atomic_load(&a->consumed) == BLOCKS) {
			a->waiting = 1;
			while (f - atomic_load(&a->consumed) > BLOCKS / 2 && !atomic_load(&a->stop))
				pthread_cond_wait(&a->room, &a->lock);
			a->waiting = 0;
		}
		pthread_mutex_unlock(&a->lock);
		if (atomic_load(&a->stop))
			break;
		b = &a->blocks[f % BLOCKS];
		fill(a->h, b, BLOCK_EVENTS);
		atomic_store(&a->filled, f + 1);
		pthread_mutex_lock(&a->lock);
		if (a->sleeping)
			pthread_cond_signal(&a->ready);
		pthread_mutex_unlock(&a->lock);
		if (b->rc <= 0)
			break;
	}
	return NULL;
}

/* The decoding state changes hands (and back, when the thread cannot start). */
static void move_decoding(struct hs_reader *to, struct hs_reader *from)
{
	to->f = from->f;
	from->f = NULL;
	to->file_size = from->file_size;
	to->info.being_written = from->info.being_written;
	to->chunk_off = from->chunk_off;
	to->next_chunk = from->next_chunk;
	to->chunks = from->chunks;
	to->zbuf = from->zbuf;
	to->rbuf = from->rbuf;
	to->zcap = from->zcap;
	to->rcap = from->rcap;
	from->zbuf = from->rbuf = NULL;
	from->zcap = from->rcap = 0;
	memcpy(to->sp, from->sp, sizeof(to->sp));
	memcpy(to->se, from->se, sizeof(to->se));
	to->q = from->q;
	to->q_ns = from->q_ns;
	to->run_left = from->run_left;
	to->tid = from->tid;
	to->chunk_no = from->chunk_no;
	memcpy(to->predict, from->predict, sizeof(to->predict));
	to->pred = NULL;
	to->freed = from->freed;
	to->runs = from->runs;
	to->top = from->top;
	to->pairs = from->pairs;
	to->npairs = from->npairs;
	{
		/* the table goes along, as the buffers do; to's own (empty) comes back */
		struct hs_pair *p = to->pair;
		uint32_t cap = to->pair_cap;
		to->pair = from->pair;
		to->pair_cap = from->pair_cap;
		from->pair = p;
		from->pair_cap = cap;
		from->npairs = 0;
	}
	memcpy(to->fast, from->fast, sizeof(to->fast));
	to->no_addresses = from->no_addresses;
	to->nstacks = from->nstacks;
	to->stack_lim = from->stack_lim;
	memcpy(to->calls, from->calls, sizeof(to->calls));
	memcpy(to->bytes, from->bytes, sizeof(to->bytes));
	to->info.time_resolution_ns = from->info.time_resolution_ns;
	to->info.version_major = from->info.version_major;
	to->info.version_minor = from->info.version_minor;
	to->info.sample_bytes = from->info.sample_bytes;
}

static void free_blocks(struct hs_block *blocks)
{
	for (int i = 0; blocks && i < BLOCKS; i++) {
		struct hs_block *b = &blocks[i];
		free(b->stacks);
		free(b->mods);
		free(b->strs);
		free(b->fix);
		free(b->tot);
	}
	free(blocks);
}

/* The cores this process may run on (a container's or taskset's, not the machine's). */
static int cores(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		return CPU_COUNT(&set);
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/*
 * The probe's verdict against the thread, kept for a day in the cache
 * ("reader-probe"): where the thread costs more than it saves, each pass
 * paid the probe's stretches to learn it again (report on 10M churned
 * pairs: 0.30 s against 0.25 s). The verdict is the machine's (its name,
 * architecture and the cores this process may use), not the trace's. A
 * verdict for the thread is not kept: where the thread pays, so does the
 * probe, nearly.
 */
#define VERDICT_SECONDS (24 * 3600)
#define VERDICT_MAGIC "heapscope reader probe 1"

/* The verdict's file, and the line naming this machine in it; -1 without a cache */
static int verdict_where(char *path, size_t np, char *key, size_t nk)
{
	struct utsname u;

	if (hs_cache_path(path, np, "reader-probe") < 0 || uname(&u) < 0)
		return -1;
	return snprintf(key, nk, "%s %s %d", u.nodename, u.machine, cores()) < (int)nk ? 0 : -1;
}

int hs_ahead_one_core_known(void)
{
	char path[4096], key[512], want[600], buf[700];
	long long when, now;
	ssize_t got;
	int fd, w;

	if (verdict_where(path, sizeof(path), key, sizeof(key)) < 0)
		return 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return 0;
	buf[got] = '\0';
	w = snprintf(want, sizeof(want), VERDICT_MAGIC "\n%s\n", key);
	if (w < 0 || (size_t)w >= sizeof(want) || strncmp(buf, want, (size_t)w) != 0 ||
	    sscanf(buf + w, "%lld", &when) != 1)
		return 0;
	now = (long long)time(NULL);
	return when <= now && now - when < VERDICT_SECONDS;
}

void hs_ahead_remember_one_core(double one_ns, double two_ns)
{
	char path[4096], tmp[4200], key[512], text[700];
	char *slash;
	int fd, n, ok;

	if (verdict_where(path, sizeof(path), key, sizeof(key)) < 0 || !(slash = strrchr(path, '/')) ||
	    hs_cache_mkdirs(path, (size_t)(slash - path)) < 0)
		return;
	n = snprintf(text, sizeof(text), VERDICT_MAGIC "\n%s\n%lld %.1f ns an event on one core, %.1f on two\n", key,
		     (long long)time(NULL), one_ns, two_ns);
	if (n < 0 || (size_t)n >= sizeof(text))
		return;
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	/* written aside, then renamed: a pass reading it meanwhile sees the old verdict or the new, whole */
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		return;
	ok = write(fd, text, (size_t)n) == n;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, path) < 0)
		unlink(tmp);
}

/*
 * HEAPSCOPE_READER_THREADS: 0, never a thread; 1, a thread whenever there
 * is a second core; unset (or anything else), a thread if it pays (the
 * reader's probe).
 */
enum hs_ahead_mode hs_ahead_mode(void)
{
	const char *env = getenv("HEAPSCOPE_READER_THREADS");

	if ((env && strcmp(env, "0") == 0) || cores() < 2)
		return HS_AHEAD_NEVER;
	return env && strcmp(env, "1") == 0 ? HS_AHEAD_ALWAYS : HS_AHEAD_IF_FASTER;
}

/* 0: a thread decodes from now on; <0: this one goes on doing it (no thread). */
int hs_ahead_start(struct hs_reader *r)
{
	struct hs_ahead *a;
	struct hs_reader *h;
	sigset_t all, old;
	int rc;

	a = calloc(1, sizeof(*a));
	h = calloc(1, sizeof(*h));
	if (!a || !h || !(a->blocks = calloc(BLOCKS, sizeof(*a->blocks))) ||
	    !(h->path = hs_strndup(r->path, strlen(r->path))))
		goto fail;
	h->ahead_tried = 1;
	a->h = h;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->ready, NULL);
	pthread_cond_init(&a->room, NULL);
	move_decoding(h, r);
	/* the program's signals (the viewer's SIGINT) stay with its own threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&a->thread, NULL, run, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		move_decoding(r, h);
		pthread_mutex_destroy(&a->lock);
		pthread_cond_destroy(&a->ready);
		pthread_cond_destroy(&a->room);
		goto fail;
	}
	r->ahead = a;
	return 0;
fail:
	if (h)
		hs_reader_close(h);
	if (a)
		free_blocks(a->blocks);
	free(a);
	return -1;
}

/* The block's stack nodes and modules become the consumer's; its copied labels and totals are pointed at. */
static int apply(struct hs_reader *r, struct hs_block *b)
{
	for (size_t i = 0; i < b->nstacks; i++)
		if (hs_reader_store_stack(r, b->stacks[i].id, b->stacks[i].parent,
					  hs_reader_stack_ip(r, b->stacks[i].parent, b->stacks[i].ip)))
			return hs_reader_no_memory(r, "the stack table");
	for (; b->mods_applied < b->nmods; b->mods_applied++)
		if (hs_reader_add_module(r, b->mods[b->mods_applied]))
			return hs_reader_no_memory(r, "a module");
	for (size_t i = 0; i < b->nfix; i++) {
		struct hs_event *ev = &b->ev[b->fix[i].i];
		if (b->fix[i].totals) {
			ev->calls = b->tot[b->fix[i].off].calls;
			ev->bytes = b->tot[b->fix[i].off].bytes;
		} else {
			ev->label = b->strs + b->fix[i].off;
		}
	}
	r->chunk_off = b->chunk_off;
	return 0;
}

/* 1: a's cur holds the next block; 0: end; <0: error, after every event before it. */
static int advance(struct hs_reader *r)
{
	struct hs_ahead *a = r->ahead;
	unsigned long c = atomic_load(&a->consumed);
	int rc;

	if (a->done) {
		/* the error (or the warning) comes at its place, after the events before it */
		if (a->end_rc < 0 && !r->failed) {
			memcpy(r->err, a->h->err, sizeof(r->err));
			r->failed = a->end_rc;
		} else if (a->end_rc == 0) {
			memcpy(r->warn, a->h->warn, sizeof(r->warn));
		}
		a->cur = NULL;
		a->pos = 0;
		return r->failed ? r->failed : 0;
	}
	if (a->cur) {
		atomic_store(&a->consumed, ++c);
		if (atomic_load(&a->filled) - c <= BLOCKS / 2) {
			pthread_mutex_lock(&a->lock);
			if (a->waiting)
				pthread_cond_signal(&a->room);
			pthread_mutex_unlock(&a->lock);
		}
		a->cur = NULL;
	}
	/* a few events at a time: they are still in the first-level cache when the consumer reads them */
	if (a->retired && atomic_load(&a->filled) == c) {
		fill(a->h, &a->blocks[c % BLOCKS], RETIRED_EVENTS);
		atomic_store(&a->filled, c + 1);
	}
	for (int i = 0; atomic_load(&a->filled) == c && i < SPINS; i++)
#if defined(__x86_64__)
		_mm_pause();
#else
		;
#endif
	if (atomic_load(&a->filled) == c) {
		pthread_mutex_lock(&a->lock);
		a->sleeping = 1;
		while (atomic_load(&a->filled) == c)
			pthread_cond_wait(&a->ready, &a->lock);
		a->sleeping = 0;
		pthread_mutex_unlock(&a->lock);
	}
	a->cur = &a->blocks[c % BLOCKS];
	a->pos = 0;
	if (a->cur->rc <= 0) {
		a->done = 1;
		a->end_rc = a->cur->rc;
	}
	if ((rc = apply(r, a->cur)) < 0) {
		a->done = 1;
		a->end_rc = rc;
		a->cur->n = 0;
	}
	return 1;
}

/* 1: the block has events left; else what advance() says. */
static int have_events(struct hs_reader *r)
{
	struct hs_ahead *a = r->ahead;

	while (!a->cur || a->pos == a->cur->n) {
		int rc = advance(r);
		if (rc <= 0)
			return rc;
	}
	return 1;
}

int hs_ahead_take(struct hs_reader *r, struct hs_event *ev, int n)
{
	struct hs_ahead *a = r->ahead;
	int k, rc;

	if ((rc = have_events(r)) <= 0)
		return rc;
	k = a->cur->n - a->pos < n ? a->cur->n - a->pos : n;
	memcpy(ev, a->cur->ev + a->pos, (size_t)k * sizeof(*ev));
	a->pos += k;
	return k;
}

int hs_ahead_block(struct hs_reader *r, const struct hs_event **ev)
{
	struct hs_ahead *a = r->ahead;
	int k, rc;

	if ((rc = have_events(r)) <= 0)
		return rc;
	*ev = a->cur->ev + a->pos;
	k = a->cur->n - a->pos;
	a->pos = a->cur->n;
	return k;
}

/* Ends the thread: it finishes the block it fills, and the consumer fills the rest itself. */
static void end_thread(struct hs_ahead *a)
{
	if (a->retired)
		return;
	atomic_store(&a->stop, 1);
	pthread_mutex_lock(&a->lock);
	pthread_cond_signal(&a->room);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	a->retired = 1;
}

/*
 * The thread did not pay (reader.c's probe): its reader goes on decoding
 * on the consumer's thread, into the same blocks, so that nothing it
 * decoded ahead is lost or read twice and no state changes hands.
 */
void hs_ahead_retire(struct hs_reader *r)
{
	if (r->ahead)
		end_thread(r->ahead);
}

void hs_ahead_stop(struct hs_reader *r)
{
	struct hs_ahead *a = r->ahead;

	if (!a)
		return;
	end_thread(a);
	/* modules of blocks never taken are nobody's yet */
	for (unsigned long c = atomic_load(&a->consumed); c < atomic_load(&a->filled); c++) {
		struct hs_block *b = &a->blocks[c % BLOCKS];
		for (size_t i = b->mods_applied; i < b->nmods; i++)
			hs_reader_free_module(b->mods[i]);
	}
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->ready);
	pthread_cond_destroy(&a->room);
	hs_reader_close(a->h);
	free_blocks(a->blocks);
	free(a);
	r->ahead = NULL;
}
