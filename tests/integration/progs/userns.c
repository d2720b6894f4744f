/* userns.c - enters a new user namespace, as a program that sandboxes itself does (the kernel wants it single-threaded), allocating before and after */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include "tp.h"

int main(void)
{
    int rc, err;

    for (int i = 0; i < 500; i++) {
        void *volatile p = malloc(64);
        free(p);
    }
    rc = unshare(CLONE_NEWUSER);
    err = errno;
    for (int i = 0; i < 500; i++) {
        void *volatile p = malloc(64);
        free(p);
    }
    tp_out("figures: unshare %s\n", rc == 0 ? "ok" : strerror(err));
    return 0;
}
