/* sampled: a fixed (LCG, fixed seed) stream of malloc/free pairs with a
 * known total volume, for the --sample test:
 *   2 GiB   in sizes 256..4096       (~990k allocations)
 *   256 MiB in sizes 8 KiB..256 KiB
 *   768 MiB in sizes 1 MiB..4 MiB    (mmap'd by glibc)
 * Memory is never touched, so this is cheap (~1M malloc/free pairs).
 * Why ~3 GiB and not 200 MB: with Poisson (exponential-interval) byte
 * sampling at rate R = 512 KiB, the relative standard error of the
 * bytes estimate is about sqrt(R * B_small) / B_total and that of the count
 * about sqrt(R / B_small) (B_small = bytes in allocations much smaller than
 * R).  With 200 MB of small allocations the count's 1-sigma error would be
 * ~5%, i.e. a correct sampler would fail a 10% bound a few % of the time.
 * With these volumes sigma ~1.1% (bytes) and ~1.7% (count), so the 5% / 10%
 * bounds are > 4 sigma away: a failure means a biased estimator.
 * Prints the exact totals. */
#include "tp.h"
#include <stdint.h>
#include <stdlib.h>

static uint64_t x = 12345;
static uint64_t lcg(void)
{
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 33;
}

static unsigned long n, bytes;

static void one(size_t s)
{
    void *p = malloc(s);
    tp_sink = p;
    free(p);
    n++;
    bytes += s;
}

int main(void)
{
    unsigned long t = 0;
    while (t < (1UL << 31)) { size_t s = 256 + lcg() % (4097 - 256); one(s); t += s; }
    t = 0;
    while (t < (256UL << 20)) { size_t s = 8192 + lcg() % (256 * 1024 - 8192); one(s); t += s; }
    t = 0;
    while (t < (768UL << 20)) { size_t s = (1UL << 20) + lcg() % (3UL << 20); one(s); t += s; }
    TP_FIGURES(n, n, bytes, 0, 0);
    return 0;
}
