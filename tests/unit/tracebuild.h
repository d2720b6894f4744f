/*
 * tracebuild.h - builds heapscope trace files by hand for the tests: record
 * payloads in the layout the tracer writes (src/tracer/writer.c, modules.c,
 * stacks.c, state.c), chunks through the real encoder.
 */
#ifndef HS_TEST_TRACEBUILD_H
#define HS_TEST_TRACEBUILD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/crc32c.h"
#include "common/varint.h"
#include "format/builder.h"
#include "format/encoder.h"
#include "format/records.h"

struct tb_buf {
	uint8_t *d;
	size_t n, cap;
};

struct tb {
	struct tb_buf raw;   /* a non-event record being built, handed to the builder whole */
	struct tb_buf file;  /* the whole file so far */
	struct hs_encoder *enc;
	struct hs_builder *b;
	struct tb_buf stack_ip;  /* the address of each stack id written, 8 bytes each: 3.0 codes a node's from its parent's */
	unsigned major;          /* the header's major version, when tb_set_major() changed it (0: this reader's) */
};

static void tb_reserve(struct tb_buf *b, size_t more)
{
	if (b->n + more <= b->cap)
		return;
	while (b->n + more > b->cap)
		b->cap = b->cap ? b->cap * 2 : 4096;
	b->d = realloc(b->d, b->cap);
	if (!b->d) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
}

static void tb_bytes(struct tb_buf *b, const void *p, size_t n)
{
	tb_reserve(b, n);
	if (n)
		memcpy(b->d + b->n, p, n);
	b->n += n;
}

static void tb_u8(struct tb_buf *b, uint8_t v) { tb_bytes(b, &v, 1); }

static void tb_var(struct tb_buf *b, uint64_t v)
{
	uint8_t tmp[HS_VARINT_MAX];
	tb_bytes(b, tmp, (size_t)(hs_varint_put(tmp, v) - tmp));
}

__attribute__((unused)) static void tb_zz(struct tb_buf *b, int64_t v) { tb_var(b, hs_zigzag(v)); }

static void tb_str(struct tb_buf *b, const void *s, size_t n)
{
	tb_var(b, n);
	tb_bytes(b, s, n);
}

/* Starts a file with a valid header. Returns 0 or -1. */
__attribute__((unused))
static int tb_init(struct tb *t, uint32_t flags, uint64_t sample_bytes, uint64_t start_ns, uint32_t pid)
{
	uint8_t h[HS_FILE_HEADER_SIZE];

	memset(t, 0, sizeof(*t));
	if (hs_encoder_new(&t->enc) < 0 || hs_builder_new(&t->b, 1) < 0)
		return -1;
	hs_header_encode(h, flags, sample_bytes, start_ns, pid, 1);
	tb_bytes(&t->file, h, sizeof(h));
	return 0;
}

/* Relabels the file (only its header written yet) as major version major, whose record layouts tb_stack then follows. */
__attribute__((unused))
static void tb_set_major(struct tb *t, unsigned major)
{
	t->major = major;
	hs_builder_set_major(t->b, major);
	hs_put_u16(t->file.d + 12, (uint16_t)major);
	hs_put_u32(t->file.d + 52, hs_crc32c(0, t->file.d, 52));
}

/* Compresses the pending payload into one chunk appended to the file; resets delta state. */
__attribute__((unused))
static int tb_flush(struct tb *t)
{
	const void *c;
	size_t cl;

	if (hs_builder_flush(t->b, t->enc, &c, &cl) < 0)
		return -1;
	tb_bytes(&t->file, c, cl);
	return 0;
}

__attribute__((unused))
static void tb_free(struct tb *t)
{
	hs_encoder_free(t->enc);
	hs_builder_free(t->b);
	free(t->raw.d);
	free(t->file.d);
	free(t->stack_ip.d);
	memset(t, 0, sizeof(*t));
}

__attribute__((unused))
static int tb_write(const struct tb_buf *b, const char *path)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	if (b->n && fwrite(b->d, 1, b->n, f) != b->n) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

/* ---- records, through the same builder as the tracer's writer ---- */

static void tb_event(struct tb *t, struct hs_event *ev)
{
	hs_builder_event(t->b, ev);
}

/* Non-event records are built in t->raw, then handed over whole. */
static void tb_rec_begin(struct tb *t, uint8_t type)
{
	t->raw.n = 0;
	tb_u8(&t->raw, type);
}

static void tb_rec_end(struct tb *t)
{
	hs_builder_record(t->b, t->raw.d, t->raw.n);
	t->raw.n = 0;
}

__attribute__((unused))
static void tb_alloc(struct tb *t, uint64_t ts, uint32_t tid, int fn, uint64_t ptr, uint64_t size,
		     uint32_t stack, uint64_t old_ptr)
{
	struct hs_event ev = { .kind = HS_EVENT_ALLOC, .time_ns = ts, .tid = tid, .fn = fn, .ptr = ptr,
			       .size = size, .stack = stack, .old_ptr = old_ptr };
	tb_event(t, &ev);
}

__attribute__((unused))
static void tb_free_rec(struct tb *t, uint64_t ts, uint32_t tid, int fn, uint64_t ptr)
{
	struct hs_event ev = { .kind = HS_EVENT_FREE, .time_ns = ts, .tid = tid, .fn = fn, .ptr = ptr };
	tb_event(t, &ev);
}

__attribute__((unused))
static void tb_mmap(struct tb *t, uint64_t ts, uint32_t tid, uint64_t addr, uint64_t len, uint32_t prot,
		    uint32_t flags, uint32_t stack)
{
	struct hs_event ev = { .kind = HS_EVENT_MMAP, .time_ns = ts, .tid = tid, .fn = HS_FN_MMAP, .addr = addr,
			       .len = len, .prot = prot, .flags = flags, .stack = stack };
	tb_event(t, &ev);
}

__attribute__((unused))
static void tb_munmap(struct tb *t, uint64_t ts, uint32_t tid, uint64_t addr, uint64_t len)
{
	struct hs_event ev = { .kind = HS_EVENT_MUNMAP, .time_ns = ts, .tid = tid, .fn = HS_FN_MUNMAP,
			       .addr = addr, .len = len };
	tb_event(t, &ev);
}

__attribute__((unused))
static void tb_mremap(struct tb *t, uint64_t ts, uint32_t tid, uint64_t addr, uint64_t len, uint64_t new_addr,
		      uint64_t new_len, uint32_t stack)
{
	struct hs_event ev = { .kind = HS_EVENT_MREMAP, .time_ns = ts, .tid = tid, .fn = HS_FN_MREMAP,
			       .addr = addr, .len = len, .new_addr = new_addr, .new_len = new_len, .stack = stack };
	tb_event(t, &ev);
}

__attribute__((unused))
static void tb_brk(struct tb *t, uint64_t ts, uint32_t tid, int fn, uint64_t old_brk, uint64_t new_brk,
		   uint32_t stack)
{
	struct hs_event ev = { .kind = HS_EVENT_BRK, .time_ns = ts, .tid = tid, .fn = fn, .addr = old_brk,
			       .new_addr = new_brk, .stack = stack };
	tb_event(t, &ev);
}

/* The meta records carry absolute timestamps, as the tracer writes them. */
__attribute__((unused))
static void tb_rss(struct tb *t, uint64_t ts, uint64_t rss)
{
	tb_rec_begin(t, HS_REC_RSS);
	tb_var(&t->raw, ts);
	tb_var(&t->raw, rss);
	tb_rec_end(t);
}

__attribute__((unused))
static void tb_marker(struct tb *t, uint64_t ts, uint32_t tid, const char *label, size_t len)
{
	tb_rec_begin(t, HS_REC_MARKER);
	tb_var(&t->raw, ts);
	tb_var(&t->raw, tid);
	tb_str(&t->raw, label, len);
	tb_rec_end(t);
}

struct tb_seg {
	uint64_t vaddr, memsz, flags, offset;
};

__attribute__((unused))
static void tb_module(struct tb *t, uint64_t ts, uint64_t base, const char *path, const uint8_t *id, size_t idlen,
		      const struct tb_seg *segs, size_t nseg)
{
	tb_rec_begin(t, HS_REC_MODULE);
	tb_var(&t->raw, ts);
	tb_var(&t->raw, base);
	tb_str(&t->raw, path, strlen(path));
	tb_str(&t->raw, id, idlen);
	tb_var(&t->raw, nseg);
	for (size_t i = 0; i < nseg; i++) {
		tb_var(&t->raw, segs[i].vaddr);
		tb_var(&t->raw, segs[i].memsz);
		tb_var(&t->raw, segs[i].flags);
		tb_var(&t->raw, segs[i].offset);
	}
	tb_rec_end(t);
}

__attribute__((unused))
static void tb_module_unload(struct tb *t, uint64_t ts, uint64_t base)
{
	tb_rec_begin(t, HS_REC_MODULE_UNLOAD);
	tb_var(&t->raw, ts);
	tb_var(&t->raw, base);
	tb_rec_end(t);
}

__attribute__((unused))
static void tb_stack(struct tb *t, uint64_t id, uint64_t parent, uint64_t ip)
{
	uint64_t base = 0;

	if (parent && (parent + 1) * 8 <= t->stack_ip.n)
		memcpy(&base, t->stack_ip.d + parent * 8, 8);
	while (t->stack_ip.n < (id + 1) * 8)
		tb_u8(&t->stack_ip, 0);
	memcpy(t->stack_ip.d + id * 8, &ip, 8);
	tb_rec_begin(t, HS_REC_STACK);
	/* 4.0 leaves the id implied: callers write ids in sequence */
	if (t->major && t->major < HS_VERSION_STACK_SEQ)
		tb_var(&t->raw, id);
	tb_var(&t->raw, id - parent);
	tb_zz(&t->raw, (int64_t)(ip - base));
	tb_rec_end(t);
}

__attribute__((unused))
static void tb_process(struct tb *t, uint32_t pid, uint32_t ppid, const char *exe, int argc, const char *const *argv)
{
	tb_rec_begin(t, HS_REC_PROCESS);
	tb_var(&t->raw, pid);
	tb_var(&t->raw, ppid);
	tb_str(&t->raw, exe, strlen(exe));
	tb_var(&t->raw, (uint64_t)argc);
	for (int i = 0; i < argc; i++)
		tb_str(&t->raw, argv[i], strlen(argv[i]));
	tb_rec_end(t);
}

__attribute__((unused))
static void tb_totals(struct tb *t, uint64_t ts, size_t n, const uint64_t *calls, const uint64_t *bytes)
{
	tb_rec_begin(t, HS_REC_TOTALS);
	tb_var(&t->raw, ts);
	tb_var(&t->raw, n);
	for (size_t i = 0; i < n; i++) {
		tb_var(&t->raw, calls[i]);
		tb_var(&t->raw, bytes[i]);
	}
	tb_rec_end(t);
}

__attribute__((unused))
static void tb_end(struct tb *t, uint64_t ts, unsigned reason)
{
	tb_rec_begin(t, HS_REC_END);
	tb_var(&t->raw, ts);
	tb_var(&t->raw, reason);
	tb_rec_end(t);
}

#endif
