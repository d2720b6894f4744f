/* test_size.c - byte counts as users write them (src/common/size.h): units, fractions, the refused forms */
#include <stdio.h>

#include "check.h"
#include "common/size.h"

int main(void)
{
	static const struct {
		const char *in;
		int rc;
		uint64_t v;
	} c[] = {
		{ "512", 0, 512 }, { "4K", 0, 4096 }, { "4k", 0, 4096 }, { "10KB", 0, 10240 }, { "2GiB", 0, 2ull << 30 },
		{ "1.5M", 0, 3ull << 19 }, { ".25KiB", 0, 256 }, { "1.5", 0, 2 }, { "0.5B", 0, 1 }, { "0", 0, 0 },
		{ "16T", 0, 16ull << 40 }, { "18446744073709551615", 0, UINT64_MAX },
		{ "", -EINVAL, 0 }, { "abc", -EINVAL, 0 }, { "-1", -EINVAL, 0 }, { "1e3", -EINVAL, 0 },
		{ "1.", -EINVAL, 0 }, { "4Q", -EINVAL, 0 }, { "5kib", -EINVAL, 0 }, { "16777216T", -EINVAL, 0 },
		{ "18446744073709551616", -EINVAL, 0 }, { "18446744073709551615.5", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint64_t v = 0;
		int rc = hs_parse_size(c[i].in, &v);
		char name[64];
		snprintf(name, sizeof(name), "size-parse[%s]", c[i].in);
		check_report(rc == c[i].rc && (rc < 0 || v == c[i].v), name, "'%s': expected rc %d value %llu got rc %d value %llu",
			     c[i].in, c[i].rc, (unsigned long long)c[i].v, rc, (unsigned long long)v);
	}
	return 0;
}
