/* strhash.h - FNV-1a of a string: the hash of the analyses' tables of names */
#ifndef HS_COMMON_STRHASH_H
#define HS_COMMON_STRHASH_H

#include <stdint.h>

static inline uint32_t hs_strhash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

#endif
