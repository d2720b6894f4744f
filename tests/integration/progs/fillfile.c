/* fillfile.c - churns through many random-sized blocks, enough trace to fill a small disk or file size limit */
#include <stdlib.h>
#include <string.h>
#include "tp.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;

    tp_churn(n);
    tp_out("figures: iterations %ld\n", n);
    return 0;
}
