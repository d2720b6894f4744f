/*
 * latepeak.c - writes a trace whose peak is made by an event that came late:
 * thread 2's allocation is stamped before thread 1's free that precedes it
 * in the file, so a block already gone out was freed after the peak's time
 * but before the peak in the file's order, the one the heap is summed in:
 * it is not live at the peak. Around it, enough other blocks come and go
 * that the late one is not among the last few. Usage: latepeak [far]
 * OUT.hst; far: 70,000 more blocks (of a third thread, each alive for
 * 1 ns) are freed after A and before the late C, all after C's time.
 * instant: the same 70,000 blocks allocated and freed at one moment, by
 * thread 1.
 */
#include <string.h>

#include "tracebuild.h"

int main(int argc, char **argv)
{
	struct tb t;
	uint64_t ts = 1000000;
	uint32_t s = 1;

	int far = argc == 3 && strcmp(argv[1], "far") == 0, instant = argc == 3 && strcmp(argv[1], "instant") == 0;

	if (argc != 2 + (far || instant) || tb_init(&t, 0, 0, 1700000000000000000ull, 4242) < 0)
		return 2;
	tb_stack(&t, 1, 0, 0x401000);
	tb_stack(&t, 2, 1, 0x402000);
	tb_stack(&t, 3, 1, 0x403000);
	tb_stack(&t, 4, 0, 0x404000);
	/* churn before: many blocks come and go, the heap at most 64 bytes */
	for (int i = 0; i < 50000; i++, ts += 1000) {
		s = 2 + (uint32_t)(i % 3);
		tb_alloc(&t, ts, 1, HS_FN_MALLOC, 0x10000000 + (uint64_t)(i % 512) * 64, 64, s, 0);
		tb_free_rec(&t, ts + 500, 1, HS_FN_FREE, 0x10000000 + (uint64_t)(i % 512) * 64);
	}
	/* A (100 bytes), B (100 bytes): the peak so far, 200 */
	tb_alloc(&t, ts += 1000, 1, HS_FN_MALLOC, 0x20000000, 100, 2, 0);
	tb_alloc(&t, ts += 1000, 1, HS_FN_MALLOC, 0x20001000, 100, 3, 0);
	/* A freed at ts + 2000 ... */
	tb_free_rec(&t, ts + 2000, 1, HS_FN_FREE, 0x20000000);
	for (int i = 0; far && i < 70000; i++) {
		tb_alloc(&t, ts + 2000 + 2 * (uint64_t)i, 3, HS_FN_MALLOC, 0x40000000, 16, 2, 0);
		tb_free_rec(&t, ts + 2001 + 2 * (uint64_t)i, 3, HS_FN_FREE, 0x40000000);
	}
	for (int i = 0; instant && i < 70000; i++) {
		tb_alloc(&t, ts + 2000, 1, HS_FN_MALLOC, 0x40000000, 16, 2, 0);
		tb_free_rec(&t, ts + 2000, 1, HS_FN_FREE, 0x40000000);
	}
	/* ... then thread 2's C, stamped at ts + 1000: late. B + C = 250, the new peak, after A's free in the file */
	tb_alloc(&t, ts + 1000, 2, HS_FN_MALLOC, 0x30000000, 150, 4, 0);
	ts += 3000;
	tb_free_rec(&t, ts, 2, HS_FN_FREE, 0x30000000);
	/* churn after, below the peak (B and a 64-byte block) */
	for (int i = 0; i < 50000; i++, ts += 1000) {
		tb_alloc(&t, ts, 1, HS_FN_MALLOC, 0x10000000 + (uint64_t)(i % 512) * 64, 64, 2, 0);
		tb_free_rec(&t, ts + 500, 1, HS_FN_FREE, 0x10000000 + (uint64_t)(i % 512) * 64);
	}
	tb_end(&t, ts + 1000, HS_END_EXIT);
	if (tb_flush(&t) < 0 || tb_write(&t.file, argv[argc - 1]) < 0)
		return 1;
	tb_free(&t);
	return 0;
}
