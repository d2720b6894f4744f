/* test_symbolize_reload.c - a module recorded again at the same address (dlopen, dlclose, dlopen) keeps its symbols */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "selfmap.h"
#include "tracebuild.h"

/* A function of this test binary, for the trace's stack to name. */
__attribute__((noinline)) int hs_test_reloaded_site(int x);
__attribute__((noinline)) int hs_test_reloaded_site(int x)
{
	return x * 3 + 1;
}

int main(void)
{
	static const char *const argv[] = { "prog" };
	char exe[4096], path[] = "/tmp/hs-reload-XXXXXX";
	struct self self;
	struct hs_frame fr[8];
	struct hs_event ev;
	struct hs_reader *r = NULL;
	struct tb t;
	uint64_t ret = (uint64_t)(uintptr_t)&hs_test_reloaded_site + 4;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int fd, k;

	if (n <= 0 || find_self(&self) < 0 || tb_init(&t, 0, 0, 1, 1) < 0) {
		check_report(0, "symbolize-reload-setup", "cannot find this binary's segments");
		return 1;
	}
	exe[n] = 0;
	tb_process(&t, 1, 0, exe, 1, argv);
	/* loaded, unloaded and loaded again at the same place: two MODULE records for one image */
	tb_module(&t, 10, self.base, exe, NULL, 0, self.segs, self.nseg);
	tb_stack(&t, 1, 0, ret);
	tb_alloc(&t, 20, 1, HS_FN_MALLOC, 0x1000, 16, 1, 0);
	tb_module_unload(&t, 30, self.base);
	tb_module(&t, 40, self.base, exe, NULL, 0, self.segs, self.nseg);
	tb_alloc(&t, 50, 1, HS_FN_MALLOC, 0x2000, 16, 1, 0);
	if (tb_flush(&t) < 0 || (fd = mkstemp(path)) < 0) {
		check_report(0, "symbolize-reload-setup", "cannot write the trace");
		return 1;
	}
	close(fd);
	tb_write(&t.file, path);
	tb_free(&t);
	if (hs_reader_open(&r, path) < 0) {
		check_report(0, "symbolize-reload-open", "%s", hs_reader_error(r));
		goto out;
	}
	while (hs_reader_next(r, &ev) > 0)
		;
	k = hs_reader_symbolize(r, ret, fr, 8);
	check_report(k > 0 && fr[0].function && strcmp(fr[0].function, "hs_test_reloaded_site") == 0,
		     "symbolize-reload-function-named", "expected hs_test_reloaded_site, got %s (%d frames)",
		     k > 0 && fr[0].function ? fr[0].function : "(none)", k);
out:
	hs_reader_close(r);
	unlink(path);
	return 0;
}
