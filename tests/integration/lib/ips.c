/* ips.c - prints each allocation's return addresses, innermost first, as offsets in their 4 KiB page (ASLR moves the rest) */
#include <inttypes.h>
#include <stdio.h>

#include "heapscope/reader.h"

int main(int argc, char **argv)
{
	static struct hs_event ev[256];
	struct hs_reader *r = NULL;
	int n;

	if (argc != 2 || hs_reader_open(&r, argv[1]) < 0) {
		fprintf(stderr, "ips: cannot read '%s': %s\n", argc > 1 ? argv[1] : "", r ? hs_reader_error(r) : "usage: ips TRACE");
		return 1;
	}
	while ((n = hs_reader_next_batch(r, ev, 256)) > 0)
		for (int i = 0; i < n; i++) {
			uint64_t ips[128];
			int k;

			if (ev[i].kind != HS_EVENT_ALLOC)
				continue;
			k = hs_reader_stack(r, ev[i].stack, ips, 128);
			printf("%" PRIu64 ":", ev[i].size);
			for (int j = 0; j < k; j++)
				printf(" %" PRIx64, ips[j] & 0xfff);
			printf("\n");
		}
	hs_reader_close(r);
	return n < 0;
}
