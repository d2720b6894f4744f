/* server.h - the viewer's HTTP server (libmicrohttpd): embedded page assets and the JSON API, loopback by default */
#ifndef HS_VIEWER_SERVER_H
#define HS_VIEWER_SERVER_H

#include <stdint.h>

#include "api.h"

#define HS_SERVER_MAX_HOSTS 64

struct MHD_Daemon;

struct hs_server {
	struct MHD_Daemon *d;
	struct hs_api *api;
	uint16_t port;
	char host[64];                        /* the bound address */
	char *hosts[HS_SERVER_MAX_HOSTS];     /* Host header values accepted: "127.0.0.1:PORT", ... */
	int nhosts;
	char err[256];
};

/*
 * Listens on host:port (host NULL: 127.0.0.1) with a small thread pool and
 * bounded connections. Returns 0, -EADDRINUSE when the port is taken (or
 * could not be bound), -EINVAL for a bad address, -ENOMEM; err tells why.
 */
int hs_server_start(struct hs_server *s, struct hs_api *api, const char *host, uint16_t port);
void hs_server_stop(struct hs_server *s);

#endif
