/* smallstack MODE: a thread with a 16 KiB stack (glibc's least) allocates,
 * then either forks a child that execs /bin/true and waits for it ("fork",
 * exit 0 when the child ran) or execs /bin/true itself ("exec"). The
 * tracer's exec hook once took 40 KiB of the caller's stack: the child died
 * of it. */
#include "tp.h"
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>

static int direct;

__attribute__((noinline)) static void *leaf_alloc(int i)
{
    return malloc(32 + (size_t)i);
}

static void *run(void *arg)
{
    char *argv[] = { "/bin/true", NULL };
    (void)arg;
    for (int i = 0; i < 100; i++)
        free(leaf_alloc(i));
    if (direct) {
        execv("/bin/true", argv);
        _exit(127);
    }
    pid_t c = fork();
    if (c == 0) {
        execv("/bin/true", argv);
        _exit(127);
    }
    int st;
    if (c < 0 || waitpid(c, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        exit(3);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_attr_t a;
    pthread_t t;
    direct = argc > 1 && !strcmp(argv[1], "exec");
    pthread_attr_init(&a);
    if (pthread_attr_setstacksize(&a, 16384) || pthread_create(&t, &a, run, NULL))
        return 2;
    pthread_join(t, NULL);
    tp_out("ok\n");
    return 0;
}
