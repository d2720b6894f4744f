/* forker: the parent allocates and frees everything it has before fork()
 * (so no block is live across the fork and the child's figures do not
 * depend on how inherited blocks are accounted), forks, and then
 *   child : 7 x malloc(1000) freed, 2 x calloc(5, 100) leaked, exit(0)
 *           -> 9 allocs, 7 frees, 8000 bytes, leaked 2 / 1000
 *   parent: before fork 3 x malloc(64) freed;
 *           after fork 4 x malloc(256), 1 leaked; waits for the child
 *           -> 7 allocs, 6 frees, 1216 bytes, leaked 1 / 256
 * Each process prints its own figures line (prefixed child:/parent:). */
#include "tp.h"
#include <stdlib.h>
#include <sys/wait.h>

static void *leak[4];

int main(void)
{
    for (int i = 0; i < 3; i++) { void *p = malloc(64); tp_sink = p; free(p); }
    pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) {
        for (int i = 0; i < 7; i++) { void *p = malloc(1000); tp_sink = p; free(p); }
        leak[0] = calloc(5, 100);
        leak[1] = calloc(5, 100);
        tp_out("child: ");
        TP_FIGURES(9, 7, 8000, 2, 1000);
        exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    void *p[4];
    for (int i = 0; i < 4; i++) p[i] = malloc(256);
    for (int i = 0; i < 3; i++) free(p[i]);
    leak[2] = p[3];
    tp_out("parent: ");
    TP_FIGURES(7, 6, 1216, 1, 256);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
}
