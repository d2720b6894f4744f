/* main.c - heapscope's entry point: dispatches to one subcommand per cmd-*.c */
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "../analysis/oom.h"
#include "../format/debuginfo.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *synopsis, *what;
};

static const struct command commands[] = {
	{ "record", hs_cmd_record, "record [OPTIONS] [--] PROGRAM [ARGS...]", "trace a program's allocations" },
	{ "report", hs_cmd_report, "report [--json] TRACE", "the summary of a trace" },
	{ "leaks", hs_cmd_leaks, "leaks TRACE [FILTERS] [OPTIONS]", "suspicious sites, with verdicts" },
	{ "top", hs_cmd_top, "top TRACE [FILTERS] [OPTIONS]", "the table of allocation sites" },
	{ "flame", hs_cmd_flame, "flame TRACE -o OUT.svg [FILTERS]", "flame graph (or --folded, --json)" },
	{ "timeline", hs_cmd_timeline, "timeline TRACE -o OUT.svg [FILTERS]", "heap, RSS and top sites over time" },
	{ "lifetimes", hs_cmd_lifetimes, "lifetimes TRACE -o OUT.svg [FILTERS]", "allocation time against lifetime" },
	{ "diff", hs_cmd_diff, "diff BASE NEW [FILTERS] [OPTIONS]", "what changed between two runs" },
	{ "view", hs_cmd_view, "view TRACE [NEW_TRACE] [OPTIONS]", "the interactive web viewer" },
	{ "dump", hs_cmd_dump, "dump [--backtraces] TRACE", "every record as text" },
};

int hs_die(const char *fmt, ...)
{
	va_list ap;

	fputs("heapscope: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/* an analysis pass that runs out of memory where it cannot return an error ends here */
static void out_of_memory(size_t bytes)
{
	fprintf(stderr, "heapscope: out of memory (%zu more bytes refused)" HS_OOM_ADVICE "\n", bytes);
	exit(1);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: heapscope COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-40s %s\n", commands[i].synopsis, commands[i].what);
	fprintf(f, "\n'heapscope COMMAND --help' tells more about one command\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	/* 'heapscope help leaks' is 'heapscope leaks --help', as git has it */
	if (!strcmp(argv[1], "help") && argc > 2) {
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (!strcmp(argv[2], commands[i].name))
				return commands[i].run(2, (char *[]){ argv[2], "--help", NULL });
		return hs_die("unknown command '%s'; run 'heapscope --help' for the list", argv[2]);
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("heapscope %s\n", HS_VERSION_STRING);
		return 0;
	}
	hs_cli_rerun_init(argc, argv);
	hs_oom_set_handler(out_of_memory);
	/*
	 * Scratch buffers of a few MB (the symbol tables' sorts, the renderers'
	 * lines) are freed and asked for again: kept in the heap, not mapped
	 * afresh and faulted in page by page each time: 14 of 16 commands on
	 * four benchmark traces took 2-10% less CPU, in 0-3 MB more.
	 */
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	/*
	 * Output to a file or a pipe goes out a MiB at a time, not in stdio's
	 * blocks of 4 KiB: clang's folded flame graph is 62.6 MB, and took
	 * 15,291 write calls. (glibc takes a size only with a buffer; view
	 * flushes its address line itself.)
	 */
	if (!isatty(STDOUT_FILENO)) {
		static char out_buf[HS_CLI_OUT_BUFFER];
		setvbuf(stdout, out_buf, _IOFBF, sizeof(out_buf));
	}
	if (hs_debug_cache_max(&(uint64_t){ 0 }) < 0)
		return hs_die("bad HEAPSCOPE_CACHE_MAX '%s': give the debug-file cache's size, e.g. 500M or 4G",
			      getenv("HEAPSCOPE_CACHE_MAX"));
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	hs_die("unknown command '%s'; run 'heapscope --help' for the list", argv[1]);
	return 2;
}
