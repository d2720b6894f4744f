/* test_binary_dirs.c - a module's file found by hs_reader_set_binary_dirs, and the modules left unnamed and why */
#define _GNU_SOURCE
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "selfmap.h"
#include "tracebuild.h"

/* A function of this test binary, for the trace's stack to name. */
__attribute__((noinline)) int hs_test_binary_site(int x);
__attribute__((noinline)) int hs_test_binary_site(int x)
{
	return x * 5 + 2;
}

/* A trace of one allocation at ret, in a module recorded at path with build-id id. */
static int write_trace(const char *out, const struct self *self, const char *path, const uint8_t *id, size_t idlen,
		       uint64_t ret)
{
	static const char *const argv[] = { "prog" };
	struct tb t;

	if (tb_init(&t, 0, 0, 1, 1) < 0)
		return -1;
	tb_process(&t, 1, 0, path, 1, argv);
	tb_module(&t, 10, self->base, path, id, idlen, self->segs, self->nseg);
	tb_stack(&t, 1, 0, ret);
	tb_alloc(&t, 20, 1, HS_FN_MALLOC, 0x1000, 16, 1, 0);
	if (tb_flush(&t) < 0)
		return -1;
	tb_write(&t.file, out);
	tb_free(&t);
	return 0;
}

/* Opens out, reads it through, sets dirs (unless NULL) and symbolizes ret; the reader stays open in *r. */
static const char *name_of(struct hs_reader **r, const char *out, const char *dirs, uint64_t ret)
{
	struct hs_event ev;
	struct hs_frame fr[8];

	if (hs_reader_open(r, out) < 0)
		return "(cannot open)";
	if (dirs && hs_reader_set_binary_dirs(*r, dirs) < 0)
		return "(cannot set dirs)";
	while (hs_reader_next(*r, &ev) > 0)
		;
	if (hs_reader_symbolize(*r, ret, fr, 8) < 1)
		return "(no frame)";
	return fr[0].function ? fr[0].function : "(unnamed)";
}

int main(void)
{
	char exe[4096], dir[4096], out[] = "/tmp/hs-bindirs-XXXXXX", missing[4200];
	struct self self;
	struct hs_reader *r = NULL;
	uint64_t ret = (uint64_t)(uintptr_t)&hs_test_binary_site + 4, n_addr = 0;
	uint8_t id[64], other[20];
	const void *bits;
	const char *name, *path = "";
	enum hs_module_problem why = 0;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1), idlen = 0;
	int fd, k;
	Elf *e;

	if (n <= 0 || find_self(&self) < 0) {
		check_report(0, "binary-dirs-setup", "cannot find this binary's segments");
		return 1;
	}
	exe[n] = 0;
	elf_version(EV_CURRENT);
	if ((fd = open(exe, O_RDONLY)) >= 0 && (e = elf_begin(fd, ELF_C_READ, NULL)) != NULL) {
		idlen = dwelf_elf_gnu_build_id(e, &bits);
		if (idlen > 0 && (size_t)idlen <= sizeof(id))
			memcpy(id, bits, (size_t)idlen);
		elf_end(e);
	}
	if (fd >= 0)
		close(fd);
	if (idlen <= 0 || (fd = mkstemp(out)) < 0) {
		check_report(0, "binary-dirs-setup", "no build-id in '%s', or no temporary file", exe);
		return 1;
	}
	close(fd);
	snprintf(dir, sizeof(dir), "%s", exe);
	snprintf(missing, sizeof(missing), "/nonexistent-heapscope-dir/%s", basename(exe));

	/* the file is not at its recorded path: unnamed, and said so */
	write_trace(out, &self, missing, id, (size_t)idlen, ret);
	name = name_of(&r, out, NULL, ret);
	k = hs_reader_unnamed_module(r, 0, &path, &why, &n_addr);
	check_report(!strcmp(name, "(unnamed)") && k == 1 && !strcmp(path, missing) && why == HS_MODULE_MISSING &&
			     n_addr == 1 && !hs_reader_unnamed_module(r, 1, &path, &why, &n_addr),
		     "binary-dirs-missing-reported", "name %s, problem %d: '%s' why %d, %llu addresses", name, k, path,
		     (int)why, (unsigned long long)n_addr);
	check_report(hs_reader_set_binary_dirs(r, "/tmp") == -EBUSY, "binary-dirs-busy-after-symbolizing",
		     "setting the directories after symbolizing began did not give -EBUSY");
	hs_reader_close(r);

	/* the same trace, told the directory that holds the binary: found by its name there */
	name = name_of(&r, out, dirname(dir), ret);
	check_report(!strcmp(name, "hs_test_binary_site") && !hs_reader_unnamed_module(r, 0, &path, &why, &n_addr),
		     "binary-dirs-found-by-name", "got %s", name);
	hs_reader_close(r);

	/* the file at its path is another build: never its names */
	memset(other, 0xab, sizeof(other));
	write_trace(out, &self, exe, other, sizeof(other), ret);
	name = name_of(&r, out, NULL, ret);
	k = hs_reader_unnamed_module(r, 0, &path, &why, &n_addr);
	check_report(!strcmp(name, "(unnamed)") && k == 1 && why == HS_MODULE_OTHER_BUILD, "binary-dirs-other-build",
		     "name %s, problem %d why %d", name, k, (int)why);
	hs_reader_close(r);
	unlink(out);
	return 0;
}
