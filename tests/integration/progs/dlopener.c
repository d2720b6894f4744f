/* dlopener: dlopen(argv[1]) (libdlalloc.so), call dl_work(), dlclose; with
 * argv[2] = ROUNDS, that many times in a row (the loader maps the library
 * at the same place each time, and the tracer records its load again each
 * time it finds it back).
 * The library leaks 3 x 1234 bytes (13 allocs, 10 frees, 4472 bytes) a round;
 * dlopen/dlclose themselves allocate and free link-map data through the
 * (interposed) malloc, which valgrind sees as well. */
#include "tp.h"
#include <dlfcn.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    int rounds = argc > 2 ? atoi(argv[2]) : 1, r = 0;
    for (int i = 0; i < rounds; i++) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!h) { tp_out("dlopen failed\n"); return 3; }
        int (*work)(void) = (int (*)(void))dlsym(h, "dl_work");
        if (!work) return 4;
        r = work();
        dlclose(h);
    }
    tp_out("dl_work returned %d\n", r);
    tp_out("library: ");
    TP_FIGURES(13 * rounds, 10 * rounds, (770 + 3 * 1234) * rounds, 3 * rounds, 3 * 1234 * rounds);
    return 0;
}
