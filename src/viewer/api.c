/* api.c - the viewer's JSON API: query parameters to the CLI filter language, then the analysis library and its JSON writers */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/diff.h"
#include "../analysis/filter.h"
#include "../analysis/flame.h"
#include "../analysis/leaks.h"
#include "../analysis/lifetimes.h"
#include "../analysis/stacks.h"
#include "../analysis/timeline.h"
#include "../analysis/timespec.h"
#include "../analysis/top.h"
#include "../render/diff.h"
#include "../render/flame.h"
#include "../render/format.h"
#include "../render/leaks.h"
#include "../render/timeline.h"
#include "../render/top.h"
#include "api.h"

enum endpoint { EP_INFO, EP_TIMELINE, EP_FLAME, EP_TOP, EP_LEAKS, EP_LIFETIMES, EP_DIFF, EP_FOLDED, EP_STATUS, EP_COUNT };

static const char *const endpoint_names[EP_COUNT] = { "info", "timeline", "flame", "top", "leaks", "lifetimes", "diff",
						       "folded", "status" };

/* The parameters of each endpoint besides the filters, for checks and messages. */
static const char *const endpoint_params[EP_COUNT] = {
	"",
	"points, trace",
	"weight, at, direction, min, trace, compare",
	"by, sort, n, frames, callers, path, trace",
	"by, n, frames, all, trace",
	"points, trace",
	"by, sort, n, frames, callers, path",
	"weight, at, trace",
	"",
};

static const char *const trace_names[] = { "base", "new" };

static const char *const by_names[] = { "backtrace", "function", "line", "library" };

/* Filter options that take no value, and those that take two (T1,T2 in a query). */
static const char *const filter_flags[] = { "leaked", "temporary", "no-default-hide", NULL };
static const char *const filter_pairs[] = { "allocated-between", "live-between", "freed-between", NULL };

#define MAX_POINTS 10000
#define DEFAULT_POINTS 400
#define MAX_LIFETIME_POINTS 100000
#define MAX_PATH 64   /* levels of callers=ROW&path=R1,R2,... */
#define DEFAULT_LIFETIME_POINTS 5000

/* f: the filter against the trace answered (the base one when comparing); f2 the same options against the new one. */
struct request {
	enum endpoint ep;
	struct hs_filter f, f2;
	int by, sort, n, frames, points, weight, down, all;
	int have_weight, have_at, have_sort, trace, compare;
	const char *callers, *path_arg;
	int path[MAX_PATH], depth;     /* path=R1,R2,...: a rank in each level of callers */
	double min;
	struct hs_timespec at;
	char err[1024];
};

int hs_api_error(struct hs_api_reply *reply, int status, const char *msg)
{
	FILE *f;

	free(reply->body);
	reply->body = NULL;
	reply->type = NULL;
	reply->len = 0;
	reply->status = status;
	if (!(f = open_memstream(&reply->body, &reply->len)))
		return -ENOMEM;
	fputs("{\"error\": ", f);
	hs_json_string(f, msg);
	fputs("}\n", f);
	if (fclose(f) != 0)
		return -ENOMEM;
	return 0;
}

int hs_api_init(struct hs_api *api, int ntraces, const char *const *paths, struct hs_reader *const *readers,
		const uint64_t *sizes)
{
	int rc;

	memset(api, 0, sizeof(*api));
	api->ntraces = ntraces;
	for (int i = 0; i < ntraces; i++) {
		api->t[i].path = paths[i];
		api->t[i].r = readers[i];
		api->t[i].size = sizes[i];
	}
	if ((rc = pthread_mutex_init(&api->lock, NULL)) != 0)
		return -rc;
	if ((rc = pthread_mutex_init(&api->state_lock, NULL)) != 0) {
		pthread_mutex_destroy(&api->lock);
		return -rc;
	}
	return 0;
}

void hs_api_free(struct hs_api *api)
{
	pthread_mutex_destroy(&api->state_lock);
	pthread_mutex_destroy(&api->lock);
}

uint64_t hs_api_progress(struct hs_api *api, int i, uint64_t offset)
{
	uint64_t told;

	pthread_mutex_lock(&api->state_lock);
	api->t[i].offset = offset;
	told = api->told;
	pthread_mutex_unlock(&api->state_lock);
	return told;
}

uint64_t hs_api_told(struct hs_api *api)
{
	uint64_t told;

	pthread_mutex_lock(&api->state_lock);
	told = api->told;
	pthread_mutex_unlock(&api->state_lock);
	return told;
}

static void totals(struct hs_api_trace *tr, const struct hs_alloctab *tab)
{
	for (uint64_t i = 0; i < tab->n; i++) {
		const struct hs_alloc *a = hs_alloctab_at(tab, i);
		double size = (double)hs_alloc_size(a), w = hs_alloctab_weight(tab, hs_alloc_size(a));
		tr->allocations += w;
		tr->bytes += w * size;
		if (hs_alloc_leaked(a)) {
			tr->leaked_count += w;
			tr->leaked_bytes += w * size;
		}
	}
	for (uint64_t i = 0; i < tab->nrss; i++)
		if (tab->rss[i].rss > tr->peak_rss) {
			tr->peak_rss = tab->rss[i].rss;
			tr->peak_rss_ns = tab->rss[i].time_ns;
		}
}

void hs_api_loaded(struct hs_api *api, const struct hs_alloctab *tabs)
{
	/* no request reads the totals before the state says ready, so they are summed outside the lock */
	for (int i = 0; i < api->ntraces; i++)
		totals(&api->t[i], &tabs[i]);
	pthread_mutex_lock(&api->state_lock);
	for (int i = 0; i < api->ntraces; i++) {
		api->t[i].tab = &tabs[i];
		api->t[i].offset = api->t[i].size;
	}
	api->state = HS_API_READY;
	pthread_mutex_unlock(&api->state_lock);
}

void hs_api_failed(struct hs_api *api, const char *msg)
{
	pthread_mutex_lock(&api->state_lock);
	snprintf(api->err, sizeof(api->err), "%s", msg);
	api->state = HS_API_FAILED;
	pthread_mutex_unlock(&api->state_lock);
}

enum hs_api_state hs_api_state_get(struct hs_api *api)
{
	enum hs_api_state s;

	pthread_mutex_lock(&api->state_lock);
	s = api->state;
	pthread_mutex_unlock(&api->state_lock);
	return s;
}

/* Fraction of the traces' bytes read, under state_lock; below 1 until loaded, since the table is built after the last read. */
static double fraction(const struct hs_api *api)
{
	double done = 0, size = 0;

	if (api->state == HS_API_READY)
		return 1;
	for (int i = 0; i < api->ntraces; i++) {
		done += (double)(api->t[i].offset < api->t[i].size ? api->t[i].offset : api->t[i].size);
		size += (double)api->t[i].size;
	}
	return size > 0 && done < size ? done / size : 0.999;
}

/* heapscope-viewer-status/1, answered at once whatever the other requests are doing. */
static int status_reply(struct hs_api *api, struct hs_api_reply *reply)
{
	static const char *const states[] = { "loading", "ready", "failed" };
	FILE *f;

	memset(reply, 0, sizeof(*reply));
	reply->status = 200;
	if (!(f = open_memstream(&reply->body, &reply->len)))
		return -ENOMEM;
	pthread_mutex_lock(&api->state_lock);
	fprintf(f, "{\"schema\": \"heapscope-viewer-status/1\", \"state\": \"%s\", \"fraction\": %.4f, \"error\": ",
		states[api->state], fraction(api));
	api->told++;
	if (api->state == HS_API_FAILED)
		hs_json_string(f, api->err);
	else
		fputs("null", f);
	fputs(", \"traces\": [", f);
	for (int i = 0; i < api->ntraces; i++) {
		fprintf(f, "%s{\"file\": ", i ? ", " : "");
		hs_json_string(f, api->t[i].path);
		fprintf(f, ", \"size\": %llu, \"read\": %llu}", (unsigned long long)api->t[i].size,
			(unsigned long long)(api->t[i].offset < api->t[i].size ? api->t[i].offset : api->t[i].size));
	}
	fputs("]}\n", f);
	pthread_mutex_unlock(&api->state_lock);
	if (fclose(f) != 0) {
		free(reply->body);
		reply->body = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* 1 when the data endpoints can answer; else 0 with the reply telling why (503 loading, 500 failed). */
static int ready(struct hs_api *api, struct hs_api_reply *reply)
{
	char msg[700];
	double frac;
	int state, rc = 0;

	pthread_mutex_lock(&api->state_lock);
	state = api->state;
	frac = fraction(api);
	if (state == HS_API_LOADING)
		api->told++;
	if (state == HS_API_FAILED)
		snprintf(msg, sizeof(msg), "%s", api->err);
	pthread_mutex_unlock(&api->state_lock);
	if (state == HS_API_READY)
		return 1;
	if (state == HS_API_LOADING)
		snprintf(msg, sizeof(msg), "the trace is still loading (%.0f%%); wait until /api/status says \"ready\"", 100 * frac);
	rc = hs_api_error(reply, state == HS_API_LOADING ? 503 : 500, msg);
	if (rc == 0 && reply->len > 2 && state == HS_API_LOADING) {
		/* the error body plus the state, so a client can show progress from any endpoint */
		char *b = realloc(reply->body, reply->len + 64);
		if (b) {
			reply->body = b;
			reply->len -= 2;
			reply->len += (size_t)sprintf(b + reply->len, ", \"state\": \"loading\", \"fraction\": %.4f}\n", frac);
		}
	}
	return rc < 0 ? rc : 0;
}

static int in_list(const char *s, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (!strcmp(s, list[i]))
			return 1;
	return 0;
}

/* A count in [lo, hi]; 0 or -1. */
static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end || errno || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static int pick(const char *s, const char *const *names, int n, int *out)
{
	for (int i = 0; s && i < n; i++)
		if (!strcmp(s, names[i])) {
			*out = i;
			return 0;
		}
	return -1;
}

/* Hands one query parameter to the filter parser as the CLI would see it: 1 taken, 0 not a filter, -1 bad. */
static int filter_param(struct request *q, const char *key, const char *v)
{
	char *argv[3] = { NULL, NULL, NULL }, *buf = NULL, *comma;
	int argc = 1, i = 0, rc;
	size_t len = strlen(key) + (v ? strlen(v) : 0) + 4;

	if (!(buf = malloc(len)))
		return snprintf(q->err, sizeof(q->err), "out of memory"), -1;
	if (in_list(key, filter_flags)) {
		if (v && *v && strcmp(v, "1") && strcmp(v, "true")) {
			if (!strcmp(v, "0") || !strcmp(v, "false")) {
				free(buf);
				return 1;
			}
			snprintf(q->err, sizeof(q->err), "bad value '%s' for %s; use %s=1 or leave it out", v, key, key);
			free(buf);
			return -1;
		}
		snprintf(buf, len, "--%s", key);
		argv[0] = buf;
	} else if (in_list(key, filter_pairs)) {
		snprintf(buf, len, "--%s%c%s", key, 0, v ? v : "");
		argv[0] = buf;
		argv[1] = buf + strlen(key) + 3;
		if (!(comma = strchr(argv[1], ',')) || strchr(comma + 1, ',')) {
			snprintf(q->err, sizeof(q->err), "%s takes two times T1,T2 (e.g. %s=1s,2.5s or %s=0%%,50%%)", key, key, key);
			free(buf);
			return -1;
		}
		*comma = 0;
		argv[2] = comma + 1;
		argc = 3;
	} else {
		snprintf(buf, len, "--%s=%s", key, v ? v : "");
		argv[0] = buf;
	}
	rc = hs_filter_parse(&q->f, argc, argv, &i);
	if (rc > 0) {
		int j = 0;
		hs_filter_parse(&q->f2, argc, argv, &j);
	}
	free(buf);
	if (rc < 0) {
		snprintf(q->err, sizeof(q->err), "%s", q->f.err);
		return -1;
	}
	return rc;
}

/* path=R1,R2,...: row numbers from 1; 0 or -1. */
static int parse_path(struct request *q, const char *v)
{
	char buf[16];

	q->depth = 0;
	while (v && *v) {
		size_t len = strcspn(v, ",");
		if (len == 0 || len >= sizeof(buf) || q->depth == MAX_PATH)
			return -1;
		memcpy(buf, v, len);
		buf[len] = 0;
		if (parse_int(buf, 1, 1000000000, &q->path[q->depth++]) < 0)
			return -1;
		v += len;
		if (*v == ',' && !*++v)
			return -1;
	}
	return q->depth ? 0 : -1;
}

/* An endpoint's own parameter: 0, or -1 with q->err set. */
static int own_param(struct request *q, const char *key, const char *v)
{
	enum endpoint ep = q->ep;
	int flame = ep == EP_FLAME || ep == EP_FOLDED;

	if (ep != EP_DIFF && *endpoint_params[ep] && !strcmp(key, "trace")) {
		if (pick(v, trace_names, 2, &q->trace) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad value '%s' for trace; use base (the first trace) or new (the second)", v ? v : "");
	} else if (ep == EP_FLAME && !strcmp(key, "compare")) {
		if (!v || !*v || !strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "0") || !strcmp(v, "false")) {
			q->compare = !v || !*v || !strcmp(v, "1") || !strcmp(v, "true");
			return 0;
		}
		snprintf(q->err, sizeof(q->err), "bad value '%s' for compare; use compare=1 or leave it out", v);
	} else if (ep == EP_DIFF && !strcmp(key, "sort")) {
		q->have_sort = 1;
		if (pick(v, hs_diff_sort_names, HS_DIFF_SORTS, &q->sort) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad value '%s' for sort; use change, bytes, peak, leaked or calls", v ? v : "");
	} else if (ep == EP_TIMELINE && !strcmp(key, "points")) {
		if (parse_int(v, 2, MAX_POINTS, &q->points) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad value '%s' for points; give a number from 2 to %d", v ? v : "", MAX_POINTS);
	} else if (ep == EP_LIFETIMES && !strcmp(key, "points")) {
		if (parse_int(v, 1, MAX_LIFETIME_POINTS, &q->points) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad value '%s' for points; give a number from 1 to %d", v ? v : "",
			 MAX_LIFETIME_POINTS);
	} else if (flame && !strcmp(key, "weight")) {
		q->have_weight = 1;
		if (pick(v, hs_flame_weight_names, HS_WEIGHT_COUNT_, &q->weight) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad value '%s' for weight; use bytes, count, leaked or live", v ? v : "");
	} else if (flame && !strcmp(key, "at")) {
		q->have_at = 1;
		if (v && hs_timespec_parse(&q->at, v, 0) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad time '%s' for at; use %s", v ? v : "", HS_TIMESPEC_FORMS);
	} else if (ep == EP_FLAME && !strcmp(key, "direction")) {
		if (v && (!strcmp(v, "down") || !strcmp(v, "up"))) {
			q->down = !strcmp(v, "down");
			return 0;
		}
		snprintf(q->err, sizeof(q->err), "bad value '%s' for direction; use down or up", v ? v : "");
	} else if (ep == EP_FLAME && !strcmp(key, "min")) {
		char *end = NULL;
		double m = v ? strtod(v, &end) : -1;
		if (v && *v && !*end && m >= 0 && m <= 1) {
			q->min = m;
			return 0;
		}
		snprintf(q->err, sizeof(q->err), "bad value '%s' for min; give a fraction of the total from 0 to 1 (0.005)", v ? v : "");
	} else if ((ep == EP_TOP || ep == EP_LEAKS || ep == EP_DIFF) && !strcmp(key, "by")) {
		if (pick(v, by_names, 4, &q->by) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad value '%s' for by; use backtrace, function, line or library", v ? v : "");
	} else if (ep == EP_TOP && !strcmp(key, "sort")) {
		if (pick(v, hs_top_sort_names, HS_SORT_COUNT, &q->sort) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad value '%s' for sort; use calls, bytes, peak, leaked or temporary", v ? v : "");
	} else if ((ep == EP_TOP || ep == EP_LEAKS || ep == EP_DIFF) && !strcmp(key, "n")) {
		if (parse_int(v, 0, 1000000000, &q->n) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad value '%s' for n; give a number of rows (0: all)", v ? v : "");
	} else if ((ep == EP_TOP || ep == EP_LEAKS || ep == EP_DIFF) && !strcmp(key, "frames")) {
		if (parse_int(v, 0, HS_STACKS_MAX_FRAMES, &q->frames) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad value '%s' for frames; give a number of frames", v ? v : "");
	} else if ((ep == EP_TOP || ep == EP_DIFF) && !strcmp(key, "path")) {
		q->path_arg = v;
		if (parse_path(q, v) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad value '%s' for path; give the ranks of the callers chosen at each level, "
			 "comma-separated (path=2,1), at most %d", v ? v : "", MAX_PATH);
	} else if ((ep == EP_TOP || ep == EP_DIFF) && !strcmp(key, "callers")) {
		int row;
		q->callers = v;
		if (parse_int(v, 1, 1000000000, &row) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad value '%s' for callers; give a row number of the same listing", v ? v : "");
	} else if (ep == EP_LEAKS && !strcmp(key, "all")) {
		if (!v || !*v || !strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "0") || !strcmp(v, "false")) {
			q->all = !v || !*v || !strcmp(v, "1") || !strcmp(v, "true");
			return 0;
		}
		snprintf(q->err, sizeof(q->err), "bad value '%s' for all; use all=1 or leave it out", v);
	} else if (*endpoint_params[ep]) {
		snprintf(q->err, sizeof(q->err), "unknown parameter '%s' for /api/%s; use the filter options of docs/analysis.md or %s",
			 key, endpoint_names[ep], endpoint_params[ep]);
	} else {
		snprintf(q->err, sizeof(q->err), "unknown parameter '%s' for /api/%s; it takes none", key, endpoint_names[ep]);
	}
	return -1;
}

static int parse_request(struct request *q, int ntraces, const struct hs_api_param *params, int nparams)
{
	for (int i = 0; i < nparams; i++) {
		const char *key = params[i].key, *v = params[i].value;
		int k = 0;
		if (!key || !*key || key[0] == '-') {
			snprintf(q->err, sizeof(q->err), "bad parameter name '%s' for /api/%s; write names without dashes (live-between=1s,2s)",
				 key ? key : "", endpoint_names[q->ep]);
			return -1;
		}
		if (q->ep != EP_INFO && q->ep != EP_STATUS && (k = filter_param(q, key, v)) < 0)
			return -1;
		if (k == 0 && own_param(q, key, v) < 0)
			return -1;
	}
	if (ntraces < 2 && (q->trace == 1 || q->compare || q->ep == EP_DIFF)) {
		snprintf(q->err, sizeof(q->err), "%s needs two traces; start 'heapscope view BASE NEW' to compare",
			 q->ep == EP_DIFF ? "/api/diff" : q->compare ? "compare=1" : "trace=new");
		return -1;
	}
	if (q->path_arg && !q->callers) {
		snprintf(q->err, sizeof(q->err), "path walks up the callers of a row; give callers=ROW with it");
		return -1;
	}
	if (q->compare && q->trace == 1) {
		snprintf(q->err, sizeof(q->err), "compare=1 shows both traces; drop trace=new");
		return -1;
	}
	if ((q->ep == EP_FLAME || q->ep == EP_FOLDED) && q->have_at) {
		if (!q->have_weight)
			q->weight = HS_WEIGHT_LIVE;
		else if (q->weight != HS_WEIGHT_LIVE) {
			snprintf(q->err, sizeof(q->err), "at applies to weight=live, not '%s'; drop one of them",
				 hs_flame_weight_names[q->weight]);
			return -1;
		}
	}
	return 0;
}

static void info_fields(FILE *f, const struct hs_api_trace *tr)
{
	const struct hs_trace_info *in = hs_reader_info(tr->r);
	const struct hs_alloctab *t = tr->tab;

	fputs("\"file\": ", f);
	hs_json_string(f, tr->path);
	fprintf(f, ", \"pid\": %u, \"ppid\": %u, \"exe\": ", in->pid, in->ppid);
	hs_json_string(f, in->exe);
	fputs(", \"cmdline\": [", f);
	for (int i = 0; i < in->argc; i++) {
		fputs(i ? ", " : "", f);
		hs_json_string(f, in->argv[i]);
	}
	fprintf(f, "], \"duration_ns\": %llu, \"end\": \"%s\", \"being_written\": %s, \"signal\": %d, \"mode\": \"%s\", "
		   "\"sample_bytes\": %llu, \"estimated\": %s,\n",
		(unsigned long long)t->end_ns,
		!t->clean_exit && !t->signal && in->being_written ? "running"
		: hs_fmt_end_key(t->clean_exit, t->end_reason, t->signal),
		in->being_written ? "true" : "false", t->signal,
		t->sample_bytes ? "sampled" : "full", (unsigned long long)t->sample_bytes, t->sample_bytes ? "true" : "false");
	fprintf(f, " \"records\": %llu, \"allocations\": %.0f, \"bytes_allocated\": %.0f, \"threads\": %u,\n",
		(unsigned long long)t->n, tr->allocations, tr->bytes, t->ntids);
	fprintf(f, " \"peak_heap\": {\"bytes\": %.0f, \"time_ns\": %llu},\n", t->peak_heap, (unsigned long long)t->peak_ns);
	if (t->nrss)
		fprintf(f, " \"peak_rss\": {\"bytes\": %llu, \"time_ns\": %llu},\n", (unsigned long long)tr->peak_rss,
			(unsigned long long)tr->peak_rss_ns);
	else
		fputs(" \"peak_rss\": null,\n", f);
	fprintf(f, " \"leaked\": {\"count\": %.0f, \"bytes\": %.0f},\n \"markers\": [", tr->leaked_count, tr->leaked_bytes);
	for (uint64_t i = 0; i < t->nmarkers; i++) {
		fprintf(f, "%s{\"time_ns\": %llu, \"label\": ", i ? ", " : "", (unsigned long long)t->markers[i].time_ns);
		hs_json_string(f, t->markers[i].label);
		fputc('}', f);
	}
	fputc(']', f);
}

/* The trace's fields at the top level (the base one when comparing), and the new trace's under "compare". */
static void info_json(FILE *f, struct hs_api *api)
{
	fputs("{\"schema\": \"heapscope-viewer-info/1\", ", f);
	info_fields(f, &api->t[0]);
	if (api->ntraces > 1) {
		fputs(",\n \"compare\": {", f);
		info_fields(f, &api->t[1]);
		fputs("}}\n", f);
	} else {
		fputs(",\n \"compare\": null}\n", f);
	}
}

/* The moment of weight=live in one trace (the peak by default): times like peak+1s resolve in each trace. */
static uint64_t live_at(const struct hs_api_trace *tr, const struct request *q)
{
	struct hs_timespec peak = { .anchor = HS_TIME_PEAK };

	if (q->weight != HS_WEIGHT_LIVE)
		return 0;
	return hs_timespec_moment(q->have_at ? &q->at : &peak, tr->tab->end_ns, tr->tab->peak_ns);
}

struct child {
	uint32_t id;
	double weight;
	const char *name;
};

/* Heaviest first, ties by name as in the SVG: the order in which the tree made the nodes is no answer */
static int by_weight(const void *a, const void *b)
{
	const struct child *x = a, *y = b;
	int c;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	if ((c = strcmp(x->name, y->name)) != 0)
		return c;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The children of a node, heaviest first: next() walks the siblings from first, weight() weighs each, name() names it. */
static int sorted_kids(const void *ctx, uint32_t first, uint32_t (*next)(const void *, uint32_t),
		       double (*weight)(const void *, uint32_t), const char *(*name)(const void *, uint32_t),
		       struct child **out, uint32_t *n)
{
	struct child *kids = NULL;
	uint32_t nkids = 0, cap = 0;

	for (uint32_t c = first; c; c = next(ctx, c)) {
		if (nkids == cap) {
			struct child *nk = realloc(kids, (cap = cap ? cap * 2 : 8) * sizeof(*kids));
			if (!nk) {
				free(kids);
				return -ENOMEM;
			}
			kids = nk;
		}
		kids[nkids].id = c;
		kids[nkids].name = name(ctx, c);
		kids[nkids++].weight = weight(ctx, c);
	}
	if (nkids)
		qsort(kids, nkids, sizeof(*kids), by_weight);
	*out = kids;
	*n = nkids;
	return 0;
}

/* A node's name, file and line, the start of its JSON object. */
static void node_head(FILE *f, const struct hs_flame *fl, const struct hs_flame_node *n)
{
	fputs("{\"name\": ", f);
	hs_json_string(f, hs_names_str(&fl->names, n->name));
	fputs(", \"file\": ", f);
	if (n->file && !n->several_lines)
		hs_json_string(f, n->file);
	else
		fputs("null", f);
	fprintf(f, ", \"line\": %d", n->several_lines ? 0 : n->line);
}

static uint32_t flame_next(const void *ctx, uint32_t id)
{
	return ((const struct hs_flame *)ctx)->nodes[id].next_sibling;
}

static double flame_weight(const void *ctx, uint32_t id)
{
	return ((const struct hs_flame *)ctx)->nodes[id].weight;
}

static const char *flame_name(const void *ctx, uint32_t id)
{
	const struct hs_flame *fl = ctx;

	return hs_names_str(&fl->names, fl->nodes[id].name);
}

/* One node and the children at or above thresh; the others summed into one "other" node. */
static int flame_node(FILE *f, const struct hs_flame *fl, uint32_t id, double thresh)
{
	const struct hs_flame_node *n = &fl->nodes[id];
	struct child *kids = NULL;
	uint32_t nkids = 0, shown = 0;
	double other = 0, other_count = 0;
	int rc;

	if ((rc = sorted_kids(fl, n->first_child, flame_next, flame_weight, flame_name, &kids, &nkids)) < 0)
		goto out;
	node_head(f, fl, n);
	fprintf(f, ", \"value\": %.0f, \"count\": %.0f, \"children\": [", n->weight, n->count);
	for (uint32_t k = 0; k < nkids; k++) {
		if (kids[k].weight < thresh || kids[k].weight <= 0) {
			other += kids[k].weight;
			other_count += fl->nodes[kids[k].id].count;
			continue;
		}
		fputs(shown++ ? ", " : "", f);
		if ((rc = flame_node(f, fl, kids[k].id, thresh)) < 0)
			goto out;
	}
	if (other > 0)
		fprintf(f, "%s{\"name\": \"other\", \"file\": null, \"line\": 0, \"value\": %.0f, \"count\": %.0f, \"other\": true, \"children\": []}",
			shown ? ", " : "", other, other_count);
	fputs("]}", f);
out:
	free(kids);
	return rc;
}

static int flame_json(FILE *f, struct hs_api_trace *tr, struct request *q, struct hs_stacks *st)
{
	struct hs_flame fl = { 0 };
	uint64_t at_ns = live_at(tr, q);
	int rc;

	/* children under min are summed, not shown: what lies under them need not be built (half: rounding) */
	if ((rc = hs_flame_weights(&fl, tr->tab, &q->f, st, (enum hs_flame_weight)q->weight, at_ns, q->down)) < 0 ||
	    (rc = hs_flame_tree(&fl, st, q->min / 2)) < 0)
		goto out;
	fputs("{\"schema\": \"heapscope-viewer-flame/1\", \"file\": ", f);
	hs_json_string(f, tr->path);
	fputs(", \"filter\": ", f);
	hs_json_string(f, q->f.desc);
	fprintf(f, ", \"weight\": \"%s\", \"direction\": \"%s\", \"at_ns\": %llu, \"min\": %g, \"total\": %.0f, \"count\": %.0f,\n \"root\": ",
		hs_flame_weight_names[q->weight], q->down ? "down" : "up", (unsigned long long)fl.at_ns, q->min, fl.total, fl.count);
	if ((rc = flame_node(f, &fl, 0, q->min * fl.total)) < 0)
		goto out;
	fputs("}\n", f);
out:
	hs_flame_free(&fl);
	return rc;
}

/*
 * A document of a render function (ending "}\n") less its closing brace, so
 * that the viewer can add its own fields; -ENOMEM when it could not be made.
 */
static int render_open(FILE *f, FILE *m, char **doc, size_t *len)
{
	if (fclose(m) != 0 || *len < 2 || strcmp(*doc + *len - 2, "}\n"))
		return -ENOMEM;
	fwrite(*doc, 1, *len - 2, f);
	return 0;
}

/* "caller_path": the row then each caller chosen by path, with their names (names[0 .. depth]). */
static void caller_path_json(FILE *f, const struct request *q, int row, const char *const *names)
{
	fputs(",\n \"caller_path\": [", f);
	for (int k = 0; k <= q->depth; k++) {
		fprintf(f, "%s{\"rank\": %d, \"name\": ", k ? ", " : "", k ? q->path[k - 1] : row);
		hs_json_string(f, names[k]);
		fputc('}', f);
	}
	fputc(']', f);
}

/* The 400 of a rank beyond a listing: level 0 is the callers=ROW row, level k the k-th entry of path. */
static int no_row(struct hs_api_reply *reply, int level, int rank, uint32_t nrows, const char *of)
{
	char msg[1400];

	if (level == 0)
		snprintf(msg, sizeof(msg), "no row %d for callers: the listing with these filters has %u rows", rank, nrows);
	else
		snprintf(msg, sizeof(msg), "no row %d at level %d of path: '%s' has %u callers with these filters; "
			 "give a rank of that listing", rank, level, of, nrows);
	return hs_api_error(reply, 400, msg);
}

/* The number of callers=ROW when the listing has it; else 0 with the 400 in reply (*rc: hs_api_error's). */
static int callers_row(const struct request *q, uint32_t nrows, struct hs_api_reply *reply, int *rc)
{
	int row = 0;

	parse_int(q->callers, 1, 1000000000, &row);
	if ((uint32_t)row <= nrows)
		return row;
	*rc = no_row(reply, 0, row, nrows, NULL);
	return 0;
}

/* heapscope-top/1; with callers=ROW&path=R1,... each level is a listing of the callers of the row chosen in the one before. */
static int top_json(FILE *f, struct hs_api_trace *tr, struct request *q, struct hs_stacks *st, struct hs_api_reply *reply)
{
	struct hs_render_top ctx = { .path = tr->path, .tab = tr->tab, .filter = &q->f, .st = st, .limit = q->n,
				     .frames = q->frames };
	struct hs_top top = { 0 }, sub = { 0 };
	const char *names[MAX_PATH + 1];
	uint32_t keys[MAX_PATH];
	char name[1100], *doc = NULL;
	size_t len = 0;
	FILE *m = NULL;
	int rc, row = 0;

	if ((rc = hs_top_build(&top, tr->tab, &q->f, st, (enum hs_top_sort)q->sort, HS_STACKS_NO_KEY)) < 0)
		goto out;
	if (!q->callers) {
		hs_render_top_json(f, &ctx, &top);
		goto out;
	}
	if (!(row = callers_row(q, top.nrows, reply, &rc)))
		goto out;
	ctx.focus_row = row;
	names[0] = ctx.focus_name = hs_render_top_row_name(&ctx, &top, &top.rows[row - 1], name, sizeof(name));
	for (int k = 0;; k++) {
		hs_top_free(&sub);
		if ((rc = hs_top_build_path(&sub, tr->tab, &q->f, st, (enum hs_top_sort)q->sort, top.rows[row - 1].key, keys, k)) < 0)
			goto out;
		if (k == q->depth)
			break;
		if ((uint32_t)q->path[k] > sub.nrows) {
			rc = no_row(reply, k + 1, q->path[k], sub.nrows, names[k]);
			goto out;
		}
		keys[k] = sub.rows[q->path[k] - 1].key;
		/* caller names live in the stacks' name table, which outlives the request's loop */
		names[k + 1] = ctx.focus_name = hs_stacks_key_name(st, keys[k], 1, NULL, 0);
	}
	if (!(m = open_memstream(&doc, &len))) {
		rc = -ENOMEM;
		goto out;
	}
	hs_render_top_json(m, &ctx, &sub);
	if ((rc = render_open(f, m, &doc, &len)) < 0)
		goto out;
	caller_path_json(f, q, row, names);
	fputs("}\n", f);
out:
	free(doc);
	hs_top_free(&sub);
	hs_top_free(&top);
	return rc;
}

static unsigned leaks_bucket(uint64_t ns, uint64_t end)
{
	unsigned b = end ? (unsigned)((double)ns * HS_LEAKS_BUCKETS / (double)end) : 0;
	return b < HS_LEAKS_BUCKETS ? b : HS_LEAKS_BUCKETS - 1;
}

/*
 * The heapscope-leaks/1 document of the CLI plus "kept_live": for each listed site, in the same order, the live
 * bytes of its kept blocks (leaked, or freed in the last 2% after living 2% of the run) at the end of each 2% of
 * the run, on the same buckets as its "live" series.
 */
static int leaks_json(FILE *f, struct hs_api_trace *tr, struct request *q, struct hs_stacks *st,
		      const struct hs_render_leaks *ctx, const struct hs_leaks *lk)
{
	const struct hs_alloctab *t = tr->tab;
	uint64_t end = t->end_ns, late = end - end / 50, min_life = end / 50;
	uint32_t n = q->all ? lk->nsites : lk->nsuspects, maxkey = 0, *slot = NULL, last_stack = UINT32_MAX, key = 0;
	double *diff = NULL;
	char *doc = NULL;
	size_t len = 0;
	FILE *m;
	int all = hs_filter_passes_all(&q->f), rc = 0;

	if (q->n > 0 && (uint32_t)q->n < n)
		n = (uint32_t)q->n;
	if (!(m = open_memstream(&doc, &len)))
		return -ENOMEM;
	hs_render_leaks_json(m, ctx, lk);
	if (fclose(m) != 0 || len < 3 || strcmp(doc + len - 3, "]}\n")) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++)
		if (lk->sites[i].key > maxkey)
			maxkey = lk->sites[i].key;
	if (!(slot = malloc(((size_t)maxkey + 1) * sizeof(*slot))) ||
	    !(diff = calloc((size_t)(n ? n : 1) * HS_LEAKS_BUCKETS, sizeof(*diff)))) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t k = 0; k <= maxkey; k++)
		slot[k] = UINT32_MAX;
	for (uint32_t i = 0; i < n; i++)
		slot[lk->sites[i].key] = i;
	for (uint64_t i = 0; n && i < t->n; i++) {
		const struct hs_alloc *a = hs_alloctab_at(t, i);
		uint64_t t1 = hs_alloc_free_time(a);
		double *d, b;

		if (a->stack != last_stack) {
			last_stack = a->stack;
			key = hs_stacks_key(st, a->stack);
		}
		if (key > maxkey || slot[key] == UINT32_MAX)
			continue;
		if (!hs_alloc_leaked(a) && (t1 < late || hs_alloc_lifetime(a, end) < min_life))
			continue;
		if (!all && !hs_filter_match(&q->f, t, a, i))
			continue;
		d = &diff[(size_t)slot[key] * HS_LEAKS_BUCKETS];
		b = hs_alloctab_weight(t, hs_alloc_size(a)) * (double)hs_alloc_size(a);
		d[leaks_bucket(hs_alloc_time(a), end)] += b;
		if (!hs_alloc_leaked(a))
			d[leaks_bucket(t1, end)] -= b;
	}
	fwrite(doc, 1, len - 2, f);
	fputs(",\n \"kept_live\": [", f);
	for (uint32_t i = 0; i < n; i++) {
		double live = 0;
		fputs(i ? ",\n  [" : "\n  [", f);
		for (unsigned b = 0; b < HS_LEAKS_BUCKETS; b++) {
			live += diff[(size_t)i * HS_LEAKS_BUCKETS + b];
			fprintf(f, "%s%.0f", b ? ", " : "", live > 0 ? live : 0);
		}
		fputc(']', f);
	}
	fputs("]}\n", f);
out:
	free(doc);
	free(slot);
	free(diff);
	return rc;
}

/* heapscope-viewer-lifetimes/1: allocation time against lifetime of the filtered allocations, every stride-th. */
static int lifetimes_json(FILE *f, struct hs_api_trace *tr, struct request *q)
{
	struct hs_lifetimes lt = { 0 };
	int rc;

	if ((rc = hs_lifetimes_build(&lt, tr->tab, &q->f, (uint64_t)q->points)) < 0)
		goto out;
	fputs("{\"schema\": \"heapscope-viewer-lifetimes/1\", \"file\": ", f);
	hs_json_string(f, tr->path);
	fputs(", \"filter\": ", f);
	hs_json_string(f, q->f.desc);
	fprintf(f, ", \"duration_ns\": %llu, \"matched_records\": %llu, \"stride\": %llu, \"count\": %llu, \"max_life_ns\": %llu,\n"
		   " \"fields\": [\"time_ns\", \"life_ns\", \"size\", \"leaked\"],\n \"points\": [",
		(unsigned long long)tr->tab->end_ns, (unsigned long long)lt.matched, (unsigned long long)lt.stride,
		(unsigned long long)lt.n, (unsigned long long)lt.max_life_ns);
	for (uint64_t i = 0; i < lt.n; i++) {
		const struct hs_lifetimes_point *p = &lt.pts[i];
		fprintf(f, "%s[%llu, %llu, %llu, %d]", i ? (i % 8 ? ", " : ",\n  ") : "", (unsigned long long)p->time_ns,
			(unsigned long long)p->life_ns, (unsigned long long)p->size, p->leaked ? 1 : 0);
	}
	fputs("]}\n", f);
out:
	hs_lifetimes_free(&lt);
	return rc;
}

/* Both sides of one merged frame: weights and counts, 0 where the frame is absent. */
struct pair {
	const struct hs_flame *b, *n;
	const struct hs_diff_flame *d;
};

static double side(const struct hs_flame *fl, uint32_t id, int count)
{
	if (id == HS_DIFF_NONE)
		return 0;
	return count ? fl->nodes[id].count : fl->nodes[id].weight;
}

static uint32_t pair_next(const void *ctx, uint32_t id)
{
	return ((const struct pair *)ctx)->d->nodes[id].next_sibling;
}

static double pair_weight(const void *ctx, uint32_t id)
{
	const struct pair *p = ctx;
	const struct hs_diff_flame_node *n = &p->d->nodes[id];
	double b = side(p->b, n->base, 0), w = side(p->n, n->new, 0);

	return b > w ? b : w;
}

static const char *pair_name(const void *ctx, uint32_t id)
{
	const struct pair *p = ctx;
	const struct hs_diff_flame_node *n = &p->d->nodes[id];

	return n->base != HS_DIFF_NONE ? hs_names_str(&p->b->names, p->b->nodes[n->base].name)
				       : hs_names_str(&p->n->names, p->n->nodes[n->new].name);
}

/* One merged node and its children at or above thresh on either side; the others summed into one "other" node. */
static int diff_node(FILE *f, const struct pair *p, uint32_t id, double thresh)
{
	const struct hs_diff_flame_node *n = &p->d->nodes[id];
	const struct hs_flame_node *fn = n->new != HS_DIFF_NONE ? &p->n->nodes[n->new] : &p->b->nodes[n->base];
	const struct hs_flame *named = n->new != HS_DIFF_NONE ? p->n : p->b;
	struct child *kids = NULL;
	uint32_t nkids = 0, shown = 0;
	double ob = 0, on = 0, obc = 0, onc = 0;
	int rc;

	/* the larger side ranks a child and decides whether it is sent, so a frame that shrank (or vanished) is not summed away */
	if ((rc = sorted_kids(p, n->first_child, pair_next, pair_weight, pair_name, &kids, &nkids)) < 0)
		goto out;
	node_head(f, named, fn);
	fprintf(f, ", \"value\": %.0f, \"count\": %.0f, \"base\": %.0f, \"base_count\": %.0f, \"children\": [",
		side(p->n, n->new, 0), side(p->n, n->new, 1), side(p->b, n->base, 0), side(p->b, n->base, 1));
	for (uint32_t k = 0; k < nkids; k++) {
		const struct hs_diff_flame_node *cn = &p->d->nodes[kids[k].id];
		if (kids[k].weight < thresh || kids[k].weight <= 0) {
			ob += side(p->b, cn->base, 0);
			on += side(p->n, cn->new, 0);
			obc += side(p->b, cn->base, 1);
			onc += side(p->n, cn->new, 1);
			continue;
		}
		fputs(shown++ ? ", " : "", f);
		if ((rc = diff_node(f, p, kids[k].id, thresh)) < 0)
			goto out;
	}
	if (ob > 0 || on > 0)
		fprintf(f, "%s{\"name\": \"other\", \"file\": null, \"line\": 0, \"value\": %.0f, \"count\": %.0f, \"base\": %.0f, "
			   "\"base_count\": %.0f, \"other\": true, \"children\": []}", shown ? ", " : "", on, onc, ob, obc);
	fputs("]}", f);
out:
	free(kids);
	return rc;
}

/*
 * The flame graph of both traces merged by frame name: "value" and "count"
 * are the new trace's, "base" and "base_count" the base trace's; a frame
 * absent on one side has 0 there. Each trace has its own filter and stacks.
 */
static int flame_compare_json(FILE *f, struct hs_api *api, struct request *q, struct hs_stacks *st)
{
	struct hs_flame fb = { 0 }, fn = { 0 };
	struct hs_diff_flame d = { 0 };
	struct pair p = { .b = &fb, .n = &fn, .d = &d };
	uint64_t bat = live_at(&api->t[0], q), nat = live_at(&api->t[1], q);
	int rc;

	if ((rc = hs_flame_build(&fb, api->t[0].tab, &q->f, &st[0], (enum hs_flame_weight)q->weight, bat, q->down)) < 0 ||
	    (rc = hs_flame_build(&fn, api->t[1].tab, &q->f2, &st[1], (enum hs_flame_weight)q->weight, nat, q->down)) < 0 ||
	    (rc = hs_diff_flame_build(&d, &fb, &fn)) < 0)
		goto out;
	fputs("{\"schema\": \"heapscope-viewer-flame/1\", \"compare\": true, \"file\": ", f);
	hs_json_string(f, api->t[1].path);
	fputs(", \"base_file\": ", f);
	hs_json_string(f, api->t[0].path);
	fputs(", \"filter\": ", f);
	hs_json_string(f, q->f.desc);
	fprintf(f, ", \"weight\": \"%s\", \"direction\": \"%s\", \"at_ns\": %llu, \"base_at_ns\": %llu, \"min\": %g,\n"
		   " \"total\": %.0f, \"count\": %.0f, \"base_total\": %.0f, \"base_count\": %.0f,\n \"root\": ",
		hs_flame_weight_names[q->weight], q->down ? "down" : "up", (unsigned long long)fn.at_ns, (unsigned long long)fb.at_ns, q->min,
		fn.total, fn.count, fb.total, fb.count);
	if ((rc = diff_node(f, &p, 0, q->min * (fn.total > fb.total ? fn.total : fb.total))) < 0)
		goto out;
	fputs("}\n", f);
out:
	hs_diff_flame_free(&d);
	hs_flame_free(&fb);
	hs_flame_free(&fn);
	return rc;
}

/*
 * One side of a comparison of callers: the callers after path of group
 * focus, or no rows when the group is absent from that trace.
 */
static int side_callers(struct hs_top *top, const struct hs_api_trace *tr, struct hs_filter *f, struct hs_stacks *st,
			uint32_t focus, const uint32_t *path, int depth)
{
	if (focus == HS_STACKS_NO_KEY) {
		memset(top, 0, sizeof(*top));
		top->focus = focus;
		return 0;
	}
	return hs_top_build_path(top, tr->tab, f, st, HS_SORT_BYTES, focus, path, depth);
}

/*
 * hs_diff_build and the diff renderer read a backtrace group's key as a
 * folded backtrace, but callers are keyed by name (by line): while they run
 * on callers, both stacks say so.
 */
static void callers_naming(struct hs_stacks *st, int on, enum hs_group_by by)
{
	if (by == HS_BY_BACKTRACE)
		st[0].by = st[1].by = on ? HS_BY_LINE : HS_BY_BACKTRACE;
}

/*
 * heapscope-diff/1 of `heapscope diff --json`: the per-site changes, each trace with its own filter and stacks.
 * With callers=ROW&path=R1,... the callers of that row (then of the caller chosen at each level) in both traces,
 * matched by name like the sites.
 */
static int diff_json(FILE *f, struct hs_api *api, struct request *q, struct hs_stacks *st, struct hs_api_reply *reply)
{
	struct hs_top bt = { 0 }, nt = { 0 }, bs = { 0 }, ns = { 0 };
	struct hs_diff d = { 0 }, sd = { 0 };
	struct hs_render_diff ctx = { .base_path = api->t[0].path, .new_path = api->t[1].path, .base_tab = api->t[0].tab,
				      .new_tab = api->t[1].tab, .base_top = &bt, .new_top = &nt, .base_st = &st[0],
				      .new_st = &st[1], .filter = &q->f2, .limit = q->n, .frames = q->frames };
	enum hs_group_by by = st[0].by;
	const char *names[MAX_PATH + 1];
	uint32_t bpath[MAX_PATH], npath[MAX_PATH], bfocus, nfocus;
	char name[1100], *doc = NULL;
	size_t len = 0;
	FILE *m = NULL;
	int rc, row = 0;

	if ((rc = hs_top_build(&bt, api->t[0].tab, &q->f, &st[0], HS_SORT_BYTES, HS_STACKS_NO_KEY)) < 0 ||
	    (rc = hs_top_build(&nt, api->t[1].tab, &q->f2, &st[1], HS_SORT_BYTES, HS_STACKS_NO_KEY)) < 0 ||
	    (rc = hs_diff_build(&d, &bt, &st[0], &nt, &st[1], (enum hs_diff_sort)q->sort)) < 0)
		goto out;
	if (!q->callers) {
		hs_render_diff_json(f, &ctx, &d);
		goto out;
	}
	if (!(row = callers_row(q, d.nrows, reply, &rc)))
		goto out;
	bfocus = d.rows[row - 1].in_base ? d.rows[row - 1].base_key : HS_STACKS_NO_KEY;
	nfocus = d.rows[row - 1].in_new ? d.rows[row - 1].new_key : HS_STACKS_NO_KEY;
	names[0] = d.rows[row - 1].in_new ? hs_stacks_key_name(&st[1], nfocus, 0, name, sizeof(name)) :
					     hs_stacks_key_name(&st[0], bfocus, 0, name, sizeof(name));
	for (int k = 0;; k++) {
		const struct hs_diff_row *r;
		hs_top_free(&bs);
		hs_top_free(&ns);
		hs_diff_free(&sd);
		if ((rc = side_callers(&bs, &api->t[0], &q->f, &st[0], bfocus, bpath, k)) < 0 ||
		    (rc = side_callers(&ns, &api->t[1], &q->f2, &st[1], nfocus, npath, k)) < 0)
			goto out;
		callers_naming(st, 1, by);
		rc = hs_diff_build(&sd, &bs, &st[0], &ns, &st[1], (enum hs_diff_sort)q->sort);
		callers_naming(st, 0, by);
		if (rc < 0)
			goto out;
		if (k == q->depth)
			break;
		if ((uint32_t)q->path[k] > sd.nrows) {
			rc = no_row(reply, k + 1, q->path[k], sd.nrows, names[k]);
			goto out;
		}
		/* a caller present in one trace only: the other side's path matches no stack */
		r = &sd.rows[q->path[k] - 1];
		bpath[k] = r->in_base ? r->base_key : HS_STACKS_NO_KEY;
		npath[k] = r->in_new ? r->new_key : HS_STACKS_NO_KEY;
		names[k + 1] = hs_stacks_key_name(r->in_new ? &st[1] : &st[0], r->in_new ? npath[k] : bpath[k], 1, NULL, 0);
	}
	ctx.base_top = &bs;
	ctx.new_top = &ns;
	if (!(m = open_memstream(&doc, &len))) {
		rc = -ENOMEM;
		goto out;
	}
	callers_naming(st, 1, by);
	hs_render_diff_json(m, &ctx, &sd);
	callers_naming(st, 0, by);
	if ((rc = render_open(f, m, &doc, &len)) < 0)
		goto out;
	fprintf(f, ",\n \"callers_of\": {\"row\": %d, \"name\": ", row);
	hs_json_string(f, names[q->depth]);
	fputc('}', f);
	caller_path_json(f, q, row, names);
	fputs("}\n", f);
out:
	free(doc);
	hs_diff_free(&sd);
	hs_diff_free(&d);
	hs_top_free(&bs);
	hs_top_free(&ns);
	hs_top_free(&bt);
	hs_top_free(&nt);
	return rc;
}

/* The folded stacks of `heapscope flame --folded` with the same filter and weight. */
static int folded_text(FILE *f, struct hs_api_trace *tr, struct request *q, struct hs_stacks *st, struct hs_api_reply *reply)
{
	struct hs_flame fl = { 0 };
	int rc;

	reply->type = "text/plain; charset=utf-8";
	if ((rc = hs_flame_weights(&fl, tr->tab, &q->f, st, (enum hs_flame_weight)q->weight, live_at(tr, q), 1)) == 0)
		rc = hs_render_flame_folded(f, st, &fl);
	hs_flame_free(&fl);
	return rc;
}

/* Runs one parsed request on the trace it names (st[0]: its stacks; both traces' for diff and compare); the body goes to f. */
static int answer(FILE *f, struct hs_api *api, struct request *q, struct hs_stacks *st, struct hs_api_reply *reply)
{
	struct hs_api_trace *tr = &api->t[q->trace];
	int rc = 0;

	switch (q->ep) {
	case EP_INFO:
		info_json(f, api);
		break;
	case EP_TIMELINE: {
		struct hs_timeline tl = { 0 };
		struct hs_render_timeline ctx = { .path = tr->path, .tab = tr->tab, .filter = &q->f, .st = st };
		if ((rc = hs_timeline_build(&tl, tr->tab, &q->f, st, (uint32_t)q->points, 0, HS_SORT_BYTES)) == 0)
			rc = hs_render_timeline_json(f, &ctx, &tl);
		hs_timeline_free(&tl);
		break;
	}
	case EP_FLAME:
		rc = q->compare ? flame_compare_json(f, api, q, st) : flame_json(f, tr, q, st);
		break;
	case EP_TOP:
		rc = top_json(f, tr, q, st, reply);
		break;
	case EP_LEAKS: {
		struct hs_leaks lk = { 0 };
		struct hs_render_leaks ctx = { .path = tr->path, .tab = tr->tab, .filter = &q->f, .st = st,
					       .limit = q->n, .frames = q->frames, .all = q->all };
		if ((rc = hs_leaks_build(&lk, tr->tab, &q->f, st)) == 0)
			rc = leaks_json(f, tr, q, st, &ctx, &lk);
		hs_leaks_free(&lk);
		break;
	}
	case EP_LIFETIMES:
		rc = lifetimes_json(f, tr, q);
		break;
	case EP_DIFF:
		rc = diff_json(f, api, q, st, reply);
		break;
	case EP_FOLDED:
		rc = folded_text(f, tr, q, st, reply);
		break;
	default:
		break;
	}
	return rc;
}

/* Bytes of warnings before the rest are only counted: percent-encoded, at most thrice that in a header. */
#define MAX_WARNING 2048

/* One warning line more (a memory shortage only loses it). */
static void add_warning(char **w, const char *prefix, const char *text)
{
	size_t old = *w ? strlen(*w) : 0, n = old + (old ? 1 : 0) + strlen(prefix) + strlen(text) + 1;
	char *v = realloc(*w, n);

	if (!v)
		return;
	snprintf(v + old, n - old, "%s%s%s", old ? "\n" : "", prefix, text);
	*w = v;
}

/* What the command line says on stderr after the same question: the filters' warnings, and frames left unnamed. */
static void warnings(struct hs_api *api, const struct request *q, int both, struct hs_api_reply *reply)
{
	char buf[PATH_MAX + 256];
	const char *path;
	enum hs_module_problem why;
	uint64_t n;

	if (q->f.warn[0])
		add_warning(&reply->warning, both ? "base: " : "", q->f.warn);
	if (both && q->f2.warn[0])
		add_warning(&reply->warning, "new: ", q->f2.warn);
	for (int t = 0; t < api->ntraces; t++) {
		size_t more = 0;
		if (!both && t != q->trace)
			continue;
		for (size_t i = 0; hs_reader_unnamed_module(api->t[t].r, i, &path, &why, &n); i++) {
			/* a trace from another machine can miss every library: the header must stay small */
			if (reply->warning && strlen(reply->warning) > MAX_WARNING) {
				more++;
				continue;
			}
			add_warning(&reply->warning, "", hs_fmt_unnamed(buf, sizeof(buf), path, (int)why, n, api->binary_dirs));
		}
		if (more) {
			snprintf(buf, sizeof(buf), "and %zu more %s with frames left unnamed; 'heapscope top' on the "
				 "trace names them all", more, more == 1 ? "module" : "modules");
			add_warning(&reply->warning, "", buf);
		}
	}
}

/* The stacks of one trace, grouped by q->by with the filter's hidden frames, and the filter prepared against it. */
static int prepare(struct hs_stacks *st, struct hs_filter *f, const struct hs_api_trace *tr, int by)
{
	int rc;

	if ((rc = hs_stacks_init(st, tr->r, f->hide, f->nhide, !f->no_default_hide, (enum hs_group_by)by)) < 0)
		return rc;
	if ((rc = hs_filter_prepare(f, tr->tab, st)) < 0)
		hs_stacks_free(st);
	return rc;
}

int hs_api_get(struct hs_api *api, const char *endpoint, const struct hs_api_param *params, int nparams,
	       struct hs_api_reply *reply)
{
	struct request *q = NULL;
	struct hs_stacks st[2];
	char *body = NULL;
	size_t len = 0;
	FILE *f = NULL;
	int rc = 0, ep, locked = 0, nst = 0;

	memset(reply, 0, sizeof(*reply));
	memset(st, 0, sizeof(st));
	if (pick(endpoint, endpoint_names, EP_COUNT, &ep) < 0) {
		rc = hs_api_error(reply, 404, "no such API endpoint; use /api/status, /api/info, /api/timeline, /api/flame, "
					      "/api/top, /api/leaks, /api/lifetimes, /api/diff or /api/folded");
		goto out;
	}
	if (ep == EP_STATUS && nparams) {
		rc = hs_api_error(reply, 400, "unknown parameter for /api/status; it takes none");
		goto out;
	}
	if (ep == EP_STATUS) {
		rc = status_reply(api, reply);
		goto out;
	}
	if (!(q = calloc(1, sizeof(*q)))) {
		rc = -ENOMEM;
		goto out;
	}
	hs_filter_init(&q->f);
	hs_filter_init(&q->f2);
	q->ep = (enum endpoint)ep;
	q->sort = ep == EP_DIFF ? HS_DIFF_CHANGE : HS_SORT_BYTES;
	q->n = 20;
	q->frames = 6;
	q->points = ep == EP_LIFETIMES ? DEFAULT_LIFETIME_POINTS : DEFAULT_POINTS;
	q->down = 1;
	q->min = 0.005;
	if (parse_request(q, api->ntraces, params, nparams) < 0) {
		rc = hs_api_error(reply, 400, q->err);
		goto out;
	}
	/* malformed requests get their 400 even while loading; the others wait for the data */
	if ((rc = ready(api, reply)) <= 0)
		goto out;
	rc = 0;
	pthread_mutex_lock(&api->lock);
	locked = 1;
	if (!(f = open_memstream(&body, &len))) {
		rc = -ENOMEM;
		goto out;
	}
	if (q->ep == EP_DIFF || q->compare) {
		if ((rc = prepare(&st[0], &q->f, &api->t[0], q->by)) < 0)
			goto out;
		nst = 1;
		if ((rc = prepare(&st[1], &q->f2, &api->t[1], q->by)) < 0)
			goto out;
		nst = 2;
	} else if (q->ep != EP_INFO) {
		if ((rc = prepare(&st[0], &q->f, &api->t[q->trace], q->by)) < 0)
			goto out;
		nst = 1;
	}
	reply->status = 200;
	if ((rc = answer(f, api, q, st, reply)) < 0)
		goto out;
	if (fclose(f) != 0) {
		f = NULL;
		rc = -ENOMEM;
		goto out;
	}
	f = NULL;
	if (reply->status == 200) {
		reply->body = body;
		reply->len = len;
		body = NULL;
		if (q->ep != EP_INFO)
			warnings(api, q, nst == 2, reply);
	}
out:
	if (f)
		fclose(f);
	free(body);
	for (int i = 0; i < nst; i++)
		hs_stacks_free(&st[i]);
	if (locked)
		pthread_mutex_unlock(&api->lock);
	if (q) {
		hs_filter_free(&q->f);
		hs_filter_free(&q->f2);
	}
	free(q);
	if (rc < 0) {
		reply->type = NULL;
		hs_api_error(reply, 500, rc == -ENOMEM ? "out of memory answering the request; narrow the filter" :
			     "the request failed; see the server's terminal");
	}
	return rc == -ENOMEM && !reply->body ? -ENOMEM : 0;
}
