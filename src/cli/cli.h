/* cli.h - the subcommands of the heapscope command line */
#ifndef HS_CLI_H
#define HS_CLI_H

#define HS_VERSION_STRING "0.1.0"

int hs_cmd_record(int argc, char **argv);
int hs_cmd_report(int argc, char **argv);
int hs_cmd_dump(int argc, char **argv);
int hs_cmd_top(int argc, char **argv);
int hs_cmd_flame(int argc, char **argv);

struct hs_reader;
struct hs_alloctab;
/* Opens a trace and loads its allocation table, with a progress line on a terminal; 0, or 1 after printing why not. */
int hs_cli_load(struct hs_reader **r, struct hs_alloctab *t, const char *path);

/* prints "heapscope: <message>" on stderr; returns 1 for use as an exit status */
int hs_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
