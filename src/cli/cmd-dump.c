/* cmd-dump.c - heapscope dump: a trace's records as text, one per line, for debugging and scripts */
#define _POSIX_C_SOURCE 200809L /* strndup */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../render/format.h"
#include "cli.h"
#include "heapscope/reader.h"

static const char usage[] =
	"usage: heapscope dump [--backtraces] TRACE\n"
	"  prints every event: time_ns tid kind fields...; with --backtraces each\n"
	"  allocation is followed by its frames (function file:line), innermost first\n";

static const char *kind_name(enum hs_event_kind k)
{
	static const char *const names[] = { "alloc", "free", "mmap", "munmap", "mremap", "brk", "rss", "marker",
					     "module", "module-unload", "totals", "end", "signal", "disabled", "children" };
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

static void backtrace(struct hs_reader *r, uint32_t stack)
{
	uint64_t ips[160];
	int n = hs_reader_stack(r, stack, ips, 160);

	for (int i = 0; i < n; i++) {
		struct hs_frame fr[32];
		char unknown[300];
		int m = hs_reader_symbolize(r, ips[i], fr, 32);
		for (int k = 0; k < m; k++) {
			printf("    %s", hs_frame_name(&fr[k], unknown, sizeof(unknown)));
			if (fr[k].file)
				printf(" %s:%d", fr[k].file, fr[k].line);
			printf("%s\n", fr[k].inlined ? " (inlined)" : "");
		}
	}
}

int hs_cmd_dump(int argc, char **argv)
{
	static const char *const flags[] = { "--backtraces", NULL };
	const char *path;
	int bt = 0, rc;
	struct hs_reader *r = NULL;
	struct hs_event ev;
	struct hs_cli_args args = { .cmd = "dump", .usage = usage, .flags = flags, .take = hs_cli_take_flag, .ctx = &bt,
				    .want = 1 };

	if ((rc = hs_cli_args_parse(&args, argc, argv)) != 0 || args.help)
		return rc;
	path = args.paths[0];
	if ((rc = hs_cli_reader_open(&r, path)) != 0)
		goto out;
	while ((rc = hs_reader_next(r, &ev)) > 0) {
		printf("%" PRIu64 " %u %s", ev.time_ns, ev.tid, kind_name(ev.kind));
		switch (ev.kind) {
		case HS_EVENT_ALLOC:
			printf(" %s 0x%" PRIx64 " %" PRIu64 " stack=%u", hs_fn_name(ev.fn), ev.ptr, ev.size, ev.stack);
			if (ev.old_ptr)
				printf(" old=0x%" PRIx64, ev.old_ptr);
			break;
		case HS_EVENT_FREE:
			printf(" %s 0x%" PRIx64, hs_fn_name(ev.fn), ev.ptr);
			break;
		case HS_EVENT_MMAP:
		case HS_EVENT_MUNMAP:
		case HS_EVENT_MREMAP:
			printf(" 0x%" PRIx64 " %" PRIu64, ev.addr, ev.len);
			if (ev.kind == HS_EVENT_MREMAP)
				printf(" -> 0x%" PRIx64 " %" PRIu64, ev.new_addr, ev.new_len);
			if (ev.kind != HS_EVENT_MUNMAP)
				printf(" stack=%u", ev.stack);
			break;
		case HS_EVENT_BRK:
			printf(" %s 0x%" PRIx64 " -> 0x%" PRIx64, hs_fn_name(ev.fn), ev.addr, ev.new_addr);
			break;
		case HS_EVENT_RSS:
			printf(" %" PRIu64, ev.rss);
			break;
		case HS_EVENT_MARKER:
		case HS_EVENT_DISABLED: {
			/* the program's own text, one word: a newline in it would start what reads as another record */
			char *label = strndup(ev.label ? ev.label : "", ev.label_len);
			if (!label) {
				rc = hs_die("out of memory for a marker's label; free some memory");
				goto out;
			}
			putchar(' ');
			hs_text_word(stdout, label);
			free(label);
			break;
		}
		case HS_EVENT_MODULE:
			printf(" 0x%" PRIx64 " ", ev.module->base);
			hs_text_word(stdout, ev.module->path);
			break;
		case HS_EVENT_MODULE_UNLOAD:
			printf(" 0x%" PRIx64, ev.addr);
			break;
		case HS_EVENT_CHILDREN:
			printf(" %" PRIu64, ev.len);
			break;
		case HS_EVENT_TOTALS:
			for (int i = 0; i < HS_FN_COUNT; i++)
				if (ev.calls[i])
					printf(" %s=%" PRIu64, hs_fn_name(i), ev.calls[i]);
			break;
		case HS_EVENT_END:
		case HS_EVENT_SIGNAL:
			printf(" %u", ev.flags);
			break;
		}
		printf("\n");
		if (bt && (ev.kind == HS_EVENT_ALLOC || ev.kind == HS_EVENT_MMAP))
			backtrace(r, ev.stack);
	}
	if (rc < 0)
		rc = hs_die("%s", hs_reader_error(r));
	else if (hs_reader_warning(r)[0])
		fprintf(stderr, "heapscope: warning: %s\n", hs_reader_warning(r));
	hs_cli_warn_unnamed(r);
out:
	hs_reader_close(r);
	return rc;
}
