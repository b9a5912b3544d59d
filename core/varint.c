/* varint.c: QUIC variable-length integers (RFC 9000 §16) and the record-stream length
 * prefix built on them.  The two high bits of the first byte give the length (1, 2, 4
 * or 8 B); the remaining bits, big-endian, give the value.  We write the shortest form
 * and read any form, so a peer that pads a value still parses. */
#include <assert.h>

#include "wire.h"

size_t pl_varint_size(uint64_t v) {
    if (v < (UINT64_C(1) << 6)) return 1;
    if (v < (UINT64_C(1) << 14)) return 2;
    if (v < (UINT64_C(1) << 30)) return 4;
    if (v < PL_VARINT_LIMIT) return 8;
    return 0; /* no encoding: callers treat this like "does not fit" */
}

size_t pl_varint_put(uint8_t *p, size_t cap, uint64_t v) {
    size_t len = pl_varint_size(v);
    if (len == 0 || len > cap) return 0;
    /* Length code 0..3 for 1, 2, 4, 8 bytes, in the top two bits. */
    uint8_t code = (uint8_t)(len == 1 ? 0 : len == 2 ? 1 : len == 4 ? 2 : 3);
    for (size_t i = len; i-- > 0; v >>= 8) p[i] = (uint8_t)v;
    p[0] |= (uint8_t)(code << 6);
    return len;
}

int pl_varint_get(const uint8_t *p, size_t n, uint64_t *v) {
    if (n == 0) return PL_WIRE_TRUNCATED;
    size_t len = (size_t)1 << (p[0] >> 6);
    if (len > n) return PL_WIRE_TRUNCATED;
    uint64_t x = p[0] & 0x3fu;
    for (size_t i = 1; i < len; i++) x = x << 8 | p[i];
    assert(x <= PL_VARINT_MOST); /* 62 value bits at most, by construction */
    *v = x;
    return (int)len;
}

size_t pl_record_prefix_size(uint64_t len) {
    if (len > PL_RECORD_MOST) return 0;
    return pl_varint_size(len);
}

size_t pl_record_prefix_put(uint8_t *p, size_t cap, uint64_t len) {
    if (len > PL_RECORD_MOST) return 0;
    return pl_varint_put(p, cap, len);
}

int pl_record_prefix_get(const uint8_t *p, size_t n, uint64_t *len) {
    uint64_t v;
    int used = pl_varint_get(p, n, &v);
    if (used < 0) return used;
    if (v > PL_RECORD_MOST) return PL_WIRE_RANGE;
    *len = v;
    return used;
}
