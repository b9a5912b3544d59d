/* test_codec.c: the wire codec (core/wire.h): varints, header, packet numbers, epoch
 * field, stream offsets, all 13 frames, payload walk, framing figure, and a fixed-seed fuzz
 * loop.  Every decoder is fed copies in buffers of exactly n bytes (heap), so a read past
 * n shows under valgrind or -fsanitize=address. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"
#include "harness.h"

/* ---- Helpers ---- */

static uint8_t *dup_exact(const uint8_t *p, size_t n) {
    uint8_t *q = malloc(n ? n : 1);
    if (q == NULL) abort();
    if (n) memcpy(q, p, n);
    return q;
}

/* Hex string (spaces ignored) to bytes; returns the byte count. */
static size_t unhex(const char *s, uint8_t *out, size_t cap) {
    size_t n = 0;
    int hi = -1;
    for (; *s; s++) {
        int v;
        if (*s >= '0' && *s <= '9') v = *s - '0';
        else if (*s >= 'a' && *s <= 'f') v = *s - 'a' + 10;
        else if (*s >= 'A' && *s <= 'F') v = *s - 'A' + 10;
        else continue;
        if (hi < 0) { hi = v; continue; }
        if (n == cap) abort();
        out[n++] = (uint8_t)(hi << 4 | v);
        hi = -1;
    }
    if (hi >= 0) abort();
    return n;
}

/* Decodes hex bytes (in an exact-size buffer) as one frame. */
static int decode_hex(const char *hex, int dir, pl_frame *f) {
    uint8_t buf[4096];
    size_t n = unhex(hex, buf, sizeof buf);
    uint8_t *q = dup_exact(buf, n);
    int r = pl_frame_decode(f, q, n, dir);
    free(q);
    return r;
}

static uint8_t data_bytes[PL_DATAGRAM_MOST + 16];
static const uint8_t *test_data(void) {
    for (size_t i = 0; i < sizeof data_bytes; i++) data_bytes[i] = (uint8_t)(i * 131u + 7u);
    return data_bytes;
}

static int frame_equal(const pl_frame *a, const pl_frame *b) {
    if (a->type != b->type) return 0;
    switch (a->type) {
    case PL_FRAME_PADDING: return a->padding.len == b->padding.len;
    case PL_FRAME_STREAM:
        return a->stream.base_record == b->stream.base_record && a->stream.base_offset == b->stream.base_offset &&
               a->stream.shape == b->stream.shape && a->stream.source_len == b->stream.source_len &&
               a->stream.input_len == b->stream.input_len &&
               memcmp(a->stream.source, b->stream.source, a->stream.source_len) == 0 &&
               memcmp(a->stream.input, b->stream.input, a->stream.input_len) == 0;
    case PL_FRAME_RECORDS:
    case PL_FRAME_RECORD: {
        const pl_frame_data *x = a->type == PL_FRAME_RECORDS ? &a->records : &a->record;
        const pl_frame_data *y = a->type == PL_FRAME_RECORDS ? &b->records : &b->record;
        return x->offset32 == y->offset32 && x->len == y->len && memcmp(x->data, y->data, x->len) == 0;
    }
    case PL_FRAME_OFFER:
        return a->offer.epoch == b->offer.epoch && memcmp(a->offer.public_key, b->offer.public_key, 32) == 0;
    case PL_FRAME_RESPONSE: return memcmp(a->response.token, b->response.token, PL_TOKEN_BYTES) == 0;
    case PL_FRAME_CHALLENGE: return memcmp(a->challenge.token, b->challenge.token, PL_TOKEN_BYTES) == 0;
    case PL_FRAME_PING: return 1;
    case PL_FRAME_ACCEPT:
        return a->accept.epoch == b->accept.epoch && memcmp(a->accept.echo, b->accept.echo, PL_ECHO_BYTES) == 0 &&
               memcmp(a->accept.public_key, b->accept.public_key, 32) == 0;
    case PL_FRAME_ACK:
        if (a->ack.ack_delay_us != b->ack.ack_delay_us || a->ack.flags != b->ack.flags ||
            a->ack.range_count != b->ack.range_count)
            return 0;
        for (unsigned i = 0; i <= a->ack.range_count; i++)
            if (a->ack.ranges[i].smallest != b->ack.ranges[i].smallest ||
                a->ack.ranges[i].largest != b->ack.ranges[i].largest)
                return 0;
        return 1;
    case PL_FRAME_STORED: return a->stored.stored == b->stored.stored && a->stored.credit == b->stored.credit;
    case PL_FRAME_LOST:
        return a->lost.epoch == b->lost.epoch && a->lost.pn_truncated == b->lost.pn_truncated &&
               a->lost.pn_len == b->lost.pn_len && memcmp(a->lost.tag, b->lost.tag, PL_LOST_TAG_BYTES) == 0;
    case PL_FRAME_REFUSED: return a->refused.reason == b->refused.reason;
    default: return 0;
    }
}

static int frame_dir(uint8_t type) { return (PL_FRAMES_SENDER & PL_FRAME_BIT(type)) ? 0 : 1; }

/* encode -> decode -> equal; encode again -> same bytes; one byte less does not fit. */
static void roundtrip(const pl_frame *f) {
    uint8_t buf[2048], again[2048];
    int dir = frame_dir(f->type);
    CHECK(pl_frame_valid(f) == 0);
    size_t size = pl_frame_size(f);
    CHECK(size > 0 && size <= sizeof buf);
    CHECK_EQ_U(pl_frame_encode(buf, size - 1, f), 0);
    CHECK_EQ_U(pl_frame_encode(buf, size, f), size);
    uint8_t *exact = dup_exact(buf, size);
    pl_frame d;
    CHECK(pl_frame_decode(&d, exact, size, dir) == (int)size);
    CHECK(frame_equal(f, &d));
    CHECK_EQ_U(pl_frame_encode(again, sizeof again, &d), size);
    CHECK_MEM(buf, again, size);
    CHECK(pl_payload_check(exact, size, dir) == (size <= PL_PAYLOAD_MOST ? 1 : PL_WIRE_TOO_LONG));
    int other = pl_frame_decode(&d, exact, size, !dir);
    CHECK(f->type == PL_FRAME_PADDING ? other == (int)size : other == PL_WIRE_WRONG_DIRECTION);
    free(exact);
}

/* Every strict prefix is rejected ("truncated"; RECORDS with its head alone is "out of
 * range"), except where the frame legitimately ends at the packet's end: a shorter run of
 * PADDING, or RECORDS with fewer data bytes. */
static void truncation(const pl_frame *f) {
    uint8_t buf[2048];
    int dir = frame_dir(f->type);
    size_t size = pl_frame_encode(buf, sizeof buf, f);
    CHECK(size > 0);
    for (size_t k = 0; k < size; k++) {
        uint8_t *q = dup_exact(buf, k);
        pl_frame d;
        int r = pl_frame_decode(&d, q, k, dir);
        int walk = pl_payload_check(q, k, dir);
        free(q);
        /* A walk of more than a full payload stops before any frame. */
        int walk_long = k > PL_PAYLOAD_MOST;
        CHECK(!walk_long || walk == PL_WIRE_TOO_LONG);
        if (k > 0 && f->type == PL_FRAME_PADDING) {
            CHECK(r == (int)k && d.padding.len == k && (walk_long || walk == 1));
        } else if (k > PL_FRAME_RECORDS_HEAD && f->type == PL_FRAME_RECORDS) {
            CHECK(r == (int)k && d.records.len == k - PL_FRAME_RECORDS_HEAD && (walk_long || walk == 1));
        } else {
            int want = (f->type == PL_FRAME_RECORDS && k == PL_FRAME_RECORDS_HEAD) ? PL_WIRE_RANGE
                                                                                 : PL_WIRE_TRUNCATED;
            CHECK(r == (k == 0 ? PL_WIRE_TRUNCATED : want));
            CHECK(walk_long || walk == (k == 0 ? PL_WIRE_EMPTY : want));
        }
    }
}

/* ---- Frame samples ---- */

static const uint8_t source_name[] = "sensor.temperature";
static const uint8_t input_name[] = "archive";
static uint8_t long_name[PL_NAME_MOST];

static void make_padding(pl_frame *f, int v) {
    memset(f, 0, sizeof *f);
    f->type = PL_FRAME_PADDING;
    f->padding.len = v == 0 ? 1 : v == 1 ? 7 : 1200;
}

static void make_stream(pl_frame *f, int v) {
    memset(f, 0, sizeof *f);
    memset(long_name, 'n', sizeof long_name);
    f->type = PL_FRAME_STREAM;
    f->stream.base_record = v == 0 ? 0 : v == 1 ? 1000 : PL_VARINT_MOST;
    f->stream.base_offset = v == 0 ? 0 : v == 1 ? 1026000 : PL_VARINT_MOST;
    f->stream.shape = v == 2 ? UINT64_MAX : UINT64_C(0x0123456789abcdef);
    f->stream.source = v == 2 ? long_name : source_name;
    f->stream.source_len = (uint8_t)(v == 2 ? PL_NAME_MOST : sizeof source_name - 1);
    f->stream.input = v == 2 ? long_name : input_name;
    f->stream.input_len = (uint8_t)(v == 2 ? PL_NAME_MOST : v == 1 ? 1 : sizeof input_name - 1);
}

static void make_data(pl_frame *f, uint8_t type, int v) {
    memset(f, 0, sizeof *f);
    f->type = type;
    pl_frame_data *d = type == PL_FRAME_RECORDS ? &f->records : &f->record;
    d->offset32 = v == 0 ? 0 : v == 1 ? 0x89abcdefu : UINT32_MAX;
    d->data = test_data();
    d->len = v == 0 ? 1 : v == 1 ? 300 : PL_FRAGMENT_MOST;
}
static void make_records(pl_frame *f, int v) { make_data(f, PL_FRAME_RECORDS, v); }
static void make_record(pl_frame *f, int v) { make_data(f, PL_FRAME_RECORD, v); }

static void make_offer(pl_frame *f, int v) {
    memset(f, 0, sizeof *f);
    f->type = PL_FRAME_OFFER;
    f->offer.epoch = v == 0 ? 1 : v == 1 ? 17 : UINT32_MAX;
    memcpy(f->offer.public_key, test_data() + v, PL_KEY_BYTES);
}

static void make_response(pl_frame *f, int v) {
    memset(f, 0, sizeof *f);
    f->type = PL_FRAME_RESPONSE;
    memcpy(f->response.token, test_data() + 3 * v, PL_TOKEN_BYTES);
}

static void make_ping(pl_frame *f, int v) {
    memset(f, 0, sizeof *f);
    f->type = PL_FRAME_PING;
}

static void make_challenge(pl_frame *f, int v) {
    memset(f, 0, sizeof *f);
    f->type = PL_FRAME_CHALLENGE;
    memcpy(f->challenge.token, test_data() + 5 * v, PL_TOKEN_BYTES);
}

static void make_accept(pl_frame *f, int v) {
    memset(f, 0, sizeof *f);
    f->type = PL_FRAME_ACCEPT;
    f->accept.epoch = v == 0 ? 1 : v == 1 ? 2 : UINT32_MAX;
    memcpy(f->accept.echo, test_data() + 40, PL_ECHO_BYTES);
    memcpy(f->accept.public_key, test_data() + 7 * v, PL_KEY_BYTES);
}

/* An ACK of `pairs` ranges counting down from `largest`, each `width` long, gaps `gap`. */
static void make_ack_ranges(pl_frame *f, uint64_t largest, unsigned pairs, uint64_t width, uint64_t gap) {
    memset(f, 0, sizeof *f);
    f->type = PL_FRAME_ACK;
    f->ack.ack_delay_us = 1234;
    f->ack.range_count = (uint8_t)(pairs - 1);
    for (unsigned i = 0; i < pairs; i++) {
        f->ack.ranges[i].largest = largest;
        f->ack.ranges[i].smallest = largest - width;
        largest = largest - width - 2 - gap;
    }
}

static void make_ack(pl_frame *f, int v) {
    if (v == 0) make_ack_ranges(f, 0, 1, 0, 0); /* acknowledges packet 0 only */
    if (v == 1) {
        make_ack_ranges(f, 1000000, 2, 10, 5);
        f->ack.flags = PL_ACK_FLAG_STREAM_UNKNOWN;
    }
    if (v == 2) {
        make_ack_ranges(f, PL_VARINT_MOST, PL_ACK_PAIRS_MOST, 100000, 1u << 20);
        f->ack.ack_delay_us = PL_VARINT_MOST;
        f->ack.ranges[PL_ACK_RANGES_MOST].smallest = 0; /* the oldest range reaches packet 0 */
    }
}

static void make_stored(pl_frame *f, int v) {
    memset(f, 0, sizeof *f);
    f->type = PL_FRAME_STORED;
    f->stored.stored = v == 0 ? 0 : v == 1 ? 200 : PL_VARINT_MOST;
    f->stored.credit = v == 0 ? PL_CREDIT_LEAST : v == 1 ? PURE_LINK_CREDIT_FIRST : PL_CREDIT_MOST;
}

static void make_lost(pl_frame *f, int v) {
    memset(f, 0, sizeof *f);
    f->type = PL_FRAME_LOST;
    f->lost.epoch = v == 0 ? 1 : v == 1 ? 5 : PL_EPOCH_FIELD_CYCLE; /* an epoch field, never 0 */
    f->lost.pn_len = (uint8_t)(v == 0 ? 1 : v == 1 ? 2 : 4);              /* the trigger's number as carried */
    f->lost.pn_truncated = v == 0 ? 0xff : v == 1 ? 0x1234 : UINT32_MAX;
    for (unsigned i = 0; i < PL_LOST_TAG_BYTES; i++) f->lost.tag[i] = (uint8_t)(0xa0 + v + i);
}

static void make_refused(pl_frame *f, int v) {
    memset(f, 0, sizeof *f);
    f->type = PL_FRAME_REFUSED;
    f->refused.reason = (uint8_t)(PL_REFUSED_NO_INPUT + v);
}

#define SAMPLES 3

#define FRAME_TESTS(name) \
    static void name##_roundtrip(void) { \
        for (int v = 0; v < SAMPLES; v++) { pl_frame f; make_##name(&f, v); roundtrip(&f); } } \
    static void name##_truncation(void) { \
        for (int v = 0; v < SAMPLES; v++) { pl_frame f; make_##name(&f, v); truncation(&f); } }

FRAME_TESTS(padding)
FRAME_TESTS(stream)
FRAME_TESTS(records)
FRAME_TESTS(record)
FRAME_TESTS(offer)
FRAME_TESTS(response)
FRAME_TESTS(ping)
FRAME_TESTS(challenge)
FRAME_TESTS(accept)
FRAME_TESTS(ack)
FRAME_TESTS(stored)
FRAME_TESTS(lost)
FRAME_TESTS(refused)

/* Every varint length boundary, through the frame fields that carry varints. */
static void varint_fields_in_frames(void) {
    static const uint64_t edges[] = {0, 1, 63, 64, 16383, 16384, (UINT64_C(1) << 30) - 1, UINT64_C(1) << 30,
                                     PL_VARINT_MOST};
    static const uint64_t credits[] = {1, 63, 64, 16383, 16384, PL_CREDIT_MOST};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        pl_frame f;
        for (size_t j = 0; j < sizeof credits / sizeof credits[0]; j++) {
            make_stored(&f, 0);
            f.stored.stored = edges[i];
            f.stored.credit = credits[j];
            roundtrip(&f);
        }
        make_stream(&f, 0);
        f.stream.base_record = edges[i];
        f.stream.base_offset = edges[i];
        roundtrip(&f);
        make_ack_ranges(&f, edges[i], 1, edges[i], 0); /* largest and first range */
        f.ack.ack_delay_us = edges[i];
        roundtrip(&f);
        if (edges[i] <= PL_VARINT_MOST - 2) { /* gap = edge, range = the rest down to 0 */
            make_ack_ranges(&f, PL_VARINT_MOST, 2, 0, 0);
            f.ack.ranges[1].largest = PL_VARINT_MOST - 2 - edges[i];
            f.ack.ranges[1].smallest = 0;
            roundtrip(&f);
        }
    }
}

/* ---- Malformed frames: a table of hand-written bytes and the reason each must get ---- */

typedef struct bad_case {
    const char *name;
    int dir;
    const char *hex;
    int want; /* negative reason, or the byte count a valid-but-odd input must decode to */
} bad_case;

#define SHAPE8 "0123456789abcdef"
#define N64 "6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e" \
            "6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e"
#define KEY32 "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

static void run_bad(const bad_case *c, size_t count) {
    for (size_t i = 0; i < count; i++) {
        pl_frame f;
        int r = decode_hex(c[i].hex, c[i].dir, &f);
        if (r != c[i].want) {
            fprintf(stderr, "  case %s: got %d (%s), want %d (%s)\n", c[i].name, r, pl_wire_reason_name(r),
                    c[i].want, pl_wire_reason_name(c[i].want));
            CHECK(r == c[i].want);
        }
    }
}
#define RUN_BAD(table) run_bad(table, sizeof table / sizeof table[0])

static void padding_malformed(void) {
    static const bad_case t[] = {
        {"run stops at a nonzero byte", 0, "00 00 00 06", 3},
        {"run in a reply", 1, "00 00", 2},
        {"zero bytes", 0, "", PL_WIRE_TRUNCATED},
    };
    RUN_BAD(t);
    uint8_t p[] = {0, 0, 0, 0x0d};
    CHECK(pl_payload_check(p, sizeof p, 0) == PL_WIRE_UNKNOWN_FRAME);
}

static void stream_malformed(void) {
    static const bad_case t[] = {
        {"valid", 0, "01 00 00" SHAPE8 "01 61 01 62", 1 + 2 + 8 + 2 + 2},
        {"non-shortest varints accepted", 0, "01 4000 80000000" SHAPE8 "01 61 01 62", 1 + 6 + 8 + 4},
        {"source_len 0", 0, "01 00 00" SHAPE8 "00 01 62", PL_WIRE_RANGE},
        {"source_len 65", 0, "01 00 00" SHAPE8 "41" N64 "61 01 62", PL_WIRE_RANGE},
        {"source_len 255 short", 0, "01 00 00" SHAPE8 "ff 61", PL_WIRE_RANGE},
        {"input_len 0", 0, "01 00 00" SHAPE8 "01 61 00", PL_WIRE_RANGE},
        {"input_len 65", 0, "01 00 00" SHAPE8 "01 61 41" N64 "62", PL_WIRE_RANGE},
        {"names of 64 accepted", 0, "01 00 00" SHAPE8 "40" N64 "40" N64, 1 + 2 + 8 + 2 * 65},
        {"NUL in source", 0, "01 00 00" SHAPE8 "02 61 00 01 62", PL_WIRE_RANGE},
        {"newline in input", 0, "01 00 00" SHAPE8 "01 61 02 62 0a", PL_WIRE_RANGE},
        {"base_record above base_offset", 0, "01 05 04" SHAPE8 "01 61 01 62", PL_WIRE_RANGE},
        {"base_record equal base_offset", 0, "01 05 05" SHAPE8 "01 61 01 62", 15},
        {"in a reply", 1, "01 00 00" SHAPE8 "01 61 01 62", PL_WIRE_WRONG_DIRECTION},
    };
    RUN_BAD(t);
}

static void records_malformed(void) {
    uint8_t big[PL_FRAME_RECORDS_HEAD + PL_FRAGMENT_MOST + 1];
    memset(big, 0x55, sizeof big);
    big[0] = PL_FRAME_RECORDS;
    pl_frame f;
    CHECK(pl_frame_decode(&f, big, sizeof big, 0) == PL_WIRE_RANGE);
    CHECK(pl_frame_decode(&f, big, sizeof big - 1, 0) == (int)(sizeof big - 1));
    static const bad_case t[] = {
        {"no data", 0, "02 00000000", PL_WIRE_RANGE},
        {"one byte", 0, "02 00000000 00", 6},
        {"takes the rest, frames included", 0, "02 00000001 06 06 06", 8},
        {"in a reply", 1, "02 00000000 61", PL_WIRE_WRONG_DIRECTION},
    };
    RUN_BAD(t);
}

static void record_malformed(void) {
    static const bad_case t[] = {
        {"length 0", 0, "03 00000000 0000", PL_WIRE_RANGE},
        {"length 1453", 0, "03 00000000 05ad", PL_WIRE_RANGE},
        {"length 65535", 0, "03 00000000 ffff", PL_WIRE_RANGE},
        {"length 5, 4 bytes", 0, "03 00000000 0005 61626364", PL_WIRE_TRUNCATED},
        {"length 2 then a PING", 0, "03 00000000 0002 6162 06", 9},
        {"in a reply", 1, "03 00000000 0001 61", PL_WIRE_WRONG_DIRECTION},
    };
    RUN_BAD(t);
}

static void offer_malformed(void) {
    static const bad_case t[] = {
        {"epoch 0", 0, "04 00000000" KEY32, PL_WIRE_RANGE},
        {"epoch 1", 0, "04 00000001" KEY32, 37},
        {"key short", 0, "04 00000001" "0001", PL_WIRE_TRUNCATED},
        {"in a reply", 1, "04 00000001" KEY32, PL_WIRE_WRONG_DIRECTION},
    };
    RUN_BAD(t);
}

static void response_malformed(void) {
    static const bad_case t[] = {
        {"token 15", 0, "05 000102030405060708090a0b0c0d0e", PL_WIRE_TRUNCATED},
        {"in a reply", 1, "05 000102030405060708090a0b0c0d0e0f", PL_WIRE_WRONG_DIRECTION},
    };
    RUN_BAD(t);
}

static void ping_malformed(void) {
    static const bad_case t[] = {
        {"in a reply", 1, "06", PL_WIRE_WRONG_DIRECTION},
        {"one byte, more follows", 0, "06 06", 1},
    };
    RUN_BAD(t);
}

static void challenge_malformed(void) {
    static const bad_case t[] = {
        {"token 15", 1, "07 000102030405060708090a0b0c0d0e", PL_WIRE_TRUNCATED},
        {"in a sender packet", 0, "07 000102030405060708090a0b0c0d0e0f", PL_WIRE_WRONG_DIRECTION},
    };
    RUN_BAD(t);
}

static void accept_malformed(void) {
    static const bad_case t[] = {
        {"epoch 0", 1, "08 00000000 00010203" KEY32, PL_WIRE_RANGE},
        {"epoch 1", 1, "08 00000001 00010203" KEY32, 41},
        {"in a sender packet", 0, "08 00000001 00010203" KEY32, PL_WIRE_WRONG_DIRECTION},
    };
    RUN_BAD(t);
}

static void ack_malformed(void) {
    static const bad_case t[] = {
        {"flags bit 1", 1, "09 05 00 02 00 00", PL_WIRE_RESERVED},
        {"flags bit 7", 1, "09 05 00 80 00 00", PL_WIRE_RESERVED},
        {"flags bit 0", 1, "09 05 00 01 00 00", 6},
        {"range_count 33", 1, "09 3f 00 00 21 00", PL_WIRE_RANGE},
        {"range_count 2^62-1", 1, "09 3f 00 00 ffffffffffffffff 00", PL_WIRE_RANGE},
        {"first range below 0", 1, "09 05 00 00 00 06", PL_WIRE_RANGE},
        {"first range to 0", 1, "09 05 00 00 00 05", 6},
        /* largest 10, first range 2 -> smallest 8; next largest = 8 - 2 - gap. */
        {"gap below 0", 1, "09 0a 00 00 01 02 07 00", PL_WIRE_RANGE},
        {"gap to 0", 1, "09 0a 00 00 01 02 06 00", 8},
        {"second range below 0", 1, "09 0a 00 00 01 02 06 01", PL_WIRE_RANGE},
        {"range after packet 1", 1, "09 01 00 00 01 00 00 00", PL_WIRE_RANGE},
        {"range after packet 0", 1, "09 00 00 00 01 00 00 00", PL_WIRE_RANGE},
        {"truncated in ranges", 1, "09 0a 00 00 02 02 00 00", PL_WIRE_TRUNCATED},
        {"in a sender packet", 0, "09 05 00 00 00 00", PL_WIRE_WRONG_DIRECTION},
    };
    RUN_BAD(t);
}

static void stored_malformed(void) {
    static const bad_case t[] = {
        {"credit 0", 1, "0a 00 00", PL_WIRE_RANGE},
        {"credit 65537", 1, "0a 00 80010001", PL_WIRE_RANGE},
        {"credit 65536", 1, "0a 00 80010000", 6},
        {"credit 2^62-1", 1, "0a 00 ffffffffffffffff", PL_WIRE_RANGE},
        {"stored 2^62-1", 1, "0a ffffffffffffffff 01", 10},
        {"in a sender packet", 0, "0a 00 01", PL_WIRE_WRONG_DIRECTION},
    };
    RUN_BAD(t);
}

static void lost_malformed(void) {
    static const bad_case t[] = {
        {"epoch 3 bytes", 1, "0b 000001", PL_WIRE_TRUNCATED},
        {"tag 7 bytes", 1, "0b 00000001 000000ff 01 a0a1a2a3a4a5a6", PL_WIRE_TRUNCATED},
        {"field 0 (epoch 0 is always known)", 1, "0b 00000000 000000ff 01 a0a1a2a3a4a5a6a7", PL_WIRE_RANGE},
        {"field 16", 1, "0b 00000010 000000ff 01 a0a1a2a3a4a5a6a7", PL_WIRE_RANGE},
        {"field 2^32-1", 1, "0b ffffffff 000000ff 01 a0a1a2a3a4a5a6a7", PL_WIRE_RANGE},
        {"number length 0", 1, "0b 00000001 00000000 00 a0a1a2a3a4a5a6a7", PL_WIRE_RANGE},
        {"number length 5", 1, "0b 00000001 00000000 05 a0a1a2a3a4a5a6a7", PL_WIRE_RANGE},
        {"number 0x100 in 1 byte", 1, "0b 00000001 00000100 01 a0a1a2a3a4a5a6a7", PL_WIRE_RANGE},
        {"number 0x10000 in 2 bytes", 1, "0b 00000001 00010000 02 a0a1a2a3a4a5a6a7", PL_WIRE_RANGE},
        {"field 15, number 2^32-1 in 4 bytes", 1, "0b 0000000f ffffffff 04 a0a1a2a3a4a5a6a7", 18},
        {"in a sender packet", 0, "0b 00000001 000000ff 01 a0a1a2a3a4a5a6a7", PL_WIRE_WRONG_DIRECTION},
    };
    RUN_BAD(t);
}

static void refused_malformed(void) {
    static const bad_case t[] = {
        {"reason 0", 1, "0c 00", PL_WIRE_RANGE},
        {"reason 6", 1, "0c 06", PL_WIRE_RANGE},
        {"reason 255", 1, "0c ff", PL_WIRE_RANGE},
        {"reason 3", 1, "0c 03", 2},
        {"reason 4 (cannot store now)", 1, "0c 04", 2},
        {"reason 5 (cut off)", 1, "0c 05", 2},
        {"in a sender packet", 0, "0c 01", PL_WIRE_WRONG_DIRECTION},
    };
    RUN_BAD(t);
}

static void frames_unknown_type(void) {
    for (unsigned t = PL_FRAME_TYPES; t <= 0xff; t++) {
        uint8_t p[2] = {(uint8_t)t, 0};
        pl_frame f;
        CHECK(pl_frame_decode(&f, p, sizeof p, 0) == PL_WIRE_UNKNOWN_FRAME);
        CHECK(pl_frame_decode(&f, p, sizeof p, 1) == PL_WIRE_UNKNOWN_FRAME);
        f.type = (uint8_t)t;
        CHECK(pl_frame_valid(&f) == PL_WIRE_UNKNOWN_FRAME);
    }
}

static void frames_direction(void) {
    unsigned sender = 0, reply = 0;
    for (unsigned t = 0; t < PL_FRAME_TYPES; t++) {
        uint8_t p[1] = {(uint8_t)t};
        pl_frame f;
        int s = pl_frame_decode(&f, p, 1, 0), r = pl_frame_decode(&f, p, 1, 1);
        if (s != PL_WIRE_WRONG_DIRECTION) sender++;
        if (r != PL_WIRE_WRONG_DIRECTION) reply++;
        CHECK(t == PL_FRAME_PADDING || (s == PL_WIRE_WRONG_DIRECTION) != (r == PL_WIRE_WRONG_DIRECTION));
    }
    CHECK_EQ_U(sender, 7); /* PADDING STREAM RECORDS RECORD OFFER RESPONSE PING */
    CHECK_EQ_U(reply, 7);  /* PADDING CHALLENGE ACCEPT ACK STORED LOST REFUSED */
}

/* The rules on values, applied to structs directly (the encoder asserts them; the decoder
 * applies them after reading, behind its own checks on lengths and underflow). */
static void frame_valid_rules(void) {
    pl_frame f;
    make_padding(&f, 0); f.padding.len = 0; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    make_stream(&f, 0); f.stream.source = NULL; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    make_stream(&f, 0); f.stream.input_len = 0; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    make_stream(&f, 0); f.stream.input_len = PL_NAME_MOST + 1; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    make_stream(&f, 2); f.stream.base_offset = PL_VARINT_LIMIT; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    make_stream(&f, 1); f.stream.base_record = f.stream.base_offset + 1; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    for (int v = 0; v < 2; v++) {
        uint8_t type = v ? PL_FRAME_RECORD : PL_FRAME_RECORDS;
        pl_frame_data *d = v ? &f.record : &f.records;
        make_data(&f, type, 1); d->len = 0; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
        make_data(&f, type, 1); d->len = PL_FRAGMENT_MOST + 1; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
        make_data(&f, type, 1); d->data = NULL; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    }
    make_offer(&f, 0); f.offer.epoch = 0; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    make_accept(&f, 0); f.accept.epoch = 0; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    make_ack(&f, 1); f.ack.flags = 0x02; CHECK(pl_frame_valid(&f) == PL_WIRE_RESERVED);
    make_ack(&f, 1); f.ack.range_count = PL_ACK_RANGES_MOST + 1; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    make_ack(&f, 1); f.ack.ack_delay_us = PL_VARINT_LIMIT; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    make_ack(&f, 1); f.ack.ranges[0].smallest = f.ack.ranges[0].largest + 1; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    make_ack(&f, 1); f.ack.ranges[0].largest = PL_VARINT_LIMIT; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    make_ack(&f, 1); /* adjacent ranges would have been one range: a gap is needed */
    f.ack.ranges[1].largest = f.ack.ranges[0].smallest - 1; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    f.ack.ranges[1].largest = f.ack.ranges[0].smallest - 2; CHECK(pl_frame_valid(&f) == 0);
    make_ack(&f, 1); f.ack.ranges[1].smallest = f.ack.ranges[1].largest + 1; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    make_ack_ranges(&f, 1, 2, 0, 0); CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE); /* second range below 0 */
    make_stored(&f, 0); f.stored.credit = 0; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    make_stored(&f, 0); f.stored.credit = PL_CREDIT_MOST + 1; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    make_stored(&f, 0); f.stored.stored = PL_VARINT_LIMIT; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    make_refused(&f, 0); f.refused.reason = 0; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    make_refused(&f, 0); f.refused.reason = PL_REFUSED_MOST + 1; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    make_lost(&f, 0); f.lost.epoch = 0; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
    make_lost(&f, 0); f.lost.epoch = PL_EPOCH_FIELD_CYCLE + 1; CHECK(pl_frame_valid(&f) == PL_WIRE_RANGE);
}

/* ---- ACK ranges ---- */

static void ack_range_counts(void) {
    static const unsigned counts[] = {0, 1, PL_ACK_RANGES_MOST};
    for (size_t i = 0; i < 3; i++) {
        pl_frame f;
        make_ack_ranges(&f, 100000, counts[i] + 1, 3, 1);
        roundtrip(&f);
        truncation(&f);
    }
    /* 33: valid bytes in every other way, with 34 pairs to read. */
    uint8_t p[256];
    size_t n = 0;
    p[n++] = PL_FRAME_ACK;
    n += pl_varint_put(p + n, sizeof p - n, 100000);
    p[n++] = 0; /* delay */
    p[n++] = 0; /* flags */
    size_t count_at = n;
    p[n++] = PL_ACK_RANGES_MOST + 1;
    p[n++] = 0; /* first range */
    for (unsigned i = 0; i < PL_ACK_RANGES_MOST + 1; i++) p[n++] = 0, p[n++] = 0;
    pl_frame f;
    CHECK(pl_frame_decode(&f, p, n, 1) == PL_WIRE_RANGE);
    p[count_at] = PL_ACK_RANGES_MOST; /* the same with 32 decodes, leaving one pair behind */
    CHECK(pl_frame_decode(&f, p, n, 1) == (int)(n - 2));
    CHECK_EQ_U(f.ack.range_count, PL_ACK_RANGES_MOST);
    CHECK_EQ_U(f.ack.ranges[PL_ACK_RANGES_MOST].largest, 100000 - 2u * PL_ACK_RANGES_MOST);
}

static void ack_encode_fit(void) {
    pl_frame f, d;
    make_ack_ranges(&f, 1u << 29, PL_ACK_PAIRS_MOST, 100, 20000); /* gaps take 4 B, lengths 2 B */
    size_t full = pl_frame_size(&f);
    uint8_t buf[1024];
    unsigned kept = 99;
    CHECK_EQ_U(pl_ack_encode_fit(buf, sizeof buf, &f, &kept), full);
    CHECK_EQ_U(kept, PL_ACK_RANGES_MOST);
    size_t head = 1 + 4 + 2 + 1 + 1 + 2; /* type, largest, delay, flags, count, first range */
    CHECK_EQ_U(pl_ack_encode_fit(buf, head - 1, &f, &kept), 0);
    for (size_t cap = head; cap <= full; cap++) {
        size_t used = pl_ack_encode_fit(buf, cap, &f, &kept);
        size_t want_pairs = (cap - head) / 6; /* each older range: 4 B gap + 2 B length */
        CHECK_EQ_U(kept, want_pairs);
        CHECK_EQ_U(used, head + 6 * want_pairs);
        CHECK(pl_frame_decode(&d, buf, used, 1) == (int)used);
        CHECK_EQ_U(d.ack.range_count, kept);
        for (unsigned i = 0; i <= kept; i++) /* the newest ranges are the ones kept */
            CHECK(d.ack.ranges[i].largest == f.ack.ranges[i].largest &&
                  d.ack.ranges[i].smallest == f.ack.ranges[i].smallest);
    }
}

/* ---- Varints and the record prefix ---- */

static void varint_edges(void) {
    static const struct { uint64_t v; size_t len; } t[] = {
        {0, 1}, {63, 1}, {64, 2}, {16383, 2}, {16384, 4}, {(UINT64_C(1) << 30) - 1, 4},
        {UINT64_C(1) << 30, 8}, {PL_VARINT_MOST, 8},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        uint8_t buf[8];
        uint64_t v = 0;
        CHECK_EQ_U(pl_varint_size(t[i].v), t[i].len);
        CHECK_EQ_U(pl_varint_put(buf, t[i].len - 1, t[i].v), 0);
        CHECK_EQ_U(pl_varint_put(buf, t[i].len, t[i].v), t[i].len);
        uint8_t *q = dup_exact(buf, t[i].len);
        CHECK(pl_varint_get(q, t[i].len, &v) == (int)t[i].len);
        CHECK_EQ_U(v, t[i].v);
        for (size_t k = 0; k < t[i].len; k++) CHECK(pl_varint_get(q, k, &v) == PL_WIRE_TRUNCATED);
        free(q);
    }
    uint8_t buf[16];
    CHECK_EQ_U(pl_varint_size(PL_VARINT_LIMIT), 0); /* 2^62 has no encoding */
    CHECK_EQ_U(pl_varint_put(buf, sizeof buf, PL_VARINT_LIMIT), 0);
    CHECK_EQ_U(pl_varint_put(buf, sizeof buf, UINT64_MAX), 0);
}

static void varint_rfc_examples(void) {
    /* RFC 9000 §A.1 sample encodings, including a non-shortest one. */
    static const struct { const char *hex; uint64_t v; } t[] = {
        {"c2197c5eff14e88c", UINT64_C(151288809941952652)}, {"9d7f3e7d", 494878333}, {"7bbd", 15293},
        {"25", 37}, {"4025", 37},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        uint8_t buf[8], again[8];
        size_t n = unhex(t[i].hex, buf, sizeof buf);
        uint64_t v = 0;
        CHECK(pl_varint_get(buf, n, &v) == (int)n);
        CHECK_EQ_U(v, t[i].v);
        size_t m = pl_varint_put(again, sizeof again, v);
        CHECK(m <= n);
        if (m == n) CHECK_MEM(again, buf, n);
    }
}

static void record_prefix(void) {
    static const struct { uint64_t len; size_t size; } t[] = {
        {0, 1}, {63, 1}, {64, 2}, {1024, 2}, {16383, 2}, {16384, 4}, {PL_RECORD_MOST, 4},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        uint8_t buf[8];
        uint64_t len = 99;
        CHECK_EQ_U(pl_record_prefix_size(t[i].len), t[i].size);
        CHECK_EQ_U(pl_record_prefix_put(buf, t[i].size - 1, t[i].len), 0);
        CHECK_EQ_U(pl_record_prefix_put(buf, sizeof buf, t[i].len), t[i].size);
        CHECK(pl_record_prefix_get(buf, t[i].size, &len) == (int)t[i].size);
        CHECK_EQ_U(len, t[i].len);
        CHECK(pl_record_prefix_get(buf, t[i].size - 1, &len) == PL_WIRE_TRUNCATED);
    }
    uint8_t buf[8];
    uint64_t len = 0;
    CHECK_EQ_U(pl_record_prefix_size(PL_RECORD_MOST + 1u), 0);
    CHECK_EQ_U(pl_record_prefix_put(buf, sizeof buf, PL_RECORD_MOST + 1u), 0);
    CHECK_EQ_U(pl_varint_put(buf, sizeof buf, PL_RECORD_MOST + 1u), 4);
    CHECK(pl_record_prefix_get(buf, 4, &len) == PL_WIRE_RANGE);
    CHECK_EQ_U(pl_varint_put(buf, sizeof buf, PL_VARINT_MOST), 8);
    CHECK(pl_record_prefix_get(buf, 8, &len) == PL_WIRE_RANGE);
}

/* ---- Header ---- */

static void header_roundtrip_dir(unsigned reply) {
    for (unsigned pn_len = 1; pn_len <= PL_PN_LEN_MOST; pn_len++) {
        for (unsigned e = 0; e <= PL_FLAG_EPOCH_MASK; e += 5) {
            pl_header h = {.reply = (uint8_t)reply, .pn_len = (uint8_t)pn_len, .epoch_field = (uint8_t)e,
                           .key_id = reply ? 0 : 0xdeadbeefu, .run = UINT64_C(0x0102030405060708),
                           .reply_run = reply ? UINT64_C(0xf0e0d0c0b0a09080) : 0,
                           .pn_truncated = (UINT64_C(1) << (8 * pn_len)) - 1 - e};
            uint8_t buf[PL_HEADER_MOST], again[PL_HEADER_MOST];
            size_t size = pl_header_size(reply, pn_len);
            CHECK_EQ_U(size, (reply ? 18u : 14u) + pn_len);
            CHECK_EQ_U(pl_header_encode(buf, size - 1, &h), 0);
            CHECK_EQ_U(pl_header_encode(buf, sizeof buf, &h), size);
            uint8_t *q = dup_exact(buf, size);
            pl_header d;
            memset(&d, 0xaa, sizeof d);
            CHECK(pl_header_decode(&d, q, size) == (int)size);
            CHECK(d.reply == h.reply && d.pn_len == h.pn_len && d.epoch_field == h.epoch_field &&
                  d.key_id == h.key_id && d.run == h.run && d.reply_run == h.reply_run &&
                  d.pn_truncated == h.pn_truncated);
            CHECK_EQ_U(pl_header_encode(again, sizeof again, &d), size);
            CHECK_MEM(buf, again, size);
            for (size_t k = 0; k < size; k++) { /* every strict prefix */
                uint8_t *pre = dup_exact(buf, k);
                CHECK(pl_header_decode(&d, pre, k) == PL_WIRE_TRUNCATED);
                free(pre);
            }
            free(q);
        }
    }
}
static void header_sender_roundtrip(void) { header_roundtrip_dir(0); }
static void header_reply_roundtrip(void) { header_roundtrip_dir(1); }

static void header_layout_bytes(void) {
    pl_header s = {.reply = 0, .pn_len = 2, .epoch_field = 3, .key_id = 0xdeadbeefu,
                   .run = UINT64_C(0x0102030405060708), .pn_truncated = 0xabcd};
    pl_header r = {.reply = 1, .pn_len = 4, .epoch_field = 15, .run = UINT64_C(0x0102030405060708),
                   .reply_run = UINT64_C(0x1112131415161718), .pn_truncated = 0x01020304};
    uint8_t want[32], got[32];
    size_t n = unhex("01 13 deadbeef 0102030405060708 abcd", want, sizeof want);
    CHECK_EQ_U(n, 16);
    CHECK_EQ_U(pl_header_encode(got, sizeof got, &s), n);
    CHECK_MEM(got, want, n);
    n = unhex("01 bf 0102030405060708 1112131415161718 01020304", want, sizeof want);
    CHECK_EQ_U(n, 22);
    CHECK_EQ_U(pl_header_encode(got, sizeof got, &r), n);
    CHECK_MEM(got, want, n);
}

static void header_bad_version(void) {
    static const uint8_t versions[] = {0x00, 0x02, 0x80, 0xff};
    for (size_t i = 0; i < sizeof versions; i++) {
        uint8_t p[32] = {versions[i], 0x10};
        pl_header h;
        uint8_t *q = dup_exact(p, 1);
        CHECK(pl_header_decode(&h, q, 1) == PL_WIRE_BAD_VERSION);
        free(q);
        CHECK(pl_header_decode(&h, p, sizeof p) == PL_WIRE_BAD_VERSION);
    }
}

static void header_reserved_bit(void) {
    uint8_t p[32] = {PL_VERSION, PL_FLAG_RESERVED};
    pl_header h;
    CHECK(pl_header_decode(&h, p, sizeof p) == PL_WIRE_RESERVED);
    p[1] = PL_FLAG_RESERVED | PL_FLAG_REPLY | 0x3f;
    CHECK(pl_header_decode(&h, p, sizeof p) == PL_WIRE_RESERVED);
    p[1] = PL_FLAG_REPLY | 0x3f; /* every other bit set is fine */
    CHECK(pl_header_decode(&h, p, sizeof p) == 22);
}

static void packet_sizes(void) {
    uint8_t p[PL_DATAGRAM_MOST + 1];
    memset(p, 0, sizeof p);
    p[0] = PL_VERSION;
    p[1] = 0x00; /* sender, 1 B pn: 15 B header */
    pl_header h;
    CHECK(pl_packet_decode(&h, p, PL_PACKET_LEAST) == 15);
    CHECK(pl_packet_decode(&h, p, PL_PACKET_LEAST - 1) == PL_WIRE_TRUNCATED);
    CHECK(pl_packet_decode(&h, p, PL_DATAGRAM_MOST) == 15);
    CHECK(pl_packet_decode(&h, p, PL_DATAGRAM_MOST + 1) == PL_WIRE_TOO_LONG);
    p[1] = PL_FLAG_REPLY | 0x30; /* reply, 4 B pn: 22 B header */
    CHECK(pl_packet_decode(&h, p, 22 + 17) == 22);
    CHECK(pl_packet_decode(&h, p, 22 + 16) == PL_WIRE_TRUNCATED);
}

/* ---- Packet numbers, epochs, offsets ---- */

static void pn_decode_rfc(void) {
    /* RFC 9000 App. A.3 example. */
    CHECK_EQ_U(pl_pn_decode(0xa82f30ea, 0x9b32, 2), 0xa82f9b32);
    /* Nothing received yet: packet 0 is expected; low values come back as themselves. */
    CHECK_EQ_U(pl_pn_decode(PL_PN_NONE, 0, 1), 0);
    CHECK_EQ_U(pl_pn_decode(PL_PN_NONE, 0xff, 1), 0xff);
    CHECK_EQ_U(pl_pn_decode(PL_PN_NONE, 0x1234, 2), 0x1234);
}

static void pn_decode_edges(void) {
    /* The window is (expected - 128, expected + 128] around expected = largest + 1. */
    CHECK_EQ_U(pl_pn_decode(255, 0x00, 1), 256);
    CHECK_EQ_U(pl_pn_decode(0x1ff, 0x80, 1), 0x280); /* expected + half: still ahead */
    CHECK_EQ_U(pl_pn_decode(0x1ff, 0x81, 1), 0x181); /* one more: behind */
    CHECK_EQ_U(pl_pn_decode(0x1ff, 0x82, 1), 0x182);
    CHECK_EQ_U(pl_pn_decode(0x27f, 0x00, 1), 0x300);
    CHECK_EQ_U(pl_pn_decode(0x10, 0xf0, 1), 0xf0);  /* cannot go below 0 */
    CHECK_EQ_U(pl_pn_decode(0xfffe, 0x0001, 2), 0x10001);
    CHECK_EQ_U(pl_pn_decode(0xffffffff, 0, 4), UINT64_C(0x100000000));
    CHECK_EQ_U(pl_pn_decode(UINT64_C(0x17fffffff), 0xffffffff, 4), UINT64_C(0x1ffffffff));
    CHECK_EQ_U(pl_pn_decode(UINT64_C(0x17fffffff), 0x1, 4), UINT64_C(0x100000001));
    CHECK_EQ_U(pl_pn_decode(UINT64_C(0x17fffffff), 0x0, 4), UINT64_C(0x200000000)); /* expected - half: ahead */
    /* The top of the space: never a number of 2^62 or more. */
    CHECK_EQ_U(pl_pn_decode(PL_VARINT_MOST - 1, 0xff, 1), PL_VARINT_MOST);
    CHECK(pl_pn_decode(PL_VARINT_MOST, 0x00, 1) < PL_VARINT_LIMIT);
    CHECK(pl_pn_decode(PL_VARINT_MOST, 0x7f, 1) < PL_VARINT_LIMIT);
}

static void pn_len_for_rfc(void) {
    /* RFC 9000 App. A.2 examples. */
    CHECK_EQ_U(pl_pn_len_for(0xac5c02, 0xabe8b3), 2);
    CHECK_EQ_U(pl_pn_len_for(0xace8fe, 0xabe8b3), 3);
    CHECK_EQ_U(pl_pn_len_for(0, PL_PN_NONE), 1);
    CHECK_EQ_U(pl_pn_len_for(127, PL_PN_NONE), 1);
    CHECK_EQ_U(pl_pn_len_for(128, PL_PN_NONE), 2);
    CHECK_EQ_U(pl_pn_len_for(1000, 999), 1);
    CHECK_EQ_U(pl_pn_len_for(1000 + 128, 1000), 1);
    CHECK_EQ_U(pl_pn_len_for(1000 + 129, 1000), 2);
    CHECK_EQ_U(pl_pn_len_for(1000 + 32768, 1000), 2);
    CHECK_EQ_U(pl_pn_len_for(1000 + 32769, 1000), 3);
    CHECK_EQ_U(pl_pn_len_for(UINT64_C(1) << 40, 0), 4);
}

static uint64_t rng_state;
static uint64_t rng(void) { /* xorshift64*: fixed seeds, same sequence everywhere */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * UINT64_C(2685821657736338717);
}

/* The sender picks a length from what was acknowledged; the receiver, whose largest is
 * anywhere from largest_acked to pn - 1, recovers pn. */
static void pn_encode_decode_property(void) {
    rng_state = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < 100000; i++) {
        uint64_t acked = rng() % (UINT64_C(1) << 40);
        uint64_t ahead = 1 + rng() % ((i & 3) == 0 ? (UINT64_C(1) << 31) - 1 : (i & 3) == 1 ? 40000 : 300);
        uint64_t pn = acked + ahead;
        unsigned len = pl_pn_len_for(pn, acked);
        uint64_t trunc = pl_pn_truncate(pn, len);
        uint64_t seen = acked + rng() % ahead; /* receiver's largest */
        CHECK_EQ_U(pl_pn_decode(seen, trunc, len), pn);
        CHECK_EQ_U(pl_pn_decode(acked, trunc, len), pn);
        CHECK_EQ_U(pl_pn_decode(pn - 1, trunc, len), pn);
    }
    for (uint64_t pn = 0; pn < 70000; pn++) { /* nothing acknowledged yet */
        unsigned len = pl_pn_len_for(pn, PL_PN_NONE);
        CHECK_EQ_U(pl_pn_decode(PL_PN_NONE, pl_pn_truncate(pn, len), len), pn);
    }
}

static void epoch_field_map(void) {
    static const struct { uint32_t epoch; uint8_t field; } t[] = {
        {0, 0}, {1, 1}, {2, 2}, {15, 15}, {16, 1}, {30, 15}, {31, 1}, {UINT32_MAX, 1 + (UINT32_MAX - 1u) % 15},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        CHECK_EQ_U(pl_epoch_field(t[i].epoch), t[i].field);
        CHECK_EQ_U(pl_epoch_from_field(t[i].field, t[i].epoch), t[i].epoch);
    }
}

static void epoch_recovery(void) {
    /* Any epoch within 7 of what the reader expects comes back exactly. */
    for (uint32_t e = 0; e < 400; e++)
        for (uint32_t x = e > 7 ? e - 7 : 0; x <= e + 7; x++) CHECK_EQ_U(pl_epoch_from_field(pl_epoch_field(e), x), e);
    for (uint64_t e = UINT32_MAX - 40u; e <= UINT32_MAX; e++) /* and at the top of the range */
        for (uint64_t x = e - 7; x <= e + 7 && x <= UINT32_MAX; x++)
            CHECK_EQ_U(pl_epoch_from_field(pl_epoch_field((uint32_t)e), (uint32_t)x), e);
    /* A nonzero field is never epoch 0, even when the reader expects 0. */
    for (uint8_t f = 1; f <= 15; f++) {
        CHECK_EQ_U(pl_epoch_from_field(f, 0), f);
        CHECK(pl_epoch_from_field(f, UINT32_MAX) != 0);
    }
    CHECK_EQ_U(pl_epoch_from_field(0, 12345), 0);
    CHECK_EQ_U(pl_epoch_from_field(1, 8), 1);  /* 7 away from 1, 8 away from 16 */
    CHECK_EQ_U(pl_epoch_from_field(1, 9), 16); /* 8 away from 1, 7 away from 16 */
}

static void offset_recovery(void) {
    CHECK_EQ_U(pl_offset_decode(0, 5), 5);
    CHECK_EQ_U(pl_offset_decode(0, 0xfffffff0u), 0xfffffff0u); /* never below 0 */
    CHECK_EQ_U(pl_offset_decode((UINT64_C(1) << 32) + 10, 0xfffffff0u), 0xfffffff0u);
    CHECK_EQ_U(pl_offset_decode((UINT64_C(1) << 32) - 10, 0x10u), (UINT64_C(1) << 32) + 0x10);
    rng_state = 12345;
    for (int i = 0; i < 100000; i++) {
        uint64_t delivered = rng() % (UINT64_C(1) << 45);
        uint64_t span = (UINT64_C(1) << 31) - 1;
        uint64_t off = delivered + rng() % span;
        if ((i & 1) && delivered >= span) off = delivered - rng() % span;
        CHECK_EQ_U(pl_offset_decode(delivered, (uint32_t)off), off);
    }
}

/* ---- Payloads ---- */

static void payload_check_cases(void) {
    static const struct { const char *name; int dir; const char *hex; int want; } t[] = {
        {"empty", 0, "", PL_WIRE_EMPTY},
        {"ping", 0, "06", 1},
        {"ping then padding run", 0, "06 00 00 00", 2},
        {"stream, record, records", 0, "01 00 00" SHAPE8 "01 61 01 62  03 00000000 0001 61  02 00000001 626364", 3},
        {"records swallows what follows", 0, "02 00000000 06 06 06", 1},
        {"record then unknown", 0, "03 00000000 0001 61  0d", PL_WIRE_UNKNOWN_FRAME},
        {"ping then ack", 0, "06 09 00 00 00 00 00", PL_WIRE_WRONG_DIRECTION},
        {"ack stored refused", 1, "09 05 00 00 00 00  0a 00 01  0c 01", 3},
        {"challenge then truncated accept", 1, "07 000102030405060708090a0b0c0d0e0f 08 00000001", PL_WIRE_TRUNCATED},
        {"padding then bad refused", 1, "00 0c 09", PL_WIRE_RANGE},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        uint8_t buf[256];
        size_t n = unhex(t[i].hex, buf, sizeof buf);
        uint8_t *q = dup_exact(buf, n);
        int r = pl_payload_check(q, n, t[i].dir);
        free(q);
        if (r != t[i].want) {
            fprintf(stderr, "  case %s: got %d (%s) want %d\n", t[i].name, r, pl_wire_reason_name(r), t[i].want);
            CHECK(r == t[i].want);
        }
    }
    uint8_t big[PL_PAYLOAD_MOST + 1];
    memset(big, 0, sizeof big);
    CHECK(pl_payload_check(big, PL_PAYLOAD_MOST, 1) == 1);
    CHECK(pl_payload_check(big, sizeof big, 1) == PL_WIRE_TOO_LONG);
}

static void reason_names(void) {
    for (int r = -1; r >= -PL_WIRE_REASONS; r--) {
        const char *name = pl_wire_reason_name(r);
        CHECK(name != NULL && strcmp(name, "unknown_reason") != 0);
        for (int s = -1; s > r; s--) CHECK(strcmp(name, pl_wire_reason_name(s)) != 0);
    }
    CHECK(strcmp(pl_wire_reason_name(-PL_WIRE_REASONS - 1), "unknown_reason") == 0);
}

/* The framing figure: a full packet of back-to-back 1 KiB records (stream known, 2 B pn)
 * spends at most 41 B on everything that is not record bytes, at every phase of the
 * stream; and the bytes really are a valid header + RECORDS payload. */
static void framing_figure(void) {
    const size_t unit = PL_FRAMING_PREFIX + PL_FRAMING_RECORD; /* 1,026 B per record in the stream */
    const size_t header = pl_header_size(0, PL_FRAMING_PN_LEN);
    const size_t data = PL_DATAGRAM_MOST - header - PL_TAG_BYTES - PL_FRAME_RECORDS_HEAD;
    CHECK_EQ_U(header, 16);
    CHECK_EQ_U(data, 1415);
    size_t worst = 0;
    for (size_t phase = 0; phase < unit; phase++) {
        size_t prefix_bytes = 0; /* stream bytes in [phase, phase + data) that belong to a prefix */
        for (size_t at = phase; at < phase + data; at++) prefix_bytes += (at % unit) < PL_FRAMING_PREFIX;
        size_t overhead = PL_DATAGRAM_MOST - (data - prefix_bytes);
        if (overhead > worst) worst = overhead;
    }
    CHECK_EQ_U(worst, PL_FRAMING_BYTES);
    CHECK(worst <= PL_FRAMING_GOAL);

    uint8_t pkt[PL_DATAGRAM_MOST], stream[2 * 1026 + 1500];
    size_t s = 0;
    for (int r = 0; r < 3; r++) {
        s += pl_record_prefix_put(stream + s, sizeof stream - s, PL_FRAMING_RECORD);
        memset(stream + s, 'a' + r, PL_FRAMING_RECORD);
        s += PL_FRAMING_RECORD;
    }
    pl_header h = {.reply = 0, .pn_len = PL_FRAMING_PN_LEN, .epoch_field = 1, .key_id = 1, .run = 2, .pn_truncated = 3};
    pl_frame f = {.type = PL_FRAME_RECORDS};
    f.records.offset32 = 0;
    f.records.data = stream;
    f.records.len = data;
    size_t n = pl_header_encode(pkt, sizeof pkt, &h);
    n += pl_frame_encode(pkt + n, sizeof pkt - n - PL_TAG_BYTES, &f);
    CHECK_EQ_U(n + PL_TAG_BYTES, PL_DATAGRAM_MOST);
    memset(pkt + n, 0xee, PL_TAG_BYTES); /* where the tag goes */
    pl_header d;
    CHECK(pl_packet_decode(&d, pkt, sizeof pkt) == 16);
    CHECK(pl_payload_check(pkt + 16, sizeof pkt - 16 - PL_TAG_BYTES, 0) == 1);
    fprintf(stderr, "  framing per full packet of 1 KiB records: %zu B (goal %u, seed 112)\n", worst,
            PL_FRAMING_GOAL);
}

/* Stream positions in [0, x) that hold a record's 2 B prefix (1 KiB records back to back). */
static size_t prefix_positions(size_t x) {
    const size_t unit = PL_FRAMING_PREFIX + PL_FRAMING_RECORD;
    return x / unit * PL_FRAMING_PREFIX + (x % unit < PL_FRAMING_PREFIX ? x % unit : PL_FRAMING_PREFIX);
}

/* The framing goal holds at every datagram size a sender may use (spec/protocol.md §9), from
 * the base to the largest, at every phase of the stream. */
static void framing_figure_every_size(void) {
    const size_t unit = PL_FRAMING_PREFIX + PL_FRAMING_RECORD;
    const size_t fixed = pl_header_size(0, PL_FRAMING_PN_LEN) + PL_TAG_BYTES + PL_FRAME_RECORDS_HEAD;
    size_t worst_all = 0, worst_base = 0;
    for (size_t size = PL_DATAGRAM_BASE; size <= PL_DATAGRAM_MOST; size++) {
        size_t data = size - fixed, worst = 0;
        for (size_t phase = 0; phase < unit; phase++) {
            size_t overhead = fixed + prefix_positions(phase + data) - prefix_positions(phase);
            if (overhead > worst) worst = overhead;
        }
        CHECK(worst <= PL_FRAMING_GOAL);
        if (worst > worst_all) worst_all = worst;
        if (size == PL_DATAGRAM_BASE) worst_base = worst;
    }
    CHECK_EQ_U(worst_all, PL_FRAMING_BYTES);
    CHECK_EQ_U(worst_base, PL_FRAMING_BYTES);  /* two record starts fit even the base size */
    fprintf(stderr, "  framing per full packet, %u..%u B: at most %zu B (goal %u)\n", PL_DATAGRAM_BASE,
            PL_DATAGRAM_MOST, worst_all, PL_FRAMING_GOAL);
}

/* ---- Fuzz: fixed seed, random and type-biased inputs ---- */

static void fuzz_one_payload(const uint8_t *p, size_t n, int dir) {
    int frames = pl_payload_check(p, n, dir);
    CHECK(frames < 0 || (frames >= 1 && (size_t)frames <= n));
    size_t at = 0;
    int walked = 0, failed = 0;
    while (at < n) {
        pl_frame f, g;
        int used = pl_frame_decode(&f, p + at, n - at, dir);
        if (used < 0) { /* the walk fails where pl_payload_check failed, for the same reason */
            CHECK(used >= -PL_WIRE_REASONS);
            CHECK(used == frames || frames == PL_WIRE_TOO_LONG);
            failed = 1;
            break;
        }
        CHECK(used >= 1 && (size_t)used <= n - at);
        CHECK(pl_frame_valid(&f) == 0);
        /* Re-encoding gives the shortest form: never longer, and it reads back the same. */
        uint8_t buf[2048];
        size_t size = pl_frame_size(&f);
        CHECK(size <= (size_t)used);
        CHECK_EQ_U(pl_frame_encode(buf, sizeof buf, &f), size);
        CHECK(pl_frame_decode(&g, buf, size, dir) == (int)size);
        CHECK(frame_equal(&f, &g));
        at += (size_t)used;
        walked++;
    }
    if (frames >= 0) CHECK(at == n && walked == frames && !failed);
    else if (frames == PL_WIRE_EMPTY) CHECK(n == 0);
    else if (frames != PL_WIRE_TOO_LONG) CHECK(failed);
}

static void fuzz_random(void) {
    rng_state = 0x5eed5eed5eed5eedu;
    uint8_t buf[1600];
    for (int i = 0; i < 100000; i++) {
        size_t n = (i % 16 == 0) ? rng() % sizeof buf : rng() % 48;
        for (size_t k = 0; k < n; k++) {
            uint64_t x = rng();
            /* Small values and type codes reach deeper than uniform bytes. */
            buf[k] = (x & 3) == 0 ? (uint8_t)(x >> 8) : (x & 3) == 1 ? (uint8_t)((x >> 8) % PL_FRAME_TYPES)
                                                                     : (uint8_t)((x >> 8) & 0x07);
        }
        if (n >= 2 && (i & 1)) buf[0] = PL_VERSION, buf[1] &= (uint8_t)~PL_FLAG_RESERVED;
        uint8_t *q = dup_exact(buf, n);
        fuzz_one_payload(q, n, 0);
        fuzz_one_payload(q, n, 1);
        pl_header h;
        int hl = pl_header_decode(&h, q, n);
        CHECK(hl < 0 ? hl >= -PL_WIRE_REASONS : (size_t)hl <= n);
        if (hl > 0) { /* a header has one encoding only */
            uint8_t again[PL_HEADER_MOST];
            CHECK_EQ_U(pl_header_encode(again, sizeof again, &h), hl);
            CHECK_MEM(again, q, (size_t)hl);
        }
        int pl = pl_packet_decode(&h, q, n);
        CHECK(pl < 0 || (pl == hl && (size_t)pl + PL_TAG_BYTES < n));
        free(q);
    }
}

/* At most PL_FRAMES_MOST frames per packet; a PADDING run counts once. */
static void payload_frame_count_limit(void) {
    uint8_t p[64];
    pl_frame frames[PL_FRAMES_MOST];
    memset(p, PL_FRAME_PING, sizeof p);
    CHECK(pl_payload_decode(frames, PL_FRAMES_MOST, p, PL_FRAMES_MOST, 0) == (int)PL_FRAMES_MOST);
    CHECK(pl_payload_check(p, PL_FRAMES_MOST, 0) == (int)PL_FRAMES_MOST);
    CHECK(pl_payload_decode(frames, PL_FRAMES_MOST, p, PL_FRAMES_MOST + 1, 0) == PL_WIRE_TOO_MANY);
    CHECK(pl_payload_check(p, PL_FRAMES_MOST + 1, 0) == PL_WIRE_TOO_MANY);
    memset(p, PL_FRAME_PADDING, sizeof p);                 /* 64 zero bytes: one frame */
    CHECK(pl_payload_decode(frames, PL_FRAMES_MOST, p, sizeof p, 0) == 1);
    CHECK(strcmp(pl_wire_reason_name(PL_WIRE_TOO_MANY), "too_many_frames") == 0);
}

TEST_MAIN(TEST_CASE(payload_frame_count_limit), TEST_CASE(varint_edges), TEST_CASE(varint_rfc_examples), TEST_CASE(record_prefix),
          TEST_CASE(header_sender_roundtrip), TEST_CASE(header_reply_roundtrip), TEST_CASE(header_layout_bytes),
          TEST_CASE(header_bad_version), TEST_CASE(header_reserved_bit), TEST_CASE(packet_sizes),
          TEST_CASE(pn_decode_rfc), TEST_CASE(pn_decode_edges), TEST_CASE(pn_len_for_rfc),
          TEST_CASE(pn_encode_decode_property), TEST_CASE(epoch_field_map), TEST_CASE(epoch_recovery),
          TEST_CASE(offset_recovery),
          TEST_CASE(padding_roundtrip), TEST_CASE(padding_truncation), TEST_CASE(padding_malformed),
          TEST_CASE(stream_roundtrip), TEST_CASE(stream_truncation), TEST_CASE(stream_malformed),
          TEST_CASE(records_roundtrip), TEST_CASE(records_truncation), TEST_CASE(records_malformed),
          TEST_CASE(record_roundtrip), TEST_CASE(record_truncation), TEST_CASE(record_malformed),
          TEST_CASE(offer_roundtrip), TEST_CASE(offer_truncation), TEST_CASE(offer_malformed),
          TEST_CASE(response_roundtrip), TEST_CASE(response_truncation), TEST_CASE(response_malformed),
          TEST_CASE(ping_roundtrip), TEST_CASE(ping_truncation), TEST_CASE(ping_malformed),
          TEST_CASE(challenge_roundtrip), TEST_CASE(challenge_truncation), TEST_CASE(challenge_malformed),
          TEST_CASE(accept_roundtrip), TEST_CASE(accept_truncation), TEST_CASE(accept_malformed),
          TEST_CASE(ack_roundtrip), TEST_CASE(ack_truncation), TEST_CASE(ack_malformed),
          TEST_CASE(stored_roundtrip), TEST_CASE(stored_truncation), TEST_CASE(stored_malformed),
          TEST_CASE(lost_roundtrip), TEST_CASE(lost_truncation), TEST_CASE(lost_malformed),
          TEST_CASE(refused_roundtrip), TEST_CASE(refused_truncation), TEST_CASE(refused_malformed),
          TEST_CASE(frames_unknown_type), TEST_CASE(frames_direction), TEST_CASE(varint_fields_in_frames), TEST_CASE(frame_valid_rules), TEST_CASE(ack_range_counts),
          TEST_CASE(ack_encode_fit), TEST_CASE(payload_check_cases), TEST_CASE(reason_names),
          TEST_CASE(framing_figure), TEST_CASE(framing_figure_every_size), TEST_CASE(fuzz_random))
