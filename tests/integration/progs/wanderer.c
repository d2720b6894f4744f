/* wanderer: changes directory (to argv[1]), then forks a child that leaks
 * a block, and forks another that runs this program again as "wanderer -"
 * (which leaks a block too). Their traces belong beside the root's, where
 * the tracing started, not in the directory the program moved to. */
#include "tp.h"
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "-") == 0) {
        tp_sink = malloc(300);
        return 0;
    }
    if (argc < 2 || chdir(argv[1]) != 0)
        return 2;
    pid_t pid = fork();
    if (pid == 0) {
        tp_sink = malloc(200);
        exit(0);
    }
    waitpid(pid, NULL, 0);
    pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "wanderer", "-", (char *)NULL);
        _exit(3);
    }
    waitpid(pid, NULL, 0);
    tp_sink = malloc(100);
    return 0;
}
