/* manythreads: 400 threads at once, in 20 rounds: each allocates a block
 * (64 + its number bytes), a barrier, then each frees its neighbour's, a
 * barrier. More threads have events at once than the writer once merged in
 * one pass (256): the rest came later, frees before their allocations.
 * Then 3,000 more threads, 8 at a time, each allocating 3 blocks and
 * handing one to main, which frees it: thread states are reused.
 * Prints the program's own figures: allocs, frees, bytes; nothing leaks. */
#include "tp.h"
#include <pthread.h>
#include <stdlib.h>

#define NT 400
#define ROUNDS 20
#define SHORT 3000

static void *blocks[NT];
static pthread_barrier_t bar;

static void *worker(void *arg)
{
    long i = (long)arg;
    for (int r = 0; r < ROUNDS; r++) {
        blocks[i] = malloc(64 + (size_t)i);
        pthread_barrier_wait(&bar);
        free(blocks[(i + 1) % NT]);
        pthread_barrier_wait(&bar);
    }
    return NULL;
}

static void *short_lived(void *arg)
{
    long i = (long)arg;
    void *a = malloc(16 + (size_t)(i % 100)), *b = malloc(32), *c = malloc(48);
    free(a);
    free(b);
    return c;
}

int main(void)
{
    static pthread_t th[NT];
    long allocs = 0, bytes = 0;
    pthread_barrier_init(&bar, NULL, NT);
    for (long i = 0; i < NT; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)i) != 0) return 1;
    for (long i = 0; i < NT; i++) pthread_join(th[i], NULL);
    for (long i = 0; i < NT; i++) bytes += ROUNDS * (64 + i);
    allocs += (long)NT * ROUNDS;
    for (long i = 0; i < SHORT; i += 8) {
        for (int k = 0; k < 8; k++)
            if (pthread_create(&th[k], NULL, short_lived, (void *)(i + k)) != 0) return 1;
        for (int k = 0; k < 8; k++) {
            void *c;
            pthread_join(th[k], &c);
            free(c);
            bytes += 16 + (i + k) % 100 + 32 + 48;
        }
    }
    allocs += 3L * SHORT;
    tp_out("allocs=%ld\nfrees=%ld\nbytes=%ld\n", allocs, allocs, bytes);
    return 0;
}
