/* test_time_runs.c - event times as 5.0's runs and as 4.x's deltas: the same times back, through every decoding path */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "tmpdir.h"
#include "heapscope/reader.h"
#include "tracebuild.h"

#define NEV 4000

static uint64_t want_ts[NEV];
static int want_kind[NEV];
static int nwant;

/*
 * Threads 7 and 8 interleave on one clock: runs of a time across both
 * threads and kinds (allocations, frees, mappings: the slow path), records
 * without a time of the stream (RSS, markers) inside runs, late events (a
 * step back), a chunk cut in the middle of a run, and a run as long as the
 * last chunk. Returns the file's bytes, or NULL.
 */
static const char *build(const char *path, unsigned major, size_t *bytes)
{
	struct tb t;
	uint64_t now = 1000, seed = 42, ptr = 0x10000;
	const char *out = NULL;

	nwant = 0;
	if (tb_init(&t, 0, 0, 1, 77) < 0)
		return NULL;
	if (major)
		tb_set_major(&t, major);
	tb_stack(&t, 1, 0, 0x401000);
	for (int i = 0; i < NEV - 600; i++) {
		uint64_t r = check_rand(&seed);
		uint32_t tid = r & 1 ? 7 : 8;
		uint64_t ts = now;

		if (r % 23 == 0)
			now += 1 + (r >> 40) % 5000;   /* a new unit */
		if (r % 97 == 0 && now > 2000)
			ts = now - 1 - (r >> 20) % 900; /* late: stamped before the one before it */
		if (r % 11 == 0) {
			tb_mmap(&t, ts, tid, 0x7f0000000000ull + (uint64_t)i * 4096, 4096, 3, 0x22, 1);
			want_kind[nwant] = HS_EVENT_MMAP;
		} else if (r % 3 == 0 && ptr > 0x10000) {
			ptr -= 32;
			tb_free_rec(&t, ts, tid, HS_FN_FREE, ptr);
			want_kind[nwant] = HS_EVENT_FREE;
		} else {
			tb_alloc(&t, ts, tid, HS_FN_MALLOC, ptr, 24, 1, 0);
			ptr += 32;
			want_kind[nwant] = HS_EVENT_ALLOC;
		}
		want_ts[nwant++] = ts;
		if (r % 41 == 0)
			tb_rss(&t, now, 4096 * (uint64_t)i);
		if (r % 53 == 0)
			tb_marker(&t, now, tid, "m", 1);
		if (i == 1500 && tb_flush(&t) < 0)
			goto out;
	}
	/* the next chunk: one run of 600 events at one time, two threads */
	if (tb_flush(&t) < 0)
		goto out;
	now += 7;
	for (int i = 0; i < 600; i++) {
		tb_alloc(&t, now, i & 1 ? 7 : 8, HS_FN_MALLOC, 0x900000 + (uint64_t)i * 64, 40, 1, 0);
		want_kind[nwant] = HS_EVENT_ALLOC;
		want_ts[nwant++] = now;
	}
	tb_end(&t, now + 1, HS_END_EXIT);
	if (tb_flush(&t) < 0 || tb_write(&t.file, path) < 0)
		goto out;
	*bytes = t.file.n;
	out = path;
out:
	tb_free(&t);
	return out;
}

/* Reads path one event at a time, in batches or in blocks, with or without addresses; 0 when every time and kind matches. */
static int read_back(const char *path, int how, int bare, char *why, size_t n)
{
	struct hs_reader *r = NULL;
	struct hs_event one, batch[64];
	const struct hs_event *blk;
	int got = 0, rc, bad = 0;

	if ((rc = hs_reader_open(&r, path)) < 0) {
		snprintf(why, n, "open: %d", rc);
		return -1;
	}
	if (bare)
		hs_reader_skip_addresses(r);
	for (;;) {
		const struct hs_event *ev;
		int k;

		if (how == 0) {
			rc = hs_reader_next(r, &one);
			ev = &one;
		} else if (how == 1) {
			rc = hs_reader_next_batch(r, batch, 64);
			ev = batch;
		} else {
			rc = hs_reader_next_block(r, &blk);
			ev = blk;
		}
		if (rc <= 0)
			break;
		for (k = 0; k < (how ? rc : 1); k++) {
			if (ev[k].kind != HS_EVENT_ALLOC && ev[k].kind != HS_EVENT_FREE && ev[k].kind != HS_EVENT_MMAP)
				continue;
			if (got >= nwant || ev[k].time_ns != want_ts[got] || (int)ev[k].kind != want_kind[got]) {
				if (!bad)
					snprintf(why, n, "event %d: kind %d at %llu, expected kind %d at %llu", got,
						 (int)ev[k].kind, (unsigned long long)ev[k].time_ns,
						 got < nwant ? want_kind[got] : -1,
						 got < nwant ? (unsigned long long)want_ts[got] : 0ull);
				bad = 1;
			}
			got++;
		}
	}
	if (!bad && rc < 0)
		snprintf(why, n, "error %d: %s", rc, hs_reader_error(r));
	else if (!bad && got != nwant)
		snprintf(why, n, "%d events, expected %d", got, nwant);
	hs_reader_close(r);
	return bad || rc < 0 || got != nwant ? -1 : 0;
}

int main(void)
{
	char dir[256], p5[300], p4[300], why[256], name[96];
	static const char *const hows[] = { "next", "batch", "block" };
	size_t b5 = 0, b4 = 0;

	if (!check_tmpdir(dir, sizeof(dir), "runs-tmpdir"))
		return 1;
	snprintf(p5, sizeof(p5), "%s/runs.hst", dir);
	snprintf(p4, sizeof(p4), "%s/deltas.hst", dir);
	for (int v = 0; v < 2; v++) {
		const char *p = v ? p4 : p5;
		size_t *bytes = v ? &b4 : &b5;

		if (!check_report(build(p, v ? 4 : 0, bytes) != NULL, v ? "deltas-build" : "runs-build",
				  "expected a trace file got an encoder or I/O error"))
			return 1;
		for (int how = 0; how < 3; how++)
			for (int bare = 0; bare < 2; bare++) {
				why[0] = 0;
				snprintf(name, sizeof(name), "%s-%s%s", v ? "deltas" : "runs", hows[how], bare ? "-bare" : "");
				check_report(read_back(p, how, bare, why, sizeof(why)) == 0, name, "%s", why);
			}
	}
	/* the same events, and the same records but the time stream: runs take less */
	check_report(b5 < b4, "runs-smaller", "runs %zu bytes, deltas %zu", b5, b4);
	unlink(p5);
	unlink(p4);
	rmdir(dir);
	return check_failures != 0;
}
