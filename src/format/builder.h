/* builder.h - encodes events and records into the streams of one chunk (docs/FORMAT.md, "Records") */
#ifndef HS_FORMAT_BUILDER_H
#define HS_FORMAT_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "encoder.h"
#include "heapscope/reader.h"

struct hs_builder;

/* Memory comes from mmap, never malloc: the tracer's writer uses this. */
int hs_builder_new(struct hs_builder **out, uint32_t time_resolution_ns);
void hs_builder_free(struct hs_builder *b);

/*
 * Appends one event (ALLOC, FREE, MMAP, MUNMAP, MREMAP, BRK), preceded by a
 * THREAD record when its thread differs from the previous event's.
 */
void hs_builder_event(struct hs_builder *b, const struct hs_event *ev);

/*
 * Writes the events' times as major version major (from 1 up to
 * HS_VERSION_MAJOR, the default) writes them: for the tests' traces of
 * older versions.
 */
void hs_builder_set_major(struct hs_builder *b, unsigned major);

/* Appends an already encoded non-event record: its type byte, then its fields. */
int hs_builder_record(struct hs_builder *b, const uint8_t *rec, size_t len);

/* Bytes the chunk would hold uncompressed; 0 when empty. */
size_t hs_builder_size(const struct hs_builder *b);

/* Room left for one more record of len bytes without passing HS_CHUNK_MAX_RAW. */
int hs_builder_fits(const struct hs_builder *b, size_t len);

/*
 * Compresses what was appended into one chunk (see hs_encoder_chunk) and
 * starts the next one with fresh delta state.
 */
int hs_builder_flush(struct hs_builder *b, struct hs_encoder *enc, const void **chunk, size_t *chunk_len);

/* Drops what was appended, as a flush would, without encoding it. */
void hs_builder_clear(struct hs_builder *b);

#endif
