/* leaky.c - the five leak patterns of the scripted case study (reference 003) and a backlogged queue, each in its own function
 *
 * 500 ticks of 2 ms (about 1.1 s); per tick:
 *   linear_leak:      LEAK_PER_TICK x 100 B, never freed (argv[1], default 1)
 *   bounded_cache:    1 x 200 B into a 100-entry ring, evicting the oldest (full at tick 100)
 *   rare_leak:        40 x 48 B freed at once, except one every 4 ticks (125 kept of 20,000)
 *   kept_until_exit:  1 x 150 B, freed by cleanup just before exit
 *   container_push:   the kept_until_exit block appended to an array grown by realloc (x1.5)
 *   enqueue/dequeue:  3 x 56 B enqueued, 2 dequeued: the backlog grows by 1 per tick
 * markers "half way" at tick 250 and "drain" after the last; then the queue is drained, 30 ms pass, and cleanup frees the kept blocks and the array.
 * Uses write(2), never stdio, so libc adds no allocations of its own.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(x) __asm__ volatile("" : : "r"(x) : "memory")
#define TICKS 500

/* from libheapscope.so when 'heapscope record' preloads it; null otherwise */
extern int hs_marker(const char *label) __attribute__((weak));

static void marker(const char *label)
{
	if (hs_marker)
		hs_marker(label);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static void *ring[100];
static int ring_next;
static void **array;
static size_t array_len, array_cap;

struct item {
	struct item *next;
	char payload[48];
};

static struct item *head, *tail;

NOINLINE static void linear_leak(int n)
{
	for (int i = 0; i < n; i++)
		KEEP(malloc(100));
}

NOINLINE static void bounded_cache(void)
{
	free(ring[ring_next]);
	ring[ring_next] = malloc(200);
	ring_next = (ring_next + 1) % 100;
}

NOINLINE static void rare_leak(int tick)
{
	for (int i = 0; i < 40; i++) {
		void *p = malloc(48);
		KEEP(p);
		if (i == 0 && tick % 4 == 0)
			continue;
		free(p);
	}
}

NOINLINE static void container_push(void *p)
{
	if (array_len == array_cap) {
		array_cap = array_cap ? array_cap + array_cap / 2 : 4;
		array = realloc(array, array_cap * sizeof(*array));
	}
	array[array_len++] = p;
}

NOINLINE static void kept_until_exit(void)
{
	void *p = malloc(150);
	KEEP(p);
	container_push(p);
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

NOINLINE static void cleanup(void)
{
	for (size_t i = 0; i < array_len; i++)
		free(array[i]);
	free(array);
}

int main(int argc, char **argv)
{
	int leak = argc > 1 ? atoi(argv[1]) : 1;

	for (int tick = 0; tick < TICKS; tick++) {
		linear_leak(leak);
		bounded_cache();
		rare_leak(tick);
		kept_until_exit();
		enqueue();
		enqueue();
		enqueue();
		dequeue();
		dequeue();
		sleep_ms(2);
		if (tick == TICKS / 2)
			marker("half way");
	}
	marker("drain");
	while (head)
		dequeue();
	sleep_ms(30);
	cleanup();
	return 0;
}
