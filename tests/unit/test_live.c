/* test_live.c - the live-block map against a sorted-array reference: collisions, growth, backward-shift deletion */
#include <stdint.h>
#include <stdlib.h>

#include "analysis/live.h"
#include "check.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

struct ref {
	uint64_t ptr;
	int live;
};

static int cmp_ref(const void *a, const void *b)
{
	uint64_t x = ((const struct ref *)a)->ptr, y = ((const struct ref *)b)->ptr;
	return x < y ? -1 : x > y;
}

static struct ref *ref_find(struct ref *r, size_t n, uint64_t p)
{
	struct ref key = { p, 0 };
	return bsearch(&key, r, n, sizeof(*r), cmp_ref);
}

/*
 * Payload derived from the address, so a block moved by deletion can be
 * checked field by field. One address in 64 gets a size of 4 GiB or more,
 * which the table keeps aside.
 */
static uint64_t size_of(uint64_t p) { return (p & 0x3f0) == 0x100 ? (5ull << 30) + p : (p * 2654435761u) >> 40; }
static uint32_t stack_of(uint64_t p) { return (uint32_t)(p >> 3) ^ 0x5a5a5a5au; }
static uint64_t time_of(uint64_t p) { return (p * 0x9e3779b97f4a7c15ull) & HS_LIVE_TIME_MASK; }
static uint32_t thread_of(uint64_t p) { return (uint32_t)(p >> 4) & 0xffff; }

static struct hs_live *cur;   /* the table the blocks belong to */

static int block_ok(const struct hs_live_block *b, uint64_t p)
{
	return b && b->ptr == p && hs_live_size(cur, b) == size_of(p) && hs_live_time(b) == time_of(p) &&
	       b->stack == stack_of(p) && hs_live_thread(b) == thread_of(p);
}

static void fill(struct hs_live_block *b, uint64_t p)
{
	hs_live_set(cur, b, size_of(p), time_of(p), thread_of(p), stack_of(p));
}

/* Every live reference entry is found with its payload; every dead one is absent. */
static size_t verify(struct hs_live *l, struct ref *r, size_t n, char *first, size_t fcap)
{
	size_t bad = 0, live = 0, walked = 0;

	for (size_t i = 0; i < n; i++) {
		struct hs_live_block *b = hs_live_find(l, r[i].ptr);
		if (r[i].live) {
			live++;
			if (!block_ok(b, r[i].ptr) && !bad++)
				snprintf(first, fcap, "live 0x%" PRIx64 " %s", r[i].ptr, b ? "has a wrong payload" : "not found");
		} else if (b && !bad++) {
			snprintf(first, fcap, "removed 0x%" PRIx64 " still found", r[i].ptr);
		}
	}
	hs_live_foreach(l, b) {
		struct ref *e = ref_find(r, n, b->ptr);
		walked++;
		if ((!e || !e->live) && !bad++)
			snprintf(first, fcap, "foreach yields unknown 0x%" PRIx64, b->ptr);
	}
	if (l->used != live && !bad++)
		snprintf(first, fcap, "used=%zu, reference holds %zu", l->used, live);
	if (walked != live && !bad++)
		snprintf(first, fcap, "foreach walked %zu, reference holds %zu", walked, live);
	return bad;
}

static void shuffle(size_t *v, size_t n)
{
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)(check_rand(&rng) % (i + 1)), t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

/*
 * 100k distinct addresses from few 16-byte granules' neighbourhoods: runs of
 * addresses sharing p>>4 (same home slot), plus clustered bases, so probe
 * runs are long and wrap around the table end.
 */
static void big_random(void)
{
	enum { N = 100000 };
	struct ref *r = calloc(N * 2, sizeof(*r));
	size_t n = 0, *order = malloc(N * 2 * sizeof(size_t)), bad = 0, checks = 0;
	struct hs_live l;
	char first[160] = "none";

	while (n < N * 2) {
		uint64_t base = ((check_rand(&rng) % 6000) << 4) + 0x7f0000000000ull;
		int k = 1 + (int)(check_rand(&rng) % 8);
		if (check_rand(&rng) % 4 == 0)
			base = (check_rand(&rng) % (1u << 28)) << 4; /* some scattered ones */
		for (int j = 0; j < k && n < N * 2; j++) {
			uint64_t p = base | (check_rand(&rng) & 15);
			if (p)
				r[n++].ptr = p;
		}
	}
	qsort(r, n, sizeof(*r), cmp_ref);
	{ /* dedupe */
		size_t m = 0;
		for (size_t i = 0; i < n; i++)
			if (!m || r[m - 1].ptr != r[i].ptr)
				r[m++] = r[i];
		n = m;
	}
	if (n > N)
		n = N;
	/* the map starts with fewer slots than this: it must grow while full of collisions */
	hs_live_init(&l);
	cur = &l;
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	shuffle(order, n);
	for (size_t k = 0; k < n; k++) {
		int existed = -1;
		struct hs_live_block *b = hs_live_put(&l, r[order[k]].ptr, &existed);
		if ((!b || existed != 0 || b->ptr != r[order[k]].ptr) && !bad++)
			snprintf(first, sizeof(first), "put 0x%" PRIx64 " existed=%d", r[order[k]].ptr, existed);
		if (b)
			fill(b, r[order[k]].ptr);
		r[order[k]].live = 1;
	}
	CHECK_COUNT("live-insert-100k", bad, n, first);
	bad = verify(&l, r, n, first, sizeof(first));
	CHECK_COUNT("live-find-after-insert", bad, n, first);

	/* putting an existing address returns its block untouched */
	bad = 0;
	for (size_t i = 0; i < n; i += 97) {
		int existed = -1;
		struct hs_live_block *b = hs_live_put(&l, r[i].ptr, &existed);
		if ((existed != 1 || !block_ok(b, r[i].ptr)) && !bad++)
			snprintf(first, sizeof(first), "re-put 0x%" PRIx64 " existed=%d", r[i].ptr, existed);
	}
	CHECK_COUNT("live-put-existing", bad, n / 97, first);

	/* remove 3/4 in random order, re-adding some; check everything every 2000 steps */
	shuffle(order, n);
	bad = 0;
	for (size_t k = 0; k < n * 3 / 4; k++) {
		struct ref *e = &r[order[k]];
		struct hs_live_block *b = hs_live_find(&l, e->ptr);
		if (!b) {
			if (!bad++)
				snprintf(first, sizeof(first), "0x%" PRIx64 " missing before its removal (step %zu)",
					 e->ptr, k);
			continue;
		}
		hs_live_remove(&l, b);
		e->live = 0;
		if (k % 5 == 0) { /* re-insert an earlier removed one */
			struct ref *o = &r[order[check_rand(&rng) % (k + 1)]];
			if (!o->live) {
				int existed = -1;
				b = hs_live_put(&l, o->ptr, &existed);
				fill(b, o->ptr);
				o->live = 1;
				if (existed && !bad++)
					snprintf(first, sizeof(first), "re-insert of removed 0x%" PRIx64 " said existed",
						 o->ptr);
			}
		}
		if (k % 2000 == 0) {
			checks++;
			bad += verify(&l, r, n, first, sizeof(first));
		}
	}
	CHECK_COUNT("live-remove-random-order", bad, n * 3 / 4, first);
	bad = verify(&l, r, n, first, sizeof(first));
	CHECK_COUNT("live-find-after-removals", bad, n, first);

	/* drain */
	bad = 0;
	for (size_t i = 0; i < n; i++)
		if (r[i].live) {
			struct hs_live_block *b = hs_live_find(&l, r[i].ptr);
			if (!b) {
				if (!bad++)
					snprintf(first, sizeof(first), "0x%" PRIx64 " missing while draining", r[i].ptr);
				continue;
			}
			hs_live_remove(&l, b);
			r[i].live = 0;
		}
	bad += verify(&l, r, n, first, sizeof(first));
	CHECK_COUNT("live-empty-after-drain", bad, n, first);
	hs_live_free(&l);
	free(r);
	free(order);
}

/* Keys homed at the last slots and slot 0, removed in every order of a small set. */
static void wraparound(void)
{
	enum { K = 6 };
	uint64_t keys[K];
	size_t homes[K] = { 0 }, bad = 0;
	int found = 0;
	char first[160] = "none";
	struct hs_live l;

	hs_live_init(&l);
	cur = &l;
	/* two keys homed at cap-2, two at cap-1, two at 0 (asked of the table's own hash) */
	for (uint64_t g = 1; found < K && g < (1ull << 32); g++) {
		uint64_t p = g << 4;
		size_t h = hs_live_slot(&l, p);
		size_t want = found < 2 ? l.cap - 2 : found < 4 ? l.cap - 1 : 0;
		if (h == want) {
			keys[found] = p;
			homes[found++] = h;
		}
	}
	hs_live_free(&l);
	if (!check_report(found == K, "live-wraparound-keys", "expected %d keys got %d", K, found))
		return;
	(void)homes;
	/* every removal order of the 6 keys (720), inserted in a fixed order */
	int perm[K] = { 0, 1, 2, 3, 4, 5 }, c[K] = { 0 }, i = 0;
	size_t trials = 0;
	for (;;) {
		struct ref r[K];
		hs_live_init(&l);
		cur = &l;
		for (int k = 0; k < K; k++) {
			int existed;
			fill(hs_live_put(&l, keys[k], &existed), keys[k]);
			r[k].ptr = keys[k];
			r[k].live = 1;
		}
		qsort(r, K, sizeof(r[0]), cmp_ref);
		for (int k = 0; k < K; k++) {
			struct hs_live_block *b = hs_live_find(&l, keys[perm[k]]);
			if (!b) {
				if (!bad++)
					snprintf(first, sizeof(first), "key %d missing at removal %d", perm[k], k);
				break;
			}
			hs_live_remove(&l, b);
			ref_find(r, K, keys[perm[k]])->live = 0;
			bad += verify(&l, r, K, first, sizeof(first));
		}
		hs_live_free(&l);
		trials++;
		/* Heap's algorithm, iterative */
		while (i < K && c[i] >= i) {
			c[i] = 0;
			i++;
		}
		if (i >= K)
			break;
		int s = i % 2 ? c[i] : 0, t = perm[s];
		perm[s] = perm[i];
		perm[i] = t;
		c[i]++;
		i = 0;
	}
	CHECK_COUNT("live-wraparound-removal-orders", bad, trials, first);
}

int main(void)
{
	struct hs_live l;
	int existed = -1;

	hs_live_init(&l);
	cur = &l;
	CHECK("live-empty-find", hs_live_find(&l, 0x1000) == NULL);
	struct hs_live_block *b = hs_live_put(&l, 0x1000, &existed);
	check_report(b && b->ptr == 0x1000 && existed == 0 && l.used == 1, "live-put-one",
		     "expected new block at 0x1000, used=1 got existed=%d used=%zu", existed, l.used);
	CHECK("live-find-one", hs_live_find(&l, 0x1000) == b);
	CHECK("live-find-neighbour-absent", hs_live_find(&l, 0x1008) == NULL);
	hs_live_remove(&l, b);
	check_report(hs_live_find(&l, 0x1000) == NULL && l.used == 0, "live-remove-one",
		     "expected gone and used=0 got used=%zu", l.used);
	hs_live_free(&l);

	wraparound();
	big_random();
	return 0;
}
