/* cmd-view.c - heapscope view: loads a trace once and serves the web viewer until SIGINT or SIGTERM */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "../analysis/alloctab.h"
#include "../viewer/api.h"
#include "../viewer/server.h"
#include "cli.h"
#include "heapscope/reader.h"

#define FIRST_PORT 8080
#define PORTS_TRIED 100

static const char usage[] =
	"usage: heapscope view TRACE [--port N] [--host ADDR]\n"
	"  --port N      listen on port N (default: the first free port from 8080)\n"
	"  --host ADDR   listen on this IPv4 address (default 127.0.0.1; 0.0.0.0: every interface)\n"
	"serves the interactive viewer until Ctrl-C\n";

struct opts {
	const char *host;
	int port;
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

int hs_cmd_view(int argc, char **argv)
{
	static const char *const valued[] = { "--port", "--host", NULL };
	struct opts o = { .port = -1 };
	struct hs_cli_args args = { .cmd = "view", .usage = usage, .valued = valued, .take = take, .ctx = &o, .want = 1 };
	const char *path = NULL, *host = NULL;
	struct hs_reader *r = NULL;
	struct hs_alloctab tab = { 0 };
	struct hs_api api;
	struct hs_server srv;
	sigset_t sigs, old;
	int rc = 0, port = -1, have_api = 0, have_srv = 0, sig, srv_rc = -EADDRINUSE;

	memset(&srv, 0, sizeof(srv));
	if ((rc = hs_cli_args_parse(&args, argc, argv)) != 0 || args.help)
		goto out;
	path = args.paths[0];
	host = o.host;
	port = o.port;
	if ((rc = hs_cli_load(&r, &tab, path)) != 0)
		goto out;
	if (hs_api_init(&api, path, r, &tab) < 0) {
		rc = hs_die("cannot start the viewer for '%s': out of resources", path);
		goto out;
	}
	have_api = 1;
	/* the server's threads inherit the mask, so only sigwait() below sees the signals */
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
		if (srv_rc == -EADDRINUSE && port >= FIRST_PORT + PORTS_TRIED)
			rc = hs_die("no free port from %d to %d; give one with --port", FIRST_PORT, FIRST_PORT + PORTS_TRIED - 1);
		else
			rc = hs_die("%s", srv.err);
		goto out;
	}
	have_srv = 1;
	printf("Serving http://%s:%d/\n", host && strcmp(host, "0.0.0.0") ? host : "127.0.0.1", port);
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
	if (have_api)
		hs_api_free(&api);
	hs_alloctab_free(&tab);
	hs_reader_close(r);
	return rc;
}
