/* underscore_exit: 8 x malloc(128) (3 freed), calloc(10, 10), then
 * _exit(0): no atexit handlers, no destructors, no stdio flush.
 * figures: 9 allocs, 3 frees, 1124 bytes, leaked 6 blocks / 740 bytes */
#include "tp.h"
#include <stdlib.h>

static void *keep[9];

int main(void)
{
    for (int i = 0; i < 8; i++) keep[i] = malloc(128);
    for (int i = 0; i < 3; i++) free(keep[i]);
    keep[8] = calloc(10, 10);
    TP_FIGURES(9, 3, 1124, 6, 740);
    _exit(0);
}
