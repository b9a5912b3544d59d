/* wire.h: every byte layout and wire limit of pure-link in one place (spec/wire.md), and
 * the codec that reads and writes them.
 *
 * The codec is pure: it never allocates and never copies variable-length data.  Decoders
 * take (p, n), never read p[n] or beyond, and answer a byte count or a negative
 * pl_wire_reason.  Encoders take (p, cap) and answer the bytes written, or 0 when the
 * output does not fit; they assert that what they are given is valid, because only our
 * own code builds frames.
 *
 * Public values come from pure_link.h; this file names them for the wire and ties every
 * derived figure to them with _Static_assert, so changing one number either keeps the
 * layout consistent or stops the build. */
#ifndef PL_WIRE_H
#define PL_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "pure_link.h"

/* ---- Conventions ---- */

/* QUIC variable-length integers (RFC 9000 §16): 1, 2, 4 or 8 bytes, values below 2^62. */
#define PL_VARINT_LIMIT     (UINT64_C(1) << 62)       /* first value that has no encoding */
#define PL_VARINT_MOST      (PL_VARINT_LIMIT - 1)
#define PL_VARINT_BYTES_MOST 8u

/* ---- Packet ---- */

#define PL_VERSION          PURE_LINK_VERSION         /* first byte of every packet */
#define PL_DATAGRAM_MOST    PURE_LINK_DATAGRAM_MOST   /* a full packet: UDP payload bytes */
#define PL_TAG_BYTES        PURE_LINK_TAG_BYTES       /* AES-128-GCM tag after the frames */
#define PL_KEY_BYTES        PURE_LINK_KEY_BYTES       /* X25519 public key in OFFER/ACCEPT */

/* Flags byte (offset 1). */
#define PL_FLAG_REPLY       0x80u  /* 1: reply packet (receiver -> sender) */
#define PL_FLAG_RESERVED    0x40u  /* must be 0 */
#define PL_FLAG_PN_SHIFT    4u
#define PL_FLAG_PN_MASK     0x30u  /* packet-number length - 1 */
#define PL_FLAG_EPOCH_MASK  0x0fu  /* epoch field */

/* Header fields, offsets from the start of the packet. */
#define PL_HDR_VERSION_AT   0u
#define PL_HDR_FLAGS_AT     1u
#define PL_HDR_KEY_ID_AT    2u     /* sender packets: key id u32 */
#define PL_HDR_RUN_AT       6u     /* sender packets: run u64 */
#define PL_HDR_REPLY_RUN_AT 2u     /* reply packets: the sender's run u64 ... */
#define PL_HDR_REPLY_OWN_AT 10u    /* ... then the receiver's own reply run u64 */
#define PL_HEADER_SENDER_FIXED 14u /* bytes before the packet number, sender packet */
#define PL_HEADER_REPLY_FIXED  18u /* bytes before the packet number, reply packet */

#define PL_PN_LEN_LEAST     1u
#define PL_PN_LEN_MOST      4u
#define PL_PN_NONE          UINT64_MAX /* "no packet yet" for pl_pn_decode / pl_pn_len_for */

#define PL_HEADER_LEAST     (PL_HEADER_SENDER_FIXED + PL_PN_LEN_LEAST)
#define PL_HEADER_MOST      (PL_HEADER_REPLY_FIXED + PL_PN_LEN_MOST)
#define PL_PAYLOAD_LEAST    1u     /* at least one frame byte */
#define PL_PACKET_LEAST     (PL_HEADER_LEAST + PL_PAYLOAD_LEAST + PL_TAG_BYTES)
#define PL_PAYLOAD_MOST     (PL_DATAGRAM_MOST - PL_HEADER_LEAST - PL_TAG_BYTES)

/* ---- Datagram sizes (spec/protocol.md §5.1) ----
 * A sender's full packets start at the base, which every IPv6 path carries, and its probes
 * search upward to PL_DATAGRAM_MOST.  A size fails when PL_PMTU_PROBES_MOST probes of it in
 * a row are lost; the search ends when the largest size acknowledged is within
 * PL_PMTU_GRAIN_BYTES of the smallest that failed.  PL_PMTU_BLACK_HOLE_LOSSES packets above
 * the base lost, with none above it acknowledged and none at most the base lost since, and a
 * smaller one acknowledged after them, is a black hole: the size drops to the base and the
 * search starts again. */
#define PL_DATAGRAM_BASE        PURE_LINK_DATAGRAM_BASE
#define PL_IPV6_MTU_LEAST       1280u  /* RFC 8200 §5 */
#define PL_IPV6_UDP_HEADERS     48u    /* IPv6 (40) + UDP (8) */
#define PL_PMTU_PROBES_MOST     3u     /* RFC 8899 MAX_PROBES */
#define PL_PMTU_GRAIN_BYTES     8u
#define PL_PMTU_BLACK_HOLE_LOSSES 6u
#define PL_PMTU_RAISE_NS_DEFAULT (600ull * 1000000000ull) /* RFC 8899 PMTU_RAISE_TIMER */

/* Epoch field: 0 is epoch 0; epochs n >= 1 cycle through 1..15. */
#define PL_EPOCH_FIELD_CYCLE 15u

/* ---- Frames ---- */

typedef enum pl_frame_type {
    PL_FRAME_PADDING   = 0x00, /* both */
    PL_FRAME_STREAM    = 0x01, /* sender -> receiver */
    PL_FRAME_RECORDS   = 0x02,
    PL_FRAME_RECORD    = 0x03,
    PL_FRAME_OFFER     = 0x04,
    PL_FRAME_RESPONSE  = 0x05,
    PL_FRAME_PING      = 0x06,
    PL_FRAME_CHALLENGE = 0x07, /* receiver -> sender */
    PL_FRAME_ACCEPT    = 0x08,
    PL_FRAME_ACK       = 0x09,
    PL_FRAME_STORED    = 0x0a,
    PL_FRAME_LOST      = 0x0b,
    PL_FRAME_REFUSED   = 0x0c
} pl_frame_type;
#define PL_FRAME_TYPES 13u

/* Which types each direction may carry, as bit masks over the type code. */
#define PL_FRAME_BIT(t) (1u << (t))
#define PL_FRAMES_SENDER \
    (PL_FRAME_BIT(PL_FRAME_PADDING) | PL_FRAME_BIT(PL_FRAME_STREAM) | PL_FRAME_BIT(PL_FRAME_RECORDS) | \
     PL_FRAME_BIT(PL_FRAME_RECORD) | PL_FRAME_BIT(PL_FRAME_OFFER) | PL_FRAME_BIT(PL_FRAME_RESPONSE) | \
     PL_FRAME_BIT(PL_FRAME_PING))
#define PL_FRAMES_REPLY \
    (PL_FRAME_BIT(PL_FRAME_PADDING) | PL_FRAME_BIT(PL_FRAME_CHALLENGE) | PL_FRAME_BIT(PL_FRAME_ACCEPT) | \
     PL_FRAME_BIT(PL_FRAME_ACK) | PL_FRAME_BIT(PL_FRAME_STORED) | PL_FRAME_BIT(PL_FRAME_LOST) | \
     PL_FRAME_BIT(PL_FRAME_REFUSED))

#define PL_NAME_LEAST       1u
#define PL_NAME_MOST        PURE_LINK_NAME_MOST  /* source and input names, bytes */
#define PL_TOKEN_BYTES      16u                  /* CHALLENGE / RESPONSE */
#define PL_ECHO_BYTES       4u                   /* ACCEPT echoes this much of the OFFER key */
#define PL_ACK_RANGES_MOST  32u                  /* ACK range_count: ranges after the first */
#define PL_ACK_PAIRS_MOST   (PL_ACK_RANGES_MOST + 1u)
#define PL_ACK_FLAG_STREAM_UNKNOWN 0x01u         /* receiver asks for a STREAM frame */
#define PL_ACK_FLAGS_KNOWN  PL_ACK_FLAG_STREAM_UNKNOWN
#define PL_CREDIT_LEAST     1u
#define PL_CREDIT_MOST      PURE_LINK_CREDIT_MOST
#define PL_RECORD_MOST      PURE_LINK_RECORD_MOST   /* record length, bytes */
/* The last record number a run's stream holds: STORED (a varint) must be able to say it is
 * stored, as PL_VARINT_MOST.  A record past it breaks the stream (protocol.md §4). */
#define PL_RECORD_NUMBER_MOST (PL_VARINT_MOST - 1)
/* The last stream offset a record may end at: offsets are decoded inside the varint range
 * (wire.md §7) and a STREAM frame's base_offset is a varint.  Past it the stream breaks too. */
#define PL_STREAM_OFFSET_MOST PL_VARINT_MOST
#define PL_FRAGMENT_MOST    PL_DATAGRAM_MOST        /* RECORD frame length, and RECORDS data */
#define PL_EPOCH_OFFER_LEAST 1u                     /* OFFER/ACCEPT never name epoch 0 */

enum pl_refused_reason {
    PL_REFUSED_NO_INPUT = 1,    /* no input of that name */
    PL_REFUSED_OTHER_SHAPE = 2, /* the input's shape differs */
    PL_REFUSED_NOT_ALLOWED = 3, /* this key may not send to that source */
    PL_REFUSED_CANNOT_STORE = 4, /* the receiver's host cannot store this input now */
    PL_REFUSED_CUT_OFF = 5       /* a newer run of this key and source took the source over */
};
#define PL_REFUSED_LEAST PL_REFUSED_NO_INPUT
#define PL_REFUSED_MOST  PL_REFUSED_CUT_OFF

/* Fixed frame sizes, type byte included. */
#define PL_FRAME_PADDING_BYTES   1u
#define PL_FRAME_PING_BYTES      1u
#define PL_FRAME_RECORDS_HEAD    5u   /* type, offset u32; data follows to the end */
#define PL_FRAME_RECORD_HEAD     7u   /* type, offset u32, length u16 */
#define PL_FRAME_OFFER_BYTES     (1u + 4u + PL_KEY_BYTES)
#define PL_FRAME_TOKEN_BYTES     (1u + PL_TOKEN_BYTES)       /* RESPONSE, CHALLENGE */
#define PL_FRAME_ACCEPT_BYTES    (1u + 4u + PL_ECHO_BYTES + PL_KEY_BYTES)
#define PL_LOST_TAG_BYTES        8u   /* LOST echoes this much of its trigger's tag */
#define PL_FRAME_LOST_BYTES      (1u + 4u + 4u + 1u + PL_LOST_TAG_BYTES) /* type, epoch, pn, pn length, tag */
#define PL_FRAME_REFUSED_BYTES   2u
#define PL_FRAME_STREAM_MOST     (1u + 2u * PL_VARINT_BYTES_MOST + 8u + 2u * (1u + PL_NAME_MOST))
#define PL_FRAME_ACK_MOST        (1u + 2u * PL_VARINT_BYTES_MOST + 1u + 1u + PL_VARINT_BYTES_MOST + \
                                  PL_ACK_RANGES_MOST * 2u * PL_VARINT_BYTES_MOST)
#define PL_FRAME_STORED_MOST     (1u + PL_VARINT_BYTES_MOST + 4u)

/* ---- Record stream and its offsets ----
 * Offsets travel as their low 32 bits and are recovered as the candidate nearest the
 * receiver's delivered offset, which is right while every offset that can arrive lies
 * within 2^31 of it.  Two bounds keep it so: a sender never sends a stream byte
 * PL_STREAM_LEAD_MOST or more past the first byte it still holds (not yet STORED), and a
 * receiver drops a packet whose number is PL_PN_AGE_MOST or more below the largest it
 * has received in the run (so a long-delayed packet cannot carry an offset from far back). */
#define PL_OFFSET_BITS       32u
#define PL_STREAM_LEAD_MOST  (UINT64_C(1) << 30)
#define PL_PN_AGE_MOST       (UINT64_C(1) << 19)

/* The framing figure (spec/wire.md): a full data packet of 1 KiB records, stream known. */
#define PL_FRAMING_PN_LEN    2u
#define PL_FRAMING_RECORD    1024u
#define PL_FRAMING_PREFIX    2u    /* varint of 1024 */
#define PL_FRAMING_STARTS    2u    /* record starts that fit in one packet's data */
#define PL_FRAMING_BYTES     (PL_HEADER_SENDER_FIXED + PL_FRAMING_PN_LEN + PL_TAG_BYTES + \
                              PL_FRAME_RECORDS_HEAD + PL_FRAMING_STARTS * PL_FRAMING_PREFIX)
#define PL_FRAMING_GOAL      41u

/* ---- How the numbers hang together ---- */
_Static_assert(PL_VERSION >= 1 && PL_VERSION <= 0xff, "the version is one byte");
_Static_assert(PL_TAG_BYTES == 16, "the layout fixes a 16 B tag");
_Static_assert(PL_KEY_BYTES == 32, "OFFER/ACCEPT carry X25519 public keys");
_Static_assert(PL_ECHO_BYTES <= PL_KEY_BYTES, "the echo is a prefix of the offered key");
_Static_assert(PL_HEADER_SENDER_FIXED == 1 + 1 + 4 + 8, "version, flags, key id, run");
_Static_assert(PL_HEADER_REPLY_FIXED == 1 + 1 + 8 + 8, "version, flags, run, reply run");
_Static_assert(PL_HDR_RUN_AT + 8 == PL_HEADER_SENDER_FIXED, "sender header layout");
_Static_assert(PL_HDR_REPLY_OWN_AT + 8 == PL_HEADER_REPLY_FIXED, "reply header layout");
_Static_assert(((PL_PN_LEN_MOST - 1) << PL_FLAG_PN_SHIFT) == PL_FLAG_PN_MASK, "P holds pn length - 1");
_Static_assert(PL_EPOCH_FIELD_CYCLE == PL_FLAG_EPOCH_MASK, "E uses every nonzero 4-bit value");
_Static_assert(PL_EPOCH_FIELD_CYCLE % 2 == 1, "an odd cycle leaves no tie in epoch recovery");
_Static_assert((PL_FLAG_REPLY | PL_FLAG_RESERVED | PL_FLAG_PN_MASK | PL_FLAG_EPOCH_MASK) == 0xff &&
               (PL_FLAG_REPLY & PL_FLAG_RESERVED) == 0 && (PL_FLAG_PN_MASK & PL_FLAG_EPOCH_MASK) == 0,
               "the flag fields fill the byte without overlap");
_Static_assert(PL_PACKET_LEAST == 32, "smallest packet: 15 B header, one frame byte, tag");
_Static_assert(PL_HEADER_MOST + PL_PAYLOAD_LEAST + PL_TAG_BYTES <= PL_DATAGRAM_MOST, "any header fits");
_Static_assert(PL_DATAGRAM_MOST <= 0xffff, "RECORD length is a u16");
_Static_assert(PL_FRAME_TYPES == PL_FRAME_REFUSED + 1, "13 frame types, 0x00..0x0c");
_Static_assert(PL_FRAME_REFUSED == 0x0c, "the seed fixes REFUSED = 0x0c");
_Static_assert((PL_FRAMES_SENDER & PL_FRAMES_REPLY) == PL_FRAME_BIT(PL_FRAME_PADDING),
               "only PADDING goes both ways");
_Static_assert((PL_FRAMES_SENDER | PL_FRAMES_REPLY) == (1u << PL_FRAME_TYPES) - 1, "every type has a direction");
_Static_assert(PL_NAME_MOST >= PL_NAME_LEAST && PL_NAME_MOST <= 0xff, "name lengths are one byte");
_Static_assert(PL_ACK_RANGES_MOST < 64, "range_count is a one-byte varint");
_Static_assert(PL_CREDIT_MOST < PL_VARINT_LIMIT && PL_CREDIT_LEAST >= 1, "credit is a varint, never 0");
_Static_assert(PL_RECORD_MOST < (UINT64_C(1) << 30), "a record length prefix is at most 4 B");
_Static_assert((int)PL_REFUSED_OTHER_SHAPE == (int)PURE_LINK_OTHER_SHAPE, "REFUSED reason 2 is the host's answer");
_Static_assert((int)PL_REFUSED_CANNOT_STORE == (int)PURE_LINK_CANNOT_STORE, "REFUSED reason 4 is the host's answer");
_Static_assert((int)PL_REFUSED_CUT_OFF == (int)PURE_LINK_CUT_OFF, "REFUSED reason 5 is the host's answer");
_Static_assert(PL_FRAME_STREAM_MOST + PL_FRAME_ACK_MOST <= PL_PAYLOAD_MOST, "control frames fit a packet");
_Static_assert(PL_FRAME_ACK_MOST + PL_HEADER_MOST + PL_TAG_BYTES <= PL_DATAGRAM_MOST, "a full ACK fits a reply");
_Static_assert(PL_STREAM_LEAD_MOST + PL_PN_AGE_MOST * PL_DATAGRAM_MOST < (UINT64_C(1) << (PL_OFFSET_BITS - 1)),
               "every offset that can arrive is within 2^31 of the delivered offset");
_Static_assert(PL_FRAMING_RECORD >= 64 && PL_FRAMING_RECORD < 16384, "1 KiB takes a 2 B prefix");
_Static_assert((PL_DATAGRAM_MOST - (PL_FRAMING_BYTES - PL_FRAMING_STARTS * PL_FRAMING_PREFIX)) <
               PL_FRAMING_STARTS * (PL_FRAMING_RECORD + PL_FRAMING_PREFIX),
               "a packet's stream bytes hold at most two record starts");
_Static_assert(PL_FRAMING_BYTES <= PL_FRAMING_GOAL, "framing per full packet <= 41 B");
_Static_assert(PL_DATAGRAM_BASE == PL_IPV6_MTU_LEAST - PL_IPV6_UDP_HEADERS, "the base crosses every IPv6 path");
_Static_assert(PL_DATAGRAM_BASE < PL_DATAGRAM_MOST, "there is a size above the base to search");
_Static_assert(PL_HEADER_MOST + PL_FRAME_STREAM_MOST + PL_FRAME_OFFER_BYTES + PL_FRAME_TOKEN_BYTES +
               PL_FRAME_RECORDS_HEAD + 1u + PL_TAG_BYTES <= PL_DATAGRAM_BASE,
               "every control frame of a sender packet and a record byte fit the base size");
/* The framing figure holds at every size from the base up: a smaller packet has the same
 * header, tag and RECORDS head, and no more record starts than a full one. */
/* The largest reply (ACCEPT, CHALLENGE, REFUSED, STORED and a full ACK) fits the base size,
 * so replies never need a larger path back than the sender's smallest datagram. */
#define PL_REPLY_MOST (PL_HEADER_MOST + PL_FRAME_ACCEPT_BYTES + PL_FRAME_TOKEN_BYTES + PL_FRAME_REFUSED_BYTES + \
                       PL_FRAME_STORED_MOST + PL_FRAME_ACK_MOST + PL_TAG_BYTES)
_Static_assert(PL_REPLY_MOST <= PL_DATAGRAM_BASE, "a reply never exceeds the base size");
_Static_assert(PL_PMTU_GRAIN_BYTES >= 1 && PL_PMTU_GRAIN_BYTES <= 8, "sizes within 8 B of the best");
_Static_assert(PL_PMTU_PROBES_MOST >= 1 && PL_PMTU_BLACK_HOLE_LOSSES >= PL_PMTU_PROBES_MOST, "probe and loss counts");

/* ---- Reasons a packet is malformed (negative, so they pass through byte counts) ---- */
typedef enum pl_wire_reason {
    PL_WIRE_TRUNCATED = -1,       /* input ends inside a field */
    PL_WIRE_BAD_VERSION = -2,     /* first byte is not PL_VERSION */
    PL_WIRE_RESERVED = -3,        /* a reserved bit is set (header flags, ACK flags) */
    PL_WIRE_UNKNOWN_FRAME = -4,   /* frame type >= PL_FRAME_TYPES */
    PL_WIRE_WRONG_DIRECTION = -5, /* a known frame in a packet of the other direction */
    PL_WIRE_RANGE = -6,           /* a field's value is outside its stated range */
    PL_WIRE_EMPTY = -7,           /* a payload without a frame */
    PL_WIRE_TOO_LONG = -8,        /* a datagram or payload longer than a full packet */
    PL_WIRE_TOO_MANY = -9         /* more than PL_FRAMES_MOST frames in one packet */
} pl_wire_reason;
#define PL_WIRE_REASONS 9
#define PL_FRAMES_MOST 16u        /* frames in one packet (a PADDING run counts once) */

const char *pl_wire_reason_name(int reason);

/* ---- Big-endian loads and stores ---- */
static inline uint32_t pl_wire_get32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t pl_wire_get64(const uint8_t *p) {
    return (uint64_t)pl_wire_get32(p) << 32 | pl_wire_get32(p + 4);
}
static inline void pl_wire_put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static inline void pl_wire_put64(uint8_t *p, uint64_t v) {
    pl_wire_put32(p, (uint32_t)(v >> 32)); pl_wire_put32(p + 4, (uint32_t)v);
}

/* ---- Varints (varint.c) ---- */
/* Bytes of the shortest encoding of v: 1, 2, 4 or 8; 0 if v > PL_VARINT_MOST (no encoding:
 * callers treat it like "does not fit").  Inline: the frame sizers call it per field. */
static inline size_t pl_varint_size(uint64_t v) {
    if (v < (UINT64_C(1) << 6)) return 1;
    if (v < (UINT64_C(1) << 14)) return 2;
    if (v < (UINT64_C(1) << 30)) return 4;
    return v < PL_VARINT_LIMIT ? 8 : 0;
}
/* Writes the shortest encoding; returns its size, or 0 if it does not fit or v > PL_VARINT_MOST. */
size_t pl_varint_put(uint8_t *p, size_t cap, uint64_t v);
/* Reads one varint of any length form; returns bytes used, or PL_WIRE_TRUNCATED. */
int pl_varint_get(const uint8_t *p, size_t n, uint64_t *v);

/* Record stream: every record is varint(length) then its bytes, length <= PL_RECORD_MOST. */
static inline size_t pl_record_prefix_size(uint64_t len) {  /* 0 if len > PL_RECORD_MOST */
    return len > PL_RECORD_MOST ? 0 : pl_varint_size(len);
}
size_t pl_record_prefix_put(uint8_t *p, size_t cap, uint64_t len); /* 0: no room or too long */
int pl_record_prefix_get_any(const uint8_t *p, size_t n, uint64_t *len);
/* Bytes used, PL_WIRE_TRUNCATED, or PL_WIRE_RANGE for a length above PL_RECORD_MOST.
 * Inline for the 1 and 2 byte forms (records below 16 KiB), read at every record; the
 * others in varint.c. */
static inline int pl_record_prefix_get(const uint8_t *p, size_t n, uint64_t *len) {
    if (n >= 1 && p[0] < 0x40) {
        *len = p[0];
        return 1;
    }
    if (n >= 2 && p[0] < 0x80) {
        *len = (uint64_t)(p[0] & 0x3fu) << 8 | p[1];
        return 2;
    }
    return pl_record_prefix_get_any(p, n, len);
}

/* ---- Header (header.c) ---- */
typedef struct pl_header {
    uint8_t reply;          /* 0: sender packet, 1: reply packet */
    uint8_t pn_len;         /* 1..4: bytes of packet number on the wire */
    uint8_t epoch_field;    /* 0..15: see pl_epoch_field() */
    uint32_t key_id;        /* sender packets; 0 in replies */
    uint64_t run;           /* the sender's run (both directions) */
    uint64_t reply_run;     /* reply packets: the receiver's reply run; 0 in sender packets */
    uint64_t pn_truncated;  /* low 8*pn_len bits of the packet number */
} pl_header;

/* Header bytes for a direction and packet-number length. */
size_t pl_header_size(unsigned reply, unsigned pn_len);
/* Reads a header from n available bytes; returns its length or a negative pl_wire_reason. */
int pl_header_decode(pl_header *h, const uint8_t *p, size_t n);
/* Writes h; returns its length, or 0 if cap is too small.  h must be valid (asserted). */
size_t pl_header_encode(uint8_t *p, size_t cap, const pl_header *h);
/* A whole datagram: header, then at least one byte of frames and the tag, at most
 * PL_DATAGRAM_MOST in all.  Returns the header length (ciphertext and tag are p[len..n))
 * or a negative pl_wire_reason. */
int pl_packet_decode(pl_header *h, const uint8_t *p, size_t n);

/* Packet numbers (RFC 9000 §17.1, App. A).  largest_pn is the largest received in this
 * (run, direction), or PL_PN_NONE; largest_acked likewise on the sending side. */
uint64_t pl_pn_decode(uint64_t largest_pn, uint64_t truncated, unsigned pn_len);
unsigned pl_pn_len_for(uint64_t pn, uint64_t largest_acked);
uint64_t pl_pn_truncate(uint64_t pn, unsigned pn_len);

/* Epoch field: 0 for epoch 0, else 1 + (epoch - 1) mod 15.  Recovery takes the epoch with
 * that field nearest to `expected` (never 0 for a nonzero field). */
uint8_t pl_epoch_field(uint32_t epoch);
uint32_t pl_epoch_from_field(uint8_t field, uint32_t expected);

/* Stream offset nearest to `expected` (the receiver's delivered offset) with these low 32 bits. */
uint64_t pl_offset_decode(uint64_t expected, uint32_t offset32);

/* ---- Frames (codec.c) ---- */
typedef struct pl_ack_range {
    uint64_t smallest, largest;  /* packet numbers, inclusive */
} pl_ack_range;

/* A stretch of the record stream: RECORDS (to the end of the packet) and RECORD. */
typedef struct pl_frame_data {
    uint32_t offset32;          /* low 32 bits of the stream offset of data[0] */
    const uint8_t *data;        /* points into the packet (decode) or the caller's buffer */
    size_t len;
} pl_frame_data;

typedef struct pl_frame {
    uint8_t type;               /* pl_frame_type */
    union {
        struct { size_t len; } padding;       /* a run of len >= 1 zero bytes, type included */
        struct {
            uint64_t base_record;             /* record base_record starts ... */
            uint64_t base_offset;             /* ... at this stream offset */
            uint64_t shape;
            const uint8_t *source, *input;    /* names, not NUL-terminated */
            uint8_t source_len, input_len;    /* 1..PL_NAME_MOST */
        } stream;
        pl_frame_data records;
        pl_frame_data record;
        struct { uint32_t epoch; uint8_t public_key[PL_KEY_BYTES]; } offer;
        struct { uint8_t token[PL_TOKEN_BYTES]; } response, challenge;
        struct {
            uint32_t epoch;
            uint8_t echo[PL_ECHO_BYTES];
            uint8_t public_key[PL_KEY_BYTES];
        } accept;
        struct {
            uint64_t ack_delay_us;
            uint8_t flags;                    /* PL_ACK_FLAG_* */
            uint8_t range_count;              /* 0..PL_ACK_RANGES_MOST: pairs = range_count + 1 */
            pl_ack_range ranges[PL_ACK_PAIRS_MOST]; /* newest first: ranges[0].largest is Largest */
        } ack;
        struct { uint64_t stored, credit; } stored;
        struct {                              /* of the packet that could not be opened: */
            uint32_t epoch;                   /* its epoch field, 1..15 (spec/wire.md) */
            uint32_t pn_truncated;            /* its packet number as carried, */
            uint8_t pn_len;                   /* in 1..4 bytes, */
            uint8_t tag[PL_LOST_TAG_BYTES];   /* and the first bytes of its tag */
        } lost;
        struct { uint8_t reason; } refused;   /* enum pl_refused_reason */
    };
} pl_frame;

/* 0 if f obeys every rule of its type, else the negative reason a decoder would give. */
int pl_frame_valid(const pl_frame *f);
/* Reads one frame from n bytes; reply_dir 0 for a sender packet, 1 for a reply.  Returns
 * bytes consumed (RECORDS takes all n; PADDING takes its whole run of zeros) or a negative
 * pl_wire_reason (then *f holds nothing useful).  Data and names point into p. */
int pl_frame_decode(pl_frame *f, const uint8_t *p, size_t n, int reply_dir);
/* Encoded bytes of a valid frame. */
size_t pl_frame_size(const pl_frame *f);
/* Writes a valid frame (asserted); returns its size, or 0 if it does not fit in cap. */
size_t pl_frame_encode(uint8_t *p, size_t cap, const pl_frame *f);
/* Writes an ACK with as many of f's ranges as fit in cap, newest first (older ranges are
 * dropped); *range_count gets the range_count written.  0 if not even the first range fits. */
size_t pl_ack_encode_fit(uint8_t *p, size_t cap, const pl_frame *f, unsigned *range_count);
/* Walks a decrypted payload; returns the number of frames (a PADDING run counts once)
 * or a negative pl_wire_reason.  An empty payload is malformed. */
int pl_payload_check(const uint8_t *p, size_t n, int reply_dir);
/* Decodes a whole payload into frames[0..most) in one pass (most <= PL_FRAMES_MOST):
 * returns the number of frames, or a negative pl_wire_reason — nothing is acted on
 * before the whole packet is known to be well formed. */
int pl_payload_decode(pl_frame *frames, unsigned most, const uint8_t *p, size_t n, int reply_dir);

#endif
