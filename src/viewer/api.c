/* api.c - the viewer's JSON API: query parameters to the CLI filter language, then the analysis library and its JSON writers */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/filter.h"
#include "../analysis/flame.h"
#include "../analysis/leaks.h"
#include "../analysis/lifetimes.h"
#include "../analysis/stacks.h"
#include "../analysis/timeline.h"
#include "../analysis/timespec.h"
#include "../analysis/top.h"
#include "../render/format.h"
#include "../render/leaks.h"
#include "../render/timeline.h"
#include "../render/top.h"
#include "api.h"

enum endpoint { EP_INFO, EP_TIMELINE, EP_FLAME, EP_TOP, EP_LEAKS, EP_LIFETIMES, EP_COUNT };

static const char *const endpoint_names[EP_COUNT] = { "info", "timeline", "flame", "top", "leaks", "lifetimes" };

/* The parameters of each endpoint besides the filters, for checks and messages. */
static const char *const endpoint_params[EP_COUNT] = {
	"",
	"points",
	"weight, at, direction, min",
	"by, sort, n, frames, callers",
	"by, n, frames, all",
	"points",
};

static const char *const by_names[] = { "backtrace", "function", "line", "library" };

/* Filter options that take no value, and those that take two (T1,T2 in a query). */
static const char *const filter_flags[] = { "leaked", "temporary", "no-default-hide", NULL };
static const char *const filter_pairs[] = { "allocated-between", "live-between", "freed-between", NULL };

#define MAX_POINTS 10000
#define DEFAULT_POINTS 400
#define MAX_LIFETIME_POINTS 100000
#define DEFAULT_LIFETIME_POINTS 5000

struct request {
	enum endpoint ep;
	struct hs_filter f;
	int by, sort, n, frames, points, weight, down, all;
	int have_weight, have_at;
	const char *callers;
	double min;
	struct hs_timespec at;
	char err[1024];
};

int hs_api_error(struct hs_api_reply *reply, int status, const char *msg)
{
	FILE *f;

	free(reply->body);
	reply->body = NULL;
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

int hs_api_init(struct hs_api *api, const char *path, struct hs_reader *r, const struct hs_alloctab *tab)
{
	memset(api, 0, sizeof(*api));
	api->path = path;
	api->r = r;
	api->tab = tab;
	for (uint64_t i = 0; i < tab->n; i++) {
		const struct hs_alloc *a = hs_alloctab_at(tab, i);
		double size = (double)hs_alloc_size(a), w = hs_alloctab_weight(tab, hs_alloc_size(a));
		api->allocations += w;
		api->bytes += w * size;
		if (hs_alloc_leaked(a)) {
			api->leaked_count += w;
			api->leaked_bytes += w * size;
		}
	}
	for (uint64_t i = 0; i < tab->nrss; i++)
		if (tab->rss[i].rss > api->peak_rss) {
			api->peak_rss = tab->rss[i].rss;
			api->peak_rss_ns = tab->rss[i].time_ns;
		}
	return -pthread_mutex_init(&api->lock, NULL);
}

void hs_api_free(struct hs_api *api)
{
	pthread_mutex_destroy(&api->lock);
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
	free(buf);
	if (rc < 0) {
		snprintf(q->err, sizeof(q->err), "%s", q->f.err);
		return -1;
	}
	return rc;
}

/* An endpoint's own parameter: 0, or -1 with q->err set. */
static int own_param(struct request *q, const char *key, const char *v)
{
	enum endpoint ep = q->ep;

	if (ep == EP_TIMELINE && !strcmp(key, "points")) {
		if (parse_int(v, 2, MAX_POINTS, &q->points) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad value '%s' for points; give a number from 2 to %d", v ? v : "", MAX_POINTS);
	} else if (ep == EP_LIFETIMES && !strcmp(key, "points")) {
		if (parse_int(v, 1, MAX_LIFETIME_POINTS, &q->points) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad value '%s' for points; give a number from 1 to %d", v ? v : "",
			 MAX_LIFETIME_POINTS);
	} else if (ep == EP_FLAME && !strcmp(key, "weight")) {
		q->have_weight = 1;
		if (pick(v, hs_flame_weight_names, HS_WEIGHT_COUNT_, &q->weight) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad value '%s' for weight; use bytes, count, leaked or live", v ? v : "");
	} else if (ep == EP_FLAME && !strcmp(key, "at")) {
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
	} else if ((ep == EP_TOP || ep == EP_LEAKS) && !strcmp(key, "by")) {
		if (pick(v, by_names, 4, &q->by) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad value '%s' for by; use backtrace, function, line or library", v ? v : "");
	} else if (ep == EP_TOP && !strcmp(key, "sort")) {
		if (pick(v, hs_top_sort_names, HS_SORT_COUNT, &q->sort) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad value '%s' for sort; use calls, bytes, peak, leaked or temporary", v ? v : "");
	} else if ((ep == EP_TOP || ep == EP_LEAKS) && !strcmp(key, "n")) {
		if (parse_int(v, 0, 1000000000, &q->n) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad value '%s' for n; give a number of rows (0: all)", v ? v : "");
	} else if ((ep == EP_TOP || ep == EP_LEAKS) && !strcmp(key, "frames")) {
		if (parse_int(v, 0, HS_STACKS_MAX_FRAMES, &q->frames) == 0)
			return 0;
		snprintf(q->err, sizeof(q->err), "bad value '%s' for frames; give a number of frames", v ? v : "");
	} else if (ep == EP_TOP && !strcmp(key, "callers")) {
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

static int parse_request(struct request *q, const struct hs_api_param *params, int nparams)
{
	for (int i = 0; i < nparams; i++) {
		const char *key = params[i].key, *v = params[i].value;
		int k = 0;
		if (!key || !*key || key[0] == '-') {
			snprintf(q->err, sizeof(q->err), "bad parameter name '%s' for /api/%s; write names without dashes (live-between=1s,2s)",
				 key ? key : "", endpoint_names[q->ep]);
			return -1;
		}
		if (q->ep != EP_INFO && (k = filter_param(q, key, v)) < 0)
			return -1;
		if (k == 0 && own_param(q, key, v) < 0)
			return -1;
	}
	if (q->ep == EP_FLAME && q->have_at) {
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

static void info_json(FILE *f, struct hs_api *api)
{
	const struct hs_trace_info *in = hs_reader_info(api->r);
	const struct hs_alloctab *t = api->tab;

	fputs("{\"schema\": \"heapscope-viewer-info/1\", \"file\": ", f);
	hs_json_string(f, api->path);
	fprintf(f, ", \"pid\": %u, \"ppid\": %u, \"exe\": ", in->pid, in->ppid);
	hs_json_string(f, in->exe);
	fputs(", \"cmdline\": [", f);
	for (int i = 0; i < in->argc; i++) {
		fputs(i ? ", " : "", f);
		hs_json_string(f, in->argv[i]);
	}
	fprintf(f, "], \"duration_ns\": %llu, \"mode\": \"%s\", \"sample_bytes\": %llu, \"estimated\": %s,\n",
		(unsigned long long)t->end_ns, t->sample_bytes ? "sampled" : "full", (unsigned long long)t->sample_bytes,
		t->sample_bytes ? "true" : "false");
	fprintf(f, " \"records\": %llu, \"allocations\": %.0f, \"bytes_allocated\": %.0f, \"threads\": %u,\n",
		(unsigned long long)t->n, api->allocations, api->bytes, t->ntids);
	fprintf(f, " \"peak_heap\": {\"bytes\": %.0f, \"time_ns\": %llu},\n", t->peak_heap, (unsigned long long)t->peak_ns);
	if (t->nrss)
		fprintf(f, " \"peak_rss\": {\"bytes\": %llu, \"time_ns\": %llu},\n", (unsigned long long)api->peak_rss,
			(unsigned long long)api->peak_rss_ns);
	else
		fputs(" \"peak_rss\": null,\n", f);
	fprintf(f, " \"leaked\": {\"count\": %.0f, \"bytes\": %.0f},\n \"markers\": [", api->leaked_count, api->leaked_bytes);
	for (uint64_t i = 0; i < t->nmarkers; i++) {
		fprintf(f, "%s{\"time_ns\": %llu, \"label\": ", i ? ", " : "", (unsigned long long)t->markers[i].time_ns);
		hs_json_string(f, t->markers[i].label);
		fputc('}', f);
	}
	fputs("]}\n", f);
}

struct child {
	uint32_t id;
	double weight;
};

static int by_weight(const void *a, const void *b)
{
	const struct child *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* One node and the children at or above thresh; the others summed into one "other" node. */
static int flame_node(FILE *f, const struct hs_flame *fl, uint32_t id, double thresh)
{
	const struct hs_flame_node *n = &fl->nodes[id];
	struct child *kids = NULL;
	uint32_t nkids = 0, cap = 0, shown = 0;
	double other = 0, other_count = 0;
	int rc = 0;

	for (uint32_t c = n->first_child; c; c = fl->nodes[c].next_sibling) {
		if (nkids == cap) {
			struct child *nk = realloc(kids, (cap = cap ? cap * 2 : 8) * sizeof(*kids));
			if (!nk) {
				rc = -ENOMEM;
				goto out;
			}
			kids = nk;
		}
		kids[nkids].id = c;
		kids[nkids++].weight = fl->nodes[c].weight;
	}
	if (nkids)
		qsort(kids, nkids, sizeof(*kids), by_weight);
	fputs("{\"name\": ", f);
	hs_json_string(f, fl->names[n->name]);
	fputs(", \"file\": ", f);
	if (n->file && !n->several_lines)
		hs_json_string(f, n->file);
	else
		fputs("null", f);
	fprintf(f, ", \"line\": %d, \"value\": %.0f, \"count\": %.0f, \"children\": [", n->several_lines ? 0 : n->line,
		n->weight, n->count);
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

static int flame_json(FILE *f, struct hs_api *api, struct request *q, struct hs_stacks *st)
{
	struct hs_flame fl = { 0 };
	uint64_t at_ns = 0;
	int rc;

	if (q->weight == HS_WEIGHT_LIVE) {
		struct hs_timespec peak = { .anchor = HS_TIME_PEAK };
		at_ns = hs_timespec_resolve(q->have_at ? &q->at : &peak, api->tab->end_ns, api->tab->peak_ns);
	}
	if ((rc = hs_flame_build(&fl, api->tab, &q->f, st, (enum hs_flame_weight)q->weight, at_ns, q->down)) < 0)
		goto out;
	fputs("{\"schema\": \"heapscope-viewer-flame/1\", \"file\": ", f);
	hs_json_string(f, api->path);
	fputs(", \"filter\": ", f);
	hs_json_string(f, q->f.desc);
	fprintf(f, ", \"weight\": \"%s\", \"direction\": \"%s\", \"at_ns\": %llu, \"min\": %g, \"total\": %.0f, \"count\": %.0f,\n \"root\": ",
		hs_flame_weight_names[q->weight], q->down ? "down" : "up", (unsigned long long)at_ns, q->min, fl.total, fl.count);
	if ((rc = flame_node(f, &fl, 0, q->min * fl.total)) < 0)
		goto out;
	fputs("}\n", f);
out:
	hs_flame_free(&fl);
	return rc;
}

static int top_json(FILE *f, struct hs_api *api, struct request *q, struct hs_stacks *st, struct hs_api_reply *reply)
{
	struct hs_render_top ctx = { .path = api->path, .tab = api->tab, .filter = &q->f, .st = st, .limit = q->n,
				     .frames = q->frames };
	struct hs_top top = { 0 }, sub = { 0 };
	char name[1100], msg[200];
	int rc, row = 0;

	if ((rc = hs_top_build(&top, api->tab, &q->f, st, (enum hs_top_sort)q->sort, HS_STACKS_NO_KEY)) < 0)
		goto out;
	if (q->callers) {
		parse_int(q->callers, 1, 1000000000, &row);
		if ((uint32_t)row > top.nrows) {
			snprintf(msg, sizeof(msg), "no row %d for callers: the listing with these filters has %u rows", row, top.nrows);
			rc = hs_api_error(reply, 400, msg);
			goto out;
		}
		ctx.focus_row = row;
		ctx.focus_name = hs_render_top_row_name(&ctx, &top, &top.rows[row - 1], name, sizeof(name));
		if ((rc = hs_top_build(&sub, api->tab, &q->f, st, (enum hs_top_sort)q->sort, top.rows[row - 1].key)) < 0)
			goto out;
	}
	hs_render_top_json(f, &ctx, q->callers ? &sub : &top);
out:
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
static int leaks_json(FILE *f, struct hs_api *api, struct request *q, struct hs_stacks *st,
		      const struct hs_render_leaks *ctx, const struct hs_leaks *lk)
{
	const struct hs_alloctab *t = api->tab;
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
		if (!all && !hs_filter_match(&q->f, t, a))
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
static int lifetimes_json(FILE *f, struct hs_api *api, struct request *q)
{
	struct hs_lifetimes lt = { 0 };
	int rc;

	if ((rc = hs_lifetimes_build(&lt, api->tab, &q->f, (uint64_t)q->points)) < 0)
		goto out;
	fputs("{\"schema\": \"heapscope-viewer-lifetimes/1\", \"file\": ", f);
	hs_json_string(f, api->path);
	fputs(", \"filter\": ", f);
	hs_json_string(f, q->f.desc);
	fprintf(f, ", \"duration_ns\": %llu, \"matched_records\": %llu, \"stride\": %llu, \"count\": %llu, \"max_life_ns\": %llu,\n"
		   " \"fields\": [\"time_ns\", \"life_ns\", \"size\", \"leaked\"],\n \"points\": [",
		(unsigned long long)api->tab->end_ns, (unsigned long long)lt.matched, (unsigned long long)lt.stride,
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

/* Runs one parsed request; the body goes to f. */
static int answer(FILE *f, struct hs_api *api, struct request *q, struct hs_stacks *st, struct hs_api_reply *reply)
{
	int rc = 0;

	switch (q->ep) {
	case EP_INFO:
		info_json(f, api);
		break;
	case EP_TIMELINE: {
		struct hs_timeline tl = { 0 };
		struct hs_render_timeline ctx = { .path = api->path, .tab = api->tab, .filter = &q->f, .st = st };
		if ((rc = hs_timeline_build(&tl, api->tab, &q->f, st, (uint32_t)q->points, 0, HS_SORT_BYTES)) == 0)
			rc = hs_render_timeline_json(f, &ctx, &tl);
		hs_timeline_free(&tl);
		break;
	}
	case EP_FLAME:
		rc = flame_json(f, api, q, st);
		break;
	case EP_TOP:
		rc = top_json(f, api, q, st, reply);
		break;
	case EP_LEAKS: {
		struct hs_leaks lk = { 0 };
		struct hs_render_leaks ctx = { .path = api->path, .tab = api->tab, .filter = &q->f, .st = st,
					       .limit = q->n, .frames = q->frames, .all = q->all };
		if ((rc = hs_leaks_build(&lk, api->tab, &q->f, st)) == 0)
			rc = leaks_json(f, api, q, st, &ctx, &lk);
		hs_leaks_free(&lk);
		break;
	}
	case EP_LIFETIMES:
		rc = lifetimes_json(f, api, q);
		break;
	default:
		break;
	}
	return rc;
}

int hs_api_get(struct hs_api *api, const char *endpoint, const struct hs_api_param *params, int nparams,
	       struct hs_api_reply *reply)
{
	struct request *q = NULL;
	struct hs_stacks st = { 0 };
	char *body = NULL;
	size_t len = 0;
	FILE *f = NULL;
	int rc = 0, ep, locked = 0, have_st = 0;

	memset(reply, 0, sizeof(*reply));
	if (pick(endpoint, endpoint_names, EP_COUNT, &ep) < 0) {
		rc = hs_api_error(reply, 404, "no such API endpoint; use /api/info, /api/timeline, /api/flame, /api/top, /api/leaks or /api/lifetimes");
		goto out;
	}
	if (!(q = calloc(1, sizeof(*q)))) {
		rc = -ENOMEM;
		goto out;
	}
	hs_filter_init(&q->f);
	q->ep = (enum endpoint)ep;
	q->sort = HS_SORT_BYTES;
	q->n = 20;
	q->frames = 6;
	q->points = ep == EP_LIFETIMES ? DEFAULT_LIFETIME_POINTS : DEFAULT_POINTS;
	q->down = 1;
	q->min = 0.005;
	if (parse_request(q, params, nparams) < 0) {
		rc = hs_api_error(reply, 400, q->err);
		goto out;
	}
	pthread_mutex_lock(&api->lock);
	locked = 1;
	if (!(f = open_memstream(&body, &len))) {
		rc = -ENOMEM;
		goto out;
	}
	if (q->ep != EP_INFO) {
		if ((rc = hs_stacks_init(&st, api->r, q->f.hide, q->f.nhide, !q->f.no_default_hide, (enum hs_group_by)q->by)) < 0)
			goto out;
		have_st = 1;
		if ((rc = hs_filter_prepare(&q->f, api->tab, &st)) < 0)
			goto out;
	}
	reply->status = 200;
	if ((rc = answer(f, api, q, &st, reply)) < 0)
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
	}
out:
	if (f)
		fclose(f);
	free(body);
	if (have_st)
		hs_stacks_free(&st);
	if (locked)
		pthread_mutex_unlock(&api->lock);
	if (q)
		hs_filter_free(&q->f);
	free(q);
	if (rc < 0)
		hs_api_error(reply, 500, rc == -ENOMEM ? "out of memory answering the request; narrow the filter" :
			     "the request failed; see the server's terminal");
	return rc == -ENOMEM && !reply->body ? -ENOMEM : 0;
}
