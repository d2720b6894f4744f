/* exitfree.c - a library whose destructor frees 2,000 blocks its constructor made (as C++ libraries' static objects do)
 *
 * Built twice: as libexitfree.so, and with -DMAIN as the program linked
 * to it. The loader runs the library's destructor after the tracer's
 * (the library's constructor ran first): its frees must be in the trace
 * (no leak), and written with the rest, not each in a chunk of its own.
 */
#include <stdio.h>
#include <stdlib.h>

#define BLOCKS 2000

#ifdef MAIN
int exitfree_count(void);

int main(void)
{
	printf("blocks %d\n", exitfree_count());
	return 0;
}
#else
static void *blocks[BLOCKS];

__attribute__((constructor)) static void make(void)
{
	for (int i = 0; i < BLOCKS; i++)
		blocks[i] = malloc(24 + (size_t)(i % 5) * 16);
}

__attribute__((destructor)) static void unmake(void)
{
	for (int i = 0; i < BLOCKS; i++)
		free(blocks[i]);
}

int exitfree_count(void)
{
	int n = 0;

	for (int i = 0; i < BLOCKS; i++)
		n += blocks[i] != NULL;
	return n;
}
#endif
