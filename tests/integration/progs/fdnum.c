/* fdnum: allocates from a few frames (so the tracer walks them), then prints
 * the descriptor its first open() gets: under the tracer the same as without
 * it (the tracer kept the ELF files it unwinds through, and libunwind its
 * pipe, at the lowest free numbers). */
#include "tp.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static void inner(int n)
{
    for (int i = 0; i < n; i++) {
        void *p = malloc(32 + i);
        tp_sink = p;
        free(p);
    }
}

__attribute__((noinline)) static void outer(int n)
{
    inner(n);
    tp_sink = malloc(8);
}

int main(void)
{
    outer(100);
    printf("first fd %d\n", open("/dev/null", O_RDONLY));
    return 0;
}
