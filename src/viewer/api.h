/* api.h - the viewer's JSON API: answers /api/... requests from a trace loaded once, through the analysis library */
#ifndef HS_VIEWER_API_H
#define HS_VIEWER_API_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "../analysis/alloctab.h"
#include "heapscope/reader.h"

/*
 * The reader and its symbolizer are not thread-safe, so requests are
 * answered one at a time under lock; only aggregates are built per request.
 */
struct hs_api {
	const char *path;
	struct hs_reader *r;
	const struct hs_alloctab *tab;
	pthread_mutex_t lock;

	/* totals of the whole trace, computed once */
	double allocations, bytes, leaked_count, leaked_bytes;
	uint64_t peak_rss, peak_rss_ns;
};

/* One query parameter, decoded; value NULL when the parameter has no '='. */
struct hs_api_param {
	const char *key, *value;
};

/* The answer: a JSON body (malloc'd) and its HTTP status. */
struct hs_api_reply {
	int status;
	char *body;
	size_t len;
};

int hs_api_init(struct hs_api *api, const char *path, struct hs_reader *r, const struct hs_alloctab *tab);
void hs_api_free(struct hs_api *api);

/*
 * Answers GET /api/<endpoint>: 200 with the result, 400 for a malformed
 * request, 404 for an unknown endpoint, each with a JSON body. Returns 0,
 * or -ENOMEM when no body could be made.
 */
int hs_api_get(struct hs_api *api, const char *endpoint, const struct hs_api_param *params, int nparams,
	       struct hs_api_reply *reply);

/* A JSON {"error": msg} body with that status; 0 or -ENOMEM. */
int hs_api_error(struct hs_api_reply *reply, int status, const char *msg);

#endif
