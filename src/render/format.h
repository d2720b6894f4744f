/* format.h - human formatting of sizes, counts and durations for terminal output */
#ifndef HS_RENDER_FORMAT_H
#define HS_RENDER_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

const char *hs_fmt_bytes(char *buf, size_t n, double bytes);
const char *hs_fmt_count(char *buf, size_t n, double count);
const char *hs_fmt_duration(char *buf, size_t n, uint64_t ns);
void hs_json_string(FILE *f, const char *s);
/* indent + s on one line, cut with "..." at 80 columns so that long C++ names do not wrap a terminal's lines. */
void hs_put_line(FILE *f, const char *indent, const char *s);
/*
 * A command line as a shell would take it back (words quoted where they
 * must be, control bytes as $'\n' escapes), wrapped at width columns with
 * the lines after the first indented to indent (where the first began).
 */
void hs_text_command(FILE *f, int argc, const char *const *argv, size_t indent, size_t width);
/* Text of words between spaces, from column indent on, wrapped at width columns with the lines after the first indented to indent. */
void hs_text_wrap(FILE *f, const char *s, size_t indent, size_t width);
/* A header field: label padded to col columns, then text wrapped within 80 columns under its first line. */
void hs_text_field(FILE *f, const char *label, size_t col, const char *text);
/* One word of text from a trace (a marker's label, a path) as hs_text_command writes each word */
void hs_text_word(FILE *f, const char *s);
/* XML text or attribute content, escaped. */
void hs_xml_text(FILE *f, const char *s);
/*
 * The first len bytes of s as hs_xml_text writes them, into out (room for
 * 6 * len bytes, not terminated): the bytes written. A UTF-8 sequence cut
 * at len counts as malformed.
 */
size_t hs_xml_escape(char *out, const char *s, size_t len);

/* Room for any hs_fmt_fixed_str: DBL_MAX has 309 digits before the point. */
#define HS_FMT_FIXED_MAX 330
/*
 * snprintf(buf, n, "%.*f", decimals, v), byte for byte, without its cost
 * where it can (decimals 0 to 9): the length written.
 */
size_t hs_fmt_fixed(char *buf, size_t n, double v, int decimals);
static inline const char *hs_fmt_fixed_str(char buf[HS_FMT_FIXED_MAX], double v, int decimals)
{
	hs_fmt_fixed(buf, HS_FMT_FIXED_MAX, v, decimals);
	return buf;
}

/*
 * Frames of a module left unnamed (hs_reader_unnamed_module): why, and what to
 * do, into buf; searched: --binaries directories were given.
 */
const char *hs_fmt_unnamed(char *buf, size_t n, const char *path, int why, uint64_t addresses, int searched);

/* How a process ended, in the words of the JSON schemas: exit, _exit, exec, stop, signal or unknown. */
const char *hs_fmt_end_key(int clean, int reason, int signal);

#endif
