/* header.c: the packet header and the numbers it shortens (packet number, epoch) or that
 * frames shorten (stream offset), and the names of the reasons a packet is malformed.
 * Layouts: spec/wire.md "Packet header". */
#include <assert.h>

#include "wire.h"

/* The packet number is read and written as the 4 bytes that end the header, masked: the
 * bytes before a shorter number are the run's, written after it. */
_Static_assert(PL_PN_LEN_MOST == 4 && PL_HDR_RUN_AT + 8 == PL_HEADER_SENDER_FIXED &&
               PL_HDR_REPLY_OWN_AT + 8 == PL_HEADER_REPLY_FIXED, "a header ends with a u64, then the number");

size_t pl_header_size(unsigned reply, unsigned pn_len) {
    assert(reply <= 1);
    assert(pn_len >= PL_PN_LEN_LEAST && pn_len <= PL_PN_LEN_MOST);
    return (reply ? PL_HEADER_REPLY_FIXED : PL_HEADER_SENDER_FIXED) + pn_len;
}

int pl_header_decode(pl_header *h, const uint8_t *p, size_t n) {
    if (n < 1) return PL_WIRE_TRUNCATED;
    if (p[PL_HDR_VERSION_AT] != PL_VERSION) return PL_WIRE_BAD_VERSION;
    if (n < 2) return PL_WIRE_TRUNCATED;
    uint8_t flags = p[PL_HDR_FLAGS_AT];
    if (flags & PL_FLAG_RESERVED) return PL_WIRE_RESERVED;
    unsigned reply = (flags & PL_FLAG_REPLY) ? 1u : 0u;
    unsigned pn_len = ((flags & PL_FLAG_PN_MASK) >> PL_FLAG_PN_SHIFT) + 1u;
    size_t len = pl_header_size(reply, pn_len);
    if (n < len) return PL_WIRE_TRUNCATED;

    h->reply = (uint8_t)reply;
    h->pn_len = (uint8_t)pn_len;
    h->epoch_field = flags & PL_FLAG_EPOCH_MASK;
    if (reply) {
        h->key_id = 0;
        h->run = pl_wire_get64(p + PL_HDR_REPLY_RUN_AT);
        h->reply_run = pl_wire_get64(p + PL_HDR_REPLY_OWN_AT);
    } else {
        h->key_id = pl_wire_get32(p + PL_HDR_KEY_ID_AT);
        h->run = pl_wire_get64(p + PL_HDR_RUN_AT);
        h->reply_run = 0;
    }
    h->pn_truncated = pl_wire_get32(p + len - 4) & (UINT64_C(0xffffffff) >> (32u - 8u * pn_len));
    assert(len <= n);
    return (int)len;
}

size_t pl_header_encode(uint8_t *p, size_t cap, const pl_header *h) {
    assert(h->reply <= 1);
    assert(h->epoch_field <= PL_FLAG_EPOCH_MASK);
    size_t len = pl_header_size(h->reply, h->pn_len);
    assert(h->pn_truncated < (UINT64_C(1) << (8u * h->pn_len)));
    assert(h->reply || h->reply_run == 0);
    assert(!h->reply || h->key_id == 0);
    if (len > cap) return 0;

    pl_wire_put32(p + len - 4, (uint32_t)h->pn_truncated);  /* first: the run's bytes go over the top */
    p[PL_HDR_VERSION_AT] = (uint8_t)PL_VERSION;
    p[PL_HDR_FLAGS_AT] = (uint8_t)((h->reply ? PL_FLAG_REPLY : 0u) |
                                   ((unsigned)(h->pn_len - 1u) << PL_FLAG_PN_SHIFT) | h->epoch_field);
    if (h->reply) {
        pl_wire_put64(p + PL_HDR_REPLY_RUN_AT, h->run);
        pl_wire_put64(p + PL_HDR_REPLY_OWN_AT, h->reply_run);
    } else {
        pl_wire_put32(p + PL_HDR_KEY_ID_AT, h->key_id);
        pl_wire_put64(p + PL_HDR_RUN_AT, h->run);
    }
    return len;
}

int pl_packet_decode(pl_header *h, const uint8_t *p, size_t n) {
    int len = pl_header_decode(h, p, n);
    if (len < 0) return len;
    if (n - (size_t)len < PL_PAYLOAD_LEAST + PL_TAG_BYTES) return PL_WIRE_TRUNCATED;
    if (n > PL_DATAGRAM_MOST) return PL_WIRE_TOO_LONG;
    return len;
}

/* The value nearest `expected` whose low `bits` bits are `truncated` (RFC 9000 App. A.3),
 * kept inside the varint range where values live. */
static uint64_t nearest_with_low_bits(uint64_t expected, uint64_t truncated, unsigned bits) {
    assert(bits >= 8 && bits <= 32);
    assert(expected <= PL_VARINT_LIMIT);
    uint64_t win = UINT64_C(1) << bits, half = win / 2, mask = win - 1;
    assert(truncated <= mask);
    uint64_t candidate = (expected & ~mask) | truncated;
    if (candidate + half <= expected && candidate < PL_VARINT_LIMIT - win) return candidate + win;
    if (candidate > expected + half && candidate >= win) return candidate - win;
    if (candidate >= PL_VARINT_LIMIT) return candidate - win; /* past the end of the space */
    return candidate;
}

uint64_t pl_pn_decode(uint64_t largest_pn, uint64_t truncated, unsigned pn_len) {
    assert(pn_len >= PL_PN_LEN_LEAST && pn_len <= PL_PN_LEN_MOST);
    assert(largest_pn == PL_PN_NONE || largest_pn < PL_VARINT_LIMIT);
    /* PL_PN_NONE + 1 wraps to 0: with nothing received, packet 0 is expected. */
    return nearest_with_low_bits(largest_pn + 1, truncated, 8u * pn_len);
}

unsigned pl_pn_len_for(uint64_t pn, uint64_t largest_acked) {
    assert(pn < PL_VARINT_LIMIT);
    assert(largest_acked == PL_PN_NONE || largest_acked < pn);
    uint64_t unacked = largest_acked == PL_PN_NONE ? pn + 1 : pn - largest_acked;
    /* The receiver's window is centred on its expected number, so the encoding must span
     * twice the unacknowledged range: unacked <= 2^(8*len - 1). */
    for (unsigned len = PL_PN_LEN_LEAST; len < PL_PN_LEN_MOST; len++)
        if (unacked <= (UINT64_C(1) << (8u * len - 1u))) return len;
    return PL_PN_LEN_MOST; /* the sender keeps unacked below 2^31 (spec/wire.md) */
}

uint64_t pl_pn_truncate(uint64_t pn, unsigned pn_len) {
    assert(pn_len >= PL_PN_LEN_LEAST && pn_len <= PL_PN_LEN_MOST);
    return pn & ((UINT64_C(1) << (8u * pn_len)) - 1u);
}

uint8_t pl_epoch_field(uint32_t epoch) {
    if (epoch == 0) return 0;
    return (uint8_t)(1u + (epoch - 1u) % PL_EPOCH_FIELD_CYCLE);
}

uint32_t pl_epoch_from_field(uint8_t field, uint32_t expected) {
    assert(field <= PL_EPOCH_FIELD_CYCLE);
    if (field == 0) return 0;
    if (expected <= field) return field; /* the smallest epoch with this field */
    /* Candidates are field + 15k; take the one at or below expected and the next. */
    uint32_t below = field + (expected - field) / PL_EPOCH_FIELD_CYCLE * PL_EPOCH_FIELD_CYCLE;
    uint32_t gap = expected - below; /* 0..14; an odd cycle leaves no tie */
    if (gap <= PL_EPOCH_FIELD_CYCLE / 2 || below > UINT32_MAX - PL_EPOCH_FIELD_CYCLE) return below;
    return below + PL_EPOCH_FIELD_CYCLE;
}

uint64_t pl_offset_decode(uint64_t expected, uint32_t offset32) {
    return nearest_with_low_bits(expected, offset32, PL_OFFSET_BITS);
}

const char *pl_wire_reason_name(int reason) {
    switch (reason) {
    case PL_WIRE_TRUNCATED: return "truncated";
    case PL_WIRE_BAD_VERSION: return "bad_version";
    case PL_WIRE_RESERVED: return "reserved_bit";
    case PL_WIRE_UNKNOWN_FRAME: return "unknown_frame";
    case PL_WIRE_WRONG_DIRECTION: return "wrong_direction";
    case PL_WIRE_RANGE: return "out_of_range";
    case PL_WIRE_EMPTY: return "no_frames";
    case PL_WIRE_TOO_LONG: return "too_long";
    case PL_WIRE_TOO_MANY: return "too_many_frames";
    default: return reason >= 0 ? "ok" : "unknown_reason";
    }
}
