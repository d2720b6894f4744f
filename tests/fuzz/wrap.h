/*
 * wrap.h - the fuzz targets' input, made a trace file. Two modes, chosen by
 * the first byte:
 *   0x89 (the first byte of the file magic): the input is the trace file as is;
 *   anything else: the rest of the input holds raw chunk payloads separated by
 *     "CHNK"; they are wrapped with a valid header and checksummed zstd
 *     chunks (the real encoder), so mutations reach the record decoder instead
 *     of dying at a checksum. If bit 0 of the mode byte is set, the file is cut
 *     short by (mode >> 1) bytes to exercise truncation.
 */
#ifndef HS_FUZZ_WRAP_H
#define HS_FUZZ_WRAP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/encoder.h"

#define SEP "CHNK"
#define SEP_LEN 4

static int memfd = -1;
static char path[64];
static struct hs_encoder *enc;
static uint8_t *file;
static size_t file_len, file_cap;

static void append(const void *p, size_t n)
{
	if (file_len + n > file_cap) {
		while (file_len + n > file_cap)
			file_cap = file_cap ? file_cap * 2 : 1 << 16;
		file = realloc(file, file_cap);
		if (!file)
			abort();
	}
	memcpy(file + file_len, p, n);
	file_len += n;
}

/* Payload mode: header + one chunk per SEP-separated piece. */
static void wrap(const uint8_t *data, size_t size)
{
	uint8_t h[HS_FILE_HEADER_SIZE];
	uint8_t mode = data[0];
	const uint8_t *p = data + 1, *end = data + size;

	if (!enc && hs_encoder_new(&enc) < 0)
		abort();
	file_len = 0;
	hs_header_encode(h, 0, 0, 1, 1234, 1);
	append(h, sizeof(h));
	for (;;) {
		const uint8_t *q = memmem(p, (size_t)(end - p), SEP, SEP_LEN);
		size_t n = (size_t)((q ? q : end) - p);
		const void *c;
		size_t cl;
		if (n > HS_CHUNK_MAX_RAW || hs_encoder_chunk(enc, n ? p : (const uint8_t *)"", n, &c, &cl) < 0)
			abort();
		append(c, cl);
		if (!q)
			break;
		p = q + SEP_LEN;
	}
	if ((mode & 1) && file_len > HS_FILE_HEADER_SIZE) {
		size_t cut = mode >> 1;
		file_len = cut < file_len - HS_FILE_HEADER_SIZE ? file_len - cut : HS_FILE_HEADER_SIZE;
	}
}

/* The input as a trace file at the returned path (a memfd, rewritten for each input). */
static const char *fuzz_trace_file(const uint8_t *data, size_t size)
{
	if (memfd < 0) {
		memfd = memfd_create("hs-fuzz", 0);
		if (memfd < 0) {
			perror("memfd_create");
			abort();
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	}
	if (size && data[0] != 0x89) {
		wrap(data, size);
		data = file;
		size = file_len;
	}
	if (ftruncate(memfd, 0) != 0 || (size && pwrite(memfd, data, size, 0) != (ssize_t)size))
		abort();
	return path;
}

#endif
