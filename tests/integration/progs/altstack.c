/* altstack SIZE [timer]: a signal handler on an alternate signal stack of
 * SIZE bytes allocates and frees 100 B, 100 times: raised by the program
 * itself, or with "timer" from a 100 us interval timer while the main loop
 * allocates, so that it often interrupts the tracer's own walk of the main
 * loop's stack. Untraced, 8 KiB is enough; the tracer's backtrace
 * (libunwind's walk off the thread's stack) once overflowed it. Prints the
 * handler's count. */
#include "tp.h"
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>

#define HANDLED 100

static volatile sig_atomic_t got;

__attribute__((noinline)) static void handler(int s)
{
    (void)s;
    if (got >= HANDLED)
        return;
    void *p = malloc(100);
    free(p);
    got++;
}

__attribute__((noinline)) static void churn(int depth)
{
    if (depth > 0) {
        churn(depth - 1);
        return;
    }
    free(malloc(40));
}

int main(int argc, char **argv)
{
    size_t sz = argc > 1 ? (size_t)atol(argv[1]) : 8192;
    int timer = argc > 2 && !strcmp(argv[2], "timer");
    static char altstack[1 << 20];
    stack_t ss = { .ss_sp = altstack, .ss_size = sz, .ss_flags = 0 };
    struct sigaction sa;
    if (sz > sizeof(altstack) || sigaltstack(&ss, NULL))
        return 2;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_ONSTACK | SA_RESTART;
    sigaction(timer ? SIGALRM : SIGUSR1, &sa, NULL);
    if (timer) {
        struct itimerval it = { { 0, 100 }, { 0, 100 } };
        void *w = malloc(100); /* the handler's size class, warm before the timer */
        free(w);
        setitimer(ITIMER_REAL, &it, NULL);
        while (got < HANDLED)
            churn(got % 20);
        struct itimerval off = { { 0, 0 }, { 0, 0 } };
        setitimer(ITIMER_REAL, &off, NULL);
    } else {
        for (int i = 0; i < HANDLED; i++)
            raise(SIGUSR1);
    }
    tp_out("handled=%d\n", (int)got);
    return 0;
}
