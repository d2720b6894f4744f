/* names.h - a table of distinct strings, each with a dense id: the names of groups, frames and diff matches */
#ifndef HS_ANALYSIS_NAMES_H
#define HS_ANALYSIS_NAMES_H

#include <stddef.h>
#include <stdint.h>

struct hs_names_slot {
	uint32_t id, hash;        /* id UINT32_MAX: empty */
};

struct hs_names_block;

/* Zeroed is empty. The strings stay where they are until hs_names_free. */
struct hs_names {
	char **of;                /* id -> its string */
	uint32_t n, cap;
	struct hs_names_slot *map; /* open addressing, at most half full */
	unsigned bits;
	struct hs_names_block *blocks; /* the strings, packed; the newest first */
	size_t used, room;        /* in the newest block */
};

/* The id of s, added if new (ids count from 0): 0, or -ENOMEM. */
int hs_names_intern(struct hs_names *t, const char *s, uint32_t *id);
void hs_names_free(struct hs_names *t);

static inline const char *hs_names_str(const struct hs_names *t, uint32_t id)
{
	return t->of[id];
}

#endif
