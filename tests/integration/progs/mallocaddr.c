/* mallocaddr.c - a non-PIE program that calls malloc through its address, as python3 does (its PLT slot is then malloc's address) */
#include <stdlib.h>
#include "tp.h"

void *(*volatile tp_malloc_fn)(size_t);
void (*volatile tp_free_fn)(void *);

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;

    /* taken in code, not in an initialiser: the non-PIC reference needs a canonical PLT slot */
    tp_malloc_fn = malloc;
    tp_free_fn = free;

    for (long i = 0; i < n; i++)
        tp_free_fn(tp_malloc_fn(16 + i % 64));
    tp_out("figures: calls %ld\n", n);
    return 0;
}
