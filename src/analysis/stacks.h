/* stacks.h - what analyses need to know about backtraces, symbolized once per address and memoized per stack id */
#ifndef HS_ANALYSIS_STACKS_H
#define HS_ANALYSIS_STACKS_H

#include <regex.h>
#include <stdint.h>

#include "heapscope/reader.h"
#include "names.h"

enum hs_group_by { HS_BY_BACKTRACE, HS_BY_FUNCTION, HS_BY_LINE, HS_BY_LIBRARY };

#define HS_STACKS_MAX_FRAMES 256   /* visible frames of one backtrace, inlined ones included */
#define HS_STACKS_NO_KEY UINT32_MAX
#define HS_STACKS_FORCED 0x80000000u

struct hs_stacks_ip;

/*
 * Frames are hidden (folded away) when they match one of the hide regexes
 * or, unless disabled, the built-in allocator and runtime plumbing (see
 * docs/analysis.md). The allocation site of a backtrace is its innermost
 * visible frame; a backtrace made only of hidden frames falls back to its
 * innermost frame, so that every allocation has a site.
 */
struct hs_stacks {
	struct hs_reader *r;
	const regex_t *hide;
	int nhide;
	int plumbing;                 /* 1: hide the built-in plumbing too */
	regex_t plumbing_re;          /* function names of allocator wrappers and runtime entry points */
	int have_plumbing_re;

	struct hs_stacks_ip *ips;     /* address -> hidden-frame mask */
	size_t ips_cap, ips_used;

	uint32_t nstacks;
	uint32_t *folded;             /* stack id -> 1 + folded id of its visible frames, 0: not yet */
	uint32_t *fold_parent;        /* folded id -> parent folded id; HS_STACKS_FORCED: shows hidden frames */
	uint64_t *fold_ip;            /* folded id -> return address */
	uint32_t nfold, fold_cap;         /* folded id 0: the empty backtrace */
	uint32_t *fold_map;           /* hash of (parent, ip) -> folded id */
	uint32_t fold_map_bits;

	enum hs_group_by by;
	uint32_t *key;                /* stack id -> group key, HS_STACKS_NO_KEY: not yet */
	uint32_t *caller_key;         /* stack id -> key of the caller of its site */

	struct hs_names names;        /* the keys' names */
};

/* hide: regexes for --hide (kept by the caller); plumbing: also hide the built-in list. */
int hs_stacks_init(struct hs_stacks *st, struct hs_reader *r, const regex_t *hide, int nhide, int plumbing, enum hs_group_by by);
void hs_stacks_free(struct hs_stacks *st);

/* 1 if the frame is folded away. */
int hs_stacks_hidden(struct hs_stacks *st, const struct hs_frame *fr);

/*
 * The visible frames of a backtrace, innermost first, inlined ones
 * expanded; the fallback innermost frame when all are hidden. Returns the
 * count (0 for an empty backtrace).
 */
int hs_stacks_frames(struct hs_stacks *st, uint32_t stack, struct hs_frame *out, int max);

/* Same, for a folded backtrace id (as returned by hs_stacks_folded). */
int hs_stacks_folded_frames(struct hs_stacks *st, uint32_t folded, struct hs_frame *out, int max);

/*
 * One step of that walk: the frames folded id folded adds to its parent's
 * (its address's visible frames, innermost first), and in *parent the id
 * they go on from, 0 at the outermost. Returns the count, at most max.
 */
int hs_stacks_fold_step(struct hs_stacks *st, uint32_t folded, struct hs_frame *out, int max, uint32_t *parent);

/* Folded backtrace id: stacks that differ only by hidden frames share it. 0: no visible frame. */
uint32_t hs_stacks_folded(struct hs_stacks *st, uint32_t stack);

/*
 * Group key of a stack for st->by (dense: 0 .. hs_stacks_key_count - 1);
 * for HS_BY_BACKTRACE it is the folded id. hs_stacks_caller_key: the key
 * (same granularity) of the frame that called the site; names are shared.
 */
uint32_t hs_stacks_key(struct hs_stacks *st, uint32_t stack);
uint32_t hs_stacks_caller_key(struct hs_stacks *st, uint32_t stack);
/*
 * The keys of the callers of a stack's site, outward, at most max:
 * out[0] is hs_stacks_caller_key's, out[1] the key of the frame that
 * called that one, and so on (HS_BY_LIBRARY: the next library along the
 * backtrace each time). Returns the count, 0 when the site has no caller.
 */
int hs_stacks_caller_keys(struct hs_stacks *st, uint32_t stack, uint32_t *out, int max);
/*
 * For a walk up the callers of one site: the key of the caller that
 * follows path[0 .. depth-1] (keys of hs_stacks_caller_keys) in the
 * stack, the key named "(no caller: outermost frame)" when the path ends
 * the stack, HS_STACKS_NO_KEY when the stack's callers are not the path.
 */
uint32_t hs_stacks_path_caller_key(struct hs_stacks *st, uint32_t stack, const uint32_t *path, int depth);
/* Display name of a key; for HS_BY_BACKTRACE keys, the name of the folded backtrace's site. */
const char *hs_stacks_key_name(struct hs_stacks *st, uint32_t key, int caller, char *buf, size_t n);
/* Name of a site for display: "function  file.c:12", "function", "lib.so" per st->by; backtraces as by line. */
void hs_stacks_frame_name(const struct hs_frame *fr, enum hs_group_by by, char *buf, size_t n);

/* 1 if any frame (hidden ones included) of the stack's innermost address has a field matching re. */
int hs_stacks_frame_matches(const struct hs_frame *fr, const regex_t *re);

/*
 * The built-in allocator and runtime plumbing (operator new, the C
 * library, Rust's alloc:: internals ...), for callers without a struct
 * hs_stacks: hs_plumbing_init compiles it into re (regfree when done).
 */
int hs_plumbing_init(regex_t *re);
int hs_plumbing_matches(const regex_t *re, const struct hs_frame *fr);

#endif
