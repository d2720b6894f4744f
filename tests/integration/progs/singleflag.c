/* singleflag.c - glibc's single-threaded flag as the program sees it (its own copy) and as libc keeps it, before and after a thread of its own; then, as root, the change of identity reaches every thread */
#include "tp.h"
#include <dlfcn.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/single_threaded.h>

static void *nothing(void *arg) { return arg; }

static int libc_flag(void)
{
    void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    char *f = h ? dlsym(h, "__libc_single_threaded") : NULL;
    return f ? *(volatile char *)f : -1;
}

/* Threads of this process whose real, effective or saved uid is not uid */
static int threads_not(uid_t uid)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int bad = 0;

    while (d && (e = readdir(d))) {
        char path[300], buf[2048];
        unsigned r, ef, s;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
        int fd = open(path, O_RDONLY);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
        if (fd >= 0)
            close(fd);
        if (n <= 0)
            continue;
        buf[n] = 0;
        char *u = strstr(buf, "\nUid:");
        if (!u || sscanf(u + 5, "%u %u %u", &r, &ef, &s) != 3 || r != uid || ef != uid || s != uid)
            bad++;
    }
    if (d)
        closedir(d);
    return bad;
}

int main(int argc, char **argv)
{
    pthread_t t;
    int own = __libc_single_threaded, lib = libc_flag();

    free(malloc(10));
    if (argc > 1 && !strcmp(argv[1], "setuid")) {
        /* a daemon dropping root: every thread must follow, ours too */
        if (initgroups("nobody", 65534) || setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
            return 3;
        tp_out("figures: threads not nobody %d\n", threads_not(65534));
        return 0;
    }
    if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL))
        return 2;
    tp_out("figures: before own %d libc %d after own %d libc %d\n", own, lib, __libc_single_threaded, libc_flag());
    return 0;
}
