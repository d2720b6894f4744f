/* shellword.c - quoting a word for a shell to read back (shellword.h), without allocating */
#include "shellword.h"

#include <string.h>

size_t hs_utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	/* no overlong forms, no surrogates, nothing past U+10FFFF */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* A byte a POSIX shell takes as itself outside quotes */
static int plain_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("@%+=:,./_-", c));
}

/* Bytes a terminal must not be given as they are: C0 and C1 controls, DEL, and any not in well-formed UTF-8 */
static int unsafe_at(const unsigned char *p)
{
	size_t u = hs_utf8_len(p);

	return !u || p[0] < 0x20 || p[0] == 0x7f || (u == 2 && p[0] == 0xc2 && p[1] < 0xa0);
}

static size_t emit(hs_shell_put put, void *arg, const char *p, size_t n)
{
	if (put && n)
		put(arg, p, n);
	return n;
}

size_t hs_shell_word(hs_shell_put put, void *arg, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int plain = *p != 0, unsafe = 0;
	size_t n, k;

	for (k = 0; p[k]; k++)
		plain &= plain_byte(p[k]);
	for (size_t i = 0; p[i] && !unsafe; i += hs_utf8_len(p + i))
		unsafe = unsafe_at(p + i);
	if (plain)
		return emit(put, arg, s, k);
	if (!unsafe && !strpbrk(s, "\"$`\\!"))
		return emit(put, arg, "\"", 1) + emit(put, arg, s, k) + emit(put, arg, "\"", 1);
	if (!unsafe) {
		n = emit(put, arg, "'", 1);
		for (k = 0; p[k]; k++)
			n += p[k] == '\'' ? emit(put, arg, "'\\''", 4) : emit(put, arg, s + k, 1);
		return n + emit(put, arg, "'", 1);
	}
	n = emit(put, arg, "$'", 2);
	for (k = 0; p[k];) {
		char esc[8];
		const char *e = p[k] == '\\' ? "\\\\" : p[k] == '\'' ? "\\'" : p[k] == '\n' ? "\\n" : p[k] == '\t' ? "\\t" : NULL;
		size_t u = hs_utf8_len(p + k);

		if (!e && unsafe_at(p + k)) {
			esc[0] = '\\';
			esc[1] = 'x';
			esc[2] = "0123456789abcdef"[p[k] >> 4];
			esc[3] = "0123456789abcdef"[p[k] & 15];
			esc[4] = 0;
			e = esc;
		}
		if (e) {
			n += emit(put, arg, e, strlen(e));
			k++;
		} else {
			n += emit(put, arg, s + k, u);
			k += u;
		}
	}
	return n + emit(put, arg, "'", 1);
}
