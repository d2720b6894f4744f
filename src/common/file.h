/* file.h - opens a path that must be a regular file, without blocking on whatever else stands there */
#ifndef HS_COMMON_FILE_H
#define HS_COMMON_FILE_H

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A read-only descriptor of path, or -errno; -EISDIR for a directory and
 * -ENODEV for anything else but a regular file. Paths come from traces
 * recorded elsewhere (module paths) and from users: open() alone would
 * wait forever on a FIFO without a writer, and reading a terminal or a
 * device would wait, or never end. st (if not NULL) gets the file's stat.
 */
static inline int hs_open_regular(const char *path, struct stat *st)
{
	struct stat own;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), err;

	if (!st)
		st = &own;
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		err = -errno;
		goto fail;
	}
	if (!S_ISREG(st->st_mode)) {
		err = S_ISDIR(st->st_mode) ? -EISDIR : -ENODEV;
		goto fail;
	}
	/* no meaning for a regular file's reads, but not left for whoever gets the descriptor */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		err = -errno;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return err;
}

/*
 * 1 when a tracer still writes the trace open at fd: it holds an exclusive
 * flock on it while it does (tracer/writer.c). Tested with a shared lock,
 * which readers of the file take side by side, and given back at once.
 */
static inline int hs_file_being_written(int fd)
{
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
		return 0;
	}
	return errno == EWOULDBLOCK;
}

#endif
