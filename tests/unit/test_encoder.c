/* test_encoder.c - chunks compressed in pieces: the header's fields, the frame's content size, the pauses between */
#define _DEFAULT_SOURCE
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
