/* sampledpool: a pool of blocks of random sizes at scattered addresses,
 * one replaced at random per iteration, so that in sampled mode samples
 * keep joining and leaving the sampled-block set. Prints how much its
 * resident memory grew (KiB) between iteration 1M and the end (4M): near 0
 * natively, and the tracer's own memory must not grow either; then its
 * allocation count and bytes, and it frees everything. */
#include "tp.h"
#include <fcntl.h>
#include <stdlib.h>

#define POOL 20000
#define ITERS 4000000L
#define MARK 1000000L

static long rss_kib(void)
{
    static char buf[8192];
    int fd = open("/proc/self/status", O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    char *s;
    if (fd >= 0) close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    s = strstr(buf, "VmRSS:");
    return s ? strtol(s + 6, NULL, 10) : -1;
}

int main(void)
{
    static void *pool[POOL];
    unsigned long x = 88172645463325252ull;
    long at_mark = 0, bytes = 0;
    for (long i = 0; i < ITERS; i++) {
        if (i == MARK) at_mark = rss_kib();
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        int k = (int)(x % POOL);
        free(pool[k]);
        pool[k] = malloc(16 + (x >> 20) % 1024);
        bytes += 16 + (long)((x >> 20) % 1024);
        ((char *)pool[k])[0] = 1;
    }
    tp_out("rss_growth_kib=%ld\nallocs=%ld\nbytes=%ld\n", rss_kib() - at_mark, ITERS, bytes);
    for (int k = 0; k < POOL; k++) free(pool[k]);
    return 0;
}
