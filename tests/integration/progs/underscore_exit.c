/* underscore_exit [quick|syscall]: 8 x malloc(128) (3 freed), calloc(10, 10),
 * then _exit(0), with "quick" quick_exit(0), with "syscall"
 * syscall(SYS_exit_group, 0): no atexit handlers, no destructors, no stdio
 * flush (quick_exit runs at_quick_exit handlers).
 * figures: 9 allocs, 3 frees, 1124 bytes, leaked 6 blocks / 740 bytes */
#include "tp.h"
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *keep[9];

int main(int argc, char **argv)
{
    for (int i = 0; i < 8; i++) keep[i] = malloc(128);
    for (int i = 0; i < 3; i++) free(keep[i]);
    keep[8] = calloc(10, 10);
    TP_FIGURES(9, 3, 1124, 6, 740);
    if (argc > 1 && !strcmp(argv[1], "quick"))
        quick_exit(0);
    if (argc > 1 && !strcmp(argv[1], "syscall"))
        syscall(SYS_exit_group, 0);
    _exit(0);
}
