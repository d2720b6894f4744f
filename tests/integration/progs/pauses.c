/* pauses.c - bursts of allocations with sleeps between: each burst's sizes name it, so a trace shows whether its stamps followed the pauses */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tp.h"

static atomic_int done;

/*
 * A steady stream of events, fast enough (about 5 a microsecond) that the
 * tracer's writer lets runs of shared stamps start and passes every 100 us
 * to end them: bursts of 200 pairs with short sleeps between.
 */
static void *trickle(void *arg)
{
    struct timespec ts = { 0, 20000 };

    (void)arg;
    while (!atomic_load(&done)) {
        for (int i = 0; i < 200; i++) {
            void *volatile p = malloc(24);
            free(p);
        }
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20, burst = argc > 2 ? atoi(argv[2]) : 5;
    long pause_ms = argc > 3 ? atol(argv[3]) : 30;
    int busy = argc > 4 && !strcmp(argv[4], "busy");
    struct timespec ts = { pause_ms / 1000, (pause_ms % 1000) * 1000000 };
    pthread_t th;

    if (busy && pthread_create(&th, NULL, trickle, NULL) != 0)
        return 1;
    for (int r = 0; r < rounds; r++) {
        for (int b = 0; b < burst; b++) {
            void *volatile p = malloc(100000 + (size_t)r);   /* volatile: the compiler drops a malloc freed unused */
            free(p);
        }
        nanosleep(&ts, NULL);
    }
    if (busy) {
        atomic_store(&done, 1);
        pthread_join(th, NULL);
    }
    tp_out("figures: rounds %d burst %d pause %ld ms\n", rounds, burst, pause_ms);
    return 0;
}
