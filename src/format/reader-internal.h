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
	uint64_t file_size;             /* at open */
	char err[512];
	char warn[512];
	int failed;
	struct hs_trace_info info;

	uint64_t chunk_off, next_chunk;
	unsigned long chunks;
	uint8_t *zbuf, *rbuf;
	struct ZSTD_DCtx_s *dctx;   /* kept from chunk to chunk: one made per chunk cost a report on (c) 1.5% */
	size_t zcap, rcap;
	const uint8_t *sp[HS_STREAM_COUNT], *se[HS_STREAM_COUNT]; /* stream cursors and ends */
	uint64_t q;                 /* delta state: time in resolution units */
	uint64_t q_ns;              /* q in ns: most events are in the unit of the one before */
	uint64_t run_left;          /* events still at time q in the current run (5.0) */
	uint32_t tid;
	uint32_t chunk_no;
	struct hs_predict predict[HS_PREDICT_SLOTS];
	struct hs_predict *pred;   /* the current thread's, in this chunk; NULL: look it up */
	int freed;                 /* the file predicts addresses from the freed list (3.0) */
	int runs;                  /* its time stream is runs (5.0) */
	int top;                   /* it has ALLOC_TOP records (6.0) */
	int pairs;                 /* it names allocations' sizes and stacks as pairs (7.0) */
	uint32_t npairs, pair_cap; /* the chunk's table of pairs (records.h, HS_PAIRS_MAX), grown as pairs come */
	struct hs_pair { uint64_t size; uint32_t stack; } *pair;
	uint8_t fast[256];         /* by record type: FAST_* << 4 | entry point, for fast_one() (reader.c) */

	uint32_t *stack_parent;
	uint64_t *stack_ip;
	uint32_t nstacks;
	size_t nstacks_cap;
	/*
	 * An event's stack id is below it: nodes come before the events that
	 * name them (at least 1: id 0, no backtrace). While skimming, whose
	 * nodes are not read, any 32-bit id.
	 */
	uint64_t stack_lim;

	struct hs_module **mods;
	size_t nmods, mods_cap;

	uint64_t calls[HS_FN_COUNT], bytes[HS_FN_COUNT];

	struct hs_symbols *sym;
	char *binary_dirs;          /* hs_reader_set_binary_dirs, or NULL */
	int skim;                   /* hs_reader_end_hint: one chunk read alone, its stack nodes ignored */
	int no_addresses;           /* hs_reader_skip_addresses: the ptr stream and the predictions go unread */

	/*
	 * Decoding ahead (ahead.c): a second thread takes over the fields of
	 * decoding above into a reader of its own, whose stack nodes and modules
	 * travel with its blocks of events (ho) to this one, which alone keeps
	 * the stack table, the modules and the symbols.
	 */
	struct hs_ahead *ahead;
	struct hs_block *ho;
	int ahead_tried;
	int probe;                  /* timing one core against two (reader.c), or PROBE_OFF */
	long probe_left;            /* events left in the probe's stretch */
	long probe_len;             /* a stretch's events */
	int probe_test;             /* HEAPSCOPE_TEST_READER_PROBE: short stretches, and the thread retired whatever it did */
	uint64_t probe_t0;
	double probe_one_ns;        /* an event's time on one core */
	long probe_mark;            /* the thread's stretch: events at the last look at its pace */
	uint64_t probe_mark_t;
	struct hs_event *own;       /* hs_reader_next_block's events when no thread decodes ahead */
};

char *hs_strndup(const char *s, size_t n);
int hs_reader_no_memory(struct hs_reader *r, const char *what);
int hs_reader_store_stack(struct hs_reader *r, uint64_t id, uint64_t parent, uint64_t ip);
uint64_t hs_reader_stack_ip(const struct hs_reader *r, uint64_t parent, uint64_t ip);
int hs_reader_add_module(struct hs_reader *r, struct hs_module *m);
void hs_reader_free_module(struct hs_module *m);

/* ahead.c */
enum hs_ahead_mode { HS_AHEAD_NEVER, HS_AHEAD_ALWAYS, HS_AHEAD_IF_FASTER };
enum hs_ahead_mode hs_ahead_mode(void);
/* 1: a probe on this machine in the last day found one core faster (the cache's "reader-probe") */
int hs_ahead_one_core_known(void);
void hs_ahead_remember_one_core(double one_ns, double two_ns);
int hs_ahead_start(struct hs_reader *r);
void hs_ahead_retire(struct hs_reader *r);
int hs_ahead_take(struct hs_reader *r, struct hs_event *ev, int n);
int hs_ahead_block(struct hs_reader *r, const struct hs_event **ev);
void hs_ahead_stop(struct hs_reader *r);
int hs_block_stack(struct hs_block *b, uint64_t id, uint64_t parent, uint64_t ip);
int hs_block_module(struct hs_block *b, struct hs_module *m);
void hs_symbols_invalidate(struct hs_reader *r);
void hs_symbols_free(struct hs_reader *r);

#endif
