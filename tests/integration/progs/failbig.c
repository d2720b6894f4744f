/* failbig.c - preloaded: every allocation of FAILBIG_BYTES or more fails (aligned ones too), as when memory runs out */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

static size_t limit(void)
{
	static size_t v;
	if (!v) {
		const char *s = getenv("FAILBIG_BYTES");
		v = s ? strtoull(s, NULL, 10) : (size_t)-1;
	}
	return v;
}

void *malloc(size_t n)
{
	if (n >= limit()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total) || total >= limit()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	if (n >= limit()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, n);
}

/* the analyses' large tables ask for huge-page alignment (src/analysis/alloctab.c) */
extern void *__libc_memalign(size_t align, size_t n);

void *aligned_alloc(size_t align, size_t n)
{
	if (n >= limit()) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_memalign(align, n);
}

int posix_memalign(void **p, size_t align, size_t n)
{
	void *q;

	if (n >= limit())
		return ENOMEM;
	q = __libc_memalign(align, n);
	if (!q)
		return ENOMEM;
	*p = q;
	return 0;
}
