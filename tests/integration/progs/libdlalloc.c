/* libdlalloc: loaded with dlopen by dlopener.
 * dl_work(): 10 x malloc(77) freed, 3 x malloc(1234) leaked. */
#include <stdlib.h>

void *dl_leaks[3];

__attribute__((noinline)) void *dl_alloc_leak(size_t n)
{
    return malloc(n); /* HS-DL-LEAK-SITE */
}

int dl_work(void)
{
    for (int i = 0; i < 10; i++) {
        volatile char *p = malloc(77);
        p[0] = 1;
        free((void *)p);
    }
    for (int i = 0; i < 3; i++) dl_leaks[i] = dl_alloc_leak(1234);
    return 13;
}
