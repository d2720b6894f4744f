/* top.h - allocations that pass a filter, summed per group (site, function, line, library) or per caller of one group */
#ifndef HS_ANALYSIS_TOP_H
#define HS_ANALYSIS_TOP_H

#include <stdint.h>

#include "alloctab.h"
#include "keyed.h"
#include "filter.h"
#include "stacks.h"

enum hs_top_sort { HS_SORT_CALLS, HS_SORT_BYTES, HS_SORT_PEAK, HS_SORT_LEAKED, HS_SORT_TEMPORARY, HS_SORT_COUNT };

/* Figures are unbiased estimates in sampled mode. */
struct hs_top_row {
	uint32_t key;             /* hs_stacks key (or caller key) */
	uint32_t stack;           /* the stack of the group's first allocation, for its backtrace */
	uint64_t first;           /* that allocation's sequence number: ties sort by it */
	double calls, bytes;
	double peak_bytes;        /* live at the moment of peak heap */
	double leaked_count, leaked_bytes;
	double temporary_count, temporary_bytes;   /* freed before the end */
};

struct hs_top {
	struct hs_top_row *rows;  /* sorted, rows with no allocation dropped */
	uint32_t nrows;
	struct hs_top_row total;
	uint64_t records;         /* recorded allocations summed (differs from total.calls when sampled) */
	uint32_t focus;           /* HS_STACKS_NO_KEY, or the key whose callers the rows are */
	enum hs_top_sort sort;
};

extern const char *const hs_top_sort_names[HS_SORT_COUNT];

/* One allocation (free time t1; live at the peak or not; weight w; w * size bytes b) into a row. */
static inline void hs_top_row_add(struct hs_top_row *row, uint64_t t1, int at_peak, double w, double b)
{
	row->calls += w;
	row->bytes += b;
	if (at_peak)
		row->peak_bytes += b;
	if (t1 == HS_ALLOC_NEVER) {
		row->leaked_count += w;
		row->leaked_bytes += b;
	} else {
		row->temporary_count += w;
		row->temporary_bytes += b;
	}
}

/*
 * Sums the filtered allocations per hs_stacks_key(). With focus !=
 * HS_STACKS_NO_KEY, only the allocations of that group count, summed per
 * hs_stacks_caller_key() instead.
 */
int hs_top_build(struct hs_top *top, const struct hs_alloctab *t, struct hs_filter *f, struct hs_stacks *st,
		 enum hs_top_sort sort, uint32_t focus);
/*
 * One level further up the callers per path entry: only the allocations of
 * group focus whose site's callers, outward, are path[0 .. depth-1] (keys
 * of hs_stacks_caller_keys) count, summed per the key of the caller that
 * follows. depth 0 is hs_top_build with that focus; a stack that ends with
 * the path counts as "(no caller: outermost frame)".
 */
int hs_top_build_path(struct hs_top *top, const struct hs_alloctab *t, struct hs_filter *f, struct hs_stacks *st,
		      enum hs_top_sort sort, uint32_t focus, const uint32_t *path, int depth);
void hs_top_free(struct hs_top *top);

/* rows: hs_keyed of struct hs_top_row. The row of key, zeroed but for its key when new; NULL: out of memory. */
static inline struct hs_top_row *hs_top_row_of(struct hs_keyed *rows, uint32_t key)
{
	int fresh;
	struct hs_top_row *r = hs_keyed_at(rows, key, &fresh);

	if (r && fresh)
		r->key = key;
	return r;
}
/*
 * The rows of a pass summed elsewhere (rows with no call dropped): totals
 * and order as hs_top_build gives them. Takes the rows over.
 */
void hs_top_from_rows(struct hs_top *top, struct hs_keyed *rows, enum hs_top_sort sort, uint64_t records);

#endif
