/* modules.c - the module map (path, build-id, load address, segments) recorded for offline symbolization */
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common/varint.h"
#include "tracer.h"

#define HS_MAX_MODULES 8192
#define HS_MAX_SEGS 16

struct module {
	uintptr_t base;
	uintptr_t lo, hi;     /* address range of its PT_LOAD segments */
	uint64_t name_hash;
	int seen;             /* generation of the last scan that found it */
};

static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;
static struct module *mods;
static int nmods, generation;
static unsigned long long last_adds, last_subs;
static char exe_path[4096];

int hs_modules_init(void)
{
	long n;

	mods = hs_map(HS_MAX_MODULES * sizeof(*mods));
	if (!mods)
		return -1;
	n = syscall(SYS_readlink, "/proc/self/exe", exe_path, sizeof(exe_path) - 1);
	exe_path[n > 0 ? n : 0] = 0;
	return 0;
}

void hs_modules_reset(void)
{
	pthread_mutex_init(&mod_lock, NULL);
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

static void emit_module(const struct dl_phdr_info *info, const char *path)
{
	uint8_t rec[4096 + 512], *p = rec;
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
}

static int scan_one(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *path = info->dlpi_name;
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
	nmods++;
	emit_module(info, path);
	return 0;
}

void hs_modules_scan(void)
{
	pthread_mutex_lock(&mod_lock);
	generation++;
	dl_iterate_phdr(scan_one, NULL);
	for (int i = 0; i < nmods; i++) {
		if (mods[i].seen == generation)
			continue;
		uint8_t rec[1 + 2 * HS_VARINT_MAX], *p = rec;
		*p++ = HS_REC_MODULE_UNLOAD;
		p = hs_varint_put(p, hs_now_ns());
		p = hs_varint_put(p, mods[i].base);
		hs_meta_append(rec, (size_t)(p - rec));
		mods[i] = mods[--nmods];
		i--;
	}
	pthread_mutex_unlock(&mod_lock);
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

	dl_iterate_phdr(peek_counts, c);
	if (c[0] != last_adds || c[1] != last_subs)
		hs_modules_scan();
}

int hs_modules_contains(uintptr_t ip)
{
	int found = 0;

	pthread_mutex_lock(&mod_lock);
	for (int i = 0; i < nmods && !found; i++)
		found = ip >= mods[i].lo && ip < mods[i].hi;
	pthread_mutex_unlock(&mod_lock);
	return found;
}
