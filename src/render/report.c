/* report.c - the report as 80-column text and as JSON (heapscope-report/1) */
#define _GNU_SOURCE   /* sigabbrev_np */
#include "report.h"

#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>

#include "../analysis/stacks.h"
#include "format.h"

#define TEXT_FRAMES 8
#define MAX_FRAMES 160

static const char *rank_title[HS_RANK_COUNT] = { "bytes allocated", "calls", "peak contribution", "leaked bytes" };
static const char *rank_key[HS_RANK_COUNT] = { "bytes_allocated", "calls", "peak", "leaked" };

static const char *end_text(const struct hs_report *rep)
{
	static char buf[224];

	if (!rep->clean_exit && rep->signal) {
		snprintf(buf, sizeof(buf), "killed by signal %d (SIG%s), the trace complete up to it", rep->signal,
			 sigabbrev_np(rep->signal) ? sigabbrev_np(rep->signal) : "?");
		return buf;
	}
	if (!rep->clean_exit && rep->info && rep->info->being_written)
		return "no end yet: the process still runs and writes the trace (read up to its last flushed chunk)";
	if (!rep->clean_exit)
		return "no clean end: killed or crashed (read up to the last flushed chunk)";
	if (rep->disabled[0]) {
		snprintf(buf, sizeof(buf), "the tracer stopped itself: %s", rep->disabled);
		return buf;
	}
	switch (rep->end_reason) {
	case HS_END_EXEC: return "ended by exec of another program";
	case HS_END_UNDERSCORE_EXIT: return "ended by _exit";
	case HS_END_STOP: return "tracing stopped by hs_stop()";
	default: return "exited";
	}
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p;
}

/* All frames of a stack, inlined ones expanded, innermost first. */
static int frames_of(struct hs_reader *r, uint32_t stack, struct hs_frame *out, int max)
{
	uint64_t ips[MAX_FRAMES];
	int n = hs_reader_stack(r, stack, ips, MAX_FRAMES), k = 0;

	for (int i = 0; i < n && k < max; i++)
		k += hs_reader_symbolize(r, ips[i], out + k, max - k);
	return k;
}

/* One frame a line, within 80 columns: a long (C++) name is cut in the middle, where it says least. */
static void text_frame(FILE *f, const struct hs_frame *fr)
{
	char loc[600] = "", name[80], unknown[300];
	const char *fn = hs_frame_name(fr, unknown, sizeof(unknown));
	int room;
	size_t len = strlen(fn);

	if (!fr->function) /* the module is in the name */
		;
	else if (!fr->file) /* no line number without a file */
		snprintf(loc, sizeof(loc), "  (%s)", fr->module ? base_name(fr->module) : "?");
	else
		snprintf(loc, sizeof(loc), "  %s:%d  (%s)", base_name(fr->file), fr->line,
			 fr->module ? base_name(fr->module) : "?");
	room = 80 - 6 - (fr->inlined ? 10 : 0) - (int)strlen(loc);
	if (room < 20)
		room = 20;
	if ((int)len > room && room < (int)sizeof(name)) {
		int head = (room - 3) / 2, tail = room - 3 - head;
		snprintf(name, sizeof(name), "%.*s...%s", head, fn, fn + len - tail);
		fn = name;
	}
	fprintf(f, "      %s%s%s\n", fr->inlined ? "[inlined] " : "", fn, loc);
}

/* A field of the header: its label, then text wrapped within 80 columns under the first line's. */
__attribute__((format(printf, 3, 4))) static void field(FILE *f, const char *label, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	hs_text_field(f, label, 13, text);
}

void hs_render_report_text(FILE *f, struct hs_reader *r, const struct hs_report *rep, const char *path)
{
	const struct hs_trace_info *in = rep->info;
	char a[64], b[64], c[64], d[64], e[64];
	struct hs_frame frames[MAX_FRAMES];
	regex_t plumbing;
	int have_re;

	fprintf(f, "heapscope report of %s\n\n", path);
	fprintf(f, "command      ");
	if (in->argc)
		hs_text_command(f, in->argc, (const char *const *)in->argv, 13, 80);
	else if (in->exe[0])
		hs_text_command(f, 1, &in->exe, 13, 80);
	else
		fprintf(f, "(not recorded)\n");
	fprintf(f, "pid          %u (parent %u)\n", in->pid, in->ppid);
	field(f, "duration", "%s, %s", hs_fmt_duration(a, sizeof(a), rep->duration_ns), end_text(rep));
	if (rep->untraced_children)
		field(f, "children", "%s started, not traced: record with --follow-fork (forked children), --follow-exec (programs they run)",
		      hs_fmt_count(a, sizeof(a), (double)rep->untraced_children));
	if (rep->sampled)
		field(f, "mode", "sampled (every %s on average): figures below are estimates",
		      hs_fmt_bytes(a, sizeof(a), (double)rep->sample_bytes));
	else
		fprintf(f, "mode         full (every call recorded)\n");
	fprintf(f, "\ncalls\n");
	if (rep->have_totals) {
		int any = 0;
		for (int i = 0; i < HS_FN_COUNT; i++)
			if (rep->calls[i]) {
				fprintf(f, "  %-20s %14s\n", hs_fn_name(i), hs_fmt_count(a, sizeof(a), (double)rep->calls[i]));
				any = 1;
			}
		if (!any)
			fprintf(f, "  (none: the program made no call, or has an allocator of its own linked in)\n");
	} else {
		fprintf(f, "  (not recorded: the trace ends before the tracer's first totals)\n");
	}
	fprintf(f, "\nallocations  %s blocks, %s\n", hs_fmt_count(a, sizeof(a), rep->allocations),
		hs_fmt_bytes(b, sizeof(b), rep->bytes_allocated));
	fprintf(f, "frees        %s", hs_fmt_count(a, sizeof(a), rep->frees));
	if (rep->untracked_frees)
		fprintf(f, " (and %s of blocks allocated before tracing)", hs_fmt_count(b, sizeof(b), (double)rep->untracked_frees));
	fprintf(f, "\ntemporary    %s (freed before their thread's next allocation)\n",
		hs_fmt_count(a, sizeof(a), rep->temporary));
	fprintf(f, "peak heap    %s at %s\n", hs_fmt_bytes(a, sizeof(a), rep->peak_heap),
		hs_fmt_duration(b, sizeof(b), rep->peak_heap_ns));
	if (rep->peak_rss)
		fprintf(f, "peak RSS     %s at %s\n", hs_fmt_bytes(a, sizeof(a), (double)rep->peak_rss),
			hs_fmt_duration(b, sizeof(b), rep->peak_rss_ns));
	/* a trace that ends before its process did cannot tell a leak from a block freed later */
	fprintf(f, "leaked       %s blocks, %s (%s)\n", hs_fmt_count(a, sizeof(a), rep->leaked_count),
		hs_fmt_bytes(b, sizeof(b), rep->leaked_bytes),
		!rep->clean_exit || rep->disabled[0] || rep->end_reason == HS_END_STOP
			? "still live when tracing ended"
			: "never freed");

	if (rep->ntop[HS_RANK_BYTES])
		fprintf(f, "\nsites: bytes / calls   peak: live at peak heap   leaked: bytes / blocks\n");
	have_re = hs_plumbing_init(&plumbing) == 0;
	for (int k = 0; k < HS_RANK_COUNT; k++) {
		if (!rep->ntop[k])
			continue;
		fprintf(f, "\ntop %d sites by %s\n", rep->ntop[k], rank_title[k]);
		for (int i = 0; i < rep->ntop[k]; i++) {
			const struct hs_site *s = &rep->sites[rep->top[k][i]];
			int n = frames_of(r, s->stack, frames, MAX_FRAMES);
			char head[96], tail[96];
			hs_fmt_count(b, sizeof(b), s->calls);
			snprintf(head, sizeof(head), "  #%-2d %s / %s %s", i + 1, hs_fmt_bytes(a, sizeof(a), s->bytes), b,
				 strcmp(b, "1") ? "calls" : "call");
			snprintf(tail, sizeof(tail), "peak %s   leaked %s / %s", hs_fmt_bytes(c, sizeof(c), s->peak_bytes),
				 hs_fmt_bytes(d, sizeof(d), s->leaked_bytes), hs_fmt_count(e, sizeof(e), s->leaked_count));
			/* figures of many digits pass 80 columns (12,345,678 calls leaking 1023.9 MiB in 1,234,567 blocks: 85) */
			if (strlen(head) + 3 + strlen(tail) <= 80)
				fprintf(f, "%s   %s\n", head, tail);
			else
				fprintf(f, "%s\n      %s\n", head, tail);
			/* operator new, Rust's alloc:: ...: the program's own frame first */
			int j0 = 0, shown;
			while (have_re && j0 < n && hs_plumbing_matches(&plumbing, &frames[j0]))
				j0++;
			if (j0 == n)
				j0 = 0;
			shown = n - j0 < TEXT_FRAMES ? n - j0 : TEXT_FRAMES;
			for (int j = j0; j < j0 + shown; j++)
				text_frame(f, &frames[j]);
			if (n > shown)
				fprintf(f, "      ... %d more frames%s (--json shows all)\n", n - shown,
					j0 ? ", allocator ones above these included" : "");
			if (n == 0)
				fprintf(f, "      (no backtrace)\n");
		}
	}
	if (have_re)
		regfree(&plumbing);
}

static void json_site(FILE *f, struct hs_reader *r, const struct hs_site *s)
{
	struct hs_frame frames[MAX_FRAMES];
	int n = frames_of(r, s->stack, frames, MAX_FRAMES);

	fprintf(f, "{\"stack_id\": %u, \"calls\": %.0f, \"bytes\": %.0f, \"peak_bytes\": %.0f, "
		   "\"leaked_count\": %.0f, \"leaked_bytes\": %.0f, \"temporary\": %.0f, \"frames\": [",
		s->stack, s->calls, s->bytes, s->peak_bytes, s->leaked_count, s->leaked_bytes, s->temporary);
	for (int j = 0; j < n; j++) {
		fprintf(f, "%s{\"address\": \"0x%llx\", \"module_address\": \"0x%llx\", \"function\": ", j ? ", " : "",
			(unsigned long long)frames[j].address, (unsigned long long)frames[j].module_address);
		hs_json_string(f, frames[j].function);
		fprintf(f, ", \"file\": ");
		hs_json_string(f, frames[j].file);
		fprintf(f, ", \"line\": %d, \"module\": ", frames[j].line);
		hs_json_string(f, frames[j].module);
		fprintf(f, ", \"inlined\": %s}", frames[j].inlined ? "true" : "false");
	}
	fprintf(f, "]}");
}

void hs_render_report_json(FILE *f, struct hs_reader *r, const struct hs_report *rep, const char *path)
{
	const struct hs_trace_info *in = rep->info;

	fprintf(f, "{\"schema\": \"heapscope-report/1\", \"file\": ");
	hs_json_string(f, path);
	fprintf(f, ",\n \"process\": {\"pid\": %u, \"ppid\": %u, \"exe\": ", in->pid, in->ppid);
	hs_json_string(f, in->exe);
	fprintf(f, ", \"cmdline\": [");
	for (int i = 0; i < in->argc; i++) {
		fprintf(f, "%s", i ? ", " : "");
		hs_json_string(f, in->argv[i]);
	}
	fprintf(f, "]},\n \"duration_ns\": %llu, \"clean_exit\": %s, \"being_written\": %s, \"end\": \"%s\", \"signal\": %d, "
		   "\"mode\": \"%s\", \"sample_bytes\": %llu, \"estimated\": %s,\n",
		(unsigned long long)rep->duration_ns, rep->clean_exit ? "true" : "false",
		in->being_written ? "true" : "false",
		rep->clean_exit && rep->disabled[0] ? "disabled"
		: !rep->clean_exit && !rep->signal && in->being_written ? "running"
		: hs_fmt_end_key(rep->clean_exit, rep->end_reason, rep->signal),
		rep->signal, rep->sampled ? "sampled" : "full", (unsigned long long)rep->sample_bytes,
		rep->sampled ? "true" : "false");
	fprintf(f, " \"untraced_children\": %llu,\n", (unsigned long long)rep->untraced_children);
	if (rep->disabled[0]) {
		fprintf(f, " \"disabled\": ");
		hs_json_string(f, rep->disabled);
		fprintf(f, ",\n");
	}
	fprintf(f, " \"calls\": {");
	for (int i = 0; i < HS_FN_COUNT; i++)
		fprintf(f, "%s\"%s\": %llu", i ? ", " : "", hs_fn_name(i), (unsigned long long)rep->calls[i]);
	fprintf(f, "},\n \"call_bytes\": {");
	for (int i = 0; i < HS_FN_COUNT; i++)
		fprintf(f, "%s\"%s\": %llu", i ? ", " : "", hs_fn_name(i), (unsigned long long)rep->call_bytes[i]);
	fprintf(f, "},\n \"allocations\": %.0f, \"frees\": %.0f, \"bytes_allocated\": %.0f, \"untracked_frees\": %llu,\n",
		rep->allocations, rep->frees, rep->bytes_allocated, (unsigned long long)rep->untracked_frees);
	fprintf(f, " \"temporary\": {\"count\": %.0f},\n", rep->temporary);
	fprintf(f, " \"leaked\": {\"count\": %.0f, \"bytes\": %.0f},\n", rep->leaked_count, rep->leaked_bytes);
	fprintf(f, " \"peak_heap\": {\"bytes\": %.0f, \"time_ns\": %llu},\n", rep->peak_heap,
		(unsigned long long)rep->peak_heap_ns);
	fprintf(f, " \"peak_rss\": {\"bytes\": %llu, \"time_ns\": %llu},\n", (unsigned long long)rep->peak_rss,
		(unsigned long long)rep->peak_rss_ns);
	fprintf(f, " \"top\": {");
	for (int k = 0; k < HS_RANK_COUNT; k++) {
		fprintf(f, "%s\n  \"%s\": [", k ? "," : "", rank_key[k]);
		for (int i = 0; i < rep->ntop[k]; i++) {
			fprintf(f, "%s\n   ", i ? "," : "");
			json_site(f, r, &rep->sites[rep->top[k][i]]);
		}
		fprintf(f, "]");
	}
	fprintf(f, "}}\n");
}
