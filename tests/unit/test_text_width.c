/* test_text_width.c - text output within 80 columns: hs_text_wrap, and a report whose figures and header lines are at their widest */
#define _GNU_SOURCE /* open_memstream */
#include <stdlib.h>
#include <unistd.h>

#include "analysis/alloctab.h"
#include "analysis/filter.h"
#include "analysis/leaks.h"
#include "analysis/report.h"
#include "analysis/stacks.h"
#include "check.h"
#include "tmpdir.h"
#include "heapscope/reader.h"
#include "render/format.h"
#include "render/leaks.h"
#include "render/report.h"
#include "tracebuild.h"

/* What hs_text_wrap writes of s (freed by the caller), or NULL. */
static char *wrapped(const char *s, size_t indent, size_t width)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return NULL;
	hs_text_wrap(m, s, indent, width);
	fclose(m);
	return text;
}

static void wrap_check(const char *name, const char *s, size_t indent, size_t width, const char *want)
{
	char *got = wrapped(s, indent, width);

	CHECK_STR(name, want, got);
	free(got);
}

/* The longest line of text (its columns, counted in bytes) and how many lines start with prefix. */
static size_t widest(const char *text, const char *prefix, int *starting)
{
	size_t w = 0, plen = strlen(prefix);

	*starting = 0;
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		if (n > w)
			w = n;
		*starting += strncmp(line, prefix, plen) == 0;
		line += n + (nl != NULL);
	}
	return w;
}

static char dir[256];

/* A process of one thread and one backtrace: 3 allocations, 2 of them never freed; written to dir/wide.hst. */
static const char *build(char *file, size_t cap)
{
	static const char *const argv[] = { "wide" };
	struct tb t;
	int rc;

	if (!check_tmpdir(dir, sizeof(dir), "report-tmpdir") || tb_init(&t, 0, 0, 1700000000000000000ull, 81) < 0)
		return NULL;
	tb_process(&t, 81, 1, "/usr/bin/wide", 1, argv);
	tb_stack(&t, 1, 0, 0x1000);
	for (int i = 0; i < 3; i++)
		tb_alloc(&t, 1000 + (uint64_t)i, 1, HS_FN_MALLOC, 0x10000 + 0x100 * (uint64_t)i, 10, 1, 0);
	tb_free_rec(&t, 1010, 1, HS_FN_FREE, 0x10000);
	tb_end(&t, 2000, HS_END_EXIT);
	snprintf(file, cap, "%s/wide.hst", dir);
	rc = tb_flush(&t) < 0 || tb_write(&t.file, file) < 0;
	tb_free(&t);
	return rc ? NULL : file;
}

/*
 * leaks' table of the same trace, its figures set to what a long run
 * reaches: the text within 80 columns, and want (its heading and row) in it.
 */
static void leaks_table(const char *name, const char *file, double calls, double leaked, double end, const char *want)
{
	struct hs_render_leaks ctx = { .path = "wide.hst", .frames = 1, .all = 1 };
	struct hs_reader *r = NULL;
	struct hs_alloctab tab;
	struct hs_stacks st;
	struct hs_filter f;
	struct hs_leaks lk;
	char *text = NULL, n[96];
	size_t len = 0, w;
	int starting;
	FILE *m;

	memset(&tab, 0, sizeof(tab));
	memset(&lk, 0, sizeof(lk));
	hs_filter_init(&f);
	snprintf(n, sizeof(n), "%s-built", name);
	if (!CHECK(n, hs_reader_open(&r, file) == 0 && hs_alloctab_load(&tab, r, NULL, NULL) == 0 &&
			  hs_stacks_init(&st, r, NULL, 0, 1, HS_BY_BACKTRACE) == 0 &&
			  hs_filter_prepare(&f, &tab, &st) == 0 && hs_leaks_build(&lk, &tab, &f, &st) == 0 &&
			  lk.nsites == 1))
		goto out;
	lk.sites[0].calls = calls;
	lk.sites[0].leaked_count = leaked;
	lk.sites[0].freed_end_count = end;
	lk.sites[0].bytes = lk.sites[0].kept_bytes = 1023.9 * 1024 * 1024;
	ctx.tab = &tab;
	ctx.filter = &f;
	ctx.st = &st;
	if ((m = open_memstream(&text, &len)) != NULL) {
		hs_render_leaks_text(m, &ctx, &lk);
		fclose(m);
	}
	snprintf(n, sizeof(n), "%s-rendered", name);
	if (CHECK(n, text != NULL)) {
		w = widest(text, "", &starting);
		snprintf(n, sizeof(n), "%s-within-80-columns", name);
		check_report(w <= 80, n, "expected at most 80 got %zu in:\n%s", w, text);
		snprintf(n, sizeof(n), "%s-columns", name);
		check_report(strstr(text, want) != NULL, n, "expected\n%s\nin:\n%s", want, text);
	}
	free(text);
	hs_leaks_free(&lk);
	hs_stacks_free(&st);
out:
	hs_filter_free(&f);
	hs_alloctab_free(&tab);
	if (r)
		hs_reader_close(r);
}

int main(void)
{
	char file[300], *text = NULL;
	struct hs_reader *r = NULL;
	struct hs_report rep;
	size_t len = 0, w;
	int starting;
	FILE *m;

	wrap_check("wrap-fits", "a b  c", 13, 80, "a b c\n");
	/* 13 + "aaaa" is 17; a space and "bbb" would end at 21 */
	wrap_check("wrap-at-width", "aaaa bbb cc", 13, 20, "aaaa\n             bbb cc\n");
	wrap_check("wrap-exactly-width", "aaaa bb", 13, 20, "aaaa bb\n");
	wrap_check("wrap-long-word-alone", "a bbbbbbbbbbbb c", 13, 20, "a\n             bbbbbbbbbbbb\n             c\n");
	wrap_check("wrap-empty", "  ", 13, 80, "\n");

	if (!CHECK("report-trace", build(file, sizeof(file)) != NULL) ||
	    !CHECK("report-open", hs_reader_open(&r, file) == 0))
		return 1;
	memset(&rep, 0, sizeof(rep));
	if (!CHECK("report-build", hs_report_build(&rep, r, NULL, NULL) == 0 && rep.nsites == 1))
		return 1;
	/* the widest figures: a sparse sample's estimates, a run with an untraced child that was killed */
	rep.sites[0].calls = 12345678;
	rep.sites[0].bytes = rep.sites[0].peak_bytes = rep.sites[0].leaked_bytes = 1023.9 * 1024 * 1024;
	rep.sites[0].leaked_count = 1234567;
	rep.sampled = 1;
	rep.sample_bytes = 1000 * 1024 * 1024;
	rep.untraced_children = 1234567;
	rep.clean_exit = 0;
	if ((m = open_memstream(&text, &len)) != NULL) {
		/* the path as shown: the test's own (under $TMPDIR) could be any length */
		hs_render_report_text(m, r, &rep, "wide.hst");
		fclose(m);
	}
	if (CHECK("report-rendered", text != NULL)) {
		w = widest(text, "      peak 1023.9 MiB   leaked 1023.9 MiB / 1,234,567", &starting);
		check_report(w <= 80, "report-widest-within-80-columns", "expected at most 80 got %zu in:\n%s", w, text);
		/* under each of the four rankings, the site's figures too wide for one line: their second */
		check_report(starting == 4, "report-site-figures-wrap", "expected 4 lines of figures under their rank got %d in:\n%s",
			     starting, text);
	}
	free(text);
	hs_report_free(&rep);
	/*
	 * leaks: a column as wide as its widest figure, its heading over it
	 * (10-digit calls spilled 4 columns past theirs); when three counts
	 * have 10 digits (86 columns in one row) the figures go under the
	 * verdict, headings too
	 */
	leaks_table("leaks-10-digit-calls", file, 1234567890, 0, 0,
		    "  #  verdict                   calls    leaked   end 2%      bytes       kept\n"
		    "  1  ok                1,234,567,890         0        0 1023.9 MiB 1023.9 MiB\n");
	leaks_table("leaks-10-digit-counts", file, 1234567890, 1234567890, 1234567890,
		    "  #  verdict\n"
		    "             calls        leaked        end 2%      bytes       kept\n"
		    "  1  ok\n"
		    "     1,234,567,890 1,234,567,890 1,234,567,890 1023.9 MiB 1023.9 MiB\n");
	hs_reader_close(r);
	unlink(file);
	rmdir(dir);
	return check_failures != 0;
}
