/* args.c - the argument handling every analysis command shares: filters, --help, --by, trace paths, output files */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

const char *const hs_cli_by_names[4] = { "backtrace", "function", "line", "library" };

static int listed(const char *const *names, const char *s)
{
	for (; names && *names; names++)
		if (!strcmp(*names, s))
			return 1;
	return 0;
}

int hs_cli_args_by(const char *v, int *by)
{
	if (hs_cli_pick(v, hs_cli_by_names, 4, by) < 0)
		return hs_die("bad value '%s' for --by; use backtrace, function, line or library", v);
	return 0;
}

/* --binaries, every directory given, joined by ':' (hs_reader_set_binary_dirs) */
static char binary_dirs[8192];

const char hs_cli_binaries_usage[] =
	"  --binaries DIR    where the traced binaries are if not at their recorded paths\n"
	"                    (another machine, a program rebuilt since); repeat for more\n";

static int add_binary_dir(const char *cmd, const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return hs_die("'%s' is not a directory; give --binaries the directory that holds the traced binaries "
			      "(see 'heapscope %s --help')", dir, cmd);
	if (strchr(dir, ':'))
		return hs_die("'%s' has a ':' in its name, which --binaries cannot take; link it under another name", dir);
	if (strlen(binary_dirs) + strlen(dir) + 2 > sizeof(binary_dirs))
		return hs_die("too many --binaries directories; give fewer, or a common parent of them");
	if (binary_dirs[0])
		strcat(binary_dirs, ":");
	strcat(binary_dirs, dir);
	return 0;
}

const char *hs_cli_binary_dirs(void)
{
	return binary_dirs[0] ? binary_dirs : NULL;
}

/* Filters first, so that every command takes them the same way; the second filter takes the same words. */
static int one(struct hs_cli_args *a, int argc, char **argv, int *i)
{
	const char *s = argv[*i];
	int j = *i, k = a->f ? hs_filter_parse(a->f, argc, argv, i) : 0;

	if (k < 0)
		return hs_die("%s", a->f->err);
	if (k > 0) {
		if (a->f2)
			hs_filter_parse(a->f2, argc, argv, &j);
		return 0;
	}
	if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
		fputs(a->usage, stdout);
		fputs(hs_cli_binaries_usage, stdout);
		if (a->f)
			fputs(hs_filter_usage, stdout);
		a->help = 1;
		return 0;
	}
	if (!strcmp(s, "--binaries")) {
		if (*i + 1 >= argc)
			return hs_die("--binaries needs a directory; see 'heapscope %s --help'", a->cmd);
		return add_binary_dir(a->cmd, argv[++*i]);
	}
	if (listed(a->flags, s))
		return a->take(a->ctx, s, NULL);
	if (listed(a->valued, s)) {
		if (*i + 1 >= argc)
			return hs_die("%s needs a value; see 'heapscope %s --help'", s, a->cmd);
		return a->take(a->ctx, s, argv[++*i]);
	}
	if (s[0] == '-' && s[1])
		return hs_die("unknown option '%s' for %s; see 'heapscope %s --help'", s, a->cmd, a->cmd);
	if (a->npaths == a->want) {
		if (a->want == 1)
			return hs_die("%s takes one trace, got '%s' and '%s'; run it once per trace (a followed "
				      "process writes a file of its own)", a->cmd, a->paths[0], s);
		return hs_die("%s takes %stwo traces, got a third: '%s'", a->cmd, a->optional ? "at most " : "", s);
	}
	a->paths[a->npaths++] = s;
	return 0;
}

int hs_cli_args_parse(struct hs_cli_args *a, int argc, char **argv)
{
	int rc = 0;

	for (int i = 1; i < argc && !rc && !a->help; i++)
		rc = one(a, argc, argv, &i);
	if (!rc && !a->help && a->npaths < a->want - a->optional) {
		fputs(a->usage, stderr);
		rc = 2;
	}
	return rc;
}

/* the buffer of one output file at a time; a second one open at once keeps stdio's own */
static char file_buf[HS_CLI_OUT_BUFFER];
static FILE *file_buf_of;

FILE *hs_cli_out_open(const char *path)
{
	FILE *f;

	if (!path || !strcmp(path, "-"))
		return stdout;
	if (!(f = fopen(path, "w")))
		hs_die("cannot write '%s': %s; check the directory exists and is writable", path, strerror(errno));
	else if (!file_buf_of && setvbuf(f, file_buf, _IOFBF, sizeof(file_buf)) == 0)
		file_buf_of = f;
	return f;
}

int hs_cli_out_close(FILE *f, const char *path, int write_rc, const char *what)
{
	if (f == file_buf_of)
		file_buf_of = NULL;
	if ((f != stdout && fclose(f) != 0) || write_rc < 0 || (f == stdout && fflush(f) != 0))
		return hs_die("cannot write '%s'; check the disk has room", path ? path : "standard output");
	/* as flame says it: a file appears without a word otherwise */
	if (f != stdout)
		fprintf(stderr, "heapscope: %s written to '%s'\n", what, path);
	return 0;
}

/* take() for a command whose one option is a flag: ctx is the int it sets */
int hs_cli_take_flag(void *flag, const char *opt, const char *value)
{
	(void)opt;
	(void)value;
	*(int *)flag = 1;
	return 0;
}
