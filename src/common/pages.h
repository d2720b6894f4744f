/* pages.h - advice on the whole pages inside a range (wipe-on-fork, hand back), leaving errno as it was */
#ifndef HS_COMMON_PAGES_H
#define HS_COMMON_PAGES_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * madvise on the whole pages inside [p, p + len), which it leaves in
 * [*lo, *hi): 0, or -1 when no whole page is inside or the kernel
 * refuses. The tracer runs inside the program's calls: the program's
 * errno stays.
 */
static inline int hs_advise_inner(void *p, size_t len, int advice, uintptr_t *lo, uintptr_t *hi)
{
	int e = errno, rc;

	*lo = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	*hi = ((uintptr_t)p + len) & ~(uintptr_t)4095;
	if (*hi <= *lo)
		return -1;
	rc = syscall(SYS_madvise, (void *)*lo, *hi - *lo, advice) == 0 ? 0 : -1;
	errno = e;
	return rc;
}

/*
 * A forked child gets the whole pages of [p, p + len) zeroed instead of
 * shared: the parent then writes them on without copying each first
 * (a ring of 256 pages, the stamps' table, the chunk's buffers) after
 * every fork. What the pages hold is the parent's alone. Kernels before
 * 4.14 refuse it (EINVAL) and share the pages as before.
 */
static inline void hs_wipe_on_fork(void *p, size_t len)
{
#ifdef MADV_WIPEONFORK
	uintptr_t lo, hi;

	hs_advise_inner(p, len, MADV_WIPEONFORK, &lo, &hi);
#else
	(void)p;
	(void)len;
#endif
}

#endif
