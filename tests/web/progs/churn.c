/* churn.c - a test program for the viewer's compare mode and loading progress: churn [CHURN] [LEAK]
 *
 *   churn_blocks: CHURN x 48 B, each freed at once (a large trace for the loading progress; default 2000)
 *   steady:       500 x 200 B, freed before exit (the same in every run)
 *   leak_blocks:  LEAK x 96 B, never freed (default 100): two runs with different LEAK differ at this site only
 * then 5 ms pass before steady's blocks are freed, so that the peak (steady and leaked blocks live) is the same moment in every run
 * Uses write(2), never stdio, so libc adds no allocations of its own.
 */
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(x) __asm__ volatile("" : : "r"(x) : "memory")

static void *steady_blocks[500];

NOINLINE static void churn_blocks(long n)
{
	for (long i = 0; i < n; i++) {
		void *p = malloc(48);
		KEEP(p);
		free(p);
	}
}

NOINLINE static void steady(void)
{
	for (int i = 0; i < 500; i++)
		steady_blocks[i] = malloc(200);
}

NOINLINE static void release_steady(void)
{
	for (int i = 0; i < 500; i++)
		free(steady_blocks[i]);
}

NOINLINE static void leak_blocks(long n)
{
	for (long i = 0; i < n; i++)
		KEEP(malloc(96));
}

int main(int argc, char **argv)
{
	long churn = argc > 1 ? atol(argv[1]) : 2000, leak = argc > 2 ? atol(argv[2]) : 100;

	steady();
	churn_blocks(churn);
	leak_blocks(leak);
	nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	release_steady();
	return 0;
}
