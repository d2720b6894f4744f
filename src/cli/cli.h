/* cli.h - the subcommands of the heapscope command line */
#ifndef HS_CLI_H
#define HS_CLI_H

#define HS_VERSION_STRING "0.1.0"

#include <stdio.h>

#include "../analysis/alloctab.h"
#include "../analysis/filter.h"
#include "../analysis/stacks.h"

int hs_cmd_record(int argc, char **argv);
int hs_cmd_report(int argc, char **argv);
int hs_cmd_dump(int argc, char **argv);
int hs_cmd_top(int argc, char **argv);
int hs_cmd_flame(int argc, char **argv);
int hs_cmd_leaks(int argc, char **argv);
int hs_cmd_timeline(int argc, char **argv);
int hs_cmd_lifetimes(int argc, char **argv);
int hs_cmd_diff(int argc, char **argv);
int hs_cmd_view(int argc, char **argv);

struct hs_reader;
struct hs_alloctab;
/* Opens a trace and loads its allocation table, with a progress line on a terminal; 0, or 1 after printing why not. */
int hs_cli_load(struct hs_reader **r, struct hs_alloctab *t, const char *path);
/* A pass's progress on stderr, after its first second and on a terminal only. */
struct hs_cli_progress {
	const char *path;
	uint64_t size;
	double start;
	double after;       /* seconds before the line shows: 1, HEAPSCOPE_TEST_PROGRESS_AFTER in tests */
	int shown;
};
/* The callback for a pass over path (NULL when stderr is no terminal), with p as its argument. */
hs_alloctab_progress hs_cli_progress_start(struct hs_cli_progress *p, const char *path);
void hs_cli_progress(void *arg, uint64_t offset);
/* Clears the progress line, if one was shown. */
void hs_cli_progress_end(struct hs_cli_progress *p);

/* --binaries (args.c): the directories given, ':'-separated, or NULL; and the line --help gives it */
const char *hs_cli_binary_dirs(void);
extern const char hs_cli_binaries_usage[];
/* hs_reader_open with the --binaries directories; 0, or 1 after printing why not (*r is then closed). */
int hs_cli_reader_open(struct hs_reader **r, const char *path);
/*
 * rerun.c: main hands its argv over first. Before the first trace is read,
 * a large one has the command run itself again with glibc's heap on
 * transparent huge pages, where the kernel gives them on request
 * (HEAPSCOPE_HUGE_PAGES=0: never); it returns if it does not.
 */
void hs_cli_rerun_init(int argc, char **argv);
void hs_cli_rerun_for(const char *path);
/* After the output: a line on stderr for each module whose frames were left unnamed, and what to do. */
void hs_cli_warn_unnamed(struct hs_reader *r);

/* One line on stderr when the trace's process still writes it (hs_trace_info.being_written). */
void hs_cli_warn_if_written(struct hs_reader *r, const char *path);

/*
 * A loaded trace ready for analysis: its table, and its stacks grouped by
 * `by` with the filter's hidden frames; the filter is prepared against it.
 */
struct hs_cli_trace {
	struct hs_reader *r;
	struct hs_alloctab tab;
	struct hs_stacks st;
	int have_st;
};

/* 0, or 1 after printing why not (a bad file, no memory); prints the filter's warning. */
int hs_cli_trace_open(struct hs_cli_trace *t, const char *path, struct hs_filter *f, int by);
void hs_cli_trace_close(struct hs_cli_trace *t);

/*
 * Commands whose question one look at each allocation answers stream over
 * the trace instead of loading its table (memory follows the live set):
 * when the filter allows it, unless HEAPSCOPE_STREAM=off (tests compare
 * both ways; HEAPSCOPE_STREAM=must makes a fallback an error). begin gets
 * the run's end before the pass and gives the sink's argument.
 */
struct hs_cli_sink {
	int (*begin)(void *ctx, uint64_t end_ns, uint64_t sample_bytes, void **sink_arg);
	hs_alloctab_sink sink;
	void *ctx;                    /* begin's */
	int allocs_only;              /* the sink asks nothing of fates: hs_alloctab_scan, no pairing */
};
int hs_cli_can_stream(const struct hs_filter *f);
/*
 * 0: streamed, t->r, t->tab (no table) and t->st ready; 1 after printing
 * why not; 2: the run's end was not the one given to begin (an event came
 * late) or could not be read first: close t and load the table instead.
 */
int hs_cli_stream(struct hs_cli_trace *t, const char *path, struct hs_filter *f, int by, const struct hs_cli_sink *sk);
/* 2, or 1 after an error under HEAPSCOPE_STREAM=must: a streaming pass that cannot give its figures, and why. */
int hs_cli_stream_fall_back(const char *path, const char *why);

/* Option values: a count in 0..1e9, or one of names; 0, or -1 when the value is bad. */
int hs_cli_int(const char *s, int *out);
int hs_cli_pick(const char *val, const char *const *names, int n, int *out);

/*
 * The arguments of an analysis command: filters, --help, the command's own
 * options (handed to take(), value NULL for flags) and its traces.
 */
struct hs_cli_args {
	const char *cmd;          /* "leaks", for messages */
	const char *usage;
	struct hs_filter *f;      /* NULL: the command takes no filters */
	struct hs_filter *f2;     /* diff: a second filter given the same options, or NULL */
	const char *const *flags;     /* NULL-terminated: the command's options without a value */
	const char *const *valued;    /* NULL-terminated: those that take one */
	int (*take)(void *ctx, const char *opt, const char *value);   /* 0, or 1 after printing why not */
	void *ctx;
	int want;                 /* traces the command takes */
	int optional;             /* of those, how many may be left out (view: the second) */
	const char *paths[2];
	int npaths;
	int help;                 /* --help printed the usage: exit 0 */
};

extern const char *const hs_cli_by_names[4];

/* 0, 1 after printing what is wrong, 2 after printing the usage (a trace is missing). */
int hs_cli_args_parse(struct hs_cli_args *a, int argc, char **argv);
/* take() for a command whose only option is a flag: ctx points to the int it sets */
int hs_cli_take_flag(void *flag, const char *opt, const char *value);
/* --by VALUE into enum hs_group_by; 0, or 1 after printing the accepted values. */
int hs_cli_args_by(const char *v, int *by);

/* stdio buffer of the commands' output, a file's or stdout's when not a terminal (main.c) */
#define HS_CLI_OUT_BUFFER (1u << 20)

/* An output file (stdout when path is NULL or "-"), or NULL after printing why not. */
FILE *hs_cli_out_open(const char *path);
/*
 * Closes it and says on stderr that what was written to a file; 0, or 1
 * after printing why the output is incomplete (write_rc < 0: the renderer failed).
 */
int hs_cli_out_close(FILE *f, const char *path, int write_rc, const char *what);

/* prints "heapscope: <message>" on stderr; returns 1 for use as an exit status */
int hs_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* what to do when an analysis runs out of memory, after the message */
#define HS_OOM_ADVICE "; analyse part of the trace (--allocated-between, --through), record it with --sample, or use a machine with more memory"

#endif
