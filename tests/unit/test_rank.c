/* test_rank.c - report's four top-10 rankings against a full sort of its sites, over a site table grown several times */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "analysis/report.h"
#include "check.h"
#include "tmpdir.h"
#include "heapscope/reader.h"
#include "tracebuild.h"

/*
 * NSTACKS stacks, every seventh allocating (so the table of 714 sites, 256
 * at first, grows twice, and the map from 5,000 stack ids, 1,024 at
 * first, three times): 1 to 4 blocks of 16 to 208 bytes, few enough
 * values that most rankings are decided by ties (lower stack id first).
 * The stacks allocate from the highest id down, so that a tie decided by
 * the table's order, not the stack id, comes out wrong. Blocks of every
 * third allocating site are never freed; of the others the first is freed
 * at once (before the peak) and the rest at the end (after it), so that
 * bytes, calls, peak and leaked rank differently.
 */
#define NSTACKS 5000
#define BASE 0x10000000ull

static char dir[256], file[300];

static int allocates(uint32_t s)
{
	return s % 7 == 3;
}

/* The i-th stack to allocate (i from 1) */
static uint32_t nth(uint32_t i)
{
	return NSTACKS + 1 - i;
}

static const char *build(void)
{
	static const char *const argv[] = { "rank" };
	uint64_t ts = 1, ptr = BASE;
	struct tb t;

	if (tb_init(&t, 0, 0, 1700000000000000000ull, 79) < 0)
		return NULL;
	tb_process(&t, 79, 1, "/usr/bin/rank", 1, argv);
	for (uint32_t s = 1; s <= NSTACKS; s++)
		tb_stack(&t, s, 0, 0x401000 + 16ull * s);
	for (uint32_t i = 1, s; (s = nth(i)) && i <= NSTACKS; i++) {
		if (!allocates(s))
			continue;
		for (uint32_t b = 0; b <= s % 4; b++) {
			uint64_t p = ptr;
			ptr += 0x1000;
			tb_alloc(&t, ts++, 1, HS_FN_MALLOC, p, 16 * (1 + (s * 5 + b) % 13), s, 0);
			if (b == 0 && s % 3)
				tb_free_rec(&t, ts++, 1, HS_FN_FREE, p);
		}
	}
	/* the rest of the freed sites' blocks, after the peak, in the order they came */
	ptr = BASE;
	for (uint32_t i = 1, s; (s = nth(i)) && i <= NSTACKS; i++) {
		if (!allocates(s))
			continue;
		for (uint32_t b = 0; b <= s % 4; b++, ptr += 0x1000)
			if (b > 0 && s % 3)
				tb_free_rec(&t, ts++, 1, HS_FN_FREE, ptr);
	}
	tb_end(&t, ts, HS_END_EXIT);
	if (tb_flush(&t) < 0)
		return NULL;
	snprintf(file, sizeof(file), "%s/rank.hst", dir);
	if (tb_write(&t.file, file) < 0)
		return NULL;
	tb_free(&t);
	return file;
}

static const struct hs_report *sorting;
static enum hs_rank sorting_key;

static int by_key(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	double x = hs_site_rank_value(&sorting->sites[i], sorting_key), y = hs_site_rank_value(&sorting->sites[j], sorting_key);

	if (x != y)
		return x < y ? 1 : -1;
	return sorting->sites[i].stack < sorting->sites[j].stack ? -1 : sorting->sites[i].stack > sorting->sites[j].stack;
}

static void check_ranking(const struct hs_report *rep, enum hs_rank k, const char *name)
{
	uint32_t *idx = malloc((size_t)rep->nsites * sizeof(*idx)), n = 0, want = 0;
	char check[64];
	int ok = 1;

	for (uint32_t i = 0; idx && i < rep->nsites; i++)
		if (hs_site_rank_value(&rep->sites[i], k) > 0)
			idx[n++] = i;
	sorting = rep;
	sorting_key = k;
	if (idx)
		qsort(idx, n, sizeof(*idx), by_key);
	want = n < HS_REPORT_TOP ? n : HS_REPORT_TOP;
	snprintf(check, sizeof(check), "rank-%s-count", name);
	CHECK_U64(check, want, (uint64_t)rep->ntop[k]);
	for (uint32_t i = 0; idx && i < want && i < (uint32_t)rep->ntop[k]; i++)
		ok &= rep->top[k][i] == idx[i];
	snprintf(check, sizeof(check), "rank-%s-order", name);
	check_report(idx && ok, check, "expected the first %u of a full sort (first: stack %u) got stack %u first", want,
		     idx && n ? rep->sites[idx[0]].stack : 0, rep->ntop[k] ? rep->sites[rep->top[k][0]].stack : 0);
	free(idx);
}

int main(void)
{
	static const char *const names[HS_RANK_COUNT] = { "bytes", "calls", "peak", "leaked" };
	uint64_t calls = 0, bytes = 0, leaked = 0, sites = 0, in_order = 1;
	struct hs_reader *r = NULL;
	struct hs_report rep;
	const char *path;

	if (!check_tmpdir(dir, sizeof(dir), "rank-tmpdir"))
		return 0;
	path = build();
	if (!check_report(path != NULL, "rank-build", "expected a trace file got an encoder or I/O error"))
		return 0;
	for (uint32_t s = 1; s <= NSTACKS; s++) {
		sites += allocates(s);
		for (uint32_t b = 0; allocates(s) && b <= s % 4; b++) {
			uint64_t size = 16 * (1 + (s * 5 + b) % 13);
			calls++;
			bytes += size;
			leaked += s % 3 ? 0 : size;
		}
	}
	if (hs_reader_open(&r, path) == 0 && hs_report_build(&rep, r, NULL, NULL) == 0) {
		CHECK_U64("rank-allocations", calls, rep.allocations);
		CHECK_U64("rank-bytes", bytes, rep.bytes_allocated);
		CHECK_U64("rank-leaked-bytes", leaked, rep.leaked_bytes);
		CHECK_U64("rank-sites", sites, rep.nsites);
		CHECK("rank-table-grew", rep.sites_cap > 256);
		/* the table is in the order sites first allocated, each with its stack id */
		for (uint32_t i = 0, k = 0; i < NSTACKS && k < rep.nsites; i++)
			if (allocates(nth(i + 1)))
				in_order &= rep.sites[k++].stack == nth(i + 1);
		CHECK("rank-sites-stacks", in_order);
		for (enum hs_rank k = 0; k < HS_RANK_COUNT; k++)
			check_ranking(&rep, k, names[k]);
		hs_report_free(&rep);
	} else {
		check_report(0, "rank-report", "expected a report got %s", r ? hs_reader_error(r) : "no reader");
	}
	hs_reader_close(r);
	unlink(path);
	rmdir(dir);
	return 0;
}
