/* test_escape.c - JSON strings, XML text and command lines as the renderers write them: plain runs, escapes, bad UTF-8, control bytes */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <stdlib.h>

#include "check.h"
#include "render/format.h"

/* What write (hs_json_string or hs_xml_text) makes of s; NULL without memory. */
static char *written(void (*write)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	write(f, s);
	fclose(f);
	return buf;
}

static void both(const char *name, const char *in, const char *want_json, const char *want_xml)
{
	char n[96], *j = written(hs_json_string, in), *x = written(hs_xml_text, in);

	snprintf(n, sizeof(n), "json-%s", name);
	CHECK_STR(n, want_json, j ? j : "(no memory)");
	snprintf(n, sizeof(n), "xml-%s", name);
	CHECK_STR(n, want_xml, x ? x : "(no memory)");
	free(j);
	free(x);
}

/* What hs_text_command makes of argv, indented 13 after a 13-column label, at 40 columns */
static void command(const char *name, int argc, const char *const *argv, const char *want)
{
	char n[96], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f) {
		hs_text_command(f, argc, argv, 13, 40);
		fclose(f);
	}
	snprintf(n, sizeof(n), "command-%s", name);
	CHECK_STR(n, want, buf ? buf : "(no memory)");
	free(buf);
}

static void commands(void)
{
	static const char *const plain[] = { "sqlite3", ":memory:", ".read", "/tmp/insert.sql" };
	static const char *const quoted[] = { "grep", "-e", "a b", "it's", "", "$HOME's" };
	static const char *const script[] = { "python3", "-c", "x = 1\nprint('\\', x)\t\x1b[2J" };
	static const char *const bytes[] = { "caf\xc3\xa9", "a\xff", "\xc2\x85", "\x7f" };
	static const char *const wrap[] = { "clang", "-O2", "-c", "/work/src/format/reader.c", "-Iinclude", "-o",
					   "/tmp/reader.o", "/a/path/longer/than/the/whole/width/of/this/test.c" };

	command("plain", 4, plain, "sqlite3 :memory: .read\n             /tmp/insert.sql\n");
	command("quoted", 6, quoted, "grep -e \"a b\" \"it's\" \"\"\n             '$HOME'\\''s'\n");
	command("control", 3, script, "python3 -c\n             $'x = 1\\nprint(\\'\\\\\\', x)\\t\\x1b[2J'\n");
	command("bytes", 4, bytes, "\"caf\xc3\xa9\" $'a\\xff'\n             $'\\xc2\\x85' $'\\x7f'\n");
	command("wrap", 8, wrap,
		"clang -O2 -c\n             /work/src/format/reader.c\n             -Iinclude -o /tmp/reader.o\n"
		"             /a/path/longer/than/the/whole/width/of/this/test.c\n");
}

int main(void)
{
	char *j;

	commands();

	both("empty", "", "\"\"", "");
	both("plain", "std::vector<int>::push_back(int const&)",
	     "\"std::vector<int>::push_back(int const&)\"",
	     "std::vector&lt;int&gt;::push_back(int const&amp;)");
	both("quotes-first-last", "\"a'b\\\"", "\"\\\"a'b\\\\\\\"\"", "&quot;a&apos;b\\&quot;");
	both("only-specials", "<>&", "\"<>&\"", "&lt;&gt;&amp;");
	both("control", "a\tb\nc\x01" "d", "\"a\\u0009b\\u000ac\\u0001d\"", "a\tb\nc?d");
	both("utf8", "caf\xc3\xa9 \xe2\x82\xac", "\"caf\xc3\xa9 \xe2\x82\xac\"", "caf\xc3\xa9 \xe2\x82\xac");
	both("bad-utf8", "a\xff" "b\xc3", "\"a\xef\xbf\xbd" "b\xef\xbf\xbd\"", "a\xef\xbf\xbd" "b\xef\xbf\xbd");
	both("del-kept", "x\x7fy", "\"x\x7fy\"", "x\x7fy");
	j = written(hs_json_string, NULL);
	CHECK_STR("json-null", "null", j ? j : "(no memory)");
	free(j);
	return check_failures != 0;
}
