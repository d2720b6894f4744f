/* top.h - allocations that pass a filter, summed per group (site, function, line, library) or per caller of one group */
#ifndef HS_ANALYSIS_TOP_H
#define HS_ANALYSIS_TOP_H

#include <stdint.h>

#include "alloctab.h"
#include "filter.h"
#include "stacks.h"

enum hs_top_sort { HS_SORT_CALLS, HS_SORT_BYTES, HS_SORT_PEAK, HS_SORT_LEAKED, HS_SORT_TEMPORARY, HS_SORT_COUNT };

/* Figures are unbiased estimates in sampled mode. */
struct hs_top_row {
	uint32_t key;             /* hs_stacks key (or caller key) */
	uint32_t stack;           /* one stack of the group, for its backtrace */
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

#endif
