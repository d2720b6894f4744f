/* bench/timeit.c - run a command, report wall time, max RSS and exit status.
 *
 * usage: timeit [-t TIMEOUT_S] OUTFILE -- cmd args...
 *
 * Writes one line "WALL_SECONDS MAXRSS_KB STATUS" to OUTFILE.  STATUS is the
 * exit code, 128+signal if killed, or 124 on timeout (the whole process group
 * is SIGKILLed).  MAXRSS_KB comes from wait4()'s rusage, which covers the
 * child and every descendant it waited for (same source as /usr/bin/time %M).
 * The child's stdin/stdout/stderr are inherited.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile sig_atomic_t timed_out;
static void on_alarm(int sig)
{
    (void)sig;
    timed_out = 1;
}

int main(int argc, char **argv)
{
    double timeout = 0;
    int i = 1;
    if (i + 1 < argc && strcmp(argv[i], "-t") == 0) {
        timeout = atof(argv[i + 1]);
        i += 2;
    }
    if (i + 2 >= argc || strcmp(argv[i + 1], "--") != 0) {
        fprintf(stderr, "usage: %s [-t TIMEOUT_S] OUTFILE -- cmd args...\n", argv[0]);
        return 2;
    }
    const char *out = argv[i];
    char **cmd = &argv[i + 2];

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: wait4 returns EINTR */
    sigaction(SIGALRM, &sa, NULL);

    double t0 = now();
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 2;
    }
    if (pid == 0) {
        setpgid(0, 0);
        execvp(cmd[0], cmd);
        fprintf(stderr, "timeit: exec %s: %s\n", cmd[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    if (timeout > 0) {
        struct itimerval it;
        memset(&it, 0, sizeof it);
        it.it_value.tv_sec = (time_t)timeout;
        it.it_value.tv_usec = (suseconds_t)((timeout - (double)(time_t)timeout) * 1e6);
        setitimer(ITIMER_REAL, &it, NULL);
    }
    int st = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    for (;;) {
        pid_t r = wait4(pid, &st, 0, &ru);
        if (r == pid)
            break;
        if (r < 0 && errno == EINTR) {
            if (timed_out) {
                kill(-pid, SIGKILL);
                kill(pid, SIGKILL);
            }
            continue;
        }
        perror("wait4");
        return 2;
    }
    double wall = now() - t0;
    if (timed_out)
        kill(-pid, SIGKILL); /* stragglers in the group */
    int status = timed_out             ? 124
                 : WIFEXITED(st)       ? WEXITSTATUS(st)
                 : WIFSIGNALED(st)     ? 128 + WTERMSIG(st)
                                       : 255;
    FILE *f = fopen(out, "w");
    if (!f) {
        perror(out);
        return 2;
    }
    fprintf(f, "%.4f %ld %d\n", wall, ru.ru_maxrss, status);
    fclose(f);
    return 0;
}
