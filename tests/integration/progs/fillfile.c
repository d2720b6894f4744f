/* fillfile.c - churns through many random-sized blocks, enough trace to fill a small disk or file size limit */
#include <stdlib.h>
#include <string.h>
#include "tp.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;
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
    tp_out("figures: iterations %ld\n", n);
    return 0;
}
