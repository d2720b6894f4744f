/* leaks.c - per-site fates and live-bytes series from the allocation table, and the verdict rules of docs/analysis.md */
#include "leaks.h"
#include "keyed.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const hs_leaks_verdict_names[HS_LEAK_VERDICTS] = {
	"leak: growing", "freed at exit", "rare leak", "bounded", "growing container", "ok", "temporary",
};

/* How much a verdict weighs in the score: what a user should look at first. */
static const double severity[HS_LEAK_VERDICTS] = { 8, 6, 4, 2, 1, 0.5, 0 };

/* A key's site, made when first met with this stack and sequence number; NULL when out of memory. */
static struct hs_leaks_site *site_of(struct hs_keyed *sites, uint32_t key, uint32_t stack, uint64_t first)
{
	int fresh;
	struct hs_leaks_site *s = hs_keyed_at(sites, key, &fresh);

	if (s && fresh) {
		s->key = key;
		s->stack = stack;
		s->first = first;
	}
	return s;
}

/*
 * Bucket b holds the times ns with floor(ns * BUCKETS / end) = b (the last
 * one also what comes after the end). A float product finds it, the exact
 * edges correct it: no division per allocation, and the same answer at an
 * edge on every path.
 */
struct buckets {
	double scale;
	uint64_t edge[HS_LEAKS_BUCKETS + 1];   /* edge[b]: first time of bucket b */
	unsigned last;                         /* the last answer: neighbours in time share it */
};

static void buckets_init(struct buckets *bk, uint64_t end)
{
	bk->scale = end ? (double)HS_LEAKS_BUCKETS / (double)end : 0;
	for (unsigned b = 0; b <= HS_LEAKS_BUCKETS; b++)
		bk->edge[b] = end ? ((unsigned __int128)b * end + HS_LEAKS_BUCKETS - 1) / HS_LEAKS_BUCKETS : 0;
	if (!end)
		bk->edge[HS_LEAKS_BUCKETS] = UINT64_MAX;
	bk->last = 0;
}

static inline unsigned bucket(struct buckets *bk, uint64_t ns)
{
	double x;
	unsigned b = bk->last;

	if (ns >= bk->edge[b] && (b == HS_LEAKS_BUCKETS - 1 || ns < bk->edge[b + 1]))
		return b;
	x = (double)(int64_t)(ns & HS_ALLOC_TIME_MASK) * bk->scale;
	b = x < HS_LEAKS_BUCKETS - 1 ? (unsigned)x : HS_LEAKS_BUCKETS - 1;
	while (b > 0 && ns < bk->edge[b])
		b--;
	while (b < HS_LEAKS_BUCKETS - 1 && ns >= bk->edge[b + 1])
		b++;
	bk->last = b;
	return b;
}

/*
 * A block's live bytes into a difference array, *d, made at its first use:
 * none when the block came and went within one bucket, as most do. 0, or
 * -ENOMEM.
 */
static inline int span(struct buckets *bk, double **d, uint64_t t0, uint64_t t1, double b)
{
	unsigned b0 = bucket(bk, t0);

	if (t1 != HS_ALLOC_NEVER && (b0 == HS_LEAKS_BUCKETS - 1 || t1 < bk->edge[b0 + 1]))
		return 0;
	if (!*d && !(*d = calloc(HS_LEAKS_BUCKETS, sizeof(**d))))
		return -ENOMEM;
	(*d)[b0] += b;
	if (t1 != HS_ALLOC_NEVER)
		(*d)[bucket(bk, t1)] -= b;
	return 0;
}

/* One allocation's share of its site's fates (flags: HS_ALLOC_CONT, HS_ALLOC_GROWN); both passes count through here. */
__attribute__((always_inline)) static inline void site_add(struct hs_leaks_site *s, const struct hs_alloc *a, double w,
							   uint64_t end, uint64_t late, uint64_t min_life, unsigned flags)
{
	uint64_t t1 = hs_alloc_free_time(a);
	double b = w * (double)hs_alloc_size(a);

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
		if (flags & HS_ALLOC_CONT)
			s->chain_ends_kept += w;
	}
	if (flags & HS_ALLOC_CONT) {
		s->reallocs += w;
		if (flags & HS_ALLOC_GROWN)
			s->reallocs_grown += w;
	}
}

/* Walks the filtered allocations in table order; realloc links are in that order too. */
static int sum_sites(struct hs_leaks *lk, const struct hs_alloctab *t, struct hs_filter *f, struct hs_stacks *st,
		     struct hs_keyed *sites)
{
	uint64_t end = t->end_ns, late = end - end / 50, min_life = end / 50, j = 0;
	uint32_t last_stack = UINT32_MAX, key = 0;
	int all = hs_filter_passes_all(f);

	for (uint64_t i = 0; i < t->n; i++) {
		const struct hs_alloc *a = hs_alloctab_at(t, i);
		struct hs_leaks_site *s;
		int cont = 0;

		while (j < t->nlinks && t->links[j].to < i)
			j++;
		if (j < t->nlinks && t->links[j].to == i)
			cont = 1;
		if (!all && !hs_filter_match(f, t, a, i))
			continue;
		if (a->stack != last_stack) {
			last_stack = a->stack;
			key = hs_stacks_key(st, a->stack);
		}
		if (!(s = site_of(sites, key, a->stack, i)))
			return -ENOMEM;
		site_add(s, a, hs_alloctab_weight(t, hs_alloc_size(a)), end, late, min_life,
			 cont ? HS_ALLOC_CONT | (hs_alloc_size(a) > hs_alloc_size(hs_alloctab_at(t, t->links[j].from)) ?
						  HS_ALLOC_GROWN : 0) : 0);
		lk->records++;
	}
	return 0;
}

/* A site's live bytes per bucket from its difference array, and the shape figures the verdicts read. */
static void series(struct hs_leaks_site *s, const double *diff, float *out)
{
	double live = 0, top = 0;

	for (unsigned b = 0; b < HS_LEAKS_BUCKETS; b++) {
		live += diff ? diff[b] : 0;
		out[b] = (float)(live > 0 ? live : 0);
		if (b < HS_LEAKS_BUCKETS - 1 && out[b] > top)
			top = out[b];
	}
	s->live = out;
	/* the last bucket is left out: exit cleanup would hide a growth that lasted until then */
	for (unsigned b = 0; b < HS_LEAKS_BUCKETS - 1; b++)
		if (out[b] >= 0.9 * top) {
			s->plateau = (double)(b + 1) / HS_LEAKS_BUCKETS;
			break;
		}
	if (top > 0 && out[HS_LEAKS_BUCKETS - 2] > out[HS_LEAKS_BUCKETS / 2 - 1])
		s->growth = (out[HS_LEAKS_BUCKETS - 2] - out[HS_LEAKS_BUCKETS / 2 - 1]) / top;
}

/* The series of the sites with kept blocks, from their difference arrays (diff[i] for site i, NULL: none). */
static int all_series(struct hs_leaks *lk, struct hs_keyed *sites, double *const *diff)
{
	static const float zeros[HS_LEAKS_BUCKETS];
	struct hs_leaks_site *v = sites->v;
	size_t n = 0;

	for (uint32_t i = 0; i < sites->n; i++)
		n += v[i].kept_count > 0;
	if (!(lk->series = malloc((n ? n : 1) * HS_LEAKS_BUCKETS * sizeof(*lk->series))))
		return -ENOMEM;
	n = 0;
	for (uint32_t i = 0; i < sites->n; i++) {
		if (v[i].kept_count > 0)
			series(&v[i], diff[i], &lk->series[n++ * HS_LEAKS_BUCKETS]);
		else
			v[i].live = zeros;
	}
	return 0;
}

/* Live bytes per bucket of the sites that kept something: one difference array per such site. */
static int fill_series(struct hs_leaks *lk, const struct hs_alloctab *t, struct hs_filter *f, struct hs_stacks *st,
		       struct hs_keyed *sites)
{
	uint32_t last_stack = UINT32_MAX, idx = 0;
	double **diff = calloc(sites->n ? sites->n : 1, sizeof(*diff));
	struct hs_leaks_site *v = sites->v;
	int all = hs_filter_passes_all(f), rc = 0, any = 0;
	struct buckets bk;

	if (!diff)
		return -ENOMEM;
	buckets_init(&bk, t->end_ns);
	for (uint32_t i = 0; i < sites->n && !any; i++)
		any = v[i].kept_count > 0;
	for (uint64_t i = 0; any && i < t->n; i++) {
		const struct hs_alloc *a = hs_alloctab_at(t, i);
		uint32_t key;

		if (a->stack != last_stack) {
			/* keys were all seen by sum_sites: no allocation here */
			last_stack = a->stack;
			key = hs_stacks_key(st, a->stack);
			idx = hs_keyed_find(sites, key);
		}
		if (idx == UINT32_MAX || !(v[idx].kept_count > 0) || (!all && !hs_filter_match(f, t, a, i)))
			continue;
		if ((rc = span(&bk, &diff[idx], hs_alloc_time(a), hs_alloc_free_time(a),
			       hs_alloctab_weight(t, hs_alloc_size(a)) * (double)hs_alloc_size(a))) < 0)
			goto out;
	}
	rc = all_series(lk, sites, diff);
out:
	for (uint32_t i = 0; i < sites->n; i++)
		free(diff[i]);
	free(diff);
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
	/*
	 * Nothing leaked, and live bytes flat since early on: the kept blocks
	 * are what a pool or cache held when the program cleaned up (one that
	 * replaces entries at random keeps a few percent of them 2% of the run
	 * or longer), not a rare leak.
	 */
	if (s->kept_count <= 0.1 * s->calls && !(s->leaked_count <= 0 && s->plateau <= 0.8 && s->growth < 0.05))
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
	/* not the key: keys are numbered in whatever order a pass met them */
	return a->first < b->first ? -1 : a->first > b->first;
}

static void judge(struct hs_leaks *lk, struct hs_keyed *sites);

int hs_leaks_build(struct hs_leaks *lk, const struct hs_alloctab *t, struct hs_filter *f, struct hs_stacks *st)
{
	struct hs_keyed sites;
	int rc;

	memset(lk, 0, sizeof(*lk));
	hs_keyed_init(&sites, sizeof(struct hs_leaks_site));
	if ((rc = sum_sites(lk, t, f, st, &sites)) < 0 || (rc = fill_series(lk, t, f, st, &sites)) < 0) {
		hs_leaks_free(lk);
		goto out;
	}
	judge(lk, &sites);
out:
	hs_keyed_free(&sites);
	return rc;
}

/* Verdicts and scores, then the sites ranked; takes the sites over into lk. */
static void judge(struct hs_leaks *lk, struct hs_keyed *t)
{
	uint32_t n = 0, count;
	struct hs_leaks_site *sites = hs_keyed_take(t, &count);

	for (uint32_t k = 0; k < count; k++) {
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
}

void hs_leaks_free(struct hs_leaks *lk)
{
	free(lk->sites);
	free(lk->series);
	memset(lk, 0, sizeof(*lk));
}

/*
 * Streaming: the figures of sum_sites and the difference arrays of
 * fill_series are kept per stack id as the fates come (stacks are not
 * known before the pass ends), then merged per key.
 */
struct per_stack {
	struct hs_leaks_site s;   /* key unused; first: smallest sequence number */
	uint64_t records;
	double *diff;             /* made at the first block that outlives its bucket */
};

struct hs_leaks_stream {
	struct hs_filter *f;
	struct hs_alloctab t;     /* end_ns and sample_bytes, for the filter and the weights */
	int all;
	uint64_t late, min_life;
	struct buckets bk;
	struct per_stack **stacks;
	uint32_t nstacks;
};

int hs_leaks_stream_begin(struct hs_leaks_stream **out, struct hs_filter *f, uint64_t end_ns, uint64_t sample_bytes)
{
	struct hs_leaks_stream *ls = calloc(1, sizeof(*ls));

	*out = ls;
	if (!ls)
		return -ENOMEM;
	ls->f = f;
	ls->t.end_ns = end_ns;
	ls->t.sample_bytes = sample_bytes;
	hs_filter_prepare_stream(f, end_ns);
	ls->all = hs_filter_passes_all(f);
	ls->late = end_ns - end_ns / 50;
	ls->min_life = end_ns / 50;
	buckets_init(&ls->bk, end_ns);
	return 0;
}

static int leaks_one(struct hs_leaks_stream *ls, const struct hs_alloc *a, uint64_t seq, unsigned flags)
{
	struct per_stack *p;
	struct hs_leaks_site *s;
	double w;

	if (!ls->all && !hs_filter_match(ls->f, &ls->t, a, seq))
		return 0;
	if (a->stack >= ls->nstacks) {
		uint32_t cap = ls->nstacks ? ls->nstacks : 1024;
		struct per_stack **n;
		while (cap <= a->stack)
			cap *= 2;
		if (!(n = realloc(ls->stacks, cap * sizeof(*n))))
			return -ENOMEM;
		memset(n + ls->nstacks, 0, (cap - ls->nstacks) * sizeof(*n));
		ls->stacks = n;
		ls->nstacks = cap;
	}
	if (!(p = ls->stacks[a->stack])) {
		if (!(p = ls->stacks[a->stack] = calloc(1, sizeof(*p))))
			return -ENOMEM;
		p->s.stack = a->stack;
		p->s.first = seq;
	}
	s = &p->s;
	w = hs_alloctab_weight(&ls->t, hs_alloc_size(a));
	if (seq < s->first)
		s->first = seq;
	site_add(s, a, w, ls->t.end_ns, ls->late, ls->min_life, flags);
	p->records++;
	return span(&ls->bk, &p->diff, hs_alloc_time(a), hs_alloc_free_time(a), w * (double)hs_alloc_size(a));
}

int hs_leaks_sink(void *arg, const struct hs_fate *fates, size_t n)
{
	int rc;

	for (size_t i = 0; i < n; i++)
		if ((rc = leaks_one(arg, &fates[i].a, fates[i].seq, fates[i].flags)) < 0)
			return rc;
	return 0;
}

/* The stack's figures if its allocations count (the filter's conditions on stacks hold), else NULL. */
static struct per_stack *counted_stack(const struct hs_leaks_stream *ls, uint32_t id)
{
	struct per_stack *p = ls->stacks[id];

	return p && (!ls->f->stack_ok || hs_filter_stack(ls->f, id)) ? p : NULL;
}

int hs_leaks_stream_finish(struct hs_leaks_stream *ls, struct hs_leaks *lk, const struct hs_alloctab *t,
			   struct hs_stacks *st)
{
	struct hs_keyed sites;
	double **diff = NULL;
	int rc;

	memset(lk, 0, sizeof(*lk));
	hs_keyed_init(&sites, sizeof(struct hs_leaks_site));
	ls->t = *t;
	ls->t.blocks = NULL;
	if ((rc = hs_filter_prepare(ls->f, t, st)) < 0)
		goto out;
	for (uint32_t id = 0; id < ls->nstacks; id++) {
		struct per_stack *p = counted_stack(ls, id);
		struct hs_leaks_site *s, *q;
		if (!p)
			continue;
		q = &p->s;
		if (!(s = site_of(&sites, hs_stacks_key(st, id), q->stack, q->first))) {
			rc = -ENOMEM;
			goto out;
		}
		if (q->first < s->first) {
			s->stack = q->stack;
			s->first = q->first;
		}
		s->calls += q->calls;
		s->bytes += q->bytes;
		s->leaked_count += q->leaked_count;
		s->leaked_bytes += q->leaked_bytes;
		s->freed_end_count += q->freed_end_count;
		s->freed_end_bytes += q->freed_end_bytes;
		s->kept_count += q->kept_count;
		s->kept_bytes += q->kept_bytes;
		s->reallocs += q->reallocs;
		s->reallocs_grown += q->reallocs_grown;
		s->chain_ends_kept += q->chain_ends_kept;
		lk->records += p->records;
	}
	/* the sites are all known now: their difference arrays, each the first stack's own, the others added */
	if (!(diff = calloc(sites.n ? sites.n : 1, sizeof(*diff)))) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t id = 0; id < ls->nstacks; id++) {
		struct per_stack *p = counted_stack(ls, id);
		uint32_t i;
		if (!p || !p->diff)
			continue;
		i = hs_keyed_find(&sites, hs_stacks_key(st, id));
		if (!diff[i]) {
			diff[i] = p->diff;
			p->diff = NULL;
		} else {
			for (unsigned b = 0; b < HS_LEAKS_BUCKETS; b++)
				diff[i][b] += p->diff[b];
		}
	}
	if ((rc = all_series(lk, &sites, diff)) < 0) {
		hs_leaks_free(lk);
		goto out;
	}
	judge(lk, &sites);
out:
	for (uint32_t i = 0; diff && i < sites.n; i++)
		free(diff[i]);
	free(diff);
	hs_keyed_free(&sites);
	return rc;
}

void hs_leaks_stream_free(struct hs_leaks_stream *ls)
{
	if (!ls)
		return;
	for (uint32_t i = 0; i < ls->nstacks; i++)
		if (ls->stacks[i]) {
			free(ls->stacks[i]->diff);
			free(ls->stacks[i]);
		}
	free(ls->stacks);
	free(ls);
}
