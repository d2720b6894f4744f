/* util.c - helpers the tracer may call from any hook: raw syscalls, no malloc, no stdio */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tracer.h"

/*
 * Standard error as the program had it when tracing started. A program
 * may close descriptor 2 and open a file of its own there: a stop of the
 * tracer mid-run wrote its line into that file, among the program's data.
 * The line goes out only while descriptor 2 is still that file (the trace
 * says why it stopped anyway); no copy of it is kept open, which would
 * hold a daemon's pipe to its starter open.
 */
static int log_known, log_open;
static dev_t log_dev;
static ino_t log_ino;

void hs_log_init(void)
{
	struct stat st;

	log_open = fstat(2, &st) == 0;
	log_dev = log_open ? st.st_dev : 0;
	log_ino = log_open ? st.st_ino : 0;
	log_known = 1;
}

static int log_still_ours(void)
{
	struct stat st;

	if (!log_known)
		return 1; /* before tracing starts: the program has not run yet */
	return log_open && fstat(2, &st) == 0 && st.st_dev == log_dev && st.st_ino == log_ino;
}

/* One line on stderr: "heapscope: " what, then 'thing' in quotes and then (both when not NULL). */
void hs_log(const char *what, const char *thing, const char *then)
{
	char buf[512];
	size_t n = 0;

	if (!log_still_ours())
		return;
	const char *parts[] = { "heapscope: ", what, thing ? " '" : NULL, thing, thing ? "'" : NULL, then, "\n" };

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		const char *s = parts[i];
		while (s && *s && n < sizeof(buf) - 1)
			buf[n++] = *s++;
	}
	if (n == sizeof(buf) - 1)
		buf[n - 1] = '\n';
	(void)!syscall(SYS_write, 2, buf, n);
}

/* Why a call failed, for hs_log: strerror may allocate (its translations). */
const char *hs_errno_text(int e)
{
	switch (e) {
	case ENOENT: return ": no such directory";
	case EACCES:
	case EPERM: return ": permission denied";
	case EROFS: return ": read-only file system";
	case ENOSPC:
	case EDQUOT: return ": the disk is full";
	case EISDIR: return ": it is a directory";
	case ENOTDIR: return ": a part of the path is not a directory";
	case ENAMETOOLONG: return ": the name is too long";
	case EMFILE:
	case ENFILE: return ": too many open files";
	default: return "";
	}
}

/* syscall() rather than mmap(): our own mmap hook must not see the tracer's memory */
void *hs_map(size_t len)
{
	long r = syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r < 0 && r > -4096)
		return NULL;
	return (void *)r;
}

void hs_unmap(void *p, size_t len)
{
	if (p)
		syscall(SYS_munmap, p, len);
}

/*
 * Zeroes len bytes of memory that hs_map gave: the whole pages inside are
 * handed back (zero pages again at their next touch), the ends written. A
 * memset writes every page: 2,048 page faults for the stamps' table at
 * each followed fork (copies of the parent's pages) and each hs_start()
 * after hs_stop(), 30 ms on a machine whose fault costs 14 us. Under 16 KiB
 * (walk_ip and the like) a memset costs less than the call.
 */
void hs_zero(void *p, size_t len)
{
	uintptr_t lo, hi;

	if (len < (16u << 10) || hs_advise_inner(p, len, MADV_DONTNEED, &lo, &hi) < 0) {
		memset(p, 0, len);
		return;
	}
	memset(p, 0, lo - (uintptr_t)p);
	memset((void *)hi, 0, (uintptr_t)p + len - hi);
}

/*
 * Tracer code inside the program's calls opens files, scans the loader's
 * list, waits: its failures must not show in the program's errno (free()
 * must leave it alone, and a first allocation from a library whose file
 * was deleted changed it). The outermost section keeps and restores it.
 */
void hs_internal_enter(struct hs_thread *t, sigset_t *old)
{
	sigset_t all;
	int e = errno;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
	if (t) {
		if (t->internal++ == 0)
			t->saved_errno = e;
		hs_tls_hook = NULL;
	}
	errno = e;
}

void hs_internal_leave(struct hs_thread *t, const sigset_t *old)
{
	int e = errno;

	if (t && --t->internal == 0) {
		e = t->saved_errno;
		if (t == hs_tls_thread)
			hs_tls_hook = t;
	}
	pthread_sigmask(SIG_SETMASK, old, NULL);
	errno = e;
}

/* Appends src to the string in dst (cap bytes in all), cutting it short if needed. */
void hs_strlcat(char *dst, const char *src, size_t cap)
{
	size_t n = strlen(dst);

	while (*src && n + 1 < cap)
		dst[n++] = *src++;
	dst[n] = 0;
}

pid_t hs_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Programs close every descriptor or reuse numbers: the tracer keeps its own high. */
int hs_fd_move_high(int f)
{
	struct rlimit rl;
	int lo = 900, h;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 1024 && rl.rlim_cur != RLIM_INFINITY)
		lo = (int)(rl.rlim_cur > 4096 ? 4000 : rl.rlim_cur - 100);
	h = fcntl(f, F_DUPFD_CLOEXEC, lo);
	if (h < 0)
		return f;
	syscall(SYS_close, f);
	return h;
}
