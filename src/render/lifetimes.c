/* lifetimes.c - the lifetime scatter (freed blocks as dots, never-freed ones as red crosses) and its TSV form */
#include "lifetimes.h"

#include <errno.h>
#include <string.h>

#include "../common/decimal.h"
#include "format.h"
#include "svgplot.h"

int hs_render_lifetimes_svg(FILE *f, const char *path, const struct hs_alloctab *t, const struct hs_filter *filter,
			    const struct hs_lifetimes *lt)
{
	struct hs_svgplot p = { .xunit = HS_UNIT_NS, .yunit = HS_UNIT_NS };
	char title[1200], sub[1400], a[32], b[32], c[32];

	p.xmax = (double)t->end_ns;
	p.ymax = (double)lt->max_life_ns;
	snprintf(title, sizeof(title), "heapscope lifetimes of %s", path);
	if (lt->stride > 1)
		snprintf(sub, sizeof(sub), "%s%s%s of %s allocations drawn: one in %s, in allocation order", filter->desc,
			 filter->desc[0] ? "; " : "", hs_fmt_count(a, sizeof(a), (double)lt->n),
			 hs_fmt_count(b, sizeof(b), (double)lt->matched), hs_fmt_count(c, sizeof(c), (double)lt->stride));
	else
		snprintf(sub, sizeof(sub), "%s%s%s allocations", filter->desc, filter->desc[0] ? "; " : "",
			 hs_fmt_count(a, sizeof(a), (double)lt->matched));
	hs_svgplot_begin(&p, f, 1100, 600, 2, title, sub, "allocated at (time since the start of tracing)", "lifetime");
	/* one path per kind keeps a 20k-point chart small and quick to render */
	fprintf(f, "<path fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"3\" stroke-linecap=\"round\" opacity=\"0.6\" d=\"");
	for (uint64_t i = 0; i < lt->n; i++)
		if (!lt->pts[i].leaked)
			fprintf(f, "M%.1f %.1fh0", hs_svgplot_x(&p, (double)lt->pts[i].time_ns), hs_svgplot_y(&p, (double)lt->pts[i].life_ns));
	fprintf(f, "\"><title>freed</title></path>\n<path fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.2\" d=\"");
	for (uint64_t i = 0; i < lt->n; i++)
		if (lt->pts[i].leaked)
			fprintf(f, "M%.1f %.1fm-3 -3l6 6m0 -6l-6 6", hs_svgplot_x(&p, (double)lt->pts[i].time_ns),
				hs_svgplot_y(&p, (double)lt->pts[i].life_ns));
	fprintf(f, "\"><title>never freed: counted as freed at the end of the run</title></path>\n");
	hs_svgplot_legend(&p, 0, "#1f77b4", NULL, "freed: lifetime = free - allocation");
	hs_svgplot_legend(&p, 1, "#d62728", "2,2", "never freed: counted as freed at the end of the run (crosses)");
	return hs_svgplot_end(&p);
}

struct out {
	FILE *f;
	uint64_t n;
};

/* v in decimal at p; returns the end */
static char *put_u64(char *p, uint64_t v)
{
	return p + hs_u64_to_str(p, v);
}

/* ns as seconds with nine decimals ("12.000345678"), exact */
static char *put_seconds(char *p, uint64_t ns)
{
	char frac[24];

	p = put_u64(p, ns / 1000000000);
	*p++ = '.';
	/* a leading 1 keeps the fraction's zeros: its nine digits follow it */
	hs_u64_to_str(frac, ns % 1000000000 + 1000000000);
	memcpy(p, frac + 1, 9);
	return p + 9;
}

/* By hand: printf's %.9f took 8 of the 8.5 s that python3's 19 million rows took. */
static int tsv_point(void *arg, const struct hs_lifetimes_point *p)
{
	struct out *o = arg;
	char line[128], *e = line;

	e = put_seconds(e, p->time_ns);
	*e++ = '\t';
	e = put_seconds(e, p->life_ns);
	*e++ = '\t';
	e = put_u64(e, p->size);
	*e++ = '\t';
	e = put_u64(e, p->stack);
	*e++ = '\t';
	*e++ = p->leaked ? '1' : '0';
	*e++ = '\n';
	return fwrite(line, 1, (size_t)(e - line), o->f) == (size_t)(e - line) ? 0 : -EIO;
}

static int json_point(void *arg, const struct hs_lifetimes_point *p)
{
	struct out *o = arg;
	char line[160], *e = line;

	if (o->n++)
		*e++ = ',';
	memcpy(e, "\n  [", 4);
	e = put_u64(e + 4, p->time_ns);
	memcpy(e, ", ", 2);
	e = put_u64(e + 2, p->life_ns);
	memcpy(e, ", ", 2);
	e = put_u64(e + 2, p->size);
	memcpy(e, ", ", 2);
	e = put_u64(e + 2, p->stack);
	memcpy(e, p->leaked ? ", true]" : ", false]", p->leaked ? 7 : 8);
	e += p->leaked ? 7 : 8;
	return fwrite(line, 1, (size_t)(e - line), o->f) == (size_t)(e - line) ? 0 : -EIO;
}

int hs_render_lifetimes_json(FILE *f, const char *path, const struct hs_alloctab *t, struct hs_filter *filter)
{
	struct out o = { f, 0 };

	fprintf(f, "{\"schema\": \"heapscope-lifetimes/1\", \"file\": ");
	hs_json_string(f, path);
	fprintf(f, ", \"filter\": ");
	hs_json_string(f, filter->desc);
	fprintf(f, ",\n \"estimated\": %s, \"duration_ns\": %llu,\n"
		   " \"fields\": [\"alloc_time_ns\", \"lifetime_ns\", \"size\", \"stack_id\", \"leaked\"],\n \"allocations\": [",
		t->sample_bytes ? "true" : "false", (unsigned long long)t->end_ns);
	if (hs_lifetimes_each(t, filter, json_point, &o) < 0)
		return -EIO;
	/* counted on the way: the points are not kept */
	fprintf(f, "\n ],\n \"matched_records\": %llu}\n", (unsigned long long)o.n);
	return ferror(f) ? -EIO : 0;
}

int hs_render_lifetimes_tsv(FILE *f, const struct hs_alloctab *t, struct hs_filter *filter)
{
	struct out o = { f, 0 };

	fprintf(f, "# alloc_time_s\tlifetime_s\tsize\tstack_id\tleaked\n");
	if (hs_lifetimes_each(t, filter, tsv_point, &o) < 0)
		return -EIO;
	return ferror(f) ? -EIO : 0;
}
