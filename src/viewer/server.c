/* server.c - the viewer's HTTP server: Host check (DNS rebinding), GET/HEAD only, embedded assets and /api/ on libmicrohttpd */
#define _DEFAULT_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <ifaddrs.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api.h"
#include "assets.h"
#include "server.h"

#define THREADS 4
#define MAX_CONNECTIONS 64
#define CONNECTION_MEMORY (64 * 1024)   /* request line and headers must fit, so big requests get an error */
#define TIMEOUT_S 30
#define MAX_PARAMS 64

struct params {
	struct hs_api_param p[MAX_PARAMS];
	int n, too_many;
};

#ifndef HS_MHD_SONAME
#define HS_MHD_SONAME "libmicrohttpd.so.12"
#endif

/*
 * libmicrohttpd is loaded when a server starts, not with the program: it
 * brings gnutls and eight more libraries, 1.2 ms of the start of every
 * heapscope command (heapscope record's too, before the program runs).
 */
static struct {
	__typeof__(&MHD_start_daemon) start_daemon;
	__typeof__(&MHD_stop_daemon) stop_daemon;
	__typeof__(&MHD_create_response_from_buffer) create_response_from_buffer;
	__typeof__(&MHD_add_response_header) add_response_header;
	__typeof__(&MHD_queue_response) queue_response;
	__typeof__(&MHD_destroy_response) destroy_response;
	__typeof__(&MHD_lookup_connection_value) lookup_connection_value;
	__typeof__(&MHD_get_connection_values) get_connection_values;
} mhd;

/* as hooks.c finds the real malloc family */
#define MHD_RESOLVE(name)                                                                   \
	do {                                                                                \
		if (!(mhd.name = (__typeof__(mhd.name))dlsym(lib, "MHD_" #name))) {         \
			missing = "MHD_" #name;                                             \
			goto fail;                                                          \
		}                                                                           \
	} while (0)

static int mhd_load(char *err, size_t errlen)
{
	const char *missing;
	void *lib;

	if (mhd.start_daemon)
		return 0;
	if (!(lib = dlopen(HS_MHD_SONAME, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(err, errlen, "cannot load '%s' (%s); install libmicrohttpd (Debian: apt-get install libmicrohttpd12)",
			 HS_MHD_SONAME, dlerror());
		return -ENOENT;
	}
	MHD_RESOLVE(stop_daemon);
	MHD_RESOLVE(create_response_from_buffer);
	MHD_RESOLVE(add_response_header);
	MHD_RESOLVE(queue_response);
	MHD_RESOLVE(destroy_response);
	MHD_RESOLVE(lookup_connection_value);
	MHD_RESOLVE(get_connection_values);
	MHD_RESOLVE(start_daemon); /* last: it says all are there */
	return 0;
fail:
	snprintf(err, errlen, "'%s' has no '%s'; install libmicrohttpd 0.9.71 or later", HS_MHD_SONAME, missing);
	memset(&mhd, 0, sizeof(mhd));
	dlclose(lib);
	return -ENOENT;
}

static const char *content_type(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (!dot)
		return "application/octet-stream";
	if (!strcmp(dot, ".html"))
		return "text/html; charset=utf-8";
	if (!strcmp(dot, ".js"))
		return "text/javascript; charset=utf-8";
	if (!strcmp(dot, ".css"))
		return "text/css; charset=utf-8";
	if (!strcmp(dot, ".svg"))
		return "image/svg+xml";
	if (!strcmp(dot, ".json"))
		return "application/json";
	return "application/octet-stream";
}

static enum MHD_Result send_response(struct MHD_Connection *conn, int status, struct MHD_Response *res, const char *type)
{
	enum MHD_Result ret;

	if (!res)
		return MHD_NO;
	mhd.add_response_header(res, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	mhd.add_response_header(res, "X-Content-Type-Options", "nosniff");
	mhd.add_response_header(res, "Referrer-Policy", "no-referrer");
	mhd.add_response_header(res, "Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		mhd.add_response_header(res, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (!strncmp(type, "application/json", 16))
		mhd.add_response_header(res, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = mhd.queue_response(conn, (unsigned)status, res);
	mhd.destroy_response(res);
	return ret;
}

/*
 * The warnings, percent-encoded as encodeURIComponent does, in a header: it
 * suits every kind of body, and a header's value may hold neither line
 * breaks nor (portably) anything but ASCII.
 */
static void warning_header(struct MHD_Response *res, const char *w)
{
	static const char keep[] = "-_.!~*'()";
	size_t n = strlen(w);
	char *e = malloc(3 * n + 1), *o = e;

	if (!e)
		return;
	for (const unsigned char *c = (const unsigned char *)w; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || strchr(keep, *c)) {
			*o++ = (char)*c;
		} else {
			sprintf(o, "%%%02X", *c);
			o += 3;
		}
	}
	*o = 0;
	mhd.add_response_header(res, "X-Heapscope-Warning", e);
	free(e);
}

static enum MHD_Result send_reply(struct MHD_Connection *conn, struct hs_api_reply *reply)
{
	struct MHD_Response *res;
	char *warning = reply->warning;

	reply->warning = NULL;
	if (!reply->body) {
		free(warning);
		return MHD_NO;
	}
	res = mhd.create_response_from_buffer(reply->len, reply->body, MHD_RESPMEM_MUST_FREE);
	if (!res) {
		free(reply->body);
		free(warning);
		return MHD_NO;
	}
	reply->body = NULL;
	if (warning)
		warning_header(res, warning);
	free(warning);
	return send_response(conn, reply->status, res, reply->type ? reply->type : "application/json");
}

static enum MHD_Result send_error(struct MHD_Connection *conn, int status, const char *msg)
{
	struct hs_api_reply reply = { 0 };

	if (hs_api_error(&reply, status, msg) < 0)
		return MHD_NO;
	return send_reply(conn, &reply);
}

static enum MHD_Result collect(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct params *p = cls;

	(void)kind;
	if (p->n == MAX_PARAMS) {
		p->too_many = 1;
		return MHD_NO;
	}
	p->p[p->n].key = key;
	p->p[p->n++].value = value;
	return MHD_YES;
}

static int host_ok(const struct hs_server *s, const char *host)
{
	if (!host)
		return 0;
	for (int i = 0; i < s->nhosts; i++)
		if (!strcasecmp(host, s->hosts[i]))
			return 1;
	return 0;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
			      const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct hs_server *s = cls;
	struct params p = { .n = 0 };
	struct hs_api_reply reply;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)con_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return send_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD are served");
	if (!host_ok(s, mhd.lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)))
		return send_error(conn, MHD_HTTP_FORBIDDEN,
				  "the Host header names another server; open the address 'heapscope view' printed");
	if (!strncmp(url, "/api/", 5)) {
		mhd.get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect, &p);
		if (p.too_many)
			return send_error(conn, MHD_HTTP_BAD_REQUEST, "too many query parameters; give at most 64");
		if (hs_api_get(s->api, url + 5, p.p, p.n, &reply) < 0)
			return MHD_NO;
		return send_reply(conn, &reply);
	}
	if (!strcmp(url, "/"))
		url = "/index.html";
	for (size_t i = 0; i < hs_nassets; i++)
		if (url[0] == '/' && !strcmp(url + 1, hs_assets[i].name)) {
			struct MHD_Response *res = mhd.create_response_from_buffer(hs_assets[i].size, (void *)hs_assets[i].data,
										 MHD_RESPMEM_PERSISTENT);
			return send_response(conn, MHD_HTTP_OK, res, content_type(hs_assets[i].name));
		}
	return send_error(conn, MHD_HTTP_NOT_FOUND, "no such page; the viewer is at /");
}

static int add_host(struct hs_server *s, const char *name)
{
	char buf[300];

	if (s->nhosts == HS_SERVER_MAX_HOSTS)
		return 0;
	snprintf(buf, sizeof(buf), "%s:%u", name, s->port);
	if (!(s->hosts[s->nhosts] = strdup(buf)))
		return -ENOMEM;
	s->nhosts++;
	return 0;
}

/* Host values a browser sends for this server: loopback names, the bound address, and with 0.0.0.0 the machine's. */
static int make_hosts(struct hs_server *s)
{
	struct ifaddrs *ifs = NULL;
	char name[256];
	int rc;

	if ((rc = add_host(s, "127.0.0.1")) < 0 || (rc = add_host(s, "localhost")) < 0)
		goto out;
	if (strcmp(s->host, "127.0.0.1") && strcmp(s->host, "0.0.0.0") && (rc = add_host(s, s->host)) < 0)
		goto out;
	if (strcmp(s->host, "0.0.0.0"))
		goto out;
	if (gethostname(name, sizeof(name)) == 0) {
		name[sizeof(name) - 1] = 0;
		if ((rc = add_host(s, name)) < 0)
			goto out;
	}
	if (getifaddrs(&ifs) == 0)
		for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
				continue;
			if (!inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, name, sizeof(name)))
				continue;
			if ((rc = add_host(s, name)) < 0)
				goto out;
		}
out:
	if (ifs)
		freeifaddrs(ifs);
	return rc;
}

/*
 * Whether the address can be listened on, and if not why: libmicrohttpd
 * says only that it could not start, and every failure read as a port in
 * use ("no free port from 8080 to 8179" for an address not this
 * machine's, or for a --port given). 0, or -errno of bind().
 */
static int probe_bind(const struct sockaddr_in *sa)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, rc = 0;

	if (fd < 0)
		return 0; /* let the server say what it can */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

int hs_server_start(struct hs_server *s, struct hs_api *api, const char *host, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int rc = 0;

	memset(s, 0, sizeof(*s));
	s->api = api;
	s->port = port;
	snprintf(s->host, sizeof(s->host), "%s", host ? host : "127.0.0.1");
	if (inet_pton(AF_INET, s->host, &sa.sin_addr) != 1) {
		snprintf(s->err, sizeof(s->err), "bad address '%s' for --host; give an IPv4 address such as 127.0.0.1 or 0.0.0.0",
			 s->host);
		rc = -EINVAL;
		goto out;
	}
	if ((rc = make_hosts(s)) < 0) {
		snprintf(s->err, sizeof(s->err), "out of memory starting the server");
		goto out;
	}
	if ((rc = mhd_load(s->err, sizeof(s->err))) < 0)
		goto out;
	rc = probe_bind(&sa);
	if (rc == -EADDRINUSE) {
		snprintf(s->err, sizeof(s->err), "port %u on %s is in use; pick another --port", port, s->host);
		goto out;
	} else if (rc == -EADDRNOTAVAIL) {
		snprintf(s->err, sizeof(s->err), "'%s' is not an address of this machine; give --host 127.0.0.1, 0.0.0.0 or one of its own",
			 s->host);
		goto out;
	} else if (rc == -EACCES) {
		snprintf(s->err, sizeof(s->err), "port %u needs privileges to listen on; pick one above 1023 with --port", port);
		goto out;
	}
	rc = 0;
	s->d = mhd.start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO, port, NULL, NULL, handle, s,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)THREADS,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MAX_CONNECTIONS,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)TIMEOUT_S,
				MHD_OPTION_END);
	if (!s->d) {
		snprintf(s->err, sizeof(s->err), "cannot listen on %s:%u; pick another --port or check that the address is this machine's",
			 s->host, port);
		rc = -EADDRINUSE;
	}
out:
	if (rc < 0)
		hs_server_stop(s);
	return rc;
}

void hs_server_stop(struct hs_server *s)
{
	if (s->d)
		mhd.stop_daemon(s->d);
	s->d = NULL;
	for (int i = 0; i < s->nhosts; i++)
		free(s->hosts[i]);
	s->nhosts = 0;
}
