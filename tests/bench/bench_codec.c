/* bench_codec.c: nanoseconds the wire codec spends per packet (core/wire.h), without the
 * AEAD: building a full 1,452 B data packet (header + RECORDS of 1 KiB records, the data
 * copy included) and reading it back (packet decode, packet-number and offset recovery,
 * payload walk, frame decode); and the same for a reply with a 33-range ACK and STORED.
 * Each figure is the best of BENCH_ROUNDS rounds (the machine is shared). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "wire.h"

#define BENCH_ROUNDS 7
#define BENCH_ITERATIONS 200000

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct bench_state {
    uint8_t stream[4096];
    uint8_t data_pkt[PL_DATAGRAM_MOST];
    size_t data_len;
    uint8_t reply_pkt[PL_DATAGRAM_MOST];
    size_t reply_len;
    pl_frame ack;
    volatile uint64_t sink;
} bench_state;

typedef void (*bench_fn)(bench_state *s, uint64_t i);

static double measure(bench_state *s, bench_fn fn) {
    double best = 1e30;
    for (int r = 0; r < BENCH_ROUNDS; r++) {
        uint64_t t0 = now_ns();
        for (uint64_t i = 0; i < BENCH_ITERATIONS; i++) fn(s, i);
        double ns = (double)(now_ns() - t0) / BENCH_ITERATIONS;
        if (ns < best) best = ns;
    }
    return best;
}

static void build_data(bench_state *s, uint64_t pn) {
    pl_header h = {.reply = 0, .pn_len = 2, .epoch_field = 1, .key_id = 0x12345678u, .run = 42,
                   .pn_truncated = pl_pn_truncate(pn, 2)};
    size_t at = pl_header_encode(s->data_pkt, sizeof s->data_pkt, &h);
    pl_frame f = {.type = PL_FRAME_RECORDS};
    f.records.offset32 = (uint32_t)(pn * 1415u);
    f.records.data = s->stream + (pn % 1026u);
    f.records.len = PL_DATAGRAM_MOST - at - PL_TAG_BYTES - PL_FRAME_RECORDS_HEAD;
    at += pl_frame_encode(s->data_pkt + at, sizeof s->data_pkt - at - PL_TAG_BYTES, &f);
    s->data_len = at + PL_TAG_BYTES;
}

static void read_data(bench_state *s, uint64_t i) {
    pl_header h;
    int hl = pl_packet_decode(&h, s->data_pkt, s->data_len);
    uint64_t pn = pl_pn_decode(1000 + i, h.pn_truncated, h.pn_len);
    size_t n = s->data_len - (size_t)hl - PL_TAG_BYTES;
    const uint8_t *p = s->data_pkt + hl;
    int frames = pl_payload_check(p, n, 0);
    pl_frame f;
    int used = pl_frame_decode(&f, p, n, 0);
    s->sink += pn + (uint64_t)frames + (uint64_t)used + pl_offset_decode(i * 1415u, f.records.offset32);
}

static void build_reply(bench_state *s, uint64_t pn) {
    pl_header h = {.reply = 1, .pn_len = 4, .epoch_field = 1, .run = 42, .reply_run = 7,
                   .pn_truncated = pl_pn_truncate(pn, 4)};
    size_t at = pl_header_encode(s->reply_pkt, sizeof s->reply_pkt, &h);
    unsigned kept;
    at += pl_ack_encode_fit(s->reply_pkt + at, sizeof s->reply_pkt - at - PL_TAG_BYTES, &s->ack, &kept);
    pl_frame st = {.type = PL_FRAME_STORED};
    st.stored.stored = pn;
    st.stored.credit = PURE_LINK_CREDIT_FIRST;
    at += pl_frame_encode(s->reply_pkt + at, sizeof s->reply_pkt - at - PL_TAG_BYTES, &st);
    s->reply_len = at + PL_TAG_BYTES;
}

static void read_reply(bench_state *s, uint64_t i) {
    pl_header h;
    int hl = pl_packet_decode(&h, s->reply_pkt, s->reply_len);
    size_t n = s->reply_len - (size_t)hl - PL_TAG_BYTES;
    const uint8_t *p = s->reply_pkt + hl;
    int frames = pl_payload_check(p, n, 1);
    for (size_t at = 0; at < n;) {
        pl_frame f;
        int used = pl_frame_decode(&f, p + at, n - at, 1);
        at += (size_t)used;
        s->sink += f.type;
    }
    s->sink += (uint64_t)frames + i;
}

int main(void) {
    static bench_state s;
    for (size_t k = 0; k < sizeof s.stream; k++) s.stream[k] = (uint8_t)k;
    s.ack.type = PL_FRAME_ACK;
    s.ack.ack.ack_delay_us = 1234;
    s.ack.ack.range_count = PL_ACK_RANGES_MOST;
    uint64_t top = 1000000;
    for (unsigned k = 0; k < PL_ACK_PAIRS_MOST; k++) {
        s.ack.ack.ranges[k] = (pl_ack_range){.smallest = top - 40, .largest = top};
        top -= 40 + 2 + 3;
    }
    build_data(&s, 1000);
    build_reply(&s, 1000);
    printf("codec, data packet %zu B: build %.1f ns, read %.1f ns\n", s.data_len, measure(&s, build_data),
           measure(&s, read_data));
    printf("codec, reply %zu B (ACK of 33 ranges + STORED): build %.1f ns, read %.1f ns\n", s.reply_len,
           measure(&s, build_reply), measure(&s, read_reply));
    return s.sink == 42 ? 1 : 0;
}
