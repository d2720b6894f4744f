/* test_flame_lines.c - allocations without a backtrace in flame graphs: one "[no backtrace]" frame in the tree and the folded lines */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "analysis/alloctab.h"
#include "analysis/filter.h"
#include "analysis/flame.h"
#include "analysis/stacks.h"
#include "check.h"
#include "heapscope/reader.h"
#include "render/flame.h"
#include "tracebuild.h"

/* Return addresses with no module: B calls A, which allocates 3 x 10 B; 2 x 7 B come with no backtrace (stack 0). */
enum { A = 0x1000, B = 0x2000, S_AB = 2 };

static char dir[256], file[300];

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
	tb_end(&t, ts + 10, HS_END_EXIT);
	if (tb_flush(&t) < 0)
		return NULL;
	snprintf(file, sizeof(file), "%s/nobt.hst", dir);
	if (tb_write(&t.file, file) < 0)
		return NULL;
	tb_free(&t);
	return file;
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

	snprintf(dir, sizeof(dir), "%s/hs-unit-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		check_report(0, "nobt-tmpdir", "expected a temp dir got %s", strerror(errno));
		return 0;
	}
	if (!check_report(build() != NULL, "nobt-build", "expected a trace file got an encoder or I/O error"))
		return 0;
	rc = hs_reader_open(&r, file);
	if (!check_report(rc == 0, "nobt-open", "expected 0 got %d", rc))
		return 0;
	memset(&tab, 0, sizeof(tab));
	CHECK_I64("nobt-load", 0, hs_alloctab_load(&tab, r, NULL, NULL));
	CHECK_I64("nobt-stacks", 0, hs_stacks_init(&st, r, NULL, 0, 1, HS_BY_BACKTRACE));
	hs_filter_init(&f);
	CHECK_I64("nobt-filter", 0, hs_filter_prepare(&f, &tab, &st));

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

	hs_filter_free(&f);
	hs_stacks_free(&st);
	hs_alloctab_free(&tab);
	hs_reader_close(r);
	unlink(file);
	rmdir(dir);
	return 0;
}
