/* leaky.c - the bundled demo: a toy request server with one real leak among honest allocations */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct request {
	char *path;
	char *body;
	size_t len;
};

struct session {
	char name[32];
	struct session *next;
};

static struct session *sessions;

/* Parses one request; every block is freed by handle() ... */
static struct request *parse(int i)
{
	struct request *r = malloc(sizeof(*r));
	r->path = malloc(64);
	snprintf(r->path, 64, "/item/%d", i);
	r->len = 256 + (size_t)(i % 7) * 128;
	r->body = calloc(1, r->len);
	return r;
}

/* ... except the audit copy, which nobody frees: the leak */
static char *audit_copy(const struct request *r)
{
	char *copy = malloc(r->len);
	memcpy(copy, r->body, r->len);
	return copy;
}

/* A session list that is kept until exit: live, not leaked, and bounded */
static void remember(int i)
{
	if (i % 100)
		return;
	struct session *s = malloc(sizeof(*s));
	snprintf(s->name, sizeof(s->name), "user%d", i);
	s->next = sessions;
	sessions = s;
}

static size_t handle(struct request *r, int i)
{
	size_t n = r->len;
	if (i % 10 == 0)
		(void)audit_copy(r);
	remember(i);
	free(r->body);
	free(r->path);
	free(r);
	return n;
}

int main(int argc, char **argv)
{
	int requests = argc > 1 ? atoi(argv[1]) : 20000;
	size_t total = 0;

	for (int i = 0; i < requests; i++)
		total += handle(parse(i), i);
	while (sessions) {
		struct session *s = sessions;
		sessions = s->next;
		free(s);
	}
	printf("served %d requests, %zu bytes\n", requests, total);
	return 0;
}
