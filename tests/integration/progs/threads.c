/* threads: 4 workers each do ROUNDS rounds of 3 allocations; the first is
 * freed by its own thread, the second is handed to the next worker (ring)
 * which frees it (cross-thread free), the third is kept; at the end each
 * worker leaks its last LEAK kept blocks and frees the rest.
 * pthread_create/TLS bookkeeping is libc's and shows up in the oracle
 * (valgrind) as well, so the program's own figures line only covers the
 * program's own calls. */
#include "tp.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define NT 4
#define ROUNDS 500
#define LEAK 3
#define SLOTS 64

static _Atomic(void *) mailbox[NT][SLOTS];
static void *kept[NT][ROUNDS];
static atomic_int done_count;

static void *worker(void *arg)
{
    int id = (int)(long)arg, next = (id + 1) % NT;
    unsigned long crossfree = 0;
    for (int r = 0; r < ROUNDS; r++) {
        void *a = malloc(16 + (size_t)id);          /* own free */
        void *b = malloc(32 + (size_t)id);          /* freed by neighbour */
        kept[id][r] = malloc(48 + (size_t)id);      /* kept */
        free(a);
        /* post b into the neighbour's mailbox slot; wait if full */
        int slot = r % SLOTS;
        void *expected = NULL;
        while (!atomic_compare_exchange_weak(&mailbox[next][slot], &expected, b))
            expected = NULL, sched_yield();
        /* drain our own mailbox */
        for (int s = 0; s < SLOTS; s++) {
            void *m = atomic_exchange(&mailbox[id][s], NULL);
            if (m) { free(m); crossfree++; }
        }
    }
    atomic_fetch_add(&done_count, 1);
    /* keep draining until everybody has posted everything */
    for (;;) {
        for (int s = 0; s < SLOTS; s++) {
            void *m = atomic_exchange(&mailbox[id][s], NULL);
            if (m) { free(m); crossfree++; }
        }
        if (crossfree == ROUNDS) break;
        sched_yield();
    }
    for (int r = 0; r < ROUNDS - LEAK; r++) free(kept[id][r]);
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    for (long i = 0; i < NT; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < NT; i++) pthread_join(t[i], NULL);
    unsigned long a = 0, b = 0, lb = 0;
    for (int id = 0; id < NT; id++) {
        a += 3UL * ROUNDS;
        b += (unsigned long)ROUNDS * (16 + 32 + 48 + 3 * id);
        lb += (unsigned long)LEAK * (48 + id);
    }
    TP_FIGURES(a, a - NT * LEAK, b, NT * LEAK, lb);
    return 0;
}
