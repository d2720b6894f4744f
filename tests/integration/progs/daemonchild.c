/* daemonchild: forks a child that leaves the session, sleeps a second,
 * allocates 99 bytes and exits; the parent exits at once, so a wrapper that
 * waits for it ends while the child still traces. */
#include "tp.h"
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
    tp_sink = malloc(10);
    if (fork() == 0) {
        setsid();
        sleep(1);
        tp_sink = malloc(99);
        return 0;
    }
    return 0;
}
