/* deeprec DEPTH: 10 x malloc(24) at the bottom of a recursion DEPTH calls
 * deep (each freed), under main: deeper than the tracer keeps (128
 * frames), the backtrace must end in its "[truncated]" frame, not at some
 * recursive call that a flame graph would take for a root */
#include "tp.h"
#include <stdlib.h>

__attribute__((noinline)) static void *down(int d)
{
    void *p = d ? down(d - 1) : malloc(24);
    __asm__ volatile("" ::: "memory"); /* not a tail call */
    return p;
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 10;
    for (int i = 0; i < 10; i++)
        free(down(depth));
    TP_FIGURES(10, 10, 240, 0, 0);
    return 0;
}
