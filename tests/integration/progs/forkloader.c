/* forkloader LIB_A LIB_B LIB_C N: one thread dlopens, calls and dlcloses
 * LIB_A and LIB_B in a loop (the loader's lock taken and let go all the
 * time) while main forks N children, each calling LIB_C's work() (loaded
 * before the thread started, never called by the parent: its unwind rules
 * are new to every child) and exiting. A child forked while the thread
 * held the loader's lock finds it held for good; the tracer must neither
 * hang such a child nor lose its backtraces. Prints "forks=N" at the end. */
#include "tp.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>

static const char *libs[2];
static atomic_int stop;

static void *reloader(void *arg)
{
    (void)arg;
    for (int i = 0; !atomic_load(&stop); i++) {
        void *h = dlopen(libs[i % 2], RTLD_NOW);
        if (!h)
            exit(2);
        int (*f)(void) = (int (*)(void))dlsym(h, "work");
        if (f)
            f();
        dlclose(h);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 5)
        return 2;
    libs[0] = argv[1];
    libs[1] = argv[2];
    void *hc = dlopen(argv[3], RTLD_NOW);
    int (*work)(void) = hc ? (int (*)(void))dlsym(hc, "work") : NULL;
    int n = atoi(argv[4]), bad = 0;
    pthread_t th;
    if (!work || pthread_create(&th, NULL, reloader, NULL) != 0)
        return 3;
    for (int i = 0; i < n; i++) {
        pid_t p = fork();
        if (p == 0) {
            work();
            _exit(0);
        }
        int st;
        if (p < 0 || waitpid(p, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            bad++;
    }
    atomic_store(&stop, 1);
    pthread_join(th, NULL);
    tp_out("forks=%d\nbad=%d\n", n, bad);
    return 0;
}
