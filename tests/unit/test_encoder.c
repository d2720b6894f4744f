/* test_encoder.c - chunks compressed in pieces: the header's fields, the frame's content size, the pauses between, parts' own blocks */
#define _DEFAULT_SOURCE
#define ZSTD_STATIC_LINKING_ONLY /* the block-by-block decoder: where the frame's blocks end */
#include <stdlib.h>
#include <zstd.h>

#include "check.h"
#include "common/bytes.h"
#include "common/crc32c.h"
#include "format/encoder.h"
#include "format/records.h"

static int pauses;

static void count_pause(void *arg)
{
	(*(int *)arg)++;
}

/* Compresses n bytes of a pattern that repeats with some noise; checks the chunk decodes to them. */
static void one(struct hs_encoder *enc, size_t n, int expect_pauses, uint64_t seed)
{
	char name[96];
	uint8_t *raw = malloc(n ? n : 1), *back = malloc(n ? n : 1);
	const uint8_t *c;
	const void *cv;
	size_t cl;
	int rc;

	for (size_t i = 0; i < n; i++)
		raw[i] = (i % 97 < 90) ? (uint8_t)(i * 7 % 13) : (uint8_t)check_rand(&seed);
	pauses = 0;
	rc = hs_encoder_chunk(enc, raw, n, &cv, &cl);
	c = cv;
	snprintf(name, sizeof(name), "encoder/%zu-bytes-compress", n);
	if (!CHECK(name, rc == 0))
		goto out;
	snprintf(name, sizeof(name), "encoder/%zu-bytes-header", n);
	CHECK(name, cl >= HS_CHUNK_HEADER_SIZE && hs_get_u32(c) == HS_CHUNK_MAGIC && hs_get_u32(c + 4) == HS_CHUNK_ZSTD &&
		    hs_get_u32(c + 8) == cl - HS_CHUNK_HEADER_SIZE && hs_get_u32(c + 12) == n &&
		    hs_get_u32(c + 16) == hs_crc32c(0, c + HS_CHUNK_HEADER_SIZE, cl - HS_CHUNK_HEADER_SIZE) &&
		    hs_get_u32(c + 20) == hs_crc32c(0, c, 20));
	snprintf(name, sizeof(name), "encoder/%zu-bytes-content-size", n);
	check_report(ZSTD_getFrameContentSize(c + HS_CHUNK_HEADER_SIZE, cl - HS_CHUNK_HEADER_SIZE) == n, name,
		     "the frame does not state %zu bytes", n);
	snprintf(name, sizeof(name), "encoder/%zu-bytes-decode", n);
	CHECK(name, ZSTD_decompress(back, n, c + HS_CHUNK_HEADER_SIZE, cl - HS_CHUNK_HEADER_SIZE) == n &&
		    (n == 0 || memcmp(back, raw, n) == 0));
	snprintf(name, sizeof(name), "encoder/%zu-bytes-pauses", n);
	check_report(pauses == expect_pauses, name, "%d pauses, expected %d", pauses, expect_pauses);
out:
	free(raw);
	free(back);
}

/* The offsets in the content where the frame's blocks end, as a block-by-block decoder regenerates them; -1 on error. */
static int block_ends(const uint8_t *frame, size_t len, uint8_t *dst, size_t cap, size_t *ends, int max)
{
	ZSTD_DCtx *d = ZSTD_createDCtx();
	size_t pos = 0, out = 0, next;
	int n = 0;

	if (!d || ZSTD_isError(ZSTD_decompressBegin(d)))
		n = -1;
	while (n >= 0 && (next = ZSTD_nextSrcSizeToDecompress(d)) != 0) {
		size_t got;
		ZSTD_nextInputType_e kind = ZSTD_nextInputType(d);

		if (pos + next > len) {
			n = -1;
			break;
		}
		got = ZSTD_decompressContinue(d, dst + out, cap - out, frame + pos, next);
		pos += next;
		if (ZSTD_isError(got)) {
			n = -1;
			break;
		}
		out += got;
		if ((kind == ZSTDnit_block || kind == ZSTDnit_lastBlock) && n < max)
			ends[n++] = out;
	}
	ZSTD_freeDCtx(d);
	return n;
}

/* Parts of unlike bytes (zeros, noise, text, an empty part, a cut at 0): each ends a block, and the chunk decodes whole. */
static void parts(struct hs_encoder *enc)
{
	enum { N = 700000 };
	static uint8_t raw[N], back[N];
	static const size_t cuts[] = { 0, 300000, 300000, 350001, 350002, 620000, N };
	size_t ends[64];
	uint64_t seed = 9;
	const void *cv;
	const uint8_t *c;
	size_t cl;
	int nb, all = 1, rc;

	for (size_t i = 0; i < N; i++)
		raw[i] = i < 300000 ? 0 : i < 350001 ? (uint8_t)check_rand(&seed) : (uint8_t)("a leak in the cache "[i % 20]);
	pauses = 0;
	rc = hs_encoder_chunk_parts(enc, raw, N, cuts, (int)(sizeof(cuts) / sizeof(cuts[0])), &cv, &cl);
	c = cv;
	if (!CHECK("encoder/parts-compress", rc == 0))
		return;
	CHECK("encoder/parts-decode", ZSTD_decompress(back, N, c + HS_CHUNK_HEADER_SIZE, cl - HS_CHUNK_HEADER_SIZE) == N &&
					      memcmp(back, raw, N) == 0);
	nb = block_ends(c + HS_CHUNK_HEADER_SIZE, cl - HS_CHUNK_HEADER_SIZE, back, N, ends, 64);
	for (size_t k = 1; k < sizeof(cuts) / sizeof(cuts[0]); k++) {
		int found = 0;
		for (int b = 0; b < nb; b++)
			found |= ends[b] == cuts[k];
		all &= found;
	}
	check_report(nb > 0 && all, "encoder/parts-end-blocks", "%d blocks; a part's end is not a block's end", nb);
	/* no block longer than zstd's largest, parts or not */
	for (int b = 0; b < nb; b++)
		all &= ends[b] - (b ? ends[b - 1] : 0) <= ZSTD_BLOCKSIZE_MAX;
	CHECK("encoder/parts-blocks-at-most-128k", nb > 0 && all);
	/* a pause after each piece and each part but the last: 128 KiB pieces cut at 300000, 350001, 350002 and 620000 */
	check_report(pauses == 8, "encoder/parts-pauses", "%d pauses, expected 8", pauses);
}

int main(void)
{
	struct hs_encoder *enc;
	const void *c;
	size_t cl;

	if (!CHECK("encoder/new", hs_encoder_new(&enc) == 0))
		return 1;
	hs_encoder_set_pause(enc, count_pause, &pauses);
	one(enc, 0, 0, 1);
	one(enc, 58, 0, 2);
	one(enc, 128 << 10, 0, 3);
	one(enc, (128 << 10) + 1, 1, 4);
	one(enc, 1 << 20, 7, 5);
	one(enc, HS_CHUNK_MAX_RAW, HS_CHUNK_MAX_RAW / (128 << 10) - 1, 6);
	/* the context is reused: a small chunk after the largest still states its own size */
	one(enc, 1000, 0, 7);
	parts(enc);
	/* without a callback the pieces follow each other: the same frame */
	hs_encoder_set_pause(enc, NULL, NULL);
	{
		static uint8_t big[1 << 20], back[1 << 20];
		for (size_t i = 0; i < sizeof(big); i++)
			big[i] = (uint8_t)(i % 251);
		CHECK("encoder/no-pause-callback",
		      hs_encoder_chunk(enc, big, sizeof(big), &c, &cl) == 0 &&
			      ZSTD_decompress(back, sizeof(back), (const uint8_t *)c + HS_CHUNK_HEADER_SIZE,
					      cl - HS_CHUNK_HEADER_SIZE) == sizeof(back) &&
			      memcmp(back, big, sizeof(big)) == 0);
	}
	{
		uint8_t *over = calloc(1, HS_CHUNK_MAX_RAW + 1);
		CHECK("encoder/too-large", hs_encoder_chunk(enc, over, HS_CHUNK_MAX_RAW + 1, &c, &cl) < 0);
		free(over);
	}
	hs_encoder_free(enc);
	return 0;
}
