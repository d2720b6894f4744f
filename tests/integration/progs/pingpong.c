/*
 * pingpong.c - blocks that change threads as fast as they can: allocated in
 * one, freed in the other, both ways. "pingpong late" runs alone first, its
 * first messages allocated before the second thread exists (the tracer's
 * one-thread stamps, then the hand-over to two).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 200000
#define RING 64
#define EARLY 20000

struct ring {
	void *_Atomic slot[RING];
	_Atomic unsigned head, tail;
};

static struct ring to_b, to_a;

static void push(struct ring *r, void *p)
{
	unsigned h = atomic_load_explicit(&r->head, memory_order_relaxed);
	while (h - atomic_load_explicit(&r->tail, memory_order_acquire) == RING)
		;
	atomic_store_explicit(&r->slot[h % RING], p, memory_order_relaxed);
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
}

static void *pop(struct ring *r)
{
	unsigned t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	void *p;
	while (atomic_load_explicit(&r->head, memory_order_acquire) == t)
		;
	p = atomic_load_explicit(&r->slot[t % RING], memory_order_relaxed);
	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
	return p;
}

/* B: frees each message from A and answers with a block of its own, which A frees */
static void *b_main(void *arg)
{
	(void)arg;
	for (int i = 0; i < N; i++) {
		free(pop(&to_b));
		push(&to_a, malloc(24 + i % 8));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static void *early[EARLY];
	int late = argc > 1 && strcmp(argv[1], "late") == 0, churn = 0;
	pthread_t b;

	if (late) {
		/* alone: blocks of its own come and go, and the first messages wait */
		for (int i = 0; i < EARLY; i++) {
			static void *volatile t; /* volatile: the compiler keeps the malloc and free of a block never used */
			t = malloc(24 + i % 8);
			early[i] = malloc(24 + i % 8);
			free(t);
			churn++;
		}
	}
	if (pthread_create(&b, NULL, b_main, NULL))
		return 1;
	for (int i = 0; i < N; i++) {
		push(&to_b, late && i < EARLY ? early[i] : malloc(24 + i % 8));
		if (i >= 8)
			free(pop(&to_a));
	}
	for (int i = N - 8; i < N; i++)
		free(pop(&to_a));
	pthread_join(b, NULL);
	printf("figures: %d %d\n", 2 * N + churn, 2 * N + churn);
	return 0;
}
