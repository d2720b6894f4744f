/* test_escape.c - JSON strings, XML text, command lines, filter descriptions and fixed-point numbers as the renderers write them: plain runs, escapes, bad UTF-8, control bytes, printf's rounding */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "analysis/filter.h"
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

/* The filter's description, as the headers and --json give it: each value as a shell reads it back */
static void filter_desc(void)
{
	static char *argv[] = { "--through", "PyEval", "--not-through", "x y", "--alloc-site", "^(a|b)$",
				"--through", "it's", "--size-min", "64", "--live-between", "10%", "1.5s" };
	static char *longre[] = { "--through", NULL };
	char re[600];
	struct hs_filter f;
	int i, rc = 0;

	hs_filter_init(&f);
	for (i = 0; i < (int)(sizeof(argv) / sizeof(argv[0])) && rc >= 0; i++)
		rc = hs_filter_parse(&f, (int)(sizeof(argv) / sizeof(argv[0])), argv, &i);
	CHECK_STR("filter-desc-quoted",
		  "--through PyEval --not-through \"x y\" --alloc-site '^(a|b)$' --through \"it's\" "
		  "--size-min 64 --live-between 10% 1.5s", rc >= 0 ? f.desc : f.err);
	hs_filter_free(&f);

	/* past its 1 KiB the description ends cut, NUL-terminated, as the options go on taking effect */
	memset(re, 'a', sizeof(re) - 1);
	re[sizeof(re) - 1] = 0;
	longre[1] = re;
	hs_filter_init(&f);
	for (int k = 0; k < 3 && rc >= 0; k++) {
		i = 0;
		rc = hs_filter_parse(&f, 2, longre, &i);
	}
	CHECK("filter-desc-cut", rc == 1 && strlen(f.desc) == sizeof(f.desc) - 1 && f.nthrough == 3);
	hs_filter_free(&f);
}

/* hs_fmt_fixed(v, d) against snprintf's "%.*f" into n bytes; 1 when they agree, else a FAIL line */
static int fixed_same(const char *name, double v, int d, size_t n)
{
	char want[400], got[400];
	size_t len;

	memset(got, 'x', sizeof(got));
	snprintf(want, n, "%.*f", d, v);
	len = hs_fmt_fixed(got, n, v, d);
	if (!strcmp(want, got) && len == strlen(got))
		return 1;
	return check_report(0, name, "%.17g with %d decimals in %zu bytes: expected '%s' got '%s' (length %zu)", v, d,
			    n, want, got, len);
}

static void fixed(void)
{
	static const double odd[] = { 0.0, -0.0, 0.5, 1.5, 2.5, -2.5, 0.125, 0.375, 1.005, 2.675, 0.045, 1e15 + 0.5,
				      4503599627370495.5, 4503599627370496.0, 9007199254740993.0, 1e300, -1e300, DBL_MAX,
				      DBL_MIN, 5e-324, 0.0049999999999999999, 0.005, 0.015, 1234.5678, 1023.995 };
	uint64_t seed = 0x243f6a8885a308d3ull;
	int ok = 1;

	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		for (int d = 0; d <= 9; d++)
			ok &= fixed_same("fixed-odd", odd[i], d, 400);
	ok &= fixed_same("fixed-nan", NAN, 2, 400) & fixed_same("fixed-inf", -INFINITY, 0, 400);
	/* ties of halves and quarters, where rounding goes to even */
	for (int k = -400; k <= 400; k++)
		for (int d = 0; d <= 3; d++)
			ok &= fixed_same("fixed-ties", k / 8.0, d, 400);
	/* every magnitude, both signs, every count of decimals; and cut short as snprintf cuts */
	for (int i = 0; i < 200000 && ok; i++) {
		uint64_t r = check_rand(&seed);
		double v = ldexp((double)(r >> 11), (int)(check_rand(&seed) % 110) - 100) * (r & 1 ? -1 : 1);
		ok &= fixed_same("fixed-random", v, (int)(r >> 4) % 10, 400);
		ok &= fixed_same("fixed-random-cut", v, (int)(r >> 8) % 10, 1 + (r >> 16) % 12);
	}
	/* integers and cents, as the SVGs' coordinates and the byte counts are */
	for (int i = 0; i < 100000 && ok; i++) {
		uint64_t r = check_rand(&seed);
		ok &= fixed_same("fixed-cents", (double)(r % 10000000) / 100.0, 2, 400);
		ok &= fixed_same("fixed-count", (double)(r >> 20), 0, 400);
	}
	CHECK("fixed-as-printf", ok);
}

/* The first len bytes of s, escaped into a buffer, are what hs_xml_text writes of them alone. */
static void xml_escape(void)
{
	static const char *const in[] = { "std::map<K, V>::operator[](K const&)", "a\xff" "b\xc3", "caf\xc3\xa9 \xe2\x82\xac",
					  "\xf0\x9f\x98\x80<\xed\xa0\x80>", "\x01\t\n\"'&", "" };
	int ok = 1;

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		for (size_t len = 0; len <= strlen(in[i]); len++) {
			char cut[64], out[6 * 64 + 1], *want;
			size_t n;
			memcpy(cut, in[i], len);
			cut[len] = 0;
			want = written(hs_xml_text, cut);
			n = hs_xml_escape(out, in[i], len);
			out[n] = 0;
			if (!want || strcmp(want, out)) {
				check_report(0, "xml-escape-cut", "'%s' cut at %zu: expected '%s' got '%s'", in[i], len,
					     want ? want : "(no memory)", out);
				ok = 0;
			}
			free(want);
		}
	CHECK("xml-escape-as-text", ok);
}

int main(void)
{
	char *j;

	fixed();
	xml_escape();

	commands();
	filter_desc();

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
