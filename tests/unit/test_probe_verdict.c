/* test_probe_verdict.c - the reader's probe remembers a verdict against its thread for a day, for this machine only, and passes after it start no thread */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "format/reader-internal.h"
#include "tracebuild.h"

/* enough events for the probe to reach its thread: 256K warm-up, then 1M on one core */
#define PAIRS 800000

static int build(const char *path)
{
	struct tb t;
	uint64_t ts = 1000;
	int rc;

	if (tb_init(&t, 0, 0, 1700000000000000000ull, 88) < 0)
		return -1;
	tb_stack(&t, 1, 0, 0x401000);
	for (uint64_t i = 0; i < PAIRS; i++) {
		uint64_t p = 0x555500000000ull + (i % 4096) * 64;
		tb_alloc(&t, ts, 7, HS_FN_MALLOC, p, 16 + i % 200, 1, 0);
		tb_free_rec(&t, ts + 1, 7, HS_FN_FREE, p);
		ts += 3;
		if (i % 50000 == 49999 && tb_flush(&t) < 0)
			return -1;
	}
	tb_end(&t, ts, HS_END_EXIT);
	if (tb_flush(&t) < 0)
		return -1;
	rc = tb_write(&t.file, path);
	tb_free(&t);
	return rc;
}

struct pass {
	long n;
	uint64_t sum;
	int rc, threaded;
};

/* The whole trace in the default mode: a thread if the probe finds it pays, unless a verdict says not. */
static void read_pass(const char *path, struct pass *out)
{
	struct hs_reader *r = NULL;
	struct hs_event ev[64];
	int k;

	memset(out, 0, sizeof(*out));
	unsetenv("HEAPSCOPE_READER_THREADS");
	unsetenv("HEAPSCOPE_TEST_READER_PROBE");
	if ((out->rc = hs_reader_open(&r, path)) < 0) {
		hs_reader_close(r);
		return;
	}
	while ((k = hs_reader_next_batch(r, ev, 64)) > 0) {
		for (int i = 0; i < k; i++)
			out->sum = out->sum * 31 + ev[i].ptr + ev[i].time_ns + (uint64_t)ev[i].kind;
		out->n += k;
		out->threaded |= r->ahead != NULL;
	}
	out->rc = k;
	hs_reader_close(r);
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror(path);
		close(fd);
	}
}

/* A verdict as the reader writes it, for this machine or another, at time when. */
static void verdict(const char *path, const char *node, long long when)
{
	char text[700];
	struct utsname u;
	cpu_set_t set;
	int cores = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;

	uname(&u);
	snprintf(text, sizeof(text), "heapscope reader probe 1\n%s %s %d\n%lld 12.0 ns an event on one core, 30.0 on two\n",
		 node ? node : u.nodename, u.machine, cores, when);
	write_file(path, text);
}

int main(void)
{
	char dir[] = "/tmp/hs-verdict-XXXXXX", trace[64], cache[64], file[96], tmp[128];
	struct pass ref, got;
	struct stat st;
	cpu_set_t set;
	int cores = sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) >= 2;
	long long now = (long long)time(NULL);

	if (!mkdtemp(dir) || (snprintf(trace, sizeof(trace), "%s/t.hst", dir), build(trace) < 0)) {
		check_report(0, "verdict-build", "cannot write a trace in /tmp");
		return 1;
	}
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	snprintf(file, sizeof(file), "%s/reader-probe", cache);
	setenv("HEAPSCOPE_CACHE_DIR", cache, 1);

	CHECK("verdict-none-unknown", !hs_ahead_one_core_known());
	/* the cache directory does not exist yet: remembering makes it */
	hs_ahead_remember_one_core(12.5, 31.0);
	CHECK("verdict-written", stat(file, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600);
	CHECK("verdict-fresh-known", hs_ahead_one_core_known());
	snprintf(tmp, sizeof(tmp), "%s.%d", file, (int)getpid());
	CHECK("verdict-no-temporary-left", stat(tmp, &st) != 0);

	verdict(file, NULL, now - 25 * 3600);
	CHECK("verdict-day-old-unknown", !hs_ahead_one_core_known());
	verdict(file, NULL, now + 3600);
	CHECK("verdict-future-unknown", !hs_ahead_one_core_known());
	verdict(file, "another-machine", now - 60);
	CHECK("verdict-other-machine-unknown", !hs_ahead_one_core_known());
	write_file(file, "heapscope reader probe 1\n");
	CHECK("verdict-truncated-unknown", !hs_ahead_one_core_known());
	write_file(file, "not a verdict at all\n");
	CHECK("verdict-garbage-unknown", !hs_ahead_one_core_known());
	verdict(file, NULL, now - 60);
	CHECK("verdict-hour-old-known", hs_ahead_one_core_known());

	/* no cache: nothing kept, nothing known */
	setenv("HEAPSCOPE_CACHE_DIR", "off", 1);
	CHECK("verdict-cache-off-unknown", !hs_ahead_one_core_known());
	hs_ahead_remember_one_core(12.5, 31.0);
	setenv("HEAPSCOPE_CACHE_DIR", cache, 1);

	/* the reference: decoded in the caller's thread */
	setenv("HEAPSCOPE_READER_THREADS", "0", 1);
	read_pass(trace, &ref);
	check_report(ref.rc == 0 && ref.n == 2 * PAIRS + 1, "verdict-reference", "expected %d events got %ld (rc %d)",
		     2 * PAIRS + 1, ref.n, ref.rc);

	/* a fresh verdict: no probe, so no thread, and the same events */
	verdict(file, NULL, now - 60);
	read_pass(trace, &got);
	check_report(got.rc == 0 && got.n == ref.n && got.sum == ref.sum, "verdict-pass-same-events",
		     "expected %ld events (sum %llx) got %ld (%llx), rc %d", ref.n, (unsigned long long)ref.sum, got.n,
		     (unsigned long long)got.sum, got.rc);
	CHECK("verdict-pass-no-thread", !got.threaded);

	/* a stale one: the probe runs, and its stretch on two cores starts the thread (whatever it then finds) */
	verdict(file, NULL, now - 25 * 3600);
	read_pass(trace, &got);
	check_report(got.rc == 0 && got.n == ref.n && got.sum == ref.sum, "verdict-stale-pass-same-events",
		     "expected %ld events (sum %llx) got %ld (%llx), rc %d", ref.n, (unsigned long long)ref.sum, got.n,
		     (unsigned long long)got.sum, got.rc);
	if (cores)
		CHECK("verdict-stale-pass-probes", got.threaded);

	unlink(file);
	unlink(trace);
	rmdir(cache);
	rmdir(dir);
	return check_failures ? 1 : 0;
}
