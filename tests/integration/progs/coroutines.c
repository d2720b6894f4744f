/* coroutines.c - ucontext coroutines on small malloc'd stacks allocate and free at varying depths.
 *
 * usage: coroutines STACK_KIB. 8 coroutines of 20,000 iterations each, every
 * one allocating (co_leaf) at depth 0-11 below co_body and freeing the block
 * of 32 iterations before; main switches to them in turn. Untraced, an
 * 8 KiB stack is enough (4.4 KiB used at -O0). Prints the figures it
 * computes and the most of any coroutine stack used (the 0xab fill
 * overwritten). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include "tp.h"

#define NCO 8
#define ITERS 20000
#define ROUNDS (ITERS / 3 - 100) /* every coroutine is still inside its loop at the end */

static ucontext_t main_ctx, co_ctx[NCO];
static long allocs, frees, bytes, live_bytes;

__attribute__((noinline)) static void *co_leaf(int co, int i)
{
    size_t n = 16 + (size_t)(i % 64) + (size_t)co;
    void *p = malloc(n);
    allocs++;
    bytes += (long)n;
    live_bytes += (long)n;
    memset(p, 0, 8);
    return p;
}

__attribute__((noinline)) static void co_mid(int co, int depth, int i, void **keep, size_t *kept)
{
    if (depth > 0) {
        co_mid(co, depth - 1, i, keep, kept);
        __asm__ volatile("" ::: "memory");
        return;
    }
    int k = i % 32;
    if (keep[k]) {
        free(keep[k]);
        frees++;
        live_bytes -= (long)kept[k];
    }
    keep[k] = co_leaf(co, i);
    kept[k] = 16 + (size_t)(i % 64) + (size_t)co;
}

static void co_body(int co)
{
    void *keep[32] = { 0 };
    size_t kept[32];
    for (int i = 0; i < ITERS; i++) {
        co_mid(co, (i * 7 + co) % 12, i, keep, kept);
        if (i % 3 == 0)
            swapcontext(&co_ctx[co], &main_ctx);
    }
}

int main(int argc, char **argv)
{
    size_t size = (argc > 1 ? (size_t)atol(argv[1]) : 64) * 1024;
    unsigned char *stacks[NCO];
    size_t most = 0;

    for (int c = 0; c < NCO; c++) {
        getcontext(&co_ctx[c]);
        stacks[c] = malloc(size);
        allocs++;
        bytes += (long)size;
        live_bytes += (long)size;
        memset(stacks[c], 0xab, size);
        co_ctx[c].uc_stack.ss_sp = stacks[c];
        co_ctx[c].uc_stack.ss_size = size;
        co_ctx[c].uc_link = &main_ctx;
        makecontext(&co_ctx[c], (void (*)(void))co_body, 1, c);
    }
    for (int r = 0; r < ROUNDS; r++)
        for (int c = 0; c < NCO; c++)
            swapcontext(&main_ctx, &co_ctx[c]);
    for (int c = 0; c < NCO; c++) {
        size_t u = 0;
        while (u < size && stacks[c][u] == 0xab)
            u++;
        if (size - u > most)
            most = size - u;
    }
    /* the coroutines' last 32 blocks each stay allocated, and so do their stacks */
    tp_out("figures: allocs=%ld frees=%ld bytes=%ld leaked_count=%ld leaked_bytes=%ld\nstack_used=%zu\n", allocs, frees,
           bytes, allocs - frees, live_bytes, most);
    return 0;
}
