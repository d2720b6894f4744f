/* diff.c - the sites that changed most between two traces: 80-column text and JSON */
#include "diff.h"

#include <math.h>

#include "format.h"
#include "top.h"

static const char *const by_names[] = { "backtrace", "function", "line", "library" };

static uint32_t shown(const struct hs_render_diff *ctx, const struct hs_diff *d)
{
	return ctx->limit > 0 && (uint32_t)ctx->limit < d->nchanged ? (uint32_t)ctx->limit : d->nchanged;
}

/* "+48.8 KiB", "-1.20 MiB", "0 B" */
static const char *signed_bytes(char *buf, size_t n, double v)
{
	char tmp[40];

	hs_fmt_bytes(tmp, sizeof(tmp), fabs(v));
	snprintf(buf, n, "%s%s", v > 0.5 ? "+" : v < -0.5 ? "-" : "", tmp);
	return buf;
}

static void total_line(FILE *f, const char *what, double b, double n)
{
	char x[48], y[48], z[48];

	fprintf(f, "%-10s %s -> %s (%s)\n", what, hs_fmt_bytes(x, sizeof(x), b), hs_fmt_bytes(y, sizeof(y), n),
		signed_bytes(z, sizeof(z), n - b));
}

void hs_render_diff_text(FILE *f, const struct hs_render_diff *ctx, const struct hs_diff *d)
{
	const struct hs_top_row *bt = &ctx->base_top->total, *nt = &ctx->new_top->total;
	uint32_t n = shown(ctx, d);
	char a[48], b[48], c[48], e[48], g[48];

	fprintf(f, "heapscope diff\nbase       %s\nnew        %s\n", ctx->base_path, ctx->new_path);
	fprintf(f, "sites      by %s, matched by name, sorted by %s\n", by_names[ctx->new_st->by], hs_diff_sort_names[d->sort]);
	if (ctx->filter->desc[0])
		hs_text_field(f, "filter", 11, ctx->filter->desc);
	total_line(f, "allocated", bt->bytes, nt->bytes);
	total_line(f, "peak heap", ctx->base_tab->peak_heap, ctx->new_tab->peak_heap);
	total_line(f, "leaked", bt->leaked_bytes, nt->leaked_bytes);
	fprintf(f, "\n%3s %11s %11s %11s  %s\n", "#", "bytes", "peak", "leaked", "leaked blocks");
	for (uint32_t i = 0; i < n; i++) {
		const struct hs_diff_row *r = &d->rows[i];
		char blocks[64];
		snprintf(blocks, sizeof(blocks), "%s -> %s%s", hs_fmt_count(e, sizeof(e), r->base.leaked_count),
			 hs_fmt_count(g, sizeof(g), r->new.leaked_count), !r->in_base ? " (new)" : !r->in_new ? " (gone)" : "");
		fprintf(f, "%3u %11s %11s %11s  %s\n", i + 1, signed_bytes(a, sizeof(a), r->new.bytes - r->base.bytes),
			signed_bytes(b, sizeof(b), r->new.peak_bytes - r->base.peak_bytes),
			signed_bytes(c, sizeof(c), r->new.leaked_bytes - r->base.leaked_bytes), blocks);
		if (ctx->new_st->by == HS_BY_BACKTRACE) {
			if (r->in_new)
				hs_render_frames_text(f, ctx->new_st, r->new_key, ctx->frames);
			else
				hs_render_frames_text(f, ctx->base_st, r->base_key, ctx->frames);
		} else {
			char name[1100];
			hs_put_line(f, "       ", r->in_new ? hs_stacks_key_name(ctx->new_st, r->new_key, 0, name, sizeof(name)) :
						hs_stacks_key_name(ctx->base_st, r->base_key, 0, name, sizeof(name)));
		}
	}
	if (n < d->nchanged)
		fprintf(f, "    ... %u more changed sites (-n 0 shows all)\n", d->nchanged - n);
	if (!d->nchanged)
		fprintf(f, "no site changed\n");
	if (d->nrows > d->nchanged)
		fprintf(f, "%u sites did not change\n", d->nrows - d->nchanged);
	fprintf(f, "\nchanges are new minus base: bytes allocated, bytes live at each trace's\n"
		   "peak heap, bytes never freed\n");
}

static void json_figures(FILE *f, const struct hs_top_row *r)
{
	fprintf(f, "{\"calls\": %.0f, \"bytes\": %.0f, \"peak_bytes\": %.0f, \"leaked_count\": %.0f, \"leaked_bytes\": %.0f}",
		r->calls, r->bytes, r->peak_bytes, r->leaked_count, r->leaked_bytes);
}

void hs_render_diff_json(FILE *f, const struct hs_render_diff *ctx, const struct hs_diff *d)
{
	uint32_t n = shown(ctx, d);
	char name[1100];

	fprintf(f, "{\"schema\": \"heapscope-diff/1\", \"base\": ");
	hs_json_string(f, ctx->base_path);
	fprintf(f, ", \"new\": ");
	hs_json_string(f, ctx->new_path);
	fprintf(f, ", \"by\": \"%s\", \"sort\": \"%s\", \"filter\": ", by_names[ctx->new_st->by], hs_diff_sort_names[d->sort]);
	hs_json_string(f, ctx->filter->desc);
	fprintf(f, ",\n \"peak_heap\": {\"base\": %.0f, \"new\": %.0f},\n \"total\": {\"base\": ", ctx->base_tab->peak_heap,
		ctx->new_tab->peak_heap);
	json_figures(f, &ctx->base_top->total);
	fprintf(f, ", \"new\": ");
	json_figures(f, &ctx->new_top->total);
	fprintf(f, "},\n \"rows_total\": %u, \"rows_changed\": %u,\n \"rows\": [", d->nrows, d->nchanged);
	for (uint32_t i = 0; i < n; i++) {
		const struct hs_diff_row *r = &d->rows[i];
		struct hs_stacks *st = r->in_new ? ctx->new_st : ctx->base_st;
		uint32_t key = r->in_new ? r->new_key : r->base_key;
		fprintf(f, "%s\n  {\"rank\": %u, \"status\": \"%s\", \"name\": ", i ? "," : "", i + 1,
			r->in_base && r->in_new ? "both" : r->in_new ? "new" : "gone");
		hs_json_string(f, hs_stacks_key_name(st, key, 0, name, sizeof(name)));
		fprintf(f, ", \"base\": ");
		json_figures(f, &r->base);
		fprintf(f, ", \"new\": ");
		json_figures(f, &r->new);
		fprintf(f, ", \"delta\": {\"calls\": %.0f, \"bytes\": %.0f, \"peak_bytes\": %.0f, \"leaked_count\": %.0f, "
			   "\"leaked_bytes\": %.0f}",
			r->new.calls - r->base.calls, r->new.bytes - r->base.bytes, r->new.peak_bytes - r->base.peak_bytes,
			r->new.leaked_count - r->base.leaked_count, r->new.leaked_bytes - r->base.leaked_bytes);
		if (st->by == HS_BY_BACKTRACE) {
			fprintf(f, ", \"frames\": ");
			hs_render_frames_json(f, st, key);
		}
		fputc('}', f);
	}
	fprintf(f, "]}\n");
}
