/* bench_core.c: core work per full data packet, excluding AEAD and syscalls (goal <= 250 ns
 * per side).  Two endpoints in one process exchange datagrams through memory under a cipher
 * that only copies; each side's calls are timed apart.  A figure, not a test: the machine
 * is shared, so read it with the crypto bench of the same run.
 *
 * Usage: bench_core [PACKETS] [sender|receiver].  With a side named, only that side's calls
 * are collected under `valgrind --tool=callgrind --collect-atstart=no` (the toggles are no-ops
 * outside valgrind): tests/bench/callgrind_core.sh turns that into instructions per packet,
 * a count the machine's noise does not move (the run is the same every time). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <valgrind/callgrind.h>

#include "bench_copy.h"
#include "pure_link.h"

#define BENCH_PASSES 8

typedef struct side { pure_link *pl; void *mem; pure_link_addr addr; uint8_t pub[32]; } side;

static void make(side *s, const pure_link_crypto *c, uint8_t id) {
    pure_link_config cfg;
    memset(&cfg, 0, sizeof cfg);
    for (int i = 0; i < 32; i++) cfg.static_secret[i] = (uint8_t)(id * 31 + i);
    cfg.crypto = c;
    cfg.senders_most = 1, cfg.peers_most = 1, cfg.runs_most = 1;
    size_t n = pure_link_size(&cfg);
    s->mem = aligned_alloc(PURE_LINK_ALIGN, (n + 63) / 64 * 64);
    uint8_t seed[32] = {id};
    s->pl = pure_link_init(s->mem, n, &cfg, seed, 0);
    pure_link_public_key(s->pl, s->pub);
    s->addr.len = 6, s->addr.bytes[3] = id;
}

/* Collects (under callgrind) the calls of the side named on the command line only. */
static int collect_side;  /* 0: none, 1: sender, 2: receiver */
static void side_begin(int who) { if (who == collect_side) CALLGRIND_TOGGLE_COLLECT; }
static void side_end(int who) { if (who == collect_side) CALLGRIND_TOGGLE_COLLECT; }

int main(int argc, char **argv) {
    uint64_t packets_most = argc > 1 ? strtoull(argv[1], NULL, 10) : 400000;
    if (argc > 2) collect_side = strcmp(argv[2], "sender") == 0 ? 1 : strcmp(argv[2], "receiver") == 0 ? 2 : 0;
    pure_link_crypto c = copy_crypto();
    side a, b;
    make(&a, &c, 1), make(&b, &c, 2);
    pure_link_wire_peer(b.pl, a.pub, "*", 0);
    pure_link_sender_config sc;
    memset(&sc, 0, sizeof sc);
    memcpy(sc.receiver_public, b.pub, 32);
    sc.receiver_addr = b.addr, sc.version = PURE_LINK_VERSION, sc.source = "bench", sc.input = "sink";
    int s = pure_link_sender_open(a.pl, &sc, 0);
    static uint8_t rec[1024];
    static uint8_t q[4096][PURE_LINK_DATAGRAM_MOST];
    static int ql[4096];
    uint64_t now = 0, sender_ns = 0, receiver_ns = 0, data_packets = 0, records = 0;
    int64_t next_record = 0;
    /* The run in BENCH_PASSES passes: the best pass of each side is the figure least
     * disturbed by whatever else the shared machine runs (the whole run is printed too). */
    uint64_t pass_packets = packets_most / BENCH_PASSES ? packets_most / BENCH_PASSES : 1, pass_end = pass_packets;
    uint64_t pass_sender_ns = 0, pass_receiver_ns = 0, pass_start = 0;
    double best_sender = 1e18, best_receiver = 1e18;
    while (data_packets < packets_most) {
        now += 20000;  /* 20 us of virtual time per round: pacing never holds the sender back long */
        uint64_t t0 = clock_ns();
        side_begin(1);
        while (pure_link_send(a.pl, s, rec, sizeof rec, now) >= 0 && next_record < 1000000000) next_record++;
        int n = 0, len;
        pure_link_addr to;
        pure_link_event ev;
        while (n < 4096 && (len = pure_link_pull(a.pl, q[n], PURE_LINK_DATAGRAM_MOST, &to, now)) > 0) ql[n++] = len;
        while (pure_link_event_next(a.pl, &ev)) {}
        side_end(1);
        uint64_t t1 = clock_ns();
        side_begin(2);
        for (int i = 0; i < n; i++) {
            pure_link_receive(b.pl, &a.addr, q[i], (size_t)ql[i], now);
            while (pure_link_event_next(b.pl, &ev))
                if (ev.kind == PURE_LINK_EVENT_RECORD) {
                    records++;
                    pure_link_stored(b.pl, ev.stream, ev.record + 1, now);
                } else if (ev.kind == PURE_LINK_EVENT_STREAM_OPEN) {
                    pure_link_stream_answer(b.pl, ev.stream, 0, 0, now);
                }
        }
        int m = 0;
        while (m < 4096 && (len = pure_link_pull(b.pl, q[m], PURE_LINK_DATAGRAM_MOST, &to, now)) > 0) ql[m++] = len;
        side_end(2);
        uint64_t t2 = clock_ns();
        side_begin(1);
        for (int i = 0; i < m; i++) pure_link_receive(a.pl, &b.addr, q[i], (size_t)ql[i], now);
        if (pure_link_deadline(a.pl) <= now) pure_link_tick(a.pl, now);
        if (pure_link_deadline(b.pl) <= now) pure_link_tick(b.pl, now);
        side_end(1);
        uint64_t t3 = clock_ns();
        sender_ns += (t1 - t0) + (t3 - t2);
        receiver_ns += t2 - t1;
        data_packets += (uint64_t)n;
        if (data_packets >= pass_end || data_packets >= packets_most) {
            double k = (double)(data_packets - pass_start);
            double ps = (double)(sender_ns - pass_sender_ns) / k, pr = (double)(receiver_ns - pass_receiver_ns) / k;
            if (ps < best_sender) best_sender = ps;
            if (pr < best_receiver) best_receiver = pr;
            pass_start = data_packets, pass_sender_ns = sender_ns, pass_receiver_ns = receiver_ns;
            pass_end = data_packets + pass_packets;
        }
    }
    printf("core work per full data packet (AEAD replaced by a copy, no syscalls):\n");
    printf("  sender   %6.0f ns  (enqueue, pull, ACK/STORED processing; best of %d passes, whole run %.0f ns)\n",
           best_sender, BENCH_PASSES, (double)sender_ns / (double)data_packets);
    printf("  receiver %6.0f ns  (receive, reassembly, delivery, replies; best of %d passes, whole run %.0f ns)\n",
           best_receiver, BENCH_PASSES, (double)receiver_ns / (double)data_packets);
    printf("  %llu data packets, %llu records of 1 KiB delivered; goal <= 250 ns per side\n",
           (unsigned long long)data_packets, (unsigned long long)records);
    return 0;
}
