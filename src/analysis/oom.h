/* oom.h - what an analysis pass does when memory runs out where it cannot return an error: the program's handler */
#ifndef HS_ANALYSIS_OOM_H
#define HS_ANALYSIS_OOM_H

#include <stddef.h>

/*
 * Called with the size of the request that failed; must not return (the
 * CLI's prints what to do and exits). Without one, abort().
 */
typedef void (*hs_oom_handler)(size_t bytes);
void hs_oom_set_handler(hs_oom_handler fn);

__attribute__((noreturn)) void hs_oom(size_t bytes);

/* realloc and calloc that never return NULL: hs_oom() instead */
void *hs_xrealloc(void *p, size_t n);
void *hs_xcalloc(size_t n, size_t size);

#endif
