/* drive_sender.c: the real pure-link sender over UDP on loopback, for the interop test
 * against an independent receiver written from spec/ alone (tests/interop/receiver.py).
 *
 *   drive_sender keys SEED            prints "<receiver secret hex> <sender public hex>"
 *   drive_sender send SEED PORT N     sends N records to 127.0.0.1:PORT, waits for STORED,
 *                                     prints "stored N sha256 <hex of all record bytes>"
 * Records are deterministic from the seed: record i has 20 + (i * 37) % 900 bytes. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pure_link.h"

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void derive(uint8_t out[32], unsigned seed, const char *what) {
    char label[64];
    snprintf(label, sizeof label, "interop %u %s", seed, what);
    crypto_hash_sha256(out, (const uint8_t *)label, strlen(label));
}

static void hex(const uint8_t *p, size_t n, char *out) {
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", p[i]);
}

static void to_addr(const struct sockaddr_in *sin, pure_link_addr *a) {
    a->len = 6;
    memcpy(a->bytes, &sin->sin_addr, 4);
    memcpy(a->bytes + 4, &sin->sin_port, 2);
}

static void from_addr(const pure_link_addr *a, struct sockaddr_in *sin) {
    memset(sin, 0, sizeof *sin);
    sin->sin_family = AF_INET;
    memcpy(&sin->sin_addr, a->bytes, 4);
    memcpy(&sin->sin_port, a->bytes + 4, 2);
}

static size_t record_len(int i) { return 20 + (size_t)(i * 37) % 900; }

int main(int argc, char **argv) {
    if (sodium_init() < 0) return 2;
    if (argc >= 3 && strcmp(argv[1], "keys") == 0) {
        unsigned seed = (unsigned)atoi(argv[2]);
        uint8_t rs[32], ss[32], sp[32];
        derive(rs, seed, "receiver");
        derive(ss, seed, "sender");
        crypto_scalarmult_base(sp, ss);
        char a[65], b[65];
        hex(rs, 32, a), hex(sp, 32, b);
        printf("%s %s\n", a, b);
        return 0;
    }
    if (argc < 5 || strcmp(argv[1], "send") != 0) {
        fprintf(stderr, "usage: drive_sender keys SEED | send SEED PORT N\n");
        return 2;
    }
    unsigned seed = (unsigned)atoi(argv[2]);
    int port = atoi(argv[3]), count = atoi(argv[4]);
    uint8_t rs[32], rp[32];
    derive(rs, seed, "receiver");
    crypto_scalarmult_base(rp, rs);

    pure_link_config cfg;
    memset(&cfg, 0, sizeof cfg);
    derive(cfg.static_secret, seed, "sender");
    cfg.peers_most = 1, cfg.runs_most = 1, cfg.senders_most = 1;
    /* No copies: on a loaded machine the independent receiver may take longer than a quarter
     * of the initial RTT to answer, and a copy of the first packet would be a second
     * epoch-0 packet that the test does not count on. */
    cfg.copies = 2;
    size_t size = pure_link_size(&cfg);
    void *mem = aligned_alloc(PURE_LINK_ALIGN, (size + PURE_LINK_ALIGN - 1) / PURE_LINK_ALIGN * PURE_LINK_ALIGN);
    uint8_t rnd[32];
    randombytes_buf(rnd, sizeof rnd);
    pure_link *pl = pure_link_init(mem, size, &cfg, rnd, now_ns());
    if (!pl) return 2;

    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in local = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(fd, (struct sockaddr *)&local, sizeof local) != 0) { perror("bind"); return 2; }
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    pure_link_sender_config sc;
    memset(&sc, 0, sizeof sc);
    memcpy(sc.receiver_public, rp, 32);
    to_addr(&dst, &sc.receiver_addr);
    sc.version = PURE_LINK_VERSION;
    sc.source = "interop-out";
    sc.input = "interop-in";
    sc.shape = 1;
    int s = pure_link_sender_open(pl, &sc, now_ns());
    if (s < 0) { fprintf(stderr, "open: %s\n", pure_link_strerror(s)); return 2; }

    crypto_hash_sha256_state hs;
    crypto_hash_sha256_init(&hs);
    uint8_t rec[1024];
    for (int i = 0; i < count; i++) {
        size_t n = record_len(i);
        for (size_t k = 0; k < n; k++) rec[k] = (uint8_t)(seed + (unsigned)i * 7u + (unsigned)k);
        crypto_hash_sha256_update(&hs, rec, n);
        if (pure_link_send(pl, s, rec, n, now_ns()) != i) { fprintf(stderr, "send failed\n"); return 2; }
    }
    uint8_t digest[32];
    crypto_hash_sha256_final(&hs, digest);

    int64_t stored = 0;
    /* Epoch-0 packets counted by their clear header (wire.md §3.3: E = 0 in the flags' low
     * bits), and those sent after the first reply arrived, for the test to check. */
    unsigned epoch0_sent = 0, epoch0_after_reply = 0, replies_heard = 0;
    uint64_t give_up = now_ns() + 20ull * 1000000000ull;
    uint8_t buf[PURE_LINK_DATAGRAM_MOST];
    while (stored < count && now_ns() < give_up) {
        pure_link_event ev;
        while (pure_link_event_next(pl, &ev))
            if (ev.kind == PURE_LINK_EVENT_STORED) stored = ev.record;
            else if (ev.kind == PURE_LINK_EVENT_REFUSED) fprintf(stderr, "refused, reason %u\n", ev.reason);
        pure_link_addr to;
        int len;
        while ((len = pure_link_pull(pl, buf, sizeof buf, &to, now_ns())) > 0) {
            struct sockaddr_in sin;
            from_addr(&to, &sin);
            if ((buf[1] & 0x0f) == 0) {
                epoch0_sent++;
                if (replies_heard) epoch0_after_reply++;
            }
            sendto(fd, buf, (size_t)len, 0, (struct sockaddr *)&sin, sizeof sin);
        }
        uint64_t t = now_ns(), d = pure_link_deadline(pl);
        int wait_ms = d == UINT64_MAX ? 50 : d <= t ? 0 : (int)((d - t) / 1000000) + 1;
        if (wait_ms > 50) wait_ms = 50;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, wait_ms) > 0) {
            struct sockaddr_in from;
            socklen_t fl = sizeof from;
            ssize_t r = recvfrom(fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
            if (r > 0) {
                pure_link_addr fa;
                to_addr(&from, &fa);
                replies_heard++;
                pure_link_receive(pl, &fa, buf, (size_t)r, now_ns());
            }
        }
        if (pure_link_deadline(pl) <= now_ns()) pure_link_tick(pl, now_ns());
    }
    char h[65];
    hex(digest, 32, h);
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(pl, s, &st);
    printf("stored %lld sha256 %s packets_sent %llu epochs %llu epoch0_sent %u epoch0_after_reply %u\n",
           (long long)stored, h, (unsigned long long)st.packets_sent, (unsigned long long)st.epochs,
           epoch0_sent, epoch0_after_reply);
    free(mem);
    return stored == count ? 0 : 1;
}
