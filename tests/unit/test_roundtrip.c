/* test_roundtrip.c - a trace built with the encoder, read back with the public reader, field by field */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "tmpdir.h"
#include "heapscope/reader.h"
#include "tracebuild.h"

enum { MAXEV = 128 };

struct expect {
	struct hs_event ev;
	int check_tid;              /* meta records carry no thread of their own */
	uint64_t mod_lo, mod_hi;    /* for MODULE */
	const char *mod_path;
	const uint8_t *mod_id;
	size_t mod_id_len;
	uint64_t calls[HS_FN_COUNT], bytes[HS_FN_COUNT];
};

static struct expect exp_ev[MAXEV];
static int nexp;

static struct expect *push(enum hs_event_kind kind, uint64_t ts, uint32_t tid)
{
	struct expect *e = &exp_ev[nexp++];
	memset(e, 0, sizeof(*e));
	e->ev.kind = kind;
	e->ev.time_ns = ts;
	e->ev.tid = tid;
	e->check_tid = 1;
	return e;
}

/* Builders that write the record and remember what the reader must return. */
static void alloc(struct tb *t, uint64_t ts, uint32_t tid, int fn, uint64_t ptr, uint64_t size, uint32_t stack,
		  uint64_t old_ptr)
{
	struct expect *e = push(HS_EVENT_ALLOC, ts, tid);
	tb_alloc(t, ts, tid, fn, ptr, size, stack, old_ptr);
	e->ev.fn = fn;
	e->ev.ptr = ptr;
	e->ev.size = size;
	e->ev.stack = stack;
	e->ev.old_ptr = old_ptr;
}

static void xfree(struct tb *t, uint64_t ts, uint32_t tid, int fn, uint64_t ptr)
{
	struct expect *e = push(HS_EVENT_FREE, ts, tid);
	tb_free_rec(t, ts, tid, fn, ptr);
	e->ev.fn = fn;
	e->ev.ptr = ptr;
}

static void xmmap(struct tb *t, uint64_t ts, uint32_t tid, uint64_t addr, uint64_t len, uint32_t prot,
		  uint32_t flags, uint32_t stack)
{
	struct expect *e = push(HS_EVENT_MMAP, ts, tid);
	tb_mmap(t, ts, tid, addr, len, prot, flags, stack);
	e->ev.fn = HS_FN_MMAP;
	e->ev.addr = addr;
	e->ev.len = len;
	e->ev.prot = prot;
	e->ev.flags = flags;
	e->ev.stack = stack;
}

static void xmunmap(struct tb *t, uint64_t ts, uint32_t tid, uint64_t addr, uint64_t len)
{
	struct expect *e = push(HS_EVENT_MUNMAP, ts, tid);
	tb_munmap(t, ts, tid, addr, len);
	e->ev.fn = HS_FN_MUNMAP;
	e->ev.addr = addr;
	e->ev.len = len;
}

static void xmremap(struct tb *t, uint64_t ts, uint32_t tid, uint64_t addr, uint64_t len, uint64_t na,
		    uint64_t nl, uint32_t stack)
{
	struct expect *e = push(HS_EVENT_MREMAP, ts, tid);
	tb_mremap(t, ts, tid, addr, len, na, nl, stack);
	e->ev.fn = HS_FN_MREMAP;
	e->ev.addr = addr;
	e->ev.len = len;
	e->ev.new_addr = na;
	e->ev.new_len = nl;
	e->ev.stack = stack;
}

static void xbrk(struct tb *t, uint64_t ts, uint32_t tid, int fn, uint64_t old_brk, uint64_t new_brk, uint32_t stack)
{
	struct expect *e = push(HS_EVENT_BRK, ts, tid);
	tb_brk(t, ts, tid, fn, old_brk, new_brk, stack);
	e->ev.fn = fn;
	e->ev.addr = old_brk;
	e->ev.new_addr = new_brk;
	e->ev.stack = stack;
}

static void xrss(struct tb *t, uint64_t ts, uint64_t rss)
{
	struct expect *e = push(HS_EVENT_RSS, ts, 0);
	tb_rss(t, ts, rss);
	e->check_tid = 0;
	e->ev.rss = rss;
}

static void xmarker(struct tb *t, uint64_t ts, uint32_t tid, const char *label, size_t len)
{
	struct expect *e = push(HS_EVENT_MARKER, ts, tid);
	tb_marker(t, ts, tid, label, len);
	e->ev.label = label;
	e->ev.label_len = len;
}

static void xmodule(struct tb *t, uint64_t ts, uint64_t base, const char *path, const uint8_t *id, size_t idlen,
		    const struct tb_seg *segs, size_t nseg)
{
	struct expect *e = push(HS_EVENT_MODULE, ts, 0);
	tb_module(t, ts, base, path, id, idlen, segs, nseg);
	e->check_tid = 0;
	e->mod_path = path;
	e->mod_id = id;
	e->mod_id_len = idlen;
	e->mod_lo = UINT64_MAX;
	e->mod_hi = 0;
	for (size_t i = 0; i < nseg; i++) {
		if (base + segs[i].vaddr < e->mod_lo)
			e->mod_lo = base + segs[i].vaddr;
		if (base + segs[i].vaddr + segs[i].memsz > e->mod_hi)
			e->mod_hi = base + segs[i].vaddr + segs[i].memsz;
	}
	if (!nseg)
		e->mod_lo = e->mod_hi = base;
	e->ev.addr = base; /* compared with module->base */
}

static void xunload(struct tb *t, uint64_t ts, uint64_t base)
{
	struct expect *e = push(HS_EVENT_MODULE_UNLOAD, ts, 0);
	tb_module_unload(t, ts, base);
	e->check_tid = 0;
	e->ev.addr = base;
}

static void xtotals(struct tb *t, uint64_t ts, size_t n, const uint64_t *calls, const uint64_t *bytes)
{
	struct expect *e = push(HS_EVENT_TOTALS, ts, 0);
	tb_totals(t, ts, n, calls, bytes);
	e->check_tid = 0;
	for (size_t i = 0; i < n && i < HS_FN_COUNT; i++) {
		e->calls[i] = calls[i];
		e->bytes[i] = bytes[i];
	}
}

static void xend(struct tb *t, uint64_t ts, unsigned reason)
{
	struct expect *e = push(HS_EVENT_END, ts, 0);
	tb_end(t, ts, reason);
	e->check_tid = 0;
	e->ev.flags = reason;
}

static const char *kind_name(int k)
{
	static const char *const n[] = { "alloc", "free", "mmap", "munmap", "mremap", "brk", "rss", "marker",
					 "module", "module-unload", "totals", "end" };
	return k >= 0 && k < (int)(sizeof(n) / sizeof(n[0])) ? n[k] : "?";
}

#define FIELD(f)                                                                                        \
	if ((uint64_t)g->f != (uint64_t)x->ev.f)                                                        \
		o += snprintf(msg + o, sizeof(msg) - o > 0 ? sizeof(msg) - o : 0,                       \
			      " " #f ": expected 0x%" PRIx64 " got 0x%" PRIx64 ";", (uint64_t)x->ev.f,    \
			      (uint64_t)g->f);

static void compare(int i, const struct expect *x, const struct hs_event *g)
{
	char name[80], msg[1024];
	int o = 0;

	snprintf(name, sizeof(name), "roundtrip-event-%02d-%s", i, kind_name(x->ev.kind));
	msg[0] = 0;
	FIELD(kind);
	FIELD(time_ns);
	if (x->check_tid) {
		FIELD(tid);
	}
	FIELD(fn);
	FIELD(stack);
	/* only the fields of the event's kind: the kinds share their bytes (reader.h) */
	switch (x->ev.kind) {
	case HS_EVENT_ALLOC:
	case HS_EVENT_FREE:
		FIELD(ptr);
		FIELD(size);
		FIELD(old_ptr);
		break;
	case HS_EVENT_RSS:
		FIELD(rss);
		break;
	case HS_EVENT_MODULE: {
		const struct hs_module *m = g->module;
		if (!m)
			o += snprintf(msg + o, sizeof(msg) - o, " module: NULL;");
		else if (m->base != x->ev.addr || m->lo != x->mod_lo || m->hi != x->mod_hi ||
			 m->load_time_ns != x->ev.time_ns || !m->path || strcmp(m->path, x->mod_path) != 0 ||
			 m->build_id_len != x->mod_id_len ||
			 (x->mod_id_len && memcmp(m->build_id, x->mod_id, x->mod_id_len) != 0))
			o += snprintf(msg + o, sizeof(msg) - o,
				      " module: expected base=0x%" PRIx64 " lo=0x%" PRIx64 " hi=0x%" PRIx64
				      " path=%s idlen=%zu got base=0x%" PRIx64 " lo=0x%" PRIx64 " hi=0x%" PRIx64
				      " path=%s idlen=%zu;",
				      x->ev.addr, x->mod_lo, x->mod_hi, x->mod_path, x->mod_id_len, m->base, m->lo, m->hi,
				      m->path ? m->path : "(null)", m->build_id_len);
		break;
	}
	case HS_EVENT_MARKER:
	case HS_EVENT_DISABLED:
		if (g->label_len != x->ev.label_len || !g->label || memcmp(g->label, x->ev.label, x->ev.label_len) != 0)
			o += snprintf(msg + o, sizeof(msg) - o, " label: expected \"%.*s\" got \"%.*s\";",
				      (int)x->ev.label_len, x->ev.label, g->label ? (int)g->label_len : 6,
				      g->label ? g->label : "(null)");
		break;
	case HS_EVENT_TOTALS:
		if (!g->calls || !g->bytes)
			o += snprintf(msg + o, sizeof(msg) - o, " calls/bytes: NULL;");
		else
			for (int k = 0; k < HS_FN_COUNT; k++)
				if (g->calls[k] != x->calls[k] || g->bytes[k] != x->bytes[k]) {
					o += snprintf(msg + o, sizeof(msg) - o,
						      " totals[%d]: expected %" PRIu64 "/%" PRIu64 " got %" PRIu64
						      "/%" PRIu64 ";",
						      k, x->calls[k], x->bytes[k], g->calls[k], g->bytes[k]);
					break;
				}
		break;
	default:
		FIELD(addr);
		FIELD(len);
		FIELD(new_addr);
		FIELD(new_len);
		FIELD(prot);
		FIELD(flags);
		break;
	}
	check_report(msg[0] == 0, name, "%s", msg + 1);
}

static char dir[256];

/* Builds the trace, returns its path. */
static const char *build(void)
{
	static char path[300];
	static const char *const argv[] = { "prog", "-x", "", "a b", "\xc3\xa9t\xc3\xa9" };
	static const uint8_t build_id[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0 };
	static const struct tb_seg segs[] = {
		{ 0x0, 0x1000, 4, 0 },
		{ 0x1000, 0x5234, 5, 0x1000 },
		{ 0x7000, 0x800, 6, 0x6000 },
	};
	static const char label[] = "phase\0two"; /* an embedded NUL: length, not C string */
	uint64_t calls[HS_FN_COUNT + 3], bytes[HS_FN_COUNT + 3];
	struct tb t;

	if (tb_init(&t, HS_FLAG_SAMPLED, 4096, 1700000000123456789ull, 4242) < 0)
		return NULL;

	/* chunk 1 */
	tb_process(&t, 4242, 17, "/usr/bin/prog", 5, argv);
	tb_stack(&t, 1, 0, 0x401000);
	tb_stack(&t, 2, 1, 0x402000);
	tb_stack(&t, 3, 2, 0x403000);
	tb_stack(&t, 4, 1, 0xffffffffffffff00ull);
	xmodule(&t, 10, 0x555555554000ull, "/usr/bin/prog", build_id, sizeof(build_id), segs, 3);
	xmodule(&t, 11, 0x7f0000000000ull, "/lib/x86_64-linux-gnu/libc.so.6", NULL, 0, NULL, 0);
	alloc(&t, 100, 7, HS_FN_MALLOC, 0x5555555a0010ull, 24, 3, 0);
	alloc(&t, 150, 7, HS_FN_CALLOC, 0x5555555a0040ull, 0, 2, 0);
	alloc(&t, 140, 7, HS_FN_POSIX_MEMALIGN, 0x5555555a1000ull, 4096, 0, 0); /* time goes back: late event */
	xfree(&t, 200, 7, HS_FN_REALLOC, 0x5555555a0010ull);
	alloc(&t, 200, 7, HS_FN_REALLOC, 0x7ffff0000010ull, 1u << 20, 4, 0x5555555a0010ull);
	alloc(&t, 210, 8, HS_FN_REALLOCARRAY, 0x10, 48, 1, 0x7ffff0000010ull); /* big negative pointer delta */
	alloc(&t, 211, 8, HS_FN_REALLOC, 0x20, 64, 1, 0x20); /* grown in place */
	xfree(&t, 220, 8, HS_FN_FREE, 0x20);
	xfree(&t, 221, 8, HS_FN_REALLOCARRAY, 0xfffffffffffffff0ull);
	alloc(&t, 230, 9, HS_FN_ALIGNED_ALLOC, 0xfffffffffffff000ull, UINT64_MAX, 4, 0);
	xmmap(&t, 300, 9, 0x7f1234560000ull, 1u << 21, 3, 0x22, 2);
	xmmap(&t, 301, 9, 0, 0, 0, 0, 0);
	xmunmap(&t, 310, 7, 0x7f1234560000ull, 4096);
	xmremap(&t, 320, 7, 0x7f1234561000ull, 8192, 0x7f2000000000ull, 1u << 22, 3);
	xbrk(&t, 330, 7, HS_FN_BRK, 0x555555600000ull, 0x555555621000ull, 1);
	xbrk(&t, 331, 7, HS_FN_SBRK, 0x555555621000ull, 0x555555620000ull, 0);
	xrss(&t, 340, 12345678);
	xmarker(&t, 350, 8, label, sizeof(label) - 1);
	xmarker(&t, 351, 7, "", 0);
	for (int i = 0; i < HS_FN_COUNT; i++) {
		calls[i] = (uint64_t)i * 1000 + 1;
		bytes[i] = (uint64_t)i << 40;
	}
	xtotals(&t, 360, HS_FN_COUNT, calls, bytes);
	if (tb_flush(&t) < 0)
		return NULL;

	/* chunk 2: time and pointer deltas start again from zero; the thread must be told again */
	tb_stack(&t, 5, 3, 0x404000); /* child of a node from chunk 1 */
	alloc(&t, 1000000, 7, HS_FN_MALLOC, 0x5555555b0000ull, 7, 5, 0);
	alloc(&t, 1000001, 7, HS_FN_MEMALIGN, 0x5555555b0100ull, 256, 5, 0);
	xfree(&t, 1000002, 7, HS_FN_FREE, 0x5555555b0000ull);
	xunload(&t, 1000010, 0x7f0000000000ull);
	xmmap(&t, 1000020, 10, UINT64_MAX - 0xfff, 0x1000, 7, 0xffffffffu, 5);
	for (int i = 0; i < HS_FN_COUNT + 3; i++) { /* more entries than known: the extra ones are skipped */
		calls[i] = (uint64_t)i + 7;
		bytes[i] = UINT64_MAX - (uint64_t)i;
	}
	xtotals(&t, 1000030, HS_FN_COUNT + 3, calls, bytes);
	if (tb_flush(&t) < 0)
		return NULL;

	/* chunk 3: empty payload is allowed */
	if (tb_flush(&t) < 0)
		return NULL;

	/* chunk 4 */
	alloc(&t, 2000000, 11, HS_FN_VALLOC, 0x4000, 4096, 0, 0);
	alloc(&t, 2000000, 11, HS_FN_PVALLOC, 0x3000, 4096, 0, 0);
	xend(&t, 2000100, HS_END_EXEC);
	if (tb_flush(&t) < 0)
		return NULL;

	snprintf(path, sizeof(path), "%s/roundtrip.hst", dir);
	if (tb_write(&t.file, path) < 0)
		return NULL;
	tb_free(&t);
	return path;
}

int main(void)
{
	struct hs_reader *r = NULL;
	struct hs_event ev;
	const struct hs_trace_info *info;
	const char *path;
	int rc, i = 0;

	if (!check_tmpdir(dir, sizeof(dir), "roundtrip-tmpdir"))
		return 0;
	path = build();
	if (!check_report(path != NULL, "roundtrip-build", "expected a trace file got an encoder or I/O error"))
		return 0;

	rc = hs_reader_open(&r, path);
	if (!check_report(rc == 0, "roundtrip-open", "expected 0 got %d (%s)", rc, r ? hs_reader_error(r) : "")) {
		hs_reader_close(r);
		return 0;
	}
	info = hs_reader_info(r);
	CHECK_U64("roundtrip-info-version-major", HS_VERSION_MAJOR, info->version_major);
	CHECK_U64("roundtrip-info-version-minor", HS_VERSION_MINOR, info->version_minor);
	CHECK_U64("roundtrip-info-sample-bytes", 4096, info->sample_bytes);
	CHECK_U64("roundtrip-info-start-realtime", 1700000000123456789ull, info->start_realtime_ns);
	CHECK_U64("roundtrip-info-pid", 4242, info->pid);
	/* reader.h: "exe and argv are known once the first chunk is read (open reads it)" */
	CHECK_STR("roundtrip-info-exe-after-open", "/usr/bin/prog", info->exe);

	while ((rc = hs_reader_next(r, &ev)) > 0) {
		if (i < nexp)
			compare(i, &exp_ev[i], &ev);
		i++;
	}
	CHECK_I64("roundtrip-next-ends-with-0", 0, rc);
	CHECK_I64("roundtrip-event-count", nexp, i);
	CHECK_STR("roundtrip-no-warning", "", hs_reader_warning(r));
	CHECK_STR("roundtrip-no-error", "", hs_reader_error(r));
	CHECK_I64("roundtrip-next-after-end", 0, hs_reader_next(r, &ev));

	info = hs_reader_info(r);
	CHECK_U64("roundtrip-info-pid-from-process", 4242, info->pid);
	CHECK_U64("roundtrip-info-ppid", 17, info->ppid);
	CHECK_STR("roundtrip-info-exe", "/usr/bin/prog", info->exe);
	CHECK_I64("roundtrip-info-argc", 5, info->argc);
	if (info->argc == 5 && info->argv) {
		CHECK_STR("roundtrip-info-argv0", "prog", info->argv[0]);
		CHECK_STR("roundtrip-info-argv1", "-x", info->argv[1]);
		CHECK_STR("roundtrip-info-argv2-empty", "", info->argv[2]);
		CHECK_STR("roundtrip-info-argv3-space", "a b", info->argv[3]);
		CHECK_STR("roundtrip-info-argv4-utf8", "\xc3\xa9t\xc3\xa9", info->argv[4]);
		CHECK("roundtrip-info-argv-null-terminated", info->argv[5] == NULL);
	}

	/* stacks: innermost first */
	{
		uint64_t ips[8] = { 0 };
		uint32_t parent = 99;
		uint64_t ip = 0;
		int n;

		CHECK_U64("roundtrip-stack-count", 6, hs_reader_stack_count(r));
		n = hs_reader_stack(r, 3, ips, 8);
		check_report(n == 3 && ips[0] == 0x403000 && ips[1] == 0x402000 && ips[2] == 0x401000,
			     "roundtrip-stack-3-order",
			     "expected 3 [0x403000 0x402000 0x401000] got %d [0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 "]",
			     n, ips[0], ips[1], ips[2]);
		n = hs_reader_stack(r, 5, ips, 8);
		check_report(n == 4 && ips[0] == 0x404000 && ips[1] == 0x403000 && ips[3] == 0x401000,
			     "roundtrip-stack-5-across-chunks",
			     "expected 4 [0x404000 0x403000 .. 0x401000] got %d [0x%" PRIx64 " 0x%" PRIx64 " .. 0x%" PRIx64 "]",
			     n, ips[0], ips[1], ips[3]);
		n = hs_reader_stack(r, 4, ips, 8);
		check_report(n == 2 && ips[0] == 0xffffffffffffff00ull && ips[1] == 0x401000, "roundtrip-stack-4-branch",
			     "expected 2 [0xffffffffffffff00 0x401000] got %d [0x%" PRIx64 " 0x%" PRIx64 "]", n, ips[0],
			     ips[1]);
		memset(ips, 0, sizeof(ips));
		n = hs_reader_stack(r, 5, ips, 2);
		check_report(n == 2 && ips[0] == 0x404000 && ips[1] == 0x403000 && ips[2] == 0,
			     "roundtrip-stack-max-truncates",
			     "expected 2 [0x404000 0x403000], ips[2] untouched got %d [0x%" PRIx64 " 0x%" PRIx64
			     "], ips[2]=0x%" PRIx64, n, ips[0], ips[1], ips[2]);
		CHECK_I64("roundtrip-stack-0-empty", 0, hs_reader_stack(r, 0, ips, 8));
		CHECK("roundtrip-stack-unknown-negative", hs_reader_stack(r, 99, ips, 8) < 0);
		CHECK("roundtrip-stack-huge-negative", hs_reader_stack(r, UINT32_MAX, ips, 8) < 0);
		rc = hs_reader_stack_node(r, 4, &parent, &ip);
		check_report(rc == 0 && parent == 1 && ip == 0xffffffffffffff00ull, "roundtrip-stack-node",
			     "expected 0 parent=1 ip=0xffffffffffffff00 got %d parent=%u ip=0x%" PRIx64, rc, parent, ip);
		CHECK("roundtrip-stack-node-0-absent", hs_reader_stack_node(r, 0, &parent, &ip) < 0);
	}

	/* modules */
	{
		const struct hs_module *m0 = hs_reader_module(r, 0), *m1 = hs_reader_module(r, 1);
		CHECK_U64("roundtrip-module-count", 2, hs_reader_module_count(r));
		CHECK("roundtrip-module-0", m0 && m0->base == 0x555555554000ull && strcmp(m0->path, "/usr/bin/prog") == 0 &&
					    m0->lo == 0x555555554000ull && m0->hi == 0x555555554000ull + 0x7800);
		CHECK("roundtrip-module-1", m1 && m1->lo == m1->hi && m1->build_id_len == 0);
		CHECK("roundtrip-module-out-of-range", hs_reader_module(r, 2) == NULL);
	}
	hs_reader_close(r);

	/* hs_reader_next_batch: the same events, whatever the batch size */
	for (int bs = 1; bs <= 256; bs = bs < 7 ? bs + 3 : bs * 6) {
		static struct hs_event batch[256];
		char name[64];
		int got = 0, bad = -1;

		if (hs_reader_open(&r, path) < 0) {
			check_report(0, "roundtrip-batch-open", "expected 0 got %s", hs_reader_error(r));
			hs_reader_close(r);
			break;
		}
		for (;;) {
			memset(batch, 0, sizeof(batch));
			rc = hs_reader_next_batch(r, batch, bs);
			if (rc <= 0)
				break;
			for (int k = 0; k < rc; k++, got++) {
				if (bs == 7 && got < nexp) {
					compare(100 + got, &exp_ev[got], &batch[k]);
					continue;
				}
				if (bad < 0 && (got >= nexp || batch[k].kind != exp_ev[got].ev.kind ||
						batch[k].time_ns != exp_ev[got].ev.time_ns || batch[k].stack != exp_ev[got].ev.stack ||
						((batch[k].kind == HS_EVENT_ALLOC || batch[k].kind == HS_EVENT_FREE) &&
						 (batch[k].ptr != exp_ev[got].ev.ptr || batch[k].size != exp_ev[got].ev.size)) ||
						(batch[k].kind == HS_EVENT_MARKER &&
						 (batch[k].label_len != exp_ev[got].ev.label_len ||
						  memcmp(batch[k].label, exp_ev[got].ev.label, batch[k].label_len) != 0))))
					bad = got;
			}
		}
		snprintf(name, sizeof(name), "roundtrip-batch-%d", bs);
		check_report(rc == 0 && got == nexp && bad < 0, name,
			     "expected %d events, end 0 got %d events, end %d, first difference at event %d", nexp, got, rc,
			     bad);
		hs_reader_close(r);
	}

	/* hs_reader_skip_addresses: the same events without their addresses, decoded here or ahead */
	for (int threads = 0; threads < 2; threads++) {
		struct hs_event e;
		char name[64];
		int got = 0, bad = -1, skip;

		setenv("HEAPSCOPE_READER_THREADS", threads ? "1" : "0", 1);
		if (hs_reader_open(&r, path) < 0) {
			check_report(0, "roundtrip-skip-open", "expected 0 got %s", hs_reader_error(r));
			hs_reader_close(r);
			break;
		}
		skip = hs_reader_skip_addresses(r);
		while ((rc = hs_reader_next(r, &e)) > 0) {
			const struct hs_event *x = got < nexp ? &exp_ev[got].ev : NULL;
			int mem = e.kind == HS_EVENT_ALLOC || e.kind == HS_EVENT_FREE;
			if (bad < 0 && (!x || e.kind != x->kind || e.time_ns != x->time_ns || e.stack != x->stack ||
					e.fn != x->fn || (mem && (e.ptr || e.old_ptr || e.size != x->size)) ||
					(e.kind == HS_EVENT_RSS && e.rss != x->rss)))
				bad = got;
			got++;
		}
		snprintf(name, sizeof(name), "roundtrip-skip-addresses-%s", threads ? "ahead" : "here");
		check_report(skip == 0 && rc == 0 && got == nexp && bad < 0, name,
			     "expected 0, %d events, end 0 got %d, %d events, end %d, first difference at event %d", nexp,
			     skip, got, rc, bad);
		hs_reader_close(r);
	}
	unsetenv("HEAPSCOPE_READER_THREADS");
	if (hs_reader_open(&r, path) == 0) {
		struct hs_event e;
		rc = hs_reader_next(r, &e);
		CHECK("roundtrip-skip-addresses-after-events-busy", rc > 0 && hs_reader_skip_addresses(r) == -EBUSY);
	}
	hs_reader_close(r);
	unlink(path);
	rmdir(dir);
	return 0;
}
