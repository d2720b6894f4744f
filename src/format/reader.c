/* reader.c - decodes a trace: header, checksummed zstd chunks, records into events */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "../common/bytes.h"
#include "../common/crc32c.h"
#include "../common/varint.h"
#include "reader-internal.h"
#include "records.h"

static const char *const fn_names[HS_FN_COUNT] = {
	"malloc", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc", "memalign",
	"valloc", "pvalloc", "free", "malloc_usable_size", "mmap", "munmap", "mremap", "brk", "sbrk",
};

const char *hs_fn_name(int fn)
{
	return fn >= 0 && fn < HS_FN_COUNT ? fn_names[fn] : "?";
}

static int fail(struct hs_reader *r, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->failed = code;
	return code;
}

static void warn(struct hs_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->warn, sizeof(r->warn), fmt, ap);
	va_end(ap);
}

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		fprintf(stderr, "heapscope: out of memory\n");
		abort();
	}
	return q;
}

char *hs_strndup(const char *s, size_t n)
{
	char *d = xrealloc(NULL, n + 1);
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

static int read_header(struct hs_reader *r)
{
	uint8_t h[HS_FILE_HEADER_SIZE];
	size_t n = fread(h, 1, sizeof(h), r->f);
	uint32_t hsize;

	if (n == 0)
		return fail(r, -EINVAL, "'%s' is empty: not a heapscope trace (offset 0)", r->path);
	if (n < 8 || memcmp(h, HS_MAGIC, HS_MAGIC_LEN) != 0)
		return fail(r, -EINVAL, "'%s' is not a heapscope trace: bad magic at offset 0", r->path);
	if (n < sizeof(h))
		return fail(r, -EINVAL, "'%s' is truncated inside its header (%zu of %d bytes, offset %zu)",
			    r->path, n, HS_FILE_HEADER_SIZE, n);
	if (hs_get_u32(h + 8) != HS_BYTE_ORDER_MARK)
		return fail(r, -EINVAL, "'%s' was written with another byte order (offset 8); read it on a "
			    "little-endian machine", r->path);
	r->info.version_major = hs_get_u16(h + 12);
	r->info.version_minor = hs_get_u16(h + 14);
	if (r->info.version_major != HS_VERSION_MAJOR)
		return fail(r, -EINVAL, "'%s' is format version %u.%u (offset 12); this heapscope reads %d.x",
			    r->path, r->info.version_major, r->info.version_minor, HS_VERSION_MAJOR);
	hsize = hs_get_u32(h + 16);
	if (hsize < HS_FILE_HEADER_SIZE || hsize > 65536)
		return fail(r, -EINVAL, "'%s' has a bad header size %u at offset 16", r->path, hsize);
	if (hs_crc32c(0, h, 44) != hs_get_u32(h + 44))
		return fail(r, -EINVAL, "'%s' has a corrupt header: checksum mismatch at offset 44", r->path);
	r->info.sample_bytes = hs_get_u64(h + 24);
	r->info.start_realtime_ns = hs_get_u64(h + 32);
	r->info.pid = hs_get_u32(h + 40);
	/* a later minor version may have a longer header: skip what we do not know */
	if (hsize > r->file_size)
		return fail(r, -EINVAL, "'%s' is truncated inside its header (%llu of %u bytes, offset %llu)", r->path,
			    (unsigned long long)r->file_size, hsize, (unsigned long long)r->file_size);
	r->next_chunk = hsize;
	return 0;
}

/* 1: a chunk is loaded; 0: clean end of file; <0: error */
static int load_chunk(struct hs_reader *r)
{
	uint8_t h[HS_CHUNK_HEADER_SIZE];
	uint32_t stored, rawsz;
	size_t n;
	unsigned long long got;

	r->chunk_off = r->next_chunk;
	if (fseeko(r->f, (off_t)r->chunk_off, SEEK_SET) != 0)
		return fail(r, -EIO, "cannot seek to offset %llu of '%s'", (unsigned long long)r->chunk_off, r->path);
	n = fread(h, 1, sizeof(h), r->f);
	if (n == 0)
		return 0;
	if (n < sizeof(h)) {
		warn(r, "'%s' is truncated: incomplete chunk header at offset %llu; read up to there",
		     r->path, (unsigned long long)r->chunk_off);
		return 0;
	}
	if (hs_get_u32(h) != HS_CHUNK_MAGIC || hs_crc32c(0, h, 20) != hs_get_u32(h + 20))
		return fail(r, -EINVAL, "'%s' is corrupt: bad chunk header at offset %llu", r->path,
			    (unsigned long long)r->chunk_off);
	stored = hs_get_u32(h + 8);
	rawsz = hs_get_u32(h + 12);
	if (!(hs_get_u32(h + 4) & HS_CHUNK_ZSTD) || rawsz > HS_CHUNK_MAX_RAW ||
	    stored > ZSTD_compressBound(HS_CHUNK_MAX_RAW))
		return fail(r, -EINVAL, "'%s' is corrupt: impossible chunk sizes at offset %llu", r->path,
			    (unsigned long long)r->chunk_off);
	if (stored > r->zcap) {
		r->zbuf = xrealloc(r->zbuf, stored);
		r->zcap = stored;
	}
	n = fread(r->zbuf, 1, stored, r->f);
	if (n < stored) {
		warn(r, "'%s' is truncated: the chunk at offset %llu has %zu of its %u bytes; read up to there",
		     r->path, (unsigned long long)r->chunk_off, n, stored);
		return 0;
	}
	if (hs_crc32c(0, r->zbuf, stored) != hs_get_u32(h + 16))
		return fail(r, -EINVAL, "'%s' is corrupt: checksum mismatch in the chunk at offset %llu",
			    r->path, (unsigned long long)r->chunk_off);
	if (rawsz > r->rcap || !r->rbuf) {
		r->rbuf = xrealloc(r->rbuf, rawsz ? rawsz : 1);
		r->rcap = rawsz ? rawsz : 1;
	}
	got = ZSTD_getFrameContentSize(r->zbuf, stored);
	if (got != rawsz)
		return fail(r, -EINVAL, "'%s' is corrupt: chunk at offset %llu declares %u bytes, holds %llu",
			    r->path, (unsigned long long)r->chunk_off, rawsz, got);
	n = ZSTD_decompress(r->rbuf, rawsz, r->zbuf, stored);
	if (ZSTD_isError(n) || n != rawsz)
		return fail(r, -EINVAL, "'%s' is corrupt: chunk at offset %llu does not decompress (%s)", r->path,
			    (unsigned long long)r->chunk_off, ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short");
	r->next_chunk = r->chunk_off + HS_CHUNK_HEADER_SIZE + stored;
	r->p = r->rbuf;
	r->end = r->rbuf + rawsz;
	r->ts = 0;
	r->ptr = 0;
	r->tid = 0;
	r->chunks++;
	return 1;
}

#define GET(v)                                          \
	do {                                            \
		if (hs_varint_get(&r->p, r->end, &(v))) \
			goto bad;                       \
	} while (0)

static int get_str(struct hs_reader *r, const char **s, size_t *len)
{
	uint64_t n;

	if (hs_varint_get(&r->p, r->end, &n) || n > (uint64_t)(r->end - r->p))
		return -1;
	*s = (const char *)r->p;
	*len = (size_t)n;
	r->p += n;
	return 0;
}

static int add_stack(struct hs_reader *r, uint64_t id, uint64_t parent, uint64_t ip)
{
	/* the tracer numbers nodes 1, 2, 3, ... in the order it writes them */
	if (id != (r->nstacks ? r->nstacks : 1) || id > UINT32_MAX || parent >= id)
		return -1;
	if (id >= r->nstacks_cap) {
		size_t cap = r->nstacks_cap ? r->nstacks_cap : 4096;
		while (cap <= id)
			cap *= 2;
		r->stack_parent = xrealloc(r->stack_parent, cap * sizeof(*r->stack_parent));
		r->stack_ip = xrealloc(r->stack_ip, cap * sizeof(*r->stack_ip));
		memset(r->stack_parent + r->nstacks_cap, 0xff, (cap - r->nstacks_cap) * sizeof(*r->stack_parent));
		r->nstacks_cap = cap;
	}
	r->stack_parent[id] = (uint32_t)parent;
	r->stack_ip[id] = ip;
	if (id >= r->nstacks)
		r->nstacks = (uint32_t)id + 1;
	return 0;
}

static int add_module(struct hs_reader *r, struct hs_event *ev)
{
	uint64_t t, base, nseg, lo = UINT64_MAX, hi = 0;
	const char *path, *id;
	size_t plen, idlen;
	struct hs_module *m;

	GET(t);
	GET(base);
	if (get_str(r, &path, &plen) || get_str(r, &id, &idlen))
		goto bad;
	GET(nseg);
	if (nseg > 64)
		goto bad;
	for (uint64_t i = 0; i < nseg; i++) {
		uint64_t va, sz, fl, off;
		GET(va);
		GET(sz);
		GET(fl);
		GET(off);
		(void)fl;
		(void)off;
		if (base + va < lo)
			lo = base + va;
		if (base + va + sz > hi)
			hi = base + va + sz;
	}
	if (lo == UINT64_MAX)
		lo = hi = base;
	if (r->nmods == r->mods_cap) {
		r->mods_cap = r->mods_cap ? r->mods_cap * 2 : 64;
		r->mods = xrealloc(r->mods, r->mods_cap * sizeof(*r->mods));
	}
	m = xrealloc(NULL, sizeof(*m));
	memset(m, 0, sizeof(*m));
	m->base = base;
	m->lo = lo;
	m->hi = hi;
	m->path = hs_strndup(path, plen);
	m->build_id = (const uint8_t *)hs_strndup(id, idlen);
	m->build_id_len = idlen;
	m->load_time_ns = t;
	r->mods[r->nmods++] = m;
	ev->kind = HS_EVENT_MODULE;
	ev->time_ns = t;
	ev->module = m;
	hs_symbols_invalidate(r);
	return 0;
bad:
	return -1;
}

static int add_process(struct hs_reader *r)
{
	uint64_t pid, ppid, argc;
	const char *s;
	size_t n;

	GET(pid);
	GET(ppid);
	if (get_str(r, &s, &n))
		goto bad;
	GET(argc);
	if (argc > 1u << 20)
		goto bad;
	free((char *)r->info.exe);
	for (int i = 0; i < r->info.argc; i++)
		free(r->info.argv[i]);
	free(r->info.argv);
	r->info.pid = (uint32_t)pid;
	r->info.ppid = (uint32_t)ppid;
	r->info.exe = hs_strndup(s, n);
	r->info.argv = xrealloc(NULL, (argc + 1) * sizeof(char *));
	r->info.argc = 0;
	for (uint64_t i = 0; i < argc; i++) {
		if (get_str(r, &s, &n))
			goto bad;
		r->info.argv[r->info.argc++] = hs_strndup(s, n);
	}
	r->info.argv[r->info.argc] = NULL;
	return 0;
bad:
	return -1;
}

/* Types a later minor version may add (docs/FORMAT.md, "Compatibility"). */
static int skippable(uint8_t t)
{
	return (t >= 0x02 && t <= 0x0f) || (t >= 0x24 && t <= 0x2f) || (t >= 0x32 && t <= 0x3f) ||
	       (t >= 0x42 && t <= 0x4f) || (t >= 0x62 && t <= 0x7e);
}

static int decode_one(struct hs_reader *r, struct hs_event *ev)
{
	const uint8_t *start = r->p;
	uint8_t type = *r->p++;
	uint64_t v, a, b, c, d, e;

	memset(ev, 0, sizeof(*ev));
	ev->tid = r->tid;
	switch (type) {
	case HS_REC_THREAD:
		GET(v);
		r->tid = (uint32_t)v;
		return 0;
	case HS_REC_ALLOC:
		GET(v);
		r->ts += (uint64_t)hs_unzigzag(v);
		GET(a);
		GET(b);
		GET(c);
		GET(d);
		if (a >= HS_FN_COUNT || d > UINT32_MAX)
			goto bad;
		ev->kind = HS_EVENT_ALLOC;
		ev->fn = (int)a;
		ev->ptr = r->ptr + (uint64_t)hs_unzigzag(b);
		ev->size = c;
		ev->stack = (uint32_t)d;
		if (a == HS_FN_REALLOC || a == HS_FN_REALLOCARRAY) {
			GET(e);
			ev->old_ptr = ev->ptr + (uint64_t)hs_unzigzag(e);
		}
		r->ptr = ev->ptr;
		break;
	case HS_REC_FREE:
		GET(v);
		r->ts += (uint64_t)hs_unzigzag(v);
		GET(c);
		GET(a);
		if (c != HS_FN_FREE && c != HS_FN_REALLOC && c != HS_FN_REALLOCARRAY)
			goto bad;
		ev->kind = HS_EVENT_FREE;
		ev->fn = (int)c;
		ev->ptr = r->ptr + (uint64_t)hs_unzigzag(a);
		r->ptr = ev->ptr;
		break;
	case HS_REC_MMAP:
		GET(v);
		r->ts += (uint64_t)hs_unzigzag(v);
		GET(ev->addr);
		GET(ev->len);
		GET(a);
		GET(b);
		GET(c);
		if (c > UINT32_MAX)
			goto bad;
		ev->kind = HS_EVENT_MMAP;
		ev->fn = HS_FN_MMAP;
		ev->prot = (uint32_t)a;
		ev->flags = (uint32_t)b;
		ev->stack = (uint32_t)c;
		break;
	case HS_REC_MUNMAP:
		GET(v);
		r->ts += (uint64_t)hs_unzigzag(v);
		GET(ev->addr);
		GET(ev->len);
		ev->kind = HS_EVENT_MUNMAP;
		ev->fn = HS_FN_MUNMAP;
		break;
	case HS_REC_MREMAP:
		GET(v);
		r->ts += (uint64_t)hs_unzigzag(v);
		GET(ev->addr);
		GET(ev->len);
		GET(ev->new_addr);
		GET(ev->new_len);
		GET(c);
		if (c > UINT32_MAX)
			goto bad;
		ev->kind = HS_EVENT_MREMAP;
		ev->fn = HS_FN_MREMAP;
		ev->stack = (uint32_t)c;
		break;
	case HS_REC_BRK:
		GET(v);
		r->ts += (uint64_t)hs_unzigzag(v);
		GET(a);
		GET(ev->addr);
		GET(ev->new_addr);
		GET(c);
		if ((a != HS_FN_BRK && a != HS_FN_SBRK) || c > UINT32_MAX)
			goto bad;
		ev->kind = HS_EVENT_BRK;
		ev->fn = (int)a;
		ev->stack = (uint32_t)c;
		break;
	case HS_REC_RSS:
		GET(ev->time_ns);
		GET(ev->rss);
		ev->kind = HS_EVENT_RSS;
		return 1;
	case HS_REC_MARKER:
		GET(ev->time_ns);
		GET(v);
		ev->tid = (uint32_t)v;
		if (get_str(r, &ev->label, &ev->label_len))
			goto bad;
		ev->kind = HS_EVENT_MARKER;
		return 1;
	case HS_REC_MODULE:
		if (add_module(r, ev))
			goto bad;
		return 1;
	case HS_REC_MODULE_UNLOAD:
		GET(ev->time_ns);
		GET(ev->addr);
		ev->kind = HS_EVENT_MODULE_UNLOAD;
		return 1;
	case HS_REC_STACK:
		GET(a);
		GET(b);
		GET(c);
		if (add_stack(r, a, b, c))
			goto bad;
		return 0;
	case HS_REC_PROCESS:
		if (add_process(r))
			goto bad;
		return 0;
	case HS_REC_TOTALS:
		GET(ev->time_ns);
		GET(v);
		if (v > 1024)
			goto bad;
		for (uint64_t i = 0; i < v; i++) {
			GET(a);
			GET(b);
			if (i < HS_FN_COUNT) {
				r->calls[i] = a;
				r->bytes[i] = b;
			}
		}
		ev->kind = HS_EVENT_TOTALS;
		ev->calls = r->calls;
		ev->bytes = r->bytes;
		return 1;
	case HS_REC_END:
		GET(ev->time_ns);
		GET(v);
		if (v > HS_END_STOP)
			goto bad;
		ev->flags = (uint32_t)v;
		ev->kind = HS_EVENT_END;
		return 1;
	default:
		if (skippable(type)) {
			/* a later minor version's record: its length follows the type */
			GET(v);
			if (v > (uint64_t)(r->end - r->p))
				goto bad;
			r->p += v;
			return 0;
		}
		r->p = start;
		return fail(r, -EINVAL, "'%s' is corrupt: unknown record type 0x%02x at byte %zu of the chunk at offset %llu",
			    r->path, type, (size_t)(start - r->rbuf), (unsigned long long)r->chunk_off);
	}
	ev->time_ns = r->ts;
	return 1;
bad:
	return fail(r, -EINVAL, "'%s' is corrupt: malformed record (type 0x%02x) at byte %zu of the chunk at offset %llu",
		    r->path, type, (size_t)(start - r->rbuf), (unsigned long long)r->chunk_off);
}

int hs_reader_next(struct hs_reader *r, struct hs_event *ev)
{
	if (r->failed)
		return r->failed;
	for (;;) {
		int rc;
		if (r->p == r->end) {
			rc = load_chunk(r);
			if (rc <= 0)
				return rc;
			continue;
		}
		rc = decode_one(r, ev);
		if (rc)
			return rc;
	}
}

int hs_reader_open(struct hs_reader **out, const char *path)
{
	struct hs_reader *r = xrealloc(NULL, sizeof(*r));
	struct stat st;
	int rc;

	memset(r, 0, sizeof(*r));
	*out = r;
	r->path = hs_strndup(path, strlen(path));
	r->f = fopen(path, "rb");
	if (!r->f)
		return fail(r, -errno, "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fileno(r->f), &st) != 0)
		return fail(r, -errno, "cannot stat '%s': %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return fail(r, -EISDIR, "'%s' is a directory; give a trace file", path);
	r->file_size = (uint64_t)st.st_size;
	rc = read_header(r);
	if (rc < 0)
		return rc;
	r->info.exe = hs_strndup("", 0);
	r->info.argv = xrealloc(NULL, sizeof(char *));
	r->info.argv[0] = NULL;
	/* the tracer writes the process record first: read it now so info is complete after open */
	rc = load_chunk(r);
	if (rc < 0)
		return rc;
	if (rc > 0 && r->p < r->end && *r->p == HS_REC_PROCESS) {
		const uint8_t *start = r->p++;
		if (add_process(r) < 0)
			return fail(r, -EINVAL, "'%s' is corrupt: malformed record (type 0x%02x) at byte %zu of the chunk at offset %llu",
				    r->path, HS_REC_PROCESS, (size_t)(start - r->rbuf), (unsigned long long)r->chunk_off);
	}
	return 0;
}

void hs_reader_close(struct hs_reader *r)
{
	if (!r)
		return;
	hs_symbols_free(r);
	if (r->f)
		fclose(r->f);
	for (size_t i = 0; i < r->nmods; i++) {
		free((char *)r->mods[i]->path);
		free((void *)r->mods[i]->build_id);
		free(r->mods[i]);
	}
	free(r->mods);
	for (int i = 0; i < r->info.argc; i++)
		free(r->info.argv[i]);
	free(r->info.argv);
	free((char *)r->info.exe);
	free(r->stack_parent);
	free(r->stack_ip);
	free(r->zbuf);
	free(r->rbuf);
	free(r->path);
	free(r);
}

const struct hs_trace_info *hs_reader_info(struct hs_reader *r)
{
	return &r->info;
}

const char *hs_reader_error(struct hs_reader *r)
{
	return r->failed ? r->err : r->warn;
}

const char *hs_reader_warning(struct hs_reader *r)
{
	return r->warn;
}

uint64_t hs_reader_offset(struct hs_reader *r)
{
	return r->chunk_off;
}

uint32_t hs_reader_stack_count(struct hs_reader *r)
{
	return r->nstacks;
}

int hs_reader_stack_node(struct hs_reader *r, uint32_t stack, uint32_t *parent, uint64_t *ip)
{
	if (stack == 0 || stack >= r->nstacks || r->stack_parent[stack] == UINT32_MAX)
		return -ENOENT;
	*parent = r->stack_parent[stack];
	*ip = r->stack_ip[stack];
	return 0;
}

int hs_reader_stack(struct hs_reader *r, uint32_t stack, uint64_t *ips, int max)
{
	int n = 0;

	while (stack && n < max) {
		uint32_t parent;
		uint64_t ip;
		if (hs_reader_stack_node(r, stack, &parent, &ip) < 0)
			return n ? n : -ENOENT;
		ips[n++] = ip;
		stack = parent;
	}
	return n;
}

size_t hs_reader_module_count(struct hs_reader *r)
{
	return r->nmods;
}

const struct hs_module *hs_reader_module(struct hs_reader *r, size_t i)
{
	return i < r->nmods ? r->mods[i] : NULL;
}
