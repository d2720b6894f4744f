/* lifetimes.c - the filtered allocations one by one, or two passes: count them, then keep an even stride of them */
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

static int count_point(void *arg, const struct hs_lifetimes_point *p)
{
	(void)p;
	((struct hs_lifetimes *)arg)->matched++;
	return 0;
}

/* every stride-th point, up to the room counted for them (matched counts them again) */
static int keep_point(void *arg, const struct hs_lifetimes_point *p)
{
	struct hs_lifetimes *lt = arg;

	if (lt->matched++ % lt->stride)
		return 0;
	lt->pts[lt->n++] = *p;
	if (p->life_ns > lt->max_life_ns)
		lt->max_life_ns = p->life_ns;
	return 0;
}

int hs_lifetimes_build(struct hs_lifetimes *lt, const struct hs_alloctab *t, struct hs_filter *f, uint64_t max_points)
{
	uint64_t matched;

	memset(lt, 0, sizeof(*lt));
	hs_lifetimes_each(t, f, count_point, lt);
	matched = lt->matched;
	lt->stride = max_points && matched > max_points ? (matched + max_points - 1) / max_points : 1;
	if (!(lt->pts = malloc((matched / lt->stride + 1) * sizeof(*lt->pts))))
		return -ENOMEM;
	lt->matched = 0;
	hs_lifetimes_each(t, f, keep_point, lt);
	return 0;
}

void hs_lifetimes_free(struct hs_lifetimes *lt)
{
	free(lt->pts);
	memset(lt, 0, sizeof(*lt));
}
