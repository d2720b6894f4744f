/* api.h - the viewer's JSON API: answers /api/... requests from a trace loaded once, through the analysis library */
#ifndef HS_VIEWER_API_H
#define HS_VIEWER_API_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "../analysis/alloctab.h"
#include "heapscope/reader.h"

enum hs_api_state { HS_API_LOADING, HS_API_READY, HS_API_FAILED };

/* One trace served: its reader, and once loaded its table and totals computed once. */
struct hs_api_trace {
	const char *path;
	struct hs_reader *r;
	const struct hs_alloctab *tab;   /* NULL until loaded */
	uint64_t size;                   /* of the file, for the loading fraction */
	uint64_t offset;                 /* read so far */
	double allocations, bytes, leaked_count, leaked_bytes;
	uint64_t peak_rss, peak_rss_ns;
};

/*
 * The reader and its symbolizer are not thread-safe, so requests are
 * answered one at a time under lock; only aggregates are built per request.
 * The traces load in another thread while the server already answers:
 * until they are loaded every data endpoint says so (503), and
 * /api/status tells how far loading is without waiting for the lock.
 */
struct hs_api {
	struct hs_api_trace t[2];   /* t[0]: the trace, or the base of a comparison; t[1]: the new one */
	int ntraces;
	pthread_mutex_t lock;
	pthread_mutex_t state_lock;     /* state, offsets, err, told */
	uint64_t told;                  /* replies that told the fraction read */
	enum hs_api_state state;
	char err[512];
	int binary_dirs;                /* --binaries was given: for the words of the unnamed modules' warnings */
};
/* One query parameter, decoded; value NULL when the parameter has no '='. */
struct hs_api_param {
	const char *key, *value;
};

/*
 * The answer: a body (malloc'd), its HTTP status and type (NULL: JSON), and
 * what the command line would have said on stderr (malloc'd lines, or NULL):
 * the filter's warnings, frames left unnamed.
 */
struct hs_api_reply {
	int status;
	const char *type;
	char *body;
	size_t len;
	char *warning;
};

/* Serves ntraces (1 or 2) readers, loading: data endpoints answer 503 until hs_api_loaded(). 0 or -errno. */
int hs_api_init(struct hs_api *api, int ntraces, const char *const *paths, struct hs_reader *const *readers,
		const uint64_t *sizes);
void hs_api_free(struct hs_api *api);

/*
 * From the loading thread: trace i has been read up to this file offset.
 * Returns how many replies have told the fraction read so far, for
 * hs_api_told().
 */
uint64_t hs_api_progress(struct hs_api *api, int i, uint64_t offset);
/* How many replies (the status, a 503) have told the fraction read. */
uint64_t hs_api_told(struct hs_api *api);
/* From the loading thread: every table is loaded (tabs[i] for trace i); the data endpoints answer from now on. */
void hs_api_loaded(struct hs_api *api, const struct hs_alloctab *tabs);
/* From the loading thread: loading failed; msg is what every data endpoint answers. */
void hs_api_failed(struct hs_api *api, const char *msg);
enum hs_api_state hs_api_state_get(struct hs_api *api);

/*
 * Answers GET /api/<endpoint>: 200 with the result, 400 for a malformed
 * request, 404 for an unknown endpoint, 503 while the traces load, each
 * with a JSON body (folded stacks: text). Returns 0, or -ENOMEM when no
 * body could be made.
 */
int hs_api_get(struct hs_api *api, const char *endpoint, const struct hs_api_param *params, int nparams,
	       struct hs_api_reply *reply);

/* A JSON {"error": msg} body with that status; 0 or -ENOMEM. */
int hs_api_error(struct hs_api_reply *reply, int status, const char *msg);

#endif
