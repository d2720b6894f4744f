/* manystacks: 2^DEPTH allocations (argv[1], default 16), each from its own
 * backtrace: the path of calls down to it spells the allocation's number in
 * two functions, a() for a 1 bit and b() for a 0. Each block is freed at
 * once but those of numbers that are multiples of 1024, which leak. */
#include <stdlib.h>

void *volatile sink;
static unsigned depth;

__attribute__((noinline)) static void a(unsigned d, unsigned n, unsigned bits);
__attribute__((noinline)) static void b(unsigned d, unsigned n, unsigned bits);

static void step(unsigned d, unsigned n, unsigned bits)
{
    if (d == depth) {
        void *p = malloc(16 + (n & 7) * 8);
        sink = p;
        if (n % 1024)
            free(p);
        return;
    }
    if (bits & 1)
        a(d + 1, n, bits >> 1);
    else
        b(d + 1, n, bits >> 1);
}

__attribute__((noinline)) static void a(unsigned d, unsigned n, unsigned bits) { step(d, n, bits); __asm__ volatile(""); }
__attribute__((noinline)) static void b(unsigned d, unsigned n, unsigned bits) { step(d, n, bits); __asm__ volatile(""); }

int main(int argc, char **argv)
{
    depth = argc > 1 ? (unsigned)atoi(argv[1]) : 16;
    for (unsigned n = 0; n < (1u << depth); n++)
        step(0, n, n);
    return 0;
}
