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
	char *match;
	const struct hs_top_row *row;
};

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p;
}

/*
 * Addresses differ between runs (ASLR, rebuilds), names do not: a
 * backtrace matches by its frames' function and file:line; other
 * groupings by their display name.
 */
static char *match_string(struct hs_stacks *st, const struct hs_top_row *row)
{
	struct hs_frame fr[64];
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int n;

	if (st->by != HS_BY_BACKTRACE) {
		char name[1100];
		return strdup(hs_stacks_key_name(st, row->key, 0, name, sizeof(name)));
	}
	if (!(m = open_memstream(&buf, &len)))
		return NULL;
	n = hs_stacks_folded_frames(st, row->key, fr, 64);
	for (int j = 0; j < n; j++) {
		char unknown[300];
		if (fr[j].function)
			fprintf(m, "%s%s %s:%d", j ? "\n" : "", fr[j].function, fr[j].file ? base_name(fr[j].file) : "?", fr[j].line);
		else /* its module and the address there: the same from run to run of the same binaries */
			fprintf(m, "%s%s", j ? "\n" : "", hs_frame_name(&fr[j], unknown, sizeof(unknown)));
	}
	if (fclose(m) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int cmp_side(const void *pa, const void *pb)
{
	return strcmp(((const struct side *)pa)->match, ((const struct side *)pb)->match);
}

static int sides(struct side **out, const struct hs_top *top, struct hs_stacks *st)
{
	struct side *s = calloc(top->nrows ? top->nrows : 1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (uint32_t i = 0; i < top->nrows; i++) {
		s[i].row = &top->rows[i];
		if (!(s[i].match = match_string(st, &top->rows[i]))) {
			for (uint32_t j = 0; j < i; j++)
				free(s[j].match);
			free(s);
			return -ENOMEM;
		}
	}
	qsort(s, top->nrows, sizeof(*s), cmp_side);
	*out = s;
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
	return strcmp(a->match, b->match);
}

int hs_diff_build(struct hs_diff *d, const struct hs_top *base, struct hs_stacks *base_st, const struct hs_top *nw,
		  struct hs_stacks *new_st, enum hs_diff_sort sort)
{
	struct side *bs = NULL, *ns = NULL;
	uint32_t i = 0, j = 0, n = 0;
	int rc;

	memset(d, 0, sizeof(*d));
	d->sort = sort;
	if ((rc = sides(&bs, base, base_st)) < 0 || (rc = sides(&ns, nw, new_st)) < 0)
		goto out;
	if (!(d->rows = calloc((size_t)base->nrows + nw->nrows + 1, sizeof(*d->rows)))) {
		rc = -ENOMEM;
		goto out;
	}
	while (i < base->nrows || j < nw->nrows) {
		struct hs_diff_row *r;
		const char *m;
		int c = i >= base->nrows ? 1 : j >= nw->nrows ? -1 : strcmp(bs[i].match, ns[j].match);
		m = c <= 0 ? bs[i].match : ns[j].match;
		if (!n || strcmp(d->rows[n - 1].match, m) != 0) {
			r = &d->rows[n++];
			d->nrows = n;
			r->match = strdup(m);
			if (!r->match) {
				rc = -ENOMEM;
				goto out;
			}
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
	if (n)
		qsort(d->rows, n, sizeof(*d->rows), cmp_row);
out:
	for (uint32_t k = 0; bs && k < base->nrows; k++)
		free(bs[k].match);
	for (uint32_t k = 0; ns && k < nw->nrows; k++)
		free(ns[k].match);
	free(bs);
	free(ns);
	return rc;
}

void hs_diff_free(struct hs_diff *d)
{
	for (uint32_t k = 0; k < d->nrows; k++)
		free(d->rows[k].match);
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
		v[k].name = fl->names[fl->nodes[c].name];
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
