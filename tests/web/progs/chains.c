/* chains.c - a test program for the viewer's walk up the callers: one allocation site reached through known call chains
 *
 *   leaf (the site, malloc)  <- mid_a (10 x 100 B per call) <- top_x (calls mid_a twice: 20 blocks, never freed)
 *                                                            <- top_y (calls mid_a once: 10 blocks, freed)
 *                            <- mid_b (5 x 300 B, each freed at once) <- top_y
 *   top_x and top_y are called by main. By function: leaf 35 calls, 4500 B; its callers mid_a 30 calls 3000 B and
 *   mid_b 5 calls 1500 B; mid_a's callers top_x 20 calls 2000 B (leaked) and top_y 10 calls 1000 B (temporary);
 *   top_x's caller main 20 calls 2000 B, whose caller is the outermost frame (libc's start is hidden).
 * Phases are 2 ms apart so that the peak (top_x's and top_y's mid_a blocks live: 3000 B) is one moment.
 * Uses write(2), never stdio, so libc adds no allocations of its own.
 */
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(x) __asm__ volatile("" : : "r"(x) : "memory")

static void pause_ms(void)
{
	nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
}

NOINLINE static void *leaf(size_t n)
{
	void *p = malloc(n);
	KEEP(p);
	return p;
}

NOINLINE static void mid_a(int keep)
{
	void *p[10];

	for (int i = 0; i < 10; i++)
		p[i] = leaf(100);
	pause_ms();
	for (int i = 0; i < 10 && !keep; i++)
		free(p[i]);
}

NOINLINE static void mid_b(void)
{
	for (int i = 0; i < 5; i++)
		free(leaf(300));
}

NOINLINE static void top_x(void)
{
	for (int i = 0; i < 2; i++)
		mid_a(1);
}

NOINLINE static void top_y(void)
{
	mid_a(0);
	pause_ms();
	mid_b();
}

int main(void)
{
	top_x();
	pause_ms();
	top_y();
	return 0;
}
