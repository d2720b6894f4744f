/* reloader: dlopen, call work() and dlclose each library given, three rounds: the loader maps each where the
 * one before was, so the same addresses hold other code (libreload_a/b: same layout, other frame sizes) */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    for (int round = 0; round < 3; round++)
        for (int i = 1; i < argc; i++) {
            void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
            if (!h) {
                fprintf(stderr, "reloader: dlopen '%s': %s\n", argv[i], dlerror());
                return 3;
            }
            int (*work)(void) = (int (*)(void))dlsym(h, "work");
            if (!work)
                return 4;
            work();
            dlclose(h);
        }
    return 0;
}
