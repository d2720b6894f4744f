/* timeline.c - live bytes per series at each sampled moment, from one pass with difference arrays */
#include "timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* First k whose moment end*k/(n-1) is at or after ns: ceil(ns * (n-1) / end), exact in integers. */
static uint32_t first_at(uint64_t ns, uint64_t end, uint32_t n)
{
	uint64_t k;

	if (!end)
		return 0;
	if (ns > end)
		return n;
	k = (ns * (n - 1) + end - 1) / end;
	return (uint32_t)k;
}

/* Adds w to the moments [k1, k2) where a block is live; k2 UINT32_MAX: never freed. */
static inline void span(double *d, uint32_t k1, uint32_t k2, double w)
{
	d[k1] += w;
	if (k2 != UINT32_MAX)
		d[k2] -= w;
}

static void integrate(double *d, uint32_t n)
{
	double v = 0;

	for (uint32_t k = 0; k < n; k++) {
		v += d[k];
		d[k] = v > 0.5 || v < -0.5 ? v : 0;   /* float sums of weights leave dust */
	}
}

int hs_timeline_build(struct hs_timeline *tl, const struct hs_alloctab *t, struct hs_filter *f, struct hs_stacks *st,
		      uint32_t npoints, uint32_t ngroups, enum hs_top_sort sort)
{
	struct hs_top top = { 0 };
	uint32_t *slot = NULL, nkeys = 0, last_stack = UINT32_MAX, g = 0, n = npoints;
	uint64_t end = t->end_ns, r = 0;
	int all = hs_filter_passes_all(f), rc = 0;

	memset(tl, 0, sizeof(*tl));
	if ((rc = hs_top_build(&top, t, f, st, sort, HS_STACKS_NO_KEY)) < 0)
		goto out;
	if (ngroups > top.nrows)
		ngroups = top.nrows;
	for (uint32_t i = 0; i < top.nrows; i++)
		if (top.rows[i].key >= nkeys)
			nkeys = top.rows[i].key + 1;
	tl->npoints = n;
	tl->ngroups = ngroups;
	/* one extra slot per series: frees after the last moment land there */
	tl->time_ns = malloc(n * sizeof(*tl->time_ns));
	tl->heap = calloc(n + 1, sizeof(double));
	tl->rss = malloc(n * sizeof(double));
	tl->filtered = calloc(n + 1, sizeof(double));
	tl->other = calloc(n + 1, sizeof(double));
	tl->groups = calloc((size_t)(ngroups ? ngroups : 1) * (n + 1), sizeof(double));
	tl->keys = malloc((ngroups ? ngroups : 1) * sizeof(uint32_t));
	tl->stacks = malloc((ngroups ? ngroups : 1) * sizeof(uint32_t));
	slot = malloc((nkeys ? nkeys : 1) * sizeof(*slot));
	if (!tl->time_ns || !tl->heap || !tl->rss || !tl->filtered || !tl->other || !tl->groups || !tl->keys ||
	    !tl->stacks || !slot) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t k = 0; k < nkeys; k++)
		slot[k] = UINT32_MAX;
	for (uint32_t i = 0; i < ngroups; i++) {
		tl->keys[i] = top.rows[i].key;
		tl->stacks[i] = top.rows[i].stack;
		slot[top.rows[i].key] = i;
	}
	for (uint64_t i = 0; i < t->n; i++) {
		const struct hs_alloc *a = hs_alloctab_at(t, i);
		uint32_t k1 = first_at(hs_alloc_time(a), end, n);
		uint32_t k2 = hs_alloc_leaked(a) ? UINT32_MAX : first_at(hs_alloc_free_time(a), end, n);
		double w;

		/* born and gone between two moments: live at none of them */
		if (k1 == k2)
			continue;
		w = (double)hs_alloc_size(a) * hs_alloctab_weight(t, hs_alloc_size(a));
		span(tl->heap, k1, k2, w);
		if (!all) {
			if (!hs_filter_match(f, t, a))
				continue;
			span(tl->filtered, k1, k2, w);
		}
		if (a->stack != last_stack) {
			uint32_t key = hs_stacks_key(st, a->stack);
			last_stack = a->stack;
			g = key < nkeys ? slot[key] : UINT32_MAX;
		}
		span(g != UINT32_MAX ? tl->groups + (size_t)g * (n + 1) : tl->other, k1, k2, w);
	}
	/* no filter: the filtered series is the heap */
	if (all)
		memcpy(tl->filtered, tl->heap, (n + 1) * sizeof(double));
	integrate(tl->heap, n);
	integrate(tl->filtered, n);
	integrate(tl->other, n);
	for (uint32_t i = 0; i < ngroups; i++)
		integrate(tl->groups + (size_t)i * (n + 1), n);
	for (uint32_t k = 0; k < n; k++) {
		tl->time_ns[k] = end * k / (n - 1);
		while (r < t->nrss && t->rss[r].time_ns <= tl->time_ns[k])
			r++;
		tl->rss[k] = r ? (double)t->rss[r - 1].rss : -1;
	}
out:
	free(slot);
	hs_top_free(&top);
	return rc;
}

void hs_timeline_free(struct hs_timeline *tl)
{
	free(tl->time_ns);
	free(tl->heap);
	free(tl->rss);
	free(tl->filtered);
	free(tl->other);
	free(tl->groups);
	free(tl->keys);
	free(tl->stacks);
	memset(tl, 0, sizeof(*tl));
}
