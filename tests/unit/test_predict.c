/* test_predict.c - address prediction: 3.0's freed list, realloc's old address, 6.0's top, a long random roundtrip */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "tmpdir.h"
#include "heapscope/reader.h"
#include "readback.h"
#include "tracebuild.h"

/* The predictor on its own: what an allocation of a class is expected at after frees. */
static void freed_list(void)
{
	static struct hs_predict slots[HS_PREDICT_SLOTS];
	struct hs_predict *p = hs_predict_for(slots, 7, 1);
	unsigned c3 = hs_size_class(40), c5 = hs_size_class(72);
	uint64_t got[4];

	/* a, b, c of one class, d of another; then b, d, a are freed (the latest first in the recent list) */
	hs_recent_push(p, 0xa000, c3);
	hs_recent_push(p, 0xb000, c3);
	hs_recent_push(p, 0xc000, c3);
	p->cls[c3] = 0xc000;
	hs_recent_push(p, 0xd000, c5);
	p->cls[c5] = 0xd000;
	p->last = 0xd000;
	CHECK_U64("predict-recent-take-b", 0xb000, hs_recent_take(p, (uint32_t)hs_recent_find(p, 0xb000), 1));
	CHECK_U64("predict-recent-take-d", 0xd000, hs_recent_take(p, (uint32_t)hs_recent_find(p, 0xd000), 1));
	CHECK_U64("predict-recent-take-a", 0xa000, hs_recent_take(p, (uint32_t)hs_recent_find(p, 0xa000), 1));
	/* class c3 comes back last freed first (a, then b), then from the class's last block; c5 gets d */
	got[0] = hs_predict_alloc(p, c3, 1);
	got[1] = hs_predict_alloc(p, c5, 1);
	got[2] = hs_predict_alloc(p, c3, 1);
	got[3] = hs_predict_alloc(p, c3, 1);
	CHECK_U64("predict-freed-latest-of-class", 0xa000, got[0]);
	CHECK_U64("predict-freed-other-class", 0xd000, got[1]);
	CHECK_U64("predict-freed-next-of-class", 0xb000, got[2]);
	CHECK_U64("predict-freed-empty-falls-back", 0xc000, got[3]);

	/* 2.x files: the class's last block, whatever was freed */
	p = hs_predict_for(slots, 8, 1);
	hs_recent_push(p, 0xe000, c3);
	hs_recent_push(p, 0xf000, c3);
	p->cls[c3] = 0xf000;
	hs_recent_take(p, 1, 0);
	CHECK_U64("predict-2x-take-leaves-freed-list", 0, p->nfreed);
	hs_recent_push(p, 0xe000, c3);
	hs_recent_take(p, 0, 1);
	CHECK_U64("predict-2x-ignores-freed-list", 0xf000, hs_predict_alloc(p, c3, 0));
	CHECK_U64("predict-3x-takes-freed-list", 0xe000, hs_predict_alloc(p, c3, 1));

	/* only the latest HS_FREED frees count: the first ones were written over */
	p = hs_predict_for(slots, 9, 1);
	for (uint64_t i = 0; i < HS_FREED + 10; i++) {
		hs_recent_push(p, 0x100000 + i * 0x100, i < 10 ? c5 : c3);
		hs_recent_take(p, 0, 1);
	}
	p->cls[c5] = 0x5;
	p->last = 0x6;
	CHECK_U64("predict-freed-written-over", 0x5, hs_predict_alloc(p, c5, 1));
	CHECK_U64("predict-freed-ring-latest", 0x100000 + (HS_FREED + 9) * 0x100, hs_predict_alloc(p, c3, 1));

	/* large blocks do not enter the list (but count among the latest 128) */
	p = hs_predict_for(slots, 10, 1);
	hs_recent_push(p, 0x700000, hs_size_class(8000));
	p->cls[hs_size_class(8000)] = 0x900000;
	hs_recent_take(p, 0, 1);
	CHECK_U64("predict-freed-large-not-listed", 0x900000, hs_predict_alloc(p, hs_size_class(8000), 1));
	CHECK_U64("predict-freed-large-counted", 1, p->nfreed);

	/* a new chunk (or another thread in the slot) starts from nothing */
	p = hs_predict_for(slots, 9, 2);
	CHECK_U64("predict-new-chunk-empty", 0, hs_predict_alloc(p, c3, 1));
}

/*
 * Threads 17 and 1 share prediction slot 1; thread 1 only maps memory.
 * Its switch must leave the slot to thread 17, as the writer does (the
 * batch decoder once took it over at the switch, and 17's free of a recent
 * block then read as corruption). Read back one event at a time and in
 * batches, with and without a second decoding thread.
 */
static void mapping_thread_shares_slot(const char *dir)
{
	static const struct { enum hs_event_kind kind; uint32_t tid; uint64_t ptr; } want[] = {
		{ HS_EVENT_ALLOC, 17, 0x10000010 }, { HS_EVENT_ALLOC, 17, 0x10000040 }, { HS_EVENT_MMAP, 1, 0 },
		{ HS_EVENT_FREE, 17, 0x10000040 }, { HS_EVENT_ALLOC, 17, 0x10000040 }, { HS_EVENT_FREE, 17, 0x10000010 },
		{ HS_EVENT_ALLOC, 17, 0x10000060 },
	};
	static const char *const how[] = { "next", "batch", "batch-one-thread" };
	char path[512];
	struct tb t;
	uint64_t ts = 1000;

	if (tb_init(&t, 0, 0, 1, 1) < 0) {
		check_report(0, "predict-mapping-thread-build", "%s", "out of memory");
		return;
	}
	tb_stack(&t, 1, 0, 0x401000);
	tb_alloc(&t, ts += 10, 17, HS_FN_MALLOC, 0x10000010, 40, 1, 0);
	tb_alloc(&t, ts += 10, 17, HS_FN_MALLOC, 0x10000040, 40, 1, 0);
	tb_mmap(&t, ts += 10, 1, 0x7f0000000000, 4096, 3, 0x22, 1);
	tb_free_rec(&t, ts += 10, 17, HS_FN_FREE, 0x10000040);
	tb_alloc(&t, ts += 10, 17, HS_FN_MALLOC, 0x10000040, 40, 1, 0);
	tb_free_rec(&t, ts += 10, 17, HS_FN_FREE, 0x10000010);
	tb_alloc(&t, ts += 10, 17, HS_FN_MALLOC, 0x10000060, 40, 1, 0);
	tb_flush(&t);
	snprintf(path, sizeof(path), "%s/mapping.hst", dir);
	if (!check_report(tb_write(&t.file, path) == 0, "predict-mapping-thread-write", "expected the file written got %s",
			  strerror(errno))) {
		tb_free(&t);
		return;
	}
	for (int k = 0; k < 3; k++) {
		struct hs_reader *r = NULL;
		struct hs_event ev[16];
		size_t got = 0, ok = 1;
		int rc;
		char name[64];

		if (k == 2)
			setenv("HEAPSCOPE_READER_THREADS", "0", 1);
		snprintf(name, sizeof(name), "predict-mapping-thread-%s", how[k]);
		if ((rc = hs_reader_open(&r, path)) == 0) {
			if (k == 0) {
				while (got < 16 && (rc = hs_reader_next(r, &ev[got])) > 0)
					got++;
			} else {
				while (got < 16 && (rc = hs_reader_next_batch(r, ev + got, (int)(16 - got))) > 0)
					got += (size_t)rc;
			}
		}
		for (size_t i = 0, j = 0; i < got; i++) {
			if (ev[i].kind != HS_EVENT_ALLOC && ev[i].kind != HS_EVENT_FREE && ev[i].kind != HS_EVENT_MMAP)
				continue;
			if (j >= sizeof(want) / sizeof(want[0]) || ev[i].kind != want[j].kind || ev[i].tid != want[j].tid ||
			    (want[j].ptr && ev[i].ptr != want[j].ptr))
				ok = 0;
			j++;
			if (i + 1 == got && j != sizeof(want) / sizeof(want[0]))
				ok = 0;
		}
		check_report(rc == 0 && got > 0 && ok, name, "expected the 7 events back got %zu (rc %d%s%s)", got, rc,
			     rc < 0 ? ": " : "", rc < 0 && r ? hs_reader_error(r) : "");
		hs_reader_close(r);
	}
	unsetenv("HEAPSCOPE_READER_THREADS");
	unlink(path);
	tb_free(&t);
}

static void realloc_codes(void)
{
	static const struct {
		uint64_t old, ptr, last, code;
	} c[] = {
		{ 0x5000, 0x5000, 0x9000, 0 },                 /* grew in place */
		{ 0x9000, 0x5000, 0x9000, 1 },                 /* moved: the FREE by realloc just named it */
		{ 0x5010, 0x5000, 0x9000, 2 + 0x20 },          /* elsewhere above */
		{ 0x4ff0, 0x5000, 0x9000, 2 + 0x1f },          /* elsewhere below */
		{ 0x7fffffffe000, 0x1000, 0, 2 + (0x7fffffffd000ull << 1) },
	};
	int bad = 0;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint64_t code = hs_realloc_old_code(c[i].old, c[i].ptr, c[i].last);
		if (code != c[i].code || hs_realloc_old(code, c[i].ptr, c[i].last) != c[i].old) {
			check_report(0, "predict-realloc-codes", "case %zu: expected code %llu got %llu, back to %#llx", i,
				     (unsigned long long)c[i].code, (unsigned long long)code,
				     (unsigned long long)hs_realloc_old(code, c[i].ptr, c[i].last));
			bad = 1;
		}
	}
	if (!bad)
		check_report(1, "predict-realloc-codes", "%s", "");
}

/*
 * A long trace through the real builder and reader: five threads (two of
 * them sharing a prediction slot) and a sixth that only maps memory (in the
 * same slot), an allocator that reuses freed blocks
 * last-in first-out per size class like glibc's, random frees of young and
 * old blocks (some by other threads), reallocs that stay, move or name an
 * unrelated old block, and chunk boundaries. Every event must come back as
 * it went in, read one at a time and in batches (by a second decoding
 * thread where there is a second core), and by the caller's thread alone.
 */
enum { NEV = 400000, LIVE = 4096, NTHR = 6, MAPPER = 5 };

static uint64_t rng = 0x9e3779b97f4a7c15ull;

/*
 * The recent list against a plain array (the latest first, the oldest
 * dropped past HS_RECENT): a take closes the list from either side of
 * its place, whichever is shorter, and must leave the same list as
 * moving every later entry up; find must give the first place of an
 * address, and none for one only the ring's unused part still holds.
 */
static void recent_list(void)
{
	static struct hs_predict slots[HS_PREDICT_SLOTS];
	struct hs_predict *p = hs_predict_for(slots, 3, 1);
	uint64_t ref[HS_RECENT], next = 0x1000, seed = 12345;
	unsigned n = 0, bad = 0, takes = 0, far = 0, finds = 0, stale = 0;

	for (int step = 0; step < 200000 && !bad; step++) {
		if (n == 0 || check_rand(&seed) % 3 != 0) {
			unsigned k = n < HS_RECENT ? n : HS_RECENT - 1;
			for (; k > 0; k--)
				ref[k] = ref[k - 1];
			/* now and then an address already listed (a free that was not recorded): find takes the latest */
			uint64_t v = n && check_rand(&seed) % 8 == 0 ? ref[check_rand(&seed) % n] : (next += 0x10);
			ref[0] = v;
			n += n < HS_RECENT;
			hs_recent_push(p, v, hs_size_class(v & 0xff0));
		} else {
			unsigned i = (unsigned)(check_rand(&seed) % n);
			uint64_t v = ref[i];
			for (unsigned k = i; k + 1 < n; k++)
				ref[k] = ref[k + 1];
			n--;
			bad += hs_recent_take(p, i, 1) != v;
			takes++;
			far += 2 * i >= n + 1;
		}
		bad += p->nrecent != n;
		/* find: a listed address's first place, and an address not listed (maybe stale in the ring) */
		if (n) {
			unsigned j = (unsigned)(check_rand(&seed) % n), first = 0;
			while (ref[first] != ref[j])
				first++;
			bad += hs_recent_find(p, ref[j]) != (int)first;
			finds++;
		}
		bad += hs_recent_find(p, next + 0x10) != -1;
		for (unsigned k = 0; k < HS_RECENT; k++) {
			unsigned in = 0;
			for (unsigned i = 0; i < n; i++)
				in |= ref[i] == p->recent[k];
			if (!in) {
				stale += hs_recent_find(p, p->recent[k]) == -1;
				break;
			}
		}
		for (unsigned k = 0; k < n && k < p->nrecent; k++)
			bad += p->recent[(p->rhead + k) & (HS_RECENT - 1)] != ref[k] ||
			       p->recent_cls[(p->rhead + k) & (HS_RECENT - 1)] != hs_size_class(ref[k] & 0xff0);
	}
	check_report(bad == 0 && far > takes / 4 && stale > takes / 4, "predict-recent-take-either-side",
		     "expected the list and the places of a plain array after %u takes (%u from the older side) and %u finds "
		     "(%u of a stale entry) got %u differences",
		     takes, far, finds, stale, bad);
}

struct sim {
	uint64_t bump;
	uint64_t stack_of[HS_SIZE_CLASSES][8];  /* per class, freed blocks to hand back, a stack */
	int n[HS_SIZE_CLASSES];
};

static struct hs_event *sent;
static int nsent;

static void put(struct tb *t, const struct hs_event *ev)
{
	sent[nsent++] = *ev;
	tb_event(t, (struct hs_event *)ev);
}

static uint64_t sim_alloc(struct sim *s, uint64_t size)
{
	unsigned c = hs_size_class(size);

	if (s->n[c] && check_rand(&rng) % 16)
		return s->stack_of[c][--s->n[c]];
	s->bump += (size + 8 + 15) & ~15ull;
	return s->bump;
}

static void sim_free(struct sim *s, uint64_t ptr, uint64_t size)
{
	unsigned c = hs_size_class(size);

	if (s->n[c] < 8)
		s->stack_of[c][s->n[c]++] = ptr;
}

static void random_roundtrip(const char *dir)
{
	static struct sim sims[NTHR];
	static const uint32_t tids[NTHR] = { 100, 101, 102, 116, 7000, 132 }; /* 100, 116 and 132 share slot 4 */
	static uint64_t live_ptr[NTHR][LIVE], live_size[NTHR][LIVE];
	static int nlive[NTHR];
	char path[512];
	struct tb t;
	struct hs_reader *r = NULL;
	struct hs_event ev;
	int rc, i = 0, bad = 0, first = -1, since = 0;
	uint64_t ts = 1000;

	sent = calloc(NEV + 16, sizeof(*sent));
	if (!sent || tb_init(&t, 0, 0, 1, 1) < 0) {
		check_report(0, "predict-roundtrip-build", "%s", "out of memory");
		free(sent);
		return;
	}
	for (int k = 0; k < NTHR; k++)
		sims[k].bump = 0x550000000000ull + (uint64_t)k * 0x10000000ull;
	/* the 50 backtraces the events name, written before them as the tracer does */
	for (uint32_t id = 1; id <= 50; id++)
		tb_stack(&t, id, id / 2, 0x401000 + 16 * (uint64_t)id);
	while (nsent < NEV) {
		int k = (int)(check_rand(&rng) % NTHR), op = (int)(check_rand(&rng) % 100);
		struct sim *s = &sims[k];
		struct hs_event e = { .time_ns = ts += check_rand(&rng) % 3, .tid = tids[k] };

		/* now and then an event that came late: stamped before the one written before it */
		if (check_rand(&rng) % 64 == 0 && ts > 2000)
			e.time_ns = ts - 1 - check_rand(&rng) % 50;

		if (k == MAPPER) {
			static const struct { int kind, fn; } m[5] = {
				{ HS_EVENT_MMAP, HS_FN_MMAP }, { HS_EVENT_MUNMAP, HS_FN_MUNMAP },
				{ HS_EVENT_MREMAP, HS_FN_MREMAP }, { HS_EVENT_BRK, HS_FN_BRK }, { HS_EVENT_BRK, HS_FN_SBRK },
			};
			e.kind = (enum hs_event_kind)m[op % 5].kind;
			e.fn = m[op % 5].fn;
			e.addr = 0x7f0000000000ull + (uint64_t)op * 4096;
			e.len = e.kind == HS_EVENT_BRK ? 0 : 4096 * (1 + check_rand(&rng) % 4);
			if (e.kind == HS_EVENT_MREMAP || e.kind == HS_EVENT_BRK)
				e.new_addr = e.addr + check_rand(&rng) % 3 * 0x10000;
			if (e.kind == HS_EVENT_MREMAP)
				e.new_len = e.len * 2;
			e.stack = e.kind == HS_EVENT_MUNMAP ? 0 : (uint32_t)(1 + check_rand(&rng) % 50);
			put(&t, &e);
		} else if (op < 45 && nlive[k] < LIVE) {
			uint64_t size = check_rand(&rng) % 5 ? 8 + check_rand(&rng) % 200 : check_rand(&rng) % 70000;
			e.kind = HS_EVENT_ALLOC;
			e.fn = check_rand(&rng) % 10 ? HS_FN_MALLOC : HS_FN_CALLOC;
			e.size = size;
			e.ptr = sim_alloc(s, size);
			e.stack = (uint32_t)(1 + check_rand(&rng) % 50);
			put(&t, &e);
			live_ptr[k][nlive[k]] = e.ptr;
			live_size[k][nlive[k]++] = size;
		} else if (op < 90 && nlive[k]) {
			/* mostly one of the thread's latest blocks, sometimes an old one */
			int young = nlive[k] < 6 ? nlive[k] : 6;
			int j = check_rand(&rng) % 4 ? nlive[k] - 1 - (int)(check_rand(&rng) % (uint64_t)young)
						    : (int)(check_rand(&rng) % (uint64_t)nlive[k]);
			e.kind = HS_EVENT_FREE;
			e.fn = HS_FN_FREE;
			e.ptr = live_ptr[k][j];
			put(&t, &e);
			sim_free(s, live_ptr[k][j], live_size[k][j]);
			live_ptr[k][j] = live_ptr[k][--nlive[k]];
			live_size[k][j] = live_size[k][nlive[k]];
		} else if (op < 97 && nlive[k]) {
			int j = (int)(check_rand(&rng) % nlive[k]), how = (int)(check_rand(&rng) % 3);
			uint64_t size = live_size[k][j] + check_rand(&rng) % 300, old = live_ptr[k][j];
			e.kind = HS_EVENT_ALLOC;
			e.fn = check_rand(&rng) % 8 ? HS_FN_REALLOC : HS_FN_REALLOCARRAY;
			e.size = size;
			e.stack = (uint32_t)(1 + check_rand(&rng) % 50);
			if (how == 0) {         /* in place */
				e.ptr = old;
			} else {                /* moved; how 2: its FREE is not recorded (another old address) */
				struct hs_event f = { .kind = HS_EVENT_FREE, .fn = e.fn, .time_ns = ts, .tid = e.tid, .ptr = old };
				if (how == 1)
					put(&t, &f);
				sim_free(s, old, live_size[k][j]);
				e.ptr = sim_alloc(s, size);
			}
			e.old_ptr = old;
			put(&t, &e);
			live_ptr[k][j] = e.ptr;
			live_size[k][j] = size;
		} else if (nlive[k]) {
			/* another thread frees one of k's blocks */
			int j = (int)(check_rand(&rng) % nlive[k]);
			e.kind = HS_EVENT_FREE;
			e.fn = HS_FN_FREE;
			e.tid = tids[(k + 1) % MAPPER];
			e.ptr = live_ptr[k][j];
			put(&t, &e);
			live_ptr[k][j] = live_ptr[k][--nlive[k]];
			live_size[k][j] = live_size[k][nlive[k]];
		}
		if (!hs_builder_fits(t.b, 64) || ++since == 60000) {
			tb_flush(&t);
			since = 0;
		}
	}
	tb_flush(&t);
	snprintf(path, sizeof(path), "%s/predict.hst", dir);
	if (!check_report(tb_write(&t.file, path) == 0, "predict-roundtrip-write", "expected the file written got %s",
			  strerror(errno)))
		goto out;
	for (int pass = 0; pass < 2; pass++) {
	const char *name = pass ? "predict-roundtrip-events-one-thread" : "predict-roundtrip-events";
	if (pass)
		setenv("HEAPSCOPE_READER_THREADS", "0", 1);
	i = bad = 0;
	first = -1;
	hs_reader_close(r);
	r = NULL;
	rc = hs_reader_open(&r, path);
	if (!check_report(rc == 0, "predict-roundtrip-open", "expected 0 got %d (%s)", rc, r ? hs_reader_error(r) : ""))
		goto out;
	CHECK_U64("predict-roundtrip-version", HS_VERSION_MAJOR, hs_reader_info(r)->version_major);
	while ((rc = hs_reader_next(r, &ev)) > 0) {
		const struct hs_event *x;
		int mapping = ev.kind == HS_EVENT_MMAP || ev.kind == HS_EVENT_MUNMAP || ev.kind == HS_EVENT_MREMAP ||
			      ev.kind == HS_EVENT_BRK;
		if (ev.kind != HS_EVENT_ALLOC && ev.kind != HS_EVENT_FREE && !mapping)
			continue;
		if (i >= nsent) {
			bad++;
			continue;
		}
		x = &sent[i];
		if (ev.kind != x->kind || ev.fn != x->fn || ev.tid != x->tid || ev.time_ns != x->time_ns ||
		    (mapping ? ev.addr != x->addr || ev.len != x->len || ev.new_addr != x->new_addr ||
				       ev.new_len != x->new_len || (ev.kind != HS_EVENT_MUNMAP && ev.stack != x->stack)
			     : ev.ptr != x->ptr) ||
		    (ev.kind == HS_EVENT_ALLOC && (ev.size != x->size || ev.stack != x->stack || ev.old_ptr != x->old_ptr))) {
			if (first < 0)
				first = i;
			bad++;
		}
		i++;
	}
	check_report(rc == 0 && i == nsent && bad == 0, name,
		     "expected %d events back as sent got %d (rc %d, %d differ, the first at %d%s%s)", nsent, i, rc, bad,
		     first, rc < 0 ? ": " : "", rc < 0 ? hs_reader_error(r) : "");
	}
out:
	unsetenv("HEAPSCOPE_READER_THREADS");
	hs_reader_close(r);
	unlink(path);
	tb_free(&t);
	free(sent);
}

/* 6.0's top: a block carved from free space ends its size plus an 8-byte header later, in 16-byte steps, at least 32 */
static void top_rule(void)
{
	static struct hs_predict slots[HS_PREDICT_SLOTS];
	static const struct { uint64_t size, span; } c[] = {
		{ 0, 32 }, { 1, 32 }, { 24, 32 }, { 25, 48 }, { 40, 48 }, { 41, 64 }, { 56, 64 }, { 1000, 1008 },
		{ 16384, 16400 },
	};
	struct hs_predict *p = hs_predict_for(slots, 3, 1);
	int bad = 0;

	CHECK_U64("predict-top-starts-empty", 0, p->top);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		hs_predict_top(p, 0x10010, c[i].size);
		if (p->top != 0x10010 + c[i].span) {
			check_report(0, "predict-top-spans", "size %llu: expected the top at %#llx got %#llx",
				     (unsigned long long)c[i].size, (unsigned long long)(0x10010 + c[i].span),
				     (unsigned long long)p->top);
			bad = 1;
		}
	}
	if (!bad)
		check_report(1, "predict-top-spans", "%s", "");
	p = hs_predict_for(slots, 3, 2);
	CHECK_U64("predict-top-new-chunk-empty", 0, p->top);
}

/*
 * An allocator that carves fresh blocks one after the other, as glibc does
 * from its top chunk, and hands a freed block back now and then: the 6.0
 * file names the carved ones by the top (no ptr field) and reads back the
 * same events as the 5.0 file of the same calls, which is larger. A
 * realloc's allocation and a block out of sequence move the top too.
 */
enum { NCARVE = 3000 };

static void carved_blocks(const char *dir)
{
	static struct hs_event want[2 * NCARVE + 16], got[2 * NCARVE + 16];
	long n = 0, sizes[2] = { 0, 0 };
	char path[2][512], err[256];
	uint64_t top = 0x5500010, ts = 1000, state = 12345;

	for (long i = 0; i < NCARVE; i++) {
		uint64_t size, span;
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		size = 8 + (state >> 33) % 200;
		span = (size + 23) & ~15ull;
		span = span < 32 ? 32 : span;
		if (i % 500 == 250)
			top += 1 << 20;  /* a new free chunk: a block out of sequence */
		want[n++] = (struct hs_event){ .kind = HS_EVENT_ALLOC, .tid = 7, .time_ns = ts += 10, .fn = HS_FN_MALLOC,
					       .stack = 1, .ptr = top, .size = size };
		top += span;
		if (i % 7 == 3) {  /* freed at once, and the next block of its size takes it back */
			want[n++] = (struct hs_event){ .kind = HS_EVENT_FREE, .tid = 7, .time_ns = ts += 10, .fn = HS_FN_FREE,
						       .ptr = top - span };
			want[n++] = (struct hs_event){ .kind = HS_EVENT_ALLOC, .tid = 7, .time_ns = ts += 10,
						       .fn = HS_FN_CALLOC, .stack = 1, .ptr = top - span, .size = size };
		}
		if (i == NCARVE / 2) {  /* a realloc that moves its block to the top */
			want[n++] = (struct hs_event){ .kind = HS_EVENT_FREE, .tid = 7, .time_ns = ts += 10,
						       .fn = HS_FN_REALLOC, .ptr = top - span };
			want[n++] = (struct hs_event){ .kind = HS_EVENT_ALLOC, .tid = 7, .time_ns = ts += 10,
						       .fn = HS_FN_REALLOC, .stack = 1, .ptr = top, .size = 300,
						       .old_ptr = top - span };
			top += 320;
		}
	}
	for (int v = 0; v < 2; v++) {
		struct tb t;
		if (tb_init(&t, 0, 0, 1, 1) < 0) {
			check_report(0, "predict-top-build", "%s", "out of memory");
			return;
		}
		if (v == 0)
			tb_set_major(&t, 5);
		tb_stack(&t, 1, 0, 0x401000);
		for (long i = 0; i < n; i++)
			tb_event(&t, &want[i]);
		tb_flush(&t);
		snprintf(path[v], sizeof(path[v]), "%s/carved%d.hst", dir, v);
		if (tb_write(&t.file, path[v]) < 0) {
			check_report(0, "predict-top-write", "expected the file written got %s", strerror(errno));
			tb_free(&t);
			return;
		}
		sizes[v] = (long)t.file.n;
		tb_free(&t);
	}
	for (int k = 0; k < 4; k++) {
		static const char *const name[] = { "predict-top-roundtrip-5x", "predict-top-roundtrip-5x-ahead",
						    "predict-top-roundtrip-6x", "predict-top-roundtrip-6x-ahead" };
		long m = readback_events(path[k / 2], 0, k & 1, got, (long)(sizeof(got) / sizeof(got[0])), err, sizeof(err));
		long bad = -1;
		for (long i = 0; m == n && i < n && bad < 0; i++)
			if (got[i].kind != want[i].kind || got[i].ptr != want[i].ptr || got[i].fn != want[i].fn ||
			    got[i].size != want[i].size || got[i].old_ptr != want[i].old_ptr)
				bad = i;
		check_report(m == n && bad < 0, name[k], "expected %ld events back got %ld (%s), first differing %ld", n, m,
			     err, bad);
	}
	unlink(path[0]);
	unlink(path[1]);
	/* the 5.0 file holds a difference for each carved block; the 6.0 file none */
	check_report(sizes[1] * 4 < sizes[0] * 3, "predict-top-smaller",
		     "expected the 6.0 file under 3/4 of the 5.0 file's %ld bytes got %ld", sizes[0], sizes[1]);
}

/* ALLOC_TOP in a 5.0 file is corruption: a 5.x reader could not have skipped it */
static void top_in_5x(const char *dir)
{
	struct tb t;
	char path[512], err[256];
	static struct hs_event got[4];
	long m;

	if (tb_init(&t, 0, 0, 1, 1) < 0) {
		check_report(0, "predict-top-in-5x-build", "%s", "out of memory");
		return;
	}
	tb_set_major(&t, 5);
	tb_rec_begin(&t, HS_REC_ALLOC_TOP + HS_FN_MALLOC);
	tb_rec_end(&t);
	tb_flush(&t);
	snprintf(path, sizeof(path), "%s/top5.hst", dir);
	if (tb_write(&t.file, path) < 0) {
		check_report(0, "predict-top-in-5x-write", "expected the file written got %s", strerror(errno));
		tb_free(&t);
		return;
	}
	m = readback_events(path, 0, 0, got, 4, err, sizeof(err));
	check_report(m < 0 && strstr(err, "unknown record type 0xc0") && strstr(err, "offset"), "predict-top-in-5x-refused",
		     "expected an unknown record type 0xc0 at an offset got %ld events (%s)", m, err);
	unlink(path);
	tb_free(&t);
}

int main(void)
{
	char dir[256];

	freed_list();
	recent_list();
	realloc_codes();
	top_rule();
	if (!check_tmpdir(dir, sizeof(dir), "predict-tmpdir"))
		return 0;
	random_roundtrip(dir);
	mapping_thread_shares_slot(dir);
	carved_blocks(dir);
	top_in_5x(dir);
	rmdir(dir);
	return 0;
}
