/* leaks.c - the ranked list of suspicious sites with their verdicts: 80-column text and JSON */
#include "leaks.h"

#include <string.h>

#include "format.h"
#include "top.h"

static const char *const by_names[] = { "backtrace", "function", "line", "library" };

static uint32_t shown(const struct hs_render_leaks *ctx, const struct hs_leaks *lk)
{
	uint32_t n = ctx->all ? lk->nsites : lk->nsuspects;

	return ctx->limit > 0 && (uint32_t)ctx->limit < n ? (uint32_t)ctx->limit : n;
}

static uint32_t folded_of(const struct hs_render_leaks *ctx, const struct hs_leaks_site *s)
{
	return ctx->st->by == HS_BY_BACKTRACE ? s->key : hs_stacks_folded(ctx->st, s->stack);
}

/* Live bytes over the run in one line, scaled to the site's highest: the shape tells the verdict at a glance. */
static void sparkline(FILE *f, const struct hs_leaks_site *s)
{
	static const char levels[] = " .:-=+*#%@";
	float top = 0;

	for (unsigned b = 0; b < HS_LEAKS_BUCKETS; b++)
		if (s->live[b] > top)
			top = s->live[b];
	fprintf(f, "       live |");
	for (unsigned b = 0; b < HS_LEAKS_BUCKETS; b++)
		fputc(top > 0 ? levels[(int)(s->live[b] / top * 9 + 0.5f)] : ' ', f);
	fprintf(f, "| end\n");
}

/*
 * The table's columns: as wide as their headings, wider where a figure
 * needs it (12,345,678,901 calls take 14). Past 80 columns each row's
 * figures go on a line of their own under its verdict.
 */
struct cols {
	int rank, calls, leaked, end;
	int split;
};

static int count_width(double v)
{
	char buf[64];

	return (int)strlen(hs_fmt_count(buf, sizeof(buf), v));
}

static int at_least(int w, int v)
{
	return v > w ? v : w;
}

static struct cols widths(const struct hs_leaks *lk, uint32_t n)
{
	struct cols w = { .rank = 3, .calls = 9, .leaked = 9, .end = 8 };
	char buf[16];

	w.rank = at_least(w.rank, snprintf(buf, sizeof(buf), "%u", n));
	for (uint32_t i = 0; i < n; i++) {
		w.calls = at_least(w.calls, count_width(lk->sites[i].calls));
		w.leaked = at_least(w.leaked, count_width(lk->sites[i].leaked_count));
		w.end = at_least(w.end, count_width(lk->sites[i].freed_end_count));
	}
	w.split = w.rank + 2 + 17 + 1 + w.calls + 1 + w.leaked + 1 + w.end + 1 + 10 + 1 + 10 > 80;
	return w;
}

static void figures(FILE *f, const struct cols *w, const char *calls, const char *leaked, const char *end,
		    const char *bytes, const char *kept)
{
	if (w->split)
		fprintf(f, "%*s", w->rank + 2, "");
	fprintf(f, "%*s %*s %*s %10s %10s\n", w->calls, calls, w->leaked, leaked, w->end, end, bytes, kept);
}

void hs_render_leaks_text(FILE *f, const struct hs_render_leaks *ctx, const struct hs_leaks *lk)
{
	const struct hs_alloctab *t = ctx->tab;
	uint32_t n = shown(ctx, lk), total = ctx->all ? lk->nsites : lk->nsuspects;
	char a[64], b[64], c[64], d[64], e[64];
	int first = 1, col;
	struct cols w;

	fprintf(f, "heapscope leaks of %s\nsites      by %s, most suspicious first\n", ctx->path, by_names[ctx->st->by]);
	if (ctx->filter->desc[0])
		hs_text_field(f, "filter", 11, ctx->filter->desc);
	fprintf(f, "matched    %s%s of %s allocations%s\n", t->sample_bytes ? "~" : "",
		hs_fmt_count(a, sizeof(a), (double)lk->records), hs_fmt_count(b, sizeof(b), (double)t->n),
		t->sample_bytes ? " (sampled: figures are estimates)" : "");
	fprintf(f, "run        %s; peak heap %s at %s\n", hs_fmt_duration(a, sizeof(a), t->end_ns),
		hs_fmt_bytes(b, sizeof(b), t->peak_heap), hs_fmt_duration(c, sizeof(c), t->peak_ns));
	col = fprintf(f, "verdicts  ");
	for (int v = 0; v < HS_LEAK_VERDICTS; v++)
		if (lk->counts[v] > 0) {
			char item[64];
			int len = snprintf(item, sizeof(item), " %.0f %s", lk->counts[v], hs_leaks_verdict_names[v]);
			/* wrap under the first item rather than past 80 columns */
			if (!first && col + 1 + len > 80) {
				fprintf(f, ",\n          ");
				col = 10;
			} else if (!first) {
				col += fprintf(f, ",");
			}
			col += fprintf(f, "%s", item);
			first = 0;
		}
	fprintf(f, "%s\n", first ? " no allocation" : "");
	if (!n) {
		fprintf(f, "\nno suspicious site%s\n", lk->nsites ? " ('--all' lists the others)" : "");
		return;
	}
	w = widths(lk, n);
	fprintf(f, "\n%*s  %-*s%s", w.rank, "#", w.split ? 0 : 17, "verdict", w.split ? "\n" : " ");
	figures(f, &w, "calls", "leaked", "end 2%", "bytes", "kept");
	for (uint32_t i = 0; i < n; i++) {
		const struct hs_leaks_site *s = &lk->sites[i];
		fprintf(f, "%*u  %-*s%s", w.rank, i + 1, w.split ? 0 : 17, hs_leaks_verdict_names[s->verdict],
			w.split ? "\n" : " ");
		figures(f, &w, hs_fmt_count(a, sizeof(a), s->calls), hs_fmt_count(b, sizeof(b), s->leaked_count),
			hs_fmt_count(c, sizeof(c), s->freed_end_count), hs_fmt_bytes(d, sizeof(d), s->bytes),
			hs_fmt_bytes(e, sizeof(e), s->kept_bytes));
		if (s->kept_count > 0)
			sparkline(f, s);
		hs_render_frames_text(f, ctx->st, folded_of(ctx, s), ctx->frames);
	}
	if (n < total)
		fprintf(f, "    ... %u more sites (-n 0 shows all)\n", total - n);
	fprintf(f, "\nleaked: never freed; end 2%%: freed in the last 2%% of the run; kept: leaked,\n"
		   "or freed in the last 2%% after living 2%% of the run; live: the site's live\n"
		   "bytes over the run; verdicts: docs/analysis.md%s\n", ctx->all ? "" : "; --all lists every site");
}

void hs_render_leaks_json(FILE *f, const struct hs_render_leaks *ctx, const struct hs_leaks *lk)
{
	const struct hs_alloctab *t = ctx->tab;
	uint32_t n = shown(ctx, lk);
	int first = 1;

	fprintf(f, "{\"schema\": \"heapscope-leaks/1\", \"file\": ");
	hs_json_string(f, ctx->path);
	fprintf(f, ", \"by\": \"%s\", \"filter\": ", by_names[ctx->st->by]);
	hs_json_string(f, ctx->filter->desc);
	fprintf(f, ",\n \"estimated\": %s, \"records\": %llu, \"matched_records\": %llu, \"duration_ns\": %llu, "
		   "\"peak_heap\": {\"bytes\": %.0f, \"time_ns\": %llu},\n \"verdicts\": {",
		t->sample_bytes ? "true" : "false", (unsigned long long)t->n, (unsigned long long)lk->records,
		(unsigned long long)t->end_ns, t->peak_heap, (unsigned long long)t->peak_ns);
	for (int v = 0; v < HS_LEAK_VERDICTS; v++) {
		fprintf(f, "%s\"%s\": %.0f", first ? "" : ", ", hs_leaks_verdict_names[v], lk->counts[v]);
		first = 0;
	}
	fprintf(f, "},\n \"sites_total\": %u, \"suspects\": %u,\n \"sites\": [", lk->nsites, lk->nsuspects);
	for (uint32_t i = 0; i < n; i++) {
		const struct hs_leaks_site *s = &lk->sites[i];
		char name[1100];
		fprintf(f, "%s\n  {\"rank\": %u, \"verdict\": \"%s\", \"score\": %.0f, \"name\": ", i ? "," : "", i + 1,
			hs_leaks_verdict_names[s->verdict], s->score);
		hs_json_string(f, hs_stacks_key_name(ctx->st, s->key, 0, name, sizeof(name)));
		fprintf(f, ", \"calls\": %.0f, \"bytes\": %.0f, \"leaked_count\": %.0f, \"leaked_bytes\": %.0f, "
			   "\"freed_end_count\": %.0f, \"freed_end_bytes\": %.0f, \"kept_count\": %.0f, \"kept_bytes\": %.0f, "
			   "\"reallocs\": %.0f, \"growth\": %.3f, \"plateau\": %.2f, \"live\": [",
			s->calls, s->bytes, s->leaked_count, s->leaked_bytes, s->freed_end_count, s->freed_end_bytes,
			s->kept_count, s->kept_bytes, s->reallocs, s->growth, s->plateau);
		for (unsigned b = 0; b < HS_LEAKS_BUCKETS; b++)
			fprintf(f, "%s%.0f", b ? ", " : "", (double)s->live[b]);
		fprintf(f, "], \"frames\": ");
		hs_render_frames_json(f, ctx->st, folded_of(ctx, s));
		fprintf(f, "}");
	}
	fprintf(f, "]}\n");
}
