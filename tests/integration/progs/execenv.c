/* execenv: allocates, then runs /usr/bin/env with main's own envp, so that
 * the environment the program hands its children is printed. */
#include "tp.h"
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv, char **envp)
{
    char *args[] = { "/usr/bin/env", NULL };

    (void)argc;
    (void)argv;
    tp_sink = malloc(5);
    execve(args[0], args, envp);
    return 1;
}
