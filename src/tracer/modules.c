/* modules.c - the module map (path, build-id, load address, segments) recorded for offline symbolization */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common/ehframe.h"
#include "../common/varint.h"
#include "tracer.h"

#define HS_MAX_MODULES 8192
#define HS_MAX_SEGS 16

struct module {
	uintptr_t base;
	uintptr_t lo, hi;     /* address range of its PT_LOAD segments */
	uint64_t name_hash;
	int seen;             /* generation of the last scan that found it */
	size_t rec_off, rec_len; /* its MODULE record after the time, in recs */
	struct hs_eh_frame eh;   /* where its unwind tables are (lo 0: none), for a stuck loader's walks */
};

static struct hs_lock mod_lock = HS_LOCK_INIT;
static struct module *mods;
static int nmods, generation;
static unsigned long long last_adds, last_subs;
static char exe_path[4096];

/* The modules' records (after their time), for a forked child to write again without asking the loader. */
static uint8_t *recs;
static size_t recs_used, recs_cap;

/*
 * glibc's dl_iterate_phdr takes a lock of the loader's (in _rtld_global),
 * and fork does not: a child forked while another thread was in dlopen,
 * dlclose or dl_iterate_phdr finds it held by a thread it does not have,
 * for good. The tracer then hung the child in its first module scan. The
 * lock's owner word is found at start, from inside dl_iterate_phdr, as the
 * one recursive mutex of _rtld_global that this thread holds there and not
 * outside; a child that finds it taken never calls the loader
 * (hs_loader_stuck): it writes the parent's module records, and walks
 * stacks with the unwind rules it has.
 */
static const int *loader_owner;
int hs_loader_stuck;

struct lock_search {
	const int *lo;
	size_t n;
	int me, found;
	const int *owner;
};

/* pthread_mutex_t on x86-64 glibc: lock, count, owner, nusers, kind (ints) */
static int held_here(struct dl_phdr_info *info, size_t size, void *data)
{
	struct lock_search *s = data;

	(void)info;
	(void)size;
	for (size_t i = 0; i + 5 <= s->n; i += 2) {
		const int *m = s->lo + i;
		if (m[2] == s->me && m[0] != 0 && m[1] >= 1 && (m[4] & 0x7f) == PTHREAD_MUTEX_RECURSIVE_NP) {
			s->found++;
			s->owner = m + 2;
		}
	}
	return 1;
}

static void find_loader_lock(void)
{
	Dl_info dli;
	const ElfW(Sym) *sym = NULL;
	void *g = dlsym(RTLD_DEFAULT, "_rtld_global");
	struct lock_search s = { 0 };

	if (!g || !dladdr1(g, &dli, (void **)&sym, RTLD_DL_SYMENT) || !sym || sym->st_size < 64)
		return;
	s.lo = g;
	s.n = sym->st_size / sizeof(int);
	s.me = (int)hs_gettid();
	dl_iterate_phdr(held_here, &s);
	if (s.found == 1 && *s.owner != s.me)
		loader_owner = s.owner;
}

/* In a forked child, before anything asks the loader. */
void hs_loader_after_fork(void)
{
	int owner = loader_owner ? __atomic_load_n(loader_owner, __ATOMIC_RELAXED) : 0;

	hs_loader_stuck = owner != 0 && owner != (int)hs_gettid();
}

/* dl_iterate_phdr for all of the tracer: -1, without a call, when the loader is stuck. */
int hs_loader_iterate(int (*fn)(struct dl_phdr_info *, size_t, void *), void *data)
{
	if (hs_loader_stuck)
		return -1;
	return dl_iterate_phdr(fn, data);
}

/* Keeps a module's record after its time; a full arena is compacted or grown. -1: no memory. */
static int keep_record(struct module *m, const uint8_t *tail, size_t len)
{
	if (recs_used + len > recs_cap) {
		size_t live = len, cap;
		uint8_t *n;
		for (int i = 0; i < nmods; i++)
			if (&mods[i] != m)
				live += mods[i].rec_len;
		cap = recs_cap ? recs_cap : 64 << 10;
		while (cap < 2 * live)
			cap *= 2;
		if (!(n = hs_map(cap)))
			return -1;
		size_t used = 0;
		for (int i = 0; i < nmods; i++) {
			if (&mods[i] == m)
				continue;
			memcpy(n + used, recs + mods[i].rec_off, mods[i].rec_len);
			mods[i].rec_off = used;
			used += mods[i].rec_len;
		}
		hs_unmap(recs, recs_cap);
		recs = n;
		recs_cap = cap;
		recs_used = used;
	}
	memcpy(recs + recs_used, tail, len);
	m->rec_off = recs_used;
	m->rec_len = len;
	recs_used += len;
	return 0;
}

int hs_modules_init(void)
{
	long n;

	mods = hs_map(HS_MAX_MODULES * sizeof(*mods));
	if (!mods)
		return -1;
	n = syscall(SYS_readlink, "/proc/self/exe", exe_path, sizeof(exe_path) - 1);
	exe_path[n > 0 ? n : 0] = 0;
	find_loader_lock();
	return 0;
}

/* Tracing could not start: the program gets the memory back. */
void hs_modules_release(void)
{
	hs_unmap(mods, HS_MAX_MODULES * sizeof(*mods));
	hs_unmap(recs, recs_cap);
	mods = NULL;
	recs = NULL;
	recs_cap = recs_used = 0;
	nmods = 0;
}

void hs_modules_reset(void)
{
	hs_lock_reset(&mod_lock);
	nmods = 0;
	last_adds = last_subs = 0;
}

/* Address range of a loaded object's PT_LOAD segments. */
void hs_module_range(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
	*lo = UINTPTR_MAX;
	*hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < *lo)
			*lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > *hi)
			*hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
}

/*
 * The line of /proc/self/maps whose range holds addr: its range, the end
 * of the line before it (0 for none) and, when cap is not 0, its path
 * (cut to cap - 1 bytes; "" for none). Raw syscalls, a streaming parse
 * (lines can be longer than the buffer), no allocation: callable from a
 * hook. 0, or -1 (no such line, or the file unreadable).
 */
int hs_maps_find(uintptr_t addr, uintptr_t *lo_out, uintptr_t *hi_out, uintptr_t *prev_hi, char *path, size_t cap)
{
	char buf[1024];
	uintptr_t lo = 0, hi = 0, last_hi = 0;
	int fd, field = 0, found = -1, matches = 0, in_word = 0;
	size_t n = 0;
	long got;

	fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (found < 0 && (got = syscall(SYS_read, fd, buf, sizeof(buf))) > 0) {
		for (long i = 0; i < got; i++) {
			char c = buf[i];
			if (c == '\n') {
				if (matches) {
					if (cap)
						path[n < cap ? n : cap - 1] = 0;
					*lo_out = lo;
					*hi_out = hi;
					*prev_hi = last_hi;
					found = 0;
					break;
				}
				last_hi = hi;
				lo = hi = 0;
				field = 0;
				n = 0;
				in_word = 0;
				continue;
			}
			if (field == 0 || field == 1) {
				/* "lo-hi": hex digits, then '-', then hex digits and a space */
				int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
				if (d >= 0) {
					if (field == 0)
						lo = lo << 4 | (uintptr_t)d;
					else
						hi = hi << 4 | (uintptr_t)d;
				} else if (c == '-' && field == 0) {
					field = 1;
				} else if (c == ' ') {
					field = 2;
					matches = addr >= lo && addr < hi;
				}
			} else if (field < 6) {
				/* perms, offset, dev, inode: words ended by spaces */
				if (c != ' ')
					in_word = 1;
				else if (in_word)
					field++, in_word = 0;
			} else if (n > 0 || c != ' ') {
				/* the path, after the spaces that align it */
				if (matches && n < cap)
					path[n] = c;
				n++;
			}
		}
	}
	syscall(SYS_close, fd);
	return found;
}

/* The file mapped at addr: a library dlopen'ed by a relative name is known to the loader by that name only, which means nothing to a reader in another directory. */
static int mapped_path(uintptr_t addr, char *out, size_t cap)
{
	uintptr_t lo, hi, prev;

	return hs_maps_find(addr, &lo, &hi, &prev, out, cap) == 0 && out[0] == '/' ? 0 : -1;
}

/* An absolute path for a loaded object: the executable's for the unnamed main one. 0, or -1 (e.g. the vDSO). */
int hs_module_path(const struct dl_phdr_info *info, char *out, size_t cap)
{
	const char *name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : exe_path;
	uintptr_t lo, hi;
	size_t n;

	/* a name without a slash is the vDSO's (the loader keeps the path it found any other object by): no file */
	if (name[0] != '/' && strchr(name, '/')) {
		hs_module_range(info, &lo, &hi);
		if (lo != UINTPTR_MAX && mapped_path(lo, out, cap) == 0)
			return 0;
	}
	/* absolute, or not found mapped: the name as the loader has it */
	n = strlen(name);
	if (n >= cap)
		n = cap - 1;
	memcpy(out, name, n);
	out[n] = 0;
	return n ? 0 : -1;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static size_t build_id(const struct dl_phdr_info *info, const uint8_t **id)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;
		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const uint8_t *name = p + sizeof(*nh);
			const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);
			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
				*id = desc;
				return nh->n_descsz;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

static void emit_module(struct module *m, const struct dl_phdr_info *info, const char *path)
{
	uint8_t rec[4096 + 512], *p = rec, *tail;
	size_t plen = strlen(path), idlen;
	const uint8_t *id = NULL;
	int nseg = 0;

	if (plen > 4096)
		plen = 4096;
	idlen = build_id(info, &id);
	if (idlen > 64)
		idlen = 64;
	*p++ = HS_REC_MODULE;
	p = hs_varint_put(p, hs_now_ns());
	tail = p;
	p = hs_varint_put(p, info->dlpi_addr);
	p = hs_varint_put(p, plen);
	memcpy(p, path, plen);
	p += plen;
	p = hs_varint_put(p, idlen);
	memcpy(p, id, idlen);
	p += idlen;
	for (int i = 0; i < info->dlpi_phnum; i++)
		nseg += info->dlpi_phdr[i].p_type == PT_LOAD;
	if (nseg > HS_MAX_SEGS)
		nseg = HS_MAX_SEGS;
	p = hs_varint_put(p, (uint64_t)nseg);
	for (int i = 0, k = 0; i < info->dlpi_phnum && k < nseg; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		p = hs_varint_put(p, ph->p_vaddr);
		p = hs_varint_put(p, ph->p_memsz);
		p = hs_varint_put(p, ph->p_flags);
		p = hs_varint_put(p, ph->p_offset);
		k++;
	}
	hs_meta_append(rec, (size_t)(p - rec));
	if (keep_record(m, tail, (size_t)(p - tail)) < 0)
		m->rec_len = 0;
}

int hs_modules_eh_of(uintptr_t ip, uintptr_t *lo, uintptr_t *hi, struct hs_eh_frame *eh)
{
	int rc = -1;

	hs_lock_take(&mod_lock);
	for (int i = 0; i < nmods && rc < 0; i++) {
		if (ip < mods[i].lo || ip >= mods[i].hi)
			continue;
		*lo = mods[i].lo;
		*hi = mods[i].hi;
		*eh = mods[i].eh;
		rc = 0;
	}
	hs_lock_release(&mod_lock);
	return rc;
}

/* A forked child's module records, from the parent's: its loader may be stuck (see loader_owner). */
void hs_modules_replay(void)
{
	static uint8_t rec[1 + HS_VARINT_MAX + 4096 + 512]; /* the child is alone: one thread */
	uint8_t *p;

	hs_lock_reset(&mod_lock);
	for (int i = 0; i < nmods; i++) {
		if (!mods[i].rec_len || mods[i].rec_len > sizeof(rec) - 1 - HS_VARINT_MAX)
			continue;
		p = rec;
		*p++ = HS_REC_MODULE;
		p = hs_varint_put(p, hs_now_ns());
		memcpy(p, recs + mods[i].rec_off, mods[i].rec_len);
		hs_meta_append(rec, (size_t)(p - rec) + mods[i].rec_len);
	}
}

static int scan_one(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *path = info->dlpi_name;
	static char abs_path[4096];   /* under mod_lock */
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	uint64_t nh;
	int i;

	(void)size;
	(void)data;
	last_adds = info->dlpi_adds;
	last_subs = info->dlpi_subs;
	if (!path || !*path)
		path = exe_path;
	nh = hash_str(path);
	hs_module_range(info, &lo, &hi);
	for (i = 0; i < nmods; i++) {
		if (mods[i].base == info->dlpi_addr && mods[i].name_hash == nh) {
			mods[i].seen = generation;
			return 0;
		}
	}
	if (nmods == HS_MAX_MODULES)
		return 0;
	mods[nmods].base = info->dlpi_addr;
	mods[nmods].lo = lo;
	mods[nmods].hi = hi;
	mods[nmods].name_hash = nh;
	mods[nmods].seen = generation;
	mods[nmods].rec_len = 0;
	hs_eh_frame_of(info->dlpi_phdr, info->dlpi_phnum, info->dlpi_addr, &mods[nmods].eh); /* none: lo stays 0 */
	nmods++;
	/* only a new module pays for the lookup of a relative name */
	if (path[0] != '/' && hs_module_path(info, abs_path, sizeof(abs_path)) == 0)
		path = abs_path;
	emit_module(&mods[nmods - 1], info, path);
	return 0;
}

void hs_modules_scan(void)
{
	hs_lock_take(&mod_lock);
	generation++;
	/* a stuck loader lists nothing: the modules stay as they were, none unloaded */
	if (hs_loader_iterate(scan_one, NULL) < 0) {
		hs_lock_release(&mod_lock);
		return;
	}
	for (int i = 0; i < nmods; i++) {
		if (mods[i].seen == generation)
			continue;
		uint8_t rec[1 + 2 * HS_VARINT_MAX], *p = rec;
		*p++ = HS_REC_MODULE_UNLOAD;
		p = hs_varint_put(p, hs_now_ns());
		p = hs_varint_put(p, mods[i].base);
		hs_meta_append(rec, (size_t)(p - rec));
		hs_unwind_forget(mods[i].lo, mods[i].hi);
		mods[i] = mods[--nmods];
		i--;
	}
	hs_lock_release(&mod_lock);
}

static int peek_counts(struct dl_phdr_info *info, size_t size, void *data)
{
	unsigned long long *c = data;
	(void)size;
	c[0] = info->dlpi_adds;
	c[1] = info->dlpi_subs;
	return 1;
}

/* Cheap check for dlopen/dlclose since the last scan: the loader counts them. */
void hs_modules_poll(void)
{
	unsigned long long c[2] = { 0, 0 };

	if (hs_loader_iterate(peek_counts, c) < 0)
		return;
	if (c[0] != last_adds || c[1] != last_subs)
		hs_modules_scan();
}

int hs_modules_contains(uintptr_t ip)
{
	int found = 0;

	hs_lock_take(&mod_lock);
	for (int i = 0; i < nmods && !found; i++)
		found = ip >= mods[i].lo && ip < mods[i].hi;
	hs_lock_release(&mod_lock);
	return found;
}
