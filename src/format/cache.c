/* cache.c - the cache directory's place, shared by the debug files and the reader's probe */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cache.h"

int hs_cache_path(char *buf, size_t n, const char *leaf)
{
	const char *d = getenv("HEAPSCOPE_CACHE_DIR"), *x, *h;
	int w;

	if (d)
		w = (!*d || !strcmp(d, "off")) ? -1 : snprintf(buf, n, "%s/%s", d, leaf);
	else if ((x = getenv("XDG_CACHE_HOME")) && *x == '/')
		w = snprintf(buf, n, "%s/heapscope/%s", x, leaf);
	else if ((h = getenv("HOME")) && *h == '/')
		w = snprintf(buf, n, "%s/.cache/heapscope/%s", h, leaf);
	else
		w = -1;
	return w < 0 || (size_t)w >= n ? -1 : 0;
}

int hs_cache_mkdirs(char *path, size_t upto)
{
	for (size_t i = 1; i <= upto; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		char c = path[i];
		path[i] = '\0';
		int rc = mkdir(path, 0700);
		path[i] = c;
		if (rc < 0 && errno != EEXIST)
			return -1;
		if (c == '\0')
			break;
	}
	return 0;
}
