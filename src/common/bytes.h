/* bytes.h - little-endian loads and stores for fixed-size header fields */
#ifndef HS_COMMON_BYTES_H
#define HS_COMMON_BYTES_H

#include <stdint.h>
#include <string.h>

static inline void hs_put_u16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void hs_put_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void hs_put_u64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static inline uint16_t hs_get_u16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t hs_get_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t hs_get_u64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

#endif
