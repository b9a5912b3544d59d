/* codec.c: the 13 frames (spec/wire.md "Frames").
 *
 * Decoding reads through a cursor whose first error sticks, so each frame's reader is a
 * straight list of its fields; the rules on values live in one place, pl_frame_valid(),
 * which the decoder applies to what it read and the encoder asserts on what it writes.
 * Length fields are checked as soon as they are read, so a bad length is "out of range"
 * rather than whatever the bytes after it happen to look like. */
#include <assert.h>
#include <string.h>

#include "wire.h"

/* ---- Reading ---- */

typedef struct reader {
    const uint8_t *p;
    size_t n, at;
    int err; /* 0, or the first pl_wire_reason met */
} reader;

static void rd_fail(reader *r, int reason) {
    if (r->err == 0) r->err = reason;
}

static const uint8_t *rd_bytes(reader *r, size_t k) {
    if (r->err) return NULL;
    if (r->n - r->at < k) {
        rd_fail(r, PL_WIRE_TRUNCATED);
        return NULL;
    }
    const uint8_t *q = r->p + r->at;
    r->at += k;
    return q;
}

static uint8_t rd_u8(reader *r) {
    const uint8_t *q = rd_bytes(r, 1);
    return q ? q[0] : 0;
}

static uint16_t rd_u16(reader *r) {
    const uint8_t *q = rd_bytes(r, 2);
    return q ? (uint16_t)(q[0] << 8 | q[1]) : 0;
}

static uint32_t rd_u32(reader *r) {
    const uint8_t *q = rd_bytes(r, 4);
    return q ? pl_wire_get32(q) : 0;
}

static uint64_t rd_u64(reader *r) {
    const uint8_t *q = rd_bytes(r, 8);
    return q ? pl_wire_get64(q) : 0;
}

static void rd_copy(reader *r, uint8_t *out, size_t k) {
    const uint8_t *q = rd_bytes(r, k);
    if (q) memcpy(out, q, k);
    else memset(out, 0, k);
}

static uint64_t rd_varint(reader *r) {
    if (r->err) return 0;
    if (r->at == r->n) {
        rd_fail(r, PL_WIRE_TRUNCATED);
        return 0;
    }
    if (r->p[r->at] < 0x40) return r->p[r->at++]; /* the common 1 B form, without a call */
    uint64_t v = 0;
    int used = pl_varint_get(r->p + r->at, r->n - r->at, &v);
    if (used < 0) {
        rd_fail(r, used);
        return 0;
    }
    r->at += (size_t)used;
    return v;
}

/* A length byte/field that must lie in least..most, checked before what it counts. */
static size_t rd_len_checked(reader *r, uint64_t len, uint64_t least, uint64_t most) {
    if (!r->err && (len < least || len > most)) rd_fail(r, PL_WIRE_RANGE);
    return r->err ? 0 : (size_t)len;
}

/* ---- Writing: sizes are known up front, so the writer never checks room ---- */

typedef struct writer {
    uint8_t *p;
    size_t at;
} writer;

static void wr_u8(writer *w, uint8_t v) { w->p[w->at++] = v; }

static void wr_u16(writer *w, uint16_t v) {
    wr_u8(w, (uint8_t)(v >> 8));
    wr_u8(w, (uint8_t)v);
}

static void wr_u32(writer *w, uint32_t v) {
    pl_wire_put32(w->p + w->at, v);
    w->at += 4;
}

static void wr_u64(writer *w, uint64_t v) {
    pl_wire_put64(w->p + w->at, v);
    w->at += 8;
}

static void wr_bytes(writer *w, const uint8_t *q, size_t k) {
    if (k) memcpy(w->p + w->at, q, k);
    w->at += k;
}

static void wr_varint(writer *w, uint64_t v) {
    if (v < 0x40) { /* the common 1 B form, without a call */
        wr_u8(w, (uint8_t)v);
        return;
    }
    size_t used = pl_varint_put(w->p + w->at, PL_VARINT_BYTES_MOST, v);
    assert(used > 0);
    w->at += used;
}

/* ---- Validity: the rules of spec/wire.md, one place for both directions of the codec ---- */

/* Names travel as bytes but reach the host as C strings, and wiring lists separate names
 * with '\n': neither byte may appear inside a name. */
static int name_valid(const uint8_t *name, size_t len) {
    if (len < PL_NAME_LEAST || len > PL_NAME_MOST || name == NULL) return 0;
    return memchr(name, 0x00, len) == NULL && memchr(name, '\n', len) == NULL;
}

static int ack_valid(const pl_frame *f) {
    if (f->ack.flags & ~PL_ACK_FLAGS_KNOWN) return PL_WIRE_RESERVED;
    if (f->ack.ack_delay_us > PL_VARINT_MOST || f->ack.range_count > PL_ACK_RANGES_MOST) return PL_WIRE_RANGE;
    const pl_ack_range *r = f->ack.ranges;
    if (r[0].largest > PL_VARINT_MOST || r[0].smallest > r[0].largest) return PL_WIRE_RANGE;
    for (unsigned i = 1; i <= f->ack.range_count; i++) {
        /* A gap of at least one unacknowledged number separates two ranges. */
        if (r[i - 1].smallest < 2 || r[i].largest > r[i - 1].smallest - 2) return PL_WIRE_RANGE;
        if (r[i].smallest > r[i].largest) return PL_WIRE_RANGE;
    }
    return 0;
}

static int data_valid(const pl_frame_data *d) {
    return d->len >= 1 && d->len <= PL_FRAGMENT_MOST && d->data != NULL;
}

int pl_frame_valid(const pl_frame *f) {
    switch (f->type) {
    case PL_FRAME_PADDING:
        return f->padding.len >= 1 ? 0 : PL_WIRE_RANGE;
    case PL_FRAME_STREAM:
        if (f->stream.base_offset > PL_VARINT_MOST || f->stream.base_record > f->stream.base_offset)
            return PL_WIRE_RANGE; /* each record takes at least its 1 B prefix */
        if (!name_valid(f->stream.source, f->stream.source_len)) return PL_WIRE_RANGE;
        return name_valid(f->stream.input, f->stream.input_len) ? 0 : PL_WIRE_RANGE;
    case PL_FRAME_RECORDS:
        return data_valid(&f->records) ? 0 : PL_WIRE_RANGE;
    case PL_FRAME_RECORD:
        return data_valid(&f->record) ? 0 : PL_WIRE_RANGE;
    case PL_FRAME_OFFER:
        return f->offer.epoch >= PL_EPOCH_OFFER_LEAST ? 0 : PL_WIRE_RANGE;
    case PL_FRAME_ACCEPT:
        return f->accept.epoch >= PL_EPOCH_OFFER_LEAST ? 0 : PL_WIRE_RANGE;
    case PL_FRAME_ACK:
        return ack_valid(f);
    case PL_FRAME_STORED:
        if (f->stored.stored > PL_VARINT_MOST) return PL_WIRE_RANGE;
        return f->stored.credit >= PL_CREDIT_LEAST && f->stored.credit <= PL_CREDIT_MOST ? 0 : PL_WIRE_RANGE;
    case PL_FRAME_REFUSED:
        return f->refused.reason >= PL_REFUSED_LEAST && f->refused.reason <= PL_REFUSED_MOST ? 0 : PL_WIRE_RANGE;
    case PL_FRAME_LOST: /* the epoch field of a packet of epoch >= 1 that could not be opened */
        if (f->lost.pn_len < 1 || f->lost.pn_len > 4 || (f->lost.pn_len < 4 && f->lost.pn_truncated >> (8 * f->lost.pn_len)))
            return PL_WIRE_RANGE;
        return f->lost.epoch >= 1 && f->lost.epoch <= PL_EPOCH_FIELD_CYCLE ? 0 : PL_WIRE_RANGE;
    case PL_FRAME_RESPONSE:
    case PL_FRAME_PING:
    case PL_FRAME_CHALLENGE:
        return 0;
    default:
        return PL_WIRE_UNKNOWN_FRAME;
    }
}

/* ---- Decoding, one reader per frame with fields ---- */

static void read_stream(reader *r, pl_frame *f) {
    f->stream.base_record = rd_varint(r);
    f->stream.base_offset = rd_varint(r);
    f->stream.shape = rd_u64(r);
    f->stream.source_len = (uint8_t)rd_len_checked(r, rd_u8(r), PL_NAME_LEAST, PL_NAME_MOST);
    f->stream.source = rd_bytes(r, f->stream.source_len);
    f->stream.input_len = (uint8_t)rd_len_checked(r, rd_u8(r), PL_NAME_LEAST, PL_NAME_MOST);
    f->stream.input = rd_bytes(r, f->stream.input_len);
}

/* RECORDS runs to the end of the packet: it takes every byte left. */
static void read_records(reader *r, pl_frame *f) {
    f->records.offset32 = rd_u32(r);
    f->records.len = rd_len_checked(r, r->n - r->at, 1, PL_FRAGMENT_MOST);
    f->records.data = rd_bytes(r, f->records.len);
}

static void read_record(reader *r, pl_frame *f) {
    f->record.offset32 = rd_u32(r);
    f->record.len = rd_len_checked(r, rd_u16(r), 1, PL_FRAGMENT_MOST);
    f->record.data = rd_bytes(r, f->record.len);
}

/* ACK ranges arrive as RFC 9000 §19.3 gaps and lengths counted down from Largest; they
 * are turned into (smallest, largest) pairs here, refusing any that would go below 0. */
static void read_ack(reader *r, pl_frame *f) {
    uint64_t largest = rd_varint(r);
    f->ack.ack_delay_us = rd_varint(r);
    f->ack.flags = rd_u8(r);
    f->ack.range_count = (uint8_t)rd_len_checked(r, rd_varint(r), 0, PL_ACK_RANGES_MOST);
    uint64_t len = rd_varint(r);
    for (unsigned i = 0; !r->err; i++) {
        if (len > largest) {
            rd_fail(r, PL_WIRE_RANGE);
            break;
        }
        f->ack.ranges[i] = (pl_ack_range){.smallest = largest - len, .largest = largest};
        if (i == f->ack.range_count) break;
        uint64_t gap = rd_varint(r);
        len = rd_varint(r);
        uint64_t below = f->ack.ranges[i].smallest;
        if (!r->err && (below < 2 || gap > below - 2)) rd_fail(r, PL_WIRE_RANGE);
        largest = below - 2 - gap; /* unused when the reader failed */
    }
}

static void read_fields(reader *r, pl_frame *f) {
    switch (f->type) {
    case PL_FRAME_STREAM: read_stream(r, f); break;
    case PL_FRAME_RECORDS: read_records(r, f); break;
    case PL_FRAME_RECORD: read_record(r, f); break;
    case PL_FRAME_OFFER:
        f->offer.epoch = rd_u32(r);
        rd_copy(r, f->offer.public_key, PL_KEY_BYTES);
        break;
    case PL_FRAME_RESPONSE: rd_copy(r, f->response.token, PL_TOKEN_BYTES); break;
    case PL_FRAME_CHALLENGE: rd_copy(r, f->challenge.token, PL_TOKEN_BYTES); break;
    case PL_FRAME_ACCEPT:
        f->accept.epoch = rd_u32(r);
        rd_copy(r, f->accept.echo, PL_ECHO_BYTES);
        rd_copy(r, f->accept.public_key, PL_KEY_BYTES);
        break;
    case PL_FRAME_ACK: read_ack(r, f); break;
    case PL_FRAME_STORED:
        f->stored.stored = rd_varint(r);
        f->stored.credit = rd_varint(r);
        break;
    case PL_FRAME_LOST:
        f->lost.epoch = rd_u32(r);
        f->lost.pn_truncated = rd_u32(r);
        f->lost.pn_len = rd_u8(r);
        rd_copy(r, f->lost.tag, PL_LOST_TAG_BYTES);
        break;
    case PL_FRAME_REFUSED: f->refused.reason = rd_u8(r); break;
    default: break; /* PING: nothing follows the type */
    }
}

int pl_frame_decode(pl_frame *f, const uint8_t *p, size_t n, int reply_dir) {
    if (n == 0) return PL_WIRE_TRUNCATED;
    f->type = p[0]; /* each reader sets every field of its type; the rest of *f is left alone */
    if (f->type >= PL_FRAME_TYPES) return PL_WIRE_UNKNOWN_FRAME;
    unsigned allowed = reply_dir ? PL_FRAMES_REPLY : PL_FRAMES_SENDER;
    if (!(allowed & PL_FRAME_BIT(f->type))) return PL_WIRE_WRONG_DIRECTION;
    if (f->type == PL_FRAME_PADDING) {
        size_t run = 1;
        while (run < n && p[run] == PL_FRAME_PADDING) run++;
        f->padding.len = run;
        return (int)run;
    }
    reader r = {.p = p, .n = n, .at = 1, .err = 0};
    read_fields(&r, f);
    if (r.err) return r.err;
    int rule = pl_frame_valid(f);
    if (rule < 0) return rule;
    assert(r.at >= 1 && r.at <= n);
    return (int)r.at;
}

/* ---- Sizes and encoding ---- */

/* Bytes of the gap and length that put range i >= 1 on the wire. */
static size_t ack_pair_size(const pl_frame *f, unsigned i) {
    const pl_ack_range *r = f->ack.ranges;
    return pl_varint_size(r[i - 1].smallest - r[i].largest - 2) + pl_varint_size(r[i].largest - r[i].smallest);
}

/* Bytes of an ACK's fields after range_count, for its first `pairs` ranges. */
static size_t ack_ranges_size(const pl_frame *f, unsigned pairs) {
    size_t size = pl_varint_size(f->ack.ranges[0].largest - f->ack.ranges[0].smallest);
    for (unsigned i = 1; i < pairs; i++) size += ack_pair_size(f, i);
    return size;
}

static size_t ack_head_size(const pl_frame *f) {
    return 1 + pl_varint_size(f->ack.ranges[0].largest) + pl_varint_size(f->ack.ack_delay_us) + 1 +
           pl_varint_size(f->ack.range_count);
}

size_t pl_frame_size(const pl_frame *f) {
    assert(pl_frame_valid(f) == 0);
    switch (f->type) {
    case PL_FRAME_PADDING: return f->padding.len;
    case PL_FRAME_STREAM:
        return 1 + pl_varint_size(f->stream.base_record) + pl_varint_size(f->stream.base_offset) + 8 + 1 +
               f->stream.source_len + 1 + f->stream.input_len;
    case PL_FRAME_RECORDS: return PL_FRAME_RECORDS_HEAD + f->records.len;
    case PL_FRAME_RECORD: return PL_FRAME_RECORD_HEAD + f->record.len;
    case PL_FRAME_OFFER: return PL_FRAME_OFFER_BYTES;
    case PL_FRAME_RESPONSE:
    case PL_FRAME_CHALLENGE: return PL_FRAME_TOKEN_BYTES;
    case PL_FRAME_PING: return PL_FRAME_PING_BYTES;
    case PL_FRAME_ACCEPT: return PL_FRAME_ACCEPT_BYTES;
    case PL_FRAME_ACK: return ack_head_size(f) + ack_ranges_size(f, f->ack.range_count + 1u);
    case PL_FRAME_STORED: return 1 + pl_varint_size(f->stored.stored) + pl_varint_size(f->stored.credit);
    case PL_FRAME_LOST: return PL_FRAME_LOST_BYTES;
    default: return PL_FRAME_REFUSED_BYTES;
    }
}

/* Writes f's ACK with its first range_count + 1 ranges (pl_ack_encode_fit may keep fewer). */
static void write_ack(writer *w, const pl_frame *f, unsigned range_count) {
    const pl_ack_range *r = f->ack.ranges;
    assert(range_count <= f->ack.range_count);
    wr_varint(w, r[0].largest);
    wr_varint(w, f->ack.ack_delay_us);
    wr_u8(w, f->ack.flags);
    wr_varint(w, range_count);
    wr_varint(w, r[0].largest - r[0].smallest);
    for (unsigned i = 1; i <= range_count; i++) {
        wr_varint(w, r[i - 1].smallest - r[i].largest - 2);
        wr_varint(w, r[i].largest - r[i].smallest);
    }
}

static void write_fields(writer *w, const pl_frame *f) {
    switch (f->type) {
    case PL_FRAME_STREAM:
        wr_varint(w, f->stream.base_record);
        wr_varint(w, f->stream.base_offset);
        wr_u64(w, f->stream.shape);
        wr_u8(w, f->stream.source_len);
        wr_bytes(w, f->stream.source, f->stream.source_len);
        wr_u8(w, f->stream.input_len);
        wr_bytes(w, f->stream.input, f->stream.input_len);
        break;
    case PL_FRAME_RECORDS:
        wr_u32(w, f->records.offset32);
        wr_bytes(w, f->records.data, f->records.len);
        break;
    case PL_FRAME_RECORD:
        wr_u32(w, f->record.offset32);
        wr_u16(w, (uint16_t)f->record.len);
        wr_bytes(w, f->record.data, f->record.len);
        break;
    case PL_FRAME_OFFER:
        wr_u32(w, f->offer.epoch);
        wr_bytes(w, f->offer.public_key, PL_KEY_BYTES);
        break;
    case PL_FRAME_RESPONSE: wr_bytes(w, f->response.token, PL_TOKEN_BYTES); break;
    case PL_FRAME_CHALLENGE: wr_bytes(w, f->challenge.token, PL_TOKEN_BYTES); break;
    case PL_FRAME_ACCEPT:
        wr_u32(w, f->accept.epoch);
        wr_bytes(w, f->accept.echo, PL_ECHO_BYTES);
        wr_bytes(w, f->accept.public_key, PL_KEY_BYTES);
        break;
    case PL_FRAME_ACK: write_ack(w, f, f->ack.range_count); break;
    case PL_FRAME_STORED:
        wr_varint(w, f->stored.stored);
        wr_varint(w, f->stored.credit);
        break;
    case PL_FRAME_LOST:
        wr_u32(w, f->lost.epoch);
        wr_u32(w, f->lost.pn_truncated);
        wr_u8(w, f->lost.pn_len);
        wr_bytes(w, f->lost.tag, PL_LOST_TAG_BYTES);
        break;
    case PL_FRAME_REFUSED: wr_u8(w, f->refused.reason); break;
    default: break; /* PING */
    }
}

size_t pl_frame_encode(uint8_t *p, size_t cap, const pl_frame *f) {
    size_t size = pl_frame_size(f); /* asserts validity */
    if (size > cap) return 0;
    if (f->type == PL_FRAME_PADDING) {
        memset(p, PL_FRAME_PADDING, size);
        return size;
    }
    writer w = {.p = p, .at = 0};
    wr_u8(&w, f->type);
    write_fields(&w, f);
    assert(w.at == size);
    return size;
}

size_t pl_ack_encode_fit(uint8_t *p, size_t cap, const pl_frame *f, unsigned *range_count) {
    assert(f->type == PL_FRAME_ACK && pl_frame_valid(f) == 0);
    /* range_count is one byte whatever its value (PL_ACK_RANGES_MOST < 64), so the head's
     * size does not depend on how many ranges are kept. */
    size_t size = ack_head_size(f) + ack_ranges_size(f, 1);
    if (size > cap) return 0;
    unsigned pairs = 1;
    for (; pairs <= f->ack.range_count; pairs++) {
        size_t more = ack_pair_size(f, pairs);
        if (size + more > cap) break;
        size += more;
    }
    writer w = {.p = p, .at = 0};
    wr_u8(&w, PL_FRAME_ACK);
    write_ack(&w, f, pairs - 1u);
    assert(w.at == size && size <= cap);
    *range_count = pairs - 1u;
    return size;
}

int pl_payload_decode(pl_frame *frames, unsigned most, const uint8_t *p, size_t n, int reply_dir) {
    assert(frames != NULL && most >= 1 && most <= PL_FRAMES_MOST);
    if (n == 0) return PL_WIRE_EMPTY;
    if (n > PL_PAYLOAD_MOST) return PL_WIRE_TOO_LONG;
    unsigned count = 0;
    for (size_t at = 0; at < n; count++) {
        if (count == most) return PL_WIRE_TOO_MANY;
        int used = pl_frame_decode(&frames[count], p + at, n - at, reply_dir);
        if (used < 0) return used;
        assert(used > 0 && (size_t)used <= n - at);
        at += (size_t)used;
    }
    return (int)count;
}

int pl_payload_check(const uint8_t *p, size_t n, int reply_dir) {
    if (n == 0) return PL_WIRE_EMPTY;
    if (n > PL_PAYLOAD_MOST) return PL_WIRE_TOO_LONG;
    int frames = 0;
    for (size_t at = 0; at < n; frames++) {
        if ((unsigned)frames == PL_FRAMES_MOST) return PL_WIRE_TOO_MANY;
        pl_frame f;
        int used = pl_frame_decode(&f, p + at, n - at, reply_dir);
        if (used < 0) return used;
        assert(used > 0 && (size_t)used <= n - at);
        at += (size_t)used;
    }
    return frames;
}
