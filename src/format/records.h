/* records.h - on-disk layout of heapscope traces, shared by the encoder and the reader (see docs/FORMAT.md) */
#ifndef HS_FORMAT_RECORDS_H
#define HS_FORMAT_RECORDS_H

#include <stdint.h>
#include <string.h>

#include "../common/varint.h"
#include "heapscope/reader.h"

/* PNG-style magic: the high byte catches 7-bit transports, CR LF and ^Z catch text-mode mangling */
#define HS_MAGIC "\x89HST\r\n\x1a\n"
#define HS_MAGIC_LEN 8
#define HS_BYTE_ORDER_MARK 0x01020304u
/*
 * 2.0 added FREE_RECENT, which no 1.x reader may skip; 3.0 predicts an
 * allocation's address from the thread's recent frees first, which a 2.x
 * reader would decode into wrong addresses; 4.0 leaves a STACK record's id
 * implied, which a 3.x reader would take for its parent. Readers still take
 * 1.x to 3.x. 4.1 samples requests of 0 bytes as if of 1 (4.0 never did),
 * which a 4.0 reader reads right but weighs as 1. 4.2 adds CHILDREN, which
 * a 4.1 reader skips. 5.0 writes the time stream as runs (a delta whose
 * low bit says that a count of the events after it at its time follows),
 * which a 4.x reader would take for one delta per event. 6.0 adds
 * ALLOC_TOP, an allocation at the end of the thread's latest block carved
 * from free space, which a 5.x reader cannot skip. 7.0 names an
 * allocation's size and stack together, by their place in the chunk's
 * table of pairs (HS_PAIRS_MAX), which a 6.x reader would take for a
 * stack id.
 */
#define HS_VERSION_MAJOR 7
#define HS_VERSION_MINOR 0
#define HS_VERSION_MAJOR_OLDEST 1
#define HS_VERSION_FREED 3       /* the first major version with the freed list */
#define HS_VERSION_STACK_SEQ 4   /* the first whose STACK records leave their id implied */
#define HS_VERSION_TIME_RUNS 5   /* the first whose time stream is runs */
#define HS_VERSION_TOP 6         /* the first with ALLOC_TOP */
#define HS_VERSION_PAIRS 7       /* the first with the chunk's table of (size, stack) pairs */

/*
 * An allocation's size and stack (7.0 on): a pair the chunk has seen is
 * written as its place in the chunk's table, 1 for the first pair the
 * chunk added, in the stack stream; a new one as 0 there, then its stack,
 * and its size in the size stream, and it joins the table while the
 * table holds fewer than this. A program repeats its pairs: sqlite3's (c)
 * sizes and stacks took 746 KB, zstd level 1, and take 673 KB as pairs;
 * python3's (d) 75.7 KB, now 64.0.
 */
#define HS_PAIRS_MAX (1u << 15)

/*
 * A backtrace deeper than the tracer keeps has this return address as its
 * outermost frame, in place of the frames it lost: no call returns to
 * address 1, and readers name it "[truncated]".
 */
#define HS_ADDR_TRUNCATED 1

#define HS_FILE_HEADER_SIZE 56
#define HS_FLAG_SAMPLED 0x1u

/*
 * File header, little-endian on x86-64 (the byte-order mark tells):
 *   0  magic[8]
 *   8  u32 byte_order_mark (0x01020304 in the writer's order)
 *  12  u16 version_major, u16 version_minor
 *  16  u32 header_size (56 in version 1.0; readers skip what they do not know)
 *  20  u32 flags
 *  24  u64 sample_bytes (0 in full mode)
 *  32  u64 start_realtime_ns (CLOCK_REALTIME when tracing started)
 *  40  u32 pid
 *  44  u32 time_resolution_ns (event times are multiples of it)
 *  48  u32 reserved (0)
 *  52  u32 header_crc (CRC-32C of bytes 0..51)
 */

#define HS_CHUNK_MAGIC 0x4b435348u /* "HSCK" read as a little-endian u32 */
#define HS_CHUNK_HEADER_SIZE 24
#define HS_CHUNK_MAX_RAW (8u << 20)
#define HS_CHUNK_ZSTD 0x1u

/*
 * Chunk header:
 *   0  u32 magic "HSCK"
 *   4  u32 flags (HS_CHUNK_ZSTD)
 *   8  u32 stored_size (payload bytes that follow)
 *  12  u32 raw_size (payload size once decompressed)
 *  16  u32 payload_crc (CRC-32C of the stored payload)
 *  20  u32 header_crc (CRC-32C of bytes 0..19)
 */

/*
 * A decompressed payload is a stream count, the streams' lengths, then the
 * streams. Each field of a record goes to the stream of its kind, so that
 * like values sit together and compress well; a record's fields are read
 * back in order from their streams. Integers are unsigned LEB128 varints,
 * "s" marks zigzag ones. Delta state resets at each chunk start.
 */
enum hs_stream {
	HS_STREAM_TYPE,   /* record types, one byte each */
	HS_STREAM_TIME,   /* s event time deltas, in units of the time resolution */
	HS_STREAM_PTR,    /* s block addresses, as differences from a prediction */
	HS_STREAM_SIZE,   /* requested sizes */
	HS_STREAM_STACK,  /* stack ids of events */
	HS_STREAM_MISC,   /* everything else */
	HS_STREAM_COUNT
};

enum hs_record_type {
	HS_REC_THREAD = 0x01,        /* misc: tid of the following events */
	HS_REC_ALLOC = 0x10,         /* + fn (malloc .. pvalloc): time, ptr, size, stack [, ptr: s old - new for realloc] */
	HS_REC_FREE = 0x19,          /* time, ptr */
	HS_REC_FREE_REALLOC = 0x1a,  /* the same, for the block a realloc released */
	HS_REC_FREE_REALLOCARRAY = 0x1b,
	HS_REC_FREE_RECENT = 0x1c,   /* time, ptr: i, the thread's i-th latest allocation of the chunk still in its list */
	HS_REC_MMAP = 0x20,          /* time, misc: addr, len, prot, flags; stack */
	HS_REC_MUNMAP = 0x21,        /* time, misc: addr, len */
	HS_REC_MREMAP = 0x22,        /* time, misc: old_addr, old_len, new_addr, new_len; stack */
	HS_REC_BRK = 0x23,           /* time, misc: old_brk, new_brk; stack */
	HS_REC_SBRK = 0x24,          /* the same, through sbrk */
	/* the rest have all their fields in misc and absolute times in ns */
	HS_REC_RSS = 0x30,           /* ts, rss bytes */
	HS_REC_MARKER = 0x31,        /* ts, tid, len, bytes */
	HS_REC_MODULE = 0x40,        /* ts, base, path-len, path, id-len, build-id, nseg, {vaddr, memsz, flags, offset}* */
	HS_REC_MODULE_UNLOAD = 0x41, /* ts, base */
	HS_REC_STACK = 0x50,         /* id - parent id, return address - the parent's: the next node of the stack trie */
	HS_REC_PROCESS = 0x60,       /* pid, ppid, exe-len, exe, argc, {len, arg}* */
	HS_REC_TOTALS = 0x61,        /* ts, n, {calls, bytes}* indexed by enum hs_fn: exact, even when sampled */
	HS_REC_SIGNAL = 0x62,        /* 2.1: len, ts, signo: a signal is ending the process, the trace was flushed */
	HS_REC_DISABLED = 0x63,      /* 4.1: len, ts, why-len, why: the tracer stopped itself; an END (stop) follows */
	HS_REC_CHILDREN = 0x64,      /* 4.2: len, ts, n: child processes this process started that are not traced */
	HS_REC_END = 0x7f,           /* ts, reason: the process image ended cleanly (enum hs_end_reason) */
	/* 3.0: fields folded into the type */
	HS_REC_FREE_RECENT_AT = 0x80, /* + 16 k + i: FREE_RECENT of place i < 16, by free (k 0), realloc (1), reallocarray (2): time */
	HS_REC_ALLOC_AT = 0xb0,       /* + fn but realloc's two: ALLOC at its predicted address: size, stack: time */
	/* 6.0 */
	HS_REC_ALLOC_TOP = 0xc0,      /* + fn but realloc's two: ALLOC at the thread's top (struct hs_predict): size, stack: time */
};

/* 3.0's FREE_RECENT with place i (< HS_RECENT) by entry point fn (free, realloc, reallocarray) */
static inline unsigned hs_free_recent_type(int fn, unsigned i)
{
	if (fn == HS_FN_FREE)   /* the usual one, asked first: the writer encodes every free */
		return HS_REC_FREE_RECENT_AT + i;
	return HS_REC_FREE_RECENT_AT + 16u * (fn == HS_FN_REALLOC ? 1u : fn == HS_FN_REALLOCARRAY ? 2u : 0u) + i;
}

/* how an allocation's record gives its address */
enum hs_alloc_at {
	HS_AT_PTR,   /* ALLOC: a difference from the prediction in ptr */
	HS_AT_PRED,  /* ALLOC_AT (3.0): the prediction */
	HS_AT_TOP,   /* ALLOC_TOP (6.0): the thread's top */
};

/*
 * The entry point of an allocation's record type: ALLOC + fn, from 3.0 (v3)
 * ALLOC_AT + fn, from 6.0 (v6) ALLOC_TOP + fn; *at says which (enum
 * hs_alloc_at). -1 for any other type.
 */
static inline int hs_alloc_folds(unsigned fn)
{
	/* realloc's old address needs the ptr stream anyway: its records never fold the address */
	return fn <= HS_FN_PVALLOC && fn != HS_FN_REALLOC && fn != HS_FN_REALLOCARRAY;
}

static inline int hs_alloc_rec_fn(unsigned type, int v3, int v6, int *at)
{
	unsigned fn = type - HS_REC_ALLOC, fa = type - HS_REC_ALLOC_AT, ft = type - HS_REC_ALLOC_TOP;

	*at = v3 && hs_alloc_folds(fa) ? HS_AT_PRED : v6 && hs_alloc_folds(ft) ? HS_AT_TOP : HS_AT_PTR;
	if (*at != HS_AT_PTR)
		return (int)(*at == HS_AT_PRED ? fa : ft);
	return fn <= HS_FN_PVALLOC ? (int)fn : -1;
}

/* The entry point of a FREE record with its address: free, or a realloc's or reallocarray's; -1 for any other type. */
static inline int hs_free_rec_fn(unsigned type)
{
	return type == HS_REC_FREE ? HS_FN_FREE : type == HS_REC_FREE_REALLOC ? HS_FN_REALLOC :
	       type == HS_REC_FREE_REALLOCARRAY ? HS_FN_REALLOCARRAY : -1;
}

/* The entry point of a free of a recent block: FREE_RECENT, or from 3.0 (v3) FREE_RECENT_AT; -1 for any other type. */
static inline int hs_free_recent_rec_fn(unsigned type, int v3)
{
	unsigned k = (type - HS_REC_FREE_RECENT_AT) >> 4;

	if (type == HS_REC_FREE_RECENT)
		return HS_FN_FREE;
	if (!v3 || k > 2)
		return -1;
	return k == 0 ? HS_FN_FREE : k == 1 ? HS_FN_REALLOC : HS_FN_REALLOCARRAY;
}

/*
 * Allocators hand back the block last freed in the same size class, so an
 * allocation's address is predicted by the previous one of its class. The
 * classes below 16 KiB are glibc's: an 8-byte header, 16-byte granules.
 */
#define HS_SIZE_CLASSES 1088
static inline unsigned hs_size_class(uint64_t size)
{
	if (size <= 16384)
		return (unsigned)((size + 23) >> 4);
	return 1024u + (unsigned)(63 - __builtin_clzll(size));
}

/*
 * Address prediction state, per thread (threads interleave in a chunk, each
 * with its own pattern): 16 slots by tid; a slot taken over by another
 * thread, or first used in a chunk, starts from zero.
 */
#define HS_PREDICT_SLOTS 16
#define HS_RECENT 16      /* the recent-allocations list of FREE_RECENT */
#define HS_FREED 128      /* the freed list (3.0): the blocks of the latest FREE_RECENTs */
/*
 * The classes the freed list serves: sizes up to 4072 bytes. glibc's
 * stacks of freed blocks stop at 1032 (its per-thread cache) and the
 * list's own state stays within a few KiB, in the writer's L1 with the
 * other threads' slots.
 */
#define HS_FREED_CLASSES 256
struct hs_predict {
	uint32_t tid;
	uint32_t chunk;   /* chunk number (from 1) this state belongs to */
	uint64_t last;
	uint64_t top;     /* 6.0: the end of the latest ALLOC's or ALLOC_TOP's block, where the next one carved is expected */
	uint32_t rhead, nrecent;          /* recent[rhead]: the latest; a ring */
	uint32_t nfreed;                  /* FREE_RECENTs of the slot in the chunk: the latest is number nfreed */
	uint64_t recent[HS_RECENT];
	uint16_t recent_cls[HS_RECENT];   /* the size class of each */
	uint32_t freed_head[HS_FREED_CLASSES]; /* per class, its latest FREE_RECENT not taken yet (0: none) */
	uint64_t freed[HS_FREED];         /* the block of FREE_RECENT number n, at n % HS_FREED */
	uint32_t freed_prev[HS_FREED];    /* the number of the one before it in its class (0: none) */
	uint64_t cls[HS_SIZE_CLASSES];
};

static inline struct hs_predict *hs_predict_for(struct hs_predict *slots, uint32_t tid, uint32_t chunk)
{
	struct hs_predict *p = &slots[tid & (HS_PREDICT_SLOTS - 1)];

	if (p->chunk != chunk || p->tid != tid) {
		memset(p->cls, 0, sizeof(p->cls));
		memset(p->freed_head, 0, sizeof(p->freed_head));
		p->last = 0;
		p->top = 0;
		p->nrecent = 0;
		p->nfreed = 0;
		p->tid = tid;
		p->chunk = chunk;
	}
	return p;
}

/*
 * Where an allocation of size class cls is expected. From 3.0 (freed != 0):
 * glibc hands back the block freed last in the class (its per-thread cache
 * and fast bins are stacks), so first the latest block of the class among
 * the thread's latest HS_FREED FREE_RECENTs that no allocation took yet;
 * the allocation takes it, right or wrong. Then the class's last block,
 * else the thread's last address.
 */
static inline uint64_t hs_predict_alloc(struct hs_predict *p, unsigned cls, int freed)
{
	if (freed && cls < HS_FREED_CLASSES) {
		uint32_t n = p->freed_head[cls];
		/* numbers up to nfreed - HS_FREED were written over */
		if (n && n + HS_FREED > p->nfreed) {
			p->freed_head[cls] = p->freed_prev[n & (HS_FREED - 1)];
			return p->freed[n & (HS_FREED - 1)];
		}
	}
	return p->cls[cls] ? p->cls[cls] : p->last;
}

/*
 * 6.0: where the next block carved from free space is expected. glibc
 * carves fresh blocks one after the other from its top chunk (or from a
 * large free chunk it splits), each the size plus an 8-byte header rounded
 * up to 16 bytes, at least 32: python3's (d) allocates 13.3M of its 18.9M
 * blocks so, which no other prediction names. Every ALLOC and ALLOC_TOP
 * moves the top past its block; an ALLOC_AT, a block handed back from a
 * free list, does not.
 */
static inline void hs_predict_top(struct hs_predict *p, uint64_t ptr, uint64_t size)
{
	uint64_t span = (size + 23) & ~(uint64_t)15;

	p->top = ptr + (span < 32 ? 32 : span);
}

/*
 * A realloc's old address (3.0): 0, the block stayed where it was; 1, the
 * thread's previous address, which the FREE by realloc of a moved block has
 * just set; else 2 + zigzag(old - new).
 */
static inline uint64_t hs_realloc_old_code(uint64_t old, uint64_t ptr, uint64_t last)
{
	if (old == ptr)
		return 0;
	if (old == last)
		return 1;
	return 2 + hs_zigzag((int64_t)(old - ptr));
}

static inline uint64_t hs_realloc_old(uint64_t code, uint64_t ptr, uint64_t last)
{
	if (code < 2)
		return code ? last : ptr;
	return ptr + (uint64_t)hs_unzigzag(code - 2);
}

/* A FREE_RECENT's block of size class cls enters the freed list (3.0); it is numbered whatever its class. */
static inline void hs_freed_push(struct hs_predict *p, uint64_t ptr, unsigned cls)
{
	uint32_t n = ++p->nfreed, i = n & (HS_FREED - 1);

	if (cls >= HS_FREED_CLASSES)
		return;
	p->freed[i] = ptr;
	p->freed_prev[i] = p->freed_head[cls];
	p->freed_head[cls] = n;
}

/*
 * The thread's latest allocations (docs/FORMAT.md, "Frees"): most blocks
 * are freed soon, by their own thread, so a free names its block by its
 * place in this list rather than by an address, which compresses far
 * better. Every ALLOC enters it; FREE_RECENT takes its block out.
 */
static inline void hs_recent_push(struct hs_predict *p, uint64_t ptr, unsigned cls)
{
	p->rhead = (p->rhead - 1) & (HS_RECENT - 1);
	p->recent[p->rhead] = ptr;
	p->recent_cls[p->rhead] = (uint16_t)cls;
	if (p->nrecent < HS_RECENT)
		p->nrecent++;
}

/* Place of ptr in the list (0: the latest), or -1. */
static inline int hs_recent_find(const struct hs_predict *p, uint64_t ptr)
{
	for (uint32_t i = 0; i < p->nrecent; i++)
		if (p->recent[(p->rhead + i) & (HS_RECENT - 1)] == ptr)
			return (int)i;
	return -1;
}

/*
 * Takes out the entry at place i < nrecent; from 3.0 (freed != 0) into the
 * freed list. The list closes up on whichever side of the place is
 * shorter: sqlite3's frees of recent blocks take places 7, 9 and 13 of 15
 * as often as 0 and 1, and moving the later ones up was 18M moves, 7% of
 * decoding its trace.
 */
static inline uint64_t hs_recent_take(struct hs_predict *p, uint32_t i, int freed)
{
	uint64_t v = p->recent[(p->rhead + i) & (HS_RECENT - 1)];
	unsigned cls = p->recent_cls[(p->rhead + i) & (HS_RECENT - 1)];

	if (2 * i < p->nrecent) {
		for (uint32_t k = i; k > 0; k--) {
			p->recent[(p->rhead + k) & (HS_RECENT - 1)] = p->recent[(p->rhead + k - 1) & (HS_RECENT - 1)];
			p->recent_cls[(p->rhead + k) & (HS_RECENT - 1)] = p->recent_cls[(p->rhead + k - 1) & (HS_RECENT - 1)];
		}
		p->rhead = (p->rhead + 1) & (HS_RECENT - 1);
	} else {
		for (uint32_t k = i; k + 1 < p->nrecent; k++) {
			p->recent[(p->rhead + k) & (HS_RECENT - 1)] = p->recent[(p->rhead + k + 1) & (HS_RECENT - 1)];
			p->recent_cls[(p->rhead + k) & (HS_RECENT - 1)] = p->recent_cls[(p->rhead + k + 1) & (HS_RECENT - 1)];
		}
	}
	p->nrecent--;
	if (freed)
		hs_freed_push(p, v, cls);
	return v;
}

/* Types a later minor version may add, followed by their length in misc (docs/FORMAT.md). */
static inline int hs_record_skippable(unsigned t)
{
	return (t >= 0x02 && t <= 0x0f) || (t >= 0x25 && t <= 0x2f) || (t >= 0x32 && t <= 0x3f) ||
	       (t >= 0x42 && t <= 0x4f) || (t >= 0x62 && t <= 0x7e);
}

/* enum hs_fn and enum hs_end_reason are public: include/heapscope/reader.h */

#endif
