/* rerun.c - an analysis of a large trace runs itself again with a heap of transparent huge pages */
#define _GNU_SOURCE /* gnu_get_libc_version */
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/*
 * An analysis fills tens of MB of fresh heap, and each 4 KiB page of it
 * costs a fault (7-13 us on the benchmark's machine): `leaks` on clang's
 * trace took 11,600 of them, a third of its time. glibc backs its heap
 * with transparent huge pages only when told so before it starts
 * (GLIBC_TUNABLES=glibc.malloc.hugetlb=1, glibc 2.35 on), and the kernel's
 * usual setting gives them only to memory that asks ("madvise"). So the
 * first trace opened, if large, has the command run again with the
 * tunable: leaks on clang 336 -> 189 ms and 11,594 -> 2,019 faults.
 * The run costs an exec (3 ms), which a small trace would not win back.
 */
#define RERUN_MIN_BYTES (64u << 10)
#define TUNABLE "glibc.malloc.hugetlb="
/* what GLIBC_TUNABLES was before the rerun set it: "-" unset, else "=" and the value */
#define WAS_ENV "HEAPSCOPE_TUNABLES_WERE"

static char **saved_argv;
static int decided;

/* GLIBC_TUNABLES as WAS_ENV says it was, and WAS_ENV gone */
static void tunables_restore(const char *was)
{
	if (was[0] == '=')
		setenv("GLIBC_TUNABLES", was + 1, 1);
	else
		unsetenv("GLIBC_TUNABLES");
	unsetenv(WAS_ENV);
}

void hs_cli_rerun_init(int argc, char **argv)
{
	const char *was = getenv(WAS_ENV);

	/* the array, not the strings: a parser may reorder it, none writes into the words */
	saved_argv = malloc(((size_t)argc + 1) * sizeof(*saved_argv));
	if (saved_argv)
		memcpy(saved_argv, argv, ((size_t)argc + 1) * sizeof(*saved_argv));
	if (!was)
		return;
	/* the rerun: glibc has read the tunable, and the environment is the user's again */
	decided = 1;
	tunables_restore(was);
}

/* The kernel gives huge pages only where asked for ("madvise"): with "always" the heap has them already. */
static int thp_on_request(void)
{
	char buf[128];
	ssize_t n;
	int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strstr(buf, "[madvise]") != NULL;
}

static int glibc_has_tunable(void)
{
	int major = 0, minor = 0;

	return sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) == 2 &&
	       (major > 2 || (major == 2 && minor >= 35));
}

void hs_cli_rerun_for(const char *path)
{
	const char *off = getenv("HEAPSCOPE_HUGE_PAGES"), *old = getenv("GLIBC_TUNABLES");
	struct stat st;
	char *tunables, *was;
	size_t n;

	if (decided)
		return;
	decided = 1;
	if (!saved_argv || (off && !strcmp(off, "0")) || (old && strstr(old, TUNABLE)))
		return;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < RERUN_MIN_BYTES)
		return;
	if (!glibc_has_tunable() || !thp_on_request())
		return;
	n = old ? strlen(old) : 0;
	tunables = malloc(n + 1 + sizeof(TUNABLE "1"));
	was = malloc(n + 2);
	if (!tunables || !was)
		goto out;
	snprintf(tunables, n + 1 + sizeof(TUNABLE "1"), "%s%s" TUNABLE "1", old ? old : "", n ? ":" : "");
	snprintf(was, n + 2, "%s%s", old ? "=" : "-", old ? old : "");
	if (setenv(WAS_ENV, was, 1) == 0 && setenv("GLIBC_TUNABLES", tunables, 1) == 0) {
		fflush(NULL);
		execv("/proc/self/exe", saved_argv);
	}
	/* no /proc, or no exec: the analysis runs here, as it would have */
	tunables_restore(was);
out:
	free(tunables);
	free(was);
}
