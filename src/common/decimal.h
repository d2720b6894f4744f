/* decimal.h - unsigned integers as decimal text without printf: the tracer's malloc-free paths and bulk text outputs */
#ifndef HS_COMMON_DECIMAL_H
#define HS_COMMON_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

/* v's digits at out, then a NUL (out holds 21 bytes); returns the digits' count */
static inline size_t hs_u64_to_str(char *out, uint64_t v)
{
	char tmp[24];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	out[n] = 0;
	return n;
}

#endif
