/* bench_udp_ceiling.c: the raw UDP ceiling of this machine on loopback, to read beside the
 * pure-link shims' figures of the same `make bench` run (BRIEF §6: kernel cost per 1,452 B
 * datagram, Gbit of payload per CPU-second).
 *
 * No protocol at all: a blaster sends 1,452 B datagrams as fast as the kernel takes them
 * to a receiver thread on 127.0.0.1, for a fixed time per row.  Senders: plain sendmmsg
 * (64 datagrams a call), and UDP GSO (UDP_SEGMENT: 44 datagrams of 1,452 B per 63,888 B
 * send, 8 sends per sendmmsg).  Receivers: recvmmsg (64 a call), and UDP_GRO (recvmmsg of
 * coalesced buffers; the kernel hands a GSO send from loopback to a GRO socket whole).
 * Sockets are unconnected, with an address per message, as a pure-link endpoint's are.
 *
 * Figures per row: payload Gbit/s received, Gbit of payload per CPU-second of sender and
 * receiver together (getrusage of each thread, user + system), CPU per datagram, and the
 * share the receiver's socket dropped.  On loopback the kernel's receive path runs mostly
 * in the sender's system calls, so only the sum of the two is meaningful.  A figure, not a
 * test: the machine is shared.  Where the kernel refuses GSO or GRO, a line says so and
 * the rows that need it are left out.
 *
 * With --sealed, every datagram is sealed before it is sent and opened when it arrives,
 * with the core's AES-128-GCM (core/crypto.h) under a 21 B header as associated data and a
 * 16 B tag, as a pure-link data packet is: the ceiling of UDP + AEAD, nothing else.  Its
 * figures count payload (1,452 - 37 = 1,415 B a datagram), as the tool's count records.
 * --sealed-best prints only the best Gbit of payload per CPU-second of the sealed rows, for
 * scripts/bench_peers.sh.
 *
 *   bench_udp_ceiling [--sealed | --sealed-best] [SECONDS_PER_ROUND]
 *       (default 0.3; 4 rows of 3 rounds, the best round of each row printed) */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "crypto.h"
#include "pure_link.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

#define DATAGRAM_BYTES 1452u     /* PURE_LINK_DATAGRAM_MOST: the shims' full datagram */
#define PLAIN_BATCH 64           /* datagrams per sendmmsg / recvmmsg call */
#define GSO_SEGMENTS 44          /* 44 x 1452 = 63,888 B, under the 65,507 B of one UDP send */
#define GSO_BATCH 8              /* GSO sends per sendmmsg call */
#define GRO_BUFFER_BYTES 65536u  /* one coalesced receive */
#define RECEIVE_IDLE_MS 50       /* the receiver stops this long after the last datagram */
#define ROUNDS 3                 /* rounds per row; the best one is printed */
#define SEAL_HEADER_BYTES 21u    /* associated data of a sealed datagram (the seed's header) */
#define SEAL_TAG_BYTES 16u
#define SEAL_PAYLOAD_BYTES (DATAGRAM_BYTES - SEAL_HEADER_BYTES - SEAL_TAG_BYTES)

/* --sealed: one key for both sides; the nonce is the datagram's number (the header holds
 * it), so that the receiver opens each datagram as a pure-link endpoint does. */
static int sealed;
static _Alignas(16) uint8_t gcm[PURE_LINK_AEAD_CTX_BYTES];

static void seal_datagram(uint8_t *d, uint64_t number) {
    uint8_t nonce[12] = {0};
    memset(d, 0, SEAL_HEADER_BYTES);
    memcpy(d + 1, &number, sizeof number);
    memcpy(nonce + 4, &number, sizeof number);
    pl_gcm_seal(gcm, nonce, d, SEAL_HEADER_BYTES, d + SEAL_HEADER_BYTES, SEAL_PAYLOAD_BYTES, d + SEAL_HEADER_BYTES);
}

/* 1 when the datagram opens (its payload decrypted in place). */
static int open_datagram(uint8_t *d, size_t len) {
    if (len != DATAGRAM_BYTES) return 0;
    uint8_t nonce[12] = {0};
    memcpy(nonce + 4, d + 1, 8);
    return pl_gcm_open(gcm, nonce, d, SEAL_HEADER_BYTES, d + SEAL_HEADER_BYTES, len - SEAL_HEADER_BYTES,
                       d + SEAL_HEADER_BYTES) == 0;
}

static double clock_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double thread_cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

typedef struct receiver {
    int fd, gro;
    atomic_int sender_done;
    uint64_t bytes, datagrams, unopened;
    double last_s, cpu_s;
} receiver;

/* The receiver thread: recvmmsg until the sender is done and the socket stays quiet. */
static void *receive_loop(void *arg) {
    receiver *r = arg;
    size_t cap = r->gro ? GRO_BUFFER_BYTES : 2048;
    uint8_t *bufs = malloc(cap * PLAIN_BATCH);
    struct mmsghdr msgs[PLAIN_BATCH];
    struct iovec iov[PLAIN_BATCH];
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } control[PLAIN_BATCH];
    double cpu0 = thread_cpu_s();
    while (bufs) {
        memset(msgs, 0, sizeof msgs);
        for (int i = 0; i < PLAIN_BATCH; i++) {
            iov[i] = (struct iovec){bufs + cap * (size_t)i, cap};
            msgs[i].msg_hdr.msg_iov = &iov[i], msgs[i].msg_hdr.msg_iovlen = 1;
            msgs[i].msg_hdr.msg_control = control[i].buf, msgs[i].msg_hdr.msg_controllen = sizeof control[i].buf;
        }
        int n = recvmmsg(r->fd, msgs, PLAIN_BATCH, MSG_WAITFORONE, NULL);
        if (n <= 0) { /* SO_RCVTIMEO ran out */
            if (atomic_load(&r->sender_done)) break;
            continue;
        }
        r->last_s = clock_s();
        for (int i = 0; i < n; i++) {
            unsigned len = msgs[i].msg_len, segment = len;
            for (struct cmsghdr *c = CMSG_FIRSTHDR(&msgs[i].msg_hdr); c; c = CMSG_NXTHDR(&msgs[i].msg_hdr, c))
                if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) memcpy(&segment, CMSG_DATA(c), sizeof(int));
            if (sealed) {  /* each segment opened; payload counted */
                uint8_t *base = msgs[i].msg_hdr.msg_iov->iov_base;
                for (unsigned at = 0; segment && at < len; at += segment) {
                    unsigned one = len - at < segment ? len - at : segment;
                    if (open_datagram(base + at, one)) r->bytes += SEAL_PAYLOAD_BYTES, r->datagrams++;
                    else r->unopened++;
                }
                continue;
            }
            r->bytes += len;
            r->datagrams += segment ? (len + segment - 1) / segment : 0;
        }
    }
    r->cpu_s = thread_cpu_s() - cpu0;
    free(bufs);
    return NULL;
}

/* A UDP socket on 127.0.0.1 (any port); the receiver's gets a large buffer and a timeout. */
static int udp_socket(struct sockaddr_in *bound, int receive_side) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || getsockname(fd, (struct sockaddr *)&a, &alen)) {
        perror("bench_udp_ceiling: socket");
        exit(1);
    }
    if (receive_side) {
        int bytes = 16 << 20;
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
        struct timeval tv = {0, RECEIVE_IDLE_MS * 1000};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
    *bound = a;
    return fd;
}

typedef struct row { const char *sender, *receiver; int gso, gro; } row;
typedef struct result { uint64_t sent_datagrams; double cpu_s; int refused_errno; } result;

/* Blasts datagrams at `to` for `seconds`.  refused_errno is set when the kernel refuses the
 * very first GSO send (a kernel or device without UDP GSO). */
static result blast(int fd, const struct sockaddr_in *to, int gso, double seconds) {
    /* Unsealed, every message sends the same bytes; sealed, each has its own datagrams,
     * sealed anew before every call, as an endpoint seals each packet it sends. */
    static uint8_t payload[GSO_BATCH * GSO_SEGMENTS * DATAGRAM_BYTES];
    memset(payload, 0xa5, sizeof payload);
    int batch = gso ? GSO_BATCH : PLAIN_BATCH;
    size_t per_message = gso ? GSO_SEGMENTS * DATAGRAM_BYTES : DATAGRAM_BYTES;
    size_t datagrams_per_call = (size_t)batch * (gso ? GSO_SEGMENTS : 1);
    struct mmsghdr msgs[PLAIN_BATCH];
    struct iovec iov[PLAIN_BATCH];
    memset(msgs, 0, sizeof msgs);
    for (int i = 0; i < batch; i++) {
        iov[i] = (struct iovec){sealed ? payload + (size_t)i * per_message : payload, per_message};
        msgs[i].msg_hdr.msg_name = (void *)to, msgs[i].msg_hdr.msg_namelen = sizeof *to;
        msgs[i].msg_hdr.msg_iov = &iov[i], msgs[i].msg_hdr.msg_iovlen = 1;
    }
    result res = {0, 0, 0};
    uint64_t number = 0;
    double cpu0 = thread_cpu_s(), end = clock_s() + seconds;
    while (clock_s() < end) {
        for (size_t k = 0; sealed && k < datagrams_per_call; k++) seal_datagram(payload + k * DATAGRAM_BYTES, number++);
        int n = sendmmsg(fd, msgs, (unsigned)batch, 0);
        if (n < 0 && (errno == ENOBUFS || errno == EAGAIN || errno == EINTR)) continue;
        if (n < 0) {
            if (res.sent_datagrams == 0) { res.refused_errno = errno; break; }
            perror("bench_udp_ceiling: sendmmsg");
            exit(1);
        }
        res.sent_datagrams += (uint64_t)n * (gso ? GSO_SEGMENTS : 1);
    }
    res.cpu_s = thread_cpu_s() - cpu0;
    return res;
}

typedef struct figures { double gbit_per_s, gbit_per_cpu_s, cpu_us_per_datagram, send_cpu_s, receive_cpu_s, dropped; } figures;

/* One round: a fresh pair of sockets, the receiver on its own thread.  Returns 0, or the
 * errno with which the kernel refused GSO or GRO. */
static int run_round(const row *w, double seconds, figures *f) {
    struct sockaddr_in rx_addr, tx_addr;
    receiver r = {.gro = w->gro};
    r.fd = udp_socket(&rx_addr, 1);
    int tx = udp_socket(&tx_addr, 0), one = 1, segment = DATAGRAM_BYTES, refused = 0;
    if (w->gro && setsockopt(r.fd, SOL_UDP, UDP_GRO, &one, sizeof one) != 0) refused = errno;
    if (w->gso && !refused && setsockopt(tx, SOL_UDP, UDP_SEGMENT, &segment, sizeof segment) != 0) refused = errno;
    pthread_t thread;
    if (!refused && pthread_create(&thread, NULL, receive_loop, &r) != 0) { perror("bench_udp_ceiling: thread"); exit(1); }
    if (!refused) {
        double start = clock_s();
        result s = blast(tx, &rx_addr, w->gso, seconds);
        atomic_store(&r.sender_done, 1);
        pthread_join(thread, NULL);
        refused = s.refused_errno;
        double wall = r.last_s > start ? r.last_s - start : seconds, cpu = s.cpu_s + r.cpu_s;
        double gbit = (double)r.bytes * 8 / 1e9;
        double lost = s.sent_datagrams ? 1.0 - (double)r.datagrams / (double)s.sent_datagrams : 0;
        *f = (figures){gbit / wall, cpu > 0 ? gbit / cpu : 0, r.datagrams ? cpu * 1e6 / (double)r.datagrams : 0,
                       s.cpu_s, r.cpu_s, lost < 0 ? 0 : lost};
    }
    close(tx), close(r.fd);
    return refused;
}

/* One row: the round with the most Gbit per CPU-second of ROUNDS (the machine is shared),
 * printed unless quiet; its figure in *best_gbit_per_cpu_s. */
static int run_row(const row *w, double seconds, int quiet, double *best_gbit_per_cpu_s) {
    figures best = {0}, f = {0};
    for (int round = 0; round < ROUNDS; round++) {
        int refused = run_round(w, seconds, &f);
        if (refused) return refused;
        if (f.gbit_per_cpu_s > best.gbit_per_cpu_s) best = f;
    }
    *best_gbit_per_cpu_s = best.gbit_per_cpu_s;
    if (!quiet)
        printf("  %-9s %-9s %8.2f %11.2f %12.2f %9.2f %9.2f %7.1f%%\n", w->sender, w->receiver, best.gbit_per_s,
               best.gbit_per_cpu_s, best.cpu_us_per_datagram, best.send_cpu_s, best.receive_cpu_s, 100 * best.dropped);
    return 0;
}

/* Every row; returns the best figure of them. */
static double run_table(double seconds, int quiet) {
    static const row rows[] = {
        {"sendmmsg", "recvmmsg", 0, 0},
        {"sendmmsg", "UDP_GRO", 0, 1},
        {"UDP_GSO", "recvmmsg", 1, 0},
        {"UDP_GSO", "UDP_GRO", 1, 1},
    };
    if (!quiet) {
        if (sealed)
            printf("UDP + AES-128-GCM ceiling on loopback: %u B datagrams sealed and opened with the core's GCM, "
                   "payload %u B each, best of %d x %.1f s\n", DATAGRAM_BYTES, SEAL_PAYLOAD_BYTES, ROUNDS, seconds);
        else
            printf("raw UDP ceiling on loopback: %u B datagrams, no protocol, sender and receiver threads, best of %d x %.1f s\n",
                   DATAGRAM_BYTES, ROUNDS, seconds);
        printf("  %-9s %-9s %8s %11s %12s %9s %9s %8s\n", "sender", "receiver", "Gbit/s", "Gbit/CPU-s", "CPU us/dgram",
               "send CPU", "recv CPU", "dropped");
    }
    int gso_refused = 0, gro_refused = 0;
    double most = 0, one = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if ((rows[i].gso && gso_refused) || (rows[i].gro && gro_refused)) continue;
        int refused = run_row(&rows[i], seconds, quiet, &one);
        if (!refused) {
            if (one > most) most = one;
            continue;
        }
        /* Name what the kernel refused, once; the rows that need it are left out. */
        const char *what = rows[i].gro && !rows[i].gso ? "UDP_GRO" : "UDP_GSO";
        if (!quiet)
            printf("  %s is not available here (%s): its rows are left out, the recvmmsg/sendmmsg ones stand\n", what,
                   strerror(refused));
        if (rows[i].gro && !rows[i].gso) gro_refused = 1;
        else gso_refused = 1;
    }
    return most;
}

int main(int argc, char **argv) {
    int only_sealed = 0, best_only = 0;
    for (; argc > 1 && argv[1][0] == '-' && argv[1][1] == '-'; argc--, argv++) {
        if (strcmp(argv[1], "--sealed") == 0) only_sealed = 1;
        else if (strcmp(argv[1], "--sealed-best") == 0) only_sealed = best_only = 1;
        else argc = 0;
    }
    double seconds = argc > 1 ? atof(argv[1]) : 0.3;
    if (argc < 1 || seconds <= 0 || seconds > 10) {
        fprintf(stderr, "usage: bench_udp_ceiling [--sealed | --sealed-best] [SECONDS_PER_ROUND (0..10]]\n");
        return 2;
    }
    uint8_t key[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    pl_gcm_init(gcm, key);
    if (!only_sealed) {
        run_table(seconds, 0);
        printf("  (the goal for pure-link itself on this loopback: >= 6 Gbit of record bytes per CPU-second)\n");
    }
    sealed = 1;
    double best = run_table(seconds, best_only);
    if (best_only) printf("%.4f\n", best);
    return 0;
}
