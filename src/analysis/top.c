/* top.c - one pass over the allocation table summing filtered allocations per group key */
#include "top.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const hs_top_sort_names[HS_SORT_COUNT] = { "calls", "bytes", "peak", "leaked", "temporary" };

static inline void add(struct hs_top_row *row, const struct hs_alloctab *t, const struct hs_alloc *a)
{
	uint64_t size = hs_alloc_size(a);
	double w = t->sample_bytes ? hs_alloctab_weight(t, size) : 1.0, b = (double)size * w;

	hs_top_row_add(row, hs_alloc_free_time(a), hs_alloc_at_peak(a), w, b);
}

static double sort_key(const struct hs_top_row *r, enum hs_top_sort s)
{
	switch (s) {
	case HS_SORT_CALLS: return r->calls;
	case HS_SORT_PEAK: return r->peak_bytes;
	case HS_SORT_LEAKED: return r->leaked_bytes;
	case HS_SORT_TEMPORARY: return r->temporary_count;
	default: return r->bytes;
	}
}

static enum hs_top_sort cmp_sort;

/* descending by the key, then by bytes, then by key id so that row numbers are stable between runs */
static int cmp(const void *pa, const void *pb)
{
	const struct hs_top_row *a = pa, *b = pb;
	double x = sort_key(a, cmp_sort), y = sort_key(b, cmp_sort);

	if (x != y)
		return x < y ? 1 : -1;
	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	/* not the key: keys are numbered in whatever order a pass met them */
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

#define MEMO_UNKNOWN UINT32_MAX

/*
 * The row key of one stack: its group, or with a focus its caller after the
 * path. A walk up the path symbolizes the whole backtrace, so its answer is
 * kept per stack id in memo (NULL at depth 0, where stacks.c memoizes).
 */
static uint32_t row_key(struct hs_stacks *st, uint32_t stack, uint32_t focus, const uint32_t *path, int depth, uint32_t *memo)
{
	uint32_t key = hs_stacks_key(st, stack);

	if (focus == HS_STACKS_NO_KEY)
		return key;
	if (key != focus)
		return HS_STACKS_NO_KEY;
	if (!memo)
		return hs_stacks_caller_key(st, stack);
	if (stack > st->nstacks)
		stack = 0;
	if (memo[stack] == MEMO_UNKNOWN) {
		key = hs_stacks_path_caller_key(st, stack, path, depth);
		/* HS_STACKS_NO_KEY is MEMO_UNKNOWN: stored as the key one below, which no name table reaches */
		memo[stack] = key == HS_STACKS_NO_KEY ? HS_STACKS_NO_KEY - 1 : key;
	}
	return memo[stack] == HS_STACKS_NO_KEY - 1 ? HS_STACKS_NO_KEY : memo[stack];
}

int hs_top_build(struct hs_top *top, const struct hs_alloctab *t, struct hs_filter *f, struct hs_stacks *st,
		 enum hs_top_sort sort, uint32_t focus)
{
	return hs_top_build_path(top, t, f, st, sort, focus, NULL, 0);
}

int hs_top_build_path(struct hs_top *top, const struct hs_alloctab *t, struct hs_filter *f, struct hs_stacks *st,
		      enum hs_top_sort sort, uint32_t focus, const uint32_t *path, int depth)
{
	struct hs_keyed rows;
	struct hs_top_row *r = NULL;
	uint32_t last_stack = UINT32_MAX, last_key = 0, *memo = NULL;
	int rc = 0, all = hs_filter_passes_all(f);

	memset(top, 0, sizeof(*top));
	hs_keyed_init(&rows, sizeof(struct hs_top_row));
	top->focus = focus;
	top->sort = sort;
	if (depth < 0 || depth >= HS_STACKS_MAX_FRAMES || (depth > 0 && (!path || focus == HS_STACKS_NO_KEY)))
		return -EINVAL;
	if (depth > 0) {
		if (!(memo = malloc(((size_t)st->nstacks + 1) * sizeof(*memo))))
			return -ENOMEM;
		memset(memo, 0xff, ((size_t)st->nstacks + 1) * sizeof(*memo));
	}
	for (uint64_t i = 0; i < t->n; i++) {
		const struct hs_alloc *a = hs_alloctab_at(t, i);

		if (!all && !hs_filter_match(f, t, a, i))
			continue;
		/* neighbours in the table often share a backtrace (and a new row moves the others only then) */
		if (a->stack != last_stack) {
			last_stack = a->stack;
			last_key = row_key(st, a->stack, focus, path, depth, memo);
			if (last_key != HS_STACKS_NO_KEY && !(r = hs_top_row_of(&rows, last_key))) {
				rc = -ENOMEM;
				goto out;
			}
		}
		if (last_key == HS_STACKS_NO_KEY)
			continue;
		if (r->calls == 0) {
			r->stack = a->stack;
			r->first = i;
		}
		add(r, t, a);
		top->records++;
	}
	hs_top_from_rows(top, &rows, sort, top->records);
out:
	free(memo);
	hs_keyed_free(&rows);
	return rc;
}

void hs_top_from_rows(struct hs_top *top, struct hs_keyed *keyed, enum hs_top_sort sort, uint64_t records)
{
	uint32_t n = 0, cap;
	struct hs_top_row *rows = hs_keyed_take(keyed, &cap);

	top->sort = sort;
	top->records = records;
	memset(&top->total, 0, sizeof(top->total));
	for (uint32_t k = 0; k < cap; k++) {
		struct hs_top_row *r = &rows[k];
		if (r->calls <= 0)
			continue;
		top->total.calls += r->calls;
		top->total.bytes += r->bytes;
		top->total.peak_bytes += r->peak_bytes;
		top->total.leaked_count += r->leaked_count;
		top->total.leaked_bytes += r->leaked_bytes;
		top->total.temporary_count += r->temporary_count;
		top->total.temporary_bytes += r->temporary_bytes;
		rows[n++] = *r;
	}
	cmp_sort = sort;
	if (n)
		qsort(rows, n, sizeof(*rows), cmp);
	top->rows = rows;
	top->nrows = n;
}

void hs_top_free(struct hs_top *top)
{
	free(top->rows);
	memset(top, 0, sizeof(*top));
}
