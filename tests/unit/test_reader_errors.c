/* test_reader_errors.c - damaged and hostile traces: clear errors with offsets, warnings on truncation, no crash */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "tmpdir.h"
#include "common/bytes.h"
#include "common/crc32c.h"
#include "heapscope/reader.h"
#include "tracebuild.h"

static char dir[256];

static const char *tmp_path(const char *name)
{
	static char p[8][320];
	static int k;
	char *s = p[k++ % 8];
	snprintf(s, 320, "%s/%s", dir, name);
	return s;
}

static const char *write_bytes(const char *name, const void *d, size_t n)
{
	const char *path = tmp_path(name);
	struct tb_buf b = { (uint8_t *)d, n, n };
	if (tb_write(&b, path) < 0) {
		check_report(0, name, "expected to write %s got %s", path, strerror(errno));
		exit(0);
	}
	return path;
}

/* open must fail; its message must contain want (and "offset" when asked) */
static void open_fails(const char *name, const char *path, const char *want, int want_offset)
{
	struct hs_reader *r = NULL;
	int rc = hs_reader_open(&r, path);
	const char *err = r ? hs_reader_error(r) : "(no reader)";
	char n[96];

	snprintf(n, sizeof(n), "%s-open-fails", name);
	check_report(rc < 0, n, "expected a negative code got %d", rc);
	if (want) {
		snprintf(n, sizeof(n), "%s-message", name);
		CHECK_HAS(n, want, err);
	}
	if (want_offset) {
		snprintf(n, sizeof(n), "%s-message-offset", name);
		CHECK_HAS(n, "offset", err);
	}
	snprintf(n, sizeof(n), "%s-sticky", name);
	if (rc < 0 && r) {
		struct hs_event ev;
		int rc2 = hs_reader_next(r, &ev);
		check_report(rc2 < 0, n, "expected next() after a failed open to fail got %d", rc2);
	}
	hs_reader_close(r);
}

struct outcome {
	int rc;       /* last return of next() */
	int events;   /* events returned before it */
	char err[512], warn[512];
	uint64_t first_time; /* of the first event */
};

static struct outcome read_all(const char *path)
{
	struct outcome o;
	struct hs_reader *r = NULL;
	struct hs_event ev;

	memset(&o, 0, sizeof(o));
	o.rc = hs_reader_open(&r, path);
	if (o.rc == 0) {
		int guard = 0;
		while ((o.rc = hs_reader_next(r, &ev)) > 0 && guard++ < 1000000) {
			if (!o.events)
				o.first_time = ev.time_ns;
			o.events++;
		}
		/* calls after the end repeat the same answer */
		if (hs_reader_next(r, &ev) != o.rc)
			o.rc = 1000;
		for (uint32_t s = 0; s < hs_reader_stack_count(r) + 2; s++) {
			uint64_t ips[64];
			hs_reader_stack(r, s, ips, 64);
		}
	}
	snprintf(o.err, sizeof(o.err), "%s", r ? hs_reader_error(r) : "");
	snprintf(o.warn, sizeof(o.warn), "%s", r ? hs_reader_warning(r) : "");
	hs_reader_close(r);
	return o;
}

/*
 * A good file: header, chunk A (3 events), chunk B (2 events). Its free is
 * another thread's and no address is the predicted one, so that it holds no
 * record of 3.0's folded types and reads as 1.x and 2.x too.
 */
static struct tb good;
static size_t chunk_b_off, chunk_b_len;

static void build_good(void)
{
	tb_init(&good, 0, 0, 1, 99);
	tb_stack(&good, 1, 0, 0x1000);
	tb_alloc(&good, 5, 1, HS_FN_MALLOC, 0x1000, 10, 1, 0);
	tb_alloc(&good, 6, 1, HS_FN_MALLOC, 0x2000, 10, 1, 0);
	tb_free_rec(&good, 7, 2, HS_FN_FREE, 0x1000);
	tb_flush(&good);
	chunk_b_off = good.file.n;
	tb_alloc(&good, 8, 1, HS_FN_MALLOC, 0x3000, 10, 1, 0);
	tb_end(&good, 9, HS_END_EXIT);
	tb_flush(&good);
	chunk_b_len = good.file.n - chunk_b_off;
}

/* The good file's header and chunk A, then one chunk with the given raw payload. */
static const char *with_payload(const char *name, const void *raw, size_t n)
{
	struct tb t;
	const void *c;
	size_t cl;
	static uint8_t buf[1 << 16];

	memcpy(buf, good.file.d, chunk_b_off);
	tb_init(&t, 0, 0, 0, 0);
	hs_encoder_chunk(t.enc, n ? raw : "", n, &c, &cl);
	memcpy(buf + chunk_b_off, c, cl);
	tb_free(&t);
	return write_bytes(name, buf, chunk_b_off + cl);
}

/*
 * A payload in the chunk layout: the stream table, then the streams. Tests
 * give the record types and the fields of each stream separately.
 */
struct streams {
	const uint8_t *s[HS_STREAM_COUNT];
	size_t n[HS_STREAM_COUNT];
};

static size_t layout(uint8_t *out, const struct streams *st)
{
	uint8_t *p = out;

	p = hs_varint_put(p, HS_STREAM_COUNT);
	for (int i = 0; i < HS_STREAM_COUNT; i++)
		p = hs_varint_put(p, st->n[i]);
	for (int i = 0; i < HS_STREAM_COUNT; i++) {
		if (st->n[i])
			memcpy(p, st->s[i], st->n[i]);
		p += st->n[i];
	}
	return (size_t)(p - out);
}

#define STREAMS(types, misc) \
	((struct streams){ .s = { [HS_STREAM_TYPE] = types, [HS_STREAM_MISC] = misc }, \
			   .n = { [HS_STREAM_TYPE] = sizeof(types), [HS_STREAM_MISC] = sizeof(misc) } })

static void payload_rejected(const char *name, const void *raw, size_t n, const char *want);

/* st with the fields an allocation record without a ptr field reads: size 8, stack 0 (a pair new to the chunk), time 0 */
static struct streams alloc_fields(struct streams st)
{
	static const uint8_t sz[] = { 8 }, stk[] = { 0, 0 }, tm[] = { 0 };

	st.s[HS_STREAM_SIZE] = sz;
	st.n[HS_STREAM_SIZE] = sizeof(sz);
	st.s[HS_STREAM_STACK] = stk;
	st.n[HS_STREAM_STACK] = sizeof(stk);
	st.s[HS_STREAM_TIME] = tm;
	st.n[HS_STREAM_TIME] = sizeof(tm);
	return st;
}

static void streams_rejected(const char *name, struct streams st, const char *want)
{
	static uint8_t raw[4096];
	payload_rejected(name, raw, layout(raw, &st), want);
}

/*
 * A 3.0 file whose STACK records hold these fields (3 bytes a record:
 * id, id - parent, address), then an allocation: its reader must refuse it.
 */
static void stack3_rejected(const char *name, const uint8_t *fields, size_t n)
{
	struct tb t;
	struct outcome o;
	char nm[96];

	if (tb_init(&t, 0, 0, 1, 99) < 0) {
		check_report(0, name, "cannot build the trace");
		return;
	}
	tb_set_major(&t, 3);
	for (size_t i = 0; i < n;) {
		size_t k = i;
		tb_rec_begin(&t, HS_REC_STACK);
		/* a record's three varints */
		for (int f = 0; f < 3 && k < n; f++)
			while (k < n && (fields[k++] & 0x80))
				;
		tb_bytes(&t.raw, fields + i, k - i);
		tb_rec_end(&t);
		i = k;
	}
	tb_alloc(&t, 5, 1, HS_FN_MALLOC, 0x1000, 10, 1, 0);
	tb_end(&t, 6, HS_END_EXIT);
	tb_flush(&t);
	o = read_all(write_bytes(name, t.file.d, t.file.n));
	snprintf(nm, sizeof(nm), "%s-rejected", name);
	check_report(o.rc < 0 && o.rc != 1000, nm, "expected an error got %d events, rc=%d (%s)", o.events, o.rc, o.err);
	snprintf(nm, sizeof(nm), "%s-message", name);
	CHECK_HAS(nm, "malformed", o.err);
	tb_free(&t);
}

static void payload_rejected(const char *name, const void *raw, size_t n, const char *want)
{
	struct outcome o = read_all(with_payload(name, raw, n));
	char nm[96], off[32];

	snprintf(nm, sizeof(nm), "%s-rejected", name);
	check_report(o.rc < 0 && o.rc != 1000 && o.events == 3, nm,
		     "expected 3 events then an error got %d events, rc=%d (%s)", o.events, o.rc, o.err);
	snprintf(nm, sizeof(nm), "%s-message", name);
	CHECK_HAS(nm, want, o.err);
	snprintf(nm, sizeof(nm), "%s-message-offset", name);
	snprintf(off, sizeof(off), "offset %zu", chunk_b_off);
	CHECK_HAS(nm, off, o.err);
}

int main(void)
{
	uint8_t h[HS_FILE_HEADER_SIZE], buf[4096];
	struct outcome o;

	if (!check_tmpdir(dir, sizeof(dir), "errors-tmpdir"))
		return 0;
	build_good();

	o = read_all(write_bytes("good.hst", good.file.d, good.file.n));
	check_report(o.rc == 0 && o.events == 5 && !o.err[0], "errors-baseline-good-file",
		     "expected 5 events and a clean end got %d events, rc=%d (%s)", o.events, o.rc, o.err);

	/* open-time failures */
	{
		struct hs_reader *r = NULL;
		int rc = hs_reader_open(&r, tmp_path("does-not-exist"));
		CHECK_I64("errors-missing-file", -ENOENT, rc);
		hs_reader_close(r);
		r = NULL;
		rc = hs_reader_open(&r, dir);
		CHECK_I64("errors-directory", -EISDIR, rc);
		hs_reader_close(r);
	}
	open_fails("errors-empty", write_bytes("empty", "", 0), "empty", 1);
	{
		static const char text[] = "#!/bin/sh\n# not a trace at all, but long enough to hold a header\necho hi\n";
		open_fails("errors-not-a-trace", write_bytes("script.sh", text, sizeof(text) - 1), "not a heapscope trace", 1);
		open_fails("errors-short-not-a-trace", write_bytes("short", "HST", 3), "not a heapscope trace", 0);
	}
	open_fails("errors-truncated-header", write_bytes("trunc-hdr", good.file.d, 30), "truncated", 1);
	open_fails("errors-magic-only", write_bytes("magic-only", good.file.d, 8), "truncated", 1);
	memcpy(h, good.file.d, sizeof(h));
	h[41] ^= 0x40; /* pid */
	open_fails("errors-header-checksum", write_bytes("bad-crc", h, sizeof(h)), "checksum", 1);
	memcpy(h, good.file.d, sizeof(h));
	hs_put_u16(h + 12, HS_VERSION_MAJOR + 1);
	hs_put_u16(h + 14, 0);
	hs_put_u32(h + 52, hs_crc32c(0, h, 52));
	{
		char want[48];
		snprintf(want, sizeof(want), "is format version %d.0", HS_VERSION_MAJOR + 1);
		open_fails("errors-major-version", write_bytes("v-next", h, sizeof(h)), want, 1);
	}
	{
		/*
		 * 1.x files are still read: a trace with none of the records whose
		 * coding changed since (no stack node, no free of a recent block, no
		 * address at its prediction), written as 1.0
		 */
		struct tb v1;
		struct outcome o1;
		if (tb_init(&v1, 0, 0, 1, 99) == 0) {
			tb_set_major(&v1, 1);
			tb_alloc(&v1, 5, 1, HS_FN_MALLOC, 0x1000, 10, 0, 0);
			tb_alloc(&v1, 6, 1, HS_FN_MALLOC, 0x2000, 10, 0, 0);
			tb_free_rec(&v1, 7, 2, HS_FN_FREE, 0x1000);
			tb_alloc(&v1, 8, 1, HS_FN_MALLOC, 0x3000, 10, 0, 0);
			tb_end(&v1, 9, HS_END_EXIT);
			tb_flush(&v1);
			o1 = read_all(write_bytes("v1", v1.file.d, v1.file.n));
			check_report(o1.rc == 0 && o1.events == 5, "errors-major-version-1-read",
				     "expected 5 events and a clean end got %d, rc=%d (%s)", o1.events, o1.rc, o1.err);
			tb_free(&v1);
		}
	}
	memcpy(h, good.file.d, sizeof(h));
	hs_put_u32(h + 8, 0x04030201u);
	hs_put_u32(h + 52, hs_crc32c(0, h, 52));
	open_fails("errors-byte-order", write_bytes("big-endian", h, sizeof(h)), "byte order", 1);
	memcpy(h, good.file.d, sizeof(h));
	hs_put_u32(h + 16, 40);
	hs_put_u32(h + 52, hs_crc32c(0, h, 52));
	open_fails("errors-header-size-too-small", write_bytes("hsize40", h, sizeof(h)), "header size", 1);

	/* a newer minor version with a longer header is read, the extra bytes skipped */
	{
		size_t n = 0;
		memcpy(buf, good.file.d, HS_FILE_HEADER_SIZE);
		hs_put_u16(buf + 14, 7);
		hs_put_u32(buf + 16, HS_FILE_HEADER_SIZE + 16);
		hs_put_u32(buf + 52, hs_crc32c(0, buf, 52));
		memset(buf + HS_FILE_HEADER_SIZE, 0xee, 16);
		n = HS_FILE_HEADER_SIZE + 16;
		memcpy(buf + n, good.file.d + HS_FILE_HEADER_SIZE, good.file.n - HS_FILE_HEADER_SIZE);
		n += good.file.n - HS_FILE_HEADER_SIZE;
		o = read_all(write_bytes("v1.7", buf, n));
		check_report(o.rc == 0 && o.events == 5, "errors-longer-header-skipped",
			     "expected 5 events got %d, rc=%d (%s)", o.events, o.rc, o.err);
	}
	/* a (future, longer) header cut short must not read as a clean, empty trace */
	{
		struct hs_reader *r = NULL;
		struct hs_event ev;
		int rc, rc2 = 99;
		memcpy(h, good.file.d, sizeof(h));
		hs_put_u16(h + 14, 9);
		hs_put_u32(h + 16, 1000);
		hs_put_u32(h + 52, hs_crc32c(0, h, 52));
		rc = hs_reader_open(&r, write_bytes("hsize1000", h, sizeof(h)));
		if (rc == 0)
			rc2 = hs_reader_next(r, &ev);
		check_report(rc < 0 || rc2 < 0 || strstr(hs_reader_warning(r), "truncated"), "errors-header-cut-inside-extension",
			     "expected an error or a truncation warning got open=%d next=%d warning=\"%s\"", rc, rc2,
			     hs_reader_warning(r));
		hs_reader_close(r);
	}
	/* a header alone is an empty trace */
	o = read_all(write_bytes("header-only", good.file.d, HS_FILE_HEADER_SIZE));
	check_report(o.rc == 0 && o.events == 0 && !o.err[0], "errors-header-only-is-empty",
		     "expected no events, no error got %d, rc=%d (%s)", o.events, o.rc, o.err);

	/* truncation: what was read stays, iteration ends with 0 and a warning naming the offset */
	{
		char off[32];
		snprintf(off, sizeof(off), "offset %zu", chunk_b_off);
		o = read_all(write_bytes("trunc-payload", good.file.d, chunk_b_off + chunk_b_len - 3));
		check_report(o.rc == 0 && o.events == 3, "errors-truncated-chunk-ends-with-0",
			     "expected 3 events then 0 got %d events, rc=%d (%s)", o.events, o.rc, o.err);
		CHECK_HAS("errors-truncated-chunk-warning", off, o.warn);
		CHECK_HAS("errors-truncated-chunk-warning-truncated", "truncated", o.warn);
		o = read_all(write_bytes("trunc-chunk-hdr", good.file.d, chunk_b_off + 10));
		check_report(o.rc == 0 && o.events == 3, "errors-truncated-chunk-header-ends-with-0",
			     "expected 3 events then 0 got %d events, rc=%d (%s)", o.events, o.rc, o.err);
		CHECK_HAS("errors-truncated-chunk-header-warning", off, o.warn);
	}
	/* corruption */
	{
		char off[32];
		snprintf(off, sizeof(off), "offset %zu", chunk_b_off);
		memcpy(buf, good.file.d, good.file.n);
		buf[chunk_b_off + HS_CHUNK_HEADER_SIZE + 2] ^= 0x10;
		o = read_all(write_bytes("bad-payload", buf, good.file.n));
		check_report(o.rc < 0 && o.rc != 1000 && o.events == 3, "errors-corrupt-payload",
			     "expected 3 events then an error got %d events, rc=%d", o.events, o.rc);
		CHECK_HAS("errors-corrupt-payload-checksum", "checksum", o.err);
		CHECK_HAS("errors-corrupt-payload-offset", off, o.err);

		memcpy(buf, good.file.d, good.file.n);
		buf[chunk_b_off + 9] ^= 0x01; /* stored size, header crc now wrong */
		o = read_all(write_bytes("bad-chunk-hdr", buf, good.file.n));
		check_report(o.rc < 0 && o.events == 3, "errors-corrupt-chunk-header",
			     "expected 3 events then an error got %d events, rc=%d", o.events, o.rc);
		CHECK_HAS("errors-corrupt-chunk-header-offset", off, o.err);

		/* raw size that disagrees with the zstd frame, checksums recomputed */
		memcpy(buf, good.file.d, good.file.n);
		hs_put_u32(buf + chunk_b_off + 12, hs_get_u32(buf + chunk_b_off + 12) + 1);
		hs_put_u32(buf + chunk_b_off + 20, hs_crc32c(0, buf + chunk_b_off, 20));
		o = read_all(write_bytes("bad-rawsize", buf, good.file.n));
		check_report(o.rc < 0 && o.events == 3, "errors-raw-size-mismatch",
			     "expected 3 events then an error got %d events, rc=%d", o.events, o.rc);
		CHECK_HAS("errors-raw-size-mismatch-offset", off, o.err);

		/* raw size over the limit */
		memcpy(buf, good.file.d, good.file.n);
		hs_put_u32(buf + chunk_b_off + 12, HS_CHUNK_MAX_RAW + 1);
		hs_put_u32(buf + chunk_b_off + 20, hs_crc32c(0, buf + chunk_b_off, 20));
		o = read_all(write_bytes("huge-rawsize", buf, good.file.n));
		check_report(o.rc < 0 && o.events == 3, "errors-raw-size-too-big",
			     "expected 3 events then an error got %d events, rc=%d", o.events, o.rc);

		/* garbage after the last chunk is not a chunk */
		memcpy(buf, good.file.d, good.file.n);
		memset(buf + good.file.n, 0x41, 40);
		o = read_all(write_bytes("trailing-garbage", buf, good.file.n + 40));
		check_report(o.rc < 0 && o.events == 5, "errors-trailing-garbage",
			     "expected 5 events then an error got %d events, rc=%d", o.events, o.rc);
	}

	/* hostile payloads in an otherwise valid chunk */
	{
		static const uint8_t t_unknown[] = { HS_REC_THREAD, 0xe7 }, m_unknown[] = { 1, 1, 2, 3 };
		streams_rejected("errors-unknown-record", STREAMS(t_unknown, m_unknown), "unknown record type 0xe7");
		static const uint8_t t_zero[] = { 0x00 }, m_none[] = { 0 };
		streams_rejected("errors-record-type-0", STREAMS(t_zero, m_none), "unknown record type 0x00");
		static const uint8_t bad_table[] = { 9, 1, 1 };
		payload_rejected("errors-stream-table", bad_table, sizeof(bad_table), "stream table");

		/* types reserved for later minor versions carry their length in misc and are skipped */
		{
			static const uint8_t t[] = { 0x05, 0x3a, HS_REC_END };
			static const uint8_t m[] = { 3, 0xaa, 0xbb, 0xcc, 0, 9, HS_END_STOP };
			static uint8_t raw[256];
			struct streams st = STREAMS(t, m);
			o = read_all(with_payload("skippable", raw, layout(raw, &st)));
			check_report(o.rc == 0 && o.events == 4 && !o.err[0], "errors-skippable-record-skipped",
				     "expected 3 + 1 events and a clean end got %d events, rc=%d (%s)", o.events, o.rc, o.err);
		}
		static const uint8_t t_skip[] = { 0x62 }, m_skip_long[] = { 9, 1, 2 };
		streams_rejected("errors-skippable-record-past-end", STREAMS(t_skip, m_skip_long), "malformed");
		/* 2.1's SIGNAL: length first, then ts and the signal; more bytes are a later minor version's */
		{
			static const uint8_t t[] = { HS_REC_SIGNAL };
			static const uint8_t m[] = { 4, 5, 11, 0xaa, 0xbb };
			static uint8_t raw[256];
			struct streams st = STREAMS(t, m);
			o = read_all(with_payload("signal", raw, layout(raw, &st)));
			check_report(o.rc == 0 && o.events == 4 && !o.err[0], "errors-signal-record-read",
				     "expected 3 + 1 events and a clean end got %d events, rc=%d (%s)", o.events, o.rc, o.err);
		}
		/* 4.2's CHILDREN: length, ts, a count of at least 1; more bytes are a later minor version's */
		{
			static const uint8_t t[] = { HS_REC_CHILDREN };
			static const uint8_t m[] = { 3, 5, 3, 0xaa };
			static uint8_t raw[256];
			struct streams st = STREAMS(t, m);
			o = read_all(with_payload("children", raw, layout(raw, &st)));
			check_report(o.rc == 0 && o.events == 4 && !o.err[0], "errors-children-record-read",
				     "expected 3 + 1 events and a clean end got %d events, rc=%d (%s)", o.events, o.rc, o.err);
		}
		static const uint8_t t_ch[] = { HS_REC_CHILDREN }, ch_zero[] = { 2, 5, 0 }, ch_short[] = { 1, 5, 3 };
		streams_rejected("errors-children-zero", STREAMS(t_ch, ch_zero), "malformed");
		streams_rejected("errors-children-longer-than-its-length", STREAMS(t_ch, ch_short), "malformed");
		static const uint8_t t_sig[] = { HS_REC_SIGNAL }, sig_zero[] = { 2, 5, 0 }, sig_short[] = { 1, 5, 11 };
		streams_rejected("errors-signal-zero", STREAMS(t_sig, sig_zero), "malformed");
		streams_rejected("errors-signal-longer-than-its-length", STREAMS(t_sig, sig_short), "malformed");
		/*
		 * An event may name only a node written before it (chunk A wrote
		 * node 1): an allocation or a mapping naming node 2 is corrupt, and
		 * an analysis would otherwise size its tables by whatever id came
		 */
		{
			static const uint8_t t[] = { HS_REC_THREAD, HS_REC_ALLOC + HS_FN_MALLOC }, m[] = { 1 };
			/* each event here a run of one (5.0): delta 0, its low bit clear: no length follows */
			static const uint8_t ptr[] = { 2 }, size[] = { 10 }, tm[] = { 0 };
			/* a pair new to the chunk (7.0): 0, then the stack */
			static const uint8_t stk[] = { 0, 2 }, stk_map[] = { 2 };
			struct streams st = STREAMS(t, m);
			st.s[HS_STREAM_PTR] = ptr, st.n[HS_STREAM_PTR] = 1;
			st.s[HS_STREAM_SIZE] = size, st.n[HS_STREAM_SIZE] = 1;
			st.s[HS_STREAM_STACK] = stk, st.n[HS_STREAM_STACK] = sizeof(stk);
			st.s[HS_STREAM_TIME] = tm, st.n[HS_STREAM_TIME] = sizeof(tm);
			streams_rejected("errors-alloc-names-unwritten-stack", st, "malformed");
			static const uint8_t big[] = { 0, 0xff, 0xff, 0xff, 0xff, 0x0f }; /* UINT32_MAX */
			st.s[HS_STREAM_STACK] = big, st.n[HS_STREAM_STACK] = sizeof(big);
			streams_rejected("errors-alloc-names-stack-2^32-1", st, "malformed");
			static const uint8_t tm_map[] = { HS_REC_THREAD, HS_REC_MMAP }, m_map[] = { 1, 0x80, 0x20, 0x10, 3, 0x22 };
			struct streams sm = STREAMS(tm_map, m_map);
			sm.s[HS_STREAM_STACK] = stk_map, sm.n[HS_STREAM_STACK] = 1;
			sm.s[HS_STREAM_TIME] = tm, sm.n[HS_STREAM_TIME] = sizeof(tm);
			streams_rejected("errors-mmap-names-unwritten-stack", sm, "malformed");
			/* the same allocation naming node 1 reads */
			static const uint8_t one[] = { 0, 1 };
			static uint8_t raw[256];
			st.s[HS_STREAM_STACK] = one, st.n[HS_STREAM_STACK] = sizeof(one);
			o = read_all(with_payload("stack-written", raw, layout(raw, &st)));
			check_report(o.rc == 0 && o.events == 4 && !o.err[0], "errors-alloc-names-written-stack-read",
				     "expected 3 + 1 events and a clean end got %d events, rc=%d (%s)", o.events, o.rc, o.err);
		}
		/*
		 * No block is at address 0 (the tracer records neither failed calls
		 * nor free(NULL)): in a new chunk every prediction is 0, so an
		 * allocation at its predicted address, or a free 0 past the last
		 * address, is at 0. An analysis keys its live blocks by address.
		 */
		{
			static const uint8_t t[] = { HS_REC_THREAD, HS_REC_ALLOC_AT + HS_FN_MALLOC }, m[] = { 1 };
			static const uint8_t size[] = { 10 }, stk[] = { 0, 1 }, tm[] = { 0 };
			struct streams st = STREAMS(t, m);
			st.s[HS_STREAM_SIZE] = size, st.n[HS_STREAM_SIZE] = 1;
			st.s[HS_STREAM_STACK] = stk, st.n[HS_STREAM_STACK] = sizeof(stk);
			st.s[HS_STREAM_TIME] = tm, st.n[HS_STREAM_TIME] = sizeof(tm);
			streams_rejected("errors-alloc-at-address-0", st, "address 0");
			static const uint8_t tf[] = { HS_REC_THREAD, HS_REC_FREE }, zero[] = { 0 };
			struct streams sf = STREAMS(tf, m);
			sf.s[HS_STREAM_PTR] = zero, sf.n[HS_STREAM_PTR] = 1;
			sf.s[HS_STREAM_TIME] = tm, sf.n[HS_STREAM_TIME] = sizeof(tm);
			streams_rejected("errors-free-at-address-0", sf, "address 0");
		}
		/* 4.0: id - parent (0 would be the node itself, more than the id a parent below 0), the id implied (2 here) */
		static const uint8_t t_stack[] = { HS_REC_STACK };
		static const uint8_t self_parent[] = { 0, 0x10 };
		streams_rejected("errors-stack-parent-equals-id", STREAMS(t_stack, self_parent), "malformed");
		static const uint8_t later_parent[] = { 3, 0x10 };
		streams_rejected("errors-stack-parent-below-0", STREAMS(t_stack, later_parent), "malformed");
		/* 3.x files name the id: it must be the next one, and fit 32 bits */
		static const uint8_t id0[] = { 0, 0, 0x10 };
		stack3_rejected("errors-stack3-id-0", id0, sizeof(id0));
		static const uint8_t id_over[] = { 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0x10 }; /* 2^32 */
		stack3_rejected("errors-stack3-id-over-32-bits", id_over, sizeof(id_over));
		static const uint8_t id_gap[] = { 7, 1, 0x10 };
		stack3_rejected("errors-stack3-id-out-of-sequence", id_gap, sizeof(id_gap));
		static const uint8_t self3[] = { 1, 0, 0x10 };
		stack3_rejected("errors-stack3-parent-equals-id", self3, sizeof(self3));
		/* a cycle through a redefined node must not loop: ids come in sequence, parents below them */
		static const uint8_t redefine[] = { 1, 1, 0x20, 2, 1, 0x30, 1, 2, 0x40 };
		stack3_rejected("errors-stack3-redefined-cycle", redefine, sizeof(redefine));
		/* and a good 3.0 table reads as it did: its ids named, its addresses from the parents' */
		{
			struct tb t3;
			struct hs_reader *r = NULL;
			struct hs_event ev;
			uint64_t ips[4] = { 0 };
			int n = -1;
			if (tb_init(&t3, 0, 0, 1, 99) == 0) {
				tb_set_major(&t3, 3);
				tb_stack(&t3, 1, 0, 0x401000);
				tb_stack(&t3, 2, 1, 0x402abc);
				tb_stack(&t3, 3, 1, 0x400010);
				tb_alloc(&t3, 5, 1, HS_FN_MALLOC, 0x1000, 10, 3, 0);
				tb_end(&t3, 6, HS_END_EXIT);
				tb_flush(&t3);
				if (hs_reader_open(&r, write_bytes("stack3-good", t3.file.d, t3.file.n)) == 0 &&
				    hs_reader_next(r, &ev) == 1)
					n = hs_reader_stack(r, ev.stack, ips, 4);
				check_report(n == 2 && ips[0] == 0x400010 && ips[1] == 0x401000 && hs_reader_stack_count(r) == 4,
					     "errors-stack3-good-read", "expected 0x400010 0x401000 of 4 nodes, got %d frames: %llx %llx",
					     n, (unsigned long long)ips[0], (unsigned long long)ips[1]);
				hs_reader_close(r);
				tb_free(&t3);
			}
		}

		/* an allocation whose pointer stream ends early */
		{
			static const uint8_t t[] = { HS_REC_THREAD, HS_REC_ALLOC }, m[] = { 1 }, ptr[] = { 0x80 };
			struct streams st = STREAMS(t, m);
			st.s[HS_STREAM_PTR] = ptr;
			st.n[HS_STREAM_PTR] = sizeof(ptr);
			streams_rejected("errors-truncated-record", st, "malformed");
		}
		/* an event with no time left in the time stream */
		{
			static const uint8_t t[] = { HS_REC_THREAD, HS_REC_FREE }, m[] = { 1 }, ptr[] = { 2 };
			struct streams st = STREAMS(t, m);
			st.s[HS_STREAM_PTR] = ptr;
			st.n[HS_STREAM_PTR] = sizeof(ptr);
			streams_rejected("errors-event-without-time", st, "malformed");
			/* 5.0: a run's delta whose low bit promises a length, without it */
			static const uint8_t half[] = { 1 };
			st.s[HS_STREAM_TIME] = half;
			st.n[HS_STREAM_TIME] = sizeof(half);
			streams_rejected("errors-time-run-without-length", st, "malformed");
		}
		/* a free that names a recent allocation the thread does not have */
		{
			static const uint8_t t[] = { HS_REC_THREAD, HS_REC_FREE_RECENT }, m[] = { 1 }, ptr[] = { 0 }, tm[] = { 0 };
			struct streams st = STREAMS(t, m);
			st.s[HS_STREAM_PTR] = ptr;
			st.n[HS_STREAM_PTR] = sizeof(ptr);
			st.s[HS_STREAM_TIME] = tm;
			st.n[HS_STREAM_TIME] = sizeof(tm);
			streams_rejected("errors-free-recent-out-of-list", st, "names recent allocation 0 of 0");
		}
		/* the same with its place in the type (3.0): place 5 of a reallocarray's free */
		{
			static const uint8_t t[] = { HS_REC_THREAD, HS_REC_FREE_RECENT_AT + 32 + 5 }, m[] = { 1 }, tm[] = { 0 };
			struct streams st = STREAMS(t, m);
			st.s[HS_STREAM_TIME] = tm;
			st.n[HS_STREAM_TIME] = sizeof(tm);
			streams_rejected("errors-free-recent-at-out-of-list", st, "names recent allocation 5 of 0");
		}
		/* a realloc has no "at the predicted address" type: its old address needs the ptr stream */
		{
			static const uint8_t t[] = { HS_REC_THREAD, HS_REC_ALLOC_AT + HS_FN_REALLOC }, m[] = { 1 };
			streams_rejected("errors-alloc-at-realloc", alloc_fields(STREAMS(t, m)), "unknown record type 0xb2");
		}
		/*
		 * 6.0's ALLOC_TOP: at a new chunk's top of 0, address 0; no realloc
		 * has one; cut short (no size), malformed, also where a thread
		 * decodes ahead, whose reader once took the type for unknown
		 */
		{
			static const uint8_t t[] = { HS_REC_THREAD, HS_REC_ALLOC_TOP + HS_FN_MALLOC }, m[] = { 1 };
			static const uint8_t tr[] = { HS_REC_THREAD, HS_REC_ALLOC_TOP + HS_FN_REALLOC };
			struct streams st = alloc_fields(STREAMS(t, m)), cut = st;
			streams_rejected("errors-alloc-top-address-0", st, "address 0");
			st.s[HS_STREAM_TYPE] = tr;
			streams_rejected("errors-alloc-top-realloc", st, "unknown record type 0xc2");
			cut.s[HS_STREAM_SIZE] = NULL;
			cut.n[HS_STREAM_SIZE] = 0;
			for (int threads = 0; threads < 2; threads++) {
				setenv("HEAPSCOPE_READER_THREADS", threads ? "1" : "0", 1);
				streams_rejected(threads ? "errors-alloc-top-cut-ahead" : "errors-alloc-top-cut", cut, "malformed");
			}
			unsetenv("HEAPSCOPE_READER_THREADS");
		}
		/*
		 * 7.0's pairs: a place beyond the chunk's table, also where a
		 * thread decodes ahead; a new pair cut before its stack; a new
		 * pair whose stack no node defines yet
		 */
		{
			static const uint8_t t[] = { HS_REC_THREAD, HS_REC_ALLOC + HS_FN_MALLOC }, m[] = { 1 }, ptr[] = { 2 };
			static const uint8_t beyond[] = { 1 }, cut[] = { 0 }, undefined[] = { 0, 5 };
			struct streams st = alloc_fields(STREAMS(t, m));
			st.s[HS_STREAM_PTR] = ptr;
			st.n[HS_STREAM_PTR] = sizeof(ptr);
			st.s[HS_STREAM_STACK] = beyond;
			st.n[HS_STREAM_STACK] = sizeof(beyond);
			for (int threads = 0; threads < 2; threads++) {
				setenv("HEAPSCOPE_READER_THREADS", threads ? "1" : "0", 1);
				streams_rejected(threads ? "errors-pair-beyond-table-ahead" : "errors-pair-beyond-table", st,
						 "names pair 1 of 0");
			}
			unsetenv("HEAPSCOPE_READER_THREADS");
			st.s[HS_STREAM_STACK] = cut;
			st.n[HS_STREAM_STACK] = sizeof(cut);
			streams_rejected("errors-pair-cut", st, "malformed");
			st.s[HS_STREAM_STACK] = undefined;
			st.n[HS_STREAM_STACK] = sizeof(undefined);
			streams_rejected("errors-pair-stack-undefined", st, "malformed");
		}
		static const uint8_t t_marker[] = { HS_REC_MARKER }, marker_len[] = { 1, 1, 50, 'a', 'b' };
		streams_rejected("errors-marker-past-end", STREAMS(t_marker, marker_len), "malformed");
		static const uint8_t t_end[] = { HS_REC_END }, end_reason[] = { 1, 9 };
		streams_rejected("errors-end-bad-reason", STREAMS(t_end, end_reason), "malformed");
		static const uint8_t t_totals[] = { HS_REC_TOTALS }, totals_n[] = { 1, 0xff, 0x7f };
		streams_rejected("errors-totals-too-many", STREAMS(t_totals, totals_n), "malformed");
		static const uint8_t t_module[] = { HS_REC_MODULE };
		static const uint8_t module_nseg[] = { 1, 0, 1, 'x', 0, 65 };
		streams_rejected("errors-module-too-many-segments", STREAMS(t_module, module_nseg), "malformed");
		static const uint8_t module_trunc[] = { 1, 0, 1, 'x', 0, 2, 1, 2, 3, 4, 5 };
		streams_rejected("errors-module-truncated-segments", STREAMS(t_module, module_trunc), "malformed");
		static const uint8_t t_process[] = { HS_REC_PROCESS }, process_argc[] = { 1, 1, 1, 'x', 3, 1, 'a' };
		streams_rejected("errors-process-missing-args", STREAMS(t_process, process_argc), "malformed");
	}
	{
		char cmd[400];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			return 0;
	}
	tb_free(&good);
	return 0;
}
