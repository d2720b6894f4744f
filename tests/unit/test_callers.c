/* test_callers.c - the walk up a site's callers (hs_stacks_caller_keys, hs_top_build_path) on a hand-built trace with known chains */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "analysis/alloctab.h"
#include "analysis/filter.h"
#include "analysis/stacks.h"
#include "analysis/top.h"
#include "check.h"
#include "tmpdir.h"
#include "heapscope/reader.h"
#include "tracebuild.h"

/*
 * Return addresses with no module, so each is its own function "0x... (?)":
 * site A is called through A <- B <- C <- D (3 x 10 B, leaked), A <- B <- E
 * (2 x 20 B, freed) and A <- F (1 x 40 B, leaked).
 */
enum { A = 0x1000, B = 0x2000, C = 0x3000, D = 0x4000, E = 0x5000, F = 0x6000 };
enum { S_ABCD = 4, S_ABE = 7, S_AF = 9 };

static char dir[256], file[300];

static const char *build(void)
{
	static const char *const argv[] = { "chains" };
	struct tb t;
	uint64_t ptr = 0x10000, ts = 1000;

	if (tb_init(&t, 0, 0, 1700000000000000000ull, 77) < 0)
		return NULL;
	tb_process(&t, 77, 1, "/usr/bin/chains", 1, argv);
	tb_stack(&t, 1, 0, D);
	tb_stack(&t, 2, 1, C);
	tb_stack(&t, 3, 2, B);
	tb_stack(&t, S_ABCD, 3, A);
	tb_stack(&t, 5, 0, E);
	tb_stack(&t, 6, 5, B);
	tb_stack(&t, S_ABE, 6, A);
	tb_stack(&t, 8, 0, F);
	tb_stack(&t, S_AF, 8, A);
	for (int i = 0; i < 3; i++)
		tb_alloc(&t, ts++, 1, HS_FN_MALLOC, ptr += 0x100, 10, S_ABCD, 0);
	for (int i = 0; i < 2; i++) {
		tb_alloc(&t, ts++, 1, HS_FN_MALLOC, ptr += 0x100, 20, S_ABE, 0);
		tb_free_rec(&t, ts++, 1, HS_FN_FREE, ptr);
	}
	tb_alloc(&t, ts++, 1, HS_FN_MALLOC, ptr += 0x100, 40, S_AF, 0);
	tb_end(&t, ts + 10, HS_END_EXIT);
	if (tb_flush(&t) < 0)
		return NULL;
	snprintf(file, sizeof(file), "%s/callers.hst", dir);
	if (tb_write(&t.file, file) < 0)
		return NULL;
	tb_free(&t);
	return file;
}

/* The row of top with that caller key, or NULL. */
static const struct hs_top_row *row_of(const struct hs_top *top, uint32_t key)
{
	for (uint32_t i = 0; i < top->nrows; i++)
		if (top->rows[i].key == key)
			return &top->rows[i];
	return NULL;
}

int main(void)
{
	struct hs_reader *r = NULL;
	struct hs_alloctab tab;
	struct hs_stacks st;
	struct hs_filter f;
	struct hs_top top = { 0 }, sub = { 0 };
	uint32_t k4[8], k7[8], k9[8], path[4], site;
	const struct hs_top_row *row;
	int n4, n7, n9, rc;

	if (!check_tmpdir(dir, sizeof(dir), "callers-tmpdir"))
		return 0;
	if (!check_report(build() != NULL, "callers-build", "expected a trace file got an encoder or I/O error"))
		return 0;
	rc = hs_reader_open(&r, file);
	if (!check_report(rc == 0, "callers-open", "expected 0 got %d", rc))
		return 0;
	memset(&tab, 0, sizeof(tab));
	rc = hs_alloctab_load(&tab, r, NULL, NULL);
	CHECK_I64("callers-load", 0, rc);
	rc = hs_stacks_init(&st, r, NULL, 0, 1, HS_BY_FUNCTION);
	CHECK_I64("callers-stacks", 0, rc);
	hs_filter_init(&f);
	rc = hs_filter_prepare(&f, &tab, &st);
	CHECK_I64("callers-filter", 0, rc);

	/* the chains, outward: the first key is the one level of hs_stacks_caller_key */
	n4 = hs_stacks_caller_keys(&st, S_ABCD, k4, 8);
	n7 = hs_stacks_caller_keys(&st, S_ABE, k7, 8);
	n9 = hs_stacks_caller_keys(&st, S_AF, k9, 8);
	CHECK_I64("callers-chain-lengths", 3 * 100 + 2 * 10 + 1, n4 * 100 + n7 * 10 + n9);
	CHECK("callers-chain-first-is-caller-key", k4[0] == hs_stacks_caller_key(&st, S_ABCD) && k9[0] == hs_stacks_caller_key(&st, S_AF));
	CHECK("callers-chain-shared-frame", k4[0] == k7[0] && k4[1] != k7[1] && k4[0] != k9[0]);
	CHECK_I64("callers-chain-max", 2, hs_stacks_caller_keys(&st, S_ABCD, k4, 2));
	CHECK("callers-path-key", hs_stacks_path_caller_key(&st, S_ABCD, k4, 1) == k4[1] &&
				  hs_stacks_path_caller_key(&st, S_ABE, k4, 2) == HS_STACKS_NO_KEY);
	CHECK_STR("callers-path-outermost", "(no caller: outermost frame)",
		  hs_stacks_key_name(&st, hs_stacks_path_caller_key(&st, S_AF, k9, 1), 1, NULL, 0));

	site = hs_stacks_key(&st, S_ABCD);
	CHECK("callers-one-site", site == hs_stacks_key(&st, S_ABE) && site == hs_stacks_key(&st, S_AF));

	/* depth 0 is hs_top_build with the focus: B (5 calls, 70 B) then F (40 B) */
	rc = hs_top_build_path(&sub, &tab, &f, &st, HS_SORT_BYTES, site, NULL, 0);
	CHECK_I64("callers-depth0-rc", 0, rc);
	rc = hs_top_build(&top, &tab, &f, &st, HS_SORT_BYTES, site);
	CHECK("callers-depth0-like-build", rc == 0 && top.nrows == 2 && sub.nrows == 2 && top.rows[0].key == sub.rows[0].key &&
					      top.rows[0].bytes == sub.rows[0].bytes && top.rows[1].key == sub.rows[1].key);
	CHECK("callers-depth0-rows", sub.nrows == 2 && sub.rows[0].key == k4[0] && sub.rows[0].calls == 5 && sub.rows[0].bytes == 70 &&
					 sub.rows[1].key == k9[0] && sub.rows[1].bytes == 40);
	hs_top_free(&top);
	hs_top_free(&sub);

	/* B's callers: E (2 x 20 B, temporary) before C (3 x 10 B, leaked) */
	path[0] = k4[0];
	rc = hs_top_build_path(&sub, &tab, &f, &st, HS_SORT_BYTES, site, path, 1);
	CHECK("callers-depth1", rc == 0 && sub.nrows == 2 && sub.rows[0].key == k7[1] && sub.rows[1].key == k4[1]);
	CHECK("callers-depth1-figures", sub.nrows == 2 && sub.rows[0].temporary_bytes == 40 && sub.rows[0].leaked_bytes == 0 &&
						sub.rows[1].leaked_count == 3 && sub.rows[1].leaked_bytes == 30 && sub.total.calls == 5 &&
						sub.records == 5);
	hs_top_free(&sub);
	rc = hs_top_build_path(&sub, &tab, &f, &st, HS_SORT_CALLS, site, path, 1);
	CHECK("callers-depth1-sorted-by-calls", rc == 0 && sub.nrows == 2 && sub.rows[0].key == k4[1]);
	hs_top_free(&sub);

	/* B <- C: D; then the outermost frame */
	path[1] = k4[1];
	rc = hs_top_build_path(&sub, &tab, &f, &st, HS_SORT_BYTES, site, path, 2);
	row = rc == 0 ? row_of(&sub, k4[2]) : NULL;
	CHECK("callers-depth2", rc == 0 && sub.nrows == 1 && row && row->calls == 3 && row->bytes == 30);
	hs_top_free(&sub);
	path[2] = k4[2];
	rc = hs_top_build_path(&sub, &tab, &f, &st, HS_SORT_BYTES, site, path, 3);
	CHECK("callers-depth3-outermost", rc == 0 && sub.nrows == 1 &&
					      !strcmp(hs_stacks_key_name(&st, sub.rows[0].key, 1, NULL, 0), "(no caller: outermost frame)"));
	hs_top_free(&sub);

	/* a path no stack follows, and bad arguments */
	path[0] = k9[0];
	path[1] = k4[1];
	rc = hs_top_build_path(&sub, &tab, &f, &st, HS_SORT_BYTES, site, path, 2);
	CHECK("callers-no-match", rc == 0 && sub.nrows == 0 && sub.total.calls == 0);
	hs_top_free(&sub);
	CHECK_I64("callers-no-focus", -EINVAL, hs_top_build_path(&sub, &tab, &f, &st, HS_SORT_BYTES, HS_STACKS_NO_KEY, path, 1));
	CHECK_I64("callers-no-path", -EINVAL, hs_top_build_path(&sub, &tab, &f, &st, HS_SORT_BYTES, site, NULL, 1));

	hs_filter_free(&f);
	hs_stacks_free(&st);
	hs_alloctab_free(&tab);
	hs_reader_close(r);
	unlink(file);
	rmdir(dir);
	return 0;
}
