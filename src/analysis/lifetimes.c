/* lifetimes.c - two passes over the table: count the filtered allocations, then keep an even stride of them (or hand each out) */
#include "lifetimes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void point_of(const struct hs_alloctab *t, const struct hs_alloc *a, struct hs_lifetimes_point *p)
{
	p->time_ns = hs_alloc_time(a);
	p->life_ns = hs_alloc_lifetime(a, t->end_ns);
	p->size = hs_alloc_size(a);
	p->stack = a->stack;
	p->leaked = hs_alloc_leaked(a);
}

int hs_lifetimes_each(const struct hs_alloctab *t, struct hs_filter *f, hs_lifetimes_fn fn, void *arg)
{
	int all = hs_filter_passes_all(f), rc;
	struct hs_lifetimes_point p;

	for (uint64_t i = 0; i < t->n; i++) {
		const struct hs_alloc *a = hs_alloctab_at(t, i);
		if (!all && !hs_filter_match(f, t, a, i))
			continue;
		point_of(t, a, &p);
		if ((rc = fn(arg, &p)) < 0)
			return rc;
	}
	return 0;
}

int hs_lifetimes_build(struct hs_lifetimes *lt, const struct hs_alloctab *t, struct hs_filter *f, uint64_t max_points)
{
	int all = hs_filter_passes_all(f);
	uint64_t m = 0, cap;

	memset(lt, 0, sizeof(*lt));
	for (uint64_t i = 0; i < t->n; i++)
		if (all || hs_filter_match(f, t, hs_alloctab_at(t, i), i))
			lt->matched++;
	lt->stride = max_points && lt->matched > max_points ? (lt->matched + max_points - 1) / max_points : 1;
	cap = lt->matched / lt->stride + 1;
	if (!(lt->pts = malloc(cap * sizeof(*lt->pts))))
		return -ENOMEM;
	for (uint64_t i = 0; i < t->n && lt->n < cap; i++) {
		const struct hs_alloc *a = hs_alloctab_at(t, i);
		struct hs_lifetimes_point *p;
		if (!all && !hs_filter_match(f, t, a, i))
			continue;
		if (m++ % lt->stride)
			continue;
		p = &lt->pts[lt->n++];
		point_of(t, a, p);
		if (p->life_ns > lt->max_life_ns)
			lt->max_life_ns = p->life_ns;
	}
	return 0;
}

void hs_lifetimes_free(struct hs_lifetimes *lt)
{
	free(lt->pts);
	memset(lt, 0, sizeof(*lt));
}
