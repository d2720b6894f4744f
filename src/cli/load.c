/* load.c - loading a trace's allocation table for the analysis commands, with a progress line on slow loads */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../analysis/alloctab.h"
#include "../analysis/filter.h"
#include "../common/clock.h"
#include "../render/format.h"
#include "cli.h"
#include "heapscope/reader.h"

static double now(void)
{
	return (double)hs_mono_ns() / 1e9;
}

hs_alloctab_progress hs_cli_progress_start(struct hs_cli_progress *p, const char *path)
{
	struct stat st;

	memset(p, 0, sizeof(*p));
	p->path = path;
	p->start = now();
	p->after = getenv("HEAPSCOPE_TEST_PROGRESS_AFTER") ? atof(getenv("HEAPSCOPE_TEST_PROGRESS_AFTER")) : 1.0;
	if (stat(path, &st) == 0)
		p->size = (uint64_t)st.st_size;
	return isatty(2) ? hs_cli_progress : NULL;
}

/* Only after a second, and only on a terminal: quick loads and logs stay clean. */
void hs_cli_progress(void *arg, uint64_t offset)
{
	struct hs_cli_progress *p = arg;

	if (now() - p->start < p->after || !p->size)
		return;
	fprintf(stderr, "\rheapscope: loading %s: %3.0f%%", p->path, 100.0 * (double)offset / (double)p->size);
	p->shown = 1;
}

void hs_cli_progress_end(struct hs_cli_progress *p)
{
	if (p->shown)
		fprintf(stderr, "\r\033[K");
	p->shown = 0;
}

/* A trace its process still writes: figures stop at its last flushed chunk, and what it frees later looks leaked. */
void hs_cli_warn_if_written(struct hs_reader *r, const char *path)
{
	if (hs_reader_info(r)->being_written)
		fprintf(stderr, "heapscope: warning: '%s' is still being written by pid %u (running): figures are up to "
				"its last chunk flushed before now, and blocks it has not freed yet count as leaked; read it "
				"again after the program ends for the whole run\n", path, hs_reader_info(r)->pid);
}

int hs_cli_reader_open(struct hs_reader **r, const char *path)
{
	hs_cli_rerun_for(path);
	if (hs_reader_open(r, path) < 0)
		return hs_die("%s", hs_reader_error(*r));
	if (hs_cli_binary_dirs() && hs_reader_set_binary_dirs(*r, hs_cli_binary_dirs()) < 0) {
		hs_reader_close(*r);
		*r = NULL;
		return hs_die("out of memory opening '%s'", path);
	}
	return 0;
}

void hs_cli_warn_unnamed(struct hs_reader *r)
{
	const char *path;
	enum hs_module_problem why;
	uint64_t n;
	char buf[PATH_MAX + 256];

	for (size_t i = 0; r && hs_reader_unnamed_module(r, i, &path, &why, &n); i++)
		fprintf(stderr, "heapscope: warning: %s\n",
			hs_fmt_unnamed(buf, sizeof(buf), path, (int)why, n, hs_cli_binary_dirs() != NULL));
}

int hs_cli_load(struct hs_reader **r, struct hs_alloctab *t, const char *path)
{
	struct hs_cli_progress p;
	hs_alloctab_progress progress;
	int rc;

	if (hs_cli_reader_open(r, path) != 0)
		return 1;
	hs_cli_warn_if_written(*r, path);
	progress = hs_cli_progress_start(&p, path);
	rc = hs_alloctab_load(t, *r, progress, &p);
	hs_cli_progress_end(&p);
	if (rc < 0) {
		if (hs_reader_error(*r)[0])
			return hs_die("%s", hs_reader_error(*r));
		if (rc == -ENOMEM)
			return hs_die("out of memory loading '%s'" HS_OOM_ADVICE, path);
		return hs_die("cannot load '%s': %s%s", path, strerror(-rc),
			      rc == -EOVERFLOW ? " (more than 4 billion allocations; record with --sample)" : "");
	}
	if (hs_reader_warning(*r)[0])
		fprintf(stderr, "heapscope: warning: %s\n", hs_reader_warning(*r));
	return 0;
}

/* HEAPSCOPE_STREAM: "off" always loads the table, "must" fails where the streaming pass would fall back (tests) */
static int stream_mode(const char *want)
{
	const char *e = getenv("HEAPSCOPE_STREAM");

	return e && !strcmp(e, want);
}

int hs_cli_can_stream(const struct hs_filter *f)
{
	return hs_filter_streamable(f) && !stream_mode("off");
}

int hs_cli_stream_fall_back(const char *path, const char *why)
{
	if (stream_mode("must"))
		return hs_die("streaming pass over '%s' fell back to the table: %s", path, why);
	return 2;
}

int hs_cli_stream(struct hs_cli_trace *t, const char *path, struct hs_filter *f, int by, const struct hs_cli_sink *sk)
{
	struct hs_cli_progress p;
	hs_alloctab_progress progress;
	uint64_t hint = 0;
	void *arg = NULL;
	int rc;

	memset(t, 0, sizeof(*t));
	if (hs_cli_reader_open(&t->r, path) != 0)
		return 1;
	/* the table path reads one snapshot, and warns */
	if (hs_reader_info(t->r)->being_written)
		return hs_cli_stream_fall_back(path, "its process still writes it: its end would move between two reads");
	/* the end too: verdicts and "98%" need it; a file that cannot give it takes the table path and its errors */
	if (hs_reader_end_hint(path, &hint) < 0)
		return hs_cli_stream_fall_back(path, "its end cannot be read first");
	progress = hs_cli_progress_start(&p, path);
	if (sk->begin(sk->ctx, hint, hs_reader_info(t->r)->sample_bytes, &arg) < 0)
		return hs_die("out of memory analysing '%s'", path);
	rc = (sk->allocs_only ? hs_alloctab_scan : hs_alloctab_stream)(&t->tab, t->r, sk->sink, arg, progress, &p);
	hs_cli_progress_end(&p);
	if (rc == -E2BIG)
		return hs_cli_stream_fall_back(path, "its backtraces' series would take more memory than the table");
	if (rc < 0) {
		if (hs_reader_error(t->r)[0])
			return hs_die("%s", hs_reader_error(t->r));
		if (rc == -ENOMEM)
			return hs_die("out of memory loading '%s'" HS_OOM_ADVICE, path);
		return hs_die("cannot load '%s': %s", path, strerror(-rc));
	}
	/* an event that came late after the last chunk's: the figures used a wrong end */
	if (t->tab.end_ns != hint)
		return hs_cli_stream_fall_back(path, "an event came late after the last chunk's");
	if (hs_reader_warning(t->r)[0])
		fprintf(stderr, "heapscope: warning: %s\n", hs_reader_warning(t->r));
	/* the sink's begin prepared the filter's times (hs_filter_prepare_stream) */
	if (f->warn[0])
		fprintf(stderr, "heapscope: warning: %s\n", f->warn);
	if (hs_stacks_init(&t->st, t->r, f->hide, f->nhide, !f->no_default_hide, (enum hs_group_by)by) < 0)
		return hs_die("out of memory analysing '%s'", path);
	t->have_st = 1;
	return 0;
}

int hs_cli_trace_open(struct hs_cli_trace *t, const char *path, struct hs_filter *f, int by)
{
	int rc;

	memset(t, 0, sizeof(*t));
	if ((rc = hs_cli_load(&t->r, &t->tab, path)) != 0)
		return rc;
	if (hs_stacks_init(&t->st, t->r, f->hide, f->nhide, !f->no_default_hide, (enum hs_group_by)by) < 0)
		return hs_die("out of memory analysing '%s'", path);
	t->have_st = 1;
	if (hs_filter_prepare(f, &t->tab, &t->st) < 0)
		return hs_die("out of memory analysing '%s'", path);
	if (f->warn[0])
		fprintf(stderr, "heapscope: warning: %s\n", f->warn);
	return 0;
}

void hs_cli_trace_close(struct hs_cli_trace *t)
{
	hs_cli_warn_unnamed(t->r);
	if (t->have_st)
		hs_stacks_free(&t->st);
	hs_alloctab_free(&t->tab);
	hs_reader_close(t->r);
	memset(t, 0, sizeof(*t));
}

int hs_cli_int(const char *s, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < 0 || v > 1000000000)
		return -1;
	*out = (int)v;
	return 0;
}

int hs_cli_pick(const char *val, const char *const *names, int n, int *out)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(val, names[i])) {
			*out = i;
			return 0;
		}
	return -1;
}
