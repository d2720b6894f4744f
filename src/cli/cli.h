/* cli.h - the subcommands of the heapscope command line */
#ifndef HS_CLI_H
#define HS_CLI_H

#define HS_VERSION_STRING "0.1.0"

int hs_cmd_record(int argc, char **argv);
int hs_cmd_report(int argc, char **argv);

/* prints "heapscope: <message>" on stderr; returns 1 for use as an exit status */
int hs_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
