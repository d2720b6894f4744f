/* nodebug.c - built without debug info (and stripped too): frames named from the symbol table alone, a static one too, or by module and offset */
#include <stdlib.h>

static void *__attribute__((noinline)) nd_static(size_t n)
{
    void *volatile p = malloc(n);
    return p;
}

void *__attribute__((noinline)) nd_global(size_t n)
{
    void *p = nd_static(n);
    __asm__ volatile("" ::: "memory"); /* not a tail call */
    return p;
}

__attribute__((weak, noinline)) void *nd_weak(size_t n)
{
    void *p = nd_global(n);
    __asm__ volatile("" ::: "memory");
    return p;
}

int main(void)
{
    for (int i = 0; i < 100; i++) {
        void *volatile p = nd_weak(10 + (size_t)i);
        void *volatile q = nd_static(5);
        free(p);
        free(q);
    }
    return 0;
}
