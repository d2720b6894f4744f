/* leaks.c - per-site fates and live-bytes series from the allocation table, and the verdict rules of docs/analysis.md */
#include "leaks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NO_SERIES UINT32_MAX

const char *const hs_leaks_verdict_names[HS_LEAK_VERDICTS] = {
	"leak: growing", "freed at exit", "rare leak", "bounded", "growing container", "ok", "temporary",
};

/* How much a verdict weighs in the score: what a user should look at first. */
static const double severity[HS_LEAK_VERDICTS] = { 8, 6, 4, 2, 1, 0.5, 0 };

static int grow(struct hs_leaks_site **sites, uint32_t *cap, uint32_t key)
{
	uint32_t ncap = *cap ? *cap : 1024;
	struct hs_leaks_site *n;

	while (ncap <= key)
		ncap *= 2;
	if (!(n = realloc(*sites, (size_t)ncap * sizeof(*n))))
		return -ENOMEM;
	memset(n + *cap, 0, (size_t)(ncap - *cap) * sizeof(*n));
	for (uint32_t k = *cap; k < ncap; k++)
		n[k].key = k;
	*sites = n;
	*cap = ncap;
	return 0;
}

static unsigned bucket(uint64_t ns, uint64_t end)
{
	unsigned b = end ? (unsigned)((double)ns * HS_LEAKS_BUCKETS / (double)end) : 0;
	return b < HS_LEAKS_BUCKETS ? b : HS_LEAKS_BUCKETS - 1;
}

/* Walks the filtered allocations in table order; realloc links are in that order too. */
static int sum_sites(struct hs_leaks *lk, const struct hs_alloctab *t, struct hs_filter *f, struct hs_stacks *st,
		     struct hs_leaks_site **sites, uint32_t *cap)
{
	uint64_t end = t->end_ns, late = end - end / 50, min_life = end / 50, j = 0;
	uint32_t last_stack = UINT32_MAX, key = 0;
	int all = hs_filter_passes_all(f), rc;

	for (uint64_t i = 0; i < t->n; i++) {
		const struct hs_alloc *a = hs_alloctab_at(t, i);
		struct hs_leaks_site *s;
		uint64_t size, t1;
		double w, b;
		int cont = 0;

		while (j < t->nlinks && t->links[j].to < i)
			j++;
		if (j < t->nlinks && t->links[j].to == i)
			cont = 1;
		if (!all && !hs_filter_match(f, t, a))
			continue;
		if (a->stack != last_stack) {
			last_stack = a->stack;
			key = hs_stacks_key(st, a->stack);
		}
		if (key >= *cap && (rc = grow(sites, cap, key)) < 0)
			return rc;
		s = &(*sites)[key];
		size = hs_alloc_size(a);
		t1 = hs_alloc_free_time(a);
		w = hs_alloctab_weight(t, size);
		b = w * (double)size;
		if (s->calls == 0)
			s->stack = a->stack;
		s->calls += w;
		s->bytes += b;
		if (t1 == HS_ALLOC_NEVER) {
			s->leaked_count += w;
			s->leaked_bytes += b;
		} else if (t1 >= late) {
			s->freed_end_count += w;
			s->freed_end_bytes += b;
		}
		if (t1 == HS_ALLOC_NEVER || (t1 >= late && hs_alloc_lifetime(a, end) >= min_life)) {
			s->kept_count += w;
			s->kept_bytes += b;
			if (cont)
				s->chain_ends_kept += w;
		}
		if (cont) {
			s->reallocs += w;
			if (size > hs_alloc_size(hs_alloctab_at(t, t->links[j].from)))
				s->reallocs_grown += w;
		}
		lk->records++;
	}
	return 0;
}

/* Live bytes per bucket of the sites that kept something: one difference array per such site. */
static int fill_series(const struct hs_alloctab *t, struct hs_filter *f, struct hs_stacks *st,
		       struct hs_leaks_site *sites, uint32_t cap)
{
	uint32_t *slot = NULL, nseries = 0, last_stack = UINT32_MAX, key = 0;
	double *diff = NULL;
	int all = hs_filter_passes_all(f), rc = 0;

	if (!(slot = malloc((size_t)(cap ? cap : 1) * sizeof(*slot)))) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t k = 0; k < cap; k++)
		slot[k] = sites[k].kept_count > 0 ? nseries++ : NO_SERIES;
	if (!(diff = calloc((size_t)(nseries ? nseries : 1) * HS_LEAKS_BUCKETS, sizeof(*diff)))) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint64_t i = 0; nseries && i < t->n; i++) {
		const struct hs_alloc *a = hs_alloctab_at(t, i);
		double *d, b;

		if (a->stack != last_stack) {
			/* keys were all seen by sum_sites: no allocation here */
			last_stack = a->stack;
			key = hs_stacks_key(st, a->stack);
		}
		if (key >= cap || slot[key] == NO_SERIES || (!all && !hs_filter_match(f, t, a)))
			continue;
		d = &diff[(size_t)slot[key] * HS_LEAKS_BUCKETS];
		b = hs_alloctab_weight(t, hs_alloc_size(a)) * (double)hs_alloc_size(a);
		d[bucket(hs_alloc_time(a), t->end_ns)] += b;
		if (!hs_alloc_leaked(a))
			d[bucket(hs_alloc_free_time(a), t->end_ns)] -= b;
	}
	for (uint32_t k = 0; k < cap; k++) {
		struct hs_leaks_site *s = &sites[k];
		double live = 0, top = 0;
		if (slot[k] == NO_SERIES)
			continue;
		for (unsigned b = 0; b < HS_LEAKS_BUCKETS; b++) {
			live += diff[(size_t)slot[k] * HS_LEAKS_BUCKETS + b];
			s->live[b] = (float)(live > 0 ? live : 0);
			if (b < HS_LEAKS_BUCKETS - 1 && s->live[b] > top)
				top = s->live[b];
		}
		/* the last bucket is left out: exit cleanup would hide a growth that lasted until then */
		for (unsigned b = 0; b < HS_LEAKS_BUCKETS - 1; b++)
			if (s->live[b] >= 0.9 * top) {
				s->plateau = (double)(b + 1) / HS_LEAKS_BUCKETS;
				break;
			}
		if (top > 0 && s->live[HS_LEAKS_BUCKETS - 2] > s->live[HS_LEAKS_BUCKETS / 2 - 1])
			s->growth = (s->live[HS_LEAKS_BUCKETS - 2] - s->live[HS_LEAKS_BUCKETS / 2 - 1]) / top;
	}
out:
	free(diff);
	free(slot);
	return rc;
}

static enum hs_leaks_verdict classify(const struct hs_leaks_site *s)
{
	if (s->kept_count <= 0)
		return HS_LEAK_TEMPORARY;
	if (s->reallocs >= 0.5 * s->calls && s->reallocs_grown >= 0.5 * s->reallocs && s->chain_ends_kept > 0)
		return HS_LEAK_CONTAINER;
	if (s->kept_count < 4)
		return HS_LEAK_OK;
	if (s->kept_count <= 0.1 * s->calls)
		return HS_LEAK_RARE;
	if (s->plateau > 0.8)
		return s->leaked_count >= s->kept_count - s->leaked_count ? HS_LEAK_GROWING : HS_LEAK_FREED_AT_EXIT;
	return HS_LEAK_BOUNDED;
}

static int cmp(const void *pa, const void *pb)
{
	const struct hs_leaks_site *a = pa, *b = pb;

	if (a->score != b->score)
		return a->score < b->score ? 1 : -1;
	if (a->kept_bytes != b->kept_bytes)
		return a->kept_bytes < b->kept_bytes ? 1 : -1;
	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	return a->key < b->key ? -1 : a->key > b->key;
}

int hs_leaks_build(struct hs_leaks *lk, const struct hs_alloctab *t, struct hs_filter *f, struct hs_stacks *st)
{
	struct hs_leaks_site *sites = NULL;
	uint32_t cap = 0, n = 0;
	int rc;

	memset(lk, 0, sizeof(*lk));
	if ((rc = sum_sites(lk, t, f, st, &sites, &cap)) < 0 || (rc = fill_series(t, f, st, sites, cap)) < 0)
		goto out;
	for (uint32_t k = 0; k < cap; k++) {
		struct hs_leaks_site *s = &sites[k];
		if (s->calls <= 0)
			continue;
		s->verdict = classify(s);
		s->score = severity[s->verdict] * s->kept_bytes * (1 + s->growth);
		lk->counts[s->verdict] += 1;
		if (s->verdict < HS_LEAK_OK)
			lk->nsuspects++;
		sites[n++] = *s;
	}
	if (n)
		qsort(sites, n, sizeof(*sites), cmp);
	lk->sites = sites;
	lk->nsites = n;
	sites = NULL;
out:
	free(sites);
	return rc;
}

void hs_leaks_free(struct hs_leaks *lk)
{
	free(lk->sites);
	memset(lk, 0, sizeof(*lk));
}
