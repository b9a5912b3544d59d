/* varint.c: QUIC variable-length integers (RFC 9000 §16) and the record-stream length
 * prefix built on them.  The two high bits of the first byte give the length (1, 2, 4
 * or 8 B); the remaining bits, big-endian, give the value.  We write the shortest form
 * and read any form, so a peer that pads a value still parses. */
#include "wire.h"

/* The length code (top two bits of the first byte) is 0, 1, 2, 3 for 1, 2, 4, 8 bytes. */
size_t pl_varint_put(uint8_t *p, size_t cap, uint64_t v) {
    size_t len = pl_varint_size(v);
    if (len == 0 || len > cap) return 0;
    switch (len) {
    case 1: p[0] = (uint8_t)v; break;
    case 2: p[0] = (uint8_t)(0x40u | v >> 8); p[1] = (uint8_t)v; break;
    case 4: pl_wire_put32(p, (uint32_t)v | UINT32_C(0x80000000)); break;
    default: pl_wire_put64(p, v | UINT64_C(0xc000000000000000)); break;
    }
    return len;
}

int pl_varint_get(const uint8_t *p, size_t n, uint64_t *v) {
    if (n == 0) return PL_WIRE_TRUNCATED;
    size_t len = (size_t)1 << (p[0] >> 6);
    if (len > n) return PL_WIRE_TRUNCATED;
    switch (len) {
    case 1: *v = p[0]; break;
    case 2: *v = (uint64_t)(p[0] & 0x3fu) << 8 | p[1]; break;
    case 4: *v = pl_wire_get32(p) & UINT32_C(0x3fffffff); break;
    default: *v = pl_wire_get64(p) & PL_VARINT_MOST; break;
    }
    return (int)len;
}

size_t pl_record_prefix_put(uint8_t *p, size_t cap, uint64_t len) {
    if (len > PL_RECORD_MOST) return 0;
    return pl_varint_put(p, cap, len);
}

int pl_record_prefix_get_any(const uint8_t *p, size_t n, uint64_t *len) {
    uint64_t v;
    int used = pl_varint_get(p, n, &v);
    if (used < 0) return used;
    if (v > PL_RECORD_MOST) return PL_WIRE_RANGE;
    *len = v;
    return used;
}
