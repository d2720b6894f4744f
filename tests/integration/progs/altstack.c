/* altstack SIZE: a SIGUSR1 handler on an alternate signal stack of SIZE
 * bytes allocates and frees 100 B, 100 times. Untraced, 8 KiB is enough;
 * the tracer's backtrace (libunwind's walk off the thread's stack) once
 * overflowed it. Prints the handler's count. */
#include "tp.h"
#include <signal.h>
#include <stdlib.h>

static volatile sig_atomic_t got;

__attribute__((noinline)) static void handler(int s)
{
    (void)s;
    void *p = malloc(100);
    free(p);
    got++;
}

int main(int argc, char **argv)
{
    size_t sz = argc > 1 ? (size_t)atol(argv[1]) : 8192;
    static char altstack[1 << 20];
    stack_t ss = { .ss_sp = altstack, .ss_size = sz, .ss_flags = 0 };
    struct sigaction sa;
    if (sz > sizeof(altstack) || sigaltstack(&ss, NULL))
        return 2;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    for (int i = 0; i < 100; i++)
        raise(SIGUSR1);
    tp_out("handled=%d\n", (int)got);
    return 0;
}
