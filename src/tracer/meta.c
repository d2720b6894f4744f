/* meta.c - buffer of records that are not thread events: stacks, modules, rss, markers */
#include <pthread.h>
#include <string.h>

#include "../common/varint.h"
#include "tracer.h"

/*
 * Grows by doubling into fresh mappings. Split points every ~1 MiB let the
 * writer cut it into chunks at record boundaries without parsing it.
 */
#define HS_META_SPLIT (1u << 20)
#define HS_META_MAX_SPLITS 8192

static struct hs_lock meta_lock = HS_LOCK_INIT;
static uint8_t *buf;
static size_t blen, cap, taken;
static size_t splits[HS_META_MAX_SPLITS];
static size_t nsplits, split_pos;

int hs_meta_init(void)
{
	cap = 1u << 20;
	buf = hs_map(cap);
	return buf ? 0 : -1;
}

/* Tracing could not start: the program gets the memory back. */
void hs_meta_release(void)
{
	hs_unmap(buf, cap);
	buf = NULL;
}

/* Stored with a length prefix so the writer can split each record into the chunk's streams. */
void hs_meta_append(const uint8_t *rec, size_t len)
{
	uint8_t head[HS_VARINT_MAX];
	size_t hn = (size_t)(hs_varint_put(head, len) - head), n = hn + len;

	hs_lock_take(&meta_lock);
	if (blen + n > cap) {
		size_t ncap = cap * 2;
		uint8_t *nb;
		while (blen + n > ncap)
			ncap *= 2;
		nb = hs_map(ncap);
		if (!nb) {
			hs_lock_release(&meta_lock);
			hs_disable("out of memory for the record buffer");
			return;
		}
		memcpy(nb, buf, blen);
		hs_unmap(buf, cap);
		buf = nb;
		cap = ncap;
	}
	if (blen - split_pos + n > HS_META_SPLIT && blen > split_pos && nsplits < HS_META_MAX_SPLITS) {
		splits[nsplits++] = blen;
		split_pos = blen;
	}
	memcpy(buf + blen, head, hn);
	memcpy(buf + blen + hn, rec, len);
	blen += n;
	hs_lock_release(&meta_lock);
}

/* Copies whole records (up to the next split point that fits) into dst; *more tells if some remain. */
size_t hs_meta_take(uint8_t *dst, size_t room, int *more)
{
	size_t end, n = 0;
	size_t i;

	hs_lock_take(&meta_lock);
	end = blen;
	for (i = 0; i < nsplits; i++) {
		if (splits[i] > taken) {
			end = splits[i];
			break;
		}
	}
	if (end - taken <= room) {
		n = end - taken;
		memcpy(dst, buf + taken, n);
		taken = end;
	}
	*more = taken < blen;
	if (taken == blen) {
		blen = taken = split_pos = 0;
		nsplits = 0;
	}
	hs_lock_release(&meta_lock);
	return n;
}

void hs_meta_reset(void)
{
	hs_lock_reset(&meta_lock);
	blen = taken = split_pos = 0;
	nsplits = 0;
}
