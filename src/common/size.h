/* size.h - byte counts as users write them: "512", "4K", "2MiB", "1G" */
#ifndef HS_COMMON_SIZE_H
#define HS_COMMON_SIZE_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * A number, with a fraction if need be, and an optional K, M, G or T
 * (binary multiples, so "4K" is a page) and an optional "B" or "iB" after
 * it: "512", "4K", "1.5M", ".25KiB", "2GB". Fractions of a byte round to
 * the nearest. 0 or -EINVAL for anything else, or a value past 64 bits.
 * No strtod: its exponents and locales are no part of a size.
 */
static inline int hs_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	unsigned long long v = 0, frac = 0, scale = 1;
	unsigned shift = 0;
	const char *end = s;
	uint64_t part;

	if (*s >= '0' && *s <= '9') {
		char *e;
		errno = 0;
		v = strtoull(s, &e, 10);
		if (errno)
			return -EINVAL;
		end = e;
	} else if (*s != '.') {
		return -EINVAL;
	}
	if (*end == '.') {
		if (!(end[1] >= '0' && end[1] <= '9'))
			return -EINVAL;
		/* 18 digits are more than any unit can tell apart; the rest are read over */
		for (end++; *end >= '0' && *end <= '9'; end++)
			if (scale < 1000000000000000000ull) {
				frac = frac * 10 + (unsigned)(*end - '0');
				scale *= 10;
			}
	}
	for (unsigned i = 0; i < 4; i++)
		if ((*end & ~0x20) == units[i]) {
			shift = 10 * (i + 1);
			end++;
			break;
		}
	if (end[0] == 'B' && !end[1])
		end++;
	else if (shift && end[0] == 'i' && end[1] == 'B' && !end[2])
		end += 2;
	if (*end || v > (UINT64_MAX >> shift))
		return -EINVAL;
	part = (uint64_t)((double)frac / (double)scale * (double)(1ull << shift) + 0.5);
	if ((uint64_t)v << shift > UINT64_MAX - part)
		return -EINVAL;
	*out = ((uint64_t)v << shift) + part;
	return 0;
}

#endif
