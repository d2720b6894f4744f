/* basic: a hand-countable pattern of malloc/calloc/free with 5 leaks.
 *   10 x malloc(100 + 10*i), all freed          -> 10 allocs, 1450 bytes
 *    1 x calloc(16, 8), freed                   ->  1 alloc,   128 bytes
 *    5 x malloc(333) in leaky_alloc, leaked     ->  5 allocs, 1665 bytes
 * total: 16 allocs, 11 frees, 3243 bytes, leaked 5 blocks / 1665 bytes */
#include "tp.h"
#include <stdlib.h>

void *leaks[5];

__attribute__((noinline)) void *leaky_alloc(size_t n)
{
    void *p = malloc(n); /* HS-LEAK-SITE */
    return p;
}

int main(void)
{
    void *p[10];
    for (int i = 0; i < 10; i++) {
        p[i] = malloc(100 + 10 * (size_t)i);
        memset(p[i], i, 100);
    }
    for (int i = 0; i < 10; i++) free(p[i]);
    void *c = calloc(16, 8);
    tp_sink = c;
    free(c);
    for (int i = 0; i < 5; i++) leaks[i] = leaky_alloc(333);
    TP_FIGURES(16, 11, 3243, 5, 1665);
    return 0;
}
