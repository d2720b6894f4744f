/* signals.c - a signal that ends the process first has the trace flushed; the program never sees our handlers */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tracer.h"


/*
 * The signals whose default action ends the process: without a handler
 * the events of the last 100 ms (all of them, for a program that dies
 * young) would never reach the file. SIGTRAP is left to debuggers.
 */
static const int fatal[] = { SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGUSR1, SIGSEGV,
			     SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGSYS };

/* 1: our handler stands where the program has the default action, and sigaction() answers SIG_DFL */
static _Atomic int ours[NSIG];

static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);
static __sighandler_t (*real_signal)(int, __sighandler_t);

static int call_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!real_sigaction)
		real_sigaction = (__typeof__(real_sigaction))dlsym(RTLD_NEXT, "sigaction");
	if (!real_sigaction) {
		errno = ENOSYS;
		return -1;
	}
	return real_sigaction(sig, act, old);
}

static int is_fault(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	(void)uc;
	/* SA_RESETHAND has put the default action back */
	atomic_store(&ours[sig], 0);
	if ((pid_t)syscall(SYS_getpid) == hs_g.pid && atomic_load(&hs_g.state) == HS_ACTIVE)
		hs_writer_crash(sig);
	/* a fault comes again when we return, to the default action; a signal that was sent is sent again */
	if (si->si_code <= 0 || !is_fault(sig))
		syscall(SYS_tgkill, (pid_t)syscall(SYS_getpid), (pid_t)syscall(SYS_gettid), sig);
	errno = saved;
}

/* Ours: once, then the default action again (SA_RESETHAND), on the alternate stack if the thread has one. */
static void our_action(struct sigaction *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sa_sigaction = on_fatal;
	sa->sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
	/*
	 * Every other signal waits while we flush: a program's handler that
	 * siglongjmps (a timer's) left ours before it sent the signal again,
	 * and the program lived on after a SIGTERM (2 runs of 3)
	 */
	sigfillset(&sa->sa_mask);
}

void hs_signals_install(void)
{
	struct sigaction sa, old;

	our_action(&sa);
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		int s = fatal[i];
		if (atomic_load(&ours[s]) || call_sigaction(s, NULL, &old) < 0 ||
		    (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;
		atomic_store(&ours[s], 1);
		if (call_sigaction(s, &sa, NULL) < 0)
			atomic_store(&ours[s], 0);
	}
}

/* Our handler is what the kernel holds for sig: the program may have replaced it behind our back (sysv_signal, sigset). */
static int is_ours(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_fatal;
}

static int is_fatal(int sig)
{
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		if (fatal[i] == sig)
			return 1;
	return 0;
}

/*
 * A program that puts the default action back on a fatal signal (a crash
 * reporter about to re-raise, say) gets our handler in its place, which
 * flushes and then acts as the default: otherwise its crash would lose
 * the trace's last 100 ms.
 */
static int takes_default(int sig, const struct sigaction *act)
{
	return act && act->sa_handler == SIG_DFL && sig > 0 && sig < NSIG && is_fatal(sig) &&
	       atomic_load(&hs_g.state) == HS_ACTIVE && (pid_t)syscall(SYS_getpid) == hs_g.pid;
}

static void ours_as_default(struct sigaction *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sa_handler = SIG_DFL;
}

/*
 * Programs decide by what they find: CPython installs its KeyboardInterrupt
 * handler only over SIG_DFL, Rust its stack-overflow handler likewise. So
 * where our handler stands, the program is told SIG_DFL, and whatever it
 * installs replaces ours.
 */
HS_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int was_ours = sig > 0 && sig < NSIG && atomic_load(&ours[sig]);
	struct sigaction prev, sa;
	int rc;

	if (takes_default(sig, act)) {
		our_action(&sa);
		rc = call_sigaction(sig, &sa, &prev);
		if (rc == 0)
			atomic_store(&ours[sig], 1);
	} else {
		rc = call_sigaction(sig, act, &prev);
		if (rc == 0 && act)
			atomic_store(&ours[sig], 0);
	}
	if (rc == 0 && was_ours && !act && !is_ours(&prev))
		atomic_store(&ours[sig], 0); /* replaced by a call we do not see */
	if (rc == 0 && old) {
		if (was_ours && is_ours(&prev))
			ours_as_default(old);
		else
			*old = prev;
	}
	return rc;
}

HS_EXPORT __sighandler_t signal(int sig, __sighandler_t handler)
{
	struct sigaction act, prev;
	__sighandler_t was;

	if (!real_signal)
		real_signal = (__typeof__(real_signal))dlsym(RTLD_NEXT, "signal");
	if (!real_signal) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	if (takes_default(sig, &act)) {
		if (sigaction(sig, &act, &prev) < 0)
			return SIG_ERR;
		return prev.sa_handler;
	}
	if (sig <= 0 || sig >= NSIG || !atomic_load(&ours[sig]))
		return real_signal(sig, handler);
	was = real_signal(sig, handler);
	if (was == SIG_ERR)
		return SIG_ERR;
	atomic_store(&ours[sig], 0);
	return (uintptr_t)was == (uintptr_t)on_fatal ? SIG_DFL : was;
}
