/* varint.h - LEB128 varints and zigzag, the integer encoding of trace records */
#ifndef HS_COMMON_VARINT_H
#define HS_COMMON_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define HS_VARINT_MAX 10

static inline uint64_t hs_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t hs_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Writes v at p, which must have HS_VARINT_MAX bytes; returns the end. */
static inline uint8_t *hs_varint_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* The general case of hs_varint_get: out of line, so the inlined fast paths stay small. */
__attribute__((noinline)) static int hs_varint_get_slow(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	const uint8_t *q = *p;
	uint64_t v = 0;
	unsigned shift = 0;

	while (q < end) {
		uint8_t b = *q++;
		if (shift == 63 && b > 1)
			return -1;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*p = q;
			*out = v;
			return 0;
		}
		shift += 7;
		if (shift > 63)
			return -1;
	}
	return -1;
}

/* Reads a varint from [*p, end); returns 0, or -1 when truncated or longer than 64 bits. */
static inline int hs_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	const uint8_t *q = *p;

	/* most fields are deltas and small: one byte, or two (sizes up to 16 KiB) */
	if (q < end && *q < 0x80) {
		*out = *q;
		*p = q + 1;
		return 0;
	}
	if (end - q >= 2 && q[1] < 0x80) {
		*out = (uint64_t)(q[0] & 0x7f) | (uint64_t)q[1] << 7;
		*p = q + 2;
		return 0;
	}
	return hs_varint_get_slow(p, end, out);
}

#endif
