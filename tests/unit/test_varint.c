/* test_varint.c - LEB128 varints and zigzag: round trips, lengths, truncated and over-long input */
#include <stdint.h>

#include "check.h"
#include "common/varint.h"

static uint64_t rng = 0x243f6a8885a308d3ull;

static int decode(const uint8_t *buf, size_t len, uint64_t *out, size_t *used)
{
	const uint8_t *p = buf;
	int rc = hs_varint_get(&p, buf + len, out);
	*used = (size_t)(p - buf);
	return rc;
}

static void round_trip(const char *name, uint64_t v, size_t want_len)
{
	uint8_t buf[HS_VARINT_MAX + 4];
	char n[96];
	size_t len, used;
	uint64_t got = ~v;

	len = (size_t)(hs_varint_put(buf, v) - buf);
	snprintf(n, sizeof(n), "varint-len-%s", name);
	CHECK_U64(n, want_len, len);
	snprintf(n, sizeof(n), "varint-roundtrip-%s", name);
	if (decode(buf, len, &got, &used) != 0)
		check_report(0, n, "expected 0x%" PRIx64 " got a decoding error", v);
	else
		CHECK_U64(n, v, got);
	snprintf(n, sizeof(n), "varint-consumed-%s", name);
	CHECK_U64(n, len, used);
}

static void zigzag(const char *name, int64_t v, uint64_t want)
{
	char n[96];

	snprintf(n, sizeof(n), "zigzag-encode-%s", name);
	CHECK_U64(n, want, hs_zigzag(v));
	snprintf(n, sizeof(n), "zigzag-roundtrip-%s", name);
	CHECK_I64(n, v, hs_unzigzag(hs_zigzag(v)));
}

static void reject(const char *name, const uint8_t *buf, size_t len)
{
	uint64_t v = 12345;
	size_t used;
	int rc = decode(buf, len, &v, &used);

	check_report(rc < 0 && used == 0 && v == 12345, name,
		     "expected rejection leaving input and output alone got rc=%d used=%zu value=0x%" PRIx64, rc,
		     used, v);
}

int main(void)
{
	round_trip("0", 0, 1);
	round_trip("1", 1, 1);
	round_trip("127", 127, 1);
	round_trip("128", 128, 2);
	round_trip("16383", 16383, 2);
	round_trip("16384", 16384, 3);
	round_trip("2^32", 1ull << 32, 5);
	round_trip("2^56-1", (1ull << 56) - 1, 8);
	round_trip("2^62", 1ull << 62, 9);
	round_trip("2^63-1", INT64_MAX, 9);
	round_trip("2^63", 1ull << 63, 10);
	round_trip("UINT64_MAX", UINT64_MAX, 10);

	/* many values of every width, back to back in one buffer */
	{
		enum { N = 20000 };
		static uint8_t buf[N * HS_VARINT_MAX];
		static uint64_t vals[N];
		uint8_t *p = buf;
		const uint8_t *q = buf;
		size_t bad = 0;
		char first[128] = "none";

		for (int i = 0; i < N; i++) {
			int bits = i % 65;
			vals[i] = bits ? check_rand(&rng) >> (64 - bits) : 0;
			p = hs_varint_put(p, vals[i]);
		}
		for (int i = 0; i < N; i++) {
			uint64_t v;
			if (hs_varint_get(&q, p, &v) != 0 || v != vals[i]) {
				if (!bad++)
					snprintf(first, sizeof(first), "#%d 0x%" PRIx64, i, vals[i]);
				break;
			}
		}
		if (!bad && q != p)
			bad++, snprintf(first, sizeof(first), "stopped %td bytes before the end", p - q);
		CHECK_COUNT("varint-roundtrip-random-stream", bad, N, first);
	}

	zigzag("0", 0, 0);
	zigzag("-1", -1, 1);
	zigzag("1", 1, 2);
	zigzag("-2", -2, 3);
	zigzag("-64", -64, 127);
	zigzag("64", 64, 128);
	zigzag("INT64_MAX", INT64_MAX, UINT64_MAX - 1);
	zigzag("INT64_MIN", INT64_MIN, UINT64_MAX);
	zigzag("INT64_MIN+1", INT64_MIN + 1, UINT64_MAX - 2);
	{
		size_t bad = 0;
		char first[64] = "none";
		for (int i = 0; i < 100000; i++) {
			int64_t v = (int64_t)check_rand(&rng) >> (i % 64);
			if (hs_unzigzag(hs_zigzag(v)) != v && !bad++)
				snprintf(first, sizeof(first), "%" PRId64, v);
		}
		CHECK_COUNT("zigzag-roundtrip-random", bad, 100000, first);
	}
	/* pointer deltas as the writer computes them wrap around mod 2^64 */
	{
		uint64_t a = 0xffffffffffff0000ull, b = 0x10;
		CHECK_U64("zigzag-pointer-delta-wraps", a, b + (uint64_t)hs_unzigzag(hs_zigzag((int64_t)(a - b))));
	}

	/* truncated */
	{
		static const uint8_t c1[] = { 0x80 };
		static const uint8_t c9[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
		uint8_t buf[HS_VARINT_MAX];
		size_t len = (size_t)(hs_varint_put(buf, UINT64_MAX) - buf);
		reject("varint-reject-empty", c1, 0);
		reject("varint-reject-truncated-1", c1, sizeof(c1));
		reject("varint-reject-truncated-9", c9, sizeof(c9));
		reject("varint-reject-truncated-max", buf, len - 1);
		len = (size_t)(hs_varint_put(buf, 128) - buf);
		reject("varint-reject-truncated-128", buf, len - 1);
	}
	/* longer than 64 bits */
	{
		static const uint8_t ten_2[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 };
		static const uint8_t ten_7f[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f };
		static const uint8_t eleven[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 };
		static const uint8_t eleven_ones[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81, 0x00 };
		static const uint8_t twelve[] = { 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x01 };
		reject("varint-reject-65-bits", ten_2, sizeof(ten_2));
		reject("varint-reject-70-bits", ten_7f, sizeof(ten_7f));
		reject("varint-reject-11-bytes", eleven, sizeof(eleven));
		reject("varint-reject-11-bytes-ones", eleven_ones, sizeof(eleven_ones));
		reject("varint-reject-12-bytes", twelve, sizeof(twelve));
	}
	/* the longest valid one is exactly 10 bytes, and a following byte is left alone */
	{
		static const uint8_t max_then[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x05 };
		uint64_t v = 0;
		size_t used = 0;
		int rc = decode(max_then, sizeof(max_then), &v, &used);
		check_report(rc == 0 && v == UINT64_MAX && used == 10, "varint-10-byte-max-then-more",
			     "expected rc=0 value=UINT64_MAX used=10 got rc=%d value=0x%" PRIx64 " used=%zu", rc, v,
			     used);
	}
	return 0;
}
