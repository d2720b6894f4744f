/* check.h - tiny assertion helpers for the unit tests: one "ok NAME" or "FAIL NAME: ..." line per check */
#ifndef HS_TEST_CHECK_H
#define HS_TEST_CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int check_failures;

/* Prints the line for one check; returns cond so callers can skip dependent checks. */
__attribute__((format(printf, 3, 4), unused))
static int check_report(int cond, const char *name, const char *fmt, ...)
{
	if (cond) {
		printf("ok %s\n", name);
	} else {
		va_list ap;
		printf("FAIL %s: ", name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		putchar('\n');
		check_failures++;
	}
	fflush(stdout);
	return cond;
}

/* xorshift64: the tests' random inputs, each test with its own fixed seed in *s, so that runs repeat */
__attribute__((unused)) static uint64_t check_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#define CHECK(name, cond) check_report(!!(cond), (name), "expected %s got false", #cond)

#define CHECK_U64(name, expected, got)                                                          \
	do {                                                                                    \
		uint64_t e_ = (uint64_t)(expected), g_ = (uint64_t)(got);                       \
		check_report(e_ == g_, (name), "expected %" PRIu64 " (0x%" PRIx64 ") got %" PRIu64 \
			     " (0x%" PRIx64 ")", e_, e_, g_, g_);                               \
	} while (0)

#define CHECK_I64(name, expected, got)                                                          \
	do {                                                                                    \
		int64_t e_ = (int64_t)(expected), g_ = (int64_t)(got);                          \
		check_report(e_ == g_, (name), "expected %" PRId64 " got %" PRId64, e_, g_);    \
	} while (0)

#define CHECK_STR(name, expected, got)                                                          \
	do {                                                                                    \
		const char *e_ = (expected), *g_ = (got);                                       \
		check_report(e_ && g_ && strcmp(e_, g_) == 0, (name), "expected \"%s\" got \"%s\"", \
			     e_ ? e_ : "(null)", g_ ? g_ : "(null)");                           \
	} while (0)

/* got contains needle */
#define CHECK_HAS(name, needle, got)                                                            \
	do {                                                                                    \
		const char *n_ = (needle), *g_ = (got);                                         \
		check_report(g_ && strstr(g_, n_) != NULL, (name), "expected text containing \"%s\" got \"%s\"", \
			     n_, g_ ? g_ : "(null)");                                           \
	} while (0)

/* Counts mismatches silently in a loop, then reports once. */
#define CHECK_COUNT(name, bad, total, first_msg)                                                \
	check_report((bad) == 0, (name), "expected 0 mismatches of %zu got %zu (first: %s)",   \
		     (size_t)(total), (size_t)(bad), (first_msg))

#endif
