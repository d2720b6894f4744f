/* daemonchild: forks a child that leaves the session, sleeps a second,
 * allocates 99 bytes and exits; the parent exits as soon as the child runs
 * (by then a followed child's trace file exists: the fork handler made it),
 * so a wrapper that waits for the parent ends while the child still traces. */
#include "tp.h"
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
    int p[2];
    char c = 0;

    tp_sink = malloc(10);
    if (pipe(p) != 0)
        return 2;
    if (fork() == 0) {
        close(p[0]);
        setsid();
        if (write(p[1], &c, 1) != 1)
            return 3;
        close(p[1]);
        sleep(1);
        tp_sink = malloc(99);
        return 0;
    }
    close(p[1]);
    return read(p[0], &c, 1) == 1 ? 0 : 4;
}
