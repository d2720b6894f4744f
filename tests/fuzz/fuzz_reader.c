/*
 * fuzz_reader.c - libFuzzer target for the trace reader: whatever the bytes,
 * reading them must not crash, leak, hang or trip a sanitizer. The input
 * becomes a trace file as wrap.h says.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heapscope/reader.h"
#include "wrap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_reader *r = NULL;
	struct hs_event ev;
	static uint32_t seen[4096];
	size_t nseen = 0;
	volatile uint64_t sink = 0;

	fuzz_trace_file(data, size);

	{
		/* the end hint reads the last complete chunk alone (stack nodes it cannot place are skipped) */
		uint64_t end = 0;
		(void)hs_reader_end_hint(path, &end);
		sink += end;
	}
	/*
	 * decoding ahead in a second thread, in this one, or in a thread that
	 * the probe starts and retires after stretches of 16 events, as the
	 * input's size says
	 */
	if ((size >> 2) & 1 || !((size >> 4) & 1)) {
		setenv("HEAPSCOPE_READER_THREADS", (size >> 2) & 1 ? "0" : "1", 1);
		unsetenv("HEAPSCOPE_TEST_READER_PROBE");
	} else {
		unsetenv("HEAPSCOPE_READER_THREADS");
		setenv("HEAPSCOPE_TEST_READER_PROBE", "16", 1);
	}
	if (hs_reader_open(&r, path) == 0) {
		const struct hs_trace_info *info;
		static struct hs_event batch[64];
		const struct hs_event *block = NULL;
		/*
		 * one event at a time, in batches of 1 to 64 (hs_reader_next_batch) or
		 * in place (hs_reader_next_block), as the input's size says
		 */
		int rc, n = 0, bs = size & 1 ? (int)(size >> 1) % 64 + 1 : 0, nb = 0, bi = 0;
		int in_place = !bs && (size >> 1) & 1;
		/* without addresses (the ptr stream unread), as the input's size says */
		if ((size >> 3) & 1)
			(void)hs_reader_skip_addresses(r);
		for (;;) {
			if (in_place) {
				if (bi == nb) {
					if ((rc = hs_reader_next_block(r, &block)) <= 0)
						break;
					nb = rc;
					bi = 0;
				}
				ev = block[bi++];
			} else if (!bs) {
				if ((rc = hs_reader_next(r, &ev)) <= 0)
					break;
			} else {
				if (bi == nb) {
					if ((rc = hs_reader_next_batch(r, batch, bs)) <= 0)
						break;
					nb = rc;
					bi = 0;
				}
				ev = batch[bi++];
			}
			if (n++ >= 1000000)
				break;
			sink += ev.time_ns + ev.ptr + ev.size + ev.addr + ev.len;
			if (ev.stack && nseen < sizeof(seen) / sizeof(seen[0]))
				seen[nseen++] = ev.stack;
			if (ev.kind == HS_EVENT_MARKER && ev.label_len)
				sink += (uint8_t)ev.label[ev.label_len - 1];
			if (ev.kind == HS_EVENT_MODULE && ev.module)
				sink += ev.module->lo + ev.module->hi + ev.module->build_id_len +
					(ev.module->path[0] ? 1 : 0);
			if (ev.kind == HS_EVENT_TOTALS)
				sink += ev.calls[HS_FN_COUNT - 1] + ev.bytes[HS_FN_COUNT - 1];
		}
		(void)hs_reader_error(r);
		(void)hs_reader_warning(r);
		for (size_t i = 0; i < nseen; i++) {
			uint64_t ips[128];
			int k = hs_reader_stack(r, seen[i], ips, 128);
			for (int j = 0; j < k; j++)
				sink += ips[j];
		}
		/* every node the reader knows, too */
		for (uint32_t s = 0, cnt = hs_reader_stack_count(r); s < cnt && s < 100000; s++) {
			uint64_t ips[8];
			int k = hs_reader_stack(r, s, ips, 8);
			sink += (uint64_t)k;
		}
		info = hs_reader_info(r);
		sink += info->pid + info->ppid + info->sample_bytes + (info->exe ? (uint8_t)info->exe[0] : 0);
		for (int i = 0; i < info->argc; i++)
			sink += (uint8_t)info->argv[i][0];
		for (size_t i = 0; i < hs_reader_module_count(r); i++)
			sink += hs_reader_module(r, i)->base;
	}
	(void)hs_reader_error(r);
	hs_reader_close(r);
	(void)sink;
	return 0;
}
