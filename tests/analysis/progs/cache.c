/* cache.c - two sites whose kept blocks are all freed by cleanup at exit, over 500 ticks of 1 ms:
 *   random_cache: a 100-entry cache, 8 entries replaced at random per tick (4,000 x 64 B); the
 *                 entries that happen to survive 2% of the run are kept, but the cache is bounded
 *   rare_kept:    20 x 72 B per tick, freed at once except one every 4 ticks, which is kept until
 *                 cleanup: a rare leak that the cleanup hides (125 kept of 10,000)
 * Uses write(2), never stdio, so libc adds no allocations of its own.
 */
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(x) __asm__ volatile("" : : "r"(x) : "memory")
#define TICKS 500

static void *cache[100];
static void *kept[TICKS];
static int nkept;
static unsigned long rng = 88172645463325252ull;

NOINLINE static void random_cache(void)
{
	for (int i = 0; i < 8; i++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		free(cache[rng % 100]);
		cache[rng % 100] = malloc(64);
	}
}

NOINLINE static void rare_kept(int tick)
{
	for (int i = 0; i < 20; i++) {
		void *p = malloc(72);
		KEEP(p);
		if (i == 0 && tick % 4 == 0)
			kept[nkept++] = p;
		else
			free(p);
	}
}

NOINLINE static void cleanup(void)
{
	for (int i = 0; i < 100; i++)
		free(cache[i]);
	for (int i = 0; i < nkept; i++)
		free(kept[i]);
}

int main(void)
{
	struct timespec ms = { 0, 1000000L };

	for (int tick = 0; tick < TICKS; tick++) {
		random_cache();
		rare_kept(tick);
		nanosleep(&ms, NULL);
	}
	cleanup();
	return 0;
}
