/* flame.c - folded-backtrace weights and their merge into the tree of a flame (or icicle) graph */
#define _POSIX_C_SOURCE 200809L
#include "flame.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EMPTY UINT32_MAX
#define FLAME_NAME_MAX 1024   /* where a flame graph's frame names are cut */

const char *const hs_flame_weight_names[HS_WEIGHT_COUNT_] = { "bytes", "count", "leaked", "live" };

void hs_flame_frame_name(const struct hs_frame *fr, char *buf, size_t n)
{
	hs_stacks_frame_name(fr, HS_BY_FUNCTION, buf, n);
	/* ';' separates frames in the folded format */
	for (char *p = strchr(buf, ';'); p; p = strchr(p + 1, ';'))
		*p = ':';
}

/*
 * Each step of the folded tree (an address's visible frames) named once:
 * naming every frame of every backtrace (a clang compile: 1,020,000, through
 * 118,600 steps) was most of the time of a flame graph of a large program.
 */
struct hs_flame_steps {
	struct step {
		uint32_t first, parent;
		uint8_t n, named;
	} *of;                    /* by folded id */
	size_t cap;
	struct hs_flame_frame *v; /* every step's frames, innermost first */
	size_t n, vcap;
	hs_frame_namer namer;     /* how these steps' frames are named, into name_max bytes */
	size_t name_max;
};

/* Folded id f's step, named on first use; NULL when out of memory. */
static const struct step *step_of(struct hs_names *names, struct hs_flame_steps *ss, struct hs_stacks *st, uint32_t f)
{
	struct hs_frame fr[HS_STACKS_MAX_FRAMES];
	char name[HS_FRAME_NAME_MAX];
	struct step *s;
	int n;

	if (f >= ss->cap) {
		size_t cap = ss->cap ? ss->cap : 1024;
		struct step *v;
		while (cap <= f)
			cap *= 2;
		if (!(v = realloc(ss->of, cap * sizeof(*v))))
			return NULL;
		memset(v + ss->cap, 0, (cap - ss->cap) * sizeof(*v));
		ss->of = v;
		ss->cap = cap;
	}
	s = &ss->of[f];
	if (s->named)
		return s;
	n = hs_stacks_fold_step(st, f, fr, HS_STACKS_MAX_FRAMES, &s->parent);
	if (n > UINT8_MAX)
		return NULL;
	if (ss->n + (size_t)n > ss->vcap) {
		size_t cap = ss->vcap ? ss->vcap : 4096;
		struct hs_flame_frame *v;
		while (cap < ss->n + (size_t)n)
			cap *= 2;
		if (!(v = realloc(ss->v, cap * sizeof(*v))))
			return NULL;
		ss->v = v;
		ss->vcap = cap;
	}
	s->first = (uint32_t)ss->n;
	for (int i = 0; i < n; i++) {
		struct hs_flame_frame *e = &ss->v[ss->n++];
		ss->namer(&fr[i], name, ss->name_max);
		if (hs_names_intern(names, name, &e->name) < 0)
			return NULL;
		e->line = fr[i].line;
		e->inlined = fr[i].inlined;
		e->file = fr[i].file;
	}
	s->n = (uint8_t)n;
	s->named = 1;
	return s;
}

int hs_flame_steps_line(struct hs_names *names, struct hs_flame_steps **steps, struct hs_stacks *st, uint32_t folded,
			struct hs_flame_frame *out, hs_frame_namer namer, size_t name_max)
{
	int n = 0;

	if (!*steps) {
		if (!(*steps = calloc(1, sizeof(**steps))))
			return -ENOMEM;
		(*steps)->namer = namer;
		(*steps)->name_max = name_max < HS_FRAME_NAME_MAX ? name_max : HS_FRAME_NAME_MAX;
	}
	for (uint32_t f = folded; f && n < HS_STACKS_MAX_FRAMES;) {
		const struct step *s = step_of(names, *steps, st, f);
		if (!s)
			return -ENOMEM;
		for (int i = 0; i < s->n && n < HS_STACKS_MAX_FRAMES; i++)
			out[n++] = (*steps)->v[s->first + i];
		f = s->parent;
	}
	return n;
}

int hs_flame_line(struct hs_names *names, struct hs_flame_steps **steps, struct hs_stacks *st, uint32_t folded,
		  struct hs_flame_frame *out)
{
	int n = hs_flame_steps_line(names, steps, st, folded, out, hs_flame_frame_name, FLAME_NAME_MAX);

	if (n == 0) {
		out[0] = (struct hs_flame_frame){ .name = 0 };
		if (hs_names_intern(names, "[no backtrace]", &out[0].name) < 0)
			return -ENOMEM;
		n = 1;
	}
	return n;
}

void hs_flame_steps_free(struct hs_flame_steps *steps)
{
	if (!steps)
		return;
	free(steps->of);
	free(steps->v);
	free(steps);
}

/*
 * Multikey quicksort (Bentley and Sedgewick): each depth of the lines in
 * one part is compared once per partition, where qsort compared whole
 * lines again and again (they share long runs of callers).
 */
#define KEY_END UINT32_MAX

static inline uint32_t line_key(const uint32_t *keys, const size_t *start, const uint32_t *count, uint32_t k,
				uint32_t d)
{
	return d < count[k] ? keys[start[k] + d] : KEY_END;
}

static void swap_u32(uint32_t *a, size_t i, size_t j)
{
	uint32_t t = a[i];
	a[i] = a[j];
	a[j] = t;
}

/* Lines a[0 .. n) that agree before depth d, sorted. */
static void sort_lines(const uint32_t *keys, const size_t *start, const uint32_t *count, uint32_t *a, size_t n,
		       uint32_t d)
{
	while (n > 1) {
		size_t lt = 0, i = 0, gt = n;
		uint32_t v, k0, k1, k2;

		if (n < 12) {
			for (size_t x = 1; x < n; x++)
				for (size_t y = x; y > 0; y--) {
					uint32_t e = d, p, q;
					while ((p = line_key(keys, start, count, a[y - 1], e)) ==
						       (q = line_key(keys, start, count, a[y], e)) &&
					       p != KEY_END)
						e++;
					if (p <= q)
						break;
					swap_u32(a, y - 1, y);
				}
			return;
		}
		/* the median of three keys as the pivot */
		k0 = line_key(keys, start, count, a[0], d);
		k1 = line_key(keys, start, count, a[n / 2], d);
		k2 = line_key(keys, start, count, a[n - 1], d);
		v = k0 < k1 ? (k1 < k2 ? k1 : k0 < k2 ? k2 : k0) : (k0 < k2 ? k0 : k1 < k2 ? k2 : k1);
		/* three ways: [0, lt) below v, [lt, gt) equal, [gt, n) above */
		while (i < gt) {
			uint32_t k = line_key(keys, start, count, a[i], d);
			if (k < v)
				swap_u32(a, lt++, i++);
			else if (k > v)
				swap_u32(a, i, --gt);
			else
				i++;
		}
		{
			/* the largest part goes round again, so that the stack holds log2(n) calls at most */
			struct { uint32_t *a; size_t n; uint32_t d; } part[3] = {
				{ a, lt, d }, { a + lt, v == KEY_END ? 0 : gt - lt, d + 1 }, { a + gt, n - gt, d }
			};
			int big = part[0].n >= part[1].n ? (part[0].n >= part[2].n ? 0 : 2) : (part[1].n >= part[2].n ? 1 : 2);
			for (int j = 0; j < 3; j++)
				if (j != big)
					sort_lines(keys, start, count, part[j].a, part[j].n, part[j].d);
			a = part[big].a;
			n = part[big].n;
			d = part[big].d;
		}
	}
}

void hs_flame_sort_lines(const uint32_t *keys, const size_t *start, const uint32_t *count, uint32_t *order, size_t n)
{
	sort_lines(keys, start, count, order, n, 0);
}

/*
 * Line fr (n frames, innermost first) into the tree, its first `same`
 * frames on the nodes of path (the line before it), the rest new nodes:
 * the lines come sorted by their names from the root, so a line that
 * leaves the one before it never meets a node made before. No search:
 * a map of (parent, name) to node, one miss in it and another in the
 * nodes for each of clang's 1,020,000 frames, was a third of its flame
 * graph.
 */
static int insert(struct hs_flame *fl, const struct hs_flame_frame *fr, int n, int same, double w, double c,
		  uint32_t *path)
{
	uint32_t node = 0;

	fl->nodes[0].weight += w;
	fl->nodes[0].count += c;
	for (int i = 0; i < n; i++) {
		const struct hs_flame_frame *f = &fr[fl->down ? i : n - 1 - i];
		struct hs_flame_node *nd;
		if (i < same) {
			node = path[i];
			nd = &fl->nodes[node];
			if (nd->line != f->line || (nd->file != f->file && (!nd->file || !f->file || strcmp(nd->file, f->file))))
				nd->several_lines = 1;
		} else {
			if (fl->nnodes == fl->nodes_cap) {
				uint32_t cap = fl->nodes_cap * 2;
				if (cap <= fl->nodes_cap || !(nd = realloc(fl->nodes, cap * sizeof(*nd))))
					return -ENOMEM;
				fl->nodes = nd;
				fl->nodes_cap = cap;
			}
			nd = &fl->nodes[fl->nnodes];
			*nd = (struct hs_flame_node){ .parent = node, .name = f->name, .file = f->file, .line = f->line,
						      .inlined = f->inlined };
			nd->next_sibling = fl->nodes[node].first_child;
			fl->nodes[node].first_child = fl->nnodes;
			path[i] = node = fl->nnodes++;
		}
		fl->nodes[node].weight += w;
		fl->nodes[node].count += c;
	}
	if ((uint32_t)n > fl->depth)
		fl->depth = (uint32_t)n;
	return 0;
}

/*
 * The nodes of path from depth d down to its end (n) are complete: no
 * line to come goes through them. Those lighter than keep lose the nodes
 * under them, the last ones made (the lines come depth first), and keep
 * their own weight for their parent's sake.
 */
static void prune(struct hs_flame *fl, const uint32_t *path, int d, int n, double keep)
{
	for (int i = n - 1; i >= d; i--) {
		struct hs_flame_node *nd = &fl->nodes[path[i]];
		if (nd->weight < keep && nd->first_child) {
			nd->first_child = 0;
			fl->nnodes = path[i] + 1;
		}
	}
}

/* The merged tree of the folded weights: the lines' names from the root, sorted, then each line in that order. */
static int tree(struct hs_flame *fl, struct hs_stacks *st, double keep_share)
{
	struct hs_flame_frame fr[HS_STACKS_MAX_FRAMES];
	struct hs_flame_steps *ss = NULL;
	uint32_t root, path[HS_STACKS_MAX_FRAMES], *order = NULL, *count = NULL, *ids = NULL, nlines = 0;
	size_t *start = NULL, nids = 0, cap = 0;
	double keep = keep_share * fl->total;
	int rc = 0, n, prev = 0;

	fl->nodes_cap = 1024;
	if (!(fl->nodes = calloc(fl->nodes_cap, sizeof(*fl->nodes))))
		return -ENOMEM;
	if ((rc = hs_names_intern(&fl->names, "all", &root)) < 0)
		return rc;
	fl->nodes[0].name = root;
	fl->nodes[0].parent = EMPTY;
	fl->nnodes = 1;
	if (!fl->nw)
		return 0;
	order = malloc(fl->nw * sizeof(*order));
	count = malloc(fl->nw * sizeof(*count));
	start = malloc(fl->nw * sizeof(*start));
	if (!order || !count || !start) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t k = 0; k < fl->nw; k++) {
		if (!(fl->c[k] > 0))
			continue;
		if ((n = hs_flame_line(&fl->names, &ss, st, k, fr)) < 0) {
			rc = n;
			goto out;
		}
		if (nids + (size_t)n > cap) {
			uint32_t *v;
			cap = cap ? cap * 2 : 65536;
			while (cap < nids + (size_t)n)
				cap *= 2;
			if (!(v = realloc(ids, cap * sizeof(*v)))) {
				rc = -ENOMEM;
				goto out;
			}
			ids = v;
		}
		start[k] = nids;
		count[k] = (uint32_t)n;
		for (int i = 0; i < n; i++)
			ids[nids++] = fr[fl->down ? i : n - 1 - i].name;
		order[nlines++] = k;
	}
	hs_flame_sort_lines(ids, start, count, order, nlines);
	for (uint32_t i = 0; i < nlines; i++) {
		uint32_t k = order[i], same = 0;
		if (i) {
			uint32_t p = order[i - 1], m = count[p] < count[k] ? count[p] : count[k];
			while (same < m && ids[start[p] + same] == ids[start[k] + same])
				same++;
		}
		if (keep > 0)
			prune(fl, path, (int)same, prev, keep);
		if ((n = hs_flame_line(&fl->names, &ss, st, k, fr)) < 0) {
			rc = n;
			goto out;
		}
		prev = n;
		if ((rc = insert(fl, fr, n, (int)same, fl->w[k], fl->c[k], path)) < 0)
			goto out;
	}
	if (keep > 0)
		prune(fl, path, 0, prev, keep);
out:
	hs_flame_steps_free(ss);
	free(order);
	free(count);
	free(start);
	free(ids);
	return rc;
}

/* Room for index k in a pair of zeroed weight arrays of *n entries (weights and counts). */
static int reserve(double **w, double **c, uint32_t *n, uint32_t k)
{
	uint32_t cap = *n ? *n : 1024;
	double *nw, *nc;

	if (k < *n)
		return 0;
	while (cap <= k)
		cap *= 2;
	if (!(nw = realloc(*w, cap * sizeof(*nw))))
		return -ENOMEM;
	*w = nw;
	if (!(nc = realloc(*c, cap * sizeof(*nc))))
		return -ENOMEM;
	*c = nc;
	memset(nw + *n, 0, (cap - *n) * sizeof(*nw));
	memset(nc + *n, 0, (cap - *n) * sizeof(*nc));
	*n = cap;
	return 0;
}

int hs_flame_weights(struct hs_flame *fl, const struct hs_alloctab *t, struct hs_filter *f, struct hs_stacks *st,
		     enum hs_flame_weight weight, uint64_t at_ns, int down)
{
	uint32_t last_stack = UINT32_MAX, last_k = 0;
	int rc = 0, all = hs_filter_passes_all(f);

	memset(fl, 0, sizeof(*fl));
	fl->weight = weight;
	fl->down = down;
	fl->at_ns = at_ns == HS_AT_PEAK ? t->peak_ns : at_ns;
	for (uint64_t i = 0; i < t->n; i++) {
		const struct hs_alloc *a = hs_alloctab_at(t, i);
		uint64_t size;
		uint32_t k;
		double w, c;

		if (!all && !hs_filter_match(f, t, a, i))
			continue;
		if (weight == HS_WEIGHT_LEAKED && !hs_alloc_leaked(a))
			continue;
		if (weight == HS_WEIGHT_LIVE && !hs_alloc_live_at(a, at_ns))
			continue;
		size = hs_alloc_size(a);
		w = c = t->sample_bytes ? hs_alloctab_weight(t, size) : 1.0;
		if (weight != HS_WEIGHT_COUNT)
			w *= (double)size;
		if (a->stack != last_stack) {
			last_stack = a->stack;
			last_k = hs_stacks_folded(st, a->stack);
		}
		k = last_k;
		if ((rc = reserve(&fl->w, &fl->c, &fl->nw, k)) < 0)
			goto out;
		fl->w[k] += w;
		fl->c[k] += c;
		fl->total += w;
		fl->count += c;
	}
out:
	return rc;
}

int hs_flame_build(struct hs_flame *fl, const struct hs_alloctab *t, struct hs_filter *f, struct hs_stacks *st,
		   enum hs_flame_weight weight, uint64_t at_ns, int down)
{
	int rc = hs_flame_weights(fl, t, f, st, weight, at_ns, down);

	return rc < 0 ? rc : tree(fl, st, 0);
}

int hs_flame_tree(struct hs_flame *fl, struct hs_stacks *st, double keep)
{
	return tree(fl, st, keep);
}

/* Streaming: weights per stack id as the fates come (stacks are known only after the pass), folded at the end. */
struct hs_flame_stream {
	struct hs_filter *f;
	struct hs_alloctab t;   /* end_ns and sample_bytes, for the filter and the weights */
	int all;
	enum hs_flame_weight weight;
	uint64_t at_ns;
	double *w, *c;          /* by stack id */
	uint32_t n;
};

int hs_flame_stream_begin(struct hs_flame_stream **out, struct hs_filter *f, uint64_t end_ns, uint64_t sample_bytes,
			  enum hs_flame_weight weight, uint64_t at_ns)
{
	struct hs_flame_stream *fs = calloc(1, sizeof(*fs));

	*out = fs;
	if (!fs)
		return -ENOMEM;
	fs->f = f;
	fs->t.end_ns = end_ns;
	fs->t.sample_bytes = sample_bytes;
	fs->weight = weight;
	fs->at_ns = at_ns;
	hs_filter_prepare_stream(f, end_ns);
	fs->all = hs_filter_passes_all(f);
	return 0;
}

static inline int flame_one(struct hs_flame_stream *fs, const struct hs_alloc *a, uint64_t seq)
{
	uint64_t size;
	double w, c;

	if (!fs->all && !hs_filter_match(fs->f, &fs->t, a, seq))
		return 0;
	if (fs->weight == HS_WEIGHT_LEAKED && !hs_alloc_leaked(a))
		return 0;
	if (fs->weight == HS_WEIGHT_LIVE && !hs_alloc_live_at(a, fs->at_ns))
		return 0;
	if (a->stack >= fs->n && reserve(&fs->w, &fs->c, &fs->n, a->stack) < 0)
		return -ENOMEM;
	size = hs_alloc_size(a);
	w = c = fs->t.sample_bytes ? hs_alloctab_weight(&fs->t, size) : 1.0;
	if (fs->weight != HS_WEIGHT_COUNT)
		w *= (double)size;
	fs->w[a->stack] += w;
	fs->c[a->stack] += c;
	return 0;
}

int hs_flame_sink(void *arg, const struct hs_fate *fates, size_t n)
{
	int rc;

	for (size_t i = 0; i < n; i++)
		if ((rc = flame_one(arg, &fates[i].a, fates[i].seq)) < 0)
			return rc;
	return 0;
}

int hs_flame_stream_weights(struct hs_flame_stream *fs, struct hs_flame *fl, const struct hs_alloctab *t,
			    struct hs_stacks *st, int down)
{
	int rc;

	memset(fl, 0, sizeof(*fl));
	fl->weight = fs->weight;
	fl->down = down;
	fl->at_ns = fs->at_ns;
	if ((rc = hs_filter_prepare(fs->f, t, st)) < 0)
		return rc;
	for (uint32_t id = 0; id < fs->n; id++) {
		uint32_t k;
		if (fs->c[id] <= 0 || (fs->f->stack_ok && !hs_filter_stack(fs->f, id)))
			continue;
		k = hs_stacks_folded(st, id);
		if ((rc = reserve(&fl->w, &fl->c, &fl->nw, k)) < 0)
			return rc;
		fl->w[k] += fs->w[id];
		fl->c[k] += fs->c[id];
		fl->total += fs->w[id];
		fl->count += fs->c[id];
	}
	return 0;
}

void hs_flame_stream_free(struct hs_flame_stream *fs)
{
	if (!fs)
		return;
	free(fs->w);
	free(fs->c);
	free(fs);
}

void hs_flame_free(struct hs_flame *fl)
{
	hs_names_free(&fl->names);
	free(fl->nodes);
	free(fl->w);
	free(fl->c);
	memset(fl, 0, sizeof(*fl));
}
