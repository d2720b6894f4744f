/* sigcount.c - preloaded before the tracer: counts pthread_sigmask calls and writes the count to $SIGCOUNT_OUT at exit */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "countout.h"

static int (*real_sigmask)(int, const sigset_t *, sigset_t *);
static atomic_ulong calls;

/* Resolved before main: the tracer's first call may come from inside a malloc, where dlsym must not run. */
__attribute__((constructor)) static void resolve(void)
{
	real_sigmask = (int (*)(int, const sigset_t *, sigset_t *))dlsym(RTLD_NEXT, "pthread_sigmask");
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	atomic_fetch_add(&calls, 1);
	/* before the constructor (another preload's constructor ran first): the system call itself */
	if (!real_sigmask)
		return syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8) ? errno : 0;
	return real_sigmask(how, set, old);
}

__attribute__((destructor)) static void report(void)
{
	count_write("SIGCOUNT_OUT", atomic_load(&calls));
}
