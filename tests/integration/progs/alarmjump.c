/* alarmjump.c - spins while a 200 us SIGALRM handler siglongjmps back to the loop (it allocates once, so that there is something to trace); a SIGTERM must end it as it would untraced */
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>
#include "tp.h"

static sigjmp_buf env;

static void on_alarm(int sig)
{
    (void)sig;
    siglongjmp(env, 1);
}

int main(void)
{
    struct sigaction sa;
    struct itimerval it = { { 0, 200 }, { 0, 200 } };
    void *volatile p = malloc(100);
    volatile unsigned long spin = 0;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    /*
     * The place to jump back to is set before the timer starts: set after
     * it, a first alarm that came before it (the traced program's first
     * output takes longer than 200 us) jumped to an empty buffer (1 run in
     * 30-60 crashed, traced by this build as by 191b08e)
     */
    if (sigsetjmp(env, 1) == 0) {
        tp_out("figures: spinning\n");
        setitimer(ITIMER_REAL, &it, NULL);
    }
    for (;;)
        spin++;
    free(p);
    return 0;
}
