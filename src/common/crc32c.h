/* crc32c.h - CRC-32C (Castagnoli), the checksum of trace headers and chunks */
#ifndef HS_COMMON_CRC32C_H
#define HS_COMMON_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t hs_crc32c(uint32_t crc, const void *buf, size_t len);
/* The same without the CPU's instruction: what other CPUs get, for the tests */
uint32_t hs_crc32c_table(uint32_t crc, const void *buf, size_t len);

#endif
