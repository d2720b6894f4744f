/* unwpipe.h - whether libunwind started in this process: the tracer moves libunwind's pipe to 4000 or above */
#ifndef UNWPIPE_H
#define UNWPIPE_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* a pipe at 4000 or above: libunwind's, which the tracer moves there when libunwind starts */
static inline int libunwind_pipe(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], target[64];
	int found = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		ssize_t n;
		if (atoi(e->d_name) < 4000)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = 0;
			found |= strncmp(target, "pipe:", 5) == 0;
		}
	}
	closedir(d);
	return found;
}

#endif
