/* execer: 6 x malloc(500), 4 freed, 2 still live when it execs argv[1]
 * (with argv[1..] as the new argv) by execv, or as EXECER_VIA says:
 * "syscall" syscall(SYS_execve), "execveat" execveat(AT_FDCWD).
 * Its figures (pre-exec image only):
 *   6 allocs, 4 frees, 3000 bytes, 2 blocks / 1000 bytes live at exec. */
#include "tp.h"
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
    if (argc < 2) { tp_out("usage: execer PROG [ARGS]\n"); return 2; }
    void *p[6];
    for (int i = 0; i < 6; i++) p[i] = malloc(500);
    for (int i = 0; i < 4; i++) free(p[i]);
    tp_sink = p[4]; tp_sink = p[5];
    tp_out("execer: ");
    TP_FIGURES(6, 4, 3000, 2, 1000);
    const char *via = getenv("EXECER_VIA");
    if (via && !strcmp(via, "syscall"))
        syscall(SYS_execve, argv[1], argv + 1, environ);
    else if (via && !strcmp(via, "execveat"))
        execveat(AT_FDCWD, argv[1], argv + 1, environ, 0);
    else
        execv(argv[1], argv + 1);
    tp_out("exec failed\n");
    return 127;
}
