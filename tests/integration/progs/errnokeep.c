/* errnokeep LIB: loads LIB, deletes its file, then allocates and frees
 * through it with errno set: malloc and free (which must not change errno)
 * leave errno as they found it, traced or not. The tracer's first walk
 * through the library tries to open its file, which fails. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
    void *(*la)(int);
    void (*lf)(void *);
    int changed = 0;

    if (!h)
        return 2;
    unlink(argv[1]);
    la = (void *(*)(int))dlsym(h, "errnolib_alloc");
    lf = (void (*)(void *))dlsym(h, "errnolib_free");
    for (int i = 0; i < 1000; i++) {
        errno = 4242;
        void *p = la(16 + i % 64);
        changed += errno != 4242;
        errno = 4343;
        lf(p);
        changed += errno != 4343;
    }
    printf("errno changed %d times\n", changed);
    return 0;
}
