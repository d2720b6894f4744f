/* spawner.c - starts itself as a child four ways that no fork handler sees: vfork+exec, posix_spawn, system, popen; or vfork+exec in a loop */
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "tp.h"

extern char **environ;

static long vm_kib(void)
{
    char buf[4096];
    long kib = -1;
    int fd = open("/proc/self/status", O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
    char *p;

    if (fd >= 0)
        close(fd);
    if (n > 0) {
        buf[n] = 0;
        if ((p = strstr(buf, "VmSize:")))
            kib = atol(p + 7);
    }
    return kib;
}

/* n vfork+execve of /bin/true in an environment of our own, as a shell runs commands */
static int vfork_loop(int n)
{
    char *env[] = { "PATH=/usr/bin:/bin", "SPAWNER=1", NULL };
    char *args[] = { "true", NULL };
    long before = 0;

    /* the first ones start the tracer's writer thread (its stack): measure after them */
    for (int i = -20; i < n; i++) {
        if (i == 0)
            before = vm_kib();
        int st;
        pid_t pid = vfork();
        if (pid == 0) {
            execve("/bin/true", args, env);
            _exit(127);
        }
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
            return 1;
    }
    tp_out("figures: vforks %d vm_growth_kib %ld\n", n, vm_kib() - before);
    return 0;
}

int main(int argc, char **argv)
{
    char cmd[4200], buf[256];
    char *child[] = { argv[0], "child", NULL };
    pid_t pid;
    int st, ok = 0;
    FILE *f;

    if (argc > 2 && !strcmp(argv[1], "vforks"))
        return vfork_loop(atoi(argv[2]));
    if (argc > 1 && !strcmp(argv[1], "child")) {
        for (int i = 0; i < 77; i++)
            if (!malloc(100))
                return 1;
        tp_out("child done\n");
        return 0;
    }
    if (strlen(argv[0]) > 4000)
        return 2;
    pid = vfork();
    if (pid == 0) {
        execv(argv[0], child);
        _exit(127);
    }
    ok += pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    ok += posix_spawn(&pid, argv[0], NULL, NULL, child, environ) == 0 && waitpid(pid, &st, 0) == pid &&
          WIFEXITED(st) && WEXITSTATUS(st) == 0;
    snprintf(cmd, sizeof(cmd), "exec '%s' child", argv[0]);
    ok += system(cmd) == 0;
    if ((f = popen(cmd, "r"))) {
        ok += fgets(buf, sizeof(buf), f) && !strcmp(buf, "child done\n");
        ok = pclose(f) == 0 ? ok : ok - 1;
    }
    tp_out("figures: children %d\n", ok);
    return 0;
}
