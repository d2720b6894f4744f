/* ownmalloc.c - a program with an allocator of its own linked in (a bump allocator here, a static jemalloc elsewhere): its image comes before any preload */
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include "tp.h"

static char *arena;
static size_t used;

void *malloc(size_t n)
{
    if (!arena && (arena = mmap(NULL, 1 << 26, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
        return NULL;
    if (used + n > (1 << 26))
        return NULL;
    void *p = arena + used;
    used += (n + 15) & ~(size_t)15;
    return p;
}

void free(void *p) { (void)p; }

void *calloc(size_t a, size_t b)
{
    void *p = malloc(a * b);
    if (p)
        memset(p, 0, a * b);
    return p;
}

void *realloc(void *p, size_t n)
{
    void *q = malloc(n);
    if (p && q)
        memcpy(q, p, n);
    return q;
}

int main(void)
{
    for (int i = 0; i < 1000; i++) {
        void *volatile p = malloc(100);
        free(p);
    }
    tp_out("figures: calls 1000\n");
    return 0;
}
