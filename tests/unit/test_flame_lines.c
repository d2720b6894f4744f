/* test_flame_lines.c - flame graphs' folded lines: allocations without a backtrace as one "[no backtrace]" frame, and the lines in byte order */
#define _GNU_SOURCE /* memrchr */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "analysis/alloctab.h"
#include "analysis/filter.h"
#include "analysis/flame.h"
#include "analysis/stacks.h"
#include "check.h"
#include "tmpdir.h"
#include "heapscope/reader.h"
#include "render/flame.h"
#include "tracebuild.h"

/* Return addresses with no module: B calls A, which allocates 3 x 10 B; 2 x 7 B come with no backtrace (stack 0). */
enum { A = 0x1000, B = 0x2000, S_AB = 2 };

static char dir[256], file[300];

/* The trace ended after ts and written to dir/name.hst: its path, or NULL. */
static const char *finish(struct tb *t, uint64_t ts, const char *name)
{
	tb_end(t, ts + 10, HS_END_EXIT);
	if (tb_flush(t) < 0)
		return NULL;
	snprintf(file, sizeof(file), "%s/%s.hst", dir, name);
	if (tb_write(&t->file, file) < 0)
		return NULL;
	tb_free(t);
	return file;
}

/* What load() made, and the trace file, gone */
static void unload(struct hs_reader *r, struct hs_alloctab *tab, struct hs_stacks *st, struct hs_filter *f)
{
	hs_filter_free(f);
	hs_stacks_free(st);
	hs_alloctab_free(tab);
	hs_reader_close(r);
	unlink(file);
}

/* Trace path opened and loaded, its stacks and an empty filter ready; 0, or a FAIL line named after what. */
static int load(const char *what, const char *path, struct hs_reader **r, struct hs_alloctab *tab, struct hs_stacks *st,
		struct hs_filter *f)
{
	char n[64];
	int rc;

	snprintf(n, sizeof(n), "%s-build", what);
	if (!check_report(path != NULL, n, "expected a trace file got an encoder or I/O error"))
		return -1;
	rc = hs_reader_open(r, path);
	snprintf(n, sizeof(n), "%s-open", what);
	if (!check_report(rc == 0, n, "expected 0 got %d", rc))
		return -1;
	memset(tab, 0, sizeof(*tab));
	snprintf(n, sizeof(n), "%s-load", what);
	CHECK_I64(n, 0, hs_alloctab_load(tab, *r, NULL, NULL));
	snprintf(n, sizeof(n), "%s-stacks", what);
	CHECK_I64(n, 0, hs_stacks_init(st, *r, NULL, 0, 1, HS_BY_BACKTRACE));
	hs_filter_init(f);
	snprintf(n, sizeof(n), "%s-filter", what);
	CHECK_I64(n, 0, hs_filter_prepare(f, tab, st));
	return 0;
}

static const char *build(void)
{
	static const char *const argv[] = { "nobt" };
	struct tb t;
	uint64_t ptr = 0x10000, ts = 1000;

	if (tb_init(&t, 0, 0, 1700000000000000000ull, 78) < 0)
		return NULL;
	tb_process(&t, 78, 1, "/usr/bin/nobt", 1, argv);
	tb_stack(&t, 1, 0, B);
	tb_stack(&t, S_AB, 1, A);
	for (int i = 0; i < 3; i++)
		tb_alloc(&t, ts++, 1, HS_FN_MALLOC, ptr += 0x100, 10, S_AB, 0);
	for (int i = 0; i < 2; i++)
		tb_alloc(&t, ts++, 1, HS_FN_MALLOC, ptr += 0x100, 7, 0, 0);
	return finish(&t, ts, "nobt");
}

/*
 * Backtraces through addresses whose names are prefixes of one another
 * ("0x1000", "0x10000"): in byte order a line ending in "0x1000" comes
 * before "0x10000", and a line going on after it ("0x1000;...") comes
 * after, since '0' < ';'. 300 random paths of up to 6 frames over six
 * addresses, each stack with one allocation of its id in bytes.
 */
enum { ORDER_PATHS = 300, ORDER_DEPTH = 6 };
static const uint64_t order_ips[] = { 0x1000, 0x10000, 0x100000, 0x1001, 0x10010, 0x2000 };
static uint32_t order_nstacks;

static const char *build_order(void)
{
	static const char *const argv[] = { "order" };
	static uint64_t child[ORDER_PATHS * ORDER_DEPTH + 1][6];
	uint64_t ptr = 0x10000000, ts = 1000, seed = 0x9e3779b97f4a7c15ull, next = 1;
	struct tb t;

	memset(child, 0, sizeof(child));
	if (tb_init(&t, 0, 0, 1700000000000000000ull, 79) < 0)
		return NULL;
	tb_process(&t, 79, 1, "/usr/bin/order", 1, argv);
	for (int i = 0; i < ORDER_PATHS; i++) {
		uint64_t node = 0;
		int depth = 1 + (int)(check_rand(&seed) % ORDER_DEPTH);
		for (int d = 0; d < depth; d++) {
			unsigned a = (unsigned)(check_rand(&seed) % 6);
			if (!child[node][a]) {
				child[node][a] = next;
				tb_stack(&t, next, node, order_ips[a]);
				tb_alloc(&t, ts++, 1, HS_FN_MALLOC, ptr += 0x100, next, next, 0);
				next++;
			}
			node = child[node][a];
		}
	}
	order_nstacks = (uint32_t)(next - 1);
	return finish(&t, ts, "order");
}

/* Every line of text without its weight, each after the one before in byte order; the lines, or -1. */
static long sorted_lines(char *text, uint64_t *sum)
{
	char *prev = NULL, *line = text, *nl;
	long n = 0;

	*sum = 0;
	for (; (nl = strchr(line, '\n')) != NULL; line = nl + 1, n++) {
		char *sp = memrchr(line, ' ', (size_t)(nl - line));
		if (!sp)
			return -1;
		*sp = 0;
		*sum += strtoull(sp + 1, NULL, 10);
		if (prev && strcmp(prev, line) >= 0)
			return -1;
		prev = line;
	}
	return n;
}

/* Nodes of fl at least min heavy */
static uint32_t heavy_nodes(const struct hs_flame *fl, double min)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < fl->nnodes; i++)
		n += fl->nodes[i].weight >= min;
	return n;
}

/*
 * A tree that keeps nothing under nodes lighter than a share of the total
 * has the same heavier nodes as the whole tree (a node weighs at least
 * what each of its children does, so they all hang from heavier ones).
 */
static void prune_check(const struct hs_alloctab *tab, struct hs_filter *f, struct hs_stacks *st)
{
	struct hs_flame whole, part;
	double keep = 0.002, min;
	int light_leaves = 1;

	if (!CHECK("prune-whole", hs_flame_build(&whole, tab, f, st, HS_WEIGHT_BYTES, 0, 1) == 0) ||
	    !CHECK("prune-part", hs_flame_weights(&part, tab, f, st, HS_WEIGHT_BYTES, 0, 1) == 0 &&
					 hs_flame_tree(&part, st, keep) == 0)) {
		hs_flame_free(&whole);
		hs_flame_free(&part);
		return;
	}
	min = keep * whole.total;
	for (uint32_t i = 0; i < part.nnodes; i++)
		light_leaves &= part.nodes[i].weight >= min || !part.nodes[i].first_child;
	CHECK("prune-light-nodes-are-leaves", light_leaves);
	CHECK_I64("prune-heavy-nodes-all-there", (long)heavy_nodes(&whole, min), (long)heavy_nodes(&part, min));
	CHECK("prune-fewer-nodes", part.nnodes < whole.nnodes && part.nodes[0].weight == whole.nodes[0].weight &&
					   part.depth == whole.depth);
	hs_flame_free(&whole);
	hs_flame_free(&part);
}

static void order_check(void)
{
	struct hs_reader *r = NULL;
	struct hs_alloctab tab;
	struct hs_stacks st;
	struct hs_filter f;
	struct hs_flame fl;
	char *text = NULL;
	size_t len = 0;
	uint64_t sum;
	FILE *m;
	int rc;

	if (load("order", build_order(), &r, &tab, &st, &f) < 0)
		return;
	rc = hs_flame_weights(&fl, &tab, &f, &st, HS_WEIGHT_BYTES, 0, 0);
	CHECK_I64("order-weights", 0, rc);
	if (rc == 0 && (m = open_memstream(&text, &len))) {
		CHECK_I64("order-folded", 0, hs_render_flame_folded(m, &st, &fl));
		fclose(m);
		/* "0x1000" goes on after "0x10000" and what follows it: the byte order a sort by names misses */
		{
			const char *longer = strstr(text, "\n0x10000"), *on = strstr(text, "\n0x1000;");
			CHECK("order-prefix-goes-on-after", longer && on && longer < on && !strncmp(text, "0x1000 ", 7));
		}
		/* a line per stack (each path's text is its own), in byte order, the bytes all there */
		CHECK_I64("order-sorted", (long)order_nstacks, sorted_lines(text, &sum));
		CHECK_I64("order-total", (long)order_nstacks * (order_nstacks + 1) / 2, (long)sum);
		free(text);
	}
	hs_flame_free(&fl);
	prune_check(&tab, &f, &st);
	unload(r, &tab, &st, &f);
}

/* The child of node id named name, or 0. */
static uint32_t child_named(const struct hs_flame *fl, uint32_t id, const char *name)
{
	for (uint32_t c = fl->nodes[id].first_child; c; c = fl->nodes[c].next_sibling)
		if (!strcmp(hs_names_str(&fl->names, fl->nodes[c].name), name))
			return c;
	return 0;
}

int main(void)
{
	struct hs_reader *r = NULL;
	struct hs_alloctab tab;
	struct hs_stacks st;
	struct hs_filter f;
	char *text = NULL;
	size_t len = 0;
	FILE *m;
	int rc;

	if (!check_tmpdir(dir, sizeof(dir), "nobt-tmpdir"))
		return 0;
	if (load("nobt", build(), &r, &tab, &st, &f) < 0)
		return 0;

	for (int down = 0; down < 2; down++) {
		struct hs_flame fl;
		char n[64];
		uint32_t nb;

		rc = hs_flame_build(&fl, &tab, &f, &st, HS_WEIGHT_BYTES, 0, down);
		snprintf(n, sizeof(n), "nobt-tree-%s", down ? "down" : "up");
		if (check_report(rc == 0, n, "expected 0 got %d", rc)) {
			nb = child_named(&fl, 0, "[no backtrace]");
			snprintf(n, sizeof(n), "nobt-tree-%s-node", down ? "down" : "up");
			CHECK(n, nb && fl.nodes[nb].weight == 14 && fl.nodes[nb].count == 2 && !fl.nodes[nb].first_child);
			snprintf(n, sizeof(n), "nobt-tree-%s-total", down ? "down" : "up");
			CHECK(n, fl.nodes[0].weight == 44 && fl.depth == 2);
		}
		hs_flame_free(&fl);
	}

	/* folded: both lines, in byte order ('0' before '['), weights adding up to the total */
	{
		struct hs_flame fl;
		rc = hs_flame_weights(&fl, &tab, &f, &st, HS_WEIGHT_BYTES, 0, 0);
		CHECK_I64("nobt-weights", 0, rc);
		if (rc == 0 && (m = open_memstream(&text, &len))) {
			CHECK_I64("nobt-folded", 0, hs_render_flame_folded(m, &st, &fl));
			fclose(m);
			CHECK_HAS("nobt-folded-line", "\n[no backtrace] 14\n", text);
			size_t lines = 0;
			for (const char *p = text; *p; p++)
				lines += *p == '\n';
			CHECK("nobt-folded-two-lines", lines == 2 && text[0] == '0');
			CHECK_HAS("nobt-folded-path", " 30\n", text);
			free(text);
		}
		hs_flame_free(&fl);
	}

	unload(r, &tab, &st, &f);
	order_check();
	rmdir(dir);
	return 0;
}
