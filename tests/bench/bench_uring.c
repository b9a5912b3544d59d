/* bench_uring.c: kernel cost of moving 1,452 B datagrams over loopback, io_uring (the
 * driver of shims/io/pl_uring.h) next to plain sendmmsg/recvmmsg, each with and without UDP
 * GSO/GRO, in the same run.  One thread sends a batch and receives it back, so the CPU
 * time (getrusage, user + system) is the sender's and the receiver's kernel work together.
 * Each datagram is written into its send buffer first, as pure_link_pull writes it, so
 * that both paths copy from memory as warm as a real sender's.
 * Figures: Gbit/s of payload, Gbit of payload per CPU-second, ns of CPU per datagram; each
 * the best of BENCH_ROUNDS rounds of BENCH_ROUND_NS (the machine is shared). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pl_uring.h"

#define BENCH_ROUNDS 3
#define BENCH_ROUND_NS 700000000ull
#define BENCH_BATCH 256u                   /* datagrams sent before they are received */
#define BENCH_LEN PL_URING_DATAGRAM_MOST
#define BENCH_GSO_SEGMENTS 44u             /* 44 x 1,452 B fit one 64 KiB GSO send */
#define BENCH_GRO_BUFFER 65536u
#define BENCH_LOST_AFTER_NS 200000000ull   /* a batch short this long lost datagrams */

typedef struct pair {
    int tx, rx;
    struct sockaddr_in rx_addr;
} pair;

typedef struct backend {
    const char *name;
    int gso_gro;
    int (*open)(struct backend *b, pair *p);
    unsigned (*round_trip)(struct backend *b, pair *p);   /* datagrams received of one batch */
    void (*close)(struct backend *b);
    pl_uring *utx, *urx;
} backend;

/* The plain path sends from a batch buffer packed back to back, as a shim that pulls a
 * whole batch before one sendmmsg does (the memory it touches is the batch's). */
static uint8_t payload[BENCH_BATCH * BENCH_LEN];
static uint8_t rx_mem[64][BENCH_GRO_BUFFER];

static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static int pair_open(pair *p) {
    p->tx = socket(AF_INET, SOCK_DGRAM, 0);
    p->rx = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (p->tx < 0 || p->rx < 0 || bind(p->tx, (struct sockaddr *)&a, sizeof a) || bind(p->rx, (struct sockaddr *)&a, sizeof a))
        return -1;
    int big = 16 << 20;
    setsockopt(p->rx, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
    setsockopt(p->tx, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof big);
    socklen_t len = sizeof p->rx_addr;
    return getsockname(p->rx, (struct sockaddr *)&p->rx_addr, &len);
}

/* ---- plain sockets: sendmmsg / recvmmsg ---- */

static int posix_open(backend *b, pair *p) {
    int one = 1;
    if (b->gso_gro && setsockopt(p->rx, SOL_UDP, UDP_GRO, &one, sizeof one) != 0) return -1;
    return 0;
}

static void posix_send(backend *b, pair *p) {
    struct mmsghdr m[BENCH_BATCH];
    struct iovec iov[BENCH_BATCH];
    union { char buf[CMSG_SPACE(sizeof(uint16_t))]; struct cmsghdr align; } ctl;
    unsigned per = b->gso_gro ? BENCH_GSO_SEGMENTS : 1, msgs = 0;
    memset(m, 0, sizeof m);
    for (unsigned i = 0; i < BENCH_BATCH; i++)   /* what pure_link_pull does: write each datagram */
        memset(payload + (size_t)i * BENCH_LEN, (int)i, BENCH_LEN);
    for (unsigned sent = 0; sent < BENCH_BATCH; sent += per, msgs++) {
        unsigned n = BENCH_BATCH - sent < per ? BENCH_BATCH - sent : per;
        iov[msgs] = (struct iovec){ payload + (size_t)sent * BENCH_LEN, n * BENCH_LEN };
        struct msghdr *h = &m[msgs].msg_hdr;
        h->msg_name = &p->rx_addr;
        h->msg_namelen = sizeof p->rx_addr;
        h->msg_iov = &iov[msgs];
        h->msg_iovlen = 1;
        if (n > 1) {
            h->msg_control = ctl.buf;
            h->msg_controllen = sizeof ctl.buf;
            struct cmsghdr *c = CMSG_FIRSTHDR(h);
            c->cmsg_level = SOL_UDP, c->cmsg_type = UDP_SEGMENT, c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
            uint16_t seg = BENCH_LEN;
            memcpy(CMSG_DATA(c), &seg, sizeof seg);
        }
    }
    for (unsigned done = 0; done < msgs;) {
        int r = sendmmsg(p->tx, m + done, msgs - done, 0);
        if (r <= 0) return;
        done += (unsigned)r;
    }
}

/* Datagrams in one received message: its GRO segments, or one. */
static unsigned posix_segments(const struct msghdr *h, unsigned len) {
    for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR((struct msghdr *)h, c))
        if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
            int seg;
            memcpy(&seg, CMSG_DATA(c), sizeof seg);
            return seg > 0 ? (len + (unsigned)seg - 1) / (unsigned)seg : 1;
        }
    return 1;
}

static unsigned posix_round_trip(backend *b, pair *p) {
    posix_send(b, p);
    struct mmsghdr m[64];
    struct iovec iov[64];
    char ctl[64][CMSG_SPACE(sizeof(int))];
    unsigned got = 0;
    uint64_t give_up_ns = pl_uring_now_ns() + BENCH_LOST_AFTER_NS;
    while (got < BENCH_BATCH && pl_uring_now_ns() < give_up_ns) {
        memset(m, 0, sizeof m);
        for (unsigned i = 0; i < 64; i++) {
            iov[i] = (struct iovec){ rx_mem[i], b->gso_gro ? BENCH_GRO_BUFFER : 2048 };
            m[i].msg_hdr.msg_iov = &iov[i];
            m[i].msg_hdr.msg_iovlen = 1;
            m[i].msg_hdr.msg_control = ctl[i];
            m[i].msg_hdr.msg_controllen = sizeof ctl[i];
        }
        int r = recvmmsg(p->rx, m, 64, MSG_DONTWAIT, NULL);
        for (int i = 0; i < r; i++) got += posix_segments(&m[i].msg_hdr, m[i].msg_len);
    }
    return got;
}

static void posix_close(backend *b) { (void)b; }

/* ---- io_uring: pl_uring on both sockets ---- */

static int uring_open(backend *b, pair *p) {
    pl_uring_config cfg = { .recv_buffers = 0, .send_slots = BENCH_BATCH,   /* the driver's default buffers */
                            .gso = b->gso_gro, .gro = b->gso_gro };
    char err[256];
    if (pl_uring_open(&b->utx, p->tx, &cfg, err, sizeof err) != 0 || pl_uring_open(&b->urx, p->rx, &cfg, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

static unsigned uring_round_trip(backend *b, pair *p) {
    for (unsigned i = 0; i < BENCH_BATCH; i++) {
        uint8_t *slot = pl_uring_send_slot(b->utx);
        while (!slot) {   /* every slot in flight: wait for one */
            pl_uring_flush(b->utx);
            if (pl_uring_wait(b->utx, UINT64_MAX, 1, NULL) < 0) return 0;
            slot = pl_uring_send_slot(b->utx);
        }
        memset(slot, (int)i, BENCH_LEN);   /* what pure_link_pull does: write the datagram */
        pl_uring_send_queue(b->utx, BENCH_LEN, (struct sockaddr *)&p->rx_addr, sizeof p->rx_addr);
    }
    pl_uring_flush(b->utx);
    pl_uring_dgram d[BENCH_BATCH];
    unsigned got = 0;
    uint64_t give_up_ns = pl_uring_now_ns() + BENCH_LOST_AFTER_NS;
    while (got < BENCH_BATCH && pl_uring_now_ns() < give_up_ns) {
        int n = pl_uring_recv(b->urx, d, BENCH_BATCH);
        if (n > 0) got += (unsigned)n;
        else if (pl_uring_wait(b->urx, give_up_ns, 0, NULL) < 0) break;
    }
    pl_uring_wait(b->utx, 0, 0, NULL);   /* collect the send completions */
    return got;
}

static void uring_close(backend *b) {
    pl_uring_close(b->utx);
    pl_uring_close(b->urx);
}

typedef struct figures {
    double gbit_s, gbit_cpu_s, cpu_ns_dgram;
    unsigned long long lost;
} figures;

static int measure(backend *b, figures *best) {
    pair p;
    if (pair_open(&p) != 0 || b->open(b, &p) != 0) return -1;
    unsigned long long sent = 0, got = 0;
    double c0 = cpu_s();
    uint64_t t0 = pl_uring_now_ns(), t;
    while ((t = pl_uring_now_ns()) - t0 < BENCH_ROUND_NS) {
        got += b->round_trip(b, &p);
        sent += BENCH_BATCH;
    }
    double cpu = cpu_s() - c0, wall = (double)(t - t0) / 1e9, bits = (double)got * BENCH_LEN * 8;
    figures f = { bits / wall / 1e9, bits / cpu / 1e9, cpu * 1e9 / (double)got, sent - got };
    if (f.gbit_cpu_s > best->gbit_cpu_s) *best = f;
    b->close(b);
    close(p.tx);
    close(p.rx);
    return 0;
}

/* argv[1], when given, picks the backends whose name contains it (for perf record). */
int main(int argc, char **argv) {
    backend all[] = {
        { "sendmmsg/recvmmsg", 0, posix_open, posix_round_trip, posix_close, NULL, NULL },
        { "sendmmsg/recvmmsg + GSO/GRO", 1, posix_open, posix_round_trip, posix_close, NULL, NULL },
        { "io_uring", 0, uring_open, uring_round_trip, uring_close, NULL, NULL },
        { "io_uring + GSO/GRO", 1, uring_open, uring_round_trip, uring_close, NULL, NULL },
    };
    enum { N = sizeof all / sizeof all[0] };
    figures best[N];
    memset(best, 0, sizeof best);
    for (int round = 0; round < BENCH_ROUNDS; round++)   /* interleaved: noise hits all alike */
        for (int i = 0; i < N; i++)
            if (argc > 1 && !strstr(all[i].name, argv[1])) continue;
            else if (measure(&all[i], &best[i]) != 0) {
                printf("  %-30s unavailable here\n", all[i].name);
                best[i].gbit_cpu_s = -1;
            }
    printf("loopback, %u B datagrams, batches of %u, one thread sending and receiving (best of %d x %.1f s):\n",
           BENCH_LEN, BENCH_BATCH, BENCH_ROUNDS, BENCH_ROUND_NS / 1e9);
    for (int i = 0; i < N; i++)
        if (best[i].gbit_cpu_s > 0)
            printf("  %-30s %6.2f Gbit/s  %6.2f Gbit per CPU-second  %6.0f ns CPU per datagram  (%llu lost)\n",
                   all[i].name, best[i].gbit_s, best[i].gbit_cpu_s, best[i].cpu_ns_dgram, best[i].lost);
    if (best[0].gbit_cpu_s > 0 && best[1].gbit_cpu_s > 0 && best[2].gbit_cpu_s > 0 && best[3].gbit_cpu_s > 0)
        printf("  io_uring / sendmmsg per CPU-second: %.2fx plain, %.2fx with GSO/GRO\n",
               best[2].gbit_cpu_s / best[0].gbit_cpu_s, best[3].gbit_cpu_s / best[1].gbit_cpu_s);
    return 0;
}
