/* test_ahead.c - decoding ahead in a second thread, kept or retired midway, gives what decoding in the caller's thread gives, event by event */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "format/reader-internal.h"
#include "tracebuild.h"

#define CHUNKS 12
#define PER_CHUNK 9000          /* several of the thread's blocks per chunk */

static uint64_t rng = 0x2545f4914f6cdd1dull;

/*
 * Threads that interleave, stack nodes first seen in every chunk, modules
 * loaded and unloaded mid-stream, markers, totals and RSS between the
 * allocations and frees, reallocs among them.
 */
static int build(const char *path)
{
	struct tb t;
	uint64_t ts = 1000, live[64] = { 0 };
	uint32_t nstack = 0;
	static const uint8_t id[] = { 1, 2, 3, 4 };
	struct tb_seg seg = { 0x1000, 0x2000, 5, 0x1000 };
	int rc;

	if (tb_init(&t, 0, 0, 1700000000000000000ull, 77) < 0)
		return -1;
	for (int c = 0; c < CHUNKS; c++) {
		for (int k = 0; k < 40; k++, nstack++)
			tb_stack(&t, nstack + 1, nstack ? check_rand(&rng) % (nstack + 1) : 0, 0x400000 + check_rand(&rng) % 0x10000);
		if (c % 3 == 1) {
			char p[64];
			snprintf(p, sizeof(p), "/lib/mod%d.so", c);
			tb_module(&t, ts, 0x7f0000000000ull + (uint64_t)c * 0x100000, p, id, sizeof(id), &seg, 1);
		}
		for (int i = 0; i < PER_CHUNK; i++) {
			uint32_t tid = 100 + (uint32_t)(check_rand(&rng) % 3);
			unsigned slot = (unsigned)(check_rand(&rng) % 64);
			ts += 1 + check_rand(&rng) % 50;
			if (i % 1000 == 500) {
				char label[32];
				int n = snprintf(label, sizeof(label), "phase %d.%d", c, i);
				tb_marker(&t, ts, tid, label, (size_t)n);
			} else if (i % 1500 == 700) {
				uint64_t calls[HS_FN_COUNT], bytes[HS_FN_COUNT];
				for (int f = 0; f < HS_FN_COUNT; f++)
					calls[f] = check_rand(&rng) % 1000000, bytes[f] = check_rand(&rng);
				tb_totals(&t, ts, HS_FN_COUNT, calls, bytes);
			} else if (i % 997 == 3) {
				tb_rss(&t, ts, check_rand(&rng) % (1u << 30));
			} else if (live[slot]) {
				if (check_rand(&rng) % 4 == 0) {
					uint64_t p = 0x555500000000ull + (check_rand(&rng) % (1u << 24)) * 16;
					tb_free_rec(&t, ts, tid, HS_FN_REALLOC, live[slot]);
					tb_alloc(&t, ts, tid, HS_FN_REALLOC, p, 1 + check_rand(&rng) % 4096, 1 + (uint32_t)(check_rand(&rng) % nstack),
						 live[slot]);
					live[slot] = p;
				} else {
					tb_free_rec(&t, ts, tid, HS_FN_FREE, live[slot]);
					live[slot] = 0;
				}
			} else {
				live[slot] = 0x555500000000ull + (check_rand(&rng) % (1u << 24)) * 16;
				tb_alloc(&t, ts, tid, (int)(check_rand(&rng) % 2), live[slot], 1 + check_rand(&rng) % 4096,
					 1 + (uint32_t)(check_rand(&rng) % nstack), 0);
			}
		}
		if (c % 3 == 2)
			tb_module_unload(&t, ts, 0x7f0000000000ull + (uint64_t)(c - 1) * 0x100000);
		if (tb_flush(&t) < 0)
			return -1;
	}
	tb_end(&t, ts + 1, HS_END_EXIT);
	if (tb_flush(&t) < 0)
		return -1;
	rc = tb_write(&t.file, path);
	tb_free(&t);
	return rc;
}

/* What is known of one event, with what it points at, and the path of its stack. */
struct seen {
	struct hs_event ev;
	char label[32];
	char module[32];
	uint64_t calls0, bytes_last;
	uint64_t ips[4];
	int nips;
};

struct run {
	struct seen *s;
	size_t n, cap;
	int rc, threaded;
	int retired;            /* the reader still had its ahead state while the process ran one thread */
	int slow;               /* a marker's label is read a while after the call that gave it */
	char err[512], warn[512];
	uint32_t nstacks;
	size_t nmods;
};

static void keep(struct hs_reader *r, struct run *out, const struct hs_event *ev)
{
	struct seen *s;

	if (out->n == out->cap) {
		out->cap = out->cap ? out->cap * 2 : 4096;
		out->s = realloc(out->s, out->cap * sizeof(*out->s));
	}
	s = &out->s[out->n++];
	memset(s, 0, sizeof(*s));
	s->ev = *ev;
	/* slowly, where a thread may start or stop behind the caller: a label it took away would show */
	if (ev->kind == HS_EVENT_MARKER && out->slow)
		usleep(300);
	if (ev->kind == HS_EVENT_MARKER)
		snprintf(s->label, sizeof(s->label), "%.*s", (int)ev->label_len, ev->label);
	if (ev->kind == HS_EVENT_MODULE)
		snprintf(s->module, sizeof(s->module), "%s", ev->module->path);
	if (ev->kind == HS_EVENT_TOTALS) {
		s->calls0 = ev->calls[0];
		s->bytes_last = ev->bytes[HS_FN_COUNT - 1];
	}
	/* the stack is known by the time its event is */
	if (ev->stack)
		s->nips = hs_reader_stack(r, ev->stack, s->ips, 4);
}

enum how { ONE, BATCH, BLOCK };

/* The process's threads, from /proc/self/status. */
static int threads_now(void)
{
	char line[256];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/* threads: 0, none; 1, a thread from the start; PROBE, the reader's probe in short stretches, the thread retired after its own */
#define PROBE 2
static char probe_len[24] = "5000";     /* the probe's stretches, in events */

/* The whole file, or up to stop events, the way how says. */
static void read_all(const char *path, int threads, enum how how, size_t stop, struct run *out)
{
	struct hs_reader *r = NULL;
	struct hs_event batch[37], ev;
	const struct hs_event *blk;
	unsigned calls = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	out->slow = threads == PROBE;
	if (threads == PROBE) {
		unsetenv("HEAPSCOPE_READER_THREADS");
		setenv("HEAPSCOPE_TEST_READER_PROBE", probe_len, 1);
	} else {
		setenv("HEAPSCOPE_READER_THREADS", threads ? "1" : "0", 1);
		unsetenv("HEAPSCOPE_TEST_READER_PROBE");
	}
	if ((rc = hs_reader_open(&r, path)) < 0) {
		out->rc = rc;
		snprintf(out->err, sizeof(out->err), "%s", hs_reader_error(r));
		hs_reader_close(r);
		return;
	}
	for (;;) {
		if (stop && out->n >= stop)
			break;
		if (how == ONE) {
			if ((rc = hs_reader_next(r, &ev)) <= 0)
				break;
			keep(r, out, &ev);
		} else if (how == BATCH) {
			if ((rc = hs_reader_next_batch(r, batch, 37)) <= 0)
				break;
			for (int i = 0; i < rc; i++)
				keep(r, out, &batch[i]);
		} else {
			if ((rc = hs_reader_next_block(r, &blk)) <= 0)
				break;
			for (int i = 0; i < rc; i++)
				keep(r, out, &blk[i]);
		}
		out->threaded |= r->ahead != NULL;
		if (threads == PROBE && r->ahead && !out->retired && calls++ % 64 == 0)
			out->retired = threads_now() == 1;
	}
	out->rc = rc;
	snprintf(out->err, sizeof(out->err), "%s", hs_reader_error(r));
	snprintf(out->warn, sizeof(out->warn), "%s", hs_reader_warning(r));
	out->nstacks = hs_reader_stack_count(r);
	out->nmods = hs_reader_module_count(r);
	hs_reader_close(r);
}

static int same_event(const struct seen *a, const struct seen *b)
{
	const struct hs_event *x = &a->ev, *y = &b->ev;

	if (x->kind != y->kind || x->time_ns != y->time_ns || x->tid != y->tid)
		return 0;
	switch (x->kind) {
	case HS_EVENT_ALLOC:
		return x->fn == y->fn && x->ptr == y->ptr && x->size == y->size && x->stack == y->stack &&
		       x->old_ptr == y->old_ptr && a->nips == b->nips && !memcmp(a->ips, b->ips, sizeof(a->ips));
	case HS_EVENT_FREE:
		return x->fn == y->fn && x->ptr == y->ptr;
	case HS_EVENT_RSS:
		return x->rss == y->rss;
	case HS_EVENT_MARKER:
		return !strcmp(a->label, b->label);
	case HS_EVENT_MODULE:
		return !strcmp(a->module, b->module);
	case HS_EVENT_MODULE_UNLOAD:
		return x->addr == y->addr;
	case HS_EVENT_TOTALS:
		return a->calls0 == b->calls0 && a->bytes_last == b->bytes_last;
	default:
		return x->flags == y->flags;
	}
}

/*
 * A probe length whose timed stretch (after a warm-up as long) ends with a
 * block that ends in a marker, as the caller's thread reads blocks (one
 * ends at each marker, whose label points into the chunk buffer); 0: none.
 */
static long probe_ending_at_marker(const char *path)
{
	struct hs_reader *r = NULL;
	const struct hs_event *blk;
	int sizes[4096], marker[4096], nb = 0, rc;

	setenv("HEAPSCOPE_READER_THREADS", "0", 1);
	if (hs_reader_open(&r, path) < 0) {
		hs_reader_close(r);
		return 0;
	}
	while (nb < 4096 && (rc = hs_reader_next_block(r, &blk)) > 0) {
		sizes[nb] = rc;
		marker[nb++] = blk[rc - 1].kind == HS_EVENT_MARKER;
	}
	hs_reader_close(r);
	for (long len = 1000; len < 20000; len++) {
		long left = len;
		int warm = 1;
		for (int b = 0; b < nb; b++) {
			if ((left -= sizes[b]) > 0)
				continue;
			if (!warm) {
				if (marker[b])
					return len;
				break;
			}
			warm = 0;
			left = len;
		}
	}
	return 0;
}

static void compare(const char *name, const struct run *ref, const struct run *got)
{
	size_t bad = 0;
	char first[200] = "none", what[96];

	for (size_t i = 0; i < ref->n && i < got->n; i++)
		if (!same_event(&ref->s[i], &got->s[i]) && !bad++)
			snprintf(first, sizeof(first), "event %zu (kind %d) differs", i, (int)ref->s[i].ev.kind);
	if (ref->n != got->n && !bad++)
		snprintf(first, sizeof(first), "%zu events against %zu", got->n, ref->n);
	snprintf(what, sizeof(what), "ahead-%s-events", name);
	CHECK_COUNT(what, bad, ref->n, first);
	snprintf(what, sizeof(what), "ahead-%s-end", name);
	check_report(ref->rc == got->rc && !strcmp(ref->err, got->err) && !strcmp(ref->warn, got->warn) &&
		     ref->nstacks == got->nstacks && ref->nmods == got->nmods, what,
		     "expected rc %d '%s' '%s' %u stacks %zu modules got rc %d '%s' '%s' %u %zu", ref->rc, ref->err,
		     ref->warn, ref->nstacks, ref->nmods, got->rc, got->err, got->warn, got->nstacks, got->nmods);
}

static void free_run(struct run *r)
{
	free(r->s);
	r->s = NULL;
}

int main(void)
{
	char dir[] = "/tmp/hs-ahead-XXXXXX", path[64], cut[80], bad[80];
	struct run ref, got;
	cpu_set_t set;
	int cores = sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) >= 2;
	FILE *f;
	long size;
	uint8_t *buf;

	if (!mkdtemp(dir) || (snprintf(path, sizeof(path), "%s/t.hst", dir), build(path) < 0)) {
		check_report(0, "ahead-build", "cannot write a trace in /tmp");
		return 1;
	}
	read_all(path, 0, ONE, 0, &ref);
	check_report(ref.rc == 0 && ref.n > CHUNKS * PER_CHUNK && ref.nmods == 4, "ahead-reference",
		     "expected a clean read of over %d events and 4 modules got rc %d, %zu events, %zu modules (%s)",
		     CHUNKS * PER_CHUNK, ref.rc, ref.n, ref.nmods, ref.err);
	for (int how = ONE; how <= BLOCK; how++) {
		static const char *const names[] = { "one", "batch", "block" };
		char what[64];

		read_all(path, 1, (enum how)how, 0, &got);
		compare(names[how], &ref, &got);
		/* on one core there is no second thread, and the checks above compare the caller's decoding with itself */
		if (cores) {
			snprintf(what, sizeof(what), "ahead-%s-threaded", names[how]);
			CHECK(what, got.threaded);
		}
		free_run(&got);
		/* a thread that does not pay is retired: its reader goes on in the caller's thread, from where it was */
		read_all(path, PROBE, (enum how)how, 0, &got);
		snprintf(what, sizeof(what), "probe-%s", names[how]);
		compare(what, &ref, &got);
		if (cores) {
			snprintf(what, sizeof(what), "ahead-probe-%s-retired", names[how]);
			check_report(got.threaded && got.retired, what, "expected a thread started, then retired, got %d %d",
				     got.threaded, got.retired);
		}
		free_run(&got);
	}

	/*
	 * The thread starts at the call after the one that ended the timed
	 * stretch, here a block ending in a marker: started at its end, it
	 * decoded on into the next chunk while the label was read (300 us
	 * later, out->slow), over the buffer the label pointed into.
	 */
	{
		long len = probe_ending_at_marker(path);
		CHECK("ahead-probe-stretch-ends-at-marker", len > 0);
		snprintf(probe_len, sizeof(probe_len), "%ld", len);
		read_all(path, PROBE, BLOCK, 0, &got);
		compare("probe-marker-label", &ref, &got);
		free_run(&got);
		snprintf(probe_len, sizeof(probe_len), "5000");
	}

	/* a truncated copy: the same events up to the cut, the same warning */
	f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	buf = malloc((size_t)size);
	if (fread(buf, 1, (size_t)size, f) != (size_t)size)
		size = 0;
	fclose(f);
	snprintf(cut, sizeof(cut), "%s/cut.hst", dir);
	f = fopen(cut, "wb");
	fwrite(buf, 1, (size_t)(size * 2 / 3), f);
	fclose(f);
	free_run(&ref);
	read_all(cut, 0, BATCH, 0, &ref);
	read_all(cut, 1, BLOCK, 0, &got);
	check_report(ref.warn[0] != 0, "ahead-truncated-warns", "expected a warning for '%s'", cut);
	compare("truncated", &ref, &got);
	free_run(&got);
	read_all(cut, PROBE, BLOCK, 0, &got);
	compare("probe-truncated", &ref, &got);
	free_run(&got);

	/* a flipped byte in a middle chunk: the events before it, then the same error naming the same offset */
	buf[size / 2] ^= 0x40;
	snprintf(bad, sizeof(bad), "%s/bad.hst", dir);
	f = fopen(bad, "wb");
	fwrite(buf, 1, (size_t)size, f);
	fclose(f);
	free_run(&ref);
	read_all(bad, 0, ONE, 0, &ref);
	read_all(bad, 1, BATCH, 0, &got);
	check_report(ref.rc < 0 && strstr(ref.err, "offset"), "ahead-corrupt-fails",
		     "expected an error naming an offset got rc %d '%s'", ref.rc, ref.err);
	compare("corrupt", &ref, &got);
	free_run(&got);
	read_all(bad, PROBE, BLOCK, 0, &got);
	compare("probe-corrupt", &ref, &got);
	free_run(&got);

	/* closed early, with the thread blocks ahead: no hang (and, under SANITIZE=1, no leak) */
	read_all(path, 1, BLOCK, 5000, &got);
	CHECK("ahead-closed-early", got.n >= 5000 && got.rc > 0);
	free_run(&got);
	free_run(&ref);
	free(buf);
	unlink(path);
	unlink(cut);
	unlink(bad);
	rmdir(dir);
	return check_failures ? 1 : 0;
}
