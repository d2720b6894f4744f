/* early_late: allocations outside main().
 *   constructor(101): 2 x malloc(111), one freed       2 allocs  222 bytes
 *   main:             malloc(10) freed                 1 alloc    10 bytes
 *   atexit handler:   malloc(333) leaked               1 alloc   333 bytes
 *   destructor:       malloc(222) leaked, malloc(50) freed  2 allocs 272
 * total: 6 allocs, 3 frees, 837 bytes, leaked 3 blocks / 666 bytes */
#include "tp.h"
#include <stdlib.h>

static void *keep[3];

__attribute__((constructor(101))) static void early(void)
{
    keep[0] = malloc(111);
    void *p = malloc(111);
    tp_sink = p;
    free(p);
}

static void at_exit_handler(void)
{
    keep[1] = malloc(333);
}

__attribute__((destructor)) static void late(void)
{
    keep[2] = malloc(222);
    void *p = malloc(50);
    tp_sink = p;
    free(p);
}

int main(void)
{
    atexit(at_exit_handler);
    void *p = malloc(10);
    tp_sink = p;
    free(p);
    TP_FIGURES(6, 3, 837, 3, 666);
    return 0;
}
