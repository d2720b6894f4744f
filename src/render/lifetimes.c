/* lifetimes.c - the lifetime scatter (freed blocks as dots, never-freed ones as red crosses) and its TSV form */
#include "lifetimes.h"

#include <errno.h>

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

static int json_point(void *arg, const struct hs_lifetimes_point *p)
{
	struct out *o = arg;

	fprintf(o->f, "%s\n  [%llu, %llu, %llu, %u, %s]", o->n++ ? "," : "", (unsigned long long)p->time_ns,
		(unsigned long long)p->life_ns, (unsigned long long)p->size, p->stack, p->leaked ? "true" : "false");
	return ferror(o->f) ? -EIO : 0;
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

static int tsv_point(void *arg, const struct hs_lifetimes_point *p)
{
	struct out *o = arg;

	fprintf(o->f, "%.9f\t%.9f\t%llu\t%u\t%d\n", (double)p->time_ns / 1e9, (double)p->life_ns / 1e9,
		(unsigned long long)p->size, p->stack, p->leaked);
	return ferror(o->f) ? -EIO : 0;
}

int hs_render_lifetimes_tsv(FILE *f, const struct hs_alloctab *t, struct hs_filter *filter)
{
	struct out o = { f, 0 };

	fprintf(f, "# alloc_time_s\tlifetime_s\tsize\tstack_id\tleaked\n");
	if (hs_lifetimes_each(t, filter, tsv_point, &o) < 0)
		return -EIO;
	return ferror(f) ? -EIO : 0;
}
