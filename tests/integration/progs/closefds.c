/* closefds: 5 x malloc(100) freed, then close every fd 0..1023, then open
 * argv[1] (a data file) and dup2 it onto every fd 1..1023, so that anything
 * the tracer still writes to a descriptor it opened before would land in
 * the data file; then 20 x malloc(200), 10 leaked, writing one line per
 * allocation to the data file.  Exit status 0 (stdout is gone).
 * figures: 25 allocs, 15 frees, 4500 bytes, leaked 10 blocks / 2000 bytes;
 * the data file must contain exactly the 20 "closefds line N" lines. */
#include "tp.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>

static void *leak[10];

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    for (int i = 0; i < 5; i++) { void *p = malloc(100); tp_sink = p; free(p); }
    for (int fd = 0; fd < 1024; fd++) close(fd);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd != 0) return 3;
    struct rlimit rl;
    int maxfd = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 1024) maxfd = (int)rl.rlim_cur;
    for (int i = 1; i < maxfd; i++) dup2(0, i);
    for (int i = 0; i < 20; i++) {
        char *p = malloc(200);
        int n = snprintf(p, 200, "closefds line %d\n", i);
        if (write(0, p, (size_t)n) != n) return 4;
        if (i % 2) free(p); else leak[i / 2] = p;
    }
    return 0;
}
