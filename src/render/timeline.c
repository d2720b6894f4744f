/* timeline.c - the memory evolution graph: heap, RSS and one line per top group, with markers; CSV and JSON too */
#include "timeline.h"

#include <errno.h>
#include <string.h>

#include "format.h"
#include "svgplot.h"

static const char *const palette[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
};

static const double *group(const struct hs_timeline *tl, uint32_t g)
{
	return tl->groups + (size_t)g * (tl->npoints + 1);
}

static const char *group_name(const struct hs_render_timeline *ctx, const struct hs_timeline *tl, uint32_t g, char *buf,
			      size_t n)
{
	return hs_stacks_key_name(ctx->st, tl->keys[g], 0, buf, n);
}

static void polyline(const struct hs_svgplot *p, const struct hs_timeline *tl, const double *v, const char *colour,
		     const char *dash, const char *name)
{
	double top = 0;
	char buf[64];

	fprintf(p->f, "<polyline class=\"series\" stroke=\"%s\"%s%s%s points=\"", colour, dash ? " stroke-dasharray=\"" : "",
		dash ? dash : "", dash ? "\"" : "");
	for (uint32_t k = 0; k < tl->npoints; k++) {
		if (v[k] < 0)
			continue;   /* no RSS sample yet */
		fprintf(p->f, "%.1f,%.1f ", hs_svgplot_x(p, (double)tl->time_ns[k]), hs_svgplot_y(p, v[k]));
		if (v[k] > top)
			top = v[k];
	}
	fprintf(p->f, "\"><title>");
	hs_xml_text(p->f, name);
	fprintf(p->f, " (highest %s)</title></polyline>\n", hs_fmt_bytes(buf, sizeof(buf), top));
}

int hs_render_timeline_svg(FILE *f, const struct hs_render_timeline *ctx, const struct hs_timeline *tl)
{
	const struct hs_alloctab *t = ctx->tab;
	struct hs_svgplot p = { .xunit = HS_UNIT_NS, .yunit = HS_UNIT_BYTES };
	int filtered = ctx->filter->desc[0] != 0, row = 0;
	char title[1200], sub[1400], name[1100], legend[1200];

	p.xmax = (double)t->end_ns;
	for (uint32_t k = 0; k < tl->npoints; k++) {
		if (tl->heap[k] > p.ymax)
			p.ymax = tl->heap[k];
		if (!ctx->no_rss && tl->rss[k] > p.ymax)
			p.ymax = tl->rss[k];
	}
	snprintf(title, sizeof(title), "heapscope timeline of %s", ctx->path);
	snprintf(sub, sizeof(sub), "%s%s%stop %u groups by %s; %u moments", filtered ? "filter " : "", ctx->filter->desc,
		 filtered ? "; " : "", tl->ngroups, (const char *[]){ "backtrace", "function", "line", "library" }[ctx->st->by],
		 tl->npoints);
	hs_svgplot_begin(&p, f, 1100, 560, (int)tl->ngroups + 3 + filtered - ctx->no_rss, title, sub, "time since the start of tracing", "bytes");
	for (uint64_t i = 0; i < t->nmarkers; i++) {
		double x = hs_svgplot_x(&p, (double)t->markers[i].time_ns);
		fprintf(f, "<line class=\"marker\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			   "<text class=\"mlabel\" transform=\"translate(%.1f,%.1f) rotate(-90)\" text-anchor=\"end\">",
			x, p.top, x, p.top + p.h, x + 11, p.top + 4);
		hs_xml_text(f, t->markers[i].label);
		fprintf(f, "</text>\n");
	}
	if (!ctx->no_rss)
		polyline(&p, tl, tl->rss, "#999999", "6,3", "RSS");
	polyline(&p, tl, tl->heap, "#000000", NULL, "heap in use");
	if (filtered)
		polyline(&p, tl, tl->filtered, "#444444", "2,2", "filtered allocations");
	for (uint32_t g = 0; g < tl->ngroups; g++) {
		group_name(ctx, tl, g, name, sizeof(name));
		polyline(&p, tl, group(tl, g), palette[g % 10], NULL, name);
	}
	polyline(&p, tl, tl->other, "#cccccc", NULL, "other groups");
	hs_svgplot_legend(&p, row++, "#000000", NULL, "heap in use (every allocation)");
	if (!ctx->no_rss)
		hs_svgplot_legend(&p, row++, "#999999", "6,3", t->nrss ? "RSS" : "RSS (no sample in this trace)");
	if (filtered)
		hs_svgplot_legend(&p, row++, "#444444", "2,2", "allocations that pass the filter");
	for (uint32_t g = 0; g < tl->ngroups; g++) {
		group_name(ctx, tl, g, name, sizeof(name));
		snprintf(legend, sizeof(legend), "%u. %.140s", g + 1, name);
		hs_svgplot_legend(&p, row++, palette[g % 10], NULL, legend);
	}
	hs_svgplot_legend(&p, row++, "#cccccc", NULL, "other groups of the filter");
	return hs_svgplot_end(&p);
}

/* CSV field: quoted, with quotes doubled, since C++ names hold commas. */
static void csv_name(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

int hs_render_timeline_csv(FILE *f, const struct hs_render_timeline *ctx, const struct hs_timeline *tl)
{
	char name[1100];

	fprintf(f, "time_s,heap,rss");
	for (uint32_t g = 0; g < tl->ngroups; g++) {
		fputc(',', f);
		csv_name(f, group_name(ctx, tl, g, name, sizeof(name)));
	}
	fprintf(f, ",other\n");
	for (uint32_t k = 0; k < tl->npoints; k++) {
		fprintf(f, "%.9f,%.0f,", (double)tl->time_ns[k] / 1e9, tl->heap[k]);
		if (tl->rss[k] >= 0)
			fprintf(f, "%.0f", tl->rss[k]);
		for (uint32_t g = 0; g < tl->ngroups; g++)
			fprintf(f, ",%.0f", group(tl, g)[k]);
		fprintf(f, ",%.0f\n", tl->other[k]);
	}
	return ferror(f) ? -EIO : 0;
}

static void json_values(FILE *f, const struct hs_timeline *tl, const double *v)
{
	fputc('[', f);
	for (uint32_t k = 0; k < tl->npoints; k++) {
		if (v[k] < 0)
			fprintf(f, "%snull", k ? ", " : "");
		else
			fprintf(f, "%s%.0f", k ? ", " : "", v[k]);
	}
	fputc(']', f);
}

int hs_render_timeline_json(FILE *f, const struct hs_render_timeline *ctx, const struct hs_timeline *tl)
{
	const struct hs_alloctab *t = ctx->tab;
	char name[1100];

	fprintf(f, "{\"schema\": \"heapscope-timeline/1\", \"file\": ");
	hs_json_string(f, ctx->path);
	fprintf(f, ", \"filter\": ");
	hs_json_string(f, ctx->filter->desc);
	fprintf(f, ", \"estimated\": %s, \"duration_ns\": %llu,\n \"time_ns\": [", t->sample_bytes ? "true" : "false",
		(unsigned long long)t->end_ns);
	for (uint32_t k = 0; k < tl->npoints; k++)
		fprintf(f, "%s%llu", k ? ", " : "", (unsigned long long)tl->time_ns[k]);
	fprintf(f, "],\n \"heap\": ");
	json_values(f, tl, tl->heap);
	fprintf(f, ",\n \"rss\": ");
	json_values(f, tl, tl->rss);
	fprintf(f, ",\n \"filtered\": ");
	json_values(f, tl, tl->filtered);
	fprintf(f, ",\n \"groups\": [");
	for (uint32_t g = 0; g < tl->ngroups; g++) {
		fprintf(f, "%s\n  {\"name\": ", g ? "," : "");
		hs_json_string(f, group_name(ctx, tl, g, name, sizeof(name)));
		fprintf(f, ", \"values\": ");
		json_values(f, tl, group(tl, g));
		fputc('}', f);
	}
	fprintf(f, "],\n \"other\": ");
	json_values(f, tl, tl->other);
	fprintf(f, ",\n \"markers\": [");
	for (uint64_t i = 0; i < t->nmarkers; i++) {
		fprintf(f, "%s{\"time_ns\": %llu, \"label\": ", i ? ", " : "", (unsigned long long)t->markers[i].time_ns);
		hs_json_string(f, t->markers[i].label);
		fputc('}', f);
	}
	fprintf(f, "]}\n");
	return ferror(f) ? -EIO : 0;
}
