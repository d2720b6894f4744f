/* readback.h - a test trace's allocations and frees read back, by one thread or two, with or without addresses (needs setenv: _DEFAULT_SOURCE) */
#ifndef HS_TEST_READBACK_H
#define HS_TEST_READBACK_H

#include <stdio.h>
#include <stdlib.h>

#include "heapscope/reader.h"

/*
 * A file's allocations and frees, at most max of them, into ev: their
 * count, or -1 with the reader's error in err. bare: without addresses
 * (hs_reader_skip_addresses, the flame graph's way); ahead: in batches,
 * a second thread decoding (HEAPSCOPE_READER_THREADS=1), else one event
 * at a time on the caller's (hs_reader_next, the other copy of the fast
 * path).
 */
__attribute__((unused))
static long readback_events(const char *path, int bare, int ahead, struct hs_event *ev, long max, char *err,
			   size_t errlen)
{
	struct hs_reader *r = NULL;
	struct hs_event e[16];
	long n = 0;
	int rc;

	err[0] = 0;
	setenv("HEAPSCOPE_READER_THREADS", ahead ? "1" : "0", 1);
	if ((rc = hs_reader_open(&r, path)) == 0 && (!bare || (rc = hs_reader_skip_addresses(r)) == 0)) {
		while ((rc = ahead ? hs_reader_next_batch(r, e, 16) : hs_reader_next(r, e)) > 0)
			for (int i = 0; i < rc; i++)
				if ((e[i].kind == HS_EVENT_ALLOC || e[i].kind == HS_EVENT_FREE) && n < max)
					ev[n++] = e[i];
	}
	unsetenv("HEAPSCOPE_READER_THREADS");
	if (rc < 0)
		snprintf(err, errlen, "%s", r ? hs_reader_error(r) : "cannot open");
	hs_reader_close(r);
	return rc < 0 ? -1 : n;
}

#endif
