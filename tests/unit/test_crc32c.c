/* test_crc32c.c - CRC-32C against published vectors (RFC 3720 B.4) and incremental use */
#include <stdint.h>

#include "check.h"
#include "common/crc32c.h"

int main(void)
{
	uint8_t buf[64];

	CHECK_U64("crc32c-123456789", 0xE3069283u, hs_crc32c(0, "123456789", 9));
	CHECK_U64("crc32c-empty", 0, hs_crc32c(0, "", 0));
	memset(buf, 0, 32);
	CHECK_U64("crc32c-32-zeros", 0x8A9136AAu, hs_crc32c(0, buf, 32));
	memset(buf, 0xff, 32);
	CHECK_U64("crc32c-32-ones", 0x62A8AB43u, hs_crc32c(0, buf, 32));
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	CHECK_U64("crc32c-32-incrementing", 0x46DD794Eu, hs_crc32c(0, buf, 32));
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	CHECK_U64("crc32c-32-decrementing", 0x113FDB5Cu, hs_crc32c(0, buf, 32));
	CHECK_U64("crc32c-a", 0xC1D04330u, hs_crc32c(0, "a", 1));

	/* unaligned starts and every split: the slicing-by-8 loop must agree with the byte loop */
	{
		static const char text[] = "The quick brown fox jumps over the lazy dog, 0123456789 times.";
		size_t len = sizeof(text) - 1, bad = 0;
		uint32_t whole = hs_crc32c(0, text, len);
		char first[64] = "none";
		for (size_t k = 0; k <= len; k++) {
			uint32_t c = hs_crc32c(hs_crc32c(0, text, k), text + k, len - k);
			if (c != whole && !bad++)
				snprintf(first, sizeof(first), "split at %zu", k);
		}
		CHECK_COUNT("crc32c-incremental-splits", bad, len + 1, first);
		/* the same bytes at every alignment */
		static uint8_t big[128];
		bad = 0;
		for (size_t off = 0; off < 16; off++) {
			memcpy(big + off, "123456789", 9);
			if (hs_crc32c(0, big + off, 9) != 0xE3069283u && !bad++)
				snprintf(first, sizeof(first), "offset %zu", off);
		}
		CHECK_COUNT("crc32c-alignment", bad, 16, first);
	}
	{
		/* the instruction's path and the table's agree on every length, start and running value */
		static uint8_t buf[1000];
		uint64_t rng = 0x3243f6a8885a308dull;
		char first[64] = "";
		int bad = 0, n = 0;
		CHECK_U64("crc32c-table-123456789", 0xE3069283u, hs_crc32c_table(0, "123456789", 9));
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)check_rand(&rng);
		for (size_t len = 0; len < 300; len++)
			for (size_t off = 0; off < 9; off++, n++) {
				uint32_t seed = (uint32_t)check_rand(&rng);
				if (hs_crc32c(seed, buf + off, len) != hs_crc32c_table(seed, buf + off, len) && !bad++)
					snprintf(first, sizeof(first), "length %zu offset %zu", len, off);
			}
		CHECK_COUNT("crc32c-both-paths-agree", bad, n, first);
	}
	return 0;
}
