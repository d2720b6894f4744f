/* ctoralloc.c - a library whose constructor allocates (built as libctoralloc.so), and the program that links it
 *
 * ld.so calls the libraries' constructors from _dl_start_user, which has
 * no CFI: the walks of these allocations end there. With -DMAIN, the
 * program: it allocates too, then says whether libunwind was started in
 * it (the tracer moves libunwind's pipe to descriptor 4000 or above).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwpipe.h"

#ifndef MAIN
void *ctor_kept[3];

__attribute__((noinline)) static void *ctor_leaf(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) static void ctor_mid(int i)
{
	ctor_kept[i] = ctor_leaf(100 + (size_t)i);
	__asm__ volatile("" : : : "memory");
}

__attribute__((constructor)) static void ctor_setup(void)
{
	for (int i = 0; i < 3; i++)
		ctor_mid(i);
	free(ctor_leaf(7));
}
#else
extern void *ctor_kept[3];

int main(void)
{
	char *p = malloc(64);

	strcpy(p, "main");
	printf("constructor blocks %s, libunwind %s\n", ctor_kept[2] ? "kept" : "missing",
	       libunwind_pipe() ? "started" : "not started");
	free(p);
	return 0;
}
#endif
