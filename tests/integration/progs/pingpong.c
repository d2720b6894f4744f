/* pingpong.c - blocks that change threads as fast as they can: allocated in one, freed in the other, both ways */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define N 200000
#define RING 64

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

int main(void)
{
	pthread_t b;

	if (pthread_create(&b, NULL, b_main, NULL))
		return 1;
	for (int i = 0; i < N; i++) {
		push(&to_b, malloc(24 + i % 8));
		if (i >= 8)
			free(pop(&to_a));
	}
	for (int i = N - 8; i < N; i++)
		free(pop(&to_a));
	pthread_join(b, NULL);
	printf("figures: %d %d\n", 2 * N, 2 * N);
	return 0;
}
