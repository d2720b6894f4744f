/* size.h - byte counts as users write them: "512", "4K", "2MiB", "1G" */
#ifndef HS_COMMON_SIZE_H
#define HS_COMMON_SIZE_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * A whole number with an optional K, M, G or T (binary multiples, so "4K"
 * is a page) and an optional "B" or "iB" after it. 0 or -EINVAL for
 * anything else, or a value past 64 bits.
 */
static inline int hs_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (!(*s >= '0' && *s <= '9'))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
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
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

#endif
