/* reader.c - decodes a trace: header, checksummed zstd chunks, records into events */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "../common/bytes.h"
#include "../common/clock.h"
#include "../common/crc32c.h"
#include "../common/file.h"
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

/* one cache line an event (reader.h): analyses' time follows it */
_Static_assert(sizeof(struct hs_event) == 64, "struct hs_event grew past a cache line");

/* hs_reader_next_block's batch when no thread decodes ahead */
#define OWN_EVENTS 256

/* bytes of zeros kept after a chunk's payload: more than the longest varint */
#define SLACK 16

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

/* NULL when memory ran out: the caller fails with -ENOMEM, naming where it was reading */
char *hs_strndup(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

int hs_reader_no_memory(struct hs_reader *r, const char *what)
{
	return fail(r, -ENOMEM, "out of memory for %s reading '%s' (chunk at offset %llu); free some memory, or "
		    "analyse on a machine with more", what, r->path, (unsigned long long)r->chunk_off);
}

/* realloc that keeps *p on failure */
static int grow(void **p, size_t n)
{
	void *q = realloc(*p, n ? n : 1);

	if (!q)
		return -ENOMEM;
	*p = q;
	return 0;
}

/*
 * The families of records fast_one() and fast_bare() decode, by the type
 * byte alone: one load instead of the chains of hs_alloc_rec_fn() and
 * the free tests, which took 8 instructions of an event's 180.
 */
enum {
	FAST_NO,             /* any other record: decode_one() */
	FAST_ALLOC,          /* ALLOC + fn, but realloc's: its address from a prediction and a difference */
	FAST_ALLOC_AT,       /* ALLOC_AT + fn (3.0): at its predicted address */
	FAST_ALLOC_TOP,      /* ALLOC_TOP + fn (6.0): at the thread's top */
	FAST_FREE_RECENT,    /* its place in the recent list in the ptr stream */
	FAST_FREE_RECENT_AT, /* its place in the type's low 4 bits (3.0) */
	FAST_FREE,           /* its address as a difference from the thread's last */
	FAST_REALLOC,        /* realloc's ALLOC: FAST_ALLOC with an old address after the new one */
};

_Static_assert(HS_FN_FREE < 16 && HS_FN_REALLOCARRAY < 16 && HS_FN_PVALLOC < 16, "an entry point fits r->fast's low 4 bits");

/* r->fast for the file's version, from the same rules decode_one() reads the types by. */
static void fast_types(struct hs_reader *r)
{
	for (unsigned type = 0; type < 256; type++) {
		int at, fn = hs_alloc_rec_fn(type, r->freed, r->top, &at), family = FAST_NO;
		if (fn >= 0)
			family = at == HS_AT_PRED ? FAST_ALLOC_AT : at == HS_AT_TOP ? FAST_ALLOC_TOP :
				 fn == HS_FN_REALLOC || fn == HS_FN_REALLOCARRAY ? FAST_REALLOC : FAST_ALLOC;
		else if ((fn = hs_free_recent_rec_fn(type, r->freed)) >= 0)
			family = type == HS_REC_FREE_RECENT ? FAST_FREE_RECENT : FAST_FREE_RECENT_AT;
		else if ((fn = hs_free_rec_fn(type)) >= 0)
			family = FAST_FREE;
		r->fast[type] = (uint8_t)(family << 4 | (fn >= 0 ? fn : 0));
	}
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
	r->freed = r->info.version_major >= HS_VERSION_FREED;
	r->runs = r->info.version_major >= HS_VERSION_TIME_RUNS;
	r->top = r->info.version_major >= HS_VERSION_TOP;
	r->pairs = r->info.version_major >= HS_VERSION_PAIRS;
	fast_types(r);
	if (r->info.version_major < HS_VERSION_MAJOR_OLDEST || r->info.version_major > HS_VERSION_MAJOR)
		return fail(r, -EINVAL, "'%s' is format version %u.%u (offset 12); this heapscope reads %d.x to %d.x: "
			    "read it with the heapscope that wrote it", r->path, r->info.version_major,
			    r->info.version_minor, HS_VERSION_MAJOR_OLDEST, HS_VERSION_MAJOR);
	hsize = hs_get_u32(h + 16);
	if (hsize < HS_FILE_HEADER_SIZE || hsize > 65536)
		return fail(r, -EINVAL, "'%s' has a bad header size %u at offset 16", r->path, hsize);
	if (hs_crc32c(0, h, 52) != hs_get_u32(h + 52))
		return fail(r, -EINVAL, "'%s' has a corrupt header: checksum mismatch at offset 52", r->path);
	r->info.sample_bytes = hs_get_u64(h + 24);
	r->info.start_realtime_ns = hs_get_u64(h + 32);
	r->info.pid = hs_get_u32(h + 40);
	r->info.time_resolution_ns = hs_get_u32(h + 44);
	if (r->info.time_resolution_ns == 0)
		return fail(r, -EINVAL, "'%s' has a corrupt header: time resolution 0 at offset 44", r->path);
	/* a later minor version may have a longer header: skip what we do not know */
	if (hsize > r->file_size)
		return fail(r, -EINVAL, "'%s' is truncated inside its header (%llu of %u bytes, offset %llu)", r->path,
			    (unsigned long long)r->file_size, hsize, (unsigned long long)r->file_size);
	r->next_chunk = hsize;
	return 0;
}

/* The payload starts with the stream count and lengths; later minor versions may add streams. */
static int split_streams(struct hs_reader *r, uint32_t rawsz)
{
	const uint8_t *p = r->rbuf, *end = r->rbuf + rawsz;
	uint64_t count, len[64];

	if (rawsz == 0) {
		for (int i = 0; i < HS_STREAM_COUNT; i++)
			r->sp[i] = r->se[i] = r->rbuf;
		return 0;
	}
	if (hs_varint_get(&p, end, &count) || count < HS_STREAM_COUNT || count > 64)
		return -1;
	for (uint64_t i = 0; i < count; i++)
		if (hs_varint_get(&p, end, &len[i]) || len[i] > (uint64_t)(end - p))
			return -1;
	for (uint64_t i = 0; i < count; i++) {
		if (len[i] > (uint64_t)(end - p))
			return -1;
		if (i < HS_STREAM_COUNT) {
			r->sp[i] = p;
			r->se[i] = p + len[i];
		}
		p += len[i];
	}
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
	/*
	 * The tracer still wrote the file at open: read the chunks that were
	 * whole then, a snapshot, rather than chase a writer that a reader
	 * sharing its CPUs may never catch up with, nor call its chunk in
	 * progress a truncation.
	 */
	if (r->info.being_written &&
	    (n < sizeof(h) || r->chunk_off + HS_CHUNK_HEADER_SIZE + hs_get_u32(h + 8) > r->file_size))
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
		if (grow((void **)&r->zbuf, stored))
			return hs_reader_no_memory(r, "a compressed chunk");
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
		/* zeroed slack after the payload: the fast decoder may read up to SLACK bytes past a stream */
		if (grow((void **)&r->rbuf, (size_t)rawsz + SLACK))
			return hs_reader_no_memory(r, "a chunk");
		r->rcap = rawsz;
	}
	memset(r->rbuf + rawsz, 0, SLACK);
	got = ZSTD_getFrameContentSize(r->zbuf, stored);
	if (got != rawsz)
		return fail(r, -EINVAL, "'%s' is corrupt: chunk at offset %llu declares %u bytes, holds %llu",
			    r->path, (unsigned long long)r->chunk_off, rawsz, got);
	if (!r->dctx)
		r->dctx = ZSTD_createDCtx();
	n = r->dctx ? ZSTD_decompressDCtx(r->dctx, r->rbuf, rawsz, r->zbuf, stored) :
		      ZSTD_decompress(r->rbuf, rawsz, r->zbuf, stored);
	if (ZSTD_isError(n) || n != rawsz)
		return fail(r, -EINVAL, "'%s' is corrupt: chunk at offset %llu does not decompress (%s)", r->path,
			    (unsigned long long)r->chunk_off, ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short");
	r->next_chunk = r->chunk_off + HS_CHUNK_HEADER_SIZE + stored;
	if (split_streams(r, rawsz) < 0)
		return fail(r, -EINVAL, "'%s' is corrupt: bad stream table in the chunk at offset %llu", r->path,
			    (unsigned long long)r->chunk_off);
	r->q = 0;
	r->q_ns = 0;
	r->run_left = 0;
	r->tid = 0;
	r->pred = NULL;
	r->npairs = 0;
	r->chunk_no++;
	r->chunks++;
	return 1;
}

/* Reads the next varint of a stream into v, or jumps to bad. */
#define GETS(stream, v)                                                  \
	do {                                                             \
		if (hs_varint_get(&r->sp[stream], r->se[stream], &(v))) \
			goto bad;                                        \
	} while (0)
#define GET(v) GETS(HS_STREAM_MISC, v)

/* A record that states its length first (those a later minor version may lengthen): *end, where it ends. */
static int get_sized(struct hs_reader *r, const uint8_t **end)
{
	uint64_t n;
	const uint8_t **p = &r->sp[HS_STREAM_MISC];

	if (hs_varint_get(p, r->se[HS_STREAM_MISC], &n) || n > (uint64_t)(r->se[HS_STREAM_MISC] - *p))
		return -1;
	*end = *p + n;
	return 0;
}

static int get_str(struct hs_reader *r, const char **s, size_t *len)
{
	uint64_t n;
	const uint8_t **p = &r->sp[HS_STREAM_MISC];

	if (hs_varint_get(p, r->se[HS_STREAM_MISC], &n) || n > (uint64_t)(r->se[HS_STREAM_MISC] - *p))
		return -1;
	*s = (const char *)*p;
	*len = (size_t)n;
	*p += n;
	return 0;
}

/* The node into the table; the tracer's numbering is checked by add_stack. */
int hs_reader_store_stack(struct hs_reader *r, uint64_t id, uint64_t parent, uint64_t ip)
{
	if (id >= r->nstacks_cap) {
		size_t cap = r->nstacks_cap ? r->nstacks_cap : 4096;
		while (cap <= id)
			cap *= 2;
		if (grow((void **)&r->stack_parent, cap * sizeof(*r->stack_parent)) ||
		    grow((void **)&r->stack_ip, cap * sizeof(*r->stack_ip)))
			return -ENOMEM;
		memset(r->stack_parent + r->nstacks_cap, 0xff, (cap - r->nstacks_cap) * sizeof(*r->stack_parent));
		r->nstacks_cap = cap;
	}
	r->stack_parent[id] = (uint32_t)parent;
	r->stack_ip[id] = ip;
	if (id >= r->nstacks)
		r->nstacks = (uint32_t)id + 1;
	r->stack_lim = r->nstacks;
	return 0;
}

/* A node's address: from 3.0 the record holds it as a difference from its parent's (already stored: parents come first). */
uint64_t hs_reader_stack_ip(const struct hs_reader *r, uint64_t parent, uint64_t ip)
{
	if (!r->freed)
		return ip;
	return (parent ? r->stack_ip[parent] : 0) + (uint64_t)hs_unzigzag(ip);
}

static int add_stack(struct hs_reader *r, uint64_t id, uint64_t parent, uint64_t ip)
{
	if (r->skim)
		return 0;
	/* 3.0 names the parent by its distance below the node */
	if (r->freed) {
		if (parent == 0 || parent > id)
			return -1;
		parent = id - parent;
	}
	/* the tracer numbers nodes 1, 2, 3, ... in the order it writes them */
	if (id != (r->nstacks ? r->nstacks : 1) || id > UINT32_MAX || parent >= id)
		return -1;
	if (!r->ho)
		return hs_reader_store_stack(r, id, parent, hs_reader_stack_ip(r, parent, ip));
	/* decoding ahead: the node goes with its block (its address as read: the consumer has the parent's), and only the count is kept here */
	if (hs_block_stack(r->ho, id, parent, ip))
		return -ENOMEM;
	r->nstacks = (uint32_t)id + 1;
	r->stack_lim = r->nstacks;
	return 0;
}

void hs_reader_free_module(struct hs_module *m)
{
	free((char *)m->path);
	free((void *)m->build_id);
	free(m);
}

int hs_reader_add_module(struct hs_reader *r, struct hs_module *m)
{
	if (r->nmods == r->mods_cap) {
		size_t cap = r->mods_cap ? r->mods_cap * 2 : 64;
		if (grow((void **)&r->mods, cap * sizeof(*r->mods)))
			return -ENOMEM;
		r->mods_cap = cap;
	}
	r->mods[r->nmods++] = m;
	hs_symbols_invalidate(r);
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
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->base = base;
	m->lo = lo;
	m->hi = hi;
	m->path = hs_strndup(path, plen);
	m->build_id = (const uint8_t *)hs_strndup(id, idlen);
	m->build_id_len = idlen;
	m->load_time_ns = t;
	/* decoding ahead: the module goes with its block, into the consumer's list */
	if (!m->path || !m->build_id || (r->ho ? hs_block_module(r->ho, m) : hs_reader_add_module(r, m))) {
		hs_reader_free_module(m);
		return -ENOMEM;
	}
	ev->kind = HS_EVENT_MODULE;
	ev->time_ns = t;
	ev->module = m;
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
	r->info.argv = calloc(argc + 1, sizeof(char *));
	r->info.argc = 0;
	if (!r->info.exe || !r->info.argv)
		return -ENOMEM;
	for (uint64_t i = 0; i < argc; i++) {
		if (get_str(r, &s, &n))
			goto bad;
		if (!(r->info.argv[r->info.argc] = hs_strndup(s, n)))
			return -ENOMEM;
		r->info.argc++;
	}
	return 0;
bad:
	return -1;
}

static int bad_record(struct hs_reader *r, unsigned type)
{
	size_t at = (size_t)(r->sp[HS_STREAM_TYPE] - r->rbuf);

	return fail(r, -EINVAL, "'%s' is corrupt: malformed record (type 0x%02x) at byte %zu of the chunk at offset %llu",
		    r->path, type, at ? at - 1 : 0, (unsigned long long)r->chunk_off);
}

/* The tracer never records a block at address 0 (failed calls are not recorded, free(NULL) neither); rec: its type byte. */
static int zero_address(struct hs_reader *r, const uint8_t *rec)
{
	return fail(r, -EINVAL, "'%s' is corrupt: an allocation or a free at address 0 at byte %zu of the chunk at offset %llu",
		    r->path, (size_t)(rec - r->rbuf), (unsigned long long)r->chunk_off);
}

/*
 * An allocation's size and stack, from its place in the chunk's table of
 * pairs (7.0) or from their streams; a pair new to the chunk joins the
 * table as the writer's did. type: the record's, for an error. 0, or <0.
 */
static int get_site(struct hs_reader *r, unsigned type, struct hs_event *ev)
{
	uint64_t k = 0, v;

	if (r->pairs) {
		GETS(HS_STREAM_STACK, k);
		if (k > r->npairs)
			return fail(r, -EINVAL, "'%s' is corrupt: an allocation names pair %llu of %u at byte %zu of "
				    "the chunk at offset %llu", r->path, (unsigned long long)k, r->npairs,
				    (size_t)(r->sp[HS_STREAM_TYPE] - 1 - r->rbuf), (unsigned long long)r->chunk_off);
		if (k) {
			ev->size = r->pair[k - 1].size;
			ev->stack = r->pair[k - 1].stack;
			return 0;
		}
	}
	GETS(HS_STREAM_SIZE, ev->size);
	GETS(HS_STREAM_STACK, v);
	if (v >= r->stack_lim)
		goto bad;
	ev->stack = (uint32_t)v;
	if (r->pairs && r->npairs < HS_PAIRS_MAX) {
		if (r->npairs == r->pair_cap) {
			uint32_t cap = r->pair_cap ? 2 * r->pair_cap : 1024;
			cap = cap < HS_PAIRS_MAX ? cap : HS_PAIRS_MAX;
			if (grow((void **)&r->pair, cap * sizeof(*r->pair)) < 0)
				return hs_reader_no_memory(r, "the table of pairs");
			r->pair_cap = cap;
		}
		r->pair[r->npairs].size = ev->size;
		r->pair[r->npairs++].stack = ev->stack;
	}
	return 0;
bad:
	return bad_record(r, type);
}

/*
 * An allocation's or a free's fields without its address
 * (hs_reader_skip_addresses): 1 when type is one, 0 when not, <0 on error.
 */
static int bare_event(struct hs_reader *r, unsigned type, struct hs_event *ev)
{
	int at, fn, rc;

	if ((fn = hs_alloc_rec_fn(type, r->freed, r->top, &at)) >= 0) {
		ev->kind = HS_EVENT_ALLOC;
		if ((rc = get_site(r, type, ev)) < 0)
			return rc;
	} else if ((fn = hs_free_recent_rec_fn(type, r->freed)) >= 0 || (fn = hs_free_rec_fn(type)) >= 0) {
		ev->kind = HS_EVENT_FREE;
	} else {
		return 0;
	}
	ev->fn = fn;
	ev->ptr = 0;
	ev->old_ptr = 0;
	return 1;
}

/* Fields of the events (types 0x10-0x24), from their streams. */
static int decode_event(struct hs_reader *r, unsigned type, struct hs_event *ev)
{
	struct hs_predict *pr;
	uint64_t v, a;
	int at, fn, rc;

	/* an allocation or free that fast_bare() left: a pair new to the chunk, or a malformed record */
	if (r->no_addresses && (rc = bare_event(r, type, ev)) != 0) {
		if (rc < 0)
			return rc;
		goto timed;
	}
	if ((fn = hs_alloc_rec_fn(type, r->freed, r->top, &at)) >= 0) {
		unsigned cls;
		uint64_t predicted;

		ev->kind = HS_EVENT_ALLOC;
		ev->fn = fn;
		a = 0;
		if (at == HS_AT_PTR)
			GETS(HS_STREAM_PTR, a);
		if ((rc = get_site(r, type, ev)) < 0)
			return rc;
		pr = hs_predict_for(r->predict, r->tid, r->chunk_no);
		cls = hs_size_class(ev->size);
		/* an ALLOC_TOP takes the freed list's block too, as the writer's prediction did */
		predicted = hs_predict_alloc(pr, cls, r->freed);
		ev->ptr = at == HS_AT_TOP ? pr->top : predicted + (uint64_t)hs_unzigzag(a);
		if (!ev->ptr)
			return zero_address(r, r->sp[HS_STREAM_TYPE] - 1);
		if (ev->fn == HS_FN_REALLOC || ev->fn == HS_FN_REALLOCARRAY) {
			GETS(HS_STREAM_PTR, a);
			ev->old_ptr = r->freed ? hs_realloc_old(a, ev->ptr, pr->last) : ev->ptr + (uint64_t)hs_unzigzag(a);
		}
		if (at != HS_AT_PRED)
			hs_predict_top(pr, ev->ptr, ev->size);
		pr->cls[cls] = ev->ptr;
		pr->last = ev->ptr;
		hs_recent_push(pr, ev->ptr, cls);
	} else if ((fn = hs_free_recent_rec_fn(type, r->freed)) >= 0) {
		ev->kind = HS_EVENT_FREE;
		ev->fn = fn;
		if (type == HS_REC_FREE_RECENT)
			GETS(HS_STREAM_PTR, a);
		else
			a = type & 15;
		pr = hs_predict_for(r->predict, r->tid, r->chunk_no);
		if (a >= pr->nrecent)
			return fail(r, -EINVAL, "'%s' is corrupt: a free names recent allocation %llu of %u at byte %zu "
				    "of the chunk at offset %llu", r->path, (unsigned long long)a, pr->nrecent,
				    (size_t)(r->sp[HS_STREAM_TYPE] - 1 - r->rbuf), (unsigned long long)r->chunk_off);
		ev->ptr = hs_recent_take(pr, (uint32_t)a, r->freed);
		pr->last = ev->ptr;
	} else {
		switch (type) {
		case HS_REC_FREE:
		case HS_REC_FREE_REALLOC:
		case HS_REC_FREE_REALLOCARRAY:
			ev->kind = HS_EVENT_FREE;
			ev->fn = hs_free_rec_fn(type);
			GETS(HS_STREAM_PTR, a);
			pr = hs_predict_for(r->predict, r->tid, r->chunk_no);
			ev->ptr = pr->last + (uint64_t)hs_unzigzag(a);
			if (!ev->ptr)
				return zero_address(r, r->sp[HS_STREAM_TYPE] - 1);
			pr->last = ev->ptr;
			break;
		case HS_REC_MMAP:
			ev->kind = HS_EVENT_MMAP;
			ev->fn = HS_FN_MMAP;
			GET(ev->addr);
			GET(ev->len);
			GET(v);
			GET(a);
			if (v > UINT32_MAX || a > UINT32_MAX)
				goto bad;
			ev->prot = (uint32_t)v;
			ev->flags = (uint32_t)a;
			GETS(HS_STREAM_STACK, v);
			if (v >= r->stack_lim)
				goto bad;
			ev->stack = (uint32_t)v;
			break;
		case HS_REC_MUNMAP:
			ev->kind = HS_EVENT_MUNMAP;
			ev->fn = HS_FN_MUNMAP;
			GET(ev->addr);
			GET(ev->len);
			break;
		case HS_REC_MREMAP:
			ev->kind = HS_EVENT_MREMAP;
			ev->fn = HS_FN_MREMAP;
			GET(ev->addr);
			GET(ev->len);
			GET(ev->new_addr);
			GET(ev->new_len);
			GETS(HS_STREAM_STACK, v);
			if (v >= r->stack_lim)
				goto bad;
			ev->stack = (uint32_t)v;
			break;
		case HS_REC_BRK:
		case HS_REC_SBRK:
			ev->kind = HS_EVENT_BRK;
			ev->fn = type == HS_REC_BRK ? HS_FN_BRK : HS_FN_SBRK;
			GET(ev->addr);
			GET(ev->new_addr);
			GETS(HS_STREAM_STACK, v);
			if (v >= r->stack_lim)
				goto bad;
			ev->stack = (uint32_t)v;
			break;
		default:
			return 0;
		}
	}
timed:
	if (r->runs && r->run_left) {
		r->run_left--;
	} else {
		GETS(HS_STREAM_TIME, v);
		if (r->runs && (v & 1))
			GETS(HS_STREAM_TIME, r->run_left);
		r->q += (uint64_t)hs_unzigzag(r->runs ? v >> 1 : v);
		r->q_ns = r->q * r->info.time_resolution_ns;
	}
	ev->time_ns = r->q_ns;
	return 1;
bad:
	return bad_record(r, type);
}

/* 1: an event; 0: a record with no event of its own; <0: error */
static int decode_one(struct hs_reader *r, struct hs_event *ev)
{
	unsigned type = *r->sp[HS_STREAM_TYPE]++;
	uint64_t v, a, b, c;
	int rc;

	/* allocations and frees are most records: they set their own fields, the rest start from zero */
	if ((type >= HS_REC_ALLOC && type <= HS_REC_FREE_RECENT) || type >= HS_REC_FREE_RECENT_AT) {
		ev->old_ptr = 0;
		ev->size = 0;
		ev->stack = 0;
	} else {
		memset(ev, 0, sizeof(*ev));
	}
	ev->tid = r->tid;
	if ((type >= HS_REC_ALLOC && type <= HS_REC_SBRK) || type >= HS_REC_FREE_RECENT_AT) {
		rc = decode_event(r, type, ev);
		if (rc)
			return rc;
	}
	switch (type) {
	case HS_REC_THREAD:
		GET(v);
		if (v > UINT32_MAX)
			goto bad;
		r->tid = (uint32_t)v;
		r->pred = NULL;
		return 0;
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
		if ((rc = add_module(r, ev)) == -ENOMEM)
			return hs_reader_no_memory(r, "a module");
		if (rc)
			goto bad;
		return 1;
	case HS_REC_MODULE_UNLOAD:
		GET(ev->time_ns);
		GET(ev->addr);
		ev->kind = HS_EVENT_MODULE_UNLOAD;
		return 1;
	case HS_REC_STACK:
		/* 4.0 leaves the id out: it is the next one */
		if (r->info.version_major >= HS_VERSION_STACK_SEQ)
			a = r->nstacks ? r->nstacks : 1;
		else
			GET(a);
		GET(b);
		GET(c);
		if ((rc = add_stack(r, a, b, c)) == -ENOMEM)
			return hs_reader_no_memory(r, "the stack table");
		if (rc)
			goto bad;
		return 0;
	case HS_REC_PROCESS:
		if ((rc = add_process(r)) == -ENOMEM)
			return hs_reader_no_memory(r, "the command line");
		if (rc)
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
	case HS_REC_SIGNAL: {
		const uint8_t *end;
		if (get_sized(r, &end))
			goto bad;
		GET(ev->time_ns);
		GET(a);
		if (a == 0 || a > 64 || r->sp[HS_STREAM_MISC] > end)
			goto bad;
		r->sp[HS_STREAM_MISC] = end;   /* a later minor version may say more */
		ev->flags = (uint32_t)a;
		ev->kind = HS_EVENT_SIGNAL;
		return 1;
	}
	case HS_REC_DISABLED: {
		const uint8_t *end;
		if (get_sized(r, &end))
			goto bad;
		GET(ev->time_ns);
		if (get_str(r, &ev->label, &ev->label_len) || r->sp[HS_STREAM_MISC] > end)
			goto bad;
		r->sp[HS_STREAM_MISC] = end;
		ev->kind = HS_EVENT_DISABLED;
		return 1;
	}
	case HS_REC_CHILDREN: {
		const uint8_t *end;
		if (get_sized(r, &end))
			goto bad;
		GET(ev->time_ns);
		GET(ev->len);
		if (ev->len == 0 || r->sp[HS_STREAM_MISC] > end)
			goto bad;
		r->sp[HS_STREAM_MISC] = end;
		ev->kind = HS_EVENT_CHILDREN;
		return 1;
	}
	case HS_REC_END:
		GET(ev->time_ns);
		GET(v);
		if (v > HS_END_STOP)
			goto bad;
		ev->flags = (uint32_t)v;
		ev->kind = HS_EVENT_END;
		return 1;
	default:
		if (hs_record_skippable(type)) {
			/* a later minor version's record: its length comes first */
			GET(v);
			if (v > (uint64_t)(r->se[HS_STREAM_MISC] - r->sp[HS_STREAM_MISC]))
				goto bad;
			r->sp[HS_STREAM_MISC] += v;
			return 0;
		}
		return fail(r, -EINVAL, "'%s' is corrupt: unknown record type 0x%02x at byte %zu of the chunk at offset %llu",
			    r->path, type, (size_t)(r->sp[HS_STREAM_TYPE] - 1 - r->rbuf), (unsigned long long)r->chunk_off);
	}
bad:
	return bad_record(r, type);
}

/*
 * A varint read without a bound per byte: the streams lie in one buffer
 * followed by zeroed slack, so a read stops within HS_VARINT_MAX bytes of
 * where it starts, inside the buffer; the caller then checks the stream's
 * end once. An overlong varint sets *bad. Sizes, stack ids and address
 * differences often take two bytes: they skip the loop.
 */
__attribute__((always_inline)) static inline uint64_t fast_varint(const uint8_t **pp, int *bad)
{
	const uint8_t *p = *pp;
	uint64_t v = p[0];

	if (v < 0x80) {
		*pp = p + 1;
		return v;
	}
	v = (v & 0x7f) | (uint64_t)p[1] << 7;
	if (p[1] < 0x80) {
		*pp = p + 2;
		return v;
	}
	v &= 0x3fff;
	for (unsigned i = 2; i < HS_VARINT_MAX; i++) {
		v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (p[i] < 0x80) {
			if (i == HS_VARINT_MAX - 1 && p[i] > 1)
				*bad = 1;
			*pp = p + i + 1;
			return v;
		}
	}
	*bad = 1;
	return 0;
}

static inline struct hs_predict *current_predict(struct hs_reader *r)
{
	if (!r->pred)
		r->pred = hs_predict_for(r->predict, r->tid, r->chunk_no);
	return r->pred;
}

/*
 * The next event's time delta (zigzag) from *pt: one per event before 5.0;
 * from 5.0 the first event of a run reads its delta, shifted left by one,
 * and when the low bit is set how many events follow at its time (*run,
 * counted down by them); the others read nothing. Its stream's end is
 * checked here, where it is read: most events read nothing.
 */
__attribute__((always_inline)) static inline uint64_t fast_time(const struct hs_reader *r, const uint8_t **pt, uint64_t *run,
								int *bad, const int modern)
{
	uint64_t t;

	if (!modern && !r->runs) {
		t = fast_varint(pt, bad);
	} else if (*run) {
		(*run)--;
		return 0;
	} else {
		t = fast_varint(pt, bad);
		*run = t & 1 ? fast_varint(pt, bad) : 0;
		t >>= 1;
	}
	if (*pt > r->se[HS_STREAM_TIME])
		*bad = 1;
	return t;
}

/*
 * An allocation's size and stack in stride: from the chunk's table of
 * pairs (7.0), or from their streams. 0: a pair new to the chunk (which
 * decode_one() adds), or a place beyond the table (which it names).
 */
__attribute__((always_inline)) static inline int fast_site(const struct hs_reader *r, const int pairs,
							   const uint8_t **ps, const uint8_t **pk, uint64_t *size,
							   uint64_t *stack, int *bad)
{
	if (pairs) {
		uint64_t k = fast_varint(pk, bad) - 1;

		if (k >= r->npairs)
			return 0;
		*size = r->pair[k].size;
		*stack = r->pair[k].stack;
		return 1;
	}
	*size = fast_varint(ps, bad);
	*stack = fast_varint(pk, bad);
	return 1;
}

/* fast_one's and fast_bare's end: the record taken, its thread and time (pt, run: the time stream past its delta t) */
__attribute__((always_inline)) static inline void fast_done(struct hs_reader *r, struct hs_event *ev, const uint8_t *pt,
							    uint64_t run, uint64_t t)
{
	ev->tid = r->tid;
	r->sp[HS_STREAM_TYPE]++;
	r->sp[HS_STREAM_TIME] = pt;
	r->run_left = run;
	if (t) {
		r->q += (uint64_t)hs_unzigzag(t);
		r->q_ns = r->q * r->info.time_resolution_ns;
	}
	ev->time_ns = r->q_ns;
}

static int fast_realloc(struct hs_reader *r, struct hs_event *ev);

/*
 * Allocations and frees, most of any trace, decoded in one straight run:
 * fast_one(), and fast_realloc() for realloc's (reallocs). 1: *ev filled;
 * 0: not such a record, or something in it is off: decode_one() then reads
 * it and names any error; <0: the reader has failed (a block at address 0,
 * known only once the state has moved on).
 */
__attribute__((always_inline)) static inline int fast_record(struct hs_reader *r, struct hs_event *ev,
							     const int reallocs, const int modern)
{
	const int freed = modern || r->freed;
	unsigned type = *r->sp[HS_STREAM_TYPE], family = r->fast[type] >> 4;
	const uint8_t *pt = r->sp[HS_STREAM_TIME], *pp = r->sp[HS_STREAM_PTR];
	struct hs_predict *pr;
	uint64_t a, t, run = r->run_left;
	int bad = 0, fn = r->fast[type] & 15;

	if (reallocs ? family == FAST_REALLOC : family == FAST_ALLOC || family == FAST_ALLOC_AT || family == FAST_ALLOC_TOP) {
		const uint8_t *ps = r->sp[HS_STREAM_SIZE], *pk = r->sp[HS_STREAM_STACK];
		uint64_t size, stack, predicted, old = 0;
		unsigned cls;

		a = reallocs || family == FAST_ALLOC ? fast_varint(&pp, &bad) : 0;
		/* a realloc's old address follows */
		if (reallocs)
			old = fast_varint(&pp, &bad);
		if (!fast_site(r, modern || r->pairs, &ps, &pk, &size, &stack, &bad))
			return 0;
		t = fast_time(r, &pt, &run, &bad, modern);
		if (bad || pp > r->se[HS_STREAM_PTR] || ps > r->se[HS_STREAM_SIZE] || pk > r->se[HS_STREAM_STACK] ||
		    stack >= r->stack_lim)
			return 0;
		r->sp[HS_STREAM_SIZE] = ps;
		r->sp[HS_STREAM_STACK] = pk;
		pr = current_predict(r);
		cls = hs_size_class(size);
		predicted = hs_predict_alloc(pr, cls, freed);
		if (!reallocs && family == FAST_ALLOC_TOP)
			predicted = pr->top;
		ev->kind = HS_EVENT_ALLOC;
		ev->fn = fn;
		ev->ptr = predicted + (uint64_t)hs_unzigzag(a);
		if (__builtin_expect(!ev->ptr, 0))
			return zero_address(r, r->sp[HS_STREAM_TYPE]);
		ev->size = size;
		ev->stack = (uint32_t)stack;
		ev->old_ptr = !reallocs ? 0 : freed ? hs_realloc_old(old, ev->ptr, pr->last) :
					      ev->ptr + (uint64_t)hs_unzigzag(old);
		if (reallocs || family != FAST_ALLOC_AT)
			hs_predict_top(pr, ev->ptr, size);
		pr->cls[cls] = ev->ptr;
		hs_recent_push(pr, ev->ptr, cls);
	} else if (reallocs) {
		return 0;
	} else if (family == FAST_FREE_RECENT || family == FAST_FREE_RECENT_AT) {
		a = family == FAST_FREE_RECENT ? fast_varint(&pp, &bad) : type & 15;
		t = fast_time(r, &pt, &run, &bad, modern);
		pr = current_predict(r);
		if (bad || pp > r->se[HS_STREAM_PTR] || a >= pr->nrecent)
			return 0;
		ev->kind = HS_EVENT_FREE;
		ev->fn = fn;
		ev->ptr = hs_recent_take(pr, (uint32_t)a, freed);
		ev->size = 0;
		ev->stack = 0;
		ev->old_ptr = 0;
	} else if (family == FAST_FREE) {
		a = fast_varint(&pp, &bad);
		t = fast_time(r, &pt, &run, &bad, modern);
		if (bad || pp > r->se[HS_STREAM_PTR])
			return 0;
		pr = current_predict(r);
		ev->kind = HS_EVENT_FREE;
		ev->fn = fn;
		ev->ptr = pr->last + (uint64_t)hs_unzigzag(a);
		if (__builtin_expect(!ev->ptr, 0))
			return zero_address(r, r->sp[HS_STREAM_TYPE]);
		ev->size = 0;
		ev->stack = 0;
		ev->old_ptr = 0;
	} else if (family == FAST_REALLOC) {
		return fast_realloc(r, ev);
	} else {
		return 0;
	}
	pr->last = ev->ptr;
	r->sp[HS_STREAM_PTR] = pp;
	fast_done(r, ev, pt, run, t);
	return 1;
}

/*
 * A realloc's allocation, out of line: one event in 50 of sqlite3's, and
 * inlined with the others it made GCC keep fewer of their values in
 * registers (6 more instructions an event). Through decode_one() it
 * took 450 instructions.
 */
__attribute__((noinline)) static int fast_realloc(struct hs_reader *r, struct hs_event *ev)
{
	return fast_record(r, ev, 1, 0);
}

/* modern: the file has runs of time, the freed list and pairs (7.0 on), so none is asked per record */
__attribute__((always_inline)) static inline int fast_one(struct hs_reader *r, struct hs_event *ev, const int modern)
{
	return fast_record(r, ev, 0, modern);
}

/* fast_one without addresses (hs_reader_skip_addresses): neither the ptr stream nor the predictions are read */
__attribute__((always_inline)) static inline int fast_bare(struct hs_reader *r, struct hs_event *ev)
{
	unsigned type = *r->sp[HS_STREAM_TYPE], family = r->fast[type] >> 4;
	const uint8_t *pt = r->sp[HS_STREAM_TIME];
	uint64_t t, run = r->run_left;
	int bad = 0, fn = r->fast[type] & 15;

	if (family == FAST_ALLOC || family == FAST_ALLOC_AT || family == FAST_ALLOC_TOP || family == FAST_REALLOC) {
		const uint8_t *ps = r->sp[HS_STREAM_SIZE], *pk = r->sp[HS_STREAM_STACK];
		uint64_t size, stack;

		if (!fast_site(r, r->pairs, &ps, &pk, &size, &stack, &bad))
			return 0;
		t = fast_time(r, &pt, &run, &bad, 0);
		if (bad || ps > r->se[HS_STREAM_SIZE] || pk > r->se[HS_STREAM_STACK] || stack >= r->stack_lim)
			return 0;
		r->sp[HS_STREAM_SIZE] = ps;
		r->sp[HS_STREAM_STACK] = pk;
		ev->kind = HS_EVENT_ALLOC;
		ev->size = size;
		ev->stack = (uint32_t)stack;
	} else if (family == FAST_FREE_RECENT || family == FAST_FREE_RECENT_AT || family == FAST_FREE) {
		t = fast_time(r, &pt, &run, &bad, 0);
		if (bad)
			return 0;
		ev->kind = HS_EVENT_FREE;
		ev->size = 0;
		ev->stack = 0;
	} else {
		return 0;
	}
	ev->fn = fn;
	ev->ptr = 0;
	ev->old_ptr = 0;
	fast_done(r, ev, pt, run, t);
	return 1;
}

static int next_one(struct hs_reader *r, struct hs_event *ev)
{
	if (r->failed)
		return r->failed;
	for (;;) {
		int rc;
		if (r->sp[HS_STREAM_TYPE] == r->se[HS_STREAM_TYPE]) {
			rc = load_chunk(r);
			if (rc <= 0)
				return rc;
			continue;
		}
		if ((rc = r->no_addresses ? fast_bare(r, ev) : fast_one(r, ev, 0)) != 0)
			return rc;
		rc = decode_one(r, ev);
		if (rc)
			return rc;
	}
}

/* A thread switch (interleaved threads write one before each run of events): 1 when taken in stride, else 0. */
__attribute__((always_inline)) static inline int fast_thread(struct hs_reader *r)
{
	const uint8_t *pm = r->sp[HS_STREAM_MISC];
	struct hs_predict *pr;
	int bad = 0;
	uint64_t v;

	if (*r->sp[HS_STREAM_TYPE] != HS_REC_THREAD)
		return 0;
	v = fast_varint(&pm, &bad);
	if (bad || pm > r->se[HS_STREAM_MISC] || v > UINT32_MAX)
		return 0;
	r->sp[HS_STREAM_TYPE]++;
	r->sp[HS_STREAM_MISC] = pm;
	r->tid = (uint32_t)v;
	/*
	 * The thread's slot now, from v, if the thread holds it: read back
	 * lazily, r->tid just stored came back in one load with the chunk
	 * number, which the store cannot forward (a fifth of the decoding time
	 * of a four-thread trace). A slot another thread holds is taken over
	 * only by this thread's first allocation or free, as the writer does,
	 * not here: a thread that only maps memory must leave the slot to the
	 * thread it shares it with.
	 */
	pr = &r->predict[v & (HS_PREDICT_SLOTS - 1)];
	r->pred = pr->tid == v && pr->chunk == r->chunk_no ? pr : NULL;
	return 1;
}

/*
 * The usual records straight from the streams, without the per-call work
 * of hs_reader_next: up to n - *got of them, until one the fast path does
 * not take. modern: a file of 7.0 on, read with its addresses, whose
 * records then need not ask for the file's version (older files take
 * the other copy: sqlite3's report 5% more instructions on its events as
 * 6.0 than as 7.0, 4.5% more than 6.0's reader took). A third copy, for
 * modern files without addresses, took 6.6% of the instructions off
 * sqlite3's flame graph but made it 18% slower on this AMD host: 106 ->
 * 125 ms. Code layout, not work, decides that command's time: the
 * analysis's load of an event's thread id waited for a quarter of its
 * scan's time in one build and an eighth in another, with the scan's
 * machine code the same and every field of the event stored on its own.
 * <0: the reader failed.
 */
__attribute__((always_inline)) static inline int fast_run(struct hs_reader *r, struct hs_event *ev, int n, int *got,
							   const int modern)
{
	int rc;

	while (*got < n && r->sp[HS_STREAM_TYPE] < r->se[HS_STREAM_TYPE]) {
		/*
		 * A thread switch: for modern files asked only when the record
		 * is not an event (3 instructions an event fewer: sqlite3's
		 * report -0.7%, four churning threads' -1.2%); the copy without
		 * addresses (the flame graph's) asks first, which kept it 4%
		 * faster in wall time than asking after
		 */
		if (!modern && *r->sp[HS_STREAM_TYPE] == HS_REC_THREAD) {
			if (!fast_thread(r))
				break;
			continue;
		}
		rc = modern ? fast_one(r, &ev[*got], 1) : r->no_addresses ? fast_bare(r, &ev[*got]) : fast_one(r, &ev[*got], 0);
		if (rc > 0)
			(*got)++;
		else if (rc < 0)
			return rc;
		else if (*r->sp[HS_STREAM_TYPE] != HS_REC_THREAD || !fast_thread(r))
			break;
	}
	return 0;
}

static int next_batch(struct hs_reader *r, struct hs_event *ev, int n)
{
	int got = 0, rc, modern = r->pairs && r->runs && r->freed && !r->no_addresses;

	if (r->failed)
		return r->failed;
	while (got < n) {
		rc = modern ? fast_run(r, ev, n, &got, 1) : fast_run(r, ev, n, &got, 0);
		if (rc < 0)
			return got ? got : rc;
		if (got == n)
			break;
		rc = next_one(r, &ev[got]);
		if (rc <= 0)
			return got ? got : rc;
		/* a label or totals point into buffers the next record may reuse: the batch ends with them */
		if (ev[got++].kind == HS_EVENT_MARKER || ev[got - 1].kind == HS_EVENT_TOTALS)
			break;
	}
	return got;
}

/*
 * Whether a second core decoding ahead pays depends on the machine more
 * than on the trace: on one host (Intel) it took a tenth to a third off a
 * pass; on another (AMD EPYC, its two cores far apart) the events' way
 * between the cores' caches made each side slower than both on one core,
 * and report on 10M churned pairs took 0.54-0.87 s against 0.25 s. So the
 * pass times itself: after a warm-up, a stretch decoded here, then the
 * same length decoded by the thread; the thread stays only if it was
 * faster by a tenth. A trace too short to time stays on one core, where
 * starting a thread would not pay anyway.
 */
#define PROBE_WARMUP (1 << 18)
#define PROBE_EVENTS (1 << 20)
/*
 * The thread's stretch is looked at every PROBE_SEGMENT events, the first
 * segment aside (it pays for the thread's start and its blocks' first
 * touch): a segment half again slower than one core ends the stretch there.
 * On the AMD host above the thread took 30 ns an event against 12 on one
 * core, and the whole stretch cost a report of 10M pairs a fifth.
 */
#define PROBE_SEGMENT (1 << 17)
#define PROBE_FAR_SLOWER 1.5
/*
 * PROBE_START: the thread starts at the next call, not at the end of the
 * one that ended the stretch: the events that call returned may point into
 * the chunk buffer, which the thread takes over.
 */
enum { PROBE_OFF, PROBE_WARM, PROBE_ONE, PROBE_START, PROBE_TWO };

/* The probe ends with the thread retired: the next passes on this machine skip it (ahead.c). */
static void probe_retire(struct hs_reader *r, double two_ns)
{
	r->probe = PROBE_OFF;
	hs_ahead_retire(r);
	if (!r->probe_test)
		hs_ahead_remember_one_core(r->probe_one_ns, two_ns);
}

/* The thread's stretch so far: whether its last segment was far slower than one core. */
static int probe_far_slower(struct hs_reader *r)
{
	long done = r->probe_len - r->probe_left;
	uint64_t now;
	double seg;

	if (done - r->probe_mark < PROBE_SEGMENT)
		return 0;
	now = hs_mono_ns();
	seg = (double)(now - r->probe_mark_t) / (double)(done - r->probe_mark);
	if (r->probe_mark > 0 && seg > PROBE_FAR_SLOWER * r->probe_one_ns) {
		probe_retire(r, seg);
		return 1;
	}
	r->probe_mark = done;
	r->probe_mark_t = now;
	return 0;
}

/* k events went to the consumer: the probe's next step once its stretch is done. */
__attribute__((noinline)) static void probe_step(struct hs_reader *r, int k)
{
	double per_event;

	if (k <= 0 || r->probe == PROBE_START)
		return;
	r->probe_left -= k;
	if (r->probe == PROBE_TWO && !r->probe_test && probe_far_slower(r))
		return;
	if (r->probe_left > 0)
		return;
	if (r->probe == PROBE_WARM) {
		r->probe = PROBE_ONE;
		r->probe_left = r->probe_len;
		r->probe_t0 = hs_mono_ns();
		return;
	}
	per_event = (double)(hs_mono_ns() - r->probe_t0) / (double)(r->probe_len - r->probe_left);
	if (r->probe == PROBE_ONE) {
		r->probe_one_ns = per_event;
		r->probe = PROBE_START;
	} else if (per_event > 0.9 * r->probe_one_ns || r->probe_test) {
		probe_retire(r, per_event);
	} else {
		r->probe = PROBE_OFF;
	}
}

static inline int counted(struct hs_reader *r, int k)
{
	if (__builtin_expect(r->probe != PROBE_OFF, 0))
		probe_step(r, k);
	return k;
}

/* At the first events asked for, and when the probe starts the thread. */
__attribute__((noinline)) static void ahead_choose(struct hs_reader *r)
{
	const char *test;

	if (r->probe == PROBE_START) {
		if (r->failed || hs_ahead_start(r) < 0) {
			r->probe = PROBE_OFF;
			return;
		}
		r->probe = PROBE_TWO;
		r->probe_left = r->probe_len;
		r->probe_t0 = r->probe_mark_t = hs_mono_ns();
		r->probe_mark = 0;
		return;
	}
	r->ahead_tried = 1;
	if (r->skim || r->failed)
		return;
	switch (hs_ahead_mode()) {
	case HS_AHEAD_NEVER:
		break;
	case HS_AHEAD_ALWAYS:
		hs_ahead_start(r);
		break;
	case HS_AHEAD_IF_FASTER:
		test = getenv("HEAPSCOPE_TEST_READER_PROBE");
		r->probe_test = test && atol(test) > 0;
		if (!r->probe_test && hs_ahead_one_core_known())
			break;
		r->probe = PROBE_WARM;
		r->probe_len = r->probe_test ? atol(test) : PROBE_EVENTS;
		r->probe_left = r->probe_test ? r->probe_len : PROBE_WARMUP;
		r->probe_t0 = hs_mono_ns();
		break;
	}
}

static inline int ahead(struct hs_reader *r)
{
	if (__builtin_expect(!r->ahead_tried || r->probe == PROBE_START, 0))
		ahead_choose(r);
	return r->ahead != NULL;
}

int hs_reader_next(struct hs_reader *r, struct hs_event *ev)
{
	return counted(r, ahead(r) ? hs_ahead_take(r, ev, 1) : next_one(r, ev));
}

int hs_reader_next_batch(struct hs_reader *r, struct hs_event *ev, int n)
{
	if (n <= 0)
		return r->failed;
	return counted(r, ahead(r) ? hs_ahead_take(r, ev, n) : next_batch(r, ev, n));
}

int hs_reader_next_block(struct hs_reader *r, const struct hs_event **ev)
{
	int rc;

	if (ahead(r))
		return counted(r, hs_ahead_block(r, ev));
	if (!r->own && !(r->own = malloc(OWN_EVENTS * sizeof(*r->own))))
		return hs_reader_no_memory(r, "a batch of events");
	rc = next_batch(r, r->own, OWN_EVENTS);
	*ev = r->own;
	return counted(r, rc);
}

int hs_reader_skip_addresses(struct hs_reader *r)
{
	if (r->ahead_tried)
		return -EBUSY;
	r->no_addresses = 1;
	return 0;
}

int hs_reader_end_hint(const char *path, uint64_t *end_ns)
{
	struct hs_end_info info;
	int rc = hs_reader_end_info(path, &info);

	*end_ns = info.end_ns;
	return rc;
}

int hs_reader_end_info(const char *path, struct hs_end_info *info)
{
	struct hs_reader *r = NULL;
	struct hs_event ev[256];
	uint64_t pos, last = 0, end = 0;
	uint8_t h[HS_CHUNK_HEADER_SIZE];
	int rc, n;

	info->end_ns = 0;
	info->untraced_children = 0;
	info->end = -1;
	if ((rc = hs_reader_open(&r, path)) < 0)
		goto out;
	/* hop over the chunk headers to the last complete chunk */
	for (pos = r->next_chunk;; pos += HS_CHUNK_HEADER_SIZE + hs_get_u32(h + 8)) {
		if (fseeko(r->f, (off_t)pos, SEEK_SET) != 0 || fread(h, 1, sizeof(h), r->f) != sizeof(h) ||
		    hs_get_u32(h) != HS_CHUNK_MAGIC || hs_crc32c(0, h, 20) != hs_get_u32(h + 20) ||
		    pos + HS_CHUNK_HEADER_SIZE + hs_get_u32(h + 8) > r->file_size)
			break;
		last = pos;
	}
	/* the first chunk, already loaded, is the last when no other follows; else the rest of it is skipped */
	if (last) {
		r->next_chunk = last;
		r->sp[HS_STREAM_TYPE] = r->se[HS_STREAM_TYPE];
	}
	r->skim = 1;
	r->stack_lim = (uint64_t)UINT32_MAX + 1;
	while ((n = next_batch(r, ev, 256)) > 0)
		for (int i = 0; i < n; i++) {
			if (ev[i].time_ns > end)
				end = ev[i].time_ns;
			if (ev[i].kind == HS_EVENT_CHILDREN)
				info->untraced_children = ev[i].len;
			if (ev[i].kind == HS_EVENT_END)
				info->end = (int)ev[i].flags;
		}
	rc = n < 0 ? n : 0;
	info->end_ns = end;
out:
	hs_reader_close(r);
	return rc;
}

int hs_reader_open(struct hs_reader **out, const char *path)
{
	struct hs_reader *r = calloc(1, sizeof(*r));
	struct stat st;
	int rc, fd;

	*out = r;
	if (!r)
		return -ENOMEM;
	r->stack_lim = 1;
	r->path = hs_strndup(path, strlen(path));
	if (!r->path)
		return fail(r, -ENOMEM, "out of memory opening '%s'", path);
	fd = hs_open_regular(path, &st);
	if (fd == -EISDIR)
		return fail(r, fd, "'%s' is a directory; give a trace file", path);
	if (fd == -ENODEV)
		return fail(r, fd, "'%s' is not a regular file (a pipe or a device); save the trace to a file "
			    "and give its path", path);
	if (fd < 0)
		return fail(r, fd, "cannot open '%s': %s", path, strerror(-fd));
	r->f = fdopen(fd, "rb");
	if (!r->f) {
		rc = -errno;
		close(fd);
		return fail(r, rc, "cannot open '%s': %s", path, strerror(-rc));
	}
	r->file_size = (uint64_t)st.st_size;
	r->info.being_written = hs_file_being_written(fd);
	rc = read_header(r);
	if (rc < 0)
		return rc;
	r->info.exe = hs_strndup("", 0);
	r->info.argv = calloc(1, sizeof(char *));
	if (!r->info.exe || !r->info.argv)
		return fail(r, -ENOMEM, "out of memory opening '%s'", path);
	/* the tracer writes the process record first: read it now so info is complete after open */
	rc = load_chunk(r);
	if (rc < 0)
		return rc;
	if (rc > 0 && r->sp[HS_STREAM_TYPE] < r->se[HS_STREAM_TYPE] && *r->sp[HS_STREAM_TYPE] == HS_REC_PROCESS) {
		r->sp[HS_STREAM_TYPE]++;
		if ((rc = add_process(r)) == -ENOMEM)
			return hs_reader_no_memory(r, "the command line");
		if (rc < 0)
			return bad_record(r, HS_REC_PROCESS);
	}
	return 0;
}

void hs_reader_close(struct hs_reader *r)
{
	if (!r)
		return;
	hs_ahead_stop(r);
	free(r->own);
	hs_symbols_free(r);
	if (r->f)
		fclose(r->f);
	for (size_t i = 0; i < r->nmods; i++)
		hs_reader_free_module(r->mods[i]);
	free(r->mods);
	for (int i = 0; i < r->info.argc; i++)
		free(r->info.argv[i]);
	free(r->info.argv);
	free((char *)r->info.exe);
	free(r->stack_parent);
	free(r->stack_ip);
	free(r->pair);
	free(r->zbuf);
	free(r->rbuf);
	ZSTD_freeDCtx(r->dctx);
	free(r->path);
	free(r->binary_dirs);
	free(r);
}

/* p(s) = 1 - exp(-s / R), with a request of 0 bytes counted as 1 (the tracer counts it down so) */
double hs_sample_weight(uint64_t sample_bytes, uint64_t size)
{
	double p;

	if (!sample_bytes)
		return 1.0;
	p = -expm1(-(double)(size ? size : 1) / (double)sample_bytes);
	return p > 0 ? 1.0 / p : 1.0;
}

const struct hs_trace_info *hs_reader_info(struct hs_reader *r)
{
	return &r->info;
}

const char *hs_reader_error(struct hs_reader *r)
{
	if (!r)
		return "out of memory: free some memory and try again";
	return r->failed ? r->err : r->warn;
}

const char *hs_reader_warning(struct hs_reader *r)
{
	return r ? r->warn : "";
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
