/* floor.c - the least any LD_PRELOAD tracer costs: the malloc family forwarded, and with -DWITH_THREAD an idle thread too.
 *
 * The forwarding interposer adds a call and an indirect jump to every
 * malloc and free. A tracer's own thread (a writer, heaptrack's and ours)
 * makes the process multi-threaded for glibc, whose malloc then takes its
 * arena lock with an atomic instruction wherever the thread cache does not
 * serve the call. `make bench` runs both next to the tracers, so that
 * their ratios can be read against this floor. */
#define _GNU_SOURCE
#include <stddef.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

void *malloc(size_t n) { return __libc_malloc(n); }
void *calloc(size_t n, size_t size) { return __libc_calloc(n, size); }
void *realloc(void *p, size_t n) { return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }

#ifdef WITH_THREAD
#include <pthread.h>
#include <unistd.h>

static void *idle(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

__attribute__((constructor)) static void start_idle_thread(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, idle, NULL) == 0)
        pthread_detach(t);
}
#endif
