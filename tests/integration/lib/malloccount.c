/* malloccount.c - preloaded after the tracer: counts the malloc, calloc and realloc calls that reach the C library, written to $MALLOCCOUNT_OUT at exit */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "countout.h"

/* glibc's own entry points: no dlsym, which itself allocates, from inside a malloc */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static atomic_ulong calls;

void *malloc(size_t n)
{
	atomic_fetch_add(&calls, 1);
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	atomic_fetch_add(&calls, 1);
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	atomic_fetch_add(&calls, 1);
	return __libc_realloc(p, n);
}

__attribute__((destructor)) static void report(void)
{
	count_write("MALLOCCOUNT_OUT", atomic_load(&calls));
}
