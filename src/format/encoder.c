/* encoder.c - file header and chunk encoding over zstd with a static, mmap-backed context */
#define _DEFAULT_SOURCE
#define ZSTD_STATIC_LINKING_ONLY
#include "encoder.h"

#include <errno.h>
#include <sys/mman.h>
#include <zstd.h>

#include "../common/bytes.h"
#include "../common/crc32c.h"
#include "../common/pages.h"

/* Level 1: the writer must keep up with millions of events a second on one core. */
#define HS_ZSTD_LEVEL 1

struct hs_encoder {
	ZSTD_CCtx *cctx;
	void *workspace;
	size_t workspace_size;
	uint8_t *out;
	size_t out_cap;
	size_t total_size;
	void (*pause)(void *);
	void *pause_arg;
};

void hs_header_encode(uint8_t out[HS_FILE_HEADER_SIZE], uint32_t flags, uint64_t sample_bytes,
		      uint64_t start_realtime_ns, uint32_t pid, uint32_t time_resolution_ns)
{
	memcpy(out, HS_MAGIC, HS_MAGIC_LEN);
	hs_put_u32(out + 8, HS_BYTE_ORDER_MARK);
	hs_put_u16(out + 12, HS_VERSION_MAJOR);
	hs_put_u16(out + 14, HS_VERSION_MINOR);
	hs_put_u32(out + 16, HS_FILE_HEADER_SIZE);
	hs_put_u32(out + 20, flags);
	hs_put_u64(out + 24, sample_bytes);
	hs_put_u64(out + 32, start_realtime_ns);
	hs_put_u32(out + 40, pid);
	hs_put_u32(out + 44, time_resolution_ns ? time_resolution_ns : 1);
	hs_put_u32(out + 48, 0);
	hs_put_u32(out + 52, hs_crc32c(0, out, 52));
}

int hs_encoder_new(struct hs_encoder **out)
{
	size_t ws = ZSTD_estimateCStreamSize(HS_ZSTD_LEVEL);
	size_t cap = HS_CHUNK_HEADER_SIZE + ZSTD_compressBound(HS_CHUNK_MAX_RAW);
	size_t total = sizeof(struct hs_encoder) + ws + cap;
	struct hs_encoder *enc;
	uint8_t *mem;

	total = (total + 4095) & ~(size_t)4095;
	mem = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return -ENOMEM;
	enc = (struct hs_encoder *)mem;
	enc->total_size = total;
	enc->workspace = mem + ((sizeof(*enc) + 63) & ~(size_t)63);
	enc->workspace_size = ws;
	enc->out = (uint8_t *)enc->workspace + ws;
	enc->out_cap = cap;
	enc->cctx = ZSTD_initStaticCCtx(enc->workspace, ws);
	/* each chunk's output, rewritten every time: a forked child gets it zeroed, not shared (see builder.c) */
	hs_wipe_on_fork(enc->out, cap);
	/*
	 * Streaming, from and into our own buffers (stable: no copies, no
	 * buffers of zstd's). A static context starts with no content size
	 * in its frames; the reader checks it.
	 */
	if (!enc->cctx ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(enc->cctx, ZSTD_c_compressionLevel, HS_ZSTD_LEVEL)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(enc->cctx, ZSTD_c_contentSizeFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(enc->cctx, ZSTD_c_stableInBuffer, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(enc->cctx, ZSTD_c_stableOutBuffer, 1))) {
		munmap(mem, total);
		return -ENOMEM;
	}
	*out = enc;
	return 0;
}

void hs_encoder_free(struct hs_encoder *enc)
{
	if (enc)
		munmap(enc, enc->total_size);
}

void hs_encoder_set_pause(struct hs_encoder *enc, void (*fn)(void *), void *arg)
{
	enc->pause = fn;
	enc->pause_arg = arg;
}

int hs_encoder_chunk(struct hs_encoder *enc, const void *raw, size_t raw_len,
		     const void **chunk, size_t *chunk_len)
{
	return hs_encoder_chunk_parts(enc, raw, raw_len, NULL, 0, chunk, chunk_len);
}

int hs_encoder_chunk_parts(struct hs_encoder *enc, const void *raw, size_t raw_len, const size_t *cuts, int ncuts,
			   const void **chunk, size_t *chunk_len)
{
	uint8_t *h = enc->out;
	ZSTD_outBuffer out = { h + HS_CHUNK_HEADER_SIZE, enc->out_cap - HS_CHUNK_HEADER_SIZE, 0 };
	ZSTD_inBuffer in = { raw, 0, 0 };
	size_t left, n;
	int cut = 0;

	if (raw_len > HS_CHUNK_MAX_RAW)
		return -E2BIG;
	ZSTD_CCtx_reset(enc->cctx, ZSTD_reset_session_only);
	if (ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(enc->cctx, raw_len)))
		return -EIO;
	for (;;) {
		int last, at_cut;

		while (cut < ncuts && cuts[cut] <= in.size)
			cut++;
		/* a block of zstd's largest (128 KiB) at a time, the pause between; a part's end ends its block */
		in.size = raw_len - in.size > ZSTD_BLOCKSIZE_MAX ? in.size + ZSTD_BLOCKSIZE_MAX : raw_len;
		at_cut = cut < ncuts && cuts[cut] <= in.size;
		if (at_cut)
			in.size = cuts[cut];
		last = in.size == raw_len;
		left = ZSTD_compressStream2(enc->cctx, &out, &in, last ? ZSTD_e_end : at_cut ? ZSTD_e_flush : ZSTD_e_continue);
		if (ZSTD_isError(left))
			return -EIO;
		/* the output has room for the whole frame (compressBound): an end or a flush leaves nothing behind */
		if (last)
			break;
		if (at_cut && left)
			return -EIO;
		if (enc->pause)
			enc->pause(enc->pause_arg);
	}
	if (left || in.pos != raw_len)
		return -EIO;
	n = out.pos;
	hs_put_u32(h, HS_CHUNK_MAGIC);
	hs_put_u32(h + 4, HS_CHUNK_ZSTD);
	hs_put_u32(h + 8, (uint32_t)n);
	hs_put_u32(h + 12, (uint32_t)raw_len);
	hs_put_u32(h + 16, hs_crc32c(0, h + HS_CHUNK_HEADER_SIZE, n));
	hs_put_u32(h + 20, hs_crc32c(0, h, 20));
	*chunk = h;
	*chunk_len = HS_CHUNK_HEADER_SIZE + n;
	return 0;
}
