/* single.c - a program whose only other thread is our writer keeps glibc's single-threaded fast paths */
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/types.h>
#include <unistd.h>

#include "tracer.h"

#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define HAVE_SINGLE_THREADED 1
#endif
#endif

/*
 * pthread_create clears __libc_single_threaded for good, and with it glibc
 * stops taking its fast paths: malloc takes the arena lock with an atomic
 * instruction (python3 ran 7% slower beside an idle thread), and a signal
 * handler that allocates while its thread is in malloc waits on that lock
 * for ever, where the untraced program ran on. Our writer never calls
 * malloc, stdio or the loader while the flag is set again (it leaves the
 * module poll to the program's thread, and the tracer's locks are its own,
 * lock.h), so for glibc the program is what it was: single-threaded. The
 * program's first pthread_create clears the flag again. The setxid calls
 * clear it for good first, so that glibc carries the change of identity
 * to our thread too instead of leaving it with the old one.
 */
static _Atomic int kept;
/*
 * The flag where glibc reads it, and where other modules do: a program
 * that reads it gets a copy of its own (a copy relocation), which
 * pthread_create clears only while glibc's own is set. Set in ours alone,
 * the program went on reading 1 beside its own threads.
 */
static char *flag_libc, *flag_pub;

void hs_single_init(void)
{
#ifdef HAVE_SINGLE_THREADED
	void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	flag_pub = &__libc_single_threaded;
	flag_libc = h ? dlsym(h, "__libc_single_threaded") : NULL;
	if (h)
		dlclose(h);
#endif
}

int hs_single_before_start(void)
{
	return flag_libc && flag_pub && *flag_libc && *flag_pub;
}

/* After the writer started beside a program that had no thread of its own (hs_single_before_start). */
void hs_single_keep(void)
{
	if (!hs_g.cfg.no_single && flag_libc) {
		atomic_store(&kept, 1);
		*flag_libc = 1;
		*flag_pub = 1;
	}
}

int hs_single_kept(void)
{
	return atomic_load_explicit(&kept, memory_order_relaxed) && *(volatile char *)flag_libc;
}

static void whole_process(void)
{
	if (atomic_exchange(&kept, 0)) {
		*flag_libc = 0;
		*flag_pub = 0;
	}
}

/* Declares real, the next definition of name, looked up once; ENOSYS without one. */
#define NEXT(name, params)                                                \
	static int (*real) params;                                        \
	if (!real)                                                        \
		real = (int (*) params)dlsym(RTLD_NEXT, #name);           \
	if (!real) {                                                      \
		errno = ENOSYS;                                           \
		return -1;                                                \
	}

#define SETXID(name, params, args)                                        \
	__attribute__((visibility("default"))) int name params            \
	{                                                                 \
		whole_process();                                          \
		NEXT(name, params)                                        \
		return real args;                                         \
	}

SETXID(setuid, (uid_t a), (a))
SETXID(setgid, (gid_t a), (a))
SETXID(seteuid, (uid_t a), (a))
SETXID(setegid, (gid_t a), (a))
SETXID(setreuid, (uid_t a, uid_t b), (a, b))
SETXID(setregid, (gid_t a, gid_t b), (a, b))
SETXID(setresuid, (uid_t a, uid_t b, uid_t c), (a, b, c))
SETXID(setresgid, (gid_t a, gid_t b, gid_t c), (a, b, c))
SETXID(setgroups, (size_t n, const gid_t *g), (n, g))
SETXID(initgroups, (const char *u, gid_t g), (u, g))

/*
 * The kernel lets only a single-threaded process enter a new user
 * namespace (unshare, setns): with our writer beside it, a program that
 * sandboxes itself so (bubblewrap, a browser's sandbox) got EINVAL where
 * it ran untraced. The writer steps out for the call and comes back; the
 * events recorded meanwhile wait in the rings.
 */
static int writer_in_the_way(int flags)
{
	return (flags & CLONE_NEWUSER) && hs_g.writer_running && hs_single_kept() &&
	       atomic_load(&hs_g.state) == HS_ACTIVE && getpid() == hs_g.pid;
}

#define NAMESPACE(name, params, args, flags)                                      \
	__attribute__((visibility("default"))) int name params                    \
	{                                                                         \
		int rc, err, away;                                                \
		NEXT(name, params)                                                \
		if ((away = writer_in_the_way(flags)))                            \
			hs_writer_stop();                                         \
		rc = real args;                                                   \
		err = errno;                                                      \
		if (away)                                                         \
			hs_ensure_writer();                                       \
		errno = err;                                                      \
		return rc;                                                        \
	}

NAMESPACE(unshare, (int f), (f), f)
NAMESPACE(setns, (int fd, int t), (fd, t), t == 0 ? CLONE_NEWUSER : t)
