/* shims_consumer.c: a program built against the installed shims library alone (pkg-config
 * pure-link-shims, tests/sh/test_install.sh): a receiver endpoint with a durable store in
 * DIR, driven by pl_driver_run on a thread, and a sender endpoint driven on the main
 * thread, over loopback UDP.  It sends COUNT records and prints how many the store made
 * durable once the sender heard every one stored.
 * Usage: shims_consumer DIR COUNT */
#include <pl_driver.h>
#include <pl_io.h>
#include <pl_store.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECORD_BYTES 100u

static volatile sig_atomic_t receiver_stop;

typedef struct side {
    pure_link *pl;
    pl_io *io;
    void *mem;
} side;

typedef struct sending {
    int sender;
    long next, count;
    int closed, done;
} sending;

static int endpoint(side *s, uint32_t senders, uint32_t peers, unsigned char secret_byte) {
    pure_link_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.senders_most = senders;
    cfg.peers_most = peers;
    memset(cfg.static_secret, secret_byte, sizeof cfg.static_secret);
    pure_link_config_default(&cfg);
    size_t bytes = (pure_link_size(&cfg) + PURE_LINK_ALIGN - 1) / PURE_LINK_ALIGN * PURE_LINK_ALIGN;
    uint8_t seed[32];
    memset(seed, secret_byte + 1, sizeof seed);
    s->mem = aligned_alloc(PURE_LINK_ALIGN, bytes);
    s->pl = s->mem ? pure_link_init(s->mem, bytes, &cfg, seed, pl_now_ns()) : NULL;
    pl_io_options o = {.gso = 1, .gro = 1};
    char err[256];
    if (s->pl == NULL || pl_addr_parse("127.0.0.1:0", &o.bind, err, sizeof err) != 0 ||
        pl_io_open("posix", &s->io, &o, err, sizeof err) != 0) {
        fprintf(stderr, "shims_consumer: endpoint: %s\n", s->pl ? err : "init failed");
        return -1;
    }
    return 0;
}

static void *run_receiver(void *arg) {
    pl_driver_config *dc = arg;
    char err[256];
    if (pl_driver_run(dc, NULL, err, sizeof err) < 0 || pl_driver_commit_all(dc, err, sizeof err) != 0)
        fprintf(stderr, "shims_consumer: receiver: %s\n", err);
    return NULL;
}

static int on_turn(void *ctx, pure_link *pl, int watched, uint64_t now) {
    sending *s = ctx;
    uint8_t record[RECORD_BYTES];
    for (; s->next < s->count; s->next++) {
        memset(record, (int)(s->next & 0xff), sizeof record);
        if (pure_link_send(pl, s->sender, record, sizeof record, now) < 0) return 0;   /* full: later */
    }
    if (!s->closed) s->closed = 1, pure_link_sender_close(pl, s->sender, now);
    return 0;
}

static int on_event(void *ctx, pure_link *pl, const pure_link_event *ev, int refused, uint64_t now) {
    sending *s = ctx;
    if (ev->kind == PURE_LINK_EVENT_CLOSED) s->done = 1;
    return s->done;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    side r = {0}, t = {0};
    if (endpoint(&r, PURE_LINK_NONE, 1, 7) != 0 || endpoint(&t, 1, PURE_LINK_NONE, 9) != 0) return 1;
    uint8_t sender_public[32];
    pure_link_public_key(t.pl, sender_public);
    pl_store_input input = {.name = "in", .shape = 1, .dir = argv[1]};
    pl_store_config sc = {.inputs = &input, .inputs_len = 1};
    pl_store *store;
    char err[256];
    int peer = pure_link_wire_peer(r.pl, sender_public, "*", pl_now_ns());
    if (pl_store_open(&store, &sc, err, sizeof err) != 0 || peer < 0 || pl_store_peer(store, peer, sender_public) != 0) {
        fprintf(stderr, "shims_consumer: store: %s\n", err);
        return 1;
    }
    pl_driver_store ds = pl_driver_store_of(store);
    pl_driver_config rc = {.pl = r.pl, .io = r.io, .store = &ds, .stop = &receiver_stop};
    pthread_t thread;
    pthread_create(&thread, NULL, run_receiver, &rc);

    pure_link_sender_config cfg = {.version = PURE_LINK_VERSION, .source = "consumer", .input = "in", .shape = 1};
    pure_link_public_key(r.pl, cfg.receiver_public);
    r.io->ops->local(r.io, &cfg.receiver_addr);
    sending s = {.count = atol(argv[2])};
    s.sender = pure_link_sender_open(t.pl, &cfg, pl_now_ns());
    pl_driver_config tc = {.pl = t.pl, .io = t.io, .host = {.ctx = &s, .event = on_event, .turn = on_turn}};
    int result = s.sender < 0 ? -1 : pl_driver_run(&tc, NULL, err, sizeof err);
    receiver_stop = 1;
    pthread_join(thread, NULL);
    pl_store_stats st;
    pl_store_stats_get(store, &st);
    printf("shims_consumer: %llu of %ld records durable, sender %s\n", (unsigned long long)st.records_durable, s.count,
           result == 1 && s.done ? "done" : "failed");
    pl_store_close(store);
    r.io->ops->close(r.io), t.io->ops->close(t.io);
    free(r.mem), free(t.mem);
    return st.records_durable == (uint64_t)s.count && s.done ? 0 : 1;
}
