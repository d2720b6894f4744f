/* signals: a 250 us SIGALRM interval timer whose handler does malloc/free
 * while the main loop does malloc/free.  The handler allocates exactly
 * NSIG_ALLOCS times in total (it stops allocating after that), and the
 * main loop runs until the handler has done all of them, counting its own
 * iterations; since that count depends on timing, the program prints it:
 *   "main_iters=M" -> the program's total is
 *   allocs = M + NSIG_ALLOCS + 2 (warm-up), frees = same, no leaks,
 *   bytes = M*MAIN_SZ + NSIG_ALLOCS*SIG_SZ + MAIN_SZ + SIG_SZ.
 *
 * Native-safety: glibc malloc is not async-signal-safe.  Main and handler
 * use sizes in different tcache bins, and both bins are warmed up before
 * the timer starts, so in a native run every malloc/free here is served by
 * the (per-bin, lock-free) tcache and the two never touch the same state.
 * What remains is exactly what is being tested: the tracer's own hooks
 * being re-entered from a signal handler. */
#include "tp.h"
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>

#define NSIG_ALLOCS 40
#define MAIN_SZ 24
#define SIG_SZ 200

static volatile sig_atomic_t sig_allocs;

static void on_alarm(int sig)
{
    (void)sig;
    if (sig_allocs >= NSIG_ALLOCS) return;
    volatile char *p = malloc(SIG_SZ);
    p[0] = 1;
    free((void *)p);
    sig_allocs++;
}

int main(void)
{
    void *w = malloc(MAIN_SZ); free(w);   /* warm both tcache bins */
    w = malloc(SIG_SZ); free(w);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 250}, {0, 250}};
    setitimer(ITIMER_REAL, &it, NULL);
    unsigned long iters = 0;
    while (sig_allocs < NSIG_ALLOCS) {
        volatile char *p = malloc(MAIN_SZ);
        p[0] = 2;
        free((void *)p);
        iters++;
        /* a little work between pairs keeps the trace small; most of the
         * loop's time is still spent inside malloc/free */
        for (volatile int k = 0; k < 30; k++) {}
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    tp_out("handler_allocs=%d\n", (int)sig_allocs);
    tp_out("main_iters=%lu\n", iters);
    return 0;
}
