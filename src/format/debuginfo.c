/* debuginfo.c - finds a module's separate debug file for libdw, and keeps inflated copies of compressed ones */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <elfutils/libdwelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "../common/file.h"
#include "../common/size.h"
#include "cache.h"
#include "debuginfo.h"
#include "reader-internal.h"

/*
 * Why not dwfl_standard_find_debuginfo alone:
 *
 * - Debian's -dbg packages compress their DWARF, and libdw inflates every
 *   debug section of a file when it opens it: libc6-dbg's 4 MB become
 *   10 MB, 45 ms of every analysis, four fifths of a small trace's. So a
 *   compressed debug file is inflated once into a cache named by its
 *   build-id ($XDG_CACHE_HOME/heapscope/debug), and later runs map that.
 * - When nothing is found on disk, elfutils 0.188 dlopens libdebuginfod
 *   (curl, gnutls, kerberos: twenty libraries, 6 ms) even with no server
 *   to ask. Only when DEBUGINFOD_URLS names one is that worth it.
 *
 * - The cache holds at most HEAPSCOPE_CACHE_MAX bytes (2 GiB unless set):
 *   past that, the files used least lately go. A hit marks its file used
 *   (its mtime) at most once an hour, so that reading it costs no write.
 *
 * The search is the standard one (GDB's and elfutils' rules): by build-id
 * under /usr/lib/debug/.build-id, then by .gnu_debuglink name beside the
 * file, in its .debug directory and under /usr/lib/debug; a candidate is
 * taken only if its build-id is the module's.
 */

#define DEBUG_ROOT "/usr/lib/debug"
#define CACHE_FREE_MIN (1ull << 30)  /* leave a disk at least this much free */
#define CACHE_STALE_S 600            /* a temporary file this old was left by a writer that died */
#define CACHE_MAX_DEFAULT (2ull << 30)
#define CACHE_TOUCH_S 3600           /* a hit marks its file used at most this often */

static int want_debuginfod(void)
{
	const char *u = getenv("DEBUGINFOD_URLS");

	return u && u[strspn(u, " \t")];
}

/* "<root>/.build-id/ab/cdef....debug" */
static int build_id_path(char *buf, size_t n, const char *root, const unsigned char *id, int len)
{
	size_t k;
	int w = snprintf(buf, n, "%s/.build-id/%02x/", root, id[0]);

	if (w < 0 || (size_t)w >= n)
		return -1;
	k = (size_t)w;
	for (int i = 1; i < len; i++) {
		if (k + 3 >= n)
			return -1;
		k += (size_t)snprintf(buf + k, n - k, "%02x", id[i]);
	}
	if (k + sizeof(".debug") > n)
		return -1;
	memcpy(buf + k, ".debug", sizeof(".debug"));
	return 0;
}

/* An open ELF file whose build-id is id, or -1. */
static int open_matching(const char *path, const unsigned char *id, int len, int *compressed)
{
	int fd = hs_open_regular(path, NULL);
	Elf *e;
	const void *bits;
	int ok = 0;

	if (fd < 0)
		return -1;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF && dwelf_elf_gnu_build_id(e, &bits) == len && !memcmp(bits, id, (size_t)len)) {
		ok = 1;
		if (compressed) {
			Elf_Scn *scn = NULL;
			GElf_Shdr sh;
			*compressed = 0;
			while ((scn = elf_nextscn(e, scn)) != NULL)
				if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED))
					*compressed = 1;
		}
	}
	elf_end(e);
	if (!ok) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The file in, its compressed sections inflated, written to fd: sections
 * in their order and alignment, program headers as they were (a debug
 * file's segments hold no bytes).
 */
static int write_inflated(Elf *in, int fd)
{
	Elf *out = NULL;
	GElf_Ehdr eh;
	size_t phnum, shnum;
	uint64_t off;
	Elf_Scn *scn = NULL;
	int rc = -1;

	if (!gelf_getehdr(in, &eh) || elf_getphdrnum(in, &phnum) < 0 || elf_getshdrnum(in, &shnum) < 0 ||
	    shnum >= SHN_LORESERVE || eh.e_shstrndx >= SHN_LORESERVE)
		return -1;
	out = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!out || !gelf_newehdr(out, gelf_getclass(in)))
		goto out;
	off = eh.e_ehsize;
	if (phnum) {
		if (!gelf_newphdr(out, phnum))
			goto out;
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(in, (int)i, &ph) || !gelf_update_phdr(out, (int)i, &ph))
				goto out;
		}
		eh.e_phoff = off;
		off += (uint64_t)phnum * eh.e_phentsize;
	}
	while ((scn = elf_nextscn(in, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Scn *o;
		Elf_Data *d, *od;
		uint64_t align;

		if (!gelf_getshdr(scn, &sh))
			goto out;
		if ((sh.sh_flags & SHF_COMPRESSED) && (elf_compress(scn, 0, 0) < 0 || !gelf_getshdr(scn, &sh)))
			goto out;
		o = elf_newscn(out);
		if (!o)
			goto out;
		d = elf_getdata(scn, NULL);
		if (d) {
			od = elf_newdata(o);
			if (!od)
				goto out;
			*od = *d;
			od->d_off = 0;
		}
		align = sh.sh_addralign > 1 ? sh.sh_addralign : 1;
		off = (off + align - 1) & ~(align - 1);
		sh.sh_offset = off;
		if (sh.sh_type != SHT_NOBITS)
			off += sh.sh_size;
		if (!gelf_update_shdr(o, &sh))
			goto out;
	}
	eh.e_shoff = (off + 7) & ~7ull;
	if (!gelf_update_ehdr(out, &eh))
		goto out;
	elf_flagelf(out, ELF_C_SET, ELF_F_LAYOUT);
	if (elf_update(out, ELF_C_WRITE) < 0)
		goto out;
	rc = 0;
out:
	elf_end(out);
	return rc;
}

/*
 * Each writer has a temporary file of its own (dst.PID.tmp), so writers
 * never share one; the files of writers killed midway are removed here by
 * the next writer of the same directory, once they are too old to be a
 * live writer's.
 */
static void sweep_stale(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	time_t now = time(NULL);

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		struct stat st;
		if (n < 4 || strcmp(e->d_name + n - 4, ".tmp") != 0)
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    now - st.st_mtime >= CACHE_STALE_S)
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

int hs_debug_cache_max(uint64_t *bytes)
{
	const char *v = getenv("HEAPSCOPE_CACHE_MAX");

	*bytes = CACHE_MAX_DEFAULT;
	return v ? hs_parse_size(v, bytes) : 0;
}

struct cached_file {
	time_t used;
	uint64_t size;
	char name[2 + 1 + NAME_MAX + 1];   /* "ab/cdef...debug" */
};

static int by_use(const void *a, const void *b)
{
	const struct cached_file *x = a, *y = b;

	return x->used < y->used ? -1 : x->used > y->used;
}

/*
 * Files of the cache's .build-id directory at root, the least lately used
 * first, removed until the rest fit in max bytes; keep ("ab/cdef...debug",
 * just written) stays. Another process that has one of them open keeps
 * reading it.
 */
static void evict(const char *root, uint64_t max, const char *keep)
{
	struct cached_file *f = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	DIR *top = opendir(root);
	struct dirent *e;

	if (!top)
		return;
	while ((e = readdir(top)) != NULL) {
		DIR *sub;
		struct dirent *g;
		int fd;
		if (e->d_name[0] == '.' || strlen(e->d_name) != 2)
			continue;
		if ((fd = openat(dirfd(top), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			continue;
		if (!(sub = fdopendir(fd))) {
			close(fd);
			continue;
		}
		while ((g = readdir(sub)) != NULL) {
			size_t len = strlen(g->d_name);
			struct stat st;
			if (len < 7 || strcmp(g->d_name + len - 6, ".debug") != 0 ||
			    fstatat(dirfd(sub), g->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
				continue;
			if (n == cap) {
				struct cached_file *m = realloc(f, (cap = cap ? 2 * cap : 64) * sizeof(*f));
				if (!m)
					break;
				f = m;
			}
			f[n].used = st.st_mtime;
			f[n].size = (uint64_t)st.st_size;
			snprintf(f[n].name, sizeof(f[n].name), "%s/%s", e->d_name, g->d_name);
			total += f[n++].size;
		}
		closedir(sub);
	}
	if (total > max) {
		qsort(f, n, sizeof(*f), by_use);
		for (size_t i = 0; i < n && total > max; i++) {
			if (!strcmp(f[i].name, keep))
				continue;
			if (unlinkat(dirfd(top), f[i].name, 0) == 0 || errno == ENOENT)
				total -= f[i].size;
		}
	}
	free(f);
	closedir(top);
}

/*
 * An inflated copy of the debug file open at src_fd in the cache, opened;
 * or -1, and the caller goes on with src_fd. Written under a name of its
 * own and renamed, so that no run ever reads half a file.
 */
static int cache_inflated(int src_fd, const char *dst, const unsigned char *id, int len)
{
	char tmp[PATH_MAX + 32], dir[PATH_MAX];
	struct statvfs vfs;
	struct stat st;
	int fd = -1, rc = -1;
	Elf *in = NULL;
	uint64_t max;
	char *slash;

	snprintf(dir, sizeof(dir), "%s", dst);
	slash = strrchr(dir, '/');
	if (!slash || hs_debug_cache_max(&max) < 0 || fstat(src_fd, &st) < 0 || (uint64_t)st.st_size > max ||
	    hs_cache_mkdirs(dir, (size_t)(slash - dir)) < 0)
		return -1;
	*slash = '\0';
	/* an inflated file is about 2.5 times the compressed one */
	if (statvfs(dir, &vfs) < 0 || (uint64_t)vfs.f_bavail * vfs.f_frsize < CACHE_FREE_MIN + 3 * (uint64_t)st.st_size)
		goto out;
	sweep_stale(dir);
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", dst, (long)getpid());
	fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		goto out;
	in = elf_begin(src_fd, ELF_C_READ_MMAP, NULL);
	/* a file the cache cannot hold even alone is read compressed, as without a cache */
	if (!in || write_inflated(in, fd) < 0 || fstat(fd, &st) < 0 || (uint64_t)st.st_size > max ||
	    rename(tmp, dst) < 0) {
		unlink(tmp);
		goto out;
	}
	/* dir is ".../.build-id/ab": the cache's .build-id directory is its parent, and dst names the file under it */
	if ((slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		evict(dir, max, dst + (slash - dir) + 1);
	}
	rc = 0;
out:
	elf_end(in);
	if (fd >= 0)
		close(fd);
	return rc < 0 ? -1 : open_matching(dst, id, len, NULL);
}

/* The debug file at path, if it is the module's: from the cache when it is compressed. */
static int take(const char *path, const char *cached, const unsigned char *id, int len, char **name)
{
	int compressed = 0, fd = open_matching(path, id, len, &compressed);

	if (fd < 0)
		return -1;
	if (compressed && cached) {
		int c = cache_inflated(fd, cached, id, len);
		if (c >= 0) {
			close(fd);
			fd = c;
			path = cached;
		}
	}
	*name = strdup(path);
	return fd;
}

/* By .gnu_debuglink name (or the file's own name plus .debug) beside the file, in its .debug, under /usr/lib/debug. */
static int by_debuglink(const char *file, const char *link, const char *cached, const unsigned char *id, int len,
			char **name)
{
	char dir[PATH_MAX], base[NAME_MAX + 8], path[PATH_MAX * 2];
	const char *slash = file ? strrchr(file, '/') : NULL;
	int fd = -1;

	if (!slash || (size_t)(slash - file) >= sizeof(dir))
		return -1;
	memcpy(dir, file, (size_t)(slash - file));
	dir[slash - file] = '\0';
	if (!link) {
		if (snprintf(base, sizeof(base), "%s.debug", slash + 1) >= (int)sizeof(base))
			return -1;
		link = base;
	}
	if (link[0] == '/')
		return take(link, cached, id, len, name);
	const char *forms[] = { "%s/%s", "%s/.debug/%s", DEBUG_ROOT "%s/%s" };
	for (size_t i = 0; i < sizeof(forms) / sizeof(*forms) && fd < 0; i++) {
		snprintf(path, sizeof(path), forms[i], dir, link);
		if (strcmp(path, file) != 0)
			fd = take(path, cached, id, len, name);
	}
	return fd;
}

int hs_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base, const char *file_name,
		      const char *debuglink_file, GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *id;
	const char *debug_name = NULL;
	GElf_Addr vaddr;
	char root[PATH_MAX], cached[PATH_MAX + 64], sys[PATH_MAX];
	int len, fd, have_cache;

	elf_version(EV_CURRENT);
	len = dwfl_module_build_id(mod, &id, &vaddr);
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug_name);
	/*
	 * With a debug file already found, libdwfl is asking for its dwz
	 * file (.gnu_debugaltlink, whose name comes with no CRC), which is
	 * not the module's build-id: left to the standard search. So is a
	 * module without a build-id, for which there is nothing to check a
	 * candidate against (and debuginfod is never asked).
	 */
	if (len <= 0 || debug_name || (debuglink_file && debuglink_crc == 0))
		goto standard;
	have_cache = hs_cache_path(root, sizeof(root), "debug") == 0 && build_id_path(cached, sizeof(cached), root, id, len) == 0;
	if (have_cache && (fd = open_matching(cached, id, len, NULL)) >= 0) {
		struct stat st;
		if (fstat(fd, &st) == 0 && time(NULL) - st.st_mtime >= CACHE_TOUCH_S)
			futimens(fd, NULL);   /* used now: the last to be evicted */
		*debuginfo_file_name = strdup(cached);
		return fd;
	}
	if (build_id_path(sys, sizeof(sys), DEBUG_ROOT, id, len) == 0 &&
	    (fd = take(sys, have_cache ? cached : NULL, id, len, debuginfo_file_name)) >= 0)
		return fd;
	fd = by_debuglink(file_name, debuglink_file, have_cache ? cached : NULL, id, len, debuginfo_file_name);
	if (fd >= 0 || !want_debuginfod()) {
		errno = fd >= 0 ? 0 : ENOENT;
		return fd;
	}
standard:
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
					    debuginfo_file_name);
}
