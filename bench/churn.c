/* bench/churn.c - malloc/free churn workload for the heapscope benchmark.
 *
 * usage: churn [THREADS [TOTAL_PAIRS]]     (defaults: 1 thread, 10000000 pairs)
 *
 * TOTAL_PAIRS malloc/free pairs are split evenly over THREADS threads.  Sizes
 * are 8..512 bytes from a fixed-seed xorshift (one seed per thread, so runs are
 * reproducible).  Every malloc and free happens at call depth ~15: main/thread
 * entry -> d1 -> ... -> d14 -> leaf, all noinline and not tail calls.  Built
 * with -O2 -g -fomit-frame-pointer so a profiler has to unwind with DWARF CFI.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
/* Compiler barrier: keeps the pointer "used" (no malloc/free elision) and,
 * placed after a call, stops the call from becoming a tail call. */
#define KEEP(x) __asm__ volatile("" : : "r"(x) : "memory")

static inline uint64_t xorshift64(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* depth 15: the allocation site */
NOINLINE static uint64_t leaf(uint64_t *rng)
{
    size_t sz = 8 + (size_t)(xorshift64(rng) % 505); /* 8..512 */
    unsigned char *p = malloc(sz);
    if (!p) {
        perror("malloc");
        exit(1);
    }
    p[0] = (unsigned char)sz;
    p[sz - 1] = (unsigned char)(sz >> 1);
    KEEP(p);
    uint64_t r = p[0] + p[sz - 1];
    free(p);
    return r;
}

#define LEVEL(name, next)                                                      \
    NOINLINE static uint64_t name(uint64_t *rng)                               \
    {                                                                          \
        uint64_t r = next(rng);                                                \
        KEEP(r);                                                               \
        return r + 1;                                                          \
    }

LEVEL(d14, leaf)
LEVEL(d13, d14)
LEVEL(d12, d13)
LEVEL(d11, d12)
LEVEL(d10, d11)
LEVEL(d9, d10)
LEVEL(d8, d9)
LEVEL(d7, d8)
LEVEL(d6, d7)
LEVEL(d5, d6)
LEVEL(d4, d5)
LEVEL(d3, d4)
LEVEL(d2, d3)
LEVEL(d1, d2)

struct job {
    uint64_t pairs;
    uint64_t seed;
    uint64_t sum;
};

NOINLINE static void *worker(void *arg)
{
    struct job *j = arg;
    uint64_t rng = j->seed, sum = 0;
    for (uint64_t i = 0; i < j->pairs; i++)
        sum += d1(&rng);
    j->sum = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
    unsigned long long total = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000000ULL;
    if (threads < 1 || threads > 256) {
        fprintf(stderr, "usage: %s [THREADS [TOTAL_PAIRS]]\n", argv[0]);
        return 2;
    }
    struct job *jobs = calloc((size_t)threads, sizeof *jobs);
    pthread_t *tids = calloc((size_t)threads, sizeof *tids);
    if (!jobs || !tids)
        return 1;
    for (long t = 0; t < threads; t++) {
        jobs[t].pairs = total / (unsigned long long)threads +
                        ((unsigned long long)t < total % (unsigned long long)threads);
        jobs[t].seed = 0x9E3779B97F4A7C15ULL ^ (uint64_t)(t + 1) * 0xD1B54A32D192ED03ULL;
    }
    uint64_t sum = 0;
    if (threads == 1) {
        worker(&jobs[0]); /* no extra thread: all work on the main thread */
    } else {
        for (long t = 0; t < threads; t++)
            if (pthread_create(&tids[t], NULL, worker, &jobs[t]) != 0) {
                perror("pthread_create");
                return 1;
            }
        for (long t = 0; t < threads; t++)
            pthread_join(tids[t], NULL);
    }
    for (long t = 0; t < threads; t++)
        sum += jobs[t].sum;
    /* printed to stderr only if asked, so the result is observable */
    if (getenv("CHURN_VERBOSE"))
        fprintf(stderr, "churn: threads=%ld pairs=%llu checksum=%llu\n", threads, total,
                (unsigned long long)sum);
    free(jobs);
    free(tids);
    return (int)(sum & 0); /* always 0, but depends on sum */
}
