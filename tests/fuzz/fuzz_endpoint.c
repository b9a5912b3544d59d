/* fuzz_endpoint.c: libFuzzer target for the whole endpoint, behind a cipher that opens
 * everything, so that fuzzed bytes reach the frame parser and both state machines.
 *
 *   make fuzz                      (builds build/fuzz_endpoint and build/fuzz_codec)
 *   build/fuzz_endpoint -max_len=8192 -runs=10000000
 *
 * The input is a script: repeated [u8 op][u16 len][len bytes].  op bit 0 picks the
 * endpoint that receives the datagram (the receiver, or the sender's reply path), bits 1-7
 * advance the clock (op >> 1 milliseconds) before it; after every datagram both endpoints
 * run their timers, the hosts answer every event, and every datagram they pull is fed to the
 * other side.  Properties beyond "no crash, no assertion": the receiver never hands over a
 * record twice, and never pulls a datagram larger than PURE_LINK_DATAGRAM_MOST. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pure_link.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int cond) {
    if (!cond) abort();
}

static void open_all_init(void *ctx, const uint8_t key[16]) { memcpy(ctx, key, 16); }
static void open_all_seal(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                          const uint8_t *in, size_t len, uint8_t *out) {
    (void)ctx, (void)nonce, (void)aad, (void)aad_len;
    memmove(out, in, len);
    memset(out + len, 0, 16);
}
static int open_all_open(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                         const uint8_t *in, size_t len, uint8_t *out) {
    (void)ctx, (void)nonce, (void)aad, (void)aad_len;
    if (len < 16) return -1;
    memmove(out, in, len - 16);
    return 0;
}

/* A stand-in for X25519 with the same algebra where it matters (DH(a, B) == DH(b, A) for
 * B = base(b), A = base(a)) and a fraction of the cost: the fuzzer explores the state
 * machines, not the curve.  Public = secret XOR a constant; shared = XOR of both secrets'
 * images, which is symmetric. */
static const uint8_t fake_base_mask[32] = {0x5a, 0x17, 0xc3, 0x88, 0x21, 0x9e, 0x44, 0x0b};
static void fake_x25519_base(uint8_t pub[32], const uint8_t secret[32]) {
    for (int i = 0; i < 32; i++) pub[i] = (uint8_t)(secret[i] ^ fake_base_mask[i]);
}
static int fake_x25519(uint8_t out[32], const uint8_t scalar[32], const uint8_t point[32]) {
    uint8_t any = 0;
    for (int i = 0; i < 32; i++) {
        out[i] = (uint8_t)(scalar[i] ^ point[i] ^ fake_base_mask[i]);  /* = a ^ b: symmetric */
        any |= out[i];
    }
    return any ? 0 : -1;
}

typedef struct side {
    pure_link *pl;
    void *mem;
    size_t bytes;
    pure_link_addr addr;
    uint8_t secret[32], pub[32];
    int64_t next_record[64];
} side;

static pure_link_crypto table;
static side a, b;  /* a sends, b receives */

static void side_init(side *s, uint8_t id, uint64_t now) {
    pure_link_config c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < 32; i++) c.static_secret[i] = (uint8_t)(id * 17 + i);
    c.crypto = &table;
    c.senders_most = 2, c.peers_most = 2, c.runs_most = 4, c.packets_in_flight_most = 256;
    c.memo_enabled = 1;
    if (s->mem == NULL) {
        s->bytes = pure_link_size(&c);
        s->mem = aligned_alloc(PURE_LINK_ALIGN, (s->bytes + PURE_LINK_ALIGN - 1) / PURE_LINK_ALIGN * PURE_LINK_ALIGN);
    }
    uint8_t seed[32] = {id};
    s->pl = pure_link_init(s->mem, s->bytes, &c, seed, now);
    require(s->pl != NULL);
    pure_link_public_key(s->pl, s->pub);
    s->addr.len = 6;
    memset(s->addr.bytes, 0, sizeof s->addr.bytes);
    s->addr.bytes[3] = id;
    memset(s->next_record, 0, sizeof s->next_record);
}

static void serve(side *s, side *peer, uint64_t now, int depth) {
    pure_link_event ev;
    while (pure_link_event_next(s->pl, &ev)) {
        switch (ev.kind) {
        case PURE_LINK_EVENT_STREAM_OPEN: pure_link_stream_answer(s->pl, ev.stream, 0, 0, now); break;
        case PURE_LINK_EVENT_RECORD:
            require(ev.stream >= 0 && ev.stream < 64);
            require(ev.record >= s->next_record[ev.stream]);  /* never twice */
            s->next_record[ev.stream] = ev.record + 1;
            pure_link_stored(s->pl, ev.stream, ev.record + 1, now);
            break;
        case PURE_LINK_EVENT_MEMO_WRITE: pure_link_memo_written(s->pl, ev.token, now); break;
        default: break;
        }
    }
    uint8_t buf[PURE_LINK_DATAGRAM_MOST];
    pure_link_addr to;
    int n, count = 0;
    while ((n = pure_link_pull(s->pl, buf, sizeof buf, &to, now)) > 0 && count++ < 64) {
        require(n <= (int)PURE_LINK_DATAGRAM_MOST);
        if (depth < 2) {
            pure_link_receive(peer->pl, &s->addr, buf, (size_t)n, now);
            serve(peer, s, now, depth + 1);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (table.name == NULL) {
        table = *pure_link_crypto_null();
        table.name = "open-all";
        table.aead_init = open_all_init, table.aead_seal = open_all_seal, table.aead_open = open_all_open;
        table.x25519 = fake_x25519, table.x25519_base = fake_x25519_base;
    }
    uint64_t now = 1000000;
    side_init(&a, 1, now);
    side_init(&b, 2, now);
    require(pure_link_wire_peer(b.pl, a.pub, "*", now) >= 0);
    pure_link_sender_config sc;
    memset(&sc, 0, sizeof sc);
    memcpy(sc.receiver_public, b.pub, 32);
    sc.receiver_addr = b.addr, sc.version = PURE_LINK_VERSION, sc.source = "f", sc.input = "g";
    require(pure_link_sender_open(a.pl, &sc, now) == 0);
    static const uint8_t rec[300] = {7};
    for (int i = 0; i < 20; i++) pure_link_send(a.pl, 0, rec, (size_t)(i * 13) % 300, now);
    serve(&a, &b, now, 0);
    while (size >= 3) {
        uint8_t op = data[0];
        size_t len = (size_t)data[1] << 8 | data[2];
        data += 3, size -= 3;
        if (len > size) len = size;
        now += (uint64_t)(op >> 1) * 1000000u;
        side *to = (op & 1) ? &a : &b, *from = (op & 1) ? &b : &a;
        pure_link_receive(to->pl, &from->addr, data, len, now);
        data += len, size -= len;
        pure_link_tick(a.pl, now);
        pure_link_tick(b.pl, now);
        serve(to, from, now, 0);
        serve(from, to, now, 0);
    }
    return 0;
}
