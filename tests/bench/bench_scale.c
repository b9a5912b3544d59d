/* bench_scale.c: what the receiver's per-datagram work, bringing a run up, a memo write
 * made durable and a deadline query cost as the number of wired peers and live runs grows.
 * One receiver, sized for 10,000 peers and 40,000 run slots with a 256 MiB pool whatever
 * the count, wires PEERS keys; one sender, wired last, streams 1 KiB records to it.  With
 * `runs` every other wired key first builds a live run (its first packet, the OFFER, opened
 * and answered; the short-lived sender queues no record, so no stream opens), so the
 * receiver also holds PEERS run slots; `memo` is `runs` with the memo on (each run's epoch 1
 * written, and made durable at once by the host).
 * Cipher: a copy; X25519: a stand-in whose two sides agree (it is not a Diffie-Hellman, so
 * thousands of keys cost nothing to make); HKDF is the core's own.
 *
 * Usage: bench_scale [PEERS wired|runs|memo [PACKETS]].  Without arguments it runs the six
 * combinations of 1, 1,000, 10,000 peers and wired/runs and prints nanoseconds (a figure of
 * a shared machine).  With arguments, under `valgrind --tool=callgrind --collect-atstart=no`,
 * only the receiver's calls are collected, in three parts: bringing the quiet runs up
 * (receive, events, memo writes made durable and pulls of the setup), dumped as part
 * "setup" (tests/bench/callgrind_scale.sh takes pure_link_memo_written's inclusive count
 * out of it); the traffic's (receive, events, pulls, the deadline query and the tick each
 * round), part "traffic"; then QUERIES deadline queries alone, part "deadline". */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <valgrind/callgrind.h>

#include "bench_copy.h"
#include "pure_link.h"

#define SCALE_PEERS_MOST 10000u
#define SCALE_RUNS_MOST 40000u
#define SCALE_POOL_BYTES (256ull << 20)
#define SCALE_QUERIES 1000u
#define SCALE_ROUND_NS 20000u  /* virtual time per round of the traffic */
/* The public key is the secret and the shared value their XOR: both sides get a ^ b. */
static void xor_base(uint8_t pub[32], const uint8_t secret[32]) { memcpy(pub, secret, 32); }
static int xor_dh(uint8_t out[32], const uint8_t scalar[32], const uint8_t point[32]) {
    int zero = 1;
    for (int i = 0; i < 32; i++) zero &= (out[i] = scalar[i] ^ point[i]) == 0;
    return zero ? -1 : 0;
}

static pure_link_crypto bench_crypto;

static void *block_of(size_t n) { return aligned_alloc(PURE_LINK_ALIGN, (n + 63) / 64 * 64); }

static void secret_of(uint32_t k, uint8_t secret[32]) {
    for (int i = 0; i < 32; i++) secret[i] = (uint8_t)(k >> (8 * (i % 4))) ^ (uint8_t)(i * 37 + 11);
}

static pure_link *receiver_make(void **mem, int memo) {
    pure_link_config cfg;
    memset(&cfg, 0, sizeof cfg);
    secret_of(0xffffffffu, cfg.static_secret);
    cfg.crypto = &bench_crypto;
    cfg.senders_most = PURE_LINK_NONE;
    cfg.peers_most = SCALE_PEERS_MOST, cfg.runs_most = SCALE_RUNS_MOST;
    cfg.receive_memory_bytes = SCALE_POOL_BYTES;
    cfg.memo_enabled = (uint8_t)memo;
    size_t n = pure_link_size(&cfg);
    uint8_t seed[32] = {2};
    *mem = block_of(n);
    return pure_link_init(*mem, n, &cfg, seed, 0);
}

/* A sender-only endpoint with one sender to the receiver, in `mem` (reused). */
static pure_link *sender_make(void *mem, size_t *bytes, uint32_t k, int small) {
    pure_link_config cfg;
    memset(&cfg, 0, sizeof cfg);
    secret_of(k, cfg.static_secret);
    cfg.crypto = &bench_crypto;
    cfg.peers_most = PURE_LINK_NONE, cfg.senders_most = 1;
    if (small) cfg.send_queue_records = 64, cfg.packets_in_flight_most = 64;
    *bytes = pure_link_size(&cfg);
    if (mem == NULL) return NULL;
    uint8_t seed[32] = {3, (uint8_t)k, (uint8_t)(k >> 8)};
    return pure_link_init(mem, *bytes, &cfg, seed, 0);
}

static const pure_link_addr rx_addr = {.len = 6, .bytes = {0, 0, 0, 2}};

static int sender_open(pure_link *pl, pure_link *rx) {
    pure_link_sender_config sc;
    memset(&sc, 0, sizeof sc);
    pure_link_public_key(rx, sc.receiver_public);
    sc.receiver_addr = rx_addr, sc.version = PURE_LINK_VERSION, sc.source = "bench", sc.input = "sink";
    return pure_link_sender_open(pl, &sc, 0);
}

static int collecting;  /* under callgrind: the receiver's calls are collected */
static void collect(void) { if (collecting) CALLGRIND_TOGGLE_COLLECT; }

static uint64_t memo_calls;     /* pure_link_memo_written calls */

/* The receiving host: accepts every stream, stores every record at once, and makes every
 * memo write durable at once. */
static uint64_t host_drain(pure_link *rx, uint64_t now) {
    pure_link_event ev;
    uint64_t records = 0;
    while (pure_link_event_next(rx, &ev))
        if (ev.kind == PURE_LINK_EVENT_RECORD) {
            records++;
            pure_link_stored(rx, ev.stream, ev.record + 1, now);
        } else if (ev.kind == PURE_LINK_EVENT_STREAM_OPEN) {
            pure_link_stream_answer(rx, ev.stream, 0, 0, now);
        } else if (ev.kind == PURE_LINK_EVENT_MEMO_WRITE) {
            pure_link_memo_written(rx, ev.token, now);
            memo_calls++;
        }
    return records;
}

static uint8_t dgram[PURE_LINK_DATAGRAM_MOST];

/* Wires `peers` keys (the measured sender's, 0, last).  With runs, each other key first
 * opens a stream from a short-lived endpoint, which leaves a live run at the receiver. */
static void setup(pure_link *rx, uint32_t peers, int runs) {
    size_t bytes;
    sender_make(NULL, &bytes, 0, 1);
    void *mem = runs ? block_of(bytes) : NULL;
    uint32_t wired = 0;
    for (uint32_t k = 1; wired + 1 < peers; k++) {
        uint8_t secret[32];
        secret_of(k, secret);
        /* A key whose id collides with a wired one is refused: take the next. */
        if (pure_link_wire_peer(rx, secret, "*", 0) < 0) continue;
        wired++;
        if (!runs) continue;
        pure_link *tx = sender_make(mem, &bytes, k, 1);
        sender_open(tx, rx);
        pure_link_addr to, from = {.len = 6, .bytes = {1, (uint8_t)k, (uint8_t)(k >> 8), 1}};
        int len;
        while ((len = pure_link_pull(tx, dgram, sizeof dgram, &to, 0)) > 0) {
            collect();
            pure_link_receive(rx, &from, dgram, (size_t)len, 0);
            collect();
        }
        collect();
        host_drain(rx, 0);
        while (pure_link_pull(rx, dgram, sizeof dgram, &to, 0) > 0) {}
        collect();
    }
    free(mem);
    uint8_t secret[32], pub[32];
    secret_of(0, secret);
    xor_base(pub, secret);
    if (pure_link_wire_peer(rx, pub, "*", 0) < 0) { fprintf(stderr, "bench_scale: sender key collides\n"); exit(1); }
}

typedef struct figures { uint64_t packets, runs_built, records, memo_writes; double traffic_ns, deadline_ns; } figures;


static figures measure(uint32_t peers, int runs, int memo, uint64_t packets_most) {
    void *rx_mem, *tx_mem;
    pure_link *rx = receiver_make(&rx_mem, memo);
    if (collecting) CALLGRIND_START_INSTRUMENTATION;
    setup(rx, peers, runs);
    if (collecting) CALLGRIND_DUMP_STATS_AT("setup");
    uint64_t memo_setup = memo_calls;
    size_t bytes;
    sender_make(NULL, &bytes, 0, 0);
    pure_link *tx = sender_make(tx_mem = block_of(bytes), &bytes, 0, 0);
    int s = sender_open(tx, rx);
    static uint8_t rec[1024];
    static uint8_t q[4096][PURE_LINK_DATAGRAM_MOST];
    static int ql[4096];
    const pure_link_addr tx_addr = {.len = 6, .bytes = {0, 0, 0, 1}};
    uint64_t now = 1000, rx_ns = 0;
    figures f = {0};
    while (f.packets < packets_most) {
        now += SCALE_ROUND_NS;
        while (pure_link_send(tx, s, rec, sizeof rec, now) >= 0) {}
        int n = 0, m = 0, len;
        pure_link_addr to;
        pure_link_event ev;
        while (n < 4096 && (len = pure_link_pull(tx, q[n], PURE_LINK_DATAGRAM_MOST, &to, now)) > 0) ql[n++] = len;
        while (pure_link_event_next(tx, &ev)) {}
        uint64_t t0 = clock_ns();
        collect();
        for (int i = 0; i < n; i++) {
            pure_link_receive(rx, &tx_addr, q[i], (size_t)ql[i], now);
            host_drain(rx, now);
        }
        while (m < 4096 && (len = pure_link_pull(rx, q[m], PURE_LINK_DATAGRAM_MOST, &to, now)) > 0) ql[m++] = len;
        if (pure_link_deadline(rx) <= now) pure_link_tick(rx, now);
        collect();
        rx_ns += clock_ns() - t0;
        for (int i = 0; i < m; i++) pure_link_receive(tx, &rx_addr, q[i], (size_t)ql[i], now);
        if (pure_link_deadline(tx) <= now) pure_link_tick(tx, now);
        f.packets += (uint64_t)n;
    }
    if (collecting) CALLGRIND_DUMP_STATS_AT("traffic");
    uint64_t t0 = clock_ns(), sum = 0;
    collect();
    for (uint32_t i = 0; i < SCALE_QUERIES; i++) sum += pure_link_deadline(rx) & 1;
    collect();
    f.deadline_ns = (double)(clock_ns() - t0) / SCALE_QUERIES;
    if (sum > SCALE_QUERIES) abort();  /* keeps the queries from being optimised away */
    if (collecting) CALLGRIND_DUMP_STATS_AT("deadline");
    f.traffic_ns = (double)rx_ns / (double)f.packets;
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(rx, -1, &st);
    f.runs_built = st.run_key_builds, f.records = st.records_delivered, f.memo_writes = memo_setup;
    free(rx_mem), free(tx_mem);
    return f;
}

int main(int argc, char **argv) {
    bench_crypto = copy_crypto();
    bench_crypto.x25519 = xor_dh, bench_crypto.x25519_base = xor_base;
    if (argc > 2) {
        uint32_t peers = (uint32_t)strtoul(argv[1], NULL, 10);
        int memo = strcmp(argv[2], "memo") == 0, runs = memo || strcmp(argv[2], "runs") == 0;
        uint64_t packets = argc > 3 ? strtoull(argv[3], NULL, 10) : 20000;
        if (peers < 1 || peers > SCALE_PEERS_MOST) { fprintf(stderr, "bench_scale: 1..10000 peers\n"); return 2; }
        collecting = 1;
        figures f = measure(peers, runs, memo, packets);
        printf("%llu data packets, %u deadline queries, %llu runs built, %llu records delivered, %llu memo writes in the setup\n",
               (unsigned long long)f.packets, SCALE_QUERIES, (unsigned long long)f.runs_built,
               (unsigned long long)f.records, (unsigned long long)f.memo_writes);
        return 0;
    }
    printf("receiver work per data packet and per deadline query, by wired peers (time of a shared\n"
           "machine: tests/bench/callgrind_scale.sh counts instructions):\n");
    static const uint32_t counts[] = {1, 1000, 10000};
    for (int runs = 0; runs <= 1; runs++)
        for (int i = 0; i < 3; i++) {
            figures f = measure(counts[i], runs, 0, 100000);
            printf("  %5u peers %-26s %7.0f ns per data packet  %8.0f ns per deadline query\n", counts[i],
                   runs ? "(each with a live run)" : "(keys wired, no other run)", f.traffic_ns, f.deadline_ns);
        }
    return 0;
}
