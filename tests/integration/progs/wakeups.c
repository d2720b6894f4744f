/* wakeups.c - threads churning for a while; then how often the threads it did not start (the tracer's) were switched out */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include "tp.h"

#define MAX_THREADS 16

static atomic_int done;
static pid_t tids[MAX_THREADS + 1];

static void *churn(void *arg)
{
    unsigned x = (unsigned)(size_t)arg * 2654435761u + 1;
    long n = 0;

    tids[(size_t)arg] = (pid_t)syscall(SYS_gettid);
    while (!atomic_load(&done)) {
        void *volatile p;
        x = x * 1103515245u + 12345u;
        p = malloc(8 + (x >> 16) % 505);
        free(p);
        n++;
    }
    return (void *)n;
}

/* Context switches of the task, voluntary and not, from its status file (no stdio: it allocates) */
static long switches(const char *tid)
{
    char path[64], buf[4096];
    long total = 0;
    ssize_t n;
    int fd;

    snprintf(path, sizeof path, "/proc/self/task/%s/status", tid);
    if ((fd = open(path, O_RDONLY)) < 0)
        return 0;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    for (char *p = buf; (p = strstr(p, "ctxt_switches:")); p++)
        total += atol(p + strlen("ctxt_switches:"));
    return total;
}

int main(int argc, char **argv)
{
    int nthreads = argc > 1 ? atoi(argv[1]) : 4;
    long ms = argc > 2 ? atol(argv[2]) : 300, pairs = 0, others = 0, tracer = 0;
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
    pthread_t th[MAX_THREADS];
    struct dirent *d;
    DIR *dir;

    if (nthreads < 1 || nthreads > MAX_THREADS)
        return 2;
    tids[nthreads] = (pid_t)getpid();
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&th[i], NULL, churn, (void *)(size_t)i) != 0)
            return 1;
    nanosleep(&ts, NULL);
    /* while the workers still run: then every task not ours is the tracer's */
    if (!(dir = opendir("/proc/self/task")))
        return 1;
    while ((d = readdir(dir))) {
        int ours = 0;
        if (d->d_name[0] == '.')
            continue;
        for (int i = 0; i <= nthreads; i++)
            ours |= tids[i] == atoi(d->d_name);
        if (ours)
            continue;
        others++;
        tracer += switches(d->d_name);
    }
    closedir(dir);
    atomic_store(&done, 1);
    for (int i = 0; i < nthreads; i++) {
        void *n;
        pthread_join(th[i], &n);
        pairs += (long)n;
    }
    tp_out("figures: threads %d ms %ld pairs %ld other-tasks %ld other-switches %ld\n", nthreads, ms, pairs, others, tracer);
    return 0;
}
