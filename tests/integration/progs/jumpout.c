/* jumpout.c - a SIGUSR1 handler that siglongjmps out of wherever it lands, as code that times out a call with alarm does; the tracer raises it inside a hook under HEAPSCOPE_TEST_RAISE_AT */
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include "tp.h"

static sigjmp_buf env;
static volatile int jumps;

static void on_usr1(int sig)
{
    (void)sig;
    jumps++;
    siglongjmp(env, 1);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    struct sigaction sa;
    volatile long i = 0;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    /* the iteration jumped out of lost its block (its free never came): go on with the next */
    if (sigsetjmp(env, 1))
        i++;
    for (; i < n; i++) {
        void *volatile p = malloc(32 + (size_t)(i % 64));
        free(p);
    }
    tp_out("figures: iterations %ld jumps %d\n", n, jumps);
    return 0;
}
