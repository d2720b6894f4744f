/* symbolize.c - return addresses to functions, files, lines and inlined frames with elfutils libdw */
#define _GNU_SOURCE
#include <dirent.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <libiberty/demangle.h>
#include <limits.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/file.h"
#include "debuginfo.h"
#include "reader-internal.h"

#define HS_MAX_INLINE 32

struct cached {
	uint64_t pc;
	uint32_t first, n;   /* frames[first .. first+n) */
};

/*
 * A module's sized symbols by address, for names where no DWARF says more
 * (distribution binaries, builds without -g): dwfl_module_addrinfo scans
 * the whole symbol table at each call, a tenth of a flame graph of
 * python3's trace (12,000 symbols, thousands of addresses).
 */
struct symrange {
	uint64_t lo, end;
	uint32_t idx;        /* in the symbol table: libdw's ties go to the first */
	uint8_t bind;        /* GLOBAL 3, WEAK 2, else 1, as libdw ranks them */
	const char *name;    /* libdw's: lives as long as the Dwfl */
};

/* One part of the table, as libdw searches it: the globals, then the locals */
struct symset {
	struct symrange *v;
	uint64_t *maxend;    /* the largest end among v[0 .. i] */
	size_t n;
};

/*
 * Where libdw found no name (static functions of a stripped binary: all of
 * python3's 1,600 lookups that the sets could not answer), the answer
 * holds between any two neighbouring places where a symbol or a section
 * starts or ends: everything libdw's search compares pc with gives the
 * same result there. Such stretches are remembered as nameless.
 */
struct symtab {
	Dwfl_Module *mod;
	struct symset global, local;   /* local: empty unless labels are known too */
	uint64_t *labels;    /* sorted: global symbols without a size, which can stop libdw's search of the locals */
	size_t nlabels;
	uint64_t *sizeless;  /* sorted: every symbol without a size, global or local */
	size_t nsizeless;
	int complete;        /* both sets and sizeless hold all they should (memory permitting) */
	uint64_t *bounds;    /* sorted, distinct */
	uint8_t *nameless;   /* per stretch: [0] below bounds[0], [k + 1] after bounds[k] */
	size_t nbounds;
};

/* Per module: why its frames cannot be named (enum hs_module_problem, 0: they can), and how many asked. */
struct unnamed {
	int why;
	uint64_t addresses;      /* distinct ones resolved in it */
};

/* A file below the binary directories, by build-id (built at the first module that needs it). */
struct by_id {
	uint8_t id[64];
	size_t len;
	char *path;
};

/* A name as libdw gave it (its pointer) and the string kept for it: demangled (pretty) or copied. */
struct named {
	const char *raw;
	const char *kept;
	int demangled;
};

struct hs_symbols {
	Dwfl *dwfl;
	struct symtab *tabs;
	size_t ntabs;
	Dwfl_Callbacks cb;
	char *debuginfo_path;
	size_t reported;            /* modules already given to dwfl */
	int need_rebuild;
	struct cached *map;
	size_t map_cap, map_used;
	struct hs_frame *frames;
	size_t nframes, frames_cap;
	char **strings;             /* owned strings, freed with the reader */
	size_t nstrings, strings_cap;
	struct named *named;        /* libdw's names and what was kept for them (kept_name) */
	size_t named_cap, named_used;
	struct unnamed *unnamed;    /* by module index */
	size_t unnamed_cap;
	struct by_id *ids;
	size_t nids, ids_cap;
	int ids_built;
	int libdw_names;            /* tests: every name without DWARF is libdw's, which the sets must match */
};

/*
 * Where memory runs out the symbolizer degrades instead of failing: a name
 * it cannot keep is left out (the frame is then named by module and
 * offset), and a frame it cannot cache is resolved again next time.
 */
static const char *keep(struct hs_symbols *s, char *str)
{
	if (!str)
		return NULL;
	if (s->nstrings == s->strings_cap) {
		size_t cap = s->strings_cap ? s->strings_cap * 2 : 256;
		char **n = realloc(s->strings, cap * sizeof(char *));
		if (!n) {
			free(str);
			return NULL;
		}
		s->strings = n;
		s->strings_cap = cap;
	}
	s->strings[s->nstrings++] = str;
	return str;
}

static const char *keep_copy(struct hs_symbols *s, const char *str)
{
	return str ? keep(s, hs_strndup(str, strlen(str))) : NULL;
}

/*
 * C++ and Rust names, as libiberty demangles them (binutils' and gdb's
 * demangler): Rust legacy names first, since they look like C++, without
 * their ::h<hash>; Rust v0 (current toolchains' standard library); C++.
 */
static const char *pretty(struct hs_symbols *s, const char *name)
{
	char *d;

	if (!name)
		return NULL;
	if (strncmp(name, "_Z", 2) != 0 && strncmp(name, "_R", 2) != 0)
		return keep_copy(s, name);
	d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	return d ? keep(s, d) : keep_copy(s, name);
}

static size_t named_home(const char *raw, int demangled, size_t cap)
{
	return (size_t)((((uintptr_t)raw ^ (uintptr_t)demangled) * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

/* Room for more names, at most half full; else 0 (the names are then kept uncached). */
static int named_room(struct hs_symbols *s)
{
	size_t cap = s->named_cap ? 2 * s->named_cap : 1024;
	struct named *n;

	if (2 * (s->named_used + 1) <= s->named_cap)
		return 1;
	if (!(n = calloc(cap, sizeof(*n))))
		return 0;
	for (size_t i = 0, j; i < s->named_cap; i++) {
		if (!s->named[i].raw)
			continue;
		j = named_home(s->named[i].raw, s->named[i].demangled, cap);
		while (n[j].raw)
			j = (j + 1) & (cap - 1);
		n[j] = s->named[i];
	}
	free(s->named);
	s->named = n;
	s->named_cap = cap;
	return 1;
}

/*
 * The string kept for a name libdw gave, demangled (pretty) or copied: each
 * once, not once per address. clang's 17,483 frame addresses had 2,701
 * names, and demangling 7,277 of them was 6% of its `leaks`. Keyed by the
 * pointer, which stays valid as long as the Dwfl (free_dwfl forgets them).
 */
static const char *kept_name(struct hs_symbols *s, const char *raw, int demangled)
{
	const char *kept;
	size_t i;

	if (!raw)
		return NULL;
	if (!named_room(s))
		return demangled ? pretty(s, raw) : keep_copy(s, raw);
	for (i = named_home(raw, demangled, s->named_cap); s->named[i].raw; i = (i + 1) & (s->named_cap - 1))
		if (s->named[i].raw == raw && s->named[i].demangled == demangled)
			return s->named[i].kept;
	kept = demangled ? pretty(s, raw) : keep_copy(s, raw);
	if (kept) {
		s->named[i] = (struct named){ .raw = raw, .kept = kept, .demangled = demangled };
		s->named_used++;
	}
	return kept;
}

static void free_dwfl(struct hs_symbols *s)
{
	for (size_t i = 0; i < s->ntabs; i++) {
		free(s->tabs[i].global.v);
		free(s->tabs[i].global.maxend);
		free(s->tabs[i].local.v);
		free(s->tabs[i].local.maxend);
		free(s->tabs[i].labels);
		free(s->tabs[i].sizeless);
		free(s->tabs[i].bounds);
		free(s->tabs[i].nameless);
	}
	free(s->tabs);
	s->tabs = NULL;
	s->ntabs = 0;
	/* the names' pointers were libdw's and the tables' */
	free(s->named);
	s->named = NULL;
	s->named_cap = s->named_used = 0;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	s->dwfl = NULL;
	s->reported = 0;
}

void hs_symbols_invalidate(struct hs_reader *r)
{
	if (r->sym)
		r->sym->need_rebuild = 1;
}

void hs_symbols_free(struct hs_reader *r)
{
	struct hs_symbols *s = r->sym;

	if (!s)
		return;
	free_dwfl(s);
	for (size_t i = 0; i < s->nstrings; i++)
		free(s->strings[i]);
	free(s->strings);
	free(s->map);
	free(s->frames);
	free(s->debuginfo_path);
	free(s->unnamed);
	for (size_t i = 0; i < s->nids; i++)
		free(s->ids[i].path);
	free(s->ids);
	free(s);
	r->sym = NULL;
}

/* 1: the ELF file open at fd has the module's build-id (or none was recorded); 0: another; -1: no ELF file. */
static int same_build(int fd, const struct hs_module *m)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *bits;
	ssize_t n;
	int rc = -1;

	if (!e)
		return -1;
	if (elf_kind(e) == ELF_K_ELF) {
		n = dwelf_elf_gnu_build_id(e, &bits);
		rc = !m->build_id_len || (n == (ssize_t)m->build_id_len && !memcmp(bits, m->build_id, (size_t)n));
	}
	elf_end(e);
	return rc;
}

/* path as m's file: an open descriptor when it is the build that ran; else -1, with *why the worst seen so far. */
static int try_file(const char *path, const struct hs_module *m, int *why)
{
	int fd = hs_open_regular(path, NULL), k;

	if (fd < 0) {
		if (fd != -ENOENT && fd != -ENOTDIR && *why != HS_MODULE_OTHER_BUILD)
			*why = HS_MODULE_UNREADABLE;
		return -1;
	}
	if ((k = same_build(fd, m)) == 1)
		return fd;
	close(fd);
	if (k == 0)
		*why = HS_MODULE_OTHER_BUILD;
	else if (*why != HS_MODULE_OTHER_BUILD)
		*why = HS_MODULE_UNREADABLE;
	return -1;
}

#define BY_ID_DEPTH 4
#define BY_ID_FILES 50000   /* a directory of a whole system: stop looking rather than read it all */

static void index_dir(struct hs_symbols *s, const char *dir, int depth, size_t *seen)
{
	DIR *d = depth <= BY_ID_DEPTH ? opendir(dir) : NULL;
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)) && *seen < BY_ID_FILES) {
		char path[PATH_MAX];
		struct stat st;
		const void *bits;
		ssize_t n;
		Elf *e;
		int fd;

		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= sizeof(path) || lstat(path, &st) < 0)
			continue;
		++*seen;
		/* symlinked directories are not followed: no loops, no walking off into the system */
		if (S_ISDIR(st.st_mode)) {
			index_dir(s, path, depth + 1, seen);
			continue;
		}
		if ((fd = hs_open_regular(path, NULL)) < 0)
			continue;
		if ((e = elf_begin(fd, ELF_C_READ_MMAP, NULL)) != NULL) {
			if (elf_kind(e) == ELF_K_ELF && (n = dwelf_elf_gnu_build_id(e, &bits)) > 0 &&
			    (size_t)n <= sizeof(s->ids[0].id)) {
				if (s->nids == s->ids_cap) {
					size_t cap = s->ids_cap ? 2 * s->ids_cap : 64;
					struct by_id *v = realloc(s->ids, cap * sizeof(*v));
					if (v) {
						s->ids = v;
						s->ids_cap = cap;
					}
				}
				if (s->nids < s->ids_cap && (s->ids[s->nids].path = hs_strndup(path, strlen(path)))) {
					memcpy(s->ids[s->nids].id, bits, (size_t)n);
					s->ids[s->nids++].len = (size_t)n;
				}
			}
			elf_end(e);
		}
		close(fd);
	}
	closedir(d);
}

/*
 * m's file: at its recorded path, under each binary directory as a sysroot,
 * by its name there, then by build-id anywhere below them; *file is its
 * path (m's own, or found, of PATH_MAX bytes). -1 and *why when no file is
 * the build that ran.
 */
static int open_module(struct hs_reader *r, const struct hs_module *m, const char **file, char *found, int *why)
{
	struct hs_symbols *s = r->sym;
	const char *base = strrchr(m->path, '/') + 1, *d, *end;
	int fd;

	*why = 0;
	*file = m->path;
	if ((fd = try_file(m->path, m, why)) >= 0)
		return fd;
	for (d = r->binary_dirs; d && *d; d = *end ? end + 1 : end) {
		int len;
		end = strchrnul(d, ':');
		len = (int)(end - d);
		if (!len)
			continue;
		if ((size_t)snprintf(found, PATH_MAX, "%.*s%s", len, d, m->path) < PATH_MAX &&
		    (fd = try_file(found, m, why)) >= 0)
			goto out;
		if ((size_t)snprintf(found, PATH_MAX, "%.*s/%s", len, d, base) < PATH_MAX &&
		    (fd = try_file(found, m, why)) >= 0)
			goto out;
	}
	if (!r->binary_dirs || !m->build_id_len)
		goto none;
	if (!s->ids_built) {
		size_t seen = 0;
		s->ids_built = 1;
		for (d = r->binary_dirs; *d; d = *end ? end + 1 : end) {
			end = strchrnul(d, ':');
			if (end > d && (size_t)(end - d) < PATH_MAX) {
				snprintf(found, PATH_MAX, "%.*s", (int)(end - d), d);
				index_dir(s, found, 0, &seen);
			}
		}
	}
	for (size_t i = 0; i < s->nids; i++)
		if (s->ids[i].len == m->build_id_len && !memcmp(s->ids[i].id, m->build_id, m->build_id_len) &&
		    (fd = try_file(s->ids[i].path, m, why)) >= 0) {
			snprintf(found, PATH_MAX, "%s", s->ids[i].path);
			goto out;
		}
none:
	if (!*why)
		*why = HS_MODULE_MISSING;
	return -1;
out:
	*file = found;
	return fd;
}

/* Module index k's frames go unnamed, for why; a memory shortage only loses the report of it. */
static void note_unnamed(struct hs_symbols *s, size_t k, int why)
{
	if (k >= s->unnamed_cap) {
		size_t cap = s->unnamed_cap ? s->unnamed_cap : 64;
		struct unnamed *v;
		while (cap <= k)
			cap *= 2;
		if (!(v = realloc(s->unnamed, cap * sizeof(*v))))
			return;
		memset(v + s->unnamed_cap, 0, (cap - s->unnamed_cap) * sizeof(*v));
		s->unnamed = v;
		s->unnamed_cap = cap;
	}
	s->unnamed[k].why = why;
}

int hs_reader_set_binary_dirs(struct hs_reader *r, const char *dirs)
{
	char *d;

	if (r->sym)
		return -EBUSY;
	if (!(d = hs_strndup(dirs, strlen(dirs))))
		return -ENOMEM;
	free(r->binary_dirs);
	r->binary_dirs = d;
	return 0;
}

int hs_reader_unnamed_module(struct hs_reader *r, size_t i, const char **path, enum hs_module_problem *why,
			     uint64_t *addresses)
{
	struct hs_symbols *s = r->sym;
	size_t n = 0;

	for (size_t k = 0; s && k < s->unnamed_cap; k++) {
		if (!s->unnamed[k].addresses || n++ != i)
			continue;
		*path = r->mods[k]->path;
		*why = (enum hs_module_problem)s->unnamed[k].why;
		*addresses = s->unnamed[k].addresses;
		return 1;
	}
	return 0;
}

static int report_modules(struct hs_reader *r)
{
	struct hs_symbols *s = r->sym;

	if (!s->dwfl) {
		s->dwfl = dwfl_begin(&s->cb);
		if (!s->dwfl)
			return -1;
	}
	if (s->reported == r->nmods)
		return 0;
	dwfl_report_begin_add(s->dwfl);
	for (; s->reported < r->nmods; s->reported++) {
		const struct hs_module *m = r->mods[s->reported];
		Dwfl_Module *mod;
		const char *file;
		char found[PATH_MAX];
		int fd, why;

		if (m->path[0] != '/')
			continue; /* the vDSO and other unnamed images have no file */
		/*
		 * A library loaded again where it was before (dlopen, dlclose,
		 * dlopen) has a record each time: libdw given the same module
		 * twice then named none of its functions. One Dwfl holds one
		 * image per address; the first one reported there stays.
		 */
		if (dwfl_addrmodule(s->dwfl, m->lo))
			continue;
		/* a rebuilt binary would give wrong lines: only the build that ran is taken (a FIFO never: no hang) */
		if ((fd = open_module(r, m, &file, found, &why)) < 0) {
			note_unnamed(s, s->reported, why);
			continue;
		}
		mod = dwfl_report_elf(s->dwfl, m->path, file, fd, m->base, false);
		if (!mod)
			close(fd); /* consumed only on success */
	}
	dwfl_report_end(s->dwfl, NULL, NULL);
	return 0;
}

static const char *die_name(struct hs_symbols *s, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *n = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		n = dwarf_formstring(&attr);
	if (!n)
		n = dwarf_diename(die);
	if (!n && dwarf_attr_integrate(die, DW_AT_name, &attr))
		n = dwarf_formstring(&attr);
	return kept_name(s, n, 1);
}

static const struct hs_module *find_module(struct hs_reader *r, uint64_t pc, size_t *k)
{
	for (size_t i = r->nmods; i-- > 0;)
		if (pc >= r->mods[i]->lo && pc < r->mods[i]->hi) {
			*k = i;
			return r->mods[i];
		}
	return NULL;
}

/*
 * Below parent, the functions and inlined calls around pc, outermost first
 * in chain[depth..]; returns the new depth. Namespaces and types are walked
 * too: Rust puts its functions inside namespace DIEs, and there libdw's
 * dwarf_getscopes (0.188) finds nothing.
 */
static int walk_scopes(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *chain, int depth, int max)
{
	Dwarf_Die child;

	if (dwarf_child(parent, &child) != 0)
		return depth;
	do {
		int tag = dwarf_tag(&child);

		switch (tag) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_lexical_block:
			if (dwarf_haspc(&child, pc) <= 0)
				break;
			if (tag != DW_TAG_lexical_block && depth < max)
				chain[depth++] = child;
			return walk_scopes(&child, pc, chain, depth, max);
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_structure_type:
		case DW_TAG_class_type:
		case DW_TAG_union_type: {
			int d = walk_scopes(&child, pc, chain, depth, max);
			if (d > depth)
				return d;
			break;
		}
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return depth;
}

/*
 * The scopes at pc, innermost first, found by walking the units whose
 * ranges hold it: for when dwarf_getscopes finds none (see walk_scopes).
 */
static int scopes_by_walk(Dwfl_Module *mod, uint64_t pc, Dwarf_Die **cu, Dwarf_Addr *bias, Dwarf_Die **scopes)
{
	Dwarf_Die *c = NULL, *chain;
	Dwarf_Addr b;
	int n = 0;

	chain = malloc(HS_MAX_INLINE * sizeof(*chain));
	if (!chain)
		return 0;
	while (n == 0 && (c = dwfl_module_nextcu(mod, c, &b)) != NULL) {
		if (dwarf_haspc(c, pc - b) <= 0)
			continue;
		n = walk_scopes(c, pc - b, chain, 0, HS_MAX_INLINE);
		if (n > 0) {
			*cu = c;
			*bias = b;
		}
	}
	for (int i = 0; i < n / 2; i++) {
		Dwarf_Die t = chain[i];
		chain[i] = chain[n - 1 - i];
		chain[n - 1 - i] = t;
	}
	free(*scopes);
	*scopes = chain;
	return n;
}

static int bind_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

static int by_lo(const void *a, const void *b)
{
	const struct symrange *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A radix sort on the uint64_t at offset key of each element of size
 * bytes, least significant byte first, skipping the bytes all keys share
 * (an address's top ones): qsort's calls through a comparator took a
 * tenth of a report on a clang compile, whose two libraries' 76,000
 * symbols are sorted three ways each run. Stable, so ranges of one start
 * stay in table order. Without memory for the copy, qsort with cmp.
 */
static void sort_by_u64(void *v, size_t n, size_t size, size_t key, int (*cmp)(const void *, const void *))
{
	struct keyed {
		uint64_t key;
		size_t i;
	} *a = n > 64 ? malloc(n * sizeof(*a)) : NULL, *b = a ? malloc(n * sizeof(*b)) : NULL, *t;
	char *out = b ? malloc(n * size) : NULL;

	if (!out) {
		free(a);
		free(b);
		qsort(v, n, size, cmp);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		memcpy(&a[i].key, (char *)v + i * size + key, sizeof(a[i].key));
		a[i].i = i;
	}
	for (int shift = 0; shift < 64; shift += 8) {
		size_t count[256] = { 0 }, pos = 0, d;

		for (size_t i = 0; i < n; i++)
			count[(a[i].key >> shift) & 0xff]++;
		for (d = 0; d < 256 && !count[d]; d++)
			;
		if (count[d] == n)
			continue;
		for (d = 0; d < 256; d++) {
			size_t c = count[d];
			count[d] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++)
			b[count[(a[i].key >> shift) & 0xff]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	for (size_t i = 0; i < n; i++)
		memcpy(out + i * size, (char *)v + a[i].i * size, size);
	memcpy(v, out, n * size);
	free(a);
	free(b);
	free(out);
}

/* Every symbol's start and end, every section's: no memory, and no stretch is remembered. */
static void symtab_bounds(struct symtab *t, Dwfl_Module *mod, int nsyms)
{
	GElf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = NULL;
	size_t nscn = 0, n = 0, k = 0;

	if (!elf || elf_getshdrnum(elf, &nscn) != 0)
		return;
	if (!(t->bounds = malloc(((size_t)nsyms + nscn) * 2 * sizeof(*t->bounds))))
		return;
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		if (!dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL))
			continue;
		t->bounds[n++] = value;
		t->bounds[n++] = value + sym.st_size;
	}
	while ((scn = elf_nextscn(elf, scn)) != NULL && n + 2 <= ((size_t)nsyms + nscn) * 2) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		if (!sh)
			continue;
		t->bounds[n++] = sh->sh_addr + bias;
		t->bounds[n++] = sh->sh_addr + sh->sh_size + bias;
	}
	sort_by_u64(t->bounds, n, sizeof(*t->bounds), 0, cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || t->bounds[k - 1] != t->bounds[i])
			t->bounds[k++] = t->bounds[i];
	if (!(t->nameless = calloc(k + 1, 1))) {
		free(t->bounds);
		t->bounds = NULL;
		return;
	}
	t->nbounds = k;
}

/* How many of the sorted v[0 .. n) are at most x */
static size_t count_upto(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The stretch of pc (index into nameless), or -1 where pc is a bound itself or nothing is known */
static long symtab_stretch(const struct symtab *t, uint64_t pc)
{
	size_t lo;

	if (!t->nameless)
		return -1;
	lo = count_upto(t->bounds, t->nbounds, pc);
	if (lo > 0 && t->bounds[lo - 1] == pc)
		return -1;
	return (long)lo;
}

/* Whether the symbol is one libdw's search looks at: named, defined, not a section, file or TLS */
static int searched(const char *name, const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return name && name[0] && sym->st_shndx != SHN_UNDEF && type != STT_SECTION && type != STT_FILE &&
	       type != STT_TLS;
}

/* The sized symbols of [from, to), sorted; global ones without a size to labels. 0, or -1 out of memory. */
static int symset_fill(struct symset *set, struct symtab *t, Dwfl_Module *mod, int from, int to)
{
	if (to <= from)
		return 0;
	if (!(set->v = malloc((size_t)(to - from) * sizeof(*set->v))))
		return -1;
	for (int i = from; i < to; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL);

		if (!searched(name, &sym))
			continue;
		if (sym.st_size == 0) {
			if (set == &t->global && t->labels)
				t->labels[t->nlabels++] = value;
			if (t->sizeless)
				t->sizeless[t->nsizeless++] = value;
			continue;
		}
		set->v[set->n++] = (struct symrange){ value, value + sym.st_size, (uint32_t)i, (uint8_t)bind_rank(&sym), name };
	}
	/* set->v is in table order: by start, then table index (by_lo) */
	sort_by_u64(set->v, set->n, sizeof(*set->v), offsetof(struct symrange, lo), by_lo);
	if (!(set->maxend = malloc((set->n + 1) * sizeof(*set->maxend)))) {
		set->n = 0;
		return -1;
	}
	for (size_t i = 0; i < set->n; i++)
		set->maxend[i] = i && set->maxend[i - 1] > set->v[i].end ? set->maxend[i - 1] : set->v[i].end;
	return 0;
}

/*
 * The parts of the table dwfl_module_addrinfo looks at, as it does: the
 * globals first, then the locals (before the first global), where there
 * are any. Out of memory, a lookup the sets cannot answer goes to libdw.
 */
static struct symtab *symtab_of(struct hs_symbols *s, Dwfl_Module *mod)
{
	struct symtab *t, *nt;
	int n, first;

	for (size_t i = 0; i < s->ntabs; i++)
		if (s->tabs[i].mod == mod)
			return &s->tabs[i];
	if (!(nt = realloc(s->tabs, (s->ntabs + 1) * sizeof(*nt))))
		return NULL;
	s->tabs = nt;
	t = &s->tabs[s->ntabs++];
	*t = (struct symtab){ .mod = mod };
	n = dwfl_module_getsymtab(mod);
	first = dwfl_module_getsymtab_first_global(mod);
	if (n <= 0 || first < 0)
		return t;
	t->labels = malloc((size_t)n * sizeof(*t->labels));
	t->sizeless = malloc((size_t)n * sizeof(*t->sizeless));
	if (symset_fill(&t->global, t, mod, first == 0 ? 1 : first, n) == 0 && t->labels) {
		sort_by_u64(t->labels, t->nlabels, sizeof(*t->labels), 0, cmp_u64);
		t->complete = symset_fill(&t->local, t, mod, 1, first) == 0 && t->sizeless;
		if (t->sizeless)
			sort_by_u64(t->sizeless, t->nsizeless, sizeof(*t->sizeless), 0, cmp_u64);
	}
	symtab_bounds(t, mod, n);
	return t;
}

static int is_label(const struct symtab *t, uint64_t pc)
{
	size_t lo = 0, hi = t->nlabels;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->labels[mid] < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nlabels && t->labels[lo] == pc;
}

/*
 * libdw's choice among the set's symbols that hold pc (the closest start,
 * then the better binding, then the smaller size, then the first in the
 * table) in *name: 1; 0 when none does; -1 when too many do to tell here.
 */
static int symset_name(const struct symset *set, uint64_t pc, const char **name)
{
	const struct symrange *best = NULL, *c[16];
	size_t lo = 0, hi = set->n, nc = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (set->v[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t j = lo; j-- > 0 && set->maxend[j] > pc;)
		if (set->v[j].end > pc) {
			if (nc == 16)
				return -1;
			c[nc++] = &set->v[j];
		}
	/* in table order, as libdw meets them */
	for (size_t i = 1; i < nc; i++)
		for (size_t j = i; j > 0 && c[j - 1]->idx > c[j]->idx; j--) {
			const struct symrange *x = c[j];
			c[j] = c[j - 1];
			c[j - 1] = x;
		}
	for (size_t i = 0; i < nc; i++) {
		const struct symrange *y = c[i];
		if (!best || best->lo < y->lo || best->bind < y->bind ||
		    (best->lo == y->lo && ((best->end - best->lo > y->end - y->lo && best->bind <= y->bind) ||
					   (best->end - best->lo >= y->end - y->lo && best->bind < y->bind))))
			best = y;
	}
	*name = best ? best->name : NULL;
	return best != NULL;
}

/*
 * dwfl_module_addrinfo's answer where a sized symbol holds pc: a global
 * one, else a local one, which libdw looks for only where no global label
 * sits at pc itself. NULL: libdw's to answer (labels without a size).
 */
static const char *symtab_name(const struct symtab *t, uint64_t pc, int *none)
{
	const char *name = NULL;
	int rc = symset_name(&t->global, pc, &name);

	*none = 0;
	if (rc == 0 && (!t->local.n || !is_label(t, pc))) {
		if (t->local.n)
			rc = symset_name(&t->local, pc, &name);
		*none = rc == 0 && t->complete;
	}
	return rc > 0 ? name : NULL;
}

/* The end of the global sized symbols that start at or below pc, the furthest out */
static uint64_t global_end_below(const struct symtab *t, uint64_t pc)
{
	size_t lo = 0, hi = t->global.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->global.v[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? t->global.maxend[lo - 1] : 0;
}

/*
 * Where no sized symbol holds pc: whether libdw would find no name either.
 * It falls back to a symbol without a size at or below pc only when that
 * lies at or past the end of every symbol it saw at or below pc (min_label
 * in libdw's dwfl_module_addrsym.c), the globals always among them: when
 * the highest such symbol lies below the furthest end of the globals,
 * none qualifies. The static functions of a stripped library end here
 * without libdw's scan of the whole table (clang's libLLVM: 45,000
 * symbols at each of thousands of addresses, half of `top`'s time).
 */
static int surely_nameless(const struct symtab *t, uint64_t pc)
{
	size_t lo = count_upto(t->sizeless, t->nsizeless, pc);

	return lo == 0 || t->sizeless[lo - 1] < global_end_below(t, pc);
}

static int resolve(struct hs_reader *r, uint64_t ret, struct hs_frame *out, int max)
{
	struct hs_symbols *s = r->sym;
	uint64_t pc = ret ? ret - 1 : 0; /* the call instruction, not the one after it */
	size_t mk = 0;
	const struct hs_module *m = find_module(r, pc, &mk);
	Dwfl_Module *mod = s->dwfl ? dwfl_addrmodule(s->dwfl, pc) : NULL;
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = NULL, *scopes = NULL;
	Dwfl_Line *src;
	int n = 0, nscopes, walked = 0;

	out[0] = (struct hs_frame){ .address = ret, .module = m ? m->path : NULL, .module_address = m ? ret - m->base : 0 };
	/* the module that holds pc was not reported: if its file could not be, the frames it leaves unnamed are counted */
	if (m && mk < s->unnamed_cap && s->unnamed[mk].why) {
		s->unnamed[mk].addresses++;
		return 1;
	}
	if (!mod)
		return 1;
	src = dwfl_module_getsrc(mod, pc);
	if (src) {
		int ln = 0;
		const char *f = dwfl_lineinfo(src, NULL, &ln, NULL, NULL, NULL);
		out[0].file = kept_name(s, f, 0);
		out[0].line = ln;
	}
	cu = dwfl_module_addrdie(mod, pc, &bias);
	nscopes = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
	if (nscopes <= 0 && (nscopes = scopes_by_walk(mod, pc, &cu, &bias, &scopes)) > 0)
		walked = 1;
	if (nscopes > 0) {
		/* getscopes continues an inlined function in its abstract tree; the concrete chain has the callers */
		Dwarf_Die inner, *chain = NULL;
		Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
		const char *file = out[0].file;
		int line = out[0].line;

		if (!walked && dw && dwarf_offdie(dw, dwarf_dieoffset(&scopes[0]), &inner)) {
			free(scopes);
			scopes = NULL;
			nscopes = dwarf_getscopes_die(&inner, &chain);
			scopes = chain;
		}
		for (int i = 0; i < nscopes && n < max; i++) {
			int tag = dwarf_tag(&scopes[i]);
			Dwarf_Attribute a;
			Dwarf_Word cf = 0, cl = 0;
			Dwarf_Files *files;
			size_t nfiles;

			if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
				continue;
			out[n] = (struct hs_frame){ .address = ret, .module = out[0].module, .module_address = out[0].module_address,
						    .file = file, .line = line };
			out[n].function = die_name(s, &scopes[i]);
			out[n].inlined = tag == DW_TAG_inlined_subroutine;
			n++;
			if (tag == DW_TAG_subprogram)
				break;
			/* where the inlined call sits is the location in the next frame out */
			file = NULL;
			line = 0;
			if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &cf) == 0 &&
			    dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && cf < nfiles)
				file = kept_name(s, dwarf_filesrc(files, cf, NULL, NULL), 0);
			if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cl) == 0)
				line = (int)cl;
		}
	}
	free(scopes);
	if (n == 0) {
		GElf_Sym sym;
		GElf_Off off;
		struct symtab *t = s->libdw_names ? NULL : symtab_of(s, mod);
		int none = 0;
		const char *name = t ? symtab_name(t, pc, &none) : NULL;
		long k = t && !name ? symtab_stretch(t, pc) : -1;

		if (!name && !(none && surely_nameless(t, pc)) && (k < 0 || !t->nameless[k])) {
			name = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
			if (!name && k >= 0)
				t->nameless[k] = 1;
		}
		out[0].function = kept_name(s, name, 1);
		n = 1;
	}
	return n;
}

const char *hs_frame_name(const struct hs_frame *fr, char *buf, size_t n)
{
	const char *m;

	if (fr->function)
		return fr->function;
	if (!fr->module) {
		snprintf(buf, n, "0x%llx", (unsigned long long)fr->address);
		return buf;
	}
	m = strrchr(fr->module, '/');
	snprintf(buf, n, "%s+0x%llx", m ? m + 1 : fr->module, (unsigned long long)fr->module_address);
	return buf;
}

int hs_reader_symbolize(struct hs_reader *r, uint64_t ret, struct hs_frame *frames, int max)
{
	struct hs_symbols *s;
	struct hs_frame tmp[HS_MAX_INLINE];
	size_t j;
	int n;

	if (max <= 0)
		return 0;
	if (ret == HS_ADDR_TRUNCATED) {
		frames[0] = (struct hs_frame){ .address = ret, .function = "[truncated]" };
		return 1;
	}
	if (!r->sym) {
		s = r->sym = calloc(1, sizeof(*s));
		if (!s) {
			frames[0] = (struct hs_frame){ .address = ret };
			return 1;
		}
		s->cb.find_elf = dwfl_build_id_find_elf;
		s->cb.find_debuginfo = hs_find_debuginfo;
		s->cb.section_address = dwfl_offline_section_address;
		s->cb.debuginfo_path = &s->debuginfo_path;
		s->libdw_names = getenv("HEAPSCOPE_TEST_LIBDW_NAMES") != NULL;
	}
	s = r->sym;
	if (s->need_rebuild || !s->dwfl) {
		s->need_rebuild = 0;
		report_modules(r);
	}
	if (s->map_used * 2 >= s->map_cap) {
		size_t ncap = s->map_cap ? s->map_cap * 2 : 1024;
		struct cached *nm = calloc(ncap, sizeof(*nm));
		if (!nm)
			goto uncached;
		for (size_t i = 0; i < s->map_cap; i++) {
			if (!s->map[i].n)
				continue;
			j = (s->map[i].pc * 0x9e3779b97f4a7c15ull >> 20) & (ncap - 1);
			while (nm[j].n)
				j = (j + 1) & (ncap - 1);
			nm[j] = s->map[i];
		}
		free(s->map);
		s->map = nm;
		s->map_cap = ncap;
	}
	j = (ret * 0x9e3779b97f4a7c15ull >> 20) & (s->map_cap - 1);
	while (s->map[j].n && s->map[j].pc != ret)
		j = (j + 1) & (s->map_cap - 1);
	if (!s->map[j].n) {
		n = resolve(r, ret, tmp, HS_MAX_INLINE);
		if (s->nframes + (size_t)n > s->frames_cap) {
			size_t cap = (s->frames_cap ? s->frames_cap : 1024) * 2 + (size_t)n;
			struct hs_frame *f = realloc(s->frames, cap * sizeof(*f));
			if (!f)
				goto give;
			s->frames = f;
			s->frames_cap = cap;
		}
		memcpy(s->frames + s->nframes, tmp, (size_t)n * sizeof(*tmp));
		s->map[j] = (struct cached){ .pc = ret, .first = (uint32_t)s->nframes, .n = (uint32_t)n };
		s->nframes += (size_t)n;
		s->map_used++;
	}
	n = (int)s->map[j].n < max ? (int)s->map[j].n : max;
	memcpy(frames, s->frames + s->map[j].first, (size_t)n * sizeof(*frames));
	return n;
uncached:
	n = resolve(r, ret, tmp, HS_MAX_INLINE);
give:
	n = n < max ? n : max;
	memcpy(frames, tmp, (size_t)n * sizeof(*frames));
	return n;
}
