/*
 * make_corpus.c - seed corpus for fuzz_reader: small valid traces built with
 * the encoder, plus every trace given on the command line, each in both of
 * the target's input modes (whole file; "CHNK"-separated raw payloads).
 *
 *	make_corpus OUTDIR [TRACE...]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "../unit/tracebuild.h"
#include "common/bytes.h"

static const char *outdir;

static void put(const char *name, const void *d, size_t n)
{
	char p[4096];
	struct tb_buf b = { (uint8_t *)d, n, n };
	snprintf(p, sizeof(p), "%s/%s", outdir, name);
	if (tb_write(&b, p) < 0) {
		perror(p);
		exit(1);
	}
}

/* Turns a whole trace file into the target's payload mode: 'P' then payloads split by CHNK. */
static int to_payload_mode(const uint8_t *f, size_t n, struct tb_buf *out)
{
	size_t off;

	out->n = 0;
	tb_u8(out, 'P');
	if (n < HS_FILE_HEADER_SIZE)
		return -1;
	off = hs_get_u32(f + 16);
	for (int k = 0; off + HS_CHUNK_HEADER_SIZE <= n; k++) {
		uint32_t stored = hs_get_u32(f + off + 8), raw = hs_get_u32(f + off + 12);
		uint8_t *buf;
		size_t got;
		if (off + HS_CHUNK_HEADER_SIZE + stored > n || raw > HS_CHUNK_MAX_RAW)
			return -1;
		buf = malloc(raw ? raw : 1);
		got = ZSTD_decompress(buf, raw, f + off + HS_CHUNK_HEADER_SIZE, stored);
		if (ZSTD_isError(got)) {
			free(buf);
			return -1;
		}
		if (k)
			tb_bytes(out, "CHNK", 4);
		tb_bytes(out, buf, got);
		free(buf);
		off += HS_CHUNK_HEADER_SIZE + stored;
	}
	return 0;
}

static void put_both(const char *name, const uint8_t *f, size_t n)
{
	char pn[256];
	struct tb_buf pm = { 0 };

	put(name, f, n);
	if (to_payload_mode(f, n, &pm) == 0) {
		snprintf(pn, sizeof(pn), "%s.payload", name);
		put(pn, pm.d, pm.n);
	}
	free(pm.d);
}

static void synthetic(void)
{
	static const char *const argv[] = { "prog", "-v" };
	static const uint8_t id[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	static const struct tb_seg segs[] = { { 0, 0x1000, 4, 0 }, { 0x1000, 0x2000, 5, 0x1000 } };
	uint64_t calls[HS_FN_COUNT], bytes[HS_FN_COUNT];
	struct tb t;

	/* header only */
	tb_init(&t, 0, 0, 1, 1);
	put_both("header-only.hst", t.file.d, t.file.n);
	tb_free(&t);

	/* every record type, two chunks */
	tb_init(&t, HS_FLAG_SAMPLED, 512, 1700000000000000000ull, 77);
	tb_process(&t, 77, 1, "/bin/prog", 2, argv);
	tb_module(&t, 1, 0x400000, "/bin/prog", id, sizeof(id), segs, 2);
	tb_stack(&t, 1, 0, 0x401000);
	tb_stack(&t, 2, 1, 0x401100);
	tb_stack(&t, 3, 2, 0x401200);
	tb_alloc(&t, 10, 77, HS_FN_MALLOC, 0x5000010, 32, 3, 0);
	tb_alloc(&t, 11, 77, HS_FN_CALLOC, 0x5000040, 64, 2, 0);
	tb_free_rec(&t, 12, 77, HS_FN_REALLOC, 0x5000010);
	tb_alloc(&t, 12, 77, HS_FN_REALLOC, 0x5001000, 128, 3, 0x5000010);
	tb_free_rec(&t, 13, 78, HS_FN_FREE, 0x5000040);
	tb_mmap(&t, 14, 78, 0x7f0000000000ull, 0x10000, 3, 0x22, 1);
	tb_mremap(&t, 15, 78, 0x7f0000000000ull, 0x10000, 0x7f0000100000ull, 0x20000, 1);
	tb_munmap(&t, 16, 78, 0x7f0000100000ull, 0x20000);
	tb_brk(&t, 17, 78, HS_FN_SBRK, 0x600000, 0x621000, 2);
	tb_rss(&t, 18, 1 << 20);
	tb_marker(&t, 19, 77, "phase 1", 7);
	for (int i = 0; i < HS_FN_COUNT; i++)
		calls[i] = bytes[i] = (uint64_t)i * 3;
	tb_totals(&t, 20, HS_FN_COUNT, calls, bytes);
	tb_flush(&t);
	tb_stack(&t, 4, 3, 0x401300);
	tb_alloc(&t, 30, 77, HS_FN_REALLOCARRAY, 0x5002000, 256, 4, 0x5001000);
	tb_module_unload(&t, 31, 0x400000);
	tb_totals(&t, 32, HS_FN_COUNT, calls, bytes);
	tb_end(&t, 33, HS_END_EXIT);
	tb_flush(&t);
	put_both("all-records.hst", t.file.d, t.file.n);
	tb_free(&t);

	/* deep stack, many small chunks */
	tb_init(&t, 0, 0, 5, 5);
	for (int i = 1; i <= 200; i++)
		tb_stack(&t, (uint64_t)i, (uint64_t)i - 1, 0x400000 + (uint64_t)i * 16);
	for (int c = 0; c < 4; c++) {
		for (int i = 0; i < 20; i++)
			tb_alloc(&t, (uint64_t)(c * 100 + i), 1, HS_FN_MALLOC, 0x1000 + (uint64_t)i * 32, 16, 200, 0);
		tb_flush(&t);
	}
	put_both("deep-stack.hst", t.file.d, t.file.n);
	tb_free(&t);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: make_corpus OUTDIR [TRACE...]\n");
		return 2;
	}
	outdir = argv[1];
	synthetic();
	for (int i = 2; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		struct tb_buf b = { 0 };
		char name[64];
		uint8_t tmp[65536];
		size_t n;
		if (!f) {
			perror(argv[i]);
			continue;
		}
		while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
			tb_bytes(&b, tmp, n);
		fclose(f);
		snprintf(name, sizeof(name), "recorded-%d.hst", i - 1);
		put_both(name, b.d, b.n);
		free(b.d);
	}
	return 0;
}
