/* tools/packet_vectors.c: writes spec/vectors/packets.txt — one sealed packet for each of
 * the 13 frame types, under the epoch-0 keys of spec/vectors/keys.txt's inputs.
 *
 *   build/packet_vectors [PATH]     (stdout without PATH)
 *
 * tests/unit/test_vectors.c opens and re-seals every packet of the file, and decodes its
 * frame, so the file, the codec and the key schedule cannot drift apart. */
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
    return 0;
}
