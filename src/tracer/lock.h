/* lock.h - the tracer's own futex lock, safe while glibc believes the process single-threaded */
#ifndef HS_LOCK_H
#define HS_LOCK_H

#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * Not a pthread mutex: glibc's pthread_mutex_lock takes a private mutex
 * with a plain store while __libc_single_threaded is set, and the tracer
 * sets it again after starting its writer thread (single.c, hs_single_keep),
 * which shares these locks with the program's thread. 0: free, 1: held,
 * 2: held with waiters (Drepper, "Futexes Are Tricky", mutex 2).
 */
struct hs_lock {
	_Atomic int v;
};

#define HS_LOCK_INIT { 0 }

static inline void hs_lock_futex(struct hs_lock *l, int op, int val)
{
	int e = errno; /* the program's errno outlives a wait */

	syscall(SYS_futex, &l->v, op, val, NULL, NULL, 0);
	errno = e;
}

static inline void hs_lock_take(struct hs_lock *l)
{
	int c = 0;

	if (atomic_compare_exchange_strong_explicit(&l->v, &c, 1, memory_order_acquire, memory_order_relaxed))
		return;
	if (c != 2)
		c = atomic_exchange_explicit(&l->v, 2, memory_order_acquire);
	while (c != 0) {
		hs_lock_futex(l, FUTEX_WAIT_PRIVATE, 2);
		c = atomic_exchange_explicit(&l->v, 2, memory_order_acquire);
	}
}

static inline void hs_lock_release(struct hs_lock *l)
{
	if (atomic_exchange_explicit(&l->v, 0, memory_order_release) == 2)
		hs_lock_futex(l, FUTEX_WAKE_PRIVATE, 1);
}

/* After fork, in the child: a holder that was another thread is gone. */
static inline void hs_lock_reset(struct hs_lock *l)
{
	atomic_store_explicit(&l->v, 0, memory_order_relaxed);
}

#endif
