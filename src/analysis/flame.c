/* flame.c - folded-backtrace weights and their merge into the tree of a flame (or icicle) graph */
#define _POSIX_C_SOURCE 200809L
#include "flame.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EMPTY UINT32_MAX

const char *const hs_flame_weight_names[HS_WEIGHT_COUNT_] = { "bytes", "count", "leaked", "live" };

void hs_flame_frame_name(const struct hs_frame *fr, char *buf, size_t n)
{
	hs_stacks_frame_name(fr, HS_BY_FUNCTION, buf, n);
	/* ';' separates frames in the folded format */
	for (char *p = buf; *p; p++)
		if (*p == ';')
			*p = ':';
}

static uint32_t node_hash(uint32_t parent, uint32_t name)
{
	return (uint32_t)(((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15ull >> 32);
}

/* Keeps the map of nodes at most half full, room for one more included. */
static int grow_node_map(struct hs_flame *fl)
{
	unsigned bits = fl->node_map_bits ? fl->node_map_bits : 10;
	size_t cap, mask;
	uint32_t *m;

	while (((size_t)fl->nnodes + 1) * 2 > (size_t)1 << bits)
		bits++;
	if (fl->node_map && bits == fl->node_map_bits)
		return 0;
	cap = (size_t)1 << bits;
	mask = cap - 1;
	m = malloc(cap * sizeof(*m));
	if (!m)
		return -ENOMEM;
	memset(m, 0xff, cap * sizeof(*m));
	for (uint32_t id = 0; id < fl->nnodes; id++) {
		size_t j = node_hash(fl->nodes[id].parent, fl->nodes[id].name) & mask;
		while (m[j] != EMPTY)
			j = (j + 1) & mask;
		m[j] = id;
	}
	free(fl->node_map);
	fl->node_map = m;
	fl->node_map_bits = bits;
	return 0;
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
};

static int child(struct hs_flame *fl, uint32_t parent, const struct hs_flame_frame *fr, uint32_t *out)
{
	struct hs_flame_node *nd;
	uint32_t nm = fr->name, j;
	size_t mask;

	if (grow_node_map(fl) < 0)
		return -ENOMEM;
	mask = ((size_t)1 << fl->node_map_bits) - 1;
	j = node_hash(parent, nm) & (uint32_t)mask;
	for (; fl->node_map[j] != EMPTY; j = (j + 1) & (uint32_t)mask) {
		nd = &fl->nodes[fl->node_map[j]];
		if (nd->parent == parent && nd->name == nm) {
			if (nd->line != fr->line || (nd->file != fr->file && (!nd->file || !fr->file || strcmp(nd->file, fr->file))))
				nd->several_lines = 1;
			*out = fl->node_map[j];
			return 0;
		}
	}
	if (fl->nnodes == fl->nodes_cap) {
		uint32_t cap = fl->nodes_cap * 2;
		struct hs_flame_node *n = realloc(fl->nodes, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		fl->nodes = n;
		fl->nodes_cap = cap;
	}
	nd = &fl->nodes[fl->nnodes];
	*nd = (struct hs_flame_node){ .parent = parent, .name = nm, .file = fr->file, .line = fr->line, .inlined = fr->inlined };
	nd->next_sibling = fl->nodes[parent].first_child;
	fl->nodes[parent].first_child = fl->nnodes;
	fl->node_map[j] = fl->nnodes;
	*out = fl->nnodes++;
	return 0;
}

/* Folded id f's step, named on first use; NULL when out of memory. */
static const struct step *step_of(struct hs_names *names, struct hs_flame_steps *ss, struct hs_stacks *st, uint32_t f)
{
	struct hs_frame fr[HS_STACKS_MAX_FRAMES];
	char name[1024];
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
		hs_flame_frame_name(&fr[i], name, sizeof(name));
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

int hs_flame_line(struct hs_names *names, struct hs_flame_steps **steps, struct hs_stacks *st, uint32_t folded,
		  struct hs_flame_frame *out)
{
	int n = 0;

	if (!*steps && !(*steps = calloc(1, sizeof(**steps))))
		return -ENOMEM;
	for (uint32_t f = folded; f && n < HS_STACKS_MAX_FRAMES;) {
		const struct step *s = step_of(names, *steps, st, f);
		if (!s)
			return -ENOMEM;
		for (int i = 0; i < s->n && n < HS_STACKS_MAX_FRAMES; i++)
			out[n++] = (*steps)->v[s->first + i];
		f = s->parent;
	}
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

static int insert(struct hs_flame *fl, struct hs_flame_steps **ss, struct hs_stacks *st, uint32_t folded, double w,
		  double c)
{
	struct hs_flame_frame fr[HS_STACKS_MAX_FRAMES];
	int n = hs_flame_line(&fl->names, ss, st, folded, fr), rc;
	uint32_t node = 0, depth = 0;

	if (n < 0)
		return n;
	fl->nodes[0].weight += w;
	fl->nodes[0].count += c;
	for (int i = 0; i < n; i++) {
		const struct hs_flame_frame *f = &fr[fl->down ? i : n - 1 - i];
		if ((rc = child(fl, node, f, &node)) < 0)
			return rc;
		fl->nodes[node].weight += w;
		fl->nodes[node].count += c;
		depth++;
	}
	if (depth > fl->depth)
		fl->depth = depth;
	return 0;
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

/* The merged tree of the folded weights. */
static int tree(struct hs_flame *fl, struct hs_stacks *st)
{
	struct hs_flame_steps *ss = NULL;
	uint32_t root;
	int rc = 0;

	fl->nodes_cap = 1024;
	if (!(fl->nodes = calloc(fl->nodes_cap, sizeof(*fl->nodes))))
		return -ENOMEM;
	if ((rc = hs_names_intern(&fl->names, "all", &root)) < 0)
		return rc;
	fl->nodes[0].name = root;
	fl->nodes[0].parent = EMPTY;   /* so that no frame named "all" can merge into the root */
	fl->nnodes = 1;
	for (uint32_t k = 0; k < fl->nw; k++)
		if (fl->c[k] > 0 && (rc = insert(fl, &ss, st, k, fl->w[k], fl->c[k])) < 0)
			break;
	hs_flame_steps_free(ss);
	return rc;
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

	return rc < 0 ? rc : tree(fl, st);
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

int hs_flame_stream_finish(struct hs_flame_stream *fs, struct hs_flame *fl, const struct hs_alloctab *t,
			   struct hs_stacks *st, int down)
{
	int rc = hs_flame_stream_weights(fs, fl, t, st, down);

	return rc < 0 ? rc : tree(fl, st);
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
	free(fl->node_map);
	free(fl->nodes);
	free(fl->w);
	free(fl->c);
	memset(fl, 0, sizeof(*fl));
}
