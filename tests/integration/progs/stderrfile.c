/* stderrfile.c - closes standard error, opens a data file of its own there (descriptor 2), writes to it around a churn.
 *
 * usage: stderrfile FILE ITERATIONS. The file must hold the program's two
 * lines and nothing else, whatever the tracer meets meanwhile. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include "tp.h"

int main(int argc, char **argv)
{
    long n = argc > 2 ? atol(argv[2]) : 1000000;
    int fd;

    if (argc < 2)
        return 2;
    close(2);
    fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd != 2)
        return 3;
    if (write(fd, "user data\n", 10) != 10)
        return 4;
    tp_churn(n);
    if (write(fd, "more user data\n", 15) != 15)
        return 5;
    close(fd);
    tp_out("figures: iterations %ld\n", n);
    return 0;
}
