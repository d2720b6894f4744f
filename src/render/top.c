/* top.c - the table of allocation groups: 80-column text and JSON */
#include "top.h"

#include <string.h>

#include "format.h"

#define MAX_FRAMES 256

static const char *const by_names[] = { "backtrace", "function", "line", "library" };

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p;
}

const char *hs_render_top_row_name(const struct hs_render_top *ctx, const struct hs_top *top,
				   const struct hs_top_row *row, char *buf, size_t n)
{
	return hs_stacks_key_name(ctx->st, row->key, top->focus != HS_STACKS_NO_KEY, buf, n);
}

/* The row's figures; the columns they took (more than the header's with counts of ten digits and more). */
static int text_row(FILE *f, int rank, const struct hs_top_row *r)
{
	char a[32], b[32], c[32], d[32], e[32];
	int n;

	if (rank)
		n = fprintf(f, "%4d", rank);
	else
		n = fprintf(f, "%-4s", "all");
	n += fprintf(f, " %11s %10s %10s %10s %11s", hs_fmt_count(a, sizeof(a), r->calls),
		     hs_fmt_bytes(b, sizeof(b), r->bytes), hs_fmt_bytes(c, sizeof(c), r->peak_bytes),
		     hs_fmt_bytes(d, sizeof(d), r->leaked_bytes), hs_fmt_count(e, sizeof(e), r->temporary_count));
	return n;
}

void hs_render_frames_text(FILE *f, struct hs_stacks *st, uint32_t folded, int frames)
{
	struct hs_frame fr[MAX_FRAMES];
	int n = hs_stacks_folded_frames(st, folded, fr, MAX_FRAMES);

	for (int j = 0; j < n && j < frames; j++) {
		char loc[300] = "", line[1600], unknown[300];
		if (fr[j].file)
			snprintf(loc, sizeof(loc), "  %s:%d", base_name(fr[j].file), fr[j].line);
		if (fr[j].function)
			snprintf(line, sizeof(line), "%s%s%s  (%s)", fr[j].inlined ? "[inlined] " : "", fr[j].function, loc,
				 fr[j].module ? base_name(fr[j].module) : "?");
		else
			snprintf(line, sizeof(line), "%s", hs_frame_name(&fr[j], unknown, sizeof(unknown)));
		hs_put_line(f, "       ", line);
	}
	if (n > frames)
		fprintf(f, "       ... %d more frames (--frames N shows more)\n", n - frames);
	if (n == 0)
		fprintf(f, "       (no backtrace)\n");
}

void hs_render_top_text(FILE *f, const struct hs_render_top *ctx, const struct hs_top *top)
{
	const struct hs_alloctab *t = ctx->tab;
	char a[64], b[64], c[64], name[1100];
	const char *nm;
	int backtraces = ctx->st->by == HS_BY_BACKTRACE && top->focus == HS_STACKS_NO_KEY;
	uint32_t shown = ctx->limit > 0 && (uint32_t)ctx->limit < top->nrows ? (uint32_t)ctx->limit : top->nrows;

	fprintf(f, "heapscope top of %s\nrows       by %s, sorted by %s\n", ctx->path, by_names[ctx->st->by],
		hs_top_sort_names[top->sort]);
	if (ctx->filter->desc[0])
		hs_text_field(f, "filter", 11, ctx->filter->desc);
	if (t->sample_bytes)
		fprintf(f, "matched    ~%s allocations, estimated from %s of %s samples\n", hs_fmt_count(a, sizeof(a), top->total.calls),
			hs_fmt_count(b, sizeof(b), (double)top->records), hs_fmt_count(c, sizeof(c), (double)t->n));
	else
		fprintf(f, "matched    %s of %s allocations\n", hs_fmt_count(a, sizeof(a), top->total.calls),
			hs_fmt_count(b, sizeof(b), (double)t->n));
	fprintf(f, "peak heap  %s at %s; end of the run at %s\n", hs_fmt_bytes(a, sizeof(a), t->peak_heap),
		hs_fmt_duration(b, sizeof(b), t->peak_ns), hs_fmt_duration(c, sizeof(c), t->end_ns));
	if (top->focus != HS_STACKS_NO_KEY) {
		fprintf(f, "callers of row %d:\n", ctx->focus_row);
		hs_put_line(f, "  ", ctx->focus_name);
	}
	fprintf(f, "\n%4s %11s %10s %10s %10s %11s", "#", "calls", "bytes", "peak", "leaked", "temporary");
	if (!backtraces)
		fprintf(f, "  %s", top->focus != HS_STACKS_NO_KEY ? "caller" : by_names[ctx->st->by]);
	fputc('\n', f);
	for (uint32_t i = 0; i < shown; i++) {
		const struct hs_top_row *r = &top->rows[i];
		int cols = text_row(f, (int)i + 1, r);
		if (backtraces) {
			fputc('\n', f);
			hs_render_frames_text(f, ctx->st, r->key, ctx->frames);
			continue;
		}
		nm = hs_render_top_row_name(ctx, top, r, name, sizeof(name));
		/* the name shares the row's line, two spaces after the figures, when it fits there */
		if (cols > 0 && (size_t)cols + 2 + strlen(nm) <= 80)
			fprintf(f, "  %s\n", nm);
		else {
			fputc('\n', f);
			hs_put_line(f, "       ", nm);
		}
	}
	if (shown < top->nrows)
		fprintf(f, "     ... %u more rows (-n 0 shows all)\n", top->nrows - shown);
	text_row(f, 0, &top->total);
	fprintf(f, "\n\npeak: live at peak heap; leaked: never freed; temporary: freed before the end\n");
}

void hs_render_frames_json(FILE *f, struct hs_stacks *st, uint32_t folded)
{
	struct hs_frame fr[MAX_FRAMES];
	int n = hs_stacks_folded_frames(st, folded, fr, MAX_FRAMES);

	fprintf(f, "[");
	for (int j = 0; j < n; j++) {
		fprintf(f, "%s{\"address\": \"0x%llx\", \"module_address\": \"0x%llx\", \"function\": ", j ? ", " : "",
			(unsigned long long)fr[j].address, (unsigned long long)fr[j].module_address);
		hs_json_string(f, fr[j].function);
		fprintf(f, ", \"file\": ");
		hs_json_string(f, fr[j].file);
		fprintf(f, ", \"line\": %d, \"module\": ", fr[j].line);
		hs_json_string(f, fr[j].module);
		fprintf(f, ", \"inlined\": %s}", fr[j].inlined ? "true" : "false");
	}
	fprintf(f, "]");
}

static void json_figures(FILE *f, const struct hs_top_row *r)
{
	fprintf(f, "\"calls\": %.0f, \"bytes\": %.0f, \"peak_bytes\": %.0f, \"leaked_count\": %.0f, \"leaked_bytes\": %.0f, "
		   "\"temporary_count\": %.0f, \"temporary_bytes\": %.0f",
		r->calls, r->bytes, r->peak_bytes, r->leaked_count, r->leaked_bytes, r->temporary_count, r->temporary_bytes);
}

void hs_render_top_json(FILE *f, const struct hs_render_top *ctx, const struct hs_top *top)
{
	const struct hs_alloctab *t = ctx->tab;
	char name[1100];
	int backtraces = ctx->st->by == HS_BY_BACKTRACE && top->focus == HS_STACKS_NO_KEY;
	uint32_t shown = ctx->limit > 0 && (uint32_t)ctx->limit < top->nrows ? (uint32_t)ctx->limit : top->nrows;

	fprintf(f, "{\"schema\": \"heapscope-top/1\", \"file\": ");
	hs_json_string(f, ctx->path);
	fprintf(f, ", \"by\": \"%s\", \"sort\": \"%s\", \"filter\": ", by_names[ctx->st->by], hs_top_sort_names[top->sort]);
	hs_json_string(f, ctx->filter->desc);
	fprintf(f, ",\n \"estimated\": %s, \"records\": %llu, \"matched_records\": %llu, \"duration_ns\": %llu, "
		   "\"peak_heap\": {\"bytes\": %.0f, \"time_ns\": %llu},\n \"callers_of\": ",
		t->sample_bytes ? "true" : "false", (unsigned long long)t->n, (unsigned long long)top->records,
		(unsigned long long)t->end_ns, t->peak_heap,
		(unsigned long long)t->peak_ns);
	if (top->focus == HS_STACKS_NO_KEY) {
		fprintf(f, "null");
	} else {
		fprintf(f, "{\"row\": ");
		if (ctx->focus_row)
			fprintf(f, "%d", ctx->focus_row);
		else
			fprintf(f, "null");
		fprintf(f, ", \"name\": ");
		hs_json_string(f, ctx->focus_name);
		fprintf(f, "}");
	}
	fprintf(f, ",\n \"total\": {");
	json_figures(f, &top->total);
	fprintf(f, "},\n \"rows_total\": %u,\n \"rows\": [", top->nrows);
	for (uint32_t i = 0; i < shown; i++) {
		const struct hs_top_row *r = &top->rows[i];
		fprintf(f, "%s\n  {\"rank\": %u, \"name\": ", i ? "," : "", i + 1);
		hs_json_string(f, hs_render_top_row_name(ctx, top, r, name, sizeof(name)));
		fprintf(f, ", ");
		json_figures(f, r);
		if (backtraces) {
			fprintf(f, ", \"frames\": ");
			hs_render_frames_json(f, ctx->st, r->key);
		}
		fprintf(f, "}");
	}
	fprintf(f, "]}\n");
}
