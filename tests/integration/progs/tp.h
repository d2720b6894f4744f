/* Shared helpers for the heapscope integration test programs.
 *
 * Output goes through write(2) on a stack buffer, never through stdio:
 * stdio allocates its buffer with malloc on first use, which would add a
 * libc-internal allocation to every program's figures (and valgrind frees
 * it again in __libc_freeres while a native process never does).  Keeping
 * stdio out means the programs' heap activity is exactly what they
 * compute and print. */
#ifndef TP_H
#define TP_H
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void tp_out(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static void tp_out(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 1) n = (int)sizeof buf - 1;
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(1, p, (size_t)n);
        if (w <= 0) break;
        p += w; n -= (int)w;
    }
}

/* The figures line every program prints: the program's own account of the
 * heap activity it caused, in valgrind's terms (allocs = calls that
 * returned a new block, realloc of a non-NULL pointer = 1 alloc + 1 free). */
#define TP_FIGURES(a, f, b, lc, lb)                                            \
    tp_out("figures: allocs=%lu frees=%lu bytes=%lu leaked_count=%lu "          \
           "leaked_bytes=%lu\n",                                               \
           (unsigned long)(a), (unsigned long)(f), (unsigned long)(b),         \
           (unsigned long)(lc), (unsigned long)(lb))

/* keep pointers reachable-but-unused so the compiler cannot elide calls */
static void *volatile tp_sink __attribute__((unused));

/* n frees and mallocs of 1-700 bytes at random among 64 slots, then the
 * slots freed: a churn that writes a lot of trace (lcg, fixed seed) */
#include <stdlib.h>
static void tp_churn(long n) __attribute__((unused));
static void tp_churn(long n)
{
    void *keep[64] = { 0 };
    unsigned s = 1;

    for (long i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        int k = (int)((s >> 8) & 63);
        free(keep[k]);
        keep[k] = malloc((s >> 4) % 700 + 1);
        memset(keep[k], 1, 1);
    }
    for (int k = 0; k < 64; k++)
        free(keep[k]);
}
#endif
