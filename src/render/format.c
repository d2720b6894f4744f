/* format.c - human formatting of sizes, counts and durations; JSON string escaping */
#include "format.h"

#include <math.h>
#include <string.h>

#include "heapscope/reader.h"
#include "../common/decimal.h"
#include "../common/shellword.h"

/*
 * printf rounds v * 10^decimals exactly, ties to even. The product in
 * doubles is off by half a unit in its last place at most, which moves
 * the rounding only where the exact product lies that close to a half:
 * those few, and what does not fit 52 bits, go to snprintf. A large
 * flame graph's 41,000 frames had nine numbers each, and snprintf's were
 * a third of the command.
 */
size_t hs_fmt_fixed(char *buf, size_t n, double v, int decimals)
{
	static const double p10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9 };
	static const uint64_t u10[] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000 };
	char digits[48], *p = digits, fraction[24];
	double x, whole, frac;
	uint64_t r;
	size_t len;
	int k;

	if (!isfinite(v) || decimals < 0 || decimals > 9)
		goto slow;
	x = fabs(v) * p10[decimals];
	if (!(x < 0x1p52))
		goto slow;
	whole = floor(x);
	frac = x - whole;
	if (decimals == 0 && frac == 0.5)
		r = (uint64_t)whole + ((uint64_t)whole & 1);   /* no product, so an exact tie: to even */
	else if (fabs(frac - 0.5) <= x * 0x1p-50)
		goto slow;
	else
		r = (uint64_t)whole + (frac > 0.5);
	if (signbit(v))
		*p++ = '-';
	p += hs_u64_to_str(p, r / u10[decimals]);
	if (decimals) {
		/* a leading 1 keeps the fraction's zeros (as lifetimes' seconds) */
		hs_u64_to_str(fraction, r % u10[decimals] + u10[decimals]);
		*p++ = '.';
		memcpy(p, fraction + 1, (size_t)decimals);
		p += decimals;
	}
	len = (size_t)(p - digits);
	if (len >= n)
		goto slow;
	memcpy(buf, digits, len);
	buf[len] = 0;
	return len;
slow:
	k = snprintf(buf, n, "%.*f", decimals, v);
	return k < 0 ? 0 : (size_t)k < n ? (size_t)k : n ? n - 1 : 0;
}

const char *hs_fmt_bytes(char *buf, size_t n, double b)
{
	static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	char num[HS_FMT_FIXED_MAX];
	size_t len;
	int u = 0;

	while (fabs(b) >= 1024 && u < 4) {
		b /= 1024;
		u++;
	}
	len = hs_fmt_fixed(num, sizeof(num) - 5, b, u == 0 ? 0 : fabs(b) < 10 ? 2 : 1);
	num[len++] = ' ';
	memcpy(num + len, units[u], strlen(units[u]) + 1);
	if (n) {
		/* cut as snprintf would */
		len = strlen(num) < n - 1 ? strlen(num) : n - 1;
		memcpy(buf, num, len);
		buf[len] = 0;
	}
	return buf;
}

/* 1234567 -> "1,234,567"; estimates are rounded to whole numbers */
const char *hs_fmt_count(char *buf, size_t n, double c)
{
	char tmp[32];
	int len, o = 0;

	len = (int)hs_fmt_fixed(tmp, sizeof(tmp), c, 0);
	for (int i = 0; i < len && (size_t)o < n - 1; i++) {
		if (i && tmp[i - 1] != '-' && (len - i) % 3 == 0 && (size_t)o < n - 2)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
	return buf;
}

const char *hs_fmt_duration(char *buf, size_t n, uint64_t ns)
{
	if (ns < 1000000ull)
		snprintf(buf, n, "%.1f us", (double)ns / 1e3);
	else if (ns < 1000000000ull)
		snprintf(buf, n, "%.1f ms", (double)ns / 1e6);
	else
		snprintf(buf, n, "%.3f s", (double)ns / 1e9);
	return buf;
}

/*
 * Paths and command lines are bytes: a program name in Latin-1 made the
 * JSON undecodable (Python's json.loads on the bytes raised
 * UnicodeDecodeError) and would make an SVG not well-formed, so text goes
 * out as whole UTF-8 sequences (hs_utf8_len), U+FFFD for the rest.
 *
 * Writes the UTF-8 sequence at *s, or U+FFFD for a byte that starts none;
 * moves *s to its last byte.
 */
static void put_utf8(FILE *f, const char **s)
{
	size_t n = hs_utf8_len((const unsigned char *)*s);

	if (!n) {
		fputs("\xef\xbf\xbd", f);
		return;
	}
	fwrite(*s, 1, n, f);
	*s += n - 1;
}

void hs_json_string(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		size_t n = 0;

		/* plain runs whole: a character at a time was a third of a large flame graph's JSON (93 MB) */
		while (s[n] && (unsigned char)s[n] >= 0x20 && (unsigned char)s[n] < 0x80 && s[n] != '"' && s[n] != '\\')
			n++;
		if (n) {
			fwrite(s, 1, n, f);
			s += n - 1;
			continue;
		}
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else if (c >= 0x80)
			put_utf8(f, &s);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void hs_put_line(FILE *f, const char *indent, const char *s)
{
	size_t room = 80 - strlen(indent);

	if (strlen(s) <= room)
		fprintf(f, "%s%s\n", indent, s);
	else
		fprintf(f, "%s%.*s...\n", indent, (int)(room - 3), s);
}

static void put_file(void *arg, const char *p, size_t n)
{
	fwrite(p, 1, n, arg);
}

/* s as a shell would read it back, into f, or only measured when f is NULL (record's "see it with" line uses it too) */
static size_t shell_word(FILE *f, const char *s)
{
	return hs_shell_word(f ? put_file : NULL, f, s);
}

void hs_text_word(FILE *f, const char *s)
{
	shell_word(f, s);
}

void hs_text_command(FILE *f, int argc, const char *const *argv, size_t indent, size_t width)
{
	size_t col = indent;

	for (int i = 0; i < argc; i++) {
		size_t len = shell_word(NULL, argv[i]);
		if (i && col + 1 + len > width) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
		} else if (i) {
			fputc(' ', f);
			col++;
		}
		shell_word(f, argv[i]);
		col += len;
	}
	fputc('\n', f);
}

void hs_text_wrap(FILE *f, const char *s, size_t indent, size_t width)
{
	size_t col = indent;
	int first = 1;

	while (*s) {
		size_t len;

		while (*s == ' ')
			s++;
		if (!*s)
			break;
		len = strcspn(s, " ");
		/* a word longer than a line goes on one of its own, as it is */
		if (!first && col + 1 + len > width) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', f);
			col++;
		}
		fwrite(s, 1, len, f);
		col += len;
		s += len;
		first = 0;
	}
	fputc('\n', f);
}

void hs_text_field(FILE *f, const char *label, size_t col, const char *text)
{
	fprintf(f, "%-*s", (int)col, label);
	hs_text_wrap(f, text, col, 80);
}

/* Bytes XML takes as they are: printable ASCII but the five that need an entity (one load, not six tests) */
#define XML_PLAIN_16(b) \
	((b) >= 0x20 && (b) < 0x80 && (b) != '<' && (b) != '>' && (b) != '&' && (b) != '"' && (b) != '\'')
#define XML_PLAIN_ROW(b)                                                                              \
	XML_PLAIN_16(b), XML_PLAIN_16(b + 1), XML_PLAIN_16(b + 2), XML_PLAIN_16(b + 3), XML_PLAIN_16(b + 4), \
	XML_PLAIN_16(b + 5), XML_PLAIN_16(b + 6), XML_PLAIN_16(b + 7), XML_PLAIN_16(b + 8), XML_PLAIN_16(b + 9), \
	XML_PLAIN_16(b + 10), XML_PLAIN_16(b + 11), XML_PLAIN_16(b + 12), XML_PLAIN_16(b + 13),            \
	XML_PLAIN_16(b + 14), XML_PLAIN_16(b + 15)
static const unsigned char xml_plain_bytes[256] = { XML_PLAIN_ROW(0x00), XML_PLAIN_ROW(0x10), XML_PLAIN_ROW(0x20),
						    XML_PLAIN_ROW(0x30), XML_PLAIN_ROW(0x40), XML_PLAIN_ROW(0x50),
						    XML_PLAIN_ROW(0x60), XML_PLAIN_ROW(0x70) };

static int xml_plain(unsigned char c)
{
	return xml_plain_bytes[c];
}

size_t hs_xml_escape(char *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	char *o = out;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = p[i];
		size_t n = 0, u;

		while (i + n < len && xml_plain(p[i + n]))
			n++;
		if (n) {
			memcpy(o, p + i, n);
			o += n;
			i += n - 1;
			continue;
		}
		switch (c) {
		case '<': memcpy(o, "&lt;", 4); o += 4; break;
		case '>': memcpy(o, "&gt;", 4); o += 4; break;
		case '&': memcpy(o, "&amp;", 5); o += 5; break;
		case '"': memcpy(o, "&quot;", 6); o += 6; break;
		case '\'': memcpy(o, "&apos;", 6); o += 6; break;
		default:
			if (c < 0x80) {
				/* control characters are not allowed in XML 1.0 */
				*o++ = c < 0x20 && c != '\n' && c != '\t' ? '?' : (char)c;
				break;
			}
			/* a sequence cut by len is as bad as one cut by the string's end */
			u = hs_utf8_len(p + i);
			for (size_t k = 1; k < u; k++)
				if (i + k >= len)
					u = 0;
			if (!u) {
				memcpy(o, "\xef\xbf\xbd", 3);
				o += 3;
			} else {
				memcpy(o, p + i, u);
				o += u;
				i += u - 1;
			}
		}
	}
	return (size_t)(o - out);
}

void hs_xml_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		size_t n = 0;

		while (xml_plain((unsigned char)s[n]))
			n++;
		if (n) {
			fwrite(s, 1, n, f);
			s += n - 1;
			continue;
		}
		switch (c) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			/* control characters are not allowed in XML 1.0 */
			if (c >= 0x80)
				put_utf8(f, &s);
			else
				fputc(c < 0x20 && c != '\n' && c != '\t' ? '?' : c, f);
		}
	}
}

const char *hs_fmt_end_key(int clean, int reason, int signal)
{
	if (!clean)
		return signal ? "signal" : "unknown";
	switch (reason) {
	case HS_END_EXEC: return "exec";
	case HS_END_UNDERSCORE_EXIT: return "_exit";
	case HS_END_STOP: return "stop";
	default: return "exit";
	}
}

const char *hs_fmt_unnamed(char *buf, size_t n, const char *path, int why, uint64_t addresses, int searched)
{
	const char *text;

	if (why == HS_MODULE_OTHER_BUILD)
		text = searched ? "the file there is another build (rebuilt since the trace was recorded?), and the "
				  "--binaries directories hold none with its build-id"
				: "the file there is another build (rebuilt since the trace was recorded?)";
	else if (why == HS_MODULE_UNREADABLE)
		text = "the file there cannot be read as an ELF file";
	else
		text = searched ? "no such file, there nor in the --binaries directories" : "no such file";
	snprintf(buf, n, "%llu %s in '%s' left unnamed: %s; give the directory that holds the binary that ran with "
			 "--binaries DIR", (unsigned long long)addresses, addresses == 1 ? "address" : "addresses", path, text);
	return buf;
}
