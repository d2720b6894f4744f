/* shellword.h - a word as a POSIX shell reads it back, and the UTF-8 sequences it keeps whole */
#ifndef HS_COMMON_SHELLWORD_H
#define HS_COMMON_SHELLWORD_H

#include <stddef.h>

/*
 * The length of the well-formed UTF-8 sequence at s (RFC 3629), 0 if
 * there is none.
 */
size_t hs_utf8_len(const unsigned char *s);

/* Receives the quoted word's bytes, in pieces. */
typedef void (*hs_shell_put)(void *arg, const char *p, size_t n);

/*
 * s quoted where it must be, so that a shell reads it back as one word,
 * given to put (or only measured when put is NULL); its length in bytes.
 * Plain words stay as they are, others go in double quotes where nothing
 * is special inside them (which reads best inside a message's single
 * quotes), else in single quotes; words with control bytes or bytes that
 * are not UTF-8 take bash's $'...' form, so that a newline in a -c script
 * or an escape sequence reaches a terminal as text.
 */
size_t hs_shell_word(hs_shell_put put, void *arg, const char *s);

#endif
