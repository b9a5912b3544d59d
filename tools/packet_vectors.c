/* tools/packet_vectors.c: writes spec/vectors/packets.txt — one sealed packet for each of
 * the 13 frame types, under the epoch-0 keys of spec/vectors/keys.txt's inputs — and
 * spec/vectors/numbers.txt — packets with 1- to 4-byte packet numbers sealed in epochs
 * 1, 2 and 16, each with the state a reader recovers its epoch and number against.
 *
 *   build/packet_vectors [PACKETS [NUMBERS [REFUSED]]]  (packets.txt to stdout without PACKETS)
 *
 * and spec/vectors/refused.txt — one sealed reply per REFUSED reason.
 *
 * tests/unit/test_vectors.c opens and re-seals every packet of both files, and decodes its
 * frames, so the files, the codec and the key schedule cannot drift apart. */
#include <stdio.h>
#include <string.h>

#include "crypto.h"
#include "wire.h"

static void put_hex(FILE *f, const char *name, const uint8_t *p, size_t n) {
    fprintf(f, "%s = ", name);
    for (size_t i = 0; i < n; i++) fprintf(f, "%02x", p[i]);
    fputc('\n', f);
}

static void pattern(uint8_t *out, size_t n, uint8_t first) {
    for (size_t i = 0; i < n; i++) out[i] = (uint8_t)(first + i);
}

static const uint64_t RUN = 0x0123456789abcdefull, REPLY_RUN = 0xfedcba9876543210ull;

/* The frame of each vector, built from fixed values. */
static void frame_for(uint8_t type, pl_frame *f, uint8_t *scratch) {
    static const char source[] = "sensor-out", input[] = "archive-in";
    memset(f, 0, sizeof *f);
    f->type = type;
    switch (type) {
    case PL_FRAME_PADDING: f->padding.len = 4; break;
    case PL_FRAME_STREAM:
        f->stream.base_record = 0, f->stream.base_offset = 0, f->stream.shape = 0x0102030405060708ull;
        f->stream.source = (const uint8_t *)source, f->stream.source_len = (uint8_t)strlen(source);
        f->stream.input = (const uint8_t *)input, f->stream.input_len = (uint8_t)strlen(input);
        break;
    case PL_FRAME_RECORDS:
    case PL_FRAME_RECORD: {
        /* Two records of the stream from offset 0: "hello" and 3 bytes 01 02 03. */
        size_t n = pl_record_prefix_put(scratch, 8, 5);
        memcpy(scratch + n, "hello", 5);
        n += 5;
        n += pl_record_prefix_put(scratch + n, 8, 3);
        scratch[n++] = 1, scratch[n++] = 2, scratch[n++] = 3;
        pl_frame_data *d = type == PL_FRAME_RECORDS ? &f->records : &f->record;
        d->offset32 = 0, d->data = scratch, d->len = n;
        break;
    }
    case PL_FRAME_OFFER: f->offer.epoch = 1, pattern(f->offer.public_key, 32, 0xc0); break;
    case PL_FRAME_RESPONSE: pattern(f->response.token, 16, 0x10); break;
    case PL_FRAME_PING: break;
    case PL_FRAME_CHALLENGE: pattern(f->challenge.token, 16, 0x10); break;
    case PL_FRAME_ACCEPT:
        f->accept.epoch = 1, pattern(f->accept.echo, 4, 0xc0), pattern(f->accept.public_key, 32, 0xe0);
        break;
    case PL_FRAME_ACK:
        f->ack.ack_delay_us = 1250, f->ack.range_count = 1;
        f->ack.ranges[0].smallest = 7, f->ack.ranges[0].largest = 9;
        f->ack.ranges[1].smallest = 0, f->ack.ranges[1].largest = 4;
        break;
    case PL_FRAME_STORED: f->stored.stored = 2, f->stored.credit = 1024; break;
    case PL_FRAME_LOST:
        f->lost.epoch = 1, f->lost.pn_truncated = 0x2a, f->lost.pn_len = 1, pattern(f->lost.tag, PL_LOST_TAG_BYTES, 0xb0);
        break;
    case PL_FRAME_REFUSED: f->refused.reason = PL_REFUSED_OTHER_SHAPE; break;
    default: break;
    }
}

static const char *type_name(uint8_t t) {
    static const char *names[PL_FRAME_TYPES] = {"padding", "stream", "records", "record", "offer", "response",
                                                "ping", "challenge", "accept", "ack", "stored", "lost", "refused"};
    return names[t];
}

/* One packet of numbers.txt: its direction, epoch and number, the reader's state (the
 * epoch it expects, the largest number it received; PL_PN_NONE: none), its one frame. */
typedef struct number_case {
    const char *name;
    int reply;
    uint32_t epoch, expected_epoch;
    uint64_t pn, largest;
    unsigned pn_len;
    uint8_t frame;
} number_case;

static const number_case NUMBER_CASES[] = {
    /* 1 B: the writer's length for a sender whose ACKs come back. */
    {"pn1_epoch1", 0, 1, 1, 60, 58, 1, PL_FRAME_PING},
    /* 3 B: RFC 9000 A.2's number, one byte more than its span needs. */
    {"pn3_epoch2", 0, 2, 2, 0xace8fe, 0xabe8b3, 3, PL_FRAME_RECORDS},
    /* 4 B against nothing (protocol.md §2 "without state"): exact for a number sent in full. */
    {"pn4_from_none_epoch1", 0, 1, 1, 0x12345678, PL_PN_NONE, 4, PL_FRAME_STREAM},
    /* 4 B against the number recorded with the epoch (memo.md), past 2^32: the nonce takes
     * the full number, not the 32 bits carried. */
    {"pn4_past_2e32_epoch2", 0, 2, 2, 0x100000005ull, 0xfffffff0ull, 4, PL_FRAME_PING},
    /* A reply in epoch 16: E = 1 again, recovered against the reader's epoch 17. */
    {"reply_pn4_epoch16", 1, 16, 17, 0x01020304, 0x01020300, 4, PL_FRAME_ACK},
    /* A reply with a 2 B number, epoch 2. */
    {"reply_pn2_epoch2", 1, 2, 2, 0x1f00, 0x1e80, 2, PL_FRAME_STORED},
};

static void put_u64(FILE *f, const char *name, uint64_t v, unsigned bytes) {
    uint8_t b[8];
    for (unsigned i = 0; i < bytes; i++) b[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
    put_hex(f, name, b, bytes);
}

static void put_field(FILE *f, const char *name, const char *field, const uint8_t *p, size_t n) {
    char full[96];
    snprintf(full, sizeof full, "%s_%s", name, field);
    put_hex(f, full, p, n);
}

/* E(1) and E(2) of keys.txt's inputs (ephemeral secrets 40.., 60.. and 80.., a0..), and a
 * given E(16) (d0..: a chain of 16 exchanges adds nothing a reader checks). */
static int epoch_secrets(uint8_t secrets[17][32], const uint8_t e0[32]) {
    memcpy(secrets[0], e0, 32);
    for (uint32_t n = 1; n <= 2; n++) {
        uint8_t offer_sec[32], accept_sec[32], offer_pub[32], accept_pub[32], dh[32];
        pattern(offer_sec, 32, (uint8_t)(0x40 + 0x40 * (n - 1)));
        pattern(accept_sec, 32, (uint8_t)(0x60 + 0x40 * (n - 1)));
        pl_x25519_base(offer_pub, offer_sec), pl_x25519_base(accept_pub, accept_sec);
        if (pl_x25519(dh, offer_sec, accept_pub) != 0) return -1;
        pl_epoch_next(secrets[n], secrets[n - 1], dh, offer_pub, accept_pub, n);
    }
    pattern(secrets[16], 32, 0xd0);
    return 0;
}

static int write_numbers(FILE *f, const uint8_t e0[32], const uint8_t s_pub[32], const uint8_t r_pub[32]) {
    uint8_t secrets[17][32];
    if (epoch_secrets(secrets, e0) != 0) return -1;
    fprintf(f, "# spec/vectors/numbers.txt: packet numbers of 1 to 4 bytes, epochs >= 1 (wire version 1).\n"
               "# Written by build/packet_vectors (tools/packet_vectors.c); tests/unit/test_vectors.c\n"
               "# checks every packet.  Inputs as packets.txt; <name>_secret is E(epoch) (E(1), E(2) as\n"
               "# in keys.txt; E(16) given).  A reader whose current epoch is <name>_expected_epoch and\n"
               "# whose largest number received in the packet's space is <name>_largest (no line: none)\n"
               "# recovers <name>_epoch from the E field (wire.md §4) and <name>_pn from the header\n"
               "# (wire.md §5), then opens <name>_sealed to <name>_plaintext.\n");
    for (size_t i = 0; i < sizeof NUMBER_CASES / sizeof NUMBER_CASES[0]; i++) {
        const number_case *c = &NUMBER_CASES[i];
        pl_packet_key key;
        if (c->reply) pl_reply_key(&key, secrets[c->epoch], r_pub, s_pub, RUN, REPLY_RUN, c->epoch);
        else pl_data_key(&key, secrets[c->epoch], s_pub, r_pub, RUN, c->epoch);
        _Alignas(16) uint8_t ctx[PURE_LINK_AEAD_CTX_BYTES];
        pl_gcm_init(ctx, key.key);
        pl_header h = {.reply = (uint8_t)c->reply, .pn_len = (uint8_t)c->pn_len, .epoch_field = pl_epoch_field(c->epoch),
                       .run = RUN, .pn_truncated = pl_pn_truncate(c->pn, c->pn_len)};
        if (c->reply) h.reply_run = REPLY_RUN;
        else h.key_id = pl_key_id(s_pub);
        uint8_t pkt[PURE_LINK_DATAGRAM_MOST], scratch[64], nonce[12];
        size_t hl = pl_header_encode(pkt, sizeof pkt, &h);
        pl_frame fr;
        frame_for(c->frame, &fr, scratch);
        size_t n = pl_frame_encode(pkt + hl, sizeof pkt - hl - PURE_LINK_TAG_BYTES, &fr);
        if (hl == 0 || n == 0 || pl_pn_decode(c->largest, h.pn_truncated, h.pn_len) != c->pn ||
            pl_epoch_from_field(h.epoch_field, c->expected_epoch) != c->epoch) return -1;
        fprintf(f, "\n# %s (%s packet, %u B packet number, E = %u)\n", c->name, c->reply ? "reply" : "sender",
                c->pn_len, h.epoch_field);
        put_field(f, c->name, "secret", secrets[c->epoch], 32);
        char name[96];
        snprintf(name, sizeof name, "%s_epoch", c->name), put_u64(f, name, c->epoch, 4);
        snprintf(name, sizeof name, "%s_expected_epoch", c->name), put_u64(f, name, c->expected_epoch, 4);
        if (c->largest != PL_PN_NONE) snprintf(name, sizeof name, "%s_largest", c->name), put_u64(f, name, c->largest, 8);
        snprintf(name, sizeof name, "%s_pn", c->name), put_u64(f, name, c->pn, 8);
        put_field(f, c->name, "header", pkt, hl);
        put_field(f, c->name, "plaintext", pkt + hl, n);
        pl_nonce(nonce, key.iv, c->pn);
        pl_gcm_seal(ctx, nonce, pkt, hl, pkt + hl, n, pkt + hl);
        put_field(f, c->name, "sealed", pkt, hl + n + PURE_LINK_TAG_BYTES);
    }
    return 0;
}

/* refused.txt: one sealed reply per REFUSED reason (wire.md §6.13), epoch 0 as packets.txt,
 * packet numbers 0x20 + reason. */
static void write_refused(FILE *f, const pl_packet_key *reply, const void *ctx) {
    fprintf(f, "# spec/vectors/refused.txt: one sealed reply carrying REFUSED per reason 1..%u (wire.md\n"
               "# §6.13; 4: the receiver cannot store the input now, protocol.md §4.1; 5: a newer run took\n"
               "# the source over, protocol.md §4.3).  Written by\n"
               "# build/packet_vectors (tools/packet_vectors.c); tests/unit/test_vectors.c opens, re-seals\n"
               "# and decodes every packet.  Keys and names as packets.txt.\n", PL_REFUSED_MOST);
    for (uint8_t reason = PL_REFUSED_LEAST; reason <= PL_REFUSED_MOST; reason++) {
        uint64_t pn = 0x20u + reason;
        pl_header h = {.reply = 1, .pn_len = 2, .epoch_field = 0, .run = RUN, .reply_run = REPLY_RUN,
                       .pn_truncated = pl_pn_truncate(pn, 2)};
        uint8_t pkt[PURE_LINK_DATAGRAM_MOST], nonce[12];
        size_t hl = pl_header_encode(pkt, sizeof pkt, &h);
        pl_frame fr = {.type = PL_FRAME_REFUSED};
        fr.refused.reason = reason;
        size_t n = pl_frame_encode(pkt + hl, sizeof pkt - hl - PURE_LINK_TAG_BYTES, &fr);
        char name[32], pn_name[40];
        snprintf(name, sizeof name, "refused%u", reason);
        snprintf(pn_name, sizeof pn_name, "%s_pn", name);
        fprintf(f, "\n# REFUSED reason %u (reply packet)\n", reason);
        put_u64(f, pn_name, pn, 8);
        put_field(f, name, "header", pkt, hl);
        put_field(f, name, "plaintext", pkt + hl, n);
        pl_nonce(nonce, reply->iv, pn);
        pl_gcm_seal(ctx, nonce, pkt, hl, pkt + hl, n, pkt + hl);
        put_field(f, name, "sealed", pkt, hl + n + PURE_LINK_TAG_BYTES);
    }
}

int main(int argc, char **argv) {
    FILE *f = argc > 1 ? fopen(argv[1], "w") : stdout;
    if (!f) { perror(argv[1]); return 1; }
    uint8_t s_sec[32], r_sec[32], s_pub[32], r_pub[32], shared[32], e0[32];
    pattern(s_sec, 32, 0x00), pattern(r_sec, 32, 0x20);
    pl_x25519_base(s_pub, s_sec), pl_x25519_base(r_pub, r_sec);
    if (pl_x25519(shared, s_sec, r_pub) != 0) return 1;
    pl_epoch0_secret(e0, shared);
    pl_packet_key data, reply;
    pl_data_key(&data, e0, s_pub, r_pub, RUN, 0);
    pl_reply_key(&reply, e0, r_pub, s_pub, RUN, REPLY_RUN, 0);
    _Alignas(16) uint8_t data_ctx[PURE_LINK_AEAD_CTX_BYTES], reply_ctx[PURE_LINK_AEAD_CTX_BYTES];
    pl_gcm_init(data_ctx, data.key);
    pl_gcm_init(reply_ctx, reply.key);

    fprintf(f, "# spec/vectors/packets.txt: one sealed packet per frame type (wire version 1).\n"
               "# Written by build/packet_vectors (tools/packet_vectors.c); tests/unit/test_vectors.c\n"
               "# opens, re-seals and decodes every packet.  Keys: epoch 0 of the inputs of keys.txt\n"
               "# (sender/receiver static secrets 00..1f / 20..3f, run 0123456789abcdef, reply run\n"
               "# fedcba9876543210).  Each packet: <type>_header (the AAD), <type>_plaintext (the\n"
               "# frames), <type>_pn, and <type>_sealed (header || ciphertext || tag).\n");
    for (uint8_t t = 0; t < PL_FRAME_TYPES; t++) {
        int reply_dir = (PL_FRAMES_REPLY >> t & 1) && t != PL_FRAME_PADDING;
        uint64_t pn = 3 + t;
        pl_header h = {.reply = (uint8_t)reply_dir, .pn_len = 2, .epoch_field = 0, .run = RUN,
                       .pn_truncated = pl_pn_truncate(pn, 2)};
        if (reply_dir) h.reply_run = REPLY_RUN;
        else h.key_id = pl_key_id(s_pub);
        uint8_t pkt[PURE_LINK_DATAGRAM_MOST], scratch[64];
        size_t hl = pl_header_encode(pkt, sizeof pkt, &h);
        pl_frame fr;
        frame_for(t, &fr, scratch);
        size_t n = pl_frame_encode(pkt + hl, sizeof pkt - hl - PURE_LINK_TAG_BYTES, &fr);
        if (n == 0) return 1;
        char name[64];
        fprintf(f, "\n# %s (%s packet)\n", type_name(t), reply_dir ? "reply" : "sender");
        snprintf(name, sizeof name, "%s_pn", type_name(t));
        uint8_t pnb[8];
        for (int i = 0; i < 8; i++) pnb[i] = (uint8_t)(pn >> (56 - 8 * i));
        put_hex(f, name, pnb, 8);
        snprintf(name, sizeof name, "%s_header", type_name(t));
        put_hex(f, name, pkt, hl);
        snprintf(name, sizeof name, "%s_plaintext", type_name(t));
        put_hex(f, name, pkt + hl, n);
        uint8_t nonce[12];
        pl_nonce(nonce, reply_dir ? reply.iv : data.iv, pn);
        pl_gcm_seal(reply_dir ? reply_ctx : data_ctx, nonce, pkt, hl, pkt + hl, n, pkt + hl);
        snprintf(name, sizeof name, "%s_sealed", type_name(t));
        put_hex(f, name, pkt, hl + n + PURE_LINK_TAG_BYTES);
    }
    if (f != stdout) fclose(f);
    if (argc > 3) {
        FILE *g = fopen(argv[3], "w");
        if (!g) { perror(argv[3]); return 1; }
        write_refused(g, &reply, reply_ctx);
        fclose(g);
    }
    if (argc > 2) {
        FILE *g = fopen(argv[2], "w");
        if (!g) { perror(argv[2]); return 1; }
        int rc = write_numbers(g, e0, s_pub, r_pub);
        fclose(g);
        if (rc != 0) { fprintf(stderr, "%s: a case does not decode as stated\n", argv[2]); return 1; }
    }
    return 0;
}
