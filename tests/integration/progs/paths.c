/* paths.c - many call paths that meet at one allocating call, at the same depth: walks that start alike and differ further out */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(x) __asm__ volatile("" : : "r"(x) : "memory")

/* the one call site: its frame (return address and stack pointer) is the same whichever path led here */
NOINLINE static void *site(size_t n)
{
	void *p = malloc(n);
	KEEP(p);
	return p;
}

#define PATH(name)                         \
	NOINLINE static void *name(size_t n) \
	{                                    \
		void *p = site(n);           \
		KEEP(p);                     \
		return p;                    \
	}
PATH(p0) PATH(p1) PATH(p2) PATH(p3) PATH(p4) PATH(p5) PATH(p6) PATH(p7)

static void *(*const paths[])(size_t) = { p0, p1, p2, p3, p4, p5, p6, p7 };

/* the same paths again, one frame deeper and from another caller */
NOINLINE static void *outer(int k, size_t n)
{
	void *p = paths[k](n);
	KEEP(p);
	return p;
}

int main(void)
{
	uint64_t x = 88172645463325252ull;
	size_t live = 0;
	void *keep[64] = { 0 };

	for (int i = 0; i < 24000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		int k = (int)(x % 8);
		void *p = (x >> 20) & 1 ? paths[k](16 + k) : outer(k, 32 + k);
		free(keep[i % 64]);
		keep[i % 64] = p;
		live += 16;
	}
	for (int i = 0; i < 64; i++)
		free(keep[i]);
	printf("%zu\n", live);
	return 0;
}
