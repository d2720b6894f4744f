/* zerobytes: 200,000 requests of 0 bytes (each still takes a block), the
 * first half freed. Sampled mode must count them: 200,000 allocations,
 * 100,000 frees, 100,000 blocks leaked (0 bytes, since none were asked). */
#include "tp.h"
#include <stdlib.h>

#define N 200000

int main(void)
{
    static void *keep[N];
    for (int i = 0; i < N; i++)
        keep[i] = malloc(0);
    for (int i = 0; i < N / 2; i++)
        free(keep[i]);
    tp_out("allocs=%d\nfrees=%d\nleaked=%d\n", N, N / 2, N - N / 2);
    return 0;
}
