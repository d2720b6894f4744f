/* pairs: argv[1] malloc/free pairs of 16-272 bytes from one site, for a
 * trace of millions of events that takes its progress line */
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    for (long i = 0; i < n; i++) {
        void *volatile p = malloc(16 + (size_t)(i & 255));
        free(p);
    }
    return 0;
}
