/* load_hostile.c: hostile load on a live receiver.  While `pure-link send` transfers to
 * `pure-link recv` on loopback, this sends COUNT datagrams at the receiver (and some at the
 * sender) at RATE per second, from many 127.0.0.x addresses, of these kinds:
 *
 *   random      random bytes, 1..1,500 B
 *   e0_badtag   a valid sender header of a wired key id (the live sender's, or a wired key
 *               that never sent: its static X25519 is made lazily), epoch 0, a random run,
 *               a random body: a tag that fails
 *   live_badtag a valid header of the live run (its key id and run), epochs 0..15, random body
 *   truncated   captured packets of both directions, cut short anywhere
 *   replay      captured packets of both directions, whole, from other loopback addresses
 *   replay_tx   captured replies sent to the sender from other addresses
 *   unknown_key genuine first packets (OFFER, STREAM, a record) of keys that are not wired,
 *               and sender headers with random key ids
 *   lost_bait   epoch >= 1 datagrams of 4 runs the receiver does not know under the live key
 *               id: these draw LOST by design (spec/protocol.md §7, at most one per 100 ms
 *               per (peer, run, address)); each LOST that comes back is forwarded to the sender
 *   lost_forged LOST-sized replies carrying the live run's id, to the sender
 *
 * The captures come from an AF_PACKET socket on lo (root), opened before the sender starts,
 * so they hold the run's first packet.  Every attacking socket reads what comes back: any
 * byte but a LOST at the bait socket is an answer to something unauthenticated.
 *
 * Measured and printed: those bytes; the LOSTs; the receiver's resident memory before and
 * after; the store's growth (the transfer's goodput) in the attack's phases against the
 * quiet phases between them.  The X25519 count comes from the receiver's --stats (the
 * script).
 *
 *   load_hostile --to 127.0.0.1:PORT --pid RECV_PID --store DIR --live-pub HEX --silent-pub HEX
 *                --receiver-pub HEX [--count N] [--rate PER_S] [--phase-ms MS] [--warmup-ms MS]
 * It prints "capturing" when the capture is open (start the sender then), the figures, and
 * last one line "hostile {json}". */
#include "load.h"

#include <getopt.h>
#include <glob.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/stat.h>

#include "crypto.h"
#include "pure_link.h"
#include "wire.h"

#define CAPTURE_MOST 512u        /* packets kept per direction */
#define CAPTURE_NS 8000000000ull /* give up if the transfer shows nothing in this long */
#define UNKNOWN_KEYS 16u         /* unwired keys whose genuine first packets are replayed */
#define BAIT_RUNS 4u             /* unknown runs of lost_bait: bounds the LOSTs it may draw */
#define REPLAY_HOSTS 8u          /* 127.0.0.40.. send the replays */
#define BATCH 32u
#define LOST_BYTES 53u           /* a LOST datagram (wire.md §6.12) */

enum { K_RANDOM, K_E0, K_LIVE, K_TRUNC, K_REPLAY, K_REPLAY_TX, K_UNKNOWN, K_BAIT, K_FORGED, K_KINDS };
static const char *const KIND_NAME[K_KINDS] = {"random",    "e0_badtag",   "live_badtag", "truncated", "replay",
                                               "replay_tx", "unknown_key", "lost_bait",   "lost_forged"};
static const unsigned KIND_WEIGHT[K_KINDS] = {15, 15, 15, 10, 15, 5, 15, 5, 5};  /* of 100 */

typedef struct pkt {
    uint16_t len;
    uint8_t b[PURE_LINK_DATAGRAM_MOST];
} pkt;

typedef struct batch {
    int fd;
    unsigned n;
    struct mmsghdr m[BATCH];
    struct iovec iov[BATCH];
    struct sockaddr_in to[BATCH];
    uint8_t buf[BATCH][1500];
} batch;

typedef struct hostile {
    struct sockaddr_in rx, tx;          /* the receiver, the live sender (from the capture) */
    pkt *cap_tx, *cap_rx;               /* sender packets, replies */
    unsigned cap_tx_n, cap_rx_n;
    pkt unknown[UNKNOWN_KEYS];
    uint32_t live_key_id, silent_key_id;
    uint64_t live_run, bait_runs[BAIT_RUNS];
    uint8_t live_field;                 /* the epoch field of the newest captured packet */
    batch kind[K_KINDS], replay[REPLAY_HOSTS + 1];
    uint64_t sent[K_KINDS], answered_bytes[K_KINDS], answered_datagrams[K_KINDS];
    uint64_t lost_received, lost_forwarded, sent_errors;
    load_rng rng;
} hostile;

static int hex32(const char *text, uint8_t out[32]) {
    if (strlen(text) != 64) return -1;
    for (int i = 0; i < 32; i++)
        if (sscanf(text + 2 * i, "%2hhx", &out[i]) != 1) return -1;
    return 0;
}

/* ---- capture ---- */

static int capture_open(void) {
    int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_IP));
    if (fd < 0) {
        fprintf(stderr, "load_hostile: AF_PACKET capture on lo needs root: %s\n", strerror(errno));
        return -1;
    }
    int one = 1;  /* a GSO train arrives whole: its header says the segment size */
    if (setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof one) != 0) {
        fprintf(stderr, "load_hostile: PACKET_VNET_HDR: %s\n", strerror(errno));
        close(fd);
        return -1;
    }
    struct sockaddr_ll ll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP),
                             .sll_ifindex = (int)if_nametoindex("lo")};
    if (bind(fd, (struct sockaddr *)&ll, sizeof ll) != 0) {
        fprintf(stderr, "load_hostile: bind to lo: %s\n", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static void keep(pkt *ring, unsigned *n, const uint8_t *p, size_t len) {
    if (*n >= CAPTURE_MOST || len > PURE_LINK_DATAGRAM_MOST || len == 0) return;
    ring[*n].len = (uint16_t)len;
    memcpy(ring[*n].b, p, len);
    (*n)++;
}

/* One captured IPv4 frame: UDP to or from the receiver, split into its GSO segments. */
static void capture_one(hostile *h, const uint8_t *f, size_t n, unsigned gso) {
    if (n < 28 || (f[0] >> 4) != 4 || f[9] != IPPROTO_UDP) return;
    size_t ihl = (size_t)(f[0] & 15) * 4;
    if (n < ihl + 8) return;
    const uint8_t *u = f + ihl;
    uint32_t src, dst;
    uint16_t sport, dport;
    memcpy(&src, f + 12, 4), memcpy(&dst, f + 16, 4), memcpy(&sport, u, 2), memcpy(&dport, u + 2, 2);
    const uint8_t *d = u + 8;
    size_t len = n - ihl - 8, seg = gso ? gso : len;
    int to_rx = dst == h->rx.sin_addr.s_addr && dport == h->rx.sin_port;
    int from_rx = src == h->rx.sin_addr.s_addr && sport == h->rx.sin_port;
    if (!to_rx && !from_rx) return;
    if (to_rx && h->tx.sin_port == 0)
        h->tx = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = sport, .sin_addr.s_addr = src};
    for (size_t at = 0; at < len; at += seg) {
        size_t l = len - at < seg ? len - at : seg;
        if (to_rx) {
            pl_header hd;
            if (pl_header_decode(&hd, d + at, l) > 0 && !hd.reply) {
                h->live_key_id = hd.key_id, h->live_run = hd.run, h->live_field = hd.epoch_field;
            }
            keep(h->cap_tx, &h->cap_tx_n, d + at, l);
        } else {
            keep(h->cap_rx, &h->cap_rx_n, d + at, l);
        }
    }
}

/* Until enough of both directions (and at least one epoch >= 1 packet) or the limit. */
static int capture(hostile *h, int fd) {
    static uint8_t buf[70000];
    uint64_t end = pl_now_ns() + CAPTURE_NS;
    while (pl_now_ns() < end && !(h->cap_tx_n >= CAPTURE_MOST && h->cap_rx_n >= CAPTURE_MOST / 4)) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0) continue;
        struct sockaddr_ll from;
        socklen_t fl = sizeof from;
        ssize_t r = recvfrom(fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
        size_t head = sizeof(struct virtio_net_hdr) + ETH_HLEN;  /* lo's frames have an Ethernet header */
        if (r < (ssize_t)head || from.sll_pkttype == PACKET_OUTGOING) continue;
        struct virtio_net_hdr vh;
        memcpy(&vh, buf, sizeof vh);
        unsigned gso = vh.gso_type != VIRTIO_NET_HDR_GSO_NONE ? vh.gso_size : 0;
        capture_one(h, buf + head, (size_t)r - head, gso);
    }
    close(fd);
    if (h->cap_tx_n == 0 || h->cap_rx_n == 0 || h->live_run == 0) {
        fprintf(stderr, "load_hostile: captured %u sender packets and %u replies: no live transfer\n", h->cap_tx_n,
                h->cap_rx_n);
        return -1;
    }
    return 0;
}

/* ---- genuine first packets of keys the receiver does not know ---- */

static int make_unknown(hostile *h, const uint8_t receiver_pub[32]) {
    pure_link_config c = {0};
    c.senders_most = 1, c.peers_most = PURE_LINK_NONE, c.packets_in_flight_most = 64;
    size_t size = pure_link_size(&c);
    void *mem = aligned_alloc(PURE_LINK_ALIGN, (size + PURE_LINK_ALIGN - 1) / PURE_LINK_ALIGN * PURE_LINK_ALIGN);
    if (!mem) return -1;
    for (unsigned k = 0; k < UNKNOWN_KEYS; k++) {
        uint8_t seed[32];
        load_fill(&h->rng, c.static_secret, 32), load_fill(&h->rng, seed, 32);
        pure_link *pl = pure_link_init(mem, size, &c, seed, pl_now_ns());
        pure_link_sender_config sc = {.version = PURE_LINK_VERSION, .source = "out", .input = "logs", .shape = 1};
        memcpy(sc.receiver_public, receiver_pub, 32);
        pl_addr_from_sockaddr((const struct sockaddr *)&h->rx, &sc.receiver_addr);
        int s = pl ? pure_link_sender_open(pl, &sc, pl_now_ns()) : -1;
        uint8_t record[600];
        load_fill(&h->rng, record, sizeof record);
        pure_link_addr to;
        int n = s >= 0 && pure_link_send(pl, s, record, sizeof record, pl_now_ns()) >= 0
                    ? pure_link_pull(pl, h->unknown[k].b, sizeof h->unknown[k].b, &to, pl_now_ns())
                    : -1;
        if (n <= 0) {
            free(mem);
            fprintf(stderr, "load_hostile: no first packet from an unwired key\n");
            return -1;
        }
        h->unknown[k].len = (uint16_t)n;
    }
    free(mem);
    return 0;
}

/* ---- building and sending ---- */

/* A sender header (epoch field `field`, key id, run, a random packet number) and a random
 * body to `len` bytes. */
static size_t forge_sender(hostile *h, uint8_t *out, size_t len, uint32_t key_id, uint64_t run, uint8_t field) {
    pl_header hd = {.reply = 0, .pn_len = (uint8_t)(1 + load_below(&h->rng, 4)), .epoch_field = field,
                    .key_id = key_id, .run = run};
    hd.pn_truncated = load_next(&h->rng) & ((1ull << (8 * hd.pn_len)) - 1);
    size_t at = pl_header_encode(out, len, &hd);
    load_fill(&h->rng, out + at, len - at);
    return len;
}

static size_t forge_lost(hostile *h, uint8_t *out) {
    pl_header hd = {.reply = 1, .pn_len = 1, .epoch_field = 0, .run = h->live_run, .reply_run = load_next(&h->rng)};
    size_t at = pl_header_encode(out, LOST_BYTES, &hd);
    load_fill(&h->rng, out + at, LOST_BYTES - at);
    out[at] = PL_FRAME_LOST;  /* the plaintext's first byte, as if the attacker could seal */
    return LOST_BYTES;
}

static const pkt *pick(hostile *h, int replies) {
    int rx = replies == 1 || (replies < 0 && load_below(&h->rng, 2));
    return rx ? &h->cap_rx[load_below(&h->rng, h->cap_rx_n)] : &h->cap_tx[load_below(&h->rng, h->cap_tx_n)];
}

static void flush(hostile *h, batch *b) {
    unsigned at = 0;
    while (at < b->n) {
        int r = sendmmsg(b->fd, b->m + at, b->n - at, 0);
        if (r <= 0) {
            if (r < 0 && errno != EAGAIN && errno != ENOBUFS && errno != ECONNREFUSED) h->sent_errors++;
            break;  /* a full socket buffer drops the rest: the attacker does not care */
        }
        at += (unsigned)r;
    }
    b->n = 0;
}

/* Room for one datagram to `to` in the batch of `b` (flushed when full). */
static uint8_t *slot(hostile *h, batch *b, const struct sockaddr_in *to, size_t len) {
    if (b->n == BATCH) flush(h, b);
    unsigned i = b->n++;
    b->to[i] = *to;
    b->iov[i] = (struct iovec){b->buf[i], len};
    b->m[i].msg_hdr = (struct msghdr){.msg_name = &b->to[i], .msg_namelen = sizeof b->to[i],
                                      .msg_iov = &b->iov[i], .msg_iovlen = 1};
    return b->buf[i];
}

static void copy_to(hostile *h, batch *b, const struct sockaddr_in *to, const uint8_t *p, size_t len) {
    memcpy(slot(h, b, to, len), p, len);
}

static void one(hostile *h, unsigned kind) {
    load_rng *r = &h->rng;
    batch *b = &h->kind[kind];
    uint8_t tmp[PURE_LINK_DATAGRAM_MOST];
    size_t len = 64 + load_below(r, PURE_LINK_DATAGRAM_MOST - 64 + 1);
    h->sent[kind]++;
    switch (kind) {
    case K_RANDOM: {
        size_t n = 1 + load_below(r, 1500);
        load_fill(r, slot(h, b, &h->rx, n), n);
        break;
    }
    case K_E0: {
        uint32_t id = load_below(r, 4) ? h->live_key_id : h->silent_key_id;
        forge_sender(h, slot(h, b, &h->rx, len), len, id, load_next(r) | 1, 0);
        break;
    }
    case K_LIVE:
        forge_sender(h, slot(h, b, &h->rx, len), len, h->live_key_id, h->live_run,
                     load_below(r, 2) ? h->live_field : (uint8_t)load_below(r, 16));
        break;
    case K_TRUNC: {
        const pkt *p = pick(h, -1);
        copy_to(h, b, &h->rx, p->b, load_below(r, p->len));
        break;
    }
    case K_REPLAY: {
        const pkt *p = pick(h, -1);
        copy_to(h, &h->replay[load_below(r, REPLAY_HOSTS + 1)], &h->rx, p->b, p->len);
        break;
    }
    case K_REPLAY_TX: {
        const pkt *p = pick(h, 1);
        copy_to(h, &h->replay[load_below(r, REPLAY_HOSTS + 1)], &h->tx, p->b, p->len);
        break;
    }
    case K_UNKNOWN:
        if (load_below(r, 2)) {
            const pkt *p = &h->unknown[load_below(r, UNKNOWN_KEYS)];
            copy_to(h, b, &h->rx, p->b, p->len);
        } else {
            uint32_t id = (uint32_t)load_next(r);
            if (id == h->live_key_id || id == h->silent_key_id) id ^= 1;
            forge_sender(h, tmp, len, id, load_next(r) | 1, (uint8_t)load_below(r, 16));
            copy_to(h, b, &h->rx, tmp, len);
        }
        break;
    case K_BAIT:
        forge_sender(h, slot(h, b, &h->rx, len), len, h->live_key_id, h->bait_runs[load_below(r, BAIT_RUNS)],
                     (uint8_t)(1 + load_below(r, 15)));
        break;
    case K_FORGED: forge_lost(h, slot(h, b, &h->tx, LOST_BYTES)); break;
    }
}

/* Reads what came back to every attacking socket; forwards the bait's LOSTs to the sender. */
static void drain(hostile *h) {
    uint8_t buf[2048];
    for (unsigned k = 0; k < K_KINDS + REPLAY_HOSTS + 1; k++) {
        int fd = k < K_KINDS ? h->kind[k].fd : h->replay[k - K_KINDS].fd;
        unsigned kind = k < K_KINDS ? k : K_REPLAY;
        ssize_t n;
        while ((n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) >= 0) {
            if (kind == K_BAIT && n == LOST_BYTES && (buf[1] & 0x80)) {
                h->lost_received++;
                h->lost_forwarded++;
                copy_to(h, &h->kind[K_FORGED], &h->tx, buf, (size_t)n);
                continue;
            }
            h->answered_bytes[kind] += (uint64_t)n;
            h->answered_datagrams[kind]++;
        }
    }
}

static void flush_all(hostile *h) {
    for (unsigned k = 0; k < K_KINDS; k++) flush(h, &h->kind[k]);
    for (unsigned k = 0; k <= REPLAY_HOSTS; k++) flush(h, &h->replay[k]);
}

static unsigned draw_kind(hostile *h) {
    unsigned x = (unsigned)load_below(&h->rng, 100);
    for (unsigned k = 0; k < K_KINDS; k++) {
        if (x < KIND_WEIGHT[k]) return k;
        x -= KIND_WEIGHT[k];
    }
    return K_RANDOM;
}

/* ---- the transfer's goodput: the store's record files as they grow ---- */

static uint64_t store_bytes(const char *dir) {
    char pattern[4096];
    snprintf(pattern, sizeof pattern, "%s/*.plr", dir);
    glob_t g;
    uint64_t total = 0;
    if (glob(pattern, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) {
            struct stat st;
            if (stat(g.gl_pathv[i], &st) == 0) total += (uint64_t)st.st_size;
        }
        globfree(&g);
    }
    return total;
}

/* Store bytes and seconds of the phases with and without the attack. */
typedef struct phases {
    uint64_t bytes[2], rcvbuf_errors[2];
    int64_t rss_kib_growth[2];
    double secs[2], cpu_rx[2];
} phases;

/* UDP datagrams the kernel dropped for a full receive buffer, machine-wide
 * (/proc/net/snmp, Udp: RcvbufErrors): during the bench nearly all of them the receiver's. */
static uint64_t rcvbuf_errors(void) {
    FILE *f = fopen("/proc/net/snmp", "r");
    char line[1024];
    unsigned long long v = 0;
    int header = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "Udp: ", 5) != 0) continue;
        if (!header++) continue;  /* the first Udp: line names the fields */
        sscanf(line, "Udp: %*u %*u %*u %*u %llu", &v);
        break;
    }
    if (f) fclose(f);
    return v;
}

/* One phase of `ms`: with `attacking`, as many datagrams as RATE owes every millisecond
 * (at most `left`); without, only what comes back is read.  Returns the datagrams sent. */
static uint64_t phase(hostile *h, const char *store, long pid, int attacking, uint64_t ms, uint64_t rate,
                      uint64_t left, phases *ph) {
    uint64_t start = pl_now_ns(), end = start + ms * 1000000ull, done = 0, b0 = store_bytes(store);
    uint64_t e0 = rcvbuf_errors(), rss0 = load_rss_kib(pid);
    double cpu0 = load_cpu_s(pid);
    for (uint64_t now = start; now < end; now = pl_now_ns()) {
        uint64_t owed = attacking ? (now - start) * rate / 1000000000ull + 1 : 0;
        if (owed > left) owed = left;
        for (; done < owed; done++) one(h, draw_kind(h));
        flush_all(h);
        drain(h);
        load_sleep_ns(1000000);
    }
    ph->bytes[attacking] += store_bytes(store) - b0;
    ph->rcvbuf_errors[attacking] += rcvbuf_errors() - e0;
    ph->rss_kib_growth[attacking] += (int64_t)load_rss_kib(pid) - (int64_t)rss0;
    ph->secs[attacking] += (double)(pl_now_ns() - start) / 1e9;
    ph->cpu_rx[attacking] += load_cpu_s(pid) - cpu0;
    return done;
}

/* COUNT datagrams at RATE in phases of PHASE_MS, each followed by as long a quiet one, so
 * that whatever else changes the transfer's pace (the disk's write-back, other work on the
 * machine) weighs on both alike; then a last quiet phase for late answers. */
static void attack(hostile *h, const char *store, long pid, uint64_t count, uint64_t rate, uint64_t phase_ms,
                   uint64_t warmup_ms, phases *ph) {
    phases warm = {0};  /* the transfer's own growth first: its receive pool fills as it goes */
    if (warmup_ms) phase(h, store, pid, 0, warmup_ms, rate, 0, &warm);
    for (uint64_t done = 0; done < count;) {
        done += phase(h, store, pid, 1, phase_ms, rate, count - done, ph);
        phase(h, store, pid, 0, phase_ms, rate, 0, ph);
    }
}

typedef struct options {
    const char *to, *store, *live_pub, *silent_pub, *receiver_pub;
    long pid;
    uint64_t count, rate, phase_ms, warmup_ms;
} options;

static int parse(int argc, char **argv, options *o) {
    static const struct option longs[] = {
        {"to", 1, 0, 't'},         {"pid", 1, 0, 'p'},    {"store", 1, 0, 's'},     {"live-pub", 1, 0, 'l'},
        {"silent-pub", 1, 0, 'q'}, {"receiver-pub", 1, 0, 'r'}, {"count", 1, 0, 'n'}, {"rate", 1, 0, 'R'},
        {"phase-ms", 1, 0, 'w'},   {"warmup-ms", 1, 0, 'W'},  {0, 0, 0, 0}};
    *o = (options){.count = 1000000, .rate = 50000, .phase_ms = 500, .warmup_ms = 2000};
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 't': o->to = optarg; break;
        case 'p': o->pid = atol(optarg); break;
        case 's': o->store = optarg; break;
        case 'l': o->live_pub = optarg; break;
        case 'q': o->silent_pub = optarg; break;
        case 'r': o->receiver_pub = optarg; break;
        case 'n': o->count = strtoull(optarg, NULL, 10); break;
        case 'R': o->rate = strtoull(optarg, NULL, 10); break;
        case 'w': o->phase_ms = strtoull(optarg, NULL, 10); break;
        case 'W': o->warmup_ms = strtoull(optarg, NULL, 10); break;
        default: return -1;
        }
    }
    if (!o->to || !o->store || !o->live_pub || !o->silent_pub || !o->receiver_pub || o->pid <= 0 || !o->rate) {
        fprintf(stderr, "usage: load_hostile --to 127.0.0.1:PORT --pid RECV_PID --store DIR --live-pub HEX "
                        "--silent-pub HEX --receiver-pub HEX [--count N] [--rate PER_S] [--phase-ms MS] [--warmup-ms MS]\n");
        return -1;
    }
    return 0;
}

static int setup(hostile *h, const options *o) {
    uint8_t silent[32], rpub[32];
    if (load_parse_loopback(o->to, &h->rx) != 0) return -1;
    if (hex32(o->silent_pub, silent) || hex32(o->receiver_pub, rpub)) {
        fprintf(stderr, "load_hostile: a public key is not 64 hex digits\n");
        return -1;
    }
    h->rng.s = pl_now_ns() ^ ((uint64_t)getpid() << 32) ^ 0x9E3779B97F4A7C15ull;
    h->silent_key_id = pl_key_id(silent);
    for (unsigned i = 0; i < BAIT_RUNS; i++) h->bait_runs[i] = load_next(&h->rng) | 1;
    for (unsigned k = 0; k < K_KINDS; k++)
        if ((h->kind[k].fd = load_socket(10 + k, 0, 1 << 20)) < 0) return -1;
    for (unsigned k = 0; k < REPLAY_HOSTS; k++)
        if ((h->replay[k].fd = load_socket(40 + k, 0, 1 << 20)) < 0) return -1;
    /* One more from the sender's own host, another port. */
    if ((h->replay[REPLAY_HOSTS].fd = load_socket(1, 0, 1 << 20)) < 0) return -1;
    return make_unknown(h, rpub);
}

static int hostile_main(hostile *h, const options *op) {
    options o = *op;
    if (setup(h, &o) != 0) return 1;
    int cap = capture_open();
    if (cap < 0) return 1;
    printf("capturing\n");
    fflush(stdout);
    if (capture(h, cap) != 0) return 1;
    uint8_t live[32];
    hex32(o.live_pub, live);
    if (pl_key_id(live) != h->live_key_id) {
        fprintf(stderr, "load_hostile: the captured key id is not the live sender's\n");
        return 1;
    }
    printf("captured %u sender packets and %u replies of run %016llx (sender at port %u)\n", h->cap_tx_n,
           h->cap_rx_n, (unsigned long long)h->live_run, ntohs(h->tx.sin_port));

    uint64_t rss0 = load_rss_kib(o.pid);
    double self0 = load_cpu_s(getpid());
    phases ph = {0};
    uint64_t t0 = pl_now_ns();
    attack(h, o.store, o.pid, o.count, o.rate, o.phase_ms, o.warmup_ms, &ph);
    double secs = (double)(pl_now_ns() - t0) / 1e9, self1 = load_cpu_s(getpid());
    uint64_t rss1 = load_rss_kib(o.pid);
    if (rss0 == 0 || rss1 == 0) {
        fprintf(stderr, "load_hostile: the receiver (pid %ld) is gone\n", o.pid);
        return 1;
    }
    double quiet_bps = ph.secs[0] > 0 ? (double)ph.bytes[0] * 8 / ph.secs[0] : 0;
    double during_bps = ph.secs[1] > 0 ? (double)ph.bytes[1] * 8 / ph.secs[1] : 0;
    uint64_t total = 0, answered = 0;
    for (unsigned k = 0; k < K_KINDS; k++) total += h->sent[k], answered += h->answered_bytes[k];
    printf("attack: %llu datagrams at %llu per second in %.1f s of %llu ms phases, each followed by as long a "
           "quiet one (%.1f s in all); %llu send errors\n",
           (unsigned long long)total, (unsigned long long)o.rate, ph.secs[1], (unsigned long long)o.phase_ms, secs,
           (unsigned long long)h->sent_errors);
    for (unsigned k = 0; k < K_KINDS; k++)
        printf("  %-12s %8llu sent, %llu B answered in %llu datagrams\n", KIND_NAME[k],
               (unsigned long long)h->sent[k], (unsigned long long)h->answered_bytes[k],
               (unsigned long long)h->answered_datagrams[k]);
    printf("bytes answered to unauthenticated input: %llu\n", (unsigned long long)answered);
    printf("LOST drawn by lost_bait (spec §7): %llu (%llu B), all forwarded to the sender\n",
           (unsigned long long)h->lost_received, (unsigned long long)(h->lost_received * LOST_BYTES));
    printf("receiver RSS: %llu KiB before the warm-up, %llu KiB after the attack; it grew %+lld KiB over the "
           "attack's phases, %+lld KiB over the quiet ones\n", (unsigned long long)rss0, (unsigned long long)rss1,
           (long long)ph.rss_kib_growth[1], (long long)ph.rss_kib_growth[0]);
    printf("receiver CPU: %.2f s in the attack's phases, %.2f s in the quiet ones; generator: %.2f s\n",
           ph.cpu_rx[1], ph.cpu_rx[0], self1 - self0);
    printf("datagrams dropped by the kernel for a full receive buffer (machine-wide): %llu in the attack's phases, "
           "%llu in the quiet ones\n", (unsigned long long)ph.rcvbuf_errors[1], (unsigned long long)ph.rcvbuf_errors[0]);
    printf("goodput: %.0f Mbit/s in the quiet phases, %.0f during the attack: %.2f of without\n", quiet_bps / 1e6,
           during_bps / 1e6, quiet_bps > 0 ? during_bps / quiet_bps : 0);
    printf("hostile {\"datagrams\":%llu,\"attack_seconds\":%.3f,\"rate\":%llu,\"answered_bytes\":%llu,"
           "\"wall_seconds\":%.3f,\"lost_received\":%llu,\"bait_runs\":%u,\"rss_kib_before\":%llu,\"rss_kib_after\":%llu,"
           "\"rss_kib_growth_attack\":%lld,\"rss_kib_growth_quiet\":%lld,"
           "\"goodput_quiet_bps\":%.0f,\"goodput_attack_bps\":%.0f,\"receiver_cpu_s\":%.3f,"
           "\"generator_cpu_s\":%.3f,\"rcvbuf_errors_attack\":%llu,\"rcvbuf_errors_quiet\":%llu}\n",
           (unsigned long long)total, ph.secs[1], (unsigned long long)o.rate, (unsigned long long)answered, secs,
           (unsigned long long)h->lost_received, BAIT_RUNS, (unsigned long long)rss0, (unsigned long long)rss1,
           (long long)ph.rss_kib_growth[1], (long long)ph.rss_kib_growth[0], quiet_bps, during_bps, ph.cpu_rx[1], self1 - self0, (unsigned long long)ph.rcvbuf_errors[1],
           (unsigned long long)ph.rcvbuf_errors[0]);
    return 0;
}

int main(int argc, char **argv) {
    options o;
    if (parse(argc, argv, &o) != 0) return 2;
    hostile *h = calloc(1, sizeof *h);
    if (!h || !(h->cap_tx = calloc(CAPTURE_MOST, sizeof(pkt))) || !(h->cap_rx = calloc(CAPTURE_MOST, sizeof(pkt))))
        return 1;
    for (unsigned k = 0; k < K_KINDS; k++) h->kind[k].fd = -1;
    for (unsigned k = 0; k <= REPLAY_HOSTS; k++) h->replay[k].fd = -1;
    int rc = hostile_main(h, &o);
    for (unsigned k = 0; k < K_KINDS; k++)
        if (h->kind[k].fd >= 0) close(h->kind[k].fd);
    for (unsigned k = 0; k <= REPLAY_HOSTS; k++)
        if (h->replay[k].fd >= 0) close(h->replay[k].fd);
    free(h->cap_tx), free(h->cap_rx), free(h);
    return rc;
}
