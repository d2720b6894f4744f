/* test_pairs.c - 7.0's table of (size, stack) pairs: what the reader gets back, its limit, its reset per chunk, its size */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "tmpdir.h"
#include "heapscope/reader.h"
#include "readback.h"
#include "tracebuild.h"

enum { NSTACKS = 40, NPAIRS = 60, NREPEAT = 20000, NOVER = HS_PAIRS_MAX + 500 };
enum { MAXEV = 2 * (NREPEAT + NOVER) + 64 };

static struct hs_event want[MAXEV], got[MAXEV];
static long nwant;

static void add(struct hs_event ev)
{
	if (nwant < MAXEV)
		want[nwant++] = ev;
}

/*
 * The first chunk: one thread's allocations of 60 pairs, each freed at
 * once, in an order drawn at random. The second, whose table starts
 * empty: another thread's allocations of more distinct pairs than the
 * table holds (sizes over three stacks), some named again once the table
 * is full, and reallocs to a size of the first chunk's.
 */
static void make_events(void)
{
	uint64_t sizes[NPAIRS], ts = 100, ptr = 0x10000, seed = 0x2545f4914f6cdd1dull;
	uint32_t stacks[NPAIRS];

	for (int i = 0; i < NPAIRS; i++) {
		sizes[i] = 16 + check_rand(&seed) % 4000;
		stacks[i] = 1 + (uint32_t)(check_rand(&seed) % NSTACKS);
	}
	for (long i = 0; i < NREPEAT; i++) {
		int k = (int)(check_rand(&seed) % NPAIRS);
		add((struct hs_event){ .kind = HS_EVENT_ALLOC, .tid = 3, .time_ns = ts += 7, .fn = HS_FN_MALLOC,
				       .stack = stacks[k], .ptr = ptr, .size = sizes[k] });
		add((struct hs_event){ .kind = HS_EVENT_FREE, .tid = 3, .time_ns = ts += 7, .fn = HS_FN_FREE, .ptr = ptr });
		ptr += 0x40;
	}
	for (long i = 0; i < NOVER; i++) {
		/* past the table's room, sizes it holds and sizes it could not take, alternately */
		uint64_t size = i < HS_PAIRS_MAX ? 100000 + (uint64_t)i : i % 2 ? 100000 + (uint64_t)(i % 1000) : 100000 + (uint64_t)i;
		add((struct hs_event){ .kind = HS_EVENT_ALLOC, .tid = 4, .time_ns = ts += 3, .fn = HS_FN_CALLOC,
				       .stack = 1 + (uint32_t)(i % 3), .ptr = ptr, .size = size });
		if (i % 1000 == 999) {
			add((struct hs_event){ .kind = HS_EVENT_FREE, .tid = 4, .time_ns = ts += 3, .fn = HS_FN_REALLOC,
					       .ptr = ptr });
			add((struct hs_event){ .kind = HS_EVENT_ALLOC, .tid = 4, .time_ns = ts += 3, .fn = HS_FN_REALLOC,
					       .stack = 2, .ptr = ptr + 0x100000, .size = sizes[0], .old_ptr = ptr });
		}
		ptr += 0x20;
	}
}

/* The events as major version major, in two chunks (the second starts with the overflow), written to path: its size, or -1. */
static long write_file(unsigned major, const char *path)
{
	struct tb t;
	long size;

	if (tb_init(&t, 0, 0, 1, 1) < 0)
		return -1;
	if (major)
		tb_set_major(&t, major);
	for (uint32_t s = 1; s <= NSTACKS; s++)
		tb_stack(&t, s, 0, 0x401000 + 16ull * s);
	for (long i = 0; i < nwant; i++) {
		if (i == 2 * NREPEAT)
			tb_flush(&t);
		tb_event(&t, &want[i]);
	}
	tb_flush(&t);
	size = tb_write(&t.file, path) < 0 ? -1 : (long)t.file.n;
	tb_free(&t);
	return size;
}

static void roundtrips(const char *dir)
{
	static const char *const name[] = { "pairs-roundtrip-6x", "pairs-roundtrip-6x-bare", "pairs-roundtrip-6x-ahead",
					    "pairs-roundtrip-7x", "pairs-roundtrip-7x-bare", "pairs-roundtrip-7x-ahead" };
	char path[2][512], err[256];
	long sizes[2];

	make_events();
	for (int v = 0; v < 2; v++) {
		snprintf(path[v], sizeof(path[v]), "%s/pairs%d.hst", dir, v);
		sizes[v] = write_file(v ? 0 : 6, path[v]);
		if (!check_report(sizes[v] > 0, v ? "pairs-write-7x" : "pairs-write-6x", "expected the file written got %s",
				  strerror(errno)))
			return;
	}
	for (int k = 0; k < 6; k++) {
		int bare = k % 3 == 1, ahead = k % 3 == 2;
		long m = readback_events(path[k / 3], bare, ahead, got, MAXEV, err, sizeof(err)), bad = -1;

		for (long i = 0; m == nwant && i < nwant && bad < 0; i++)
			if (got[i].kind != want[i].kind || got[i].fn != want[i].fn || got[i].tid != want[i].tid ||
			    got[i].time_ns != want[i].time_ns || got[i].ptr != (bare ? 0 : want[i].ptr) ||
			    (want[i].kind == HS_EVENT_ALLOC &&
			     (got[i].size != want[i].size || got[i].stack != want[i].stack ||
			      got[i].old_ptr != (bare ? 0 : want[i].old_ptr))))
				bad = i;
		check_report(m == nwant && bad < 0, name[k],
			     "expected %ld events back got %ld (%s), first differing %ld: size %llu stack %u", nwant, m, err,
			     bad, bad >= 0 ? (unsigned long long)got[bad].size : 0ull, bad >= 0 ? got[bad].stack : 0u);
	}
	/*
	 * The first chunk's 60 pairs come in random order: 6.0 pays for the
	 * draw twice (size and stack), 7.0 once. The overflow costs both the
	 * same, so the whole file shrinks by less.
	 */
	check_report(sizes[1] * 10 < sizes[0] * 9, "pairs-smaller",
		     "expected the 7.0 file under 9/10 of the 6.0 file's %ld bytes got %ld", sizes[0], sizes[1]);
	unlink(path[0]);
	unlink(path[1]);
}

int main(void)
{
	char dir[256];

	if (!check_tmpdir(dir, sizeof(dir), "pairs-tmpdir"))
		return 0;
	roundtrips(dir);
	rmdir(dir);
	return 0;
}
