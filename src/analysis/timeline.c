/* timeline.c - live bytes per series at each sampled moment, from one pass with difference arrays */
#include "timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * First k whose moment end*k/(n-1) is at or after ns: ceil(ns * (n-1) /
 * end), the smallest k with k * end >= ns * (n-1). A float product guesses
 * it and integer products settle it: two per block instead of two
 * divisions.
 */
struct moments {
	uint64_t end;
	uint32_t n;
	double scale;
	/*
	 * The last answer k > 0 and the times that give it, (lo, hi] in ns:
	 * neighbours in time share it. In ns rather than in ns * (n-1), so
	 * that asking takes no product: ns * (n-1) > L exactly when
	 * ns > floor(L / (n-1)).
	 */
	uint64_t lo, hi;
	uint32_t k;
};

static void moments_init(struct moments *m, uint64_t end, uint32_t n)
{
	m->end = end;
	m->n = n;
	m->scale = end ? (double)(n - 1) / (double)end : 0;
	m->lo = m->hi = 0;
	m->k = 0;
}

static inline uint32_t first_at(struct moments *m, uint64_t ns)
{
	uint64_t want;
	double x;
	uint32_t k;

	if (!m->end)
		return 0;
	if (ns > m->end)
		return m->n;
	if (ns > m->lo && ns <= m->hi)
		return m->k;
	want = ns * (m->n - 1);
	x = (double)(int64_t)ns * m->scale;   /* signed: one instruction, and ns < 2^48 */
	k = x < (double)(m->n - 1) ? (uint32_t)x : m->n - 1;
	while ((uint64_t)k * m->end < want)
		k++;
	while (k > 0 && (uint64_t)(k - 1) * m->end >= want)
		k--;
	if (k > 0) {
		m->lo = (uint64_t)(k - 1) * m->end / (m->n - 1);
		m->hi = (uint64_t)k * m->end / (m->n - 1);
		m->k = k;
	}
	return k;
}

/* first_at(t1) for a block born at moment k1 (t1 >= its birth): most die before the next moment. */
static inline uint32_t death_at(struct moments *m, uint32_t k1, uint64_t t1)
{
	if (t1 == HS_ALLOC_NEVER)
		return UINT32_MAX;
	/* k1 came from first_at just before: its range is the one kept */
	if (k1 && k1 == m->k)
		return t1 <= m->hi ? k1 : first_at(m, t1);
	if (!m->end || (t1 <= m->end && (uint64_t)k1 * m->end >= t1 * (m->n - 1)))
		return k1;
	return first_at(m, t1);
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

/* The series of the top ngroups rows, and slot: key -> group index or UINT32_MAX (nkeys of them). */
static int series_alloc(struct hs_timeline *tl, const struct hs_top *top, uint32_t npoints, uint32_t ngroups,
			uint32_t **slotp, uint32_t *nkeysp)
{
	uint32_t *slot, nkeys = 0, n = npoints;

	if (ngroups > top->nrows)
		ngroups = top->nrows;
	for (uint32_t i = 0; i < top->nrows; i++)
		if (top->rows[i].key >= nkeys)
			nkeys = top->rows[i].key + 1;
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
	*slotp = slot;
	*nkeysp = nkeys;
	if (!tl->time_ns || !tl->heap || !tl->rss || !tl->filtered || !tl->other || !tl->groups || !tl->keys ||
	    !tl->stacks || !slot)
		return -ENOMEM;
	for (uint32_t k = 0; k < nkeys; k++)
		slot[k] = UINT32_MAX;
	for (uint32_t i = 0; i < ngroups; i++) {
		tl->keys[i] = top->rows[i].key;
		tl->stacks[i] = top->rows[i].stack;
		slot[top->rows[i].key] = i;
	}
	return 0;
}

/* Difference arrays to values, and the moments with their RSS. */
static void series_finish(struct hs_timeline *tl, const struct hs_alloctab *t, int all)
{
	uint32_t n = tl->npoints;
	uint64_t end = t->end_ns, r = 0;

	/* no filter: the filtered series is the heap */
	if (all)
		memcpy(tl->filtered, tl->heap, (n + 1) * sizeof(double));
	integrate(tl->heap, n);
	integrate(tl->filtered, n);
	integrate(tl->other, n);
	for (uint32_t i = 0; i < tl->ngroups; i++)
		integrate(tl->groups + (size_t)i * (n + 1), n);
	for (uint32_t k = 0; k < n; k++) {
		tl->time_ns[k] = end * k / (n - 1);
		while (r < t->nrss && t->rss[r].time_ns <= tl->time_ns[k])
			r++;
		tl->rss[k] = r ? (double)t->rss[r - 1].rss : -1;
	}
}

int hs_timeline_build(struct hs_timeline *tl, const struct hs_alloctab *t, struct hs_filter *f, struct hs_stacks *st,
		      uint32_t npoints, uint32_t ngroups, enum hs_top_sort sort)
{
	struct hs_top top = { 0 };
	uint32_t *slot = NULL, nkeys = 0, last_stack = UINT32_MAX, g = 0, n = npoints;
	struct moments m;
	int all = hs_filter_passes_all(f), rc = 0;

	memset(tl, 0, sizeof(*tl));
	moments_init(&m, t->end_ns, n);
	if ((rc = hs_top_build(&top, t, f, st, sort, HS_STACKS_NO_KEY)) < 0 ||
	    (rc = series_alloc(tl, &top, npoints, ngroups, &slot, &nkeys)) < 0)
		goto out;
	for (uint64_t i = 0; i < t->n; i++) {
		const struct hs_alloc *a = hs_alloctab_at(t, i);
		uint64_t t0 = hs_alloc_time(a), t1 = hs_alloc_free_time(a);
		uint32_t k1 = first_at(&m, t0), k2 = t1 < t0 ? first_at(&m, t1) : death_at(&m, k1, t1);
		double w;

		/* born and gone between two moments: live at none of them */
		if (k1 == k2)
			continue;
		w = (double)hs_alloc_size(a) * hs_alloctab_weight(t, hs_alloc_size(a));
		span(tl->heap, k1, k2, w);
		if (!all) {
			if (!hs_filter_match(f, t, a, i))
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
	series_finish(tl, t, all);
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

/*
 * Streaming: rows of top and a difference array per stack id as the fates
 * come, merged per key once the stacks are known. The contribution at the
 * peak needs the peak before the pass ends: each block comes weighed
 * against the peak so far (HS_ALLOC_AT_PEAK), and a later peak restarts
 * the sums (an epoch per stack), since every block that went out before
 * it was freed before it.
 *
 * A stack's series starts as a list of changes and becomes a difference
 * array of npoints + 1 only once the list would be larger: clang's 145,000
 * stacks, most with a block or two, each had an array of 4 KB made and
 * zeroed, half the pass (timeline of one compile 0.70 s, 115 MB).
 */
struct change {
	uint32_t k;
	double w;
};

struct per_stack {
	struct hs_top_row row;   /* peak_bytes: for epoch only */
	uint32_t epoch;
	uint64_t records;
	double *d;               /* npoints + 1, or NULL while the changes fit in ch */
	struct change *ch;
	uint32_t nch, chcap;
};

struct hs_timeline_stream {
	struct hs_filter *f;
	struct hs_alloctab t;    /* end_ns and sample_bytes */
	int all;
	uint32_t n, ngroups;
	struct moments m;
	enum hs_top_sort sort;
	uint64_t peak_rises;              /* of the peak the sums are for */
	uint32_t epoch;
	double *heap, *filtered;
	struct per_stack **stacks;
	uint32_t nstacks;
	size_t bytes;                     /* of the per-stack arrays, against a cap */
};

/* Per-stack series beyond this much memory: the table costs less. */
#define STREAM_CAP ((size_t)512 << 20)

int hs_timeline_stream_begin(struct hs_timeline_stream **out, struct hs_filter *f, uint64_t end_ns, uint64_t sample_bytes,
			     uint32_t npoints, uint32_t ngroups, enum hs_top_sort sort)
{
	struct hs_timeline_stream *ts = calloc(1, sizeof(*ts));

	*out = ts;
	if (!ts)
		return -ENOMEM;
	ts->f = f;
	ts->t.end_ns = end_ns;
	ts->t.sample_bytes = sample_bytes;
	ts->n = npoints;
	ts->ngroups = ngroups;
	moments_init(&ts->m, end_ns, npoints);
	ts->sort = sort;
	hs_filter_prepare_stream(f, end_ns);
	ts->all = hs_filter_passes_all(f);
	ts->heap = calloc(npoints + 1, sizeof(double));
	ts->filtered = calloc(npoints + 1, sizeof(double));
	return ts->heap && ts->filtered ? 0 : -ENOMEM;
}

static struct hs_top_row *row_now(struct hs_timeline_stream *ts, struct per_stack *p)
{
	if (p->epoch != ts->epoch) {
		p->epoch = ts->epoch;
		p->row.peak_bytes = 0;
	}
	return &p->row;
}

static void change_add(struct per_stack *p, uint32_t k, double w)
{
	/* blocks of one stack mostly come and go at the same moments */
	if (p->nch && p->ch[p->nch - 1].k == k) {
		p->ch[p->nch - 1].w += w;
		return;
	}
	p->ch[p->nch].k = k;
	p->ch[p->nch++].w = w;
}

/* span() into a stack that has no array yet: its list grows, up to the array's size, then becomes the array. */
static int stack_span(struct hs_timeline_stream *ts, struct per_stack *p, uint32_t k1, uint32_t k2, double b)
{
	uint32_t n = ts->n;

	if (p->nch + 2 > p->chcap) {
		uint32_t cap = p->chcap ? p->chcap * 2 : 4;
		struct change *c;
		if ((size_t)cap * sizeof(*c) >= (size_t)(n + 1) * sizeof(double)) {
			if ((ts->bytes += (n + 1) * sizeof(double)) > STREAM_CAP)
				return -E2BIG;
			if (!(p->d = calloc(n + 1, sizeof(double))))
				return -ENOMEM;
			for (uint32_t i = 0; i < p->nch; i++)
				p->d[p->ch[i].k] += p->ch[i].w;
			ts->bytes -= (size_t)p->chcap * sizeof(*c);
			free(p->ch);
			p->ch = NULL;
			p->nch = p->chcap = 0;
			span(p->d, k1, k2, b);
			return 0;
		}
		if ((ts->bytes += (size_t)(cap - p->chcap) * sizeof(*c)) > STREAM_CAP)
			return -E2BIG;
		if (!(c = realloc(p->ch, cap * sizeof(*c))))
			return -ENOMEM;
		p->ch = c;
		p->chcap = cap;
	}
	change_add(p, k1, b);
	if (k2 != UINT32_MAX)
		change_add(p, k2, -b);
	return 0;
}

/* plain: a full-mode trace and no filter (ts->all), the usual case, which then asks neither per block */
static inline __attribute__((always_inline)) int timeline_one(struct hs_timeline_stream *ts, const struct hs_alloc *a,
							      uint64_t seq, uint64_t peak_rises, const int plain)
{
	uint64_t size = hs_alloc_size(a), t0 = hs_alloc_time(a), t1 = hs_alloc_free_time(a);
	uint32_t k1 = first_at(&ts->m, t0), k2 = t1 < t0 ? first_at(&ts->m, t1) : death_at(&ts->m, k1, t1);
	double w = !plain && ts->t.sample_bytes ? hs_alloctab_weight(&ts->t, size) : 1.0, b = (double)size * w;
	struct per_stack *p;
	struct hs_top_row *r;

	if (peak_rises != ts->peak_rises) {
		/* a new peak: what went out so far was freed before it */
		ts->peak_rises = peak_rises;
		ts->epoch++;
	}
	if (k1 != k2)
		span(ts->heap, k1, k2, b);
	if (!plain && !ts->all && !hs_filter_match(ts->f, &ts->t, a, seq))
		return 0;
	if (a->stack >= ts->nstacks) {
		uint32_t cap = ts->nstacks ? ts->nstacks : 1024;
		struct per_stack **ns;
		while (cap <= a->stack)
			cap *= 2;
		if (!(ns = realloc(ts->stacks, cap * sizeof(*ns))))
			return -ENOMEM;
		memset(ns + ts->nstacks, 0, (cap - ts->nstacks) * sizeof(*ns));
		ts->stacks = ns;
		ts->nstacks = cap;
	}
	if (!(p = ts->stacks[a->stack])) {
		if ((ts->bytes += sizeof(*p)) > STREAM_CAP)
			return -E2BIG;
		if (!(p = ts->stacks[a->stack] = calloc(1, sizeof(*p))))
			return -ENOMEM;
		p->row.stack = a->stack;
		p->row.first = seq;
		p->epoch = ts->epoch;
	}
	r = row_now(ts, p);
	if (seq < r->first)
		r->first = seq;
	hs_top_row_add(r, t1, hs_alloc_at_peak(a), w, b);
	p->records++;
	if (k1 != k2) {
		if (!plain && !ts->all)
			span(ts->filtered, k1, k2, b);
		if (p->d)
			span(p->d, k1, k2, b);
		else
			return stack_span(ts, p, k1, k2, b);
	}
	return 0;
}

int hs_timeline_sink(void *arg, const struct hs_fate *fates, size_t n)
{
	struct hs_timeline_stream *ts = arg;
	int rc;

	if (!ts->t.sample_bytes && ts->all) {
		for (size_t i = 0; i < n; i++)
			if ((rc = timeline_one(ts, &fates[i].a, fates[i].seq, fates[i].peak_rises, 1)) < 0)
				return rc;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if ((rc = timeline_one(ts, &fates[i].a, fates[i].seq, fates[i].peak_rises, 0)) < 0)
			return rc;
	return 0;
}

int hs_timeline_stream_finish(struct hs_timeline_stream *ts, struct hs_timeline *tl, const struct hs_alloctab *t,
			      struct hs_stacks *st)
{
	struct hs_top top = { 0 };
	struct hs_keyed rows;
	uint32_t *slot = NULL, nkeys = 0, n = ts->n;
	uint64_t records = 0;
	int rc;

	memset(tl, 0, sizeof(*tl));
	hs_keyed_init(&rows, sizeof(struct hs_top_row));
	/* the sums were for the peak the pass ended with (its block went out, freed or not) */
	if (ts->peak_rises != t->peak_rises)
		return -EAGAIN;
	if ((rc = hs_filter_prepare(ts->f, t, st)) < 0)
		goto out;
	for (uint32_t id = 0; id < ts->nstacks; id++) {
		struct per_stack *p = ts->stacks[id];
		struct hs_top_row *r;
		uint32_t key;
		if (!p || (ts->f->stack_ok && !hs_filter_stack(ts->f, id))) {
			if (p)
				p->records = 0;   /* left out of the groups too */
			continue;
		}
		key = hs_stacks_key(st, id);
		if (!(r = hs_top_row_of(&rows, key))) {
			rc = -ENOMEM;
			goto out;
		}
		if (r->calls == 0 || p->row.first < r->first) {
			r->stack = p->row.stack;
			r->first = p->row.first;
		}
		r->calls += p->row.calls;
		r->bytes += p->row.bytes;
		r->peak_bytes += p->epoch == ts->epoch ? p->row.peak_bytes : 0;
		r->leaked_count += p->row.leaked_count;
		r->leaked_bytes += p->row.leaked_bytes;
		r->temporary_count += p->row.temporary_count;
		r->temporary_bytes += p->row.temporary_bytes;
		records += p->records;
	}
	hs_top_from_rows(&top, &rows, ts->sort, records);
	if ((rc = series_alloc(tl, &top, n, ts->ngroups, &slot, &nkeys)) < 0)
		goto out;
	memcpy(tl->heap, ts->heap, (n + 1) * sizeof(double));
	if (!ts->all)
		memcpy(tl->filtered, ts->filtered, (n + 1) * sizeof(double));
	for (uint32_t id = 0; id < ts->nstacks; id++) {
		struct per_stack *p = ts->stacks[id];
		uint32_t key, g;
		double *d;
		if (!p || !p->records || (!p->d && !p->nch))
			continue;
		key = hs_stacks_key(st, id);
		g = key < nkeys ? slot[key] : UINT32_MAX;
		d = g != UINT32_MAX ? tl->groups + (size_t)g * (n + 1) : tl->other;
		if (p->d) {
			for (uint32_t k = 0; k <= n; k++)
				d[k] += p->d[k];
		} else {
			for (uint32_t i = 0; i < p->nch; i++)
				d[p->ch[i].k] += p->ch[i].w;
		}
	}
	series_finish(tl, t, ts->all);
out:
	hs_keyed_free(&rows);
	free(slot);
	hs_top_free(&top);
	return rc;
}

void hs_timeline_stream_free(struct hs_timeline_stream *ts)
{
	if (!ts)
		return;
	for (uint32_t i = 0; i < ts->nstacks; i++)
		if (ts->stacks[i]) {
			free(ts->stacks[i]->d);
			free(ts->stacks[i]->ch);
			free(ts->stacks[i]);
		}
	free(ts->stacks);
	free(ts->heap);
	free(ts->filtered);
	free(ts);
}
