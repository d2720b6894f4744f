/* fuzz_ehframe.c - libFuzzer target: the tracer's .eh_frame reader on arbitrary segment bytes, which it must never read past */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/ehframe.h"

/*
 * Input: a 2-byte offset of .eh_frame_hdr in the segment, a 4-byte pc
 * offset from it, then the segment's bytes, copied to a block of exactly
 * their size so that AddressSanitizer sees any read past its end. The
 * rows asked for: near that pc, and at each search-table entry's start
 * (which leads into the FDEs and CIEs).
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_eh_frame f;
	struct hs_eh_row row;
	uint16_t hdr_off;
	int32_t rel;
	uint8_t *seg;
	size_t n;
	ElfW(Phdr) ph[2];

	if (size < 7)
		return 0;
	memcpy(&hdr_off, data, 2);
	memcpy(&rel, data + 2, 4);
	n = size - 6;
	if (!(seg = malloc(n)))
		return 0;
	memcpy(seg, data + 6, n);
	memset(ph, 0, sizeof(ph));
	ph[0].p_type = PT_LOAD;
	ph[0].p_flags = PF_R;
	ph[0].p_filesz = ph[0].p_memsz = n;
	ph[1].p_type = PT_GNU_EH_FRAME;
	ph[1].p_vaddr = hdr_off % n;
	if (hs_eh_frame_of(ph, 2, (uintptr_t)seg, &f) == 0 && hs_eh_frame_open(&f) == 0) {
		for (int k = 0; k < 8; k++)
			hs_eh_row_at(&f, f.hdr + (uintptr_t)(intptr_t)rel + (uintptr_t)k * 3, &row);
		for (size_t i = 0; i < f.count && i < 32; i++) {
			int32_t start;
			memcpy(&start, (const void *)(f.table + 8 * i), 4);
			hs_eh_row_at(&f, f.hdr + (uintptr_t)(intptr_t)start, &row);
			hs_eh_row_at(&f, f.hdr + (uintptr_t)(intptr_t)start + (uintptr_t)(rel & 0xff), &row);
		}
	}
	free(seg);
	return 0;
}
