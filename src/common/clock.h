/* clock.h - CLOCK_MONOTONIC in nanoseconds, for the passes that time themselves */
#ifndef HS_COMMON_CLOCK_H
#define HS_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t hs_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
