/* stacks.c - hidden frames, folded backtraces and group keys, each computed once per address or stack id */
#define _POSIX_C_SOURCE 200809L
#include "stacks.h"
#include "../common/strhash.h"
#include "oom.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INLINE 32
#define NO_SLOT UINT32_MAX

/*
 * Allocator and runtime plumbing. Anchored at the start of demangled names,
 * which carry their parameter lists ("operator new(unsigned long)").
 */
static const char plumbing_functions[] =
	"^(operator (new|delete)(\\[\\])?( *\\(|$)"
	"|(malloc|calloc|realloc|reallocarray|free|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|_start)$"
	"|__libc_|__GI_|_dl_|(__rustc::)?__rust_(alloc|alloc_zeroed|realloc|dealloc)|__rdl_|__rg_"
	"|alloc::alloc::|<alloc::alloc::Global( as |>::)|<?alloc::raw_vec::|<?alloc::boxed::(box_new|Box<.*>>?::new)"
	"|std::__new_allocator<|__gnu_cxx::new_allocator<|std::allocator<|std::allocator_traits<)";

/* Modules whose every frame is plumbing: the C library, the dynamic loader, heapscope itself. */
static const char *const plumbing_modules[] = { "libc.so", "libc-", "ld-linux", "ld64.so", "libheapscope" };

struct hs_stacks_ip {
	uint64_t ip;
	uint32_t hidden;   /* bit i: inlined frame i of this address is hidden */
	uint32_t n;        /* frames at this address; 0: empty slot */
};

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p;
}

int hs_stacks_frame_matches(const struct hs_frame *fr, const regex_t *re)
{
	return (fr->function && regexec(re, fr->function, 0, NULL, 0) == 0) ||
	       (fr->file && regexec(re, fr->file, 0, NULL, 0) == 0) ||
	       (fr->module && regexec(re, fr->module, 0, NULL, 0) == 0);
}

int hs_plumbing_init(regex_t *re)
{
	return regcomp(re, plumbing_functions, REG_EXTENDED | REG_NOSUB) == 0 ? 0 : -EINVAL;
}

int hs_plumbing_matches(const regex_t *re, const struct hs_frame *fr)
{
	const char *m = base_name(fr->module);

	for (size_t i = 0; m && i < sizeof(plumbing_modules) / sizeof(plumbing_modules[0]); i++)
		if (!strncmp(m, plumbing_modules[i], strlen(plumbing_modules[i])))
			return 1;
	return fr->function && regexec(re, fr->function, 0, NULL, 0) == 0;
}

int hs_stacks_hidden(struct hs_stacks *st, const struct hs_frame *fr)
{
	if (st->plumbing && st->have_plumbing_re && hs_plumbing_matches(&st->plumbing_re, fr))
		return 1;
	for (int i = 0; i < st->nhide; i++)
		if (hs_stacks_frame_matches(fr, &st->hide[i]))
			return 1;
	return 0;
}

int hs_stacks_init(struct hs_stacks *st, struct hs_reader *r, const regex_t *hide, int nhide, int plumbing, enum hs_group_by by)
{
	memset(st, 0, sizeof(*st));
	st->r = r;
	st->hide = hide;
	st->nhide = nhide;
	st->plumbing = plumbing;
	st->by = by;
	if (hs_plumbing_init(&st->plumbing_re) < 0)
		return -EINVAL;
	st->have_plumbing_re = 1;
	st->nstacks = hs_reader_stack_count(r);
	st->folded = calloc((size_t)st->nstacks + 1, sizeof(*st->folded));
	st->key = malloc(((size_t)st->nstacks + 1) * sizeof(*st->key));
	st->caller_key = malloc(((size_t)st->nstacks + 1) * sizeof(*st->caller_key));
	if (!st->folded || !st->key || !st->caller_key)
		return -ENOMEM;
	memset(st->key, 0xff, ((size_t)st->nstacks + 1) * sizeof(*st->key));
	memset(st->caller_key, 0xff, ((size_t)st->nstacks + 1) * sizeof(*st->caller_key));
	st->fold_cap = 1024;
	st->fold_parent = hs_xrealloc(NULL, st->fold_cap * sizeof(*st->fold_parent));
	st->fold_ip = hs_xrealloc(NULL, st->fold_cap * sizeof(*st->fold_ip));
	st->fold_parent[0] = 0;
	st->fold_ip[0] = 0;
	st->nfold = 1;
	st->fold_map_bits = 10;
	st->fold_map = hs_xrealloc(NULL, sizeof(*st->fold_map) << st->fold_map_bits);
	memset(st->fold_map, 0xff, sizeof(*st->fold_map) << st->fold_map_bits);
	return 0;
}

void hs_stacks_free(struct hs_stacks *st)
{
	if (st->have_plumbing_re)
		regfree(&st->plumbing_re);
	free(st->ips);
	free(st->folded);
	free(st->fold_parent);
	free(st->fold_ip);
	free(st->fold_map);
	free(st->key);
	free(st->caller_key);
	hs_names_free(&st->names);
	memset(st, 0, sizeof(*st));
}

/* The frames at one address and which of them are hidden; hide regexes run once per address. */
static int ip_frames(struct hs_stacks *st, uint64_t ip, struct hs_frame *fr, uint32_t *hidden)
{
	size_t mask, j;
	int n = hs_reader_symbolize(st->r, ip, fr, MAX_INLINE);

	if (st->ips_used * 2 >= st->ips_cap) {
		size_t ncap = st->ips_cap ? st->ips_cap * 2 : 4096;
		struct hs_stacks_ip *nips = hs_xcalloc(ncap, sizeof(*nips));
		for (size_t i = 0; i < st->ips_cap; i++) {
			if (!st->ips[i].n)
				continue;
			j = (size_t)(st->ips[i].ip * 0x9e3779b97f4a7c15ull >> 24) & (ncap - 1);
			while (nips[j].n)
				j = (j + 1) & (ncap - 1);
			nips[j] = st->ips[i];
		}
		free(st->ips);
		st->ips = nips;
		st->ips_cap = ncap;
	}
	mask = st->ips_cap - 1;
	j = (size_t)(ip * 0x9e3779b97f4a7c15ull >> 24) & mask;
	while (st->ips[j].n && st->ips[j].ip != ip)
		j = (j + 1) & mask;
	if (!st->ips[j].n) {
		uint32_t h = 0;
		for (int i = 0; i < n; i++)
			if (hs_stacks_hidden(st, &fr[i]))
				h |= 1u << i;
		st->ips[j] = (struct hs_stacks_ip){ .ip = ip, .hidden = h, .n = (uint32_t)(n > 0 ? n : 1) };
		st->ips_used++;
	}
	*hidden = st->ips[j].hidden;
	return n;
}

static int all_hidden(uint32_t hidden, int n)
{
	return n >= 32 ? hidden == UINT32_MAX : hidden == (1u << n) - 1;
}

int hs_stacks_frames(struct hs_stacks *st, uint32_t stack, struct hs_frame *out, int max)
{
	struct hs_frame fr[MAX_INLINE], first = { 0 };
	int k = 0, have_first = 0;

	while (stack && k < max) {
		uint32_t parent, hidden;
		uint64_t ip;
		int n;

		if (hs_reader_stack_node(st->r, stack, &parent, &ip) < 0)
			break;
		n = ip_frames(st, ip, fr, &hidden);
		if (!have_first && n > 0) {
			first = fr[0];
			have_first = 1;
		}
		for (int i = 0; i < n && k < max; i++)
			if (!(hidden >> i & 1))
				out[k++] = fr[i];
		stack = parent;
	}
	if (k == 0 && have_first && max > 0)
		out[k++] = first;
	return k;
}

static uint32_t fold_intern(struct hs_stacks *st, uint32_t parent, uint64_t ip)
{
	size_t mask = ((size_t)1 << st->fold_map_bits) - 1, j;
	uint64_t h = (ip ^ (uint64_t)parent * 0xff51afd7ed558ccdull) * 0x9e3779b97f4a7c15ull;

	j = (size_t)(h >> 20) & mask;
	while (st->fold_map[j] != NO_SLOT) {
		uint32_t id = st->fold_map[j];
		if (st->fold_parent[id] == parent && st->fold_ip[id] == ip)
			return id;
		j = (j + 1) & mask;
	}
	if (st->nfold == st->fold_cap) {
		st->fold_cap *= 2;
		st->fold_parent = hs_xrealloc(st->fold_parent, st->fold_cap * sizeof(*st->fold_parent));
		st->fold_ip = hs_xrealloc(st->fold_ip, st->fold_cap * sizeof(*st->fold_ip));
	}
	st->fold_parent[st->nfold] = parent;
	st->fold_ip[st->nfold] = ip;
	st->fold_map[j] = st->nfold;
	if ((size_t)(st->nfold + 1) * 2 > mask + 1) {
		/* rehash at half full */
		free(st->fold_map);
		st->fold_map_bits++;
		mask = ((size_t)1 << st->fold_map_bits) - 1;
		st->fold_map = hs_xrealloc(NULL, sizeof(*st->fold_map) << st->fold_map_bits);
		memset(st->fold_map, 0xff, sizeof(*st->fold_map) << st->fold_map_bits);
		for (uint32_t id = 1; id <= st->nfold; id++) {
			h = (st->fold_ip[id] ^ (uint64_t)st->fold_parent[id] * 0xff51afd7ed558ccdull) * 0x9e3779b97f4a7c15ull;
			j = (size_t)(h >> 20) & mask;
			while (st->fold_map[j] != NO_SLOT)
				j = (j + 1) & mask;
			st->fold_map[j] = id;
		}
	}
	return st->nfold++;
}

/* Folded id of the visible frames only (0 when none), memoized along the whole chain. */
static uint32_t fold_visible(struct hs_stacks *st, uint32_t stack)
{
	uint32_t chain[HS_STACKS_MAX_FRAMES], n = 0, f;
	struct hs_frame fr[MAX_INLINE];

	if (stack == 0 || stack > st->nstacks)
		return 0;
	/* parents have smaller ids, so the walk up ends at a memoized node or the root */
	while (stack && stack <= st->nstacks && !st->folded[stack] && n < HS_STACKS_MAX_FRAMES) {
		uint32_t parent;
		uint64_t ip;
		chain[n++] = stack;
		if (hs_reader_stack_node(st->r, stack, &parent, &ip) < 0)
			break;
		stack = parent;
	}
	f = stack && stack <= st->nstacks && st->folded[stack] ? st->folded[stack] - 1 : 0;
	while (n--) {
		uint32_t parent, hidden;
		uint64_t ip;
		int k;
		if (hs_reader_stack_node(st->r, chain[n], &parent, &ip) == 0) {
			k = ip_frames(st, ip, fr, &hidden);
			if (k > 0 && !all_hidden(hidden, k))
				f = fold_intern(st, f, ip);
		}
		st->folded[chain[n]] = f + 1;
	}
	return f;
}

uint32_t hs_stacks_folded(struct hs_stacks *st, uint32_t stack)
{
	uint32_t f = fold_visible(st, stack), parent;
	uint64_t ip;

	/* only hidden frames: keep the innermost address so the allocation still has a site */
	if (f == 0 && stack && hs_reader_stack_node(st->r, stack, &parent, &ip) == 0)
		f = fold_intern(st, HS_STACKS_FORCED, ip);
	return f;
}

int hs_stacks_fold_step(struct hs_stacks *st, uint32_t folded, struct hs_frame *out, int max, uint32_t *parent)
{
	struct hs_frame fr[MAX_INLINE];
	uint32_t hidden;
	int n, k = 0;

	*parent = 0;
	if (!folded || folded >= st->nfold || max <= 0)
		return 0;
	n = ip_frames(st, st->fold_ip[folded], fr, &hidden);
	if (st->fold_parent[folded] == HS_STACKS_FORCED) {
		if (n > 0)
			out[k++] = fr[0];
		return k;
	}
	for (int i = 0; i < n && k < max; i++)
		if (!(hidden >> i & 1))
			out[k++] = fr[i];
	*parent = st->fold_parent[folded];
	return k;
}

int hs_stacks_folded_frames(struct hs_stacks *st, uint32_t folded, struct hs_frame *out, int max)
{
	int k = 0;

	while (folded && k < max)
		k += hs_stacks_fold_step(st, folded, out + k, max - k, &folded);
	return k;
}

/*
 * s appended at *at in buf of n bytes, cut as snprintf cuts (n - 1 bytes
 * and the terminator). Not snprintf itself: "%s" of a long C++ name took
 * 1,400 instructions, and a flame graph of clang's trace names 118,600
 * frames (an eighth of its time).
 */
static void name_add(char *buf, size_t n, size_t *at, const char *s)
{
	size_t len = strlen(s);

	if (*at + 1 >= n)
		return;
	if (len > n - 1 - *at)
		len = n - 1 - *at;
	memcpy(buf + *at, s, len);
	*at += len;
	buf[*at] = 0;
}

void hs_stacks_frame_name(const struct hs_frame *fr, enum hs_group_by by, char *buf, size_t n)
{
	char unknown[300], line[16];
	const char *f = hs_frame_name(fr, unknown, sizeof(unknown));
	size_t at = 0;

	if (!n)
		return;
	buf[0] = 0;
	if (by == HS_BY_LIBRARY) {
		name_add(buf, n, &at, fr->module ? base_name(fr->module) : "?");
	} else if (by == HS_BY_FUNCTION || !fr->file) {
		name_add(buf, n, &at, f);
	} else {
		snprintf(line, sizeof(line), ":%d", fr->line);
		name_add(buf, n, &at, f);
		name_add(buf, n, &at, "  ");
		name_add(buf, n, &at, base_name(fr->file));
		name_add(buf, n, &at, line);
	}
}

static uint32_t intern(struct hs_stacks *st, const char *s)
{
	uint32_t id;

	if (hs_names_intern(&st->names, s, &id) < 0)
		hs_oom(strlen(s) + 1);
	return id;
}

/* Frames of the stack until the site's caller: index of the caller (or -1) in *caller. */
static int site_and_caller(struct hs_stacks *st, uint32_t stack, struct hs_frame *fr, int max, int *caller)
{
	int n = hs_stacks_frames(st, stack, fr, max);

	*caller = -1;
	if (n <= 1)
		return n;
	if (st->by != HS_BY_LIBRARY) {
		*caller = 1;
		return n;
	}
	/* a library's callers are the first frames outside it */
	for (int i = 1; i < n; i++)
		if ((fr[i].module == NULL) != (fr[0].module == NULL) ||
		    (fr[i].module && strcmp(fr[i].module, fr[0].module))) {
			*caller = i;
			break;
		}
	return n;
}

uint32_t hs_stacks_key(struct hs_stacks *st, uint32_t stack)
{
	struct hs_frame fr[1];
	char name[1024];
	int n;

	if (stack > st->nstacks)
		stack = 0;
	if (st->key[stack] != HS_STACKS_NO_KEY)
		return st->key[stack];
	if (st->by == HS_BY_BACKTRACE)
		return st->key[stack] = hs_stacks_folded(st, stack);
	/*
	 * The site alone: the walk stops at the first frame not hidden.
	 * Walking them all, each looked up, for each of clang's 145,000
	 * stacks (60 deep) was a quarter of `top --by line`.
	 */
	n = hs_stacks_frames(st, stack, fr, 1);
	if (n == 0)
		snprintf(name, sizeof(name), "(no backtrace)");
	else
		hs_stacks_frame_name(&fr[0], st->by, name, sizeof(name));
	return st->key[stack] = intern(st, name);
}

uint32_t hs_stacks_caller_key(struct hs_stacks *st, uint32_t stack)
{
	struct hs_frame fr[HS_STACKS_MAX_FRAMES];
	char name[1024];
	int n, caller;

	if (stack > st->nstacks)
		stack = 0;
	if (st->caller_key[stack] != HS_STACKS_NO_KEY)
		return st->caller_key[stack];
	/* the site and its caller: a library's caller is past the run of frames in it */
	n = site_and_caller(st, stack, fr, st->by == HS_BY_LIBRARY ? HS_STACKS_MAX_FRAMES : 2, &caller);
	if (caller < 0)
		snprintf(name, sizeof(name), n ? "(no caller: outermost frame)" : "(no backtrace)");
	else
		hs_stacks_frame_name(&fr[caller], st->by == HS_BY_BACKTRACE ? HS_BY_LINE : st->by, name, sizeof(name));
	return st->caller_key[stack] = intern(st, name);
}

static int same_module(const struct hs_frame *a, const struct hs_frame *b)
{
	return (a->module == NULL) == (b->module == NULL) && (!a->module || !strcmp(a->module, b->module));
}

int hs_stacks_caller_keys(struct hs_stacks *st, uint32_t stack, uint32_t *out, int max)
{
	struct hs_frame fr[HS_STACKS_MAX_FRAMES];
	char name[1024];
	int n, caller, k = 0;

	if (stack > st->nstacks)
		stack = 0;
	n = site_and_caller(st, stack, fr, HS_STACKS_MAX_FRAMES, &caller);
	for (int i = caller; i >= 0 && i < n && k < max; i++) {
		/* a library's caller is the first frame outside it, so a run of frames in one library is one level */
		if (st->by == HS_BY_LIBRARY && i > caller && same_module(&fr[i], &fr[i - 1]))
			continue;
		hs_stacks_frame_name(&fr[i], st->by == HS_BY_BACKTRACE ? HS_BY_LINE : st->by, name, sizeof(name));
		out[k++] = intern(st, name);
	}
	return k;
}

uint32_t hs_stacks_path_caller_key(struct hs_stacks *st, uint32_t stack, const uint32_t *path, int depth)
{
	uint32_t keys[HS_STACKS_MAX_FRAMES];
	int n;

	if (depth < 0 || depth >= HS_STACKS_MAX_FRAMES)
		return HS_STACKS_NO_KEY;
	n = hs_stacks_caller_keys(st, stack, keys, depth + 1);
	if (n < depth)
		return HS_STACKS_NO_KEY;
	for (int i = 0; i < depth; i++)
		if (keys[i] != path[i])
			return HS_STACKS_NO_KEY;
	/* the same name as hs_stacks_caller_key gives a site without caller, so both levels read alike */
	return n > depth ? keys[depth] : intern(st, "(no caller: outermost frame)");
}

const char *hs_stacks_key_name(struct hs_stacks *st, uint32_t key, int caller, char *buf, size_t n)
{
	struct hs_frame fr[MAX_INLINE];

	if (caller || st->by != HS_BY_BACKTRACE)
		return key < st->names.n ? hs_names_str(&st->names, key) : "?";
	if (hs_stacks_folded_frames(st, key, fr, 1) < 1)
		snprintf(buf, n, "(no backtrace)");
	else
		hs_stacks_frame_name(&fr[0], HS_BY_LINE, buf, n);
	return buf;
}
