/* uv_link.c: the pure-link core driven from a libuv event loop.
 *
 * Shows how little a driver has to do.  A sender and a receiver endpoint live in one
 * process, each on its own UDP socket on 127.0.0.1 (or ::1), both on one uv_loop.  libuv does all
 * the I/O (uv_udp) and all the time-keeping (uv_hrtime for `now_ns`, one uv_timer per
 * endpoint armed at pure_link_deadline()); the core does the protocol; example_host.h
 * answers the events (STREAM_OPEN, RECORD, MEMO_WRITE) in memory.
 *
 * The sender ships RECORDS records (default 20000, about 30 MB); the receiver checks every
 * byte of each one.  The program exits 0 once the sender has seen every record STORED and
 * its stream CLOSED, and 1 on any error or after 60 s.
 *
 *   uv_link [RECORDS] [-6]
 */
#include <uv.h>

#include "example_host.h"

/* One endpoint and its handles.  Exactly one of rx and tx is set. */
typedef struct node {
    pure_link *pl;
    uv_udp_t udp;
    uv_timer_t timer;           /* fires at pure_link_deadline() */
    ex_receiver *rx;
    ex_sender *tx;
    char datagram[2048];        /* libuv reads into this; larger than any pure-link datagram */
} node;

static node receiver, sender;
static uv_timer_t give_up;      /* bounds the run */

static uint64_t now_ns(void) { return uv_hrtime(); } /* monotonic nanoseconds, as the core wants */

/* The core treats addresses as opaque bytes and compares them byte for byte, so build them
 * from the fields alone, the same way every time (no stray padding).  A sockaddr_in6 fits
 * too (PURE_LINK_ADDR_MOST is 28 B). */
static void addr_from_sockaddr(const struct sockaddr *sa, pure_link_addr *a) {
    memset(a, 0, sizeof *a);
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        struct sockaddr_in6 six = {.sin6_family = AF_INET6, .sin6_port = in6->sin6_port, .sin6_addr = in6->sin6_addr,
                                   .sin6_scope_id = in6->sin6_scope_id};
        a->len = sizeof six;
        memcpy(a->bytes, &six, sizeof six);
        return;
    }
    const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = in->sin_port, .sin_addr = in->sin_addr};
    a->len = sizeof sin;
    memcpy(a->bytes, &sin, sizeof sin);
}

static void finish(void) {
    static int finished;
    if (finished++) return;
    uv_close((uv_handle_t *)&receiver.udp, NULL), uv_close((uv_handle_t *)&receiver.timer, NULL);
    uv_close((uv_handle_t *)&sender.udp, NULL), uv_close((uv_handle_t *)&sender.timer, NULL);
    uv_close((uv_handle_t *)&give_up, NULL);
}

static void on_timer(uv_timer_t *t);

/* Arms the node's timer at the core's deadline.  libuv counts in milliseconds: round up,
 * so the core is never called before it asked (an early call would do no harm either). */
static void arm_timer(node *n) {
    uint64_t deadline = pure_link_deadline(n->pl), now = now_ns();
    if (deadline == UINT64_MAX) { uv_timer_stop(&n->timer); return; }
    uint64_t wait_ms = deadline <= now ? 0 : (deadline - now + 999999) / 1000000;
    uv_timer_start(&n->timer, on_timer, wait_ms, 0);
}

/* After every call into the core: answer its events, send what it has to send, until
 * neither has anything left; then wait for the next datagram or the deadline. */
static void service(node *n) {
    uint64_t now = now_ns();
    uint8_t out[PURE_LINK_DATAGRAM_MOST];
    pure_link_addr to;
    int busy, len;
    do {
        busy = ex_answer_events(n->pl, n->rx, n->tx, now);
        while ((len = pure_link_pull(n->pl, out, sizeof out, &to, now)) > 0) {
            busy = 1;
            struct sockaddr_storage dst;
            memcpy(&dst, to.bytes, to.len);
            uv_buf_t buf = uv_buf_init((char *)out, (unsigned)len);
            /* A full socket buffer drops the datagram, as the network may: the core resends. */
            (void)uv_udp_try_send(&n->udp, &buf, 1, (const struct sockaddr *)&dst);
        }
    } while (busy);
    if (n->tx && (n->tx->closed || n->tx->failed)) { finish(); return; }
    arm_timer(n);
}

static void on_timer(uv_timer_t *t) {
    node *n = t->data;
    pure_link_tick(n->pl, now_ns());
    service(n);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    node *n = h->data;
    (void)suggested;
    *buf = uv_buf_init(n->datagram, sizeof n->datagram);
}

static void on_recv(uv_udp_t *udp, ssize_t nread, const uv_buf_t *buf, const struct sockaddr *from,
                    unsigned flags) {
    node *n = udp->data;
    if (nread <= 0 || !from || (flags & UV_UDP_PARTIAL)) return; /* nothing, or too long to be ours */
    pure_link_addr a;
    addr_from_sockaddr(from, &a);
    pure_link_receive(n->pl, &a, (const uint8_t *)buf->base, (size_t)nread, now_ns());
    service(n);
}

static void on_give_up(uv_timer_t *t) {
    (void)t;
    fprintf(stderr, "uv_link: not done after 60 s\n");
    sender.tx->failed = 1;
    finish();
}

/* A UDP socket on the loopback address (any port) and a timer for node n. */
static int node_open(uv_loop_t *loop, node *n, int ipv6, struct sockaddr_storage *bound) {
    struct sockaddr_storage any;
    if (ipv6) uv_ip6_addr("::1", 0, (struct sockaddr_in6 *)&any);
    else uv_ip4_addr("127.0.0.1", 0, (struct sockaddr_in *)&any);
    n->udp.data = n->timer.data = n;
    int len = sizeof *bound, rc;
    if ((rc = uv_udp_init(loop, &n->udp)) || (rc = uv_udp_bind(&n->udp, (const struct sockaddr *)&any, 0)) ||
        (rc = uv_udp_getsockname(&n->udp, (struct sockaddr *)bound, &len)) ||
        (rc = uv_udp_recv_start(&n->udp, on_alloc, on_recv)) || (rc = uv_timer_init(loop, &n->timer))) {
        fprintf(stderr, "uv_link: %s\n", uv_strerror(rc));
        return -1;
    }
    int bytes = 4 << 20; /* room for a burst: fewer drops on loopback */
    uv_recv_buffer_size((uv_handle_t *)&n->udp, &bytes);
    return 0;
}

int main(int argc, char **argv) {
    int64_t count = argc > 1 ? atoll(argv[1]) : 20000;
    int ipv6 = argc > 2 && strcmp(argv[2], "-6") == 0;
    uv_loop_t *loop = uv_default_loop();
    uint8_t random[4][32]; /* two static secrets, two seeds */
    if (count < 1 || uv_random(NULL, NULL, random, sizeof random, 0, NULL) != 0) return 1;

    pure_link_config rx_cfg, tx_cfg;
    ex_config(&rx_cfg, random[0], 1); /* a receiver, with a memo */
    ex_config(&tx_cfg, random[1], 0);
    uint64_t start_ns = now_ns();
    void *rx_memory, *tx_memory;
    receiver.pl = ex_endpoint_new(&rx_cfg, random[2], start_ns, &rx_memory);
    sender.pl = ex_endpoint_new(&tx_cfg, random[3], start_ns, &tx_memory);
    static ex_receiver rx;
    static ex_sender tx;
    if (!receiver.pl || !sender.pl || ex_receiver_init(&rx, receiver.pl, &rx_cfg) != 0) return 1;
    receiver.rx = &rx;
    tx = (ex_sender){.pl = sender.pl, .count = count};
    sender.tx = &tx;

    struct sockaddr_storage rx_addr, tx_addr;
    if (node_open(loop, &receiver, ipv6, &rx_addr) || node_open(loop, &sender, ipv6, &tx_addr)) return 1;

    /* Wiring, which a real deployment reads from configuration: the receiver lets the
     * sender's key send as EX_SOURCE; the sender knows the receiver's key and address. */
    uint8_t rx_public[32], tx_public[32];
    pure_link_public_key(receiver.pl, rx_public);
    pure_link_public_key(sender.pl, tx_public);
    if (pure_link_wire_peer(receiver.pl, tx_public, EX_SOURCE, start_ns) < 0) return 1;
    pure_link_addr to;
    addr_from_sockaddr((const struct sockaddr *)&rx_addr, &to);
    if (ex_sender_start(&tx, rx_public, &to, start_ns) != 0) return 1;

    service(&sender);
    uv_timer_init(loop, &give_up);
    uv_timer_start(&give_up, on_give_up, 60000, 0);
    uv_run(loop, UV_RUN_DEFAULT);

    double seconds = (double)(now_ns() - start_ns) / 1e9;
    int ok = !tx.failed && tx.closed && tx.stored == count && rx.records_stored == count && rx.records_bad == 0;
    printf("uv_link over IPv%d: %lld of %lld records stored and checked, %lld bad, in %.2f s: %s\n",
           ipv6 ? 6 : 4, (long long)rx.records_stored, (long long)count, (long long)rx.records_bad, seconds, ok ? "ok" : "FAILED");
    uv_loop_close(loop);
    free(rx_memory);
    free(tx_memory);
    return ok ? 0 : 1;
}
