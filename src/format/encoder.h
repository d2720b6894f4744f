/* encoder.h - builds the file header and compressed, checksummed chunks */
#ifndef HS_FORMAT_ENCODER_H
#define HS_FORMAT_ENCODER_H

#include <stddef.h>
#include <stdint.h>

#include "records.h"

struct hs_encoder;

void hs_header_encode(uint8_t out[HS_FILE_HEADER_SIZE], uint32_t flags, uint64_t sample_bytes,
		      uint64_t start_realtime_ns, uint32_t pid, uint32_t time_resolution_ns);

/* Memory comes from mmap, never malloc: the tracer's writer uses this. */
int hs_encoder_new(struct hs_encoder **out);
void hs_encoder_free(struct hs_encoder *enc);

/*
 * fn(arg) runs between two pieces of a chunk's compression (128 KiB of
 * input each); NULL for none. The tracer's writer ends its stamp epochs
 * there (src/tracer/writer.c put_chunk).
 */
void hs_encoder_set_pause(struct hs_encoder *enc, void (*fn)(void *), void *arg);

/*
 * Compresses raw (at most HS_CHUNK_MAX_RAW bytes) into one chunk; *chunk
 * points into the encoder and stays valid until the next call.
 */
int hs_encoder_chunk(struct hs_encoder *enc, const void *raw, size_t raw_len,
		     const void **chunk, size_t *chunk_len);

/*
 * The same, for raw made of parts that each end at one of the ncuts
 * offsets in cuts (ascending): no zstd block mixes two parts, so each is
 * compressed with statistics of its own (a chunk's streams: sqlite3's
 * trace 3.5% smaller).
 */
int hs_encoder_chunk_parts(struct hs_encoder *enc, const void *raw, size_t raw_len, const size_t *cuts, int ncuts,
			   const void **chunk, size_t *chunk_len);

#endif
