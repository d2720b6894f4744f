/* stackmix: 4 threads allocate at once through 16,384 call paths they
 * share (14 calls deep, each through one of two functions), far more
 * than a thread's cache of stack nodes holds: so threads find nodes that
 * others made, while others add nodes and the table grows. Each block's
 * size names its path ((depth << 14 | bits) + 1, the first call's choice
 * in bit 0), which its backtrace must show: left, then right for each
 * bit, outermost first. Each block is freed at once.
 * Prints the program's own figures: allocs. */
#include "tp.h"
#include <pthread.h>
#include <stdlib.h>

#define NT 4
#define DEPTH 14
#define PER_THREAD 20000

static volatile unsigned sink;

static void *left(unsigned bits, int rest, size_t size);
static void *right(unsigned bits, int rest, size_t size);

__attribute__((noinline)) static void *leaf(size_t size)
{
    void *p = malloc(size);
    sink += p != NULL;
    return p;
}

/* the work after each call keeps it a call (no tail call): every level stays a frame */
#define NEXT(bits, rest, size) \
    ((rest) == 0 ? leaf(size) : ((bits) & 1) ? right((bits) >> 1, (rest) - 1, size) : left((bits) >> 1, (rest) - 1, size))

__attribute__((noinline)) static void *left(unsigned bits, int rest, size_t size)
{
    void *p = NEXT(bits, rest, size);
    sink++;
    return p;
}

__attribute__((noinline)) static void *right(unsigned bits, int rest, size_t size)
{
    void *p = NEXT(bits, rest, size);
    sink++;
    return p;
}

static void *worker(void *arg)
{
    unsigned long x = 0x9e3779b97f4a7c15ul * ((unsigned long)arg + 1);
    for (int i = 0; i < PER_THREAD; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        unsigned bits = (unsigned)(x >> 20) & ((1u << DEPTH) - 1);
        int depth = 1 + (int)((x >> 40) % DEPTH);
        bits &= (1u << depth) - 1;
        size_t size = ((size_t)depth << DEPTH | bits) + 1;
        /* depth calls of left or right, the first by bit 0 */
        free((bits & 1) ? right(bits >> 1, depth - 1, size) : left(bits >> 1, depth - 1, size));
    }
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    printf("allocs=%d\n", NT * PER_THREAD);
    return 0;
}
