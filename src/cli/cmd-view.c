/* cmd-view.c - heapscope view: serves the web viewer at once, loads one trace (or two to compare) in the background, until SIGINT or SIGTERM */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../analysis/alloctab.h"
#include "../viewer/api.h"
#include "../viewer/server.h"
#include "cli.h"
#include "heapscope/reader.h"

#define FIRST_PORT 8080
#define PORTS_TRIED 100

static const char usage[] =
	"usage: heapscope view TRACE [NEW_TRACE] [--port N] [--host ADDR]\n"
	"serves the interactive viewer until Ctrl-C (a large trace's loading shown)\n"
	"  NEW_TRACE     compare: TRACE is the base, the page shows what changed in it\n"
	"  --port N      listen on port N (default: the first free port from 8080)\n"
	"  --host ADDR   listen on this IPv4 address (default 127.0.0.1; 0.0.0.0: all)\n";

struct opts {
	const char *host;
	int port;
};

/* The traces loading in the background while the server answers "loading" with the fraction read. */
struct loader {
	struct hs_api *api;
	int n, cur, tty, shown;
	const char *paths[2];
	struct hs_reader *r[2];
	struct hs_alloctab tab[2];
	uint64_t size[2];
	long delay_ms;            /* HEAPSCOPE_VIEW_LOAD_DELAY_MS: a pause per progress report, so tests can watch loading */
	int rc;                   /* 0 loaded, 1 failed (after printing why) */
	int done;                 /* under done_lock: the thread no longer touches the tables */
	pthread_mutex_t done_lock;
};

static int take(void *arg, const char *opt, const char *v)
{
	struct opts *o = arg;

	if (!strcmp(opt, "--host"))
		o->host = v;
	else if (hs_cli_int(v, &o->port) < 0 || o->port < 1 || o->port > 65535)
		return hs_die("bad value '%s' for --port; give a port number from 1 to 65535", v);
	return 0;
}

static void on_progress(void *arg, uint64_t offset)
{
	struct loader *L = arg;
	double done = 0, size = 0;
	uint64_t told = hs_api_progress(L->api, L->cur, offset);

	for (int i = 0; i < L->n; i++) {
		done += i < L->cur ? (double)L->size[i] : i == L->cur ? (double)offset : 0;
		size += (double)L->size[i];
	}
	if (L->tty && size > 0) {
		fprintf(stderr, "\rheapscope: loading %s: %3.0f%%", L->paths[L->cur], 100.0 * (done < size ? done : size) / size);
		L->shown = 1;
	}
	if (L->delay_ms > 0) {
		/*
		 * Then until a reply has told the new fraction (at most 10 s): a
		 * fixed pause alone let a loaded machine's test client, slower than
		 * the loader, see one fraction only.
		 */
		struct timespec ts = { L->delay_ms / 1000, (L->delay_ms % 1000) * 1000000L }, step = { 0, 10000000L };
		nanosleep(&ts, NULL);
		for (int i = 0; i < 1000 && hs_api_told(L->api) == told; i++)
			nanosleep(&step, NULL);
	}
}

static void *load_thread(void *arg)
{
	struct loader *L = arg;
	char msg[600];
	int rc = 0;

	for (L->cur = 0; L->cur < L->n; L->cur++) {
		const char *path = L->paths[L->cur];
		struct hs_reader *r = L->r[L->cur];
		if ((rc = hs_alloctab_load(&L->tab[L->cur], r, on_progress, L)) < 0) {
			if (hs_reader_error(r)[0])
				snprintf(msg, sizeof(msg), "%s", hs_reader_error(r));
			else if (rc == -ENOMEM)
				snprintf(msg, sizeof(msg), "out of memory loading '%s'" HS_OOM_ADVICE, path);
			else
				snprintf(msg, sizeof(msg), "cannot load '%s': %s%s", path, strerror(-rc),
					 rc == -EOVERFLOW ? " (more than 4 billion allocations; record with --sample)" : "");
			break;
		}
	}
	if (L->shown)
		fprintf(stderr, "\r\033[K");
	for (int i = 0; i < L->n && i <= L->cur && i < 2; i++)
		if (hs_reader_warning(L->r[i])[0])
			fprintf(stderr, "heapscope: warning: %s\n", hs_reader_warning(L->r[i]));
	if (rc < 0) {
		hs_api_failed(L->api, msg);
		L->rc = hs_die("%s", msg);
		/* the main thread waits in sigwait(): end the viewer as a failed load ends any other command */
		kill(getpid(), SIGTERM);
	} else {
		hs_api_loaded(L->api, L->tab);
		if (L->tty)
			fprintf(stderr, "heapscope: loaded; the page is ready\n");
	}
	pthread_mutex_lock(&L->done_lock);
	L->done = 1;
	pthread_mutex_unlock(&L->done_lock);
	return NULL;
}

int hs_cmd_view(int argc, char **argv)
{
	static const char *const valued[] = { "--port", "--host", NULL };
	struct opts o = { .port = -1 };
	struct hs_cli_args args = { .cmd = "view", .usage = usage, .valued = valued, .take = take, .ctx = &o,
				    .want = 2, .optional = 1 };
	const char *host = NULL, *delay;
	struct loader L;
	struct hs_api api;
	struct hs_server srv;
	pthread_t thread;
	sigset_t sigs, old;
	int rc = 0, port = -1, have_api = 0, have_srv = 0, have_thread = 0, sig, srv_rc = -EADDRINUSE, loading = 0;

	memset(&srv, 0, sizeof(srv));
	memset(&L, 0, sizeof(L));
	pthread_mutex_init(&L.done_lock, NULL);
	if ((rc = hs_cli_args_parse(&args, argc, argv)) != 0 || args.help)
		goto out;
	host = o.host;
	port = o.port;
	L.n = args.npaths;
	L.api = &api;
	L.tty = isatty(2);
	if ((delay = getenv("HEAPSCOPE_VIEW_LOAD_DELAY_MS")))
		L.delay_ms = strtol(delay, NULL, 10);
	/* a file that is not a trace fails here, before the server starts; only the long read runs in the background */
	for (int i = 0; i < L.n; i++) {
		struct stat sb;
		L.paths[i] = args.paths[i];
		if ((rc = hs_cli_reader_open(&L.r[i], L.paths[i])) != 0)
			goto out;
		if (stat(L.paths[i], &sb) == 0)
			L.size[i] = (uint64_t)sb.st_size;
	}
	if (hs_api_init(&api, L.n, L.paths, L.r, L.size) < 0) {
		rc = hs_die("cannot start the viewer for '%s': out of resources", L.paths[0]);
		goto out;
	}
	have_api = 1;
	api.binary_dirs = hs_cli_binary_dirs() != NULL;
	/* the server's threads and the loader inherit the mask, so only sigwait() below sees the signals */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, &old);
	if (port > 0) {
		srv_rc = hs_server_start(&srv, &api, host, (uint16_t)port);
	} else {
		for (port = FIRST_PORT; port < FIRST_PORT + PORTS_TRIED; port++)
			if ((srv_rc = hs_server_start(&srv, &api, host, (uint16_t)port)) != -EADDRINUSE)
				break;
	}
	if (srv_rc < 0) {
		if (srv_rc == -EADDRINUSE && o.port <= 0)
			rc = hs_die("no free port from %d to %d; give one with --port", FIRST_PORT, FIRST_PORT + PORTS_TRIED - 1);
		else
			rc = hs_die("%s", srv.err);
		goto out;
	}
	have_srv = 1;
	if (pthread_create(&thread, NULL, load_thread, &L) != 0) {
		rc = hs_die("cannot start loading '%s': out of resources; close other programs and retry", L.paths[0]);
		goto out;
	}
	have_thread = 1;
	printf("Serving http://%s:%d/\n", host && strcmp(host, "0.0.0.0") ? host : "127.0.0.1", port);
	if (L.n == 2)
		printf("comparing '%s' (base) with '%s' (new)\n", L.paths[0], L.paths[1]);
	if (host && !strcmp(host, "0.0.0.0"))
		printf("listening on every interface: anyone who can reach this machine on port %d can read the trace\n", port);
	printf("press Ctrl-C to stop\n");
	fflush(stdout);
	while (sigwait(&sigs, &sig) != 0)
		;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
out:
	if (have_srv)
		hs_server_stop(&srv);
	if (have_thread) {
		pthread_mutex_lock(&L.done_lock);
		loading = !L.done;
		pthread_mutex_unlock(&L.done_lock);
		if (!loading)
			pthread_join(thread, NULL);
		if (L.rc)
			rc = L.rc;
	}
	/*
	 * Stopped while still loading: the loader cannot be interrupted and
	 * still uses the readers, tables and api, and the process is about to
	 * exit, which frees them all at once.
	 */
	if (loading)
		return rc;
	if (have_api)
		hs_api_free(&api);
	for (int i = 0; i < 2; i++) {
		hs_alloctab_free(&L.tab[i]);
		hs_reader_close(L.r[i]);
	}
	pthread_mutex_destroy(&L.done_lock);
	return rc;
}
