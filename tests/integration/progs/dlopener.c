/* dlopener: dlopen(argv[1]) (libdlalloc.so), call dl_work(), dlclose.
 * The library leaks 3 x 1234 bytes (13 allocs, 10 frees, 4472 bytes);
 * dlopen/dlclose themselves allocate and free link-map data through the
 * (interposed) malloc, which valgrind sees as well. */
#include "tp.h"
#include <dlfcn.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) { tp_out("dlopen failed\n"); return 3; }
    int (*work)(void) = (int (*)(void))dlsym(h, "dl_work");
    if (!work) return 4;
    int r = work();
    dlclose(h);
    tp_out("dl_work returned %d\n", r);
    tp_out("library: ");
    TP_FIGURES(13, 10, 770 + 3 * 1234, 3, 3 * 1234);
    return 0;
}
