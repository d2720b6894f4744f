/* tmpdir.h - the unit tests' scratch directory under $TMPDIR (or /tmp), made or reported as a failed check */
#ifndef HS_TEST_TMPDIR_H
#define HS_TEST_TMPDIR_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* A new directory's path in dir; 0 after a "FAIL name" line when none could be made. mkdtemp asks _DEFAULT_SOURCE. */
__attribute__((unused)) static int check_tmpdir(char *dir, size_t cap, const char *name)
{
	snprintf(dir, cap, "%s/hs-unit-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir))
		return 1;
	check_report(0, name, "expected a temp dir got %s", strerror(errno));
	return 0;
}

#endif
