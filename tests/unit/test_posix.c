/* test_posix.c: the POSIX shim end to end on loopback: a sender and a receiver endpoint,
 * each in its own pl_driver loop and thread over real UDP sockets (pl_io_posix_open); and
 * the same cases over the io_uring backend (pl_io_uring_open), as NAME_uring.
 * The receiving host here keeps records in memory and calls pure_link_stored at once, so
 * that the driver and the backend are tested alone (the store has its own tests and the
 * tool's tests run the whole). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "pl_driver.h"
#include "pl_io.h"

#define S 1000000000ull
#define GIVE_UP_NS (30 * S) /* a run that takes longer has failed (it takes well under 1 s) */

enum { STOP_CLOSED = 1, STOP_GAVE_UP = 2, STOP_MOVE = 3 };

static size_t record_len(int64_t i) { return 1 + (size_t)(i * 7919) % 3000; }
static uint8_t record_byte(int64_t i, size_t k) { return (uint8_t)(i * 31 + (int64_t)k); }

typedef struct node {
    pure_link *pl;
    void *mem;
    pl_io *io;
    uint8_t pub[32];
    pthread_t thread;
    volatile sig_atomic_t stop;
    pl_driver_config dc;
    int result;
    char err[256];
    /* sender */
    int sender, closed;
    int64_t count, queued, stored, move_at;
    uint64_t give_up_ns;
    /* receiver */
    uint8_t *seen;
    int64_t records, duplicates, bad;
} node;

static pure_link *endpoint(node *n, unsigned char tag) {
    pure_link_config cfg = {.senders_most = 1, .peers_most = 1, .runs_most = 4};
    pure_link_config_default(&cfg);
    memset(cfg.static_secret, tag, 32);
    size_t size = pure_link_size(&cfg);
    n->mem = aligned_alloc(PURE_LINK_ALIGN, (size + PURE_LINK_ALIGN - 1) / PURE_LINK_ALIGN * PURE_LINK_ALIGN);
    uint8_t seed[32];
    randombytes_buf(seed, sizeof seed);
    n->pl = pure_link_init(n->mem, size, &cfg, seed, pl_now_ns());
    pure_link_public_key(n->pl, n->pub);
    return n->pl;
}

/* The backend under test: every case runs over POSIX, and again over io_uring as NAME_uring
 * (the same behaviour is asked of both). */
typedef int (*io_open_fn)(pl_io **out, const pl_io_options *options, char *err, size_t err_len);
static io_open_fn io_open = pl_io_posix_open;
#define ALSO_ON_URING(name) \
    static void name##_uring(void) { io_open = pl_io_uring_open; name(); }

static void open_io(node *n, const char *bind, int offload) {
    pl_io_options o = {.gso = offload, .gro = offload};
    char err[256];
    CHECK(pl_addr_parse(bind, &o.bind, err, sizeof err) == 0);
    int r = io_open(&n->io, &o, err, sizeof err);
    if (io_open == pl_io_uring_open && (r == -EPERM || r == -ENOSYS)) {
        /* io_uring refused here (a container's seccomp policy): nothing of it to test. */
        fprintf(stderr, "  skipped: %s\n", err);
        longjmp(test_jump, 1);
    }
    if (r != 0) fprintf(stderr, "  %s\n", err);
    CHECK(r == 0);
    CHECK(strcmp(n->io->ops->name, io_open == pl_io_posix_open ? "posix" : "uring") == 0);
}

/* ---- the sending host ---- */

static int send_event(void *ctx, pure_link *pl, const pure_link_event *ev, int refused, uint64_t now) {
    node *n = ctx;
    if (ev->kind == PURE_LINK_EVENT_STORED) n->stored = ev->record;
    if (ev->kind == PURE_LINK_EVENT_CLOSED) return STOP_CLOSED;
    if (n->move_at && n->stored >= n->move_at) {
        n->move_at = 0;
        return STOP_MOVE;
    }
    return 0;
}

static int send_turn(void *ctx, pure_link *pl, int watched, uint64_t now) {
    node *n = ctx;
    uint8_t rec[3000];
    while (n->queued < n->count) {
        size_t len = record_len(n->queued);
        for (size_t k = 0; k < len; k++) rec[k] = record_byte(n->queued, k);
        int64_t r = pure_link_send(pl, n->sender, rec, len, now);
        if (r == PURE_LINK_ERR_FULL) break;
        if (r != n->queued) return -EIO;
        n->queued++;
    }
    if (n->queued == n->count && !n->closed) {
        n->closed = 1;
        pure_link_sender_close(pl, n->sender, now);
    }
    return now > n->give_up_ns ? STOP_GAVE_UP : 0;
}

static uint64_t send_wake(void *ctx) {
    node *n = ctx;
    return n->give_up_ns;
}

/* ---- the receiving host ---- */

static int recv_event(void *ctx, pure_link *pl, const pure_link_event *ev, int refused, uint64_t now) {
    node *n = ctx;
    if (ev->kind == PURE_LINK_EVENT_STREAM_OPEN) {
        /* A new run starts at 0; this host never restarts, so nothing is stored before. */
        return pure_link_stream_answer(pl, ev->stream, 0, 0, now) == 0 ? 0 : -EIO;
    }
    if (ev->kind != PURE_LINK_EVENT_RECORD) return 0;
    int64_t i = ev->record;
    if (i < 0 || i >= n->count || n->seen[i]) {
        n->duplicates++;
        return 0;
    }
    n->seen[i] = 1;
    n->records++;
    size_t len = ev->len + ev->len2;
    if (len != record_len(i)) n->bad++;
    for (size_t k = 0; k < len && k < record_len(i); k++) {
        uint8_t b = k < ev->len ? ev->data[k] : ev->data2[k - ev->len];
        if (b != record_byte(i, k)) {
            n->bad++;
            break;
        }
    }
    return pure_link_stored(pl, ev->stream, i + 1, now) == 0 ? 0 : -EIO;
}

static uint64_t recv_wake(void *ctx) { return pl_now_ns() + S / 20; }

static void *run_node(void *arg) {
    node *n = arg;
    n->result = pl_driver_run(&n->dc, NULL, n->err, sizeof n->err);
    return NULL;
}

/* Sends `count` records from `sender_bind` to a receiver on `recv_bind`; with move_at, the
 * sender's socket is closed once that many are stored and the rest leave from a new one. */
static void transfer(const char *recv_bind, const char *sender_bind, int offload, int64_t count, int64_t move_at,
                     pure_link_stats *recv_stats, pure_link_stats *send_stats) {
    CHECK(sodium_init() >= 0);
    node *rx = calloc(1, sizeof *rx), *tx = calloc(1, sizeof *tx);
    endpoint(rx, 1);
    endpoint(tx, 2);
    CHECK(pure_link_wire_peer(rx->pl, tx->pub, "*", pl_now_ns()) == 0);
    open_io(rx, recv_bind, offload);
    open_io(tx, sender_bind, offload);
    rx->count = tx->count = count;
    rx->seen = calloc((size_t)count, 1);
    pure_link_sender_config sc = {.version = PURE_LINK_VERSION, .source = "out", .input = "in", .shape = 7};
    memcpy(sc.receiver_public, rx->pub, 32);
    CHECK(rx->io->ops->local(rx->io, &sc.receiver_addr) == 0);
    if (recv_bind[0] == ':') { /* a dual-stack receiver: reach it at its IPv4 loopback */
        char to[64], err[256];
        snprintf(to, sizeof to, "127.0.0.1:%u", pl_addr_port(&sc.receiver_addr));
        CHECK(pl_addr_parse(to, &sc.receiver_addr, err, sizeof err) == 0);
    }
    tx->sender = pure_link_sender_open(tx->pl, &sc, pl_now_ns());
    CHECK(tx->sender >= 0);
    tx->move_at = move_at;
    tx->give_up_ns = pl_now_ns() + GIVE_UP_NS;
    rx->dc = (pl_driver_config){.pl = rx->pl, .io = rx->io, .stop = &rx->stop,
                                .host = {.ctx = rx, .event = recv_event, .wake_ns = recv_wake}};
    tx->dc = (pl_driver_config){.pl = tx->pl, .io = tx->io,
                                .host = {.ctx = tx, .event = send_event, .turn = send_turn, .wake_ns = send_wake}};
    CHECK(pthread_create(&rx->thread, NULL, run_node, rx) == 0);
    int moves = 0;
    for (;;) {
        run_node(tx);
        if (tx->result != STOP_MOVE) break;
        /* A real rebinding: the old socket is gone, the rest leaves from a new port. */
        pure_link_addr before, after;
        CHECK(tx->io->ops->local(tx->io, &before) == 0);
        tx->io->ops->close(tx->io);
        open_io(tx, sender_bind, offload);
        CHECK(tx->io->ops->local(tx->io, &after) == 0);
        CHECK(pl_addr_port(&before) != pl_addr_port(&after));
        tx->dc.io = tx->io;
        moves++;
    }
    rx->stop = 1;
    pthread_join(rx->thread, NULL);
    if (tx->result != STOP_CLOSED) fprintf(stderr, "  sender: %d %s (stored %lld)\n", tx->result, tx->err, (long long)tx->stored);
    fprintf(stderr, "  %lld records, %lld duplicates, %lld bad, gso batches %llu, gro batches %llu\n",
            (long long)rx->records, (long long)rx->duplicates, (long long)rx->bad,
            (unsigned long long)tx->io->stats.gso_batches, (unsigned long long)rx->io->stats.gro_batches);
    CHECK(tx->result == STOP_CLOSED);
    CHECK(rx->result == 0);
    CHECK_EQ_U(tx->stored, count);
    CHECK_EQ_U(rx->records, count);
    CHECK_EQ_U(rx->duplicates, 0);
    CHECK_EQ_U(rx->bad, 0);
    if (move_at) CHECK_EQ_U(moves, 1);
    recv_stats->version = send_stats->version = PURE_LINK_STATS_VERSION;
    CHECK(pure_link_stats_get(rx->pl, -1, recv_stats) == 0);
    /* A closed sender's figures outlive its CLOSED event; the receiver counts its epochs. */
    CHECK(pure_link_stats_get(tx->pl, tx->sender, send_stats) == 0);
    CHECK_EQ_U(send_stats->records_stored, count);
    CHECK(recv_stats->epochs >= 1);
    tx->io->ops->close(tx->io);
    rx->io->ops->close(rx->io);
    free(rx->seen), free(rx->mem), free(tx->mem), free(rx), free(tx);
}

static void ipv4_with_gso_and_gro_exactly_once(void) {
    pure_link_stats st, tx;
    transfer("127.0.0.1:0", "127.0.0.1:0", 1, 20000, 0, &st, &tx);
}

static void ipv6_without_offloads_exactly_once(void) {
    pure_link_stats st, tx;
    transfer("[::1]:0", "[::1]:0", 0, 5000, 0, &st, &tx);
}

static void ipv4_to_a_dual_stack_receiver(void) {
    pure_link_stats st, tx;
    transfer(":0", "127.0.0.1:0", 1, 2000, 0, &st, &tx); /* [::] takes IPv4 as mapped addresses */
}

static void sender_port_changes_mid_transfer(void) {
    pure_link_stats st, tx;
    transfer("127.0.0.1:0", "127.0.0.1:0", 1, 10000, 4000, &st, &tx);
    /* The run moved once; each of its two addresses was validated by a RESPONSE to a
     * CHALLENGE the sender heard there before any of it counted as validated. */
    fprintf(stderr, "  moves %llu, validated %llu, challenges heard %llu\n", (unsigned long long)st.address_moves,
            (unsigned long long)st.addresses_validated, (unsigned long long)tx.challenges_received);
    CHECK_EQ_U(st.address_moves, 1);
    CHECK_EQ_U(st.addresses_validated, 2);
    CHECK(tx.challenges_received >= 2);
}

static void address_parsing_edges(void) {
    pure_link_addr a;
    char err[256], buf[64];
    CHECK(pl_addr_parse("127.0.0.1:65535", &a, err, sizeof err) == 0);
    CHECK(strcmp(pl_addr_format(&a, buf, sizeof buf), "127.0.0.1:65535") == 0);
    CHECK(pl_addr_parse("127.0.0.1:65536", &a, err, sizeof err) != 0);
    CHECK(strstr(err, "0..65535") != NULL);
    CHECK(pl_addr_parse("[::1]:9", &a, err, sizeof err) == 0);
    CHECK(strcmp(pl_addr_format(&a, buf, sizeof buf), "[::1]:9") == 0);
    CHECK(pl_addr_parse("::1:9", &a, err, sizeof err) != 0);  /* IPv6 needs brackets */
    CHECK(pl_addr_parse("127.0.0.1", &a, err, sizeof err) != 0);
    CHECK(pl_addr_parse("127.0.0.1:", &a, err, sizeof err) != 0);
    CHECK(pl_addr_parse(":4433", &a, err, sizeof err) == 0 && pl_addr_port(&a) == 4433);
}

static void address_in_use_is_one_line(void) {
    node a = {0}, b = {0};
    open_io(&a, "127.0.0.1:0", 1);
    pure_link_addr at;
    CHECK(a.io->ops->local(a.io, &at) == 0);
    char text[64], err[256];
    pl_addr_format(&at, text, sizeof text);
    pl_io_options o = {.gso = 1, .gro = 1};
    CHECK(pl_addr_parse(text, &o.bind, err, sizeof err) == 0);
    CHECK(io_open(&b.io, &o, err, sizeof err) == -EADDRINUSE);
    fprintf(stderr, "  %s\n", err);
    CHECK(strstr(err, "Address already in use") != NULL && strchr(err, '\n') == NULL);
    a.io->ops->close(a.io);
}

ALSO_ON_URING(ipv4_with_gso_and_gro_exactly_once)
ALSO_ON_URING(ipv6_without_offloads_exactly_once)
ALSO_ON_URING(ipv4_to_a_dual_stack_receiver)
ALSO_ON_URING(sender_port_changes_mid_transfer)
ALSO_ON_URING(address_in_use_is_one_line)

TEST_MAIN(TEST_CASE(ipv4_with_gso_and_gro_exactly_once), TEST_CASE(ipv6_without_offloads_exactly_once),
          TEST_CASE(ipv4_to_a_dual_stack_receiver), TEST_CASE(sender_port_changes_mid_transfer),
          TEST_CASE(address_parsing_edges), TEST_CASE(address_in_use_is_one_line),
          TEST_CASE(ipv4_with_gso_and_gro_exactly_once_uring), TEST_CASE(ipv6_without_offloads_exactly_once_uring),
          TEST_CASE(ipv4_to_a_dual_stack_receiver_uring), TEST_CASE(sender_port_changes_mid_transfer_uring),
          TEST_CASE(address_in_use_is_one_line_uring))
