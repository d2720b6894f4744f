/* api.c - drives the tracer through include/heapscope/heapscope.h: start, marker, stop, start again */
#include <stdio.h>
#include <stdlib.h>

#include "heapscope/heapscope.h"

static void *keep[1000];

/* each phase in its own function, so the traces can tell them apart */
__attribute__((noinline)) static void before_start(void)
{
	for (int i = 0; i < 10; i++)
		free(malloc(100));
}

__attribute__((noinline)) static void first_trace(void)
{
	for (int i = 0; i < 300; i++)
		keep[i] = malloc(64);
	hs_marker("half-way");
	hs_marker("two\nlines \x1b[2J");
	for (int i = 0; i < 100; i++)
		free(keep[i]);
}

__attribute__((noinline)) static void between(void)
{
	for (int i = 0; i < 50; i++)
		free(malloc(32));
}

/* also frees 50 blocks of the first trace, which this one never saw allocated */
__attribute__((noinline)) static void second_trace(void)
{
	for (int i = 300; i < 340; i++)
		keep[i] = calloc(1, 128);
	for (int i = 100; i < 150; i++)
		free(keep[i]);
}

int main(int argc, char **argv)
{
	if (argc < 3 || hs_trace_if_requested() != 0) {
		fprintf(stderr, "usage: api FIRST.hst SECOND.hst, with HEAPSCOPE_OUTPUT unset\n");
		return 2;
	}
	before_start();
	if (hs_marker("not tracing") != -1 || hs_stop() != -1)
		return 3;
	if (hs_start(argv[1]) != 0)
		return 4;
	first_trace();
	if (hs_stop() != 0)
		return 5;
	between();
	if (hs_start(argv[2]) != 0)
		return 6;
	second_trace();
	if (hs_stop() != 0)
		return 7;
	printf("ok\n");
	return 0;
}
