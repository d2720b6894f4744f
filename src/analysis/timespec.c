/* timespec.c - parsing and resolving the time and duration syntax shared by every analysis command */
#include "timespec.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* "1.5s" -> 1.5e9; the unit is required so that "5" is never silently 5 ns or 5 s */
static int parse_amount(const char *s, double *ns)
{
	static const struct { const char *unit; double scale; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "min", 60e9 }, { "h", 3600e9 },
	};
	char *end;
	double v;

	if (!(*s >= '0' && *s <= '9') && *s != '.')
		return -EINVAL;
	v = strtod(s, &end);
	if (end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			*ns = v * units[i].scale;
			return *ns < 9.2e18 ? 0 : -EINVAL;
		}
	return -EINVAL;
}

static int parse_percent(const char *s, double *pct)
{
	char *end;
	double v;

	if (!(*s >= '0' && *s <= '9') && *s != '.')
		return -EINVAL;
	v = strtod(s, &end);
	if (end == s || strcmp(end, "%") || !isfinite(v) || v < 0 || v > 100)
		return -EINVAL;
	*pct = v;
	return 0;
}

int hs_timespec_parse(struct hs_timespec *t, const char *s, int duration)
{
	const char *rest = NULL;
	double ns;
	int sign = 1;

	memset(t, 0, sizeof(*t));
	if (!s || !*s)
		return -EINVAL;
	if (parse_percent(s, &t->percent) == 0) {
		t->anchor = HS_TIME_PERCENT;
		return 0;
	}
	if (parse_amount(s, &ns) == 0) {
		t->anchor = HS_TIME_START;
		t->offset_ns = (int64_t)llround(ns);
		return 0;
	}
	if (duration)
		return -EINVAL;
	if (!strncmp(s, "peak", 4)) {
		t->anchor = HS_TIME_PEAK;
		rest = s + 4;
	} else if (!strncmp(s, "end", 3)) {
		t->anchor = HS_TIME_END;
		rest = s + 3;
	} else if (!strncmp(s, "start", 5)) {
		t->anchor = HS_TIME_START;
		rest = s + 5;
	} else {
		return -EINVAL;
	}
	if (!*rest)
		return 0;
	if (*rest != '+' && *rest != '-')
		return -EINVAL;
	sign = *rest == '-' ? -1 : 1;
	if (parse_amount(rest + 1, &ns) < 0)
		return -EINVAL;
	t->offset_ns = sign * (int64_t)llround(ns);
	return 0;
}

uint64_t hs_timespec_resolve(const struct hs_timespec *t, uint64_t end_ns, uint64_t peak_ns)
{
	double base = 0;

	switch (t->anchor) {
	case HS_TIME_PERCENT: base = (double)end_ns * t->percent / 100.0; break;
	case HS_TIME_PEAK: base = (double)peak_ns; break;
	case HS_TIME_END: base = (double)end_ns; break;
	default: break;
	}
	base += (double)t->offset_ns;
	if (base < 0)
		return 0;
	if (t->anchor != HS_TIME_START && base > (double)end_ns)
		return end_ns;
	return (uint64_t)llround(base);
}
