/* oom.c - running out of memory deep in a pass: one policy, set by the program, so that no analysis code prints */
#include "oom.h"

#include <stdlib.h>

static hs_oom_handler handler;

void hs_oom_set_handler(hs_oom_handler fn)
{
	handler = fn;
}

void hs_oom(size_t bytes)
{
	if (handler)
		handler(bytes);
	abort();
}

void *hs_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		hs_oom(n);
	return q;
}

void *hs_xcalloc(size_t n, size_t size)
{
	void *q = calloc(n ? n : 1, size ? size : 1);

	if (!q)
		hs_oom(n * size);
	return q;
}
