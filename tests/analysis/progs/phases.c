/* phases.c - allocation patterns in timed phases, each in its own function, for tests/analysis/run.sh
 *
 * t (ms)  phase                                  what stays
 *     0   kept_until_exit: 50 x 256 B            freed just before exit
 *     0   leak_1000: 1000 x 64 B via make_node   never freed
 *   200   hold_300: 300 x 128 B                  freed at 400
 *   400   temporaries: 5000 x 32 B               freed at once
 *   600   producer thread: 50 ticks of 1 ms, 3 enqueued and 1 dequeued per tick
 *         (backlog 100 at ~660), drained at ~870
 *  1070   exit
 * Uses write(2), never stdio, so libc adds no allocations of its own.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(x) __asm__ volatile("" : : "r"(x) : "memory")

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static void *kept[50];
static void *held[300];

struct item {
	struct item *next;
	char payload[40];
};

static struct item *head, *tail;

NOINLINE static void *make_node(void)
{
	void *p = malloc(64);
	KEEP(p);
	return p;
}

NOINLINE static void leak_1000(void)
{
	for (int i = 0; i < 1000; i++)
		KEEP(make_node());
}

NOINLINE static void kept_until_exit(void)
{
	for (int i = 0; i < 50; i++)
		kept[i] = malloc(256);
}

NOINLINE static void release_kept(void)
{
	for (int i = 0; i < 50; i++)
		free(kept[i]);
}

NOINLINE static void hold_300(void)
{
	for (int i = 0; i < 300; i++)
		held[i] = malloc(128);
}

NOINLINE static void release_300(void)
{
	for (int i = 0; i < 300; i++)
		free(held[i]);
}

NOINLINE static void temporaries(void)
{
	for (int i = 0; i < 5000; i++) {
		void *p = malloc(32);
		KEEP(p);
		free(p);
	}
}

NOINLINE static void enqueue(void)
{
	struct item *it = malloc(sizeof(*it));
	it->next = NULL;
	if (tail)
		tail->next = it;
	else
		head = it;
	tail = it;
}

NOINLINE static void dequeue(void)
{
	struct item *it = head;
	if (!it)
		return;
	head = it->next;
	if (!head)
		tail = NULL;
	free(it);
}

NOINLINE static void *producer(void *arg)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "producer tid %ld\n", (long)syscall(SYS_gettid));

	(void)arg;
	if (write(1, buf, (size_t)n) < 0)
		return NULL;
	for (int tick = 0; tick < 50; tick++) {
		enqueue();
		enqueue();
		enqueue();
		dequeue();
		sleep_ms(1);
	}
	return NULL;
}

NOINLINE static void drain(void)
{
	while (head)
		dequeue();
}

int main(void)
{
	pthread_t t;

	kept_until_exit();
	leak_1000();
	sleep_ms(200);
	hold_300();
	sleep_ms(200);
	release_300();
	temporaries();
	sleep_ms(200);
	if (pthread_create(&t, NULL, producer, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	sleep_ms(200);
	drain();
	sleep_ms(200);
	release_kept();
	return 0;
}
