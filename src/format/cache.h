/* cache.h - where heapscope keeps what it learnt from one run for the next (debug files, the reader's probe) */
#ifndef HS_FORMAT_CACHE_H
#define HS_FORMAT_CACHE_H

#include <stddef.h>

/*
 * The path of leaf in heapscope's cache directory: $HEAPSCOPE_CACHE_DIR,
 * else $XDG_CACHE_HOME/heapscope, else ~/.cache/heapscope. -1 when there
 * is none (HEAPSCOPE_CACHE_DIR empty or "off", no HOME) or it does not fit.
 */
int hs_cache_path(char *buf, size_t n, const char *leaf);

/* Makes the directories of path up to its byte upto (mode 0700); -1 when one cannot be made. */
int hs_cache_mkdirs(char *path, size_t upto);

#endif
