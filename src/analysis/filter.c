/* filter.c - parsing filter options and evaluating the conditions that depend on backtraces */
#define _POSIX_C_SOURCE 200809L
#include "filter.h"
#include "oom.h"
#include "../common/size.h"
#include "../common/shellword.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define KNOWN (1u << 31)
#define NOT_THROUGH_SHIFT 16

struct hs_filter_ip {
	uint64_t ip;
	uint32_t bits;
	uint32_t used;
};

const char hs_filter_usage[] =
	"filters (all must hold):\n"
	"  --allocated-between T1 T2   allocated in [T1, T2]\n"
	"  --live-between T1 T2        alive at some moment of [T1, T2]\n"
	"  --live-at T                 alive at T\n"
	"  --freed-between T1 T2       freed in [T1, T2]\n"
	"  --leaked                    never freed\n"
	"  --temporary                 freed before the end\n"
	"  --leaked-or-freed-after T   never freed, or freed at T or later\n"
	"  --lifetime-min D, --lifetime-max D   (never freed: lives until the end)\n"
	"  --size-min B, --size-max B  requested size in bytes (512, 4K, 1M)\n"
	"  --through RE, --not-through RE   function, file or library anywhere in the\n"
	"                              backtrace\n"
	"  --alloc-site RE             the innermost frame that is not allocator plumbing\n"
	"  --thread TID                allocated by that thread (repeat for several)\n"
	"  --hide RE                   fold matching frames away\n"
	"  --no-default-hide           show the allocator's internals (hidden by default)\n"
	"  T: 1.5s 250ms 40us 98% peak end end-2s   D: 1.5s 250ms 2%   RE: POSIX extended\n";

void hs_filter_init(struct hs_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->size_max = UINT64_MAX;
}

static void free_regexes(struct hs_filter_regex *r, int n)
{
	for (int i = 0; i < n; i++) {
		regfree(&r[i].re);
		free(r[i].src);
	}
}

void hs_filter_free(struct hs_filter *f)
{
	free_regexes(f->through, f->nthrough);
	free_regexes(f->not_through, f->nnot_through);
	free_regexes(f->site, f->nsite);
	for (int i = 0; i < f->nhide; i++)
		regfree(&f->hide[i]);
	free(f->tids);
	free(f->thread_ok);
	free(f->stack_ok);
	free(f->stack_bits);
	free(f->ips);
	memset(f, 0, sizeof(*f));
}

static int fail(struct hs_filter *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct hs_filter *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->err, sizeof(f->err), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

struct desc_end {
	char *buf;
	size_t len, cap;
};

/* Appends what fits, keeping the NUL: a description past its 1 KiB ends cut, as snprintf would cut it. */
static void desc_put(void *arg, const char *p, size_t n)
{
	struct desc_end *d = arg;
	size_t room = d->cap - 1 - d->len;

	if (n > room)
		n = room;
	memcpy(d->buf + d->len, p, n);
	d->len += n;
	d->buf[d->len] = 0;
}

/* The option and its values as a shell reads them back: '--through "foo bar"' can be pasted into the next command. */
static void describe(struct hs_filter *f, const char *opt, char **vals, int n)
{
	struct desc_end d = { f->desc, strlen(f->desc), sizeof(f->desc) };

	if (d.len)
		desc_put(&d, " ", 1);
	desc_put(&d, opt, strlen(opt));
	for (int i = 0; i < n; i++) {
		desc_put(&d, " ", 1);
		hs_shell_word(desc_put, &d, vals[i]);
	}
}

static int add_regex(struct hs_filter *f, struct hs_filter_regex *list, int *n, const char *opt, const char *src)
{
	char msg[256];
	int rc;

	if (*n == HS_FILTER_MAX_REGEX)
		return fail(f, "too many %s options (at most %d); combine them into one regex with '|'", opt, HS_FILTER_MAX_REGEX);
	rc = regcomp(&list[*n].re, src, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		regerror(rc, &list[*n].re, msg, sizeof(msg));
		return fail(f, "bad regex '%s' for %s: %s; give a POSIX extended regex such as 'parse_.*|lexer'", src, opt, msg);
	}
	list[*n].src = strdup(src);
	if (!list[*n].src) {
		regfree(&list[*n].re);
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

struct option_def {
	const char *name;
	int nvals;
};

static const struct option_def options[] = {
	{ "--allocated-between", 2 }, { "--live-between", 2 }, { "--live-at", 1 }, { "--freed-between", 2 },
	{ "--leaked", 0 }, { "--temporary", 0 }, { "--leaked-or-freed-after", 1 }, { "--lifetime-min", 1 },
	{ "--lifetime-max", 1 }, { "--size-min", 1 }, { "--size-max", 1 }, { "--through", 1 },
	{ "--not-through", 1 }, { "--alloc-site", 1 }, { "--thread", 1 }, { "--hide", 1 }, { "--no-default-hide", 0 },
};

static int parse_time(struct hs_filter *f, enum hs_filter_time which, const char *opt, const char *val, int duration)
{
	if (hs_timespec_parse(&f->time[which], val, duration) < 0)
		return fail(f, "bad %s '%s' for %s; use %s", duration ? "duration" : "time", val, opt,
			    duration ? HS_DURATION_FORMS : HS_TIMESPEC_FORMS);
	f->have_time |= 1u << which;
	snprintf(f->time_src[which], sizeof(f->time_src[which]), "%s", val);
	return 0;
}

/* The option that gives each time, for messages. */
static const char *const time_opt[HS_FT_COUNT] = {
	"--allocated-between", "--allocated-between", "--live-between", "--live-between", "--live-at",
	"--freed-between", "--freed-between", "--leaked-or-freed-after", "--lifetime-min", "--lifetime-max",
};

/* The bounds of a range (the lifetime's are two options). */
static const struct range {
	enum hs_filter_time lo, hi;
} ranges[] = {
	{ HS_FT_ALLOC_LO, HS_FT_ALLOC_HI },
	{ HS_FT_LIVE_LO, HS_FT_LIVE_HI },
	{ HS_FT_FREED_LO, HS_FT_FREED_HI },
	{ HS_FT_LIFE_MIN, HS_FT_LIFE_MAX },
};

/* a comes after b whatever the trace: both counted from one anchor (the start, the run's length, the peak or the end) */
static int surely_after(const struct hs_timespec *a, const struct hs_timespec *b)
{
	if (a->anchor != b->anchor)
		return 0;
	return a->percent > b->percent || (a->percent == b->percent && a->offset_ns > b->offset_ns);
}

/* Why range r matches nothing; in: where its times were resolved ("" at parsing) */
static void order_text(char *buf, size_t n, const struct hs_filter *f, const struct range *r, const char *in)
{
	if (r->lo == HS_FT_LIFE_MIN)
		snprintf(buf, n, "--lifetime-min '%s' is longer than --lifetime-max '%s'%s: no allocation matches; "
			 "give the shorter one to --lifetime-min", f->time_src[r->lo], f->time_src[r->hi], in);
	else
		snprintf(buf, n, "the range '%s %s' of %s ends before it starts%s: no allocation matches; "
			 "give the earlier time first", f->time_src[r->lo], f->time_src[r->hi], time_opt[r->lo], in);
}

/*
 * A range that ends before it starts matches nothing: before, "--live-between
 * 2s 1s" gave the blocks allocated by 1s and freed after 2s. Refused where
 * the order shows already; hs_filter_prepare tells the rest.
 */
static int check_order(struct hs_filter *f)
{
	for (size_t k = 0; k < sizeof(ranges) / sizeof(ranges[0]); k++) {
		const struct range *r = &ranges[k];
		unsigned both = 1u << r->lo | 1u << r->hi;
		if ((f->have_time & both) != both || !surely_after(&f->time[r->lo], &f->time[r->hi]))
			continue;
		order_text(f->err, sizeof(f->err), f, r, "");
		return -EINVAL;
	}
	if (f->size_min > f->size_max)
		return fail(f, "--size-min '%s' is more than --size-max '%s': no allocation matches; "
			    "give the smaller size to --size-min", f->size_src[0], f->size_src[1]);
	return 0;
}

static int apply(struct hs_filter *f, const char *opt, char **v)
{
	int rc;

	if (!strcmp(opt, "--allocated-between")) {
		if ((rc = parse_time(f, HS_FT_ALLOC_LO, opt, v[0], 0)) < 0)
			return rc;
		return parse_time(f, HS_FT_ALLOC_HI, opt, v[1], 0);
	}
	if (!strcmp(opt, "--live-between")) {
		if ((rc = parse_time(f, HS_FT_LIVE_LO, opt, v[0], 0)) < 0)
			return rc;
		return parse_time(f, HS_FT_LIVE_HI, opt, v[1], 0);
	}
	if (!strcmp(opt, "--freed-between")) {
		if ((rc = parse_time(f, HS_FT_FREED_LO, opt, v[0], 0)) < 0)
			return rc;
		return parse_time(f, HS_FT_FREED_HI, opt, v[1], 0);
	}
	if (!strcmp(opt, "--live-at"))
		return parse_time(f, HS_FT_LIVE_AT, opt, v[0], 0);
	if (!strcmp(opt, "--leaked-or-freed-after"))
		return parse_time(f, HS_FT_LOF_AFTER, opt, v[0], 0);
	if (!strcmp(opt, "--lifetime-min"))
		return parse_time(f, HS_FT_LIFE_MIN, opt, v[0], 1);
	if (!strcmp(opt, "--lifetime-max"))
		return parse_time(f, HS_FT_LIFE_MAX, opt, v[0], 1);
	if (!strcmp(opt, "--leaked"))
		f->leaked = 1;
	else if (!strcmp(opt, "--temporary"))
		f->temporary = 1;
	else if (!strcmp(opt, "--no-default-hide"))
		f->no_default_hide = 1;
	else if (!strcmp(opt, "--size-min") || !strcmp(opt, "--size-max")) {
		int max = !strcmp(opt, "--size-max");
		if (hs_parse_size(v[0], max ? &f->size_max : &f->size_min) < 0)
			return fail(f, "bad size '%s' for %s; use bytes with an optional K, M, G or T suffix (512, 4K, 1.5M)", v[0], opt);
		snprintf(f->size_src[max], sizeof(f->size_src[max]), "%s", v[0]);
	} else if (!strcmp(opt, "--through"))
		return add_regex(f, f->through, &f->nthrough, opt, v[0]);
	else if (!strcmp(opt, "--not-through"))
		return add_regex(f, f->not_through, &f->nnot_through, opt, v[0]);
	else if (!strcmp(opt, "--alloc-site"))
		return add_regex(f, f->site, &f->nsite, opt, v[0]);
	else if (!strcmp(opt, "--hide")) {
		struct hs_filter_regex tmp;
		int n = 0;
		if (f->nhide == HS_FILTER_MAX_REGEX)
			return fail(f, "too many --hide options (at most %d); combine them into one regex with '|'", HS_FILTER_MAX_REGEX);
		if ((rc = add_regex(f, &tmp, &n, opt, v[0])) < 0)
			return rc;
		f->hide[f->nhide++] = tmp.re;
		free(tmp.src);
	} else if (!strcmp(opt, "--thread")) {
		char *end;
		unsigned long tid = strtoul(v[0], &end, 10);
		uint32_t *n;
		if (!*v[0] || *end || v[0][0] == '-' || tid > UINT32_MAX)
			return fail(f, "bad thread id '%s' for --thread; give a decimal tid as 'heapscope report' shows them", v[0]);
		n = realloc(f->tids, ((size_t)f->ntids + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		f->tids = n;
		f->tids[f->ntids++] = (uint32_t)tid;
	}
	return 0;
}

int hs_filter_parse(struct hs_filter *f, int argc, char **argv, int *i)
{
	const char *arg = argv[*i], *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
	char *vals[2], opt[64];
	int rc;

	for (size_t k = 0; k < sizeof(options) / sizeof(options[0]); k++) {
		const struct option_def *o = &options[k];
		if (strlen(o->name) != len || strncmp(o->name, arg, len))
			continue;
		snprintf(opt, sizeof(opt), "%s", o->name);
		if (eq) {
			/* --opt=value, for options that take one value */
			if (o->nvals != 1)
				return fail(f, "%s takes %d values, not '=': write '%s%s'", o->name, o->nvals, o->name,
					    o->nvals == 2 ? " T1 T2" : "");
			vals[0] = (char *)eq + 1;
		} else {
			if (*i + o->nvals >= argc)
				return fail(f, "%s needs %s; see 'heapscope COMMAND --help'", o->name,
					    o->nvals == 2 ? "two times T1 T2 (e.g. 1s 2.5s, 0% 50%)" : "a value");
			for (int j = 0; j < o->nvals; j++)
				vals[j] = argv[*i + 1 + j];
		}
		if ((rc = apply(f, opt, vals)) < 0 || (rc = check_order(f)) < 0)
			return rc;
		describe(f, opt, vals, o->nvals);
		*i += eq ? 0 : o->nvals;
		return 1;
	}
	return 0;
}

int hs_filter_streamable(const struct hs_filter *f)
{
	if (f->ntids)
		return 0;
	for (int k = 0; k < HS_FT_COUNT; k++)
		if ((f->have_time & 1u << k) && f->time[k].anchor == HS_TIME_PEAK)
			return 0;
	return 1;
}

int hs_filter_fateless(const struct hs_filter *f)
{
	return !f->leaked && !f->temporary && !(f->have_time & ~(1u << HS_FT_ALLOC_LO | 1u << HS_FT_ALLOC_HI));
}

/* The conditions that need no stack or thread: times against the run, and fate. */
static void prepare_times(struct hs_filter *f, uint64_t end_ns, uint64_t peak_ns, uint64_t peak_end)
{
	f->peak_bounds = 0;
	f->peak_end = peak_end;
	for (int k = 0; k < HS_FT_COUNT; k++) {
		uint64_t moment;
		if (!(f->have_time & 1u << k))
			continue;
		/* durations never name the peak; --live-at peak is HS_AT_PEAK itself */
		moment = hs_timespec_moment(&f->time[k], end_ns, peak_ns);
		if (moment == HS_AT_PEAK)
			f->peak_bounds |= 1u << k;
		f->t[k] = k == HS_FT_LIVE_AT ? moment : hs_timespec_resolve(&f->time[k], end_ns, peak_ns);
	}
	f->empty = f->leaked && f->temporary;
	f->warn[0] = 0;
	/* what the order did not show at parsing: an anchor differs ("end-1s" and "50%") */
	for (size_t k = 0; k < sizeof(ranges) / sizeof(ranges[0]); k++) {
		const struct range *r = &ranges[k];
		unsigned both = 1u << r->lo | 1u << r->hi;
		if ((f->have_time & both) != both || f->t[r->lo] <= f->t[r->hi])
			continue;
		char in[96];
		f->empty = 1;
		snprintf(in, sizeof(in), " in this trace (%.6f s and %.6f s)", (double)f->t[r->lo] / 1e9,
			 (double)f->t[r->hi] / 1e9);
		order_text(f->warn, sizeof(f->warn), f, r, in);
		return;
	}
	/* points of time counted from the start are not clamped to the run: a time past the end asks about after the exit */
	for (int k = 0; k < HS_FT_COUNT; k++)
		if (k != HS_FT_LIFE_MIN && k != HS_FT_LIFE_MAX && (f->have_time & 1u << k) &&
		    f->time[k].anchor == HS_TIME_START && f->t[k] > end_ns) {
			snprintf(f->warn, sizeof(f->warn),
				 "time '%s' of %s is past the end of the run (%.6f s): blocks never freed count as live there; "
				 "give a time within the run, or 'end'", f->time_src[k], time_opt[k], (double)end_ns / 1e9);
			return;
		}
	/* no block outlives the run (one never freed lives until its end) */
	if ((f->have_time & 1u << HS_FT_LIFE_MIN) && f->t[HS_FT_LIFE_MIN] > end_ns) {
		f->empty = 1;
		snprintf(f->warn, sizeof(f->warn),
			 "duration '%s' of --lifetime-min is longer than the run (%.6f s): no allocation matches; give a "
			 "shorter one, or a share of the run such as 50%%", f->time_src[HS_FT_LIFE_MIN], (double)end_ns / 1e9);
	}
}

void hs_filter_prepare_stream(struct hs_filter *f, uint64_t end_ns)
{
	prepare_times(f, end_ns, 0, 0);
}

int hs_filter_prepare(struct hs_filter *f, const struct hs_alloctab *t, struct hs_stacks *st)
{
	prepare_times(f, t->end_ns, t->peak_ns, t->peak_end);
	if (f->ntids) {
		int found = 0;
		f->thread_ok = calloc(t->ntids + 1, 1);
		if (!f->thread_ok)
			return -ENOMEM;
		for (int i = 0; i < f->ntids; i++)
			for (uint32_t j = 0; j < t->ntids; j++)
				if (t->tids[j] == f->tids[i]) {
					f->thread_ok[j] = 1;
					found = 1;
				}
		if (!found) {
			snprintf(f->warn, sizeof(f->warn), "no allocation of thread %u in this trace; check the tid with 'heapscope report'",
				 f->tids[0]);
			f->empty = 1;
		}
	}
	f->st = st;
	f->nstacks = st->nstacks + 1;
	if (f->nthrough || f->nnot_through || f->nsite) {
		f->stack_ok = calloc(f->nstacks, 1);
		f->stack_bits = calloc(f->nstacks, sizeof(*f->stack_bits));
		if (!f->stack_ok || !f->stack_bits)
			return -ENOMEM;
	}
	return 0;
}

/* Which through / not-through regexes match one of the frames at an address, hidden ones included. */
static uint32_t ip_bits(struct hs_filter *f, uint64_t ip)
{
	struct hs_frame fr[32];
	size_t j, mask;
	uint32_t bits = 0;
	int n;

	if (f->ips_used * 2 >= f->ips_cap) {
		size_t ncap = f->ips_cap ? f->ips_cap * 2 : 4096;
		struct hs_filter_ip *nips = hs_xcalloc(ncap, sizeof(*nips));
		for (size_t i = 0; i < f->ips_cap; i++) {
			if (!f->ips[i].used)
				continue;
			j = (size_t)(f->ips[i].ip * 0x9e3779b97f4a7c15ull >> 24) & (ncap - 1);
			while (nips[j].used)
				j = (j + 1) & (ncap - 1);
			nips[j] = f->ips[i];
		}
		free(f->ips);
		f->ips = nips;
		f->ips_cap = ncap;
	}
	mask = f->ips_cap - 1;
	j = (size_t)(ip * 0x9e3779b97f4a7c15ull >> 24) & mask;
	while (f->ips[j].used && f->ips[j].ip != ip)
		j = (j + 1) & mask;
	if (f->ips[j].used)
		return f->ips[j].bits;
	n = hs_reader_symbolize(f->st->r, ip, fr, 32);
	for (int k = 0; k < n; k++) {
		for (int i = 0; i < f->nthrough; i++)
			if (hs_stacks_frame_matches(&fr[k], &f->through[i].re))
				bits |= 1u << i;
		for (int i = 0; i < f->nnot_through; i++)
			if (hs_stacks_frame_matches(&fr[k], &f->not_through[i].re))
				bits |= 1u << (NOT_THROUGH_SHIFT + i);
	}
	f->ips[j] = (struct hs_filter_ip){ .ip = ip, .bits = bits, .used = 1 };
	f->ips_used++;
	return bits;
}

/* Bits of a whole backtrace: its innermost address's, or'ed with its parent's, memoized down the trie. */
static uint32_t stack_bits(struct hs_filter *f, uint32_t stack)
{
	uint32_t chain[HS_STACKS_MAX_FRAMES], n = 0, bits;

	while (stack && stack < f->nstacks && !(f->stack_bits[stack] & KNOWN) && n < HS_STACKS_MAX_FRAMES) {
		uint32_t parent;
		uint64_t ip;
		chain[n++] = stack;
		if (hs_reader_stack_node(f->st->r, stack, &parent, &ip) < 0)
			break;
		stack = parent;
	}
	bits = stack && stack < f->nstacks ? f->stack_bits[stack] & ~KNOWN : 0;
	while (n--) {
		uint32_t parent;
		uint64_t ip;
		if (hs_reader_stack_node(f->st->r, chain[n], &parent, &ip) == 0)
			bits |= ip_bits(f, ip);
		f->stack_bits[chain[n]] = bits | KNOWN;
	}
	return bits;
}

int hs_filter_stack(struct hs_filter *f, uint32_t stack)
{
	uint32_t want = (1u << f->nthrough) - 1, avoid = ((1u << f->nnot_through) - 1) << NOT_THROUGH_SHIFT;

	if (!f->stack_bits)
		return 1;
	if (f->nthrough || f->nnot_through) {
		uint32_t bits = stack_bits(f, stack);
		if ((bits & want) != want || (bits & avoid))
			return 0;
	}
	if (f->nsite) {
		struct hs_frame fr;
		if (hs_stacks_frames(f->st, stack, &fr, 1) < 1)
			return 0;
		for (int i = 0; i < f->nsite; i++)
			if (!hs_stacks_frame_matches(&fr, &f->site[i].re))
				return 0;
	}
	return 1;
}
