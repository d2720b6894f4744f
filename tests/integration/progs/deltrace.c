/* deltrace.c - deletes its own trace file (given as argv[1]) mid-run, then churns on: the tracer must stop, the program must not */
#include <stdlib.h>
#include <string.h>
#include "tp.h"

int main(int argc, char **argv)
{
    const char *trace = argc > 1 ? argv[1] : NULL;
    long n = argc > 2 ? atol(argv[2]) : 1000000;

    tp_churn(n);
    if (trace)
        unlink(trace);
    tp_churn(n);
    tp_out("figures: iterations %ld\n", 2 * n);
    return 0;
}
