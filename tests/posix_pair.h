/* posix_pair.h: a sender and a receiver endpoint on loopback, each in its own pl_driver
 * loop and thread over real UDP sockets of the POSIX shim (pl_io_posix_open), for the
 * shim's tests (tests/unit/test_posix.c) and its benchmark (tests/bench/bench_posix.c).
 *
 * The receiving host keeps nothing but a seen-bit per record and calls pure_link_stored
 * at once, so that the driver and the backend are measured and tested alone (the store
 * has its own tests; the tool's tests run the whole) — or, given a store (pp_options.store),
 * the driver hands every event to it first and the store answers and reports what is
 * stored.  Header-only; include it once, after defining _GNU_SOURCE. */
#ifndef POSIX_PAIR_H
#define POSIX_PAIR_H

#include <errno.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_driver.h"
#include "pl_io.h"
#include "pl_store.h"

#define PP_S 1000000000ull
#define PP_GIVE_UP_NS (60 * PP_S) /* a run that takes longer has failed */
#define PP_DRAIN_NS (5 * PP_S)    /* the receiver's wait for the sender's last datagrams */
#define PP_RECORD_MOST (64u << 10)

enum { PP_STOP_CLOSED = 1, PP_STOP_GAVE_UP = 2, PP_STOP_MOVE = 3 };

typedef struct pp_options {
    const char *recv_bind, *send_bind;
    int offload;              /* 1: GSO and GRO where the kernel has them */
    int64_t count;            /* records */
    size_t size;              /* 0: varying sizes 1..3000 B; else every record this size */
    int check;                /* 1: the receiver checks every byte */
    int64_t move_at;          /* > 0: the sender moves to a new socket after this many stored */
    int (*io_open)(pl_io **out, const pl_io_options *options, char *err, size_t err_len); /* NULL: POSIX */
    pl_store *store;          /* NULL: the host says each record stored at once; else this
                                 store (input "in", shape 7) answers and stores */
    int64_t hold_after;       /* > 0: the sender queues no record past this many until it has
                                 heard STORED, so that at least one claim comes mid-transfer
                                 however the machine's load groups the receiver's commits */
} pp_options;

typedef struct pp_node {
    pure_link *pl;
    void *mem;
    pl_io *io;
    uint8_t pub[32];
    pthread_t thread;
    volatile sig_atomic_t stop;
    pl_driver_config dc;
    int result, open_rc;
    char err[256];
    const pp_options *o;
    uint8_t *rec;
    /* sender */
    int sender, closed;
    int64_t queued, stored, move_at;
    uint64_t give_up_ns;
    /* receiver: once the sender has stopped it publishes how many datagrams it sent
     * (drain_packets, 0 before), and the receiver stops when it has taken in as many */
    uint64_t drain_packets, drain_end_ns;
    uint8_t *seen;
    int64_t records, duplicates, bad;
    uint64_t record_bytes;
} pp_node;

typedef struct pp_result {
    int ok;                   /* the sender closed with every record stored */
    int open_error;           /* the backend's open failed with this (negative errno) */
    int moves;
    int64_t records, duplicates, bad;
    uint64_t record_bytes, wall_ns;
    pure_link_stats recv_stats, send_stats;
    pl_io_stats recv_io, send_io;
    char why[640];
} pp_result;

static size_t pp_len(const pp_options *o, int64_t i) { return o->size ? o->size : 1 + (size_t)(i * 7919) % 3000; }
static uint8_t pp_byte(int64_t i, size_t k) { return (uint8_t)(i * 31 + (int64_t)k); }

static int pp_endpoint(pp_node *n, unsigned char tag, int sending) {
    pure_link_config cfg = {.senders_most = sending ? 1 : PURE_LINK_NONE, .peers_most = sending ? PURE_LINK_NONE : 1,
                            .runs_most = sending ? 0 : 4};
    pure_link_config_default(&cfg);
    memset(cfg.static_secret, tag, 32);
    size_t size = pure_link_size(&cfg);
    n->mem = aligned_alloc(PURE_LINK_ALIGN, (size + PURE_LINK_ALIGN - 1) / PURE_LINK_ALIGN * PURE_LINK_ALIGN);
    uint8_t seed[32];
    randombytes_buf(seed, sizeof seed);
    n->pl = n->mem ? pure_link_init(n->mem, size, &cfg, seed, pl_now_ns()) : NULL;
    if (n->pl == NULL) return -1;
    pure_link_public_key(n->pl, n->pub);
    return 0;
}

static int pp_open_io(pp_node *n, const pp_options *po, const char *bind) {
    pl_io_options o = {.gso = po->offload, .gro = po->offload};
    int (*open_fn)(pl_io **, const pl_io_options *, char *, size_t) = po->io_open ? po->io_open : pl_io_posix_open;
    if (pl_addr_parse(bind, &o.bind, n->err, sizeof n->err) != 0) return -1;
    n->open_rc = open_fn(&n->io, &o, n->err, sizeof n->err);
    return n->open_rc == 0 ? 0 : -1;
}

/* ---- the sending host ---- */

static int pp_send_event(void *ctx, pure_link *pl, const pure_link_event *ev, int refused, uint64_t now) {
    pp_node *n = ctx;
    if (ev->kind == PURE_LINK_EVENT_STORED) n->stored = ev->record;
    if (ev->kind == PURE_LINK_EVENT_CLOSED) return PP_STOP_CLOSED;
    if (n->move_at && n->stored >= n->move_at) {
        n->move_at = 0;
        return PP_STOP_MOVE;
    }
    return 0;
}

static int pp_send_turn(void *ctx, pure_link *pl, int watched, uint64_t now) {
    pp_node *n = ctx;
    while (n->queued < n->o->count) {
        if (n->o->hold_after > 0 && n->queued >= n->o->hold_after && n->stored == 0) break;
        size_t len = pp_len(n->o, n->queued);
        if (n->o->check)
            for (size_t k = 0; k < len; k++) n->rec[k] = pp_byte(n->queued, k);
        int64_t r = pure_link_send(pl, n->sender, n->rec, len, now);
        if (r == PURE_LINK_ERR_FULL) break;
        if (r != n->queued) return -EIO;
        n->queued++;
    }
    if (n->queued == n->o->count && !n->closed) {
        n->closed = 1;
        pure_link_sender_close(pl, n->sender, now);
    }
    return now > n->give_up_ns ? PP_STOP_GAVE_UP : 0;
}

static uint64_t pp_send_wake(void *ctx) { return ((pp_node *)ctx)->give_up_ns; }

/* ---- the receiving host ---- */

static int pp_recv_event(void *ctx, pure_link *pl, const pure_link_event *ev, int refused, uint64_t now) {
    pp_node *n = ctx;
    if (ev->kind == PURE_LINK_EVENT_STREAM_OPEN && n->o->store) return refused ? -EIO : 0;  /* answered */
    if (ev->kind == PURE_LINK_EVENT_STREAM_OPEN) /* a new run; this host never restarts */
        return pure_link_stream_answer(pl, ev->stream, 0, 0, now) == 0 ? 0 : -EIO;
    if (ev->kind != PURE_LINK_EVENT_RECORD) return 0;
    int64_t i = ev->record;
    if (i < 0 || i >= n->o->count || n->seen[i]) {
        n->duplicates++;
        return 0;
    }
    n->seen[i] = 1;
    n->records++;
    size_t len = ev->len + ev->len2;
    n->record_bytes += len;
    if (len != pp_len(n->o, i)) n->bad++;
    for (size_t k = 0; n->o->check && k < len && k < pp_len(n->o, i); k++) {
        uint8_t b = k < ev->len ? ev->data[k] : ev->data2[k - ev->len];
        if (b != pp_byte(i, k)) {
            n->bad++;
            break;
        }
    }
    if (n->o->store) return 0;  /* the store says it once it is durable */
    return pure_link_stored(pl, ev->stream, i + 1, now) == 0 ? 0 : -EIO;
}

static uint64_t pp_recv_wake(void *ctx) { return pl_now_ns() + PP_S / 20; }

/* The receiver stops only after every datagram the sender sent came in (or PP_DRAIN_NS
 * passed, for one loopback lost): what it counts — a RESPONSE that validated an address,
 * the last records — must not depend on the thread that stopped it. */
static int pp_recv_turn(void *ctx, pure_link *pl, int watched, uint64_t now) {
    pp_node *n = ctx;
    uint64_t want = __atomic_load_n(&n->drain_packets, __ATOMIC_ACQUIRE);
    if (want == 0) return 0;
    if (n->drain_end_ns == 0) n->drain_end_ns = now + PP_DRAIN_NS;
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(pl, -1, &st);
    if (st.packets_received >= want || now > n->drain_end_ns) n->stop = 1;
    return 0;
}

static void *pp_run_node(void *arg) {
    pp_node *n = arg;
    n->result = pl_driver_run(&n->dc, NULL, n->err, sizeof n->err);
    return NULL;
}

/* Sends o->count records to a receiver on o->recv_bind from o->send_bind; with move_at,
 * the sender's socket is closed once that many are stored and the rest leave from a new
 * one (a real rebinding: a new port).  Fills *out; returns 0 when it ran at all. */
static int pp_transfer(const pp_options *o, pp_result *out) {
    memset(out, 0, sizeof *out);
    if (sodium_init() < 0) return -1;
    pp_node *rx = calloc(1, sizeof *rx), *tx = calloc(1, sizeof *tx);
    rx->o = tx->o = o;
    tx->rec = calloc(1, o->size ? o->size : 3000);
    rx->seen = calloc((size_t)o->count, 1);
    int r = -1;
    if (pp_endpoint(rx, 1, 0) != 0 || pp_endpoint(tx, 2, 1) != 0 ||
        pure_link_wire_peer(rx->pl, tx->pub, "*", pl_now_ns()) != 0 || pp_open_io(rx, o, o->recv_bind) != 0 ||
        pp_open_io(tx, o, o->send_bind) != 0) {
        snprintf(out->why, sizeof out->why, "set-up: %s%s", rx->err, tx->err);
        out->open_error = rx->open_rc ? rx->open_rc : tx->open_rc;
        goto done;
    }
    pure_link_sender_config sc = {.version = PURE_LINK_VERSION, .source = "out", .input = "in", .shape = 7};
    memcpy(sc.receiver_public, rx->pub, 32);
    rx->io->ops->local(rx->io, &sc.receiver_addr);
    if (o->recv_bind[0] == ':') { /* a dual-stack receiver: reach it at its IPv4 loopback */
        char to[64];
        snprintf(to, sizeof to, "127.0.0.1:%u", pl_addr_port(&sc.receiver_addr));
        pl_addr_parse(to, &sc.receiver_addr, out->why, sizeof out->why);
    }
    uint64_t start = pl_now_ns();
    tx->sender = pure_link_sender_open(tx->pl, &sc, start);
    tx->move_at = o->move_at;
    tx->give_up_ns = start + PP_GIVE_UP_NS;
    pl_driver_store ds;
    if (o->store) {
        if (pl_store_peer(o->store, 0, tx->pub) != 0) goto done;
        ds = pl_driver_store_of(o->store);
    }
    rx->dc = (pl_driver_config){.pl = rx->pl, .io = rx->io, .store = o->store ? &ds : NULL, .stop = &rx->stop,
                                .host = {.ctx = rx, .event = pp_recv_event, .turn = pp_recv_turn,
                                         .wake_ns = pp_recv_wake}};
    tx->dc = (pl_driver_config){.pl = tx->pl, .io = tx->io,
                                .host = {.ctx = tx, .event = pp_send_event, .turn = pp_send_turn, .wake_ns = pp_send_wake}};
    if (tx->sender < 0 || pthread_create(&rx->thread, NULL, pp_run_node, rx) != 0) goto done;
    for (;;) {
        pp_run_node(tx);
        if (tx->result != PP_STOP_MOVE) break;
        pure_link_addr before, after;
        tx->io->ops->local(tx->io, &before);
        tx->io->ops->close(tx->io);
        tx->io = NULL;
        if (pp_open_io(tx, o, o->send_bind) != 0) break;
        tx->io->ops->local(tx->io, &after);
        if (pl_addr_port(&before) == pl_addr_port(&after)) break;
        tx->dc.io = tx->io;
        out->moves++;
    }
    out->wall_ns = pl_now_ns() - start;
    pure_link_stats sent = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(tx->pl, tx->sender, &sent);
    __atomic_store_n(&rx->drain_packets, sent.packets_sent ? sent.packets_sent : 1, __ATOMIC_RELEASE);
    pthread_join(rx->thread, NULL);
    out->ok = tx->result == PP_STOP_CLOSED && rx->result == 0 && tx->stored == o->count;
    if (!out->ok)
        snprintf(out->why, sizeof out->why, "sender %d (%s), receiver %d (%s), stored %lld", tx->result, tx->err,
                 rx->result, rx->err, (long long)tx->stored);
    out->records = rx->records, out->duplicates = rx->duplicates, out->bad = rx->bad;
    out->record_bytes = rx->record_bytes;
    out->recv_stats.version = out->send_stats.version = PURE_LINK_STATS_VERSION;
    pure_link_stats_get(rx->pl, -1, &out->recv_stats);
    pure_link_stats_get(tx->pl, tx->sender, &out->send_stats);
    if (tx->io) out->send_io = tx->io->stats;
    out->recv_io = rx->io->stats;
    r = 0;
done:
    if (tx->io) tx->io->ops->close(tx->io);
    if (rx->io) rx->io->ops->close(rx->io);
    free(rx->seen), free(tx->rec), free(rx->mem), free(tx->mem), free(rx), free(tx);
    return r;
}

#endif
