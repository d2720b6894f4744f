/*
 * handoff.c - eight threads churn blocks of their own and hand one in eight
 * of their allocations to another thread through its mailbox, where that
 * thread frees it: the writer may put a thread's events on its own blocks
 * ahead of other threads' (docs/FORMAT.md, "Time"), never a handed-over
 * block's. Prints "figures: ALLOCS FREES", its own calls of malloc and free.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define T 8
#define N 100000
#define BOX 256

static struct box {
	pthread_mutex_t m;
	void *slot[BOX];
	int n;
} boxes[T];
static atomic_long allocs, frees;

static void drop(void *p)
{
	if (p) {
		free(p);
		atomic_fetch_add(&frees, 1);
	}
}

static void *worker(void *arg)
{
	long me = (long)arg, na = 0;
	unsigned s = (unsigned)me * 2654435761u + 1;
	void *keep[16] = { 0 };

	for (int i = 0; i < N; i++) {
		s = s * 1103515245u + 12345u;
		void *p = malloc(16 + (s >> 16) % 200);
		int k = (int)((s >> 8) % 16);
		na++;
		drop(keep[k]);
		keep[k] = p;
		if ((s >> 4) % 8 == 0) {
			int to = (int)((me + 1 + (s >> 20) % (T - 1)) % T);
			void *q = malloc(24);
			na++;
			pthread_mutex_lock(&boxes[to].m);
			if (boxes[to].n < BOX) {
				boxes[to].slot[boxes[to].n++] = q;
				q = NULL;
			}
			pthread_mutex_unlock(&boxes[to].m);
			drop(q);
		}
		pthread_mutex_lock(&boxes[me].m);
		while (boxes[me].n)
			drop(boxes[me].slot[--boxes[me].n]);
		pthread_mutex_unlock(&boxes[me].m);
	}
	for (int k = 0; k < 16; k++)
		drop(keep[k]);
	atomic_fetch_add(&allocs, na);
	return NULL;
}

int main(void)
{
	pthread_t t[T];

	for (int i = 0; i < T; i++)
		pthread_mutex_init(&boxes[i].m, NULL);
	for (long i = 0; i < T; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	for (int i = 0; i < T; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < T; i++)
		while (boxes[i].n)
			drop(boxes[i].slot[--boxes[i].n]);
	printf("figures: %ld %ld\n", (long)allocs, (long)frees);
	return 0;
}
