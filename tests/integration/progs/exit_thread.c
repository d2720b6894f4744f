/* exit_thread: main leaks malloc(4242) and starts 3 workers that allocate
 * forever (malloc(64)/free, plus one leaked malloc(32) every 100 rounds)
 * and an exiter thread that waits until every worker has done at least
 * MIN_ROUNDS rounds and then calls exit(3) while they keep allocating.
 * Known lower bounds: allocs >= 1 + 3*MIN_ROUNDS*(1+1/100),
 * leaked >= 1 + 3*MIN_ROUNDS/100 blocks.  Exit status 3. */
#include "tp.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define NW 3
#define MIN_ROUNDS 2000

static atomic_ulong rounds[NW];
static void *volatile leak_sink;

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    for (unsigned long r = 1;; r++) {
        void *p = malloc(64);
        leak_sink = p;
        free(p);
        if (r % 100 == 0) leak_sink = malloc(32);
        atomic_store(&rounds[id], r);
    }
    return NULL;
}

static void *exiter(void *arg)
{
    (void)arg;
    for (;;) {
        int ok = 1;
        for (int i = 0; i < NW; i++)
            if (atomic_load(&rounds[i]) < MIN_ROUNDS + 1) ok = 0;
        if (ok) break;
        sched_yield();
    }
    tp_out("exiting\n");
    exit(3);
}

int main(void)
{
    leak_sink = malloc(4242);
    pthread_t t[NW + 1];
    for (long i = 0; i < NW; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    pthread_create(&t[NW], NULL, exiter, NULL);
    for (int i = 0; i <= NW; i++) pthread_join(t[i], NULL);
    return 0;
}
