/* steady: allocates steadily for argv[1] seconds (default 2): every
 * millisecond a batch of 100 malloc/free pairs plus one leaked malloc(16).
 * Used for the kill -9 test. */
#include "tp.h"
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2.0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned long n = 0;; n++) {
        for (int i = 0; i < 100; i++) {
            void *p = malloc(100 + (size_t)i);
            tp_sink = p;
            free(p);
        }
        tp_sink = malloc(16);
        usleep(1000);
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 > secs) break;
    }
    return 0;
}
