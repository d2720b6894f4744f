/* records.h - on-disk layout of heapscope traces, shared by the encoder and the reader (see docs/FORMAT.md) */
#ifndef HS_FORMAT_RECORDS_H
#define HS_FORMAT_RECORDS_H

#include <stdint.h>

#include "heapscope/reader.h"

/* PNG-style magic: the high byte catches 7-bit transports, CR LF and ^Z catch text-mode mangling */
#define HS_MAGIC "\x89HST\r\n\x1a\n"
#define HS_MAGIC_LEN 8
#define HS_BYTE_ORDER_MARK 0x01020304u
#define HS_VERSION_MAJOR 1
#define HS_VERSION_MINOR 0

#define HS_FILE_HEADER_SIZE 48
#define HS_FLAG_SAMPLED 0x1u

/*
 * File header, little-endian on x86-64 (the byte-order mark tells):
 *   0  magic[8]
 *   8  u32 byte_order_mark (0x01020304 in the writer's order)
 *  12  u16 version_major, u16 version_minor
 *  16  u32 header_size (48 in version 1.0; readers skip what they do not know)
 *  20  u32 flags
 *  24  u64 sample_bytes (0 in full mode)
 *  32  u64 start_realtime_ns (CLOCK_REALTIME when tracing started)
 *  40  u32 pid
 *  44  u32 header_crc (CRC-32C of bytes 0..43)
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
 * Records inside a decompressed chunk payload. Every record starts with a
 * one-byte type; integers are unsigned LEB128 varints, "s" marks zigzag ones.
 * Events (0x10-0x2f) carry "dts", the time since the previous event of the
 * chunk; other records carry an absolute "ts". Delta state (time, thread,
 * last pointer) resets at each chunk start, so chunks decode independently.
 */
enum hs_record_type {
	HS_REC_THREAD = 0x01,        /* tid: thread of the following events */
	HS_REC_ALLOC = 0x10,         /* s dts, fn, s ptr-delta, size, stack [, s old-ptr minus ptr for realloc] */
	HS_REC_FREE = 0x11,          /* s dts, fn (free, realloc, reallocarray), s ptr-delta */
	HS_REC_MMAP = 0x20,          /* s dts, addr, len, prot, flags, stack */
	HS_REC_MUNMAP = 0x21,        /* s dts, addr, len */
	HS_REC_MREMAP = 0x22,        /* s dts, old_addr, old_len, new_addr, new_len, stack */
	HS_REC_BRK = 0x23,           /* s dts, fn (brk or sbrk), old_brk, new_brk, stack */
	HS_REC_RSS = 0x30,           /* ts, rss bytes */
	HS_REC_MARKER = 0x31,        /* ts, tid, len, bytes */
	HS_REC_MODULE = 0x40,        /* ts, base, path-len, path, id-len, build-id, nseg, {vaddr, memsz, flags, offset}* */
	HS_REC_MODULE_UNLOAD = 0x41, /* ts, base */
	HS_REC_STACK = 0x50,         /* id, parent id, return address: one node of the stack trie */
	HS_REC_PROCESS = 0x60,       /* pid, ppid, exe-len, exe, argc, {len, arg}* */
	HS_REC_TOTALS = 0x61,        /* ts, n, {calls, bytes}* indexed by enum hs_fn: exact, even when sampled */
	HS_REC_END = 0x7f,           /* ts, reason: the process image ended cleanly (enum hs_end_reason) */
};

/* enum hs_fn, the entry point of an event, is public: include/heapscope/reader.h */

#endif
