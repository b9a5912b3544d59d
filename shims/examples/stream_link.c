/* stream_link.c: a pure-link link carried over a byte stream instead of UDP.
 *
 * Shows that nothing in the core assumes UDP.  To the core a datagram is a byte string of
 * at most PURE_LINK_DATAGRAM_MOST bytes and an address is a few opaque bytes.  Here each
 * datagram travels as a 2-byte big-endian length followed by its bytes, over a Unix
 * stream socket pair or a TCP connection on 127.0.0.1, and the one address is a single
 * byte meaning "the other end of this stream".  The sender and the receiver are two
 * processes, each with its own ppoll() loop (nanosecond timeouts from pure_link_deadline).
 *
 * The sender (the parent) ships RECORDS records (default 20000); the receiver (a child)
 * checks every byte.  The sender closes the stream once its records are STORED and its
 * stream CLOSED; the receiver then exits.  Exit 0 when both are satisfied, 1 otherwise or
 * after 60 s.
 *
 *   stream_link unix|tcp [RECORDS]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "example_host.h"

#define FRAME_BYTES_MOST (2 + PURE_LINK_DATAGRAM_MOST)
static const pure_link_addr other_end = {.len = 1, .bytes = {1}};

/* One side: its endpoint, its host, its end of the stream and the bytes in transit. */
typedef struct side {
    pure_link *pl;
    ex_receiver *rx;                 /* exactly one of rx and tx is set */
    ex_sender *tx;
    int fd;
    uint8_t in[2 * FRAME_BYTES_MOST];/* read, not yet a whole frame */
    size_t in_len;
    uint8_t out[64 * FRAME_BYTES_MOST]; /* frames not yet written */
    size_t out_len;
} side;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Answers events and frames datagrams while the output buffer has room for one more.  A
 * stream that cannot take more holds the core back, where UDP would drop: the core sends
 * when called again, and its congestion control sees the delay. */
static void service(side *s) {
    uint64_t now = now_ns();
    int busy;
    do {
        busy = ex_answer_events(s->pl, s->rx, s->tx, now);
        pure_link_addr to;
        int len;
        while (s->out_len + FRAME_BYTES_MOST <= sizeof s->out &&
               (len = pure_link_pull(s->pl, s->out + s->out_len + 2, PURE_LINK_DATAGRAM_MOST, &to, now)) > 0) {
            s->out[s->out_len] = (uint8_t)(len >> 8), s->out[s->out_len + 1] = (uint8_t)len;
            s->out_len += 2 + (size_t)len;
            busy = 1;
        }
    } while (busy);
}

/* The other end closed its stream: a reset (TCP resets a close with unread data in it) or a
 * broken pipe is the end of the stream, as a read of 0 is, not an error. */
static int gone(int e) { return e == ECONNRESET || e == EPIPE; }

/* Writes what the stream takes now; 1 when the other end is gone, -1 on an error.  No
 * SIGPIPE: the other end may close while this side still has replies to write. */
static int flush(side *s) {
    ssize_t n = send(s->fd, s->out, s->out_len, MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN ? 0 : gone(errno) ? 1 : -1;
    memmove(s->out, s->out + n, s->out_len - (size_t)n);
    s->out_len -= (size_t)n;
    return 0;
}

/* Reads what has arrived and hands every whole frame to the core.  Returns 0, 1 at the end
 * of the stream, -1 on an error or a frame no pure-link datagram could be. */
static int take(side *s) {
    ssize_t n = read(s->fd, s->in + s->in_len, sizeof s->in - s->in_len);
    if (n == 0) return 1;
    if (n < 0) return errno == EAGAIN ? 0 : gone(errno) ? 1 : -1;
    s->in_len += (size_t)n;
    size_t at = 0;
    while (s->in_len - at >= 2) {
        size_t len = (size_t)s->in[at] << 8 | s->in[at + 1];
        if (len == 0 || len > PURE_LINK_DATAGRAM_MOST) return -1; /* the framing is lost */
        if (s->in_len - at < 2 + len) break;
        pure_link_receive(s->pl, &other_end, s->in + at + 2, len, now_ns());
        at += 2 + len;
    }
    memmove(s->in, s->in + at, s->in_len - at);
    s->in_len -= at;
    return 0;
}

/* The loop of one side: until the sender is done, or the receiver's stream ends. */
static int run(side *s) {
    service(s);
    for (;;) {
        if (s->tx && (s->tx->closed || s->tx->failed)) return s->tx->failed ? -1 : 0;
        uint64_t deadline = pure_link_deadline(s->pl), now = now_ns();
        /* With the output full, wait for the stream to drain rather than spin on a pacing
         * deadline that only a pull would clear. */
        if (s->out_len + FRAME_BYTES_MOST > sizeof s->out && deadline < now + 1000000) deadline = now + 1000000;
        struct timespec wait = {0, 0}, *timeout = deadline == UINT64_MAX ? NULL : &wait;
        if (deadline > now) wait.tv_sec = (time_t)((deadline - now) / 1000000000u), wait.tv_nsec = (long)((deadline - now) % 1000000000u);
        struct pollfd p = {.fd = s->fd, .events = (short)(POLLIN | (s->out_len ? POLLOUT : 0))};
        if (ppoll(&p, 1, timeout, NULL) < 0 && errno != EINTR) return -1;
        int rc = 0;
        if (p.revents & (POLLIN | POLLHUP)) rc = take(s);
        if (rc == 0 && (p.revents & POLLOUT)) rc = flush(s);
        if (rc != 0) return rc > 0 ? 0 : -1;
        if (pure_link_deadline(s->pl) <= now_ns()) pure_link_tick(s->pl, now_ns());
        service(s);
        if (s->out_len && (rc = flush(s)) != 0) return rc > 0 ? 0 : -1;
    }
}

/* A connected pair of stream sockets: a Unix socket pair, or TCP over loopback. */
static int stream_pair(const char *kind, int fds[2]) {
    if (strcmp(kind, "unix") == 0) return socketpair(AF_UNIX, SOCK_STREAM, 0, fds);
    if (strcmp(kind, "tcp") != 0) return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1) || getsockname(l, (struct sockaddr *)&a, &alen))
        return -1;
    fds[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (fds[0] < 0 || connect(fds[0], (struct sockaddr *)&a, sizeof a) || (fds[1] = accept(l, NULL, NULL)) < 0) return -1;
    close(l);
    /* Datagrams are small and each one is due now: no Nagle delay. */
    setsockopt(fds[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fds[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return 0;
}

/* Builds this side's endpoint from its secret, with a fresh seed. */
static pure_link *endpoint(pure_link_config *cfg, const uint8_t secret[32], int receiver) {
    uint8_t seed[32];
    if (getrandom(seed, sizeof seed, 0) != sizeof seed) return NULL;
    ex_config(cfg, secret, receiver);
    void *memory; /* kept for the life of the process */
    return ex_endpoint_new(cfg, seed, now_ns(), &memory);
}

static int receiver_main(int fd, const uint8_t secret[32], const uint8_t sender_public[32], int64_t count) {
    static side s;
    static ex_receiver rx;
    pure_link_config cfg;
    s.fd = fd;
    if (!(s.pl = endpoint(&cfg, secret, 1)) || ex_receiver_init(&rx, s.pl, &cfg) != 0) return 1;
    if (pure_link_wire_peer(s.pl, sender_public, EX_SOURCE, now_ns()) < 0) return 1;
    s.rx = &rx;
    int rc = run(&s);
    printf("stream_link receiver: %lld of %lld records stored and checked, %lld bad\n", (long long)rx.records_stored,
           (long long)count, (long long)rx.records_bad);
    return rc == 0 && rx.records_stored == count && rx.records_bad == 0 ? 0 : 1;
}

static int sender_main(int fd, const uint8_t secret[32], const uint8_t receiver_public[32], int64_t count) {
    static side s;
    static ex_sender tx;
    pure_link_config cfg;
    s.fd = fd;
    if (!(s.pl = endpoint(&cfg, secret, 0))) return 1;
    tx = (ex_sender){.pl = s.pl, .count = count};
    s.tx = &tx;
    if (ex_sender_start(&tx, receiver_public, &other_end, now_ns()) != 0) return 1;
    int rc = run(&s);
    printf("stream_link sender: %lld of %lld records stored\n", (long long)tx.stored, (long long)count);
    return rc == 0 && tx.stored == count ? 0 : 1;
}

int main(int argc, char **argv) {
    int64_t count = argc > 2 ? atoll(argv[2]) : 20000;
    int fds[2];
    if (argc < 2 || count < 1 || stream_pair(argv[1], fds) != 0) {
        fprintf(stderr, "usage: stream_link unix|tcp [RECORDS]\n");
        return 1;
    }
    /* Wiring: each side's secret, and the other side's public key. */
    uint8_t secret[2][32], public[2][32];
    if (getrandom(secret, sizeof secret, 0) != sizeof secret) return 1;
    for (int i = 0; i < 2; i++) pure_link_crypto_default()->x25519_base(public[i], secret[i]);
    fcntl(fds[0], F_SETFL, O_NONBLOCK), fcntl(fds[1], F_SETFL, O_NONBLOCK);
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) return 1;
    alarm(60); /* bounds each side */
    if (child == 0) {
        close(fds[0]);
        int rc = receiver_main(fds[1], secret[0], public[1], count);
        fflush(stdout);
        _exit(rc);
    }
    close(fds[1]);
    int sent = sender_main(fds[0], secret[1], public[0], count);
    close(fds[0]); /* the end of the stream tells the receiver to stop */
    int status;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return 1;
    int ok = sent == 0 && WEXITSTATUS(status) == 0;
    printf("stream_link over %s: %s\n", argv[1], ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
