/* diff.c - matching two traces' groups by name: both sides sorted by their match string, then merged */
#define _POSIX_C_SOURCE 200809L
#include "diff.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const hs_diff_sort_names[HS_DIFF_SORTS] = { "change", "bytes", "peak", "leaked", "calls" };

struct side {
	uint32_t key, n;          /* its match: n frame ids from d->ids[key] */
	const struct hs_top_row *row;
};

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p;
}

/* The id of a frame's text, the same on both sides; UINT32_MAX out of memory. */
static uint32_t intern(struct hs_diff *d, const char *text)
{
	uint32_t id;

	return hs_names_intern(&d->names, text, &id) < 0 ? UINT32_MAX : id;
}

static int push_id(struct hs_diff *d, uint32_t id)
{
	if (id == UINT32_MAX)
		return -ENOMEM;
	if (d->nids == d->ids_cap) {
		size_t cap = d->ids_cap ? d->ids_cap * 2 : 4096;
		uint32_t *v = realloc(d->ids, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		d->ids = v;
		d->ids_cap = cap;
	}
	d->ids[d->nids++] = id;
	return 0;
}

/*
 * Addresses differ between runs (ASLR, rebuilds), names do not: a
 * backtrace matches by its frames' function and file:line; other
 * groupings by their display name. Each frame's text is kept once, for
 * both traces: a C++ program's backtraces spelt out whole took 3.5 KB a
 * site (clang's trace: 540 MB to diff with itself).
 */
/* A frame as diff matches it: function and file:line, else its module and the address there (the same run to run) */
static void match_name(const struct hs_frame *fr, char *buf, size_t n)
{
	if (fr->function)
		snprintf(buf, n, "%s %s:%d", fr->function, fr->file ? base_name(fr->file) : "?", fr->line);
	else
		hs_frame_name(fr, buf, n);
}

/*
 * Row's match into d->ids. The frames come named per step of the folded
 * tree (steps), each once: clang's 60,000 rows of 50 frames, each frame's
 * text made and looked up again, were two thirds of a diff.
 */
static int match_of(struct hs_diff *d, struct hs_stacks *st, struct hs_flame_steps **steps,
		    const struct hs_top_row *row, struct side *sd)
{
	struct hs_flame_frame fr[HS_STACKS_MAX_FRAMES];
	char text[HS_FRAME_NAME_MAX];
	int n, rc = 0;

	sd->row = row;
	sd->key = (uint32_t)d->nids;
	if (st->by != HS_BY_BACKTRACE) {
		sd->n = 1;
		return push_id(d, intern(d, hs_stacks_key_name(st, row->key, 0, text, sizeof(text))));
	}
	if ((n = hs_flame_steps_line(&d->names, steps, st, row->key, fr, match_name, sizeof(text))) < 0)
		return n;
	if (n > 64)
		n = 64;
	for (int j = 0; j < n && rc == 0; j++)
		rc = push_id(d, fr[j].name);
	sd->n = (uint32_t)n;
	return rc;
}

/*
 * As strcmp would order the frames' texts joined by newlines, below every
 * character of a name: frame by frame, a shorter match first.
 */
static int cmp_match(const struct hs_diff *d, uint32_t ka, uint32_t na, uint32_t kb, uint32_t nb)
{
	for (uint32_t i = 0; i < na && i < nb; i++) {
		uint32_t a = d->ids[ka + i], b = d->ids[kb + i];
		if (a != b)
			return strcmp(hs_names_str(&d->names, a), hs_names_str(&d->names, b));
	}
	return na < nb ? -1 : na > nb;
}

static const struct hs_diff *sorting;   /* qsort's comparators have no argument of their own */

static int cmp_side(const void *pa, const void *pb)
{
	const struct side *a = pa, *b = pb;

	return cmp_match(sorting, a->key, a->n, b->key, b->n);
}

static int sides(struct hs_diff *d, struct side **out, const struct hs_top *top, struct hs_stacks *st)
{
	struct side *s = calloc(top->nrows ? top->nrows : 1, sizeof(*s));
	struct hs_flame_steps *steps = NULL;   /* this trace's: its folded ids */
	int rc = 0;

	*out = s;
	if (!s)
		return -ENOMEM;
	for (uint32_t i = 0; i < top->nrows && rc == 0; i++)
		rc = match_of(d, st, &steps, &top->rows[i], &s[i]);
	hs_flame_steps_free(steps);
	if (rc < 0)
		return rc;
	sorting = d;
	qsort(s, top->nrows, sizeof(*s), cmp_side);
	return 0;
}

static void add(struct hs_top_row *to, const struct hs_top_row *r)
{
	to->calls += r->calls;
	to->bytes += r->bytes;
	to->peak_bytes += r->peak_bytes;
	to->leaked_count += r->leaked_count;
	to->leaked_bytes += r->leaked_bytes;
	to->temporary_count += r->temporary_count;
	to->temporary_bytes += r->temporary_bytes;
}

static double score(const struct hs_diff_row *r, enum hs_diff_sort s)
{
	double b = r->new.bytes - r->base.bytes, p = r->new.peak_bytes - r->base.peak_bytes;
	double l = r->new.leaked_bytes - r->base.leaked_bytes;

	switch (s) {
	case HS_DIFF_BYTES: return b;
	case HS_DIFF_PEAK: return p;
	case HS_DIFF_LEAKED: return l;
	case HS_DIFF_CALLS: return r->new.calls - r->base.calls;
	default:
		/* the largest of the three changes, with its sign */
		if (fabs(b) >= fabs(p) && fabs(b) >= fabs(l))
			return b;
		return fabs(p) >= fabs(l) ? p : l;
	}
}

static int cmp_row(const void *pa, const void *pb)
{
	const struct hs_diff_row *a = pa, *b = pb;

	if (fabs(a->score) != fabs(b->score))
		return fabs(a->score) < fabs(b->score) ? 1 : -1;
	if (a->changed != b->changed)
		return b->changed - a->changed;
	return cmp_match(sorting, a->match, a->match_n, b->match, b->match_n);
}

int hs_diff_build(struct hs_diff *d, const struct hs_top *base, struct hs_stacks *base_st, const struct hs_top *nw,
		  struct hs_stacks *new_st, enum hs_diff_sort sort)
{
	struct side *bs = NULL, *ns = NULL;
	uint32_t i = 0, j = 0, n = 0;
	int rc;

	memset(d, 0, sizeof(*d));
	d->sort = sort;
	if ((rc = sides(d, &bs, base, base_st)) < 0 || (rc = sides(d, &ns, nw, new_st)) < 0)
		goto out;
	if (!(d->rows = calloc((size_t)base->nrows + nw->nrows + 1, sizeof(*d->rows)))) {
		rc = -ENOMEM;
		goto out;
	}
	while (i < base->nrows || j < nw->nrows) {
		struct hs_diff_row *r;
		int c = i >= base->nrows ? 1
			: j >= nw->nrows ? -1
					 : cmp_match(d, bs[i].key, bs[i].n, ns[j].key, ns[j].n);
		const struct side *m = c <= 0 ? &bs[i] : &ns[j];

		if (!n || cmp_match(d, d->rows[n - 1].match, d->rows[n - 1].match_n, m->key, m->n) != 0) {
			r = &d->rows[n++];
			d->nrows = n;
			r->match = m->key;
			r->match_n = m->n;
		}
		r = &d->rows[n - 1];
		if (c <= 0) {
			if (!r->in_base)
				r->base_key = bs[i].row->key;
			r->in_base = 1;
			add(&r->base, bs[i++].row);
		}
		if (c >= 0) {
			if (!r->in_new)
				r->new_key = ns[j].row->key;
			r->in_new = 1;
			add(&r->new, ns[j++].row);
		}
	}
	d->nrows = n;
	for (uint32_t k = 0; k < n; k++) {
		struct hs_diff_row *r = &d->rows[k];
		r->score = score(r, sort);
		r->changed = r->base.calls != r->new.calls || r->base.bytes != r->new.bytes ||
			     r->base.peak_bytes != r->new.peak_bytes || r->base.leaked_bytes != r->new.leaked_bytes ||
			     r->in_base != r->in_new;
		d->nchanged += (uint32_t)r->changed;
	}
	sorting = d;
	if (n)
		qsort(d->rows, n, sizeof(*d->rows), cmp_row);
out:
	free(bs);
	free(ns);
	return rc;
}

void hs_diff_free(struct hs_diff *d)
{
	hs_names_free(&d->names);
	free(d->ids);
	free(d->rows);
	memset(d, 0, sizeof(*d));
}

/* The children of one flame node, sorted by frame name, for the merge. */
struct named {
	const char *name;
	uint32_t id;
};

static int cmp_named(const void *pa, const void *pb)
{
	return strcmp(((const struct named *)pa)->name, ((const struct named *)pb)->name);
}

static int children(const struct hs_flame *fl, uint32_t id, struct named **out, uint32_t *n)
{
	uint32_t k = 0, cap = 0;
	struct named *v = NULL;

	*out = NULL;
	*n = 0;
	if (id == HS_DIFF_NONE)
		return 0;
	for (uint32_t c = fl->nodes[id].first_child; c; c = fl->nodes[c].next_sibling)
		cap++;
	if (!cap)
		return 0;
	if (!(v = malloc(cap * sizeof(*v))))
		return -ENOMEM;
	for (uint32_t c = fl->nodes[id].first_child; c; c = fl->nodes[c].next_sibling) {
		v[k].name = hs_names_str(&fl->names, fl->nodes[c].name);
		v[k++].id = c;
	}
	qsort(v, k, sizeof(*v), cmp_named);
	*out = v;
	*n = k;
	return 0;
}

static int add_pair(struct hs_diff_flame *d, uint32_t parent, uint32_t b, uint32_t n, uint32_t *out)
{
	struct hs_diff_flame_node *nd;

	if (d->nnodes == d->cap) {
		uint32_t cap = d->cap ? d->cap * 2 : 1024;
		if (!(nd = realloc(d->nodes, cap * sizeof(*nd))))
			return -ENOMEM;
		d->nodes = nd;
		d->cap = cap;
	}
	nd = &d->nodes[d->nnodes];
	*nd = (struct hs_diff_flame_node){ .base = b, .new = n };
	if (d->nnodes) {
		nd->next_sibling = d->nodes[parent].first_child;
		d->nodes[parent].first_child = d->nnodes;
	}
	*out = d->nnodes++;
	return 0;
}

/* Depth-first: the recursion is as deep as the deepest backtrace (HS_STACKS_MAX_FRAMES at most). */
static int merge_children(struct hs_diff_flame *d, const struct hs_flame *base, const struct hs_flame *nw, uint32_t at)
{
	struct named *bc = NULL, *nc = NULL;
	uint32_t nb = 0, nn = 0, i = 0, j = 0, id;
	int rc;

	if ((rc = children(base, d->nodes[at].base, &bc, &nb)) < 0 || (rc = children(nw, d->nodes[at].new, &nc, &nn)) < 0)
		goto out;
	while (i < nb || j < nn) {
		int c = i >= nb ? 1 : j >= nn ? -1 : strcmp(bc[i].name, nc[j].name);
		uint32_t b = c <= 0 ? bc[i++].id : HS_DIFF_NONE, n = c >= 0 ? nc[j++].id : HS_DIFF_NONE;
		if ((rc = add_pair(d, at, b, n, &id)) < 0 || (rc = merge_children(d, base, nw, id)) < 0)
			goto out;
	}
out:
	free(bc);
	free(nc);
	return rc;
}

int hs_diff_flame_build(struct hs_diff_flame *d, const struct hs_flame *base, const struct hs_flame *nw)
{
	uint32_t root;
	int rc;

	memset(d, 0, sizeof(*d));
	if ((rc = add_pair(d, 0, base->nnodes ? 0 : HS_DIFF_NONE, nw->nnodes ? 0 : HS_DIFF_NONE, &root)) < 0)
		return rc;
	return merge_children(d, base, nw, root);
}

void hs_diff_flame_free(struct hs_diff_flame *d)
{
	free(d->nodes);
	memset(d, 0, sizeof(*d));
}
