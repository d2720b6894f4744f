/* idle.c - allocates a block, sleeps SECONDS (default 2) while nothing changes, frees it: an idle service in small */
#include <stdlib.h>
#include "tp.h"

int main(int argc, char **argv)
{
    int seconds = argc > 1 ? atoi(argv[1]) : 2;
    void *p = malloc(100);

    tp_sink = p;
    sleep((unsigned)seconds);
    free(p);
    TP_FIGURES(1, 1, 100, 0, 0);
    return 0;
}
