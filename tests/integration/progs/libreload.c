/* libreload: built as libreload_a.so and libreload_b.so with FRAME 200 and 600: the same code layout (both
 * frame sizes need a 32-bit immediate), so the same return addresses, with other unwind rules */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(x) __asm__ volatile("" : : "r"(x) : "memory")

NOINLINE static void *leaf(int n)
{
    volatile char pad[FRAME];
    pad[0] = (char)n;
    void *p = malloc(16 + (size_t)n);
    KEEP(p);
    KEEP(pad);
    return p;
}

NOINLINE static void *mid(int n)
{
    volatile char pad[FRAME];
    pad[0] = (char)n;
    void *p = leaf(n + 1);
    KEEP(p);
    KEEP(pad);
    return p;
}

NOINLINE static void *top(int n)
{
    volatile char pad[FRAME];
    pad[0] = (char)n;
    void *p = mid(n + 1);
    KEEP(p);
    KEEP(pad);
    return p;
}

int work(void)
{
    for (int i = 0; i < 5; i++)
        free(top(i));
    return 0;
}
