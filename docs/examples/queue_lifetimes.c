/* queue_lifetimes.c - example custom analysis on the public reader API: how long queued objects live, per slice of the run
 *
 * The lifetime-of-queued-objects analysis of the Memtrace article (reference
 * 000), in C: allocations whose backtrace passes through a function matching
 * FUNCTION are paired with their frees; never-freed ones count as freed at
 * the end of the run. Prints lifetime percentiles per BUCKET seconds of
 * allocation time: a growing median means a growing backlog.
 *
 *   cc -std=c11 -Iinclude queue_lifetimes.c build/libheapscope-reader.a \
 *      $(pkg-config --libs libdw libzstd) -liberty -lstdc++ -lm -lpthread
 *   ./a.out trace.hst 'queue_push|enqueue' 1
 *
 * It uses only include/heapscope/reader.h; the pairing is a small hash map
 * from address to allocation time.
 */
#define _POSIX_C_SOURCE 200809L
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapscope/reader.h"

/* Live blocks of interest: address -> allocation time, open addressing. */
struct live {
	uint64_t *ptr, *t;      /* ptr 0: empty slot */
	size_t cap, used;
};

struct pair {
	uint64_t t, life;
};

static size_t slot_of(const struct live *m, uint64_t ptr)
{
	size_t i = (size_t)((ptr >> 4) * 0x9e3779b97f4a7c15ull) & (m->cap - 1);

	while (m->ptr[i] && m->ptr[i] != ptr)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int live_grow(struct live *m)
{
	struct live n = { calloc(m->cap * 2, 8), calloc(m->cap * 2, 8), m->cap * 2, m->used };

	if (!n.ptr || !n.t) {
		free(n.ptr);
		free(n.t);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->ptr[i]) {
			size_t j = slot_of(&n, m->ptr[i]);
			n.ptr[j] = m->ptr[i];
			n.t[j] = m->t[i];
		}
	free(m->ptr);
	free(m->t);
	*m = n;
	return 0;
}

/* Removes slot i and shifts the rest of its probe run back, so lookups need no tombstones. */
static void live_remove(struct live *m, size_t i)
{
	size_t j = i;

	m->ptr[i] = 0;
	m->used--;
	for (;;) {
		size_t home;
		j = (j + 1) & (m->cap - 1);
		if (!m->ptr[j])
			return;
		home = (size_t)((m->ptr[j] >> 4) * 0x9e3779b97f4a7c15ull) & (m->cap - 1);
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			m->ptr[i] = m->ptr[j];
			m->t[i] = m->t[j];
			m->ptr[j] = 0;
			i = j;
		}
	}
}

/* 1 if a frame of the stack (inlined ones included) is a function matching re; memoized per stack id. */
static int through(struct hs_reader *r, uint32_t stack, const regex_t *re, signed char **memo, uint32_t *nmemo)
{
	uint64_t ips[256];
	int n, hit = 0;

	if (stack >= *nmemo) {
		uint32_t cap = *nmemo ? *nmemo : 1024;
		signed char *p;
		while (cap <= stack)
			cap *= 2;
		if (!(p = realloc(*memo, cap)))
			return 0;
		memset(p + *nmemo, -1, cap - *nmemo);
		*memo = p;
		*nmemo = cap;
	}
	if ((*memo)[stack] >= 0)
		return (*memo)[stack];
	n = hs_reader_stack(r, stack, ips, 256);
	for (int i = 0; i < n && !hit; i++) {
		struct hs_frame fr[8];
		int nf = hs_reader_symbolize(r, ips[i], fr, 8);
		for (int k = 0; k < nf && !hit; k++)
			hit = fr[k].function && regexec(re, fr[k].function, 0, NULL, 0) == 0;
	}
	(*memo)[stack] = (signed char)hit;
	return hit;
}

static int push(struct pair **v, size_t *n, size_t *cap, uint64_t t, uint64_t life)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 4096;
		struct pair *p = realloc(*v, c * sizeof(*p));
		if (!p)
			return -1;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = (struct pair){ t, life };
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t;
}

static int by_life(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	return x->life < y->life ? -1 : x->life > y->life;
}

static double pct(const struct pair *v, size_t n, double q)
{
	return (double)v[(size_t)(q * (double)(n - 1) + 0.5)].life / 1e9;
}

int main(int argc, char **argv)
{
	struct hs_reader *r = NULL;
	struct hs_event ev;
	struct live m = { calloc(1024, 8), calloc(1024, 8), 1024, 0 };
	struct pair *v = NULL;
	signed char *memo = NULL;
	uint32_t nmemo = 0;
	size_t n = 0, cap = 0;
	uint64_t end = 0, width;
	double bucket = argc > 3 ? atof(argv[3]) : 1.0;
	regex_t re;
	int rc = 1, got;

	if (argc < 3 || bucket <= 0) {
		fprintf(stderr, "usage: queue_lifetimes TRACE FUNCTION_REGEX [BUCKET_SECONDS]\n");
		return 2;
	}
	if (regcomp(&re, argv[2], REG_EXTENDED | REG_NOSUB) != 0) {
		fprintf(stderr, "queue_lifetimes: bad regex '%s'; give a POSIX extended regex\n", argv[2]);
		return 2;
	}
	if (!m.ptr || !m.t)
		goto out;
	if (hs_reader_open(&r, argv[1]) < 0) {
		fprintf(stderr, "queue_lifetimes: %s\n", hs_reader_error(r));
		goto out;
	}
	while ((got = hs_reader_next(r, &ev)) > 0) {
		size_t i;
		end = ev.time_ns > end ? ev.time_ns : end;
		if (ev.kind == HS_EVENT_ALLOC && through(r, ev.stack, &re, &memo, &nmemo)) {
			if ((m.used + 1) * 2 > m.cap && live_grow(&m) < 0)
				goto out;
			i = slot_of(&m, ev.ptr);
			if (m.ptr[i] && push(&v, &n, &cap, m.t[i], ev.time_ns - m.t[i]) < 0)
				goto out;   /* its free was never recorded: the address was reused */
			m.used += !m.ptr[i];
			m.ptr[i] = ev.ptr;
			m.t[i] = ev.time_ns;
		} else if (ev.kind == HS_EVENT_FREE && m.ptr[i = slot_of(&m, ev.ptr)]) {
			if (push(&v, &n, &cap, m.t[i], ev.time_ns > m.t[i] ? ev.time_ns - m.t[i] : 0) < 0)
				goto out;
			live_remove(&m, i);
		}
	}
	if (got < 0) {
		fprintf(stderr, "queue_lifetimes: %s\n", hs_reader_error(r));
		goto out;
	}
	/* never freed: freed at the end of the run, as the Memtrace example does */
	for (size_t i = 0; i < m.cap; i++)
		if (m.ptr[i] && push(&v, &n, &cap, m.t[i], end - m.t[i]) < 0)
			goto out;
	qsort(v, n, sizeof(*v), by_time);
	width = (uint64_t)(bucket * 1e9);
	printf("# from_s  allocations  p10_s  p50_s  p90_s  max_s   (lifetime percentiles by allocation time)\n");
	for (size_t lo = 0, hi; lo < n; lo = hi) {
		uint64_t b = v[lo].t / width;
		for (hi = lo; hi < n && v[hi].t / width == b; hi++)
			;
		qsort(v + lo, hi - lo, sizeof(*v), by_life);
		printf("%.3f %zu %.6f %.6f %.6f %.6f\n", (double)(b * width) / 1e9, hi - lo, pct(v + lo, hi - lo, 0.1),
		       pct(v + lo, hi - lo, 0.5), pct(v + lo, hi - lo, 0.9), (double)v[hi - 1].life / 1e9);
	}
	rc = 0;
out:
	if (rc && !r)
		fprintf(stderr, "queue_lifetimes: out of memory\n");
	hs_reader_close(r);
	regfree(&re);
	free(m.ptr);
	free(m.t);
	free(v);
	free(memo);
	return rc;
}
