/* slotmap: the main thread churns through malloc and free while another
 * thread, whose tid is the main thread's modulo 16 (the trace format's
 * prediction slot), only maps and unmaps memory, its records interleaved
 * with the main thread's in the same chunks. Threads are started until one
 * has that tid; the others wait. Prints the program's own figures. */
#include "tp.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define PAIRS 200000
#define MAXT 64

static atomic_int stop, reported;
static atomic_int tids[MAXT];
static int main_tid;

static void *worker(void *arg)
{
    int id = (int)(long)arg, tid = (int)syscall(SYS_gettid);
    atomic_store(&tids[id], tid);
    atomic_fetch_add(&reported, 1);
    if (tid % 16 == main_tid % 16)
        while (!atomic_load(&stop)) {
            void *p = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            munmap(p, 4096);
        }
    else
        while (!atomic_load(&stop))
            usleep(1000);
    return 0;
}

__attribute__((noinline)) static void churn(void)
{
    for (int i = 0; i < PAIRS; i++) {
        void *volatile a = malloc(32);
        void *volatile b = malloc(48);
        free(b);
        free(a);
    }
}

int main(void)
{
    pthread_t th[MAXT];
    int n = 0, shared = 0;

    main_tid = (int)syscall(SYS_gettid);
    while (n < MAXT && !shared) {
        pthread_create(&th[n], 0, worker, (void *)(long)n);
        n++;
        while (atomic_load(&reported) < n)
            usleep(100);
        shared = atomic_load(&tids[n - 1]) % 16 == main_tid % 16;
    }
    usleep(20000);   /* the mapper is under way */
    churn();
    atomic_store(&stop, 1);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], 0);
    tp_out("shared=%d threads=%d pairs=%d\n", shared, n, PAIRS);
    return 0;
}
