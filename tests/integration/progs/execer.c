/* execer: 6 x malloc(500), 4 freed, 2 still live when it execs argv[1]
 * (with argv[1..] as the new argv).  Its figures (pre-exec image only):
 *   6 allocs, 4 frees, 3000 bytes, 2 blocks / 1000 bytes live at exec. */
#include "tp.h"
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 2) { tp_out("usage: execer PROG [ARGS]\n"); return 2; }
    void *p[6];
    for (int i = 0; i < 6; i++) p[i] = malloc(500);
    for (int i = 0; i < 4; i++) free(p[i]);
    tp_sink = p[4]; tp_sink = p[5];
    tp_out("execer: ");
    TP_FIGURES(6, 4, 3000, 2, 1000);
    execv(argv[1], argv + 1);
    tp_out("exec failed\n");
    return 127;
}
