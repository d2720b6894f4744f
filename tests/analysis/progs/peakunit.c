/*
 * peakunit.c - writes a trace whose peak falls amid other events of the
 * same instant, as at a coarse time resolution: 1000 blocks of 100 bytes
 * (stack 2; the peak, 100,000 bytes, at the last of them), 50 others
 * (stack 3) allocated and freed among the first ten; then at the same
 * time 500 of the 1000 freed and 100 new ones allocated (stack 3) and
 * freed again. Live at the peak are exactly the 1000, though 500 of them
 * are freed in its unit of time and 100 others are born in it; the 50
 * are freed before it in its unit. Usage: peakunit OUT.hst
 */
#include "tracebuild.h"

int main(int argc, char **argv)
{
	struct tb t;
	uint64_t ts = 5000000;

	if (argc != 2 || tb_init(&t, 0, 0, 1700000000000000000ull, 4343) < 0)
		return 2;
	tb_stack(&t, 1, 0, 0x401000);
	tb_stack(&t, 2, 1, 0x402000);
	tb_stack(&t, 3, 1, 0x403000);
	for (int i = 0; i < 1000; i++) {
		tb_alloc(&t, ts, 1, HS_FN_MALLOC, 0x10000000 + (uint64_t)i * 128, 100, 2, 0);
		if (i == 9) {
			for (int j = 0; j < 50; j++)
				tb_alloc(&t, ts, 1, HS_FN_MALLOC, 0x30000000 + (uint64_t)j * 128, 100, 3, 0);
			for (int j = 0; j < 50; j++)
				tb_free_rec(&t, ts, 1, HS_FN_FREE, 0x30000000 + (uint64_t)j * 128);
		}
	}
	for (int i = 0; i < 500; i++)
		tb_free_rec(&t, ts, 1, HS_FN_FREE, 0x10000000 + (uint64_t)i * 128);
	for (int i = 0; i < 100; i++)
		tb_alloc(&t, ts, 1, HS_FN_MALLOC, 0x20000000 + (uint64_t)i * 128, 100, 3, 0);
	for (int i = 0; i < 100; i++)
		tb_free_rec(&t, ts + 1000000, 1, HS_FN_FREE, 0x20000000 + (uint64_t)i * 128);
	for (int i = 500; i < 1000; i++)
		tb_free_rec(&t, ts + 2000000, 1, HS_FN_FREE, 0x10000000 + (uint64_t)i * 128);
	tb_end(&t, ts + 3000000, HS_END_EXIT);
	if (tb_flush(&t) < 0 || tb_write(&t.file, argv[1]) < 0)
		return 1;
	tb_free(&t);
	return 0;
}
