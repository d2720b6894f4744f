/* clearenv_exec exec PROG | system CMD: clears its whole environment, as
 * env -i or a daemon does, then execs PROG (argv[2..] as its argv) or runs
 * CMD with system(). Its own allocations: none the test counts. */
#include "tp.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) { tp_out("usage: clearenv_exec exec PROG [ARGS] | system CMD\n"); return 2; }
    clearenv();
    if (!strcmp(argv[1], "system"))
        return system(argv[2]) == -1;
    execv(argv[2], argv + 2);
    tp_out("exec failed\n");
    return 127;
}
