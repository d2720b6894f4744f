/* cmd-record.c - heapscope record: runs a program with the tracer preloaded */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <time.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "../common/file.h"
#include "../common/shellword.h"
#include "../common/size.h"
#include "../render/format.h"

static const char usage[] =
	"usage: heapscope record [OPTIONS] [--] PROGRAM [ARGS...]\n"
	"  -o FILE          trace file (%p: pid, %e: program name);\n"
	"                   default heapscope.PROGRAM.PID.hst\n"
	"  --sample BYTES   record one allocation every BYTES allocated on average\n"
	"                   (e.g. 512K); reports then give unbiased estimates. Default:\n"
	"                   every call\n"
	"  --follow-fork    trace forked children too, each into its own file (FILE.PID)\n"
	"  --follow-exec    keep tracing across exec, each program into its own file\n"
	"  --time-resolution T  precision of event times: 1ns .. 1s (default 100us);\n"
	"                   below 100us every event reads the clock, which costs time and\n"
	"                   trace size\n";

/* The same forms the tracer accepts: a number of ns, or with ns, us, ms or s; 1 ns to 1 s. */
static int parse_resolution(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -1;
	if (!strcmp(end, "us"))
		v *= 1000;
	else if (!strcmp(end, "ms"))
		v *= 1000000;
	else if (!strcmp(end, "s"))
		v *= 1000000000;
	else if (*end && strcmp(end, "ns"))
		return -1;
	return v >= 1 && v <= 1000000000 ? 0 : -1;
}

/* The library sits next to the binary in a build tree, or in ../lib/heapscope once installed. */
static int find_library(char *out, size_t n)
{
	const char *env = getenv("HEAPSCOPE_LIBRARY");
	char self[PATH_MAX], *slash;
	ssize_t len;
	const char *cands[] = { "/libheapscope.so", "/../lib/heapscope/libheapscope.so" };

	if (env && *env) {
		snprintf(out, n, "%s", env);
		return access(out, R_OK);
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return -1;
	self[len] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		char path[PATH_MAX + 64];
		snprintf(path, sizeof(path), "%s%s", self, cands[i]);
		if (access(path, R_OK) == 0 && realpath(path, out))
			return 0;
	}
	return -1;
}

static char *expand(const char *tmpl, const char *pid, const char *exe)
{
	static char out[PATH_MAX];
	size_t o = 0;

	for (const char *s = tmpl; *s && o < sizeof(out) - 32; s++) {
		if (s[0] == '%' && s[1] == 'p') {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", pid);
			s++;
		} else if (s[0] == '%' && s[1] == 'e') {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", exe);
			s++;
		} else {
			out[o++] = *s;
		}
	}
	out[o] = 0;
	return out;
}

/*
 * The traces of followed processes written during this run, root excepted:
 * the template with any pid and program name, or the root's path with a
 * ".PID" suffix (what a child writes when the template has no %p).
 */
static int followed_trace(const char *path, const char *root, time_t started)
{
	struct stat st;

	return strcmp(path, root) != 0 && stat(path, &st) == 0 && st.st_mtime >= started;
}

/* A daemon forked by the program may still trace into its file after the program ended: its trace is not whole yet. */
static int still_written(const char *path)
{
	int fd = hs_open_regular(path, NULL), w;

	if (fd < 0)
		return 0;
	w = hs_file_being_written(fd);
	close(fd);
	return w;
}

static void report_followed(const char *tmpl, const char *root, time_t started)
{
	char pattern[PATH_MAX + 8];
	glob_t g = { 0 };
	size_t shown = 0, n = 0;

	if (strstr(tmpl, "%p") || strstr(tmpl, "%e"))
		glob(expand(tmpl, "*", "*"), 0, NULL, &g);
	snprintf(pattern, sizeof(pattern), "%s.*", root);
	glob(pattern, g.gl_pathc ? GLOB_APPEND : 0, NULL, &g);
	for (size_t i = 0; i < g.gl_pathc; i++)
		n += followed_trace(g.gl_pathv[i], root, started);
	if (n) {
		fprintf(stderr, "heapscope: %zu more from followed processes:", n);
		for (size_t i = 0; i < g.gl_pathc && shown < 8; i++)
			if (followed_trace(g.gl_pathv[i], root, started)) {
				fprintf(stderr, " '%s'%s", g.gl_pathv[i], still_written(g.gl_pathv[i]) ? " (still running)" : "");
				shown++;
			}
		fprintf(stderr, "%s\n", n > shown ? " ..." : "");
	}
	globfree(&g);
}

/*
 * The program, started with posix_spawnp: no copy of this process's page
 * tables as fork makes (0.75 ms less for a process with 4 MB touched, on a
 * KVM guest), and a program that cannot run is known here, by its errno,
 * not by an exit status of 127 that a program may give too. SIGINT and
 * SIGQUIT, ignored here meanwhile, get back their default in the program
 * unless they were ignored before. 0, or an errno.
 */
static int spawn(pid_t *pid, char **args, const struct sigaction *old_int, const struct sigaction *old_quit)
{
	posix_spawnattr_t attr;
	sigset_t def;
	int rc;

	sigemptyset(&def);
	if (old_int->sa_handler != SIG_IGN)
		sigaddset(&def, SIGINT);
	if (old_quit->sa_handler != SIG_IGN)
		sigaddset(&def, SIGQUIT);
	if ((rc = posix_spawnattr_init(&attr)) != 0)
		return rc;
	rc = posix_spawnattr_setsigdefault(&attr, &def);
	if (!rc)
		rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
	if (!rc)
		rc = posix_spawnp(pid, args[0], NULL, &attr, args, environ);
	posix_spawnattr_destroy(&attr);
	return rc;
}

/* After execvp or posix_spawnp failed: what is wrong with the program, and what to do. */
static void exec_failed(const char *prog, int err)
{
	const char *why = err == ENOENT ? (strchr(prog, '/') ? "no such file; check the path" :
					   "not found in PATH; give its path, e.g. ./prog")
			  : err == EACCES ? "not executable; check that it is a program and has execute permission (chmod +x)"
			  : err == ENOEXEC ? "not a program this system can run; check that it is built for this machine"
			  : NULL;

	fprintf(stderr, "heapscope: cannot run '%s': %s\n", prog, why ? why : strerror(err));
}

/* Tells where the root process's trace went; %e was the traced program's own name. */
enum { FOLLOW_FORK = 1, FOLLOW_EXEC = 2 };

/* follow: FOLLOW_* given */
static void report_path(const char *tmpl, pid_t pid, const char *exe, time_t started, int exec_failed, int follow)
{
	char pattern[PATH_MAX], root[PATH_MAX], pids[16];
	glob_t g = { 0 };
	struct stat st;
	struct hs_end_info end = { .end = -1 };
	uint64_t children;
	int have;

	snprintf(pids, sizeof(pids), "%d", (int)pid);
	snprintf(root, sizeof(root), "%s", expand(tmpl, pids, exe));
	if (strstr(tmpl, "%e")) {
		snprintf(pattern, sizeof(pattern), "%s", expand(tmpl, pids, "*"));
		if (glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0)
			snprintf(root, sizeof(root), "%s", g.gl_pathv[0]);
		globfree(&g);
	}
	have = stat(root, &st) == 0;
	/* created, then nothing written (no room, or the file size limit): the tracer said why on stderr */
	if (have && S_ISREG(st.st_mode) && st.st_mtime >= started && st.st_size == 0)
		fprintf(stderr, "heapscope: no trace in '%s': the tracer could not write it (its message above says why)\n",
			root);
	else if (have && !S_ISREG(st.st_mode))
		fprintf(stderr, "heapscope: trace written to '%s' (not a regular file: 'heapscope report' reads "
				"a trace once it is in a file)\n", root);
	else if (have && st.st_mtime >= started) {
		/* one line where it fits 80 columns; the default name (heapscope.myprog.<pid>.hst) does not */
		int one = strlen("heapscope: trace written to ''; see it with 'heapscope report '") + strlen(root) +
				  hs_shell_word(NULL, NULL, root) <= 80;
		fprintf(stderr, "heapscope: trace written to '%s'%s see it with 'heapscope report ", root,
			one ? ";" : "\nheapscope:");
		hs_text_word(stderr, root);
		fputs("'\n", stderr);
	}
	else if (!exec_failed)
		fprintf(stderr, "heapscope: no trace at '%s': the program may be statically linked or "
			"setuid (the tracer cannot be preloaded into it)\n", root);
	if (have && S_ISREG(st.st_mode) && st.st_mtime >= started && hs_reader_end_info(root, &end) < 0)
		end.end = -1;
	children = end.untraced_children;
	/* a script run through env, a wrapper such as nice: what the user meant to trace ran in its place */
	if (end.end == HS_END_EXEC && !(follow & FOLLOW_EXEC))
		fprintf(stderr, "heapscope: the program ran another in its place (exec), which was not traced: the "
				"trace ends there; --follow-exec traces it too, in a file of its own (a script run "
				"through env, or a wrapper such as nice or taskset)\n");
	/* a daemon's parent exits at once: say where the work went */
	if (children) {
		fprintf(stderr, "heapscope: the program started %llu child %s that %s not traced; ",
			(unsigned long long)children, children == 1 ? "process" : "processes", children == 1 ? "was" : "were");
		if (follow == (FOLLOW_FORK | FOLLOW_EXEC))
			fprintf(stderr, "the program had cleared the tracer's variables from its environment before "
					"system() or popen() started %s\n", children == 1 ? "it" : "them");
		else if (follow == FOLLOW_EXEC)
			fprintf(stderr, "--follow-fork traces forked children, each in its own file (and commands that "
					"system() or popen() ran after the program cleared its environment go untraced)\n");
		else
			fprintf(stderr, "--follow-fork traces forked children and --follow-exec the programs they run, "
					"each in its own file\n");
	}
	if (follow)
		report_followed(tmpl, root, started);
}

/*
 * Whether the trace can be created where the template says, before the
 * program runs: the tracer alone would only say so on the program's stderr
 * and leave an untraced run behind. The template's directory must exist and
 * be writable; a fixed name must not be a directory.
 */
static int check_output(const char *tmpl)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(tmpl, '/');
	struct stat st;

	if (!strchr(tmpl, '%') && stat(tmpl, &st) == 0 && S_ISDIR(st.st_mode))
		return hs_die("'%s' is a directory; give -o a file name, e.g. -o %s/app.hst", tmpl, tmpl);
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == tmpl)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - tmpl), tmpl);
	if (strchr(dir, '%'))
		return 0; /* a directory per pid or program: the tracer will say */
	if (stat(dir, &st) != 0)
		return hs_die("cannot create the trace '%s': directory '%s': %s; create it or give -o another path",
			      tmpl, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return hs_die("cannot create the trace '%s': '%s' is not a directory; give -o another path", tmpl, dir);
	if (access(dir, W_OK | X_OK) != 0)
		return hs_die("cannot create the trace '%s': directory '%s': %s; give -o a path you can write to",
			      tmpl, dir, strerror(errno));
	return 0;
}

int hs_cmd_record(int argc, char **argv)
{
	const char *output = NULL, *sample = NULL, *resolution = NULL;
	int follow_fork = 0, follow_exec = 0, i, status, rc;
	char lib[PATH_MAX], preload[2 * PATH_MAX + 16];
	const char *old, *exe;
	uint64_t sample_bytes = 0;
	pid_t pid;
	time_t started;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (++i == argc)
				return hs_die("'%s' needs a file name", a);
			output = argv[i];
		} else if (!strncmp(a, "--output=", 9)) {
			output = a + 9;
		} else if (!strcmp(a, "--sample")) {
			if (++i == argc)
				return hs_die("'--sample' needs a size, e.g. --sample 512K");
			sample = argv[i];
		} else if (!strncmp(a, "--sample=", 9)) {
			sample = a + 9;
		} else if (!strcmp(a, "--time-resolution")) {
			if (++i == argc)
				return hs_die("'--time-resolution' needs a duration, e.g. --time-resolution 10us");
			resolution = argv[i];
		} else if (!strcmp(a, "--follow-fork")) {
			follow_fork = 1;
		} else if (!strcmp(a, "--follow-exec")) {
			follow_exec = 1;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (a[0] == '-') {
			return hs_die("unknown option '%s' for record; see 'heapscope record --help'", a);
		} else {
			break;
		}
	}
	if (i >= argc) {
		fputs(usage, stderr);
		return 2;
	}
	if (sample && (hs_parse_size(sample, &sample_bytes) < 0 || sample_bytes == 0))
		return hs_die("bad sample size '%s': give a positive number of bytes, e.g. 512K or 1M", sample);
	if (resolution && parse_resolution(resolution) < 0)
		return hs_die("bad time resolution '%s': give 1ns to 1s, e.g. 250ns, 10us or 1ms", resolution);
	if (find_library(lib, sizeof(lib)) < 0)
		return hs_die("cannot find 'libheapscope.so' next to this binary or in ../lib/heapscope; "
			      "set HEAPSCOPE_LIBRARY to its path");
	exe = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
	/* %e is expanded by the tracer: each exec'd program names its own file */
	if (!output)
		output = "heapscope.%e.%p.hst";
	if (check_output(output) != 0)
		return 1;
	old = getenv("LD_PRELOAD");
	snprintf(preload, sizeof(preload), "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
	setenv("LD_PRELOAD", preload, 1);
	setenv("HEAPSCOPE_OUTPUT", output, 1);
	if (sample_bytes) {
		char buf[32];
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)sample_bytes);
		setenv("HEAPSCOPE_SAMPLE", buf, 1);
	} else {
		unsetenv("HEAPSCOPE_SAMPLE");
	}
	if (resolution)
		setenv("HEAPSCOPE_TIME_RESOLUTION", resolution, 1);
	else
		unsetenv("HEAPSCOPE_TIME_RESOLUTION");
	setenv("HEAPSCOPE_FOLLOW_FORK", follow_fork ? "1" : "0", 1);
	setenv("HEAPSCOPE_FOLLOW_EXEC", follow_exec ? "1" : "0", 1);
	unsetenv("HEAPSCOPE_CHILD");

	/* ^C goes to the whole process group: let the program decide, then report where the trace is */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	started = time(NULL);
	rc = spawn(&pid, argv + i, &old_int, &old_quit);
	if (rc == ENOEXEC) {
		/* no #! line: execvp hands such a file to /bin/sh, as shells do, and posix_spawnp does not */
		pid = fork();
		if (pid < 0)
			return hs_die("cannot fork: %s", strerror(errno));
		if (pid == 0) {
			sigaction(SIGINT, &old_int, NULL);
			sigaction(SIGQUIT, &old_quit, NULL);
			execvp(argv[i], argv + i);
			exec_failed(argv[i], errno);
			_exit(127);
		}
	} else if (rc) {
		exec_failed(argv[i], rc);
		return 127;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return hs_die("waitpid: %s", strerror(errno));
	}
	report_path(output, pid, exe, started, rc && WIFEXITED(status) && WEXITSTATUS(status) == 127,
		    (follow_fork ? FOLLOW_FORK : 0) | (follow_exec ? FOLLOW_EXEC : 0));
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
