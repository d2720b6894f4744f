/* crasher.c - dies by a signal after allocating a known amount: the trace must hold it all */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 1000

static void say(const char *s)
{
	(void)!write(1, s, strlen(s));
}

static void on_term(int sig)
{
	(void)sig;
}

/* a crash reporter: says so, puts the default action back and re-raises */
static void on_segv(int sig)
{
	say("reporter\n");
	signal(sig, SIG_DFL);
	raise(sig);
}

extern __sighandler_t sysv_signal(int sig, __sighandler_t handler);

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "segv";
	static void *keep[N];
	struct sigaction old;

	for (int i = 0; i < N; i++)
		keep[i] = malloc(64);
	say("figures: 1000 0 64000 1000 64000\n");
	if (!strcmp(mode, "segv"))
		*(volatile int *)keep[0] = *(volatile int *)(uintptr_t)8;
	if (!strcmp(mode, "abort"))
		abort();
	if (!strcmp(mode, "term")) {
		kill(getpid(), SIGTERM);
		pause();
	}
	if (!strcmp(mode, "reraise")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_segv;
		sigaction(SIGSEGV, &sa, NULL);
		*(volatile int *)keep[0] = *(volatile int *)(uintptr_t)8;
	}
	if (!strcmp(mode, "query")) {
		/* a handler set where we cannot see it is the one the program is told of */
		sysv_signal(SIGHUP, on_term);
		sigaction(SIGHUP, NULL, &old);
		say(old.sa_handler == on_term ? "sysv=own" : "sysv=other");
		/* the default put back is the default the program finds */
		signal(SIGUSR1, on_term);
		signal(SIGUSR1, SIG_DFL);
		sigaction(SIGUSR1, NULL, &old);
		say(old.sa_handler == SIG_DFL && !(old.sa_flags & SA_SIGINFO) ? " usr1=dfl " : " usr1=other ");
		/* what the program finds must be what it would find untraced */
		sigaction(SIGINT, NULL, &old);
		say(old.sa_handler == SIG_DFL && !(old.sa_flags & SA_SIGINFO) ? "sigint=dfl" : "sigint=other");
		say(signal(SIGTERM, on_term) == SIG_DFL ? " sigterm-prev=dfl" : " sigterm-prev=other");
		/* now the program's own handler runs, not ours */
		raise(SIGTERM);
		say(" survived\n");
	}
	return 0;
}
