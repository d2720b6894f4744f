/* reader-internal.h - the reader's state, shared by the decoder and the symbolizer */
#ifndef HS_FORMAT_READER_INTERNAL_H
#define HS_FORMAT_READER_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "heapscope/reader.h"
#include "records.h"

struct hs_symbols;

struct hs_reader {
	char *path;
	FILE *f;
	uint64_t file_size;
	char err[512];
	char warn[512];
	int failed;
	struct hs_trace_info info;

	uint64_t chunk_off, next_chunk;
	unsigned long chunks;
	uint8_t *zbuf, *rbuf;
	size_t zcap, rcap;
	const uint8_t *sp[HS_STREAM_COUNT], *se[HS_STREAM_COUNT]; /* stream cursors and ends */
	uint64_t q;                 /* delta state: time in resolution units */
	uint32_t tid;
	uint32_t chunk_no;
	struct hs_predict predict[HS_PREDICT_SLOTS];
	struct hs_predict *pred;   /* the current thread's, in this chunk; NULL: look it up */

	uint32_t *stack_parent;
	uint64_t *stack_ip;
	uint32_t nstacks;
	size_t nstacks_cap;

	struct hs_module **mods;
	size_t nmods, mods_cap;

	uint64_t calls[HS_FN_COUNT], bytes[HS_FN_COUNT];

	struct hs_symbols *sym;
	int skim;                   /* hs_reader_end_hint: one chunk read alone, its stack nodes ignored */
};

char *hs_strndup(const char *s, size_t n);
void hs_symbols_invalidate(struct hs_reader *r);
void hs_symbols_free(struct hs_reader *r);

#endif
