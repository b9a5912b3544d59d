/* test_api.c: the public API at its edges — config limits, memory sizing, names, queue
 * bounds, wiring collisions, error strings, the stats version. */
#include "harness.h"
#include "link_loop.h"

static pure_link_config base(void) {
    pure_link_config c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < 32; i++) c.static_secret[i] = (uint8_t)(i + 1);
    return c;
}

static void config_limits_give_size_zero(void) {
    pure_link_config c = base();
    CHECK(pure_link_size(&c) > 0);  /* all defaults */
    c.version = 2;
    CHECK_EQ_U(pure_link_size(&c), 0);
    c = base(), c.send_queue_bytes = PURE_LINK_RECORD_MOST + 7;  /* cannot hold one record */
    CHECK_EQ_U(pure_link_size(&c), 0);
    c.send_queue_bytes = PURE_LINK_RECORD_MOST + 8;
    CHECK(pure_link_size(&c) > 0);
    c = base(), c.stream_buffer_bytes = PURE_LINK_RECORD_MOST + 7;
    CHECK_EQ_U(pure_link_size(&c), 0);
    /* The receive pool holds at least one largest record (16 MiB + 8 B in 16 KiB blocks). */
    c = base(), c.receive_memory_bytes = 16u * 1024 * 1024 + 32 * 1024 - 1;
    CHECK_EQ_U(pure_link_size(&c), 0);
    c.receive_memory_bytes += 1;
    CHECK(pure_link_size(&c) > 0);
    c = base(), c.send_memory_bytes = 16u * 1024 * 1024 + 32 * 1024 - 1;
    CHECK_EQ_U(pure_link_size(&c), 0);
    c.send_memory_bytes += 1;
    CHECK(pure_link_size(&c) > 0);
    c = base(), c.packets_in_flight_most = 63;
    CHECK_EQ_U(pure_link_size(&c), 0);
    c = base(), c.congestion = 99;
    CHECK_EQ_U(pure_link_size(&c), 0);
    /* The AEAD limit is a spec value: a new epoch must be offered while 2^16 packets are
     * left under the key (spec/protocol.md §3). */
    c = base(), c.epoch_packets = (1ull << 23) - (1ull << 16) + 1;
    CHECK_EQ_U(pure_link_size(&c), 0);
    c.epoch_packets = (1ull << 23) - (1ull << 16);
    CHECK(pure_link_size(&c) > 0);
    /* Durations added to clock readings are bounded, so no sum can wrap. */
    c = base(), c.epoch_ns = PURE_LINK_DURATION_NS_MOST + 1;
    CHECK_EQ_U(pure_link_size(&c), 0);
    c.epoch_ns = PURE_LINK_DURATION_NS_MOST;
    CHECK(pure_link_size(&c) > 0);
    c = base(), c.idle_ns = PURE_LINK_DURATION_NS_MOST + 1;
    CHECK_EQ_U(pure_link_size(&c), 0);
    c.idle_ns = PURE_LINK_DURATION_NS_MOST;
    CHECK(pure_link_size(&c) > 0);
    /* The spec's 25 ms ack bound cannot be configured away. */
    c = base(), c.ack_delay_us = PURE_LINK_ACK_DELAY_US_MOST + 1;
    CHECK_EQ_U(pure_link_size(&c), 0);
    c.ack_delay_us = PURE_LINK_ACK_DELAY_US_MOST;
    CHECK(pure_link_size(&c) > 0);
}

static void init_refuses_too_little_memory(void) {
    pure_link_config c = base();
    c.senders_most = 1, c.runs_most = 1, c.peers_most = 1;
    size_t n = pure_link_size(&c);
    void *mem = aligned_alloc(PURE_LINK_ALIGN, (n + 63) / 64 * 64);
    uint8_t seed[32] = {0};
    CHECK(pure_link_init(mem, n - 1, &c, seed, 0) == NULL);
    pure_link *pl = pure_link_init(mem, n, &c, seed, 0);
    CHECK(pl != NULL);
    CHECK(pure_link_deadline(pl) == UINT64_MAX);  /* nothing to do */
    uint8_t buf[PURE_LINK_DATAGRAM_MOST];
    pure_link_addr to;
    CHECK(pure_link_pull(pl, buf, sizeof buf - 1, &to, 0) == PURE_LINK_ERR_BUFFER);
    CHECK(pure_link_pull(pl, buf, sizeof buf, &to, 0) == 0);
    free(mem);
}

static void sender_names_and_queue_bounds(void) {
    ll_net n;
    ll_init(&n, 31, 1000000);
    pure_link_config c = {.senders_most = 2, .send_queue_records = 3};
    int a = ll_node_add(&n, &c), b = ll_node_add(&n, NULL);
    char long_name[PURE_LINK_NAME_MOST + 2];
    memset(long_name, 'x', sizeof long_name);
    long_name[PURE_LINK_NAME_MOST + 1] = 0;
    CHECK(ll_link(&n, a, b, long_name, "in", 1) == PURE_LINK_ERR_INVALID);  /* 65 bytes */
    long_name[PURE_LINK_NAME_MOST] = 0;
    CHECK(ll_link(&n, a, b, "", "in", 1) == PURE_LINK_ERR_INVALID);
    CHECK(ll_link(&n, a, b, "a\nb", "in", 1) == PURE_LINK_ERR_INVALID);
    int s = ll_link(&n, a, b, long_name, "in", 1);  /* exactly 64 bytes */
    CHECK(s == 0);
    CHECK(ll_link(&n, a, b, "two", "in", 1) == 1);
    CHECK(ll_link(&n, a, b, "three", "in", 1) == PURE_LINK_ERR_FULL);  /* senders_most */
    CHECK(pure_link_send(n.node[a].pl, s, "r", 1, 0) == 0);
    CHECK(pure_link_send(n.node[a].pl, s, "r", 1, 0) == 1);
    CHECK(pure_link_send(n.node[a].pl, s, "r", 1, 0) == 2);
    CHECK(pure_link_send(n.node[a].pl, s, "r", 1, 0) == PURE_LINK_ERR_FULL);  /* send_queue_records */
    CHECK(pure_link_send(n.node[a].pl, 1, "x", PURE_LINK_RECORD_MOST + 1, 0) == PURE_LINK_ERR_TOO_BIG);
    CHECK(pure_link_send(n.node[a].pl, 1, "", 0, 0) == 0);  /* an empty record is a record */
    CHECK(pure_link_sender_run(n.node[a].pl, s) != 0);
    CHECK(pure_link_sender_run(n.node[a].pl, s) != pure_link_sender_run(n.node[a].pl, 1));
    CHECK(pure_link_sender_close(n.node[a].pl, s, 0) == 0);
    CHECK(pure_link_send(n.node[a].pl, s, "r", 1, 0) == PURE_LINK_ERR_CLOSED);
    ll_free(&n);
}

static void wiring_refuses_a_key_id_twice(void) {
    ll_net n;
    ll_init(&n, 32, 1000000);
    pure_link_config c = {.peers_most = 2};
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, &c), d = ll_node_add(&n, NULL), e = ll_node_add(&n, NULL);
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[a].pub, "*", 0) == 0);
    /* The same key again has the same key id: refused, state stays keyed by one key. */
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[a].pub, "*", 0) == PURE_LINK_ERR_WIRING);
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[d].pub, "", 0) == PURE_LINK_ERR_INVALID);
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[d].pub, "x\ny", 0) == 1);
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[e].pub, "*", 0) == PURE_LINK_ERR_FULL);  /* peers_most */
    ll_free(&n);
}

/* PURE_LINK_NONE makes a receiver-only or a sender-only endpoint; 0 keeps the default, and
 * filling in defaults twice changes nothing. */
static void none_gives_one_sided_endpoints(void) {
    pure_link_config c = base();
    size_t both = pure_link_size(&c);
    pure_link_config_default(&c);
    CHECK_EQ_U(pure_link_size(&c), both);
    pure_link_config rx = base(), tx = base();
    rx.senders_most = PURE_LINK_NONE;
    tx.peers_most = PURE_LINK_NONE;
    CHECK(pure_link_size(&rx) > 0 && pure_link_size(&rx) < both);
    CHECK(pure_link_size(&tx) > 0 && pure_link_size(&tx) < both);
    pure_link_config_default(&tx);
    CHECK_EQ_U(tx.runs_most, PURE_LINK_NONE);  /* no peers: no run slots either */
    CHECK(pure_link_size(&tx) > 0);
    c = base(), c.peers_most = PURE_LINK_NONE, c.runs_most = 4;  /* run slots with no peer */
    CHECK_EQ_U(pure_link_size(&c), 0);
    c = base(), c.runs_most = PURE_LINK_NONE;  /* peers with no run slot */
    CHECK_EQ_U(pure_link_size(&c), 0);
    ll_net n;
    ll_init(&n, 33, 1000000);
    int a = ll_node_add(&n, &tx), b = ll_node_add(&n, &rx);
    CHECK(ll_link(&n, b, a, "x", "in", 1) == PURE_LINK_ERR_FULL);      /* b has no sender */
    CHECK(ll_wire(&n, a, b, "*") == PURE_LINK_ERR_FULL);               /* a has no peer */
    CHECK(ll_wire(&n, b, a, "*") == 0);
    int s = ll_link(&n, a, b, "x", "in", 1);
    CHECK(s == 0);
    for (int i = 0; i < 10; i++) CHECK(pure_link_send(n.node[a].pl, s, "record", 6, 0) == i);
    ll_run(&n, 5000000000ull, NULL, NULL);
    CHECK_EQ_U(n.node[b].records_delivered, 10);
    CHECK_EQ_U(n.node[a].stored_seen[0], 10);
    ll_free(&n);
}

static void every_error_has_a_name(void) {
    for (int code = 0; code >= PURE_LINK_ERR_NOT_FOUND; code--) {
        const char *s = pure_link_strerror(code);
        CHECK(s != NULL && strcmp(s, "unknown error") != 0);
    }
    CHECK(strcmp(pure_link_strerror(-1000), "unknown error") == 0);
    CHECK(strstr(pure_link_strerror(PURE_LINK_ERR_TOO_BIG), "16 MiB") != NULL);
}

static void stats_for_sender_and_endpoint(void) {
    ll_net n;
    ll_init(&n, 33, 1000000);
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, NULL);
    CHECK(ll_wire(&n, b, a, "*") >= 0);
    int s = ll_link(&n, a, b, "out", "in", 1);
    for (int i = 0; i < 10; i++) CHECK(pure_link_send(n.node[a].pl, s, "0123456789", 10, 0) == i);
    ll_run(&n, 1000000000ull, NULL, NULL);
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n.node[a].pl, s, &st) == 0);
    CHECK_EQ_U(st.records_queued, 10);
    CHECK_EQ_U(st.records_sent, 10);
    CHECK_EQ_U(st.records_stored, 10);
    CHECK(st.rtt_ns_min >= 2000000 && st.rtt_ns_smoothed >= st.rtt_ns_min);
    CHECK(st.cwnd_bytes > 0);
    CHECK(pure_link_stats_get(n.node[a].pl, 1, &st) == PURE_LINK_ERR_NOT_FOUND);
    pure_link_stats rs = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n.node[b].pl, -1, &rs) == 0);
    CHECK_EQ_U(rs.records_delivered, 10);
    CHECK_EQ_U(rs.records_stored, 10);
    CHECK(rs.packets_received >= 2);
    ll_free(&n);
}

/* pure_link_last_drop names the drops a host may tell its operator about, one datagram at
 * a time: a key the receiver does not know, a packet that does not open; else 0. */
static void last_drop_names_unknown_key_and_auth(void) {
    ll_net n;
    ll_init(&n, 34, 1000000);
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, NULL), c = ll_node_add(&n, NULL);
    CHECK(ll_wire(&n, b, a, "*") == 0);   /* a is wired at b, c is not */
    int sa = ll_link(&n, a, b, "out", "in", 1), sc = ll_link(&n, c, b, "out", "in", 1);
    CHECK(pure_link_send(n.node[a].pl, sa, "record", 6, 0) == 0);
    CHECK(pure_link_send(n.node[c].pl, sc, "record", 6, 0) == 0);
    uint8_t pa[PURE_LINK_DATAGRAM_MOST], pc[PURE_LINK_DATAGRAM_MOST], bad[PURE_LINK_DATAGRAM_MOST];
    pure_link_addr to;
    int la = pure_link_pull(n.node[a].pl, pa, sizeof pa, &to, 0), lc = pure_link_pull(n.node[c].pl, pc, sizeof pc, &to, 0);
    CHECK(la > 32 && lc > 32);
    pure_link *rx = n.node[b].pl;
    CHECK_EQ_U(pure_link_last_drop(rx), 0);
    memcpy(bad, pa, (size_t)la);
    bad[la - 1] ^= 1;   /* the tag */
    CHECK(pure_link_receive(rx, &n.node[a].addr, bad, (size_t)la, 0) == 0);
    CHECK_EQ_U(pure_link_last_drop(rx), PURE_LINK_DROP_AUTH);
    CHECK(pure_link_receive(rx, &n.node[a].addr, pa, (size_t)la, 0) == 0);
    CHECK_EQ_U(pure_link_last_drop(rx), 0);
    CHECK(pure_link_receive(rx, &n.node[c].addr, pc, (size_t)lc, 0) == 0);
    CHECK_EQ_U(pure_link_last_drop(rx), PURE_LINK_DROP_UNKNOWN_KEY);
    CHECK(pure_link_receive(rx, &n.node[c].addr, pc, 3, 0) == 0);   /* a bad header: another drop */
    CHECK_EQ_U(pure_link_last_drop(rx), 0);
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(rx, -1, &st) == 0);
    CHECK_EQ_U(st.dropped_auth, 1);
    CHECK_EQ_U(st.dropped_unknown_key, 1);
    CHECK_EQ_U(st.dropped_bad_header, 1);
    ll_free(&n);
}

/* A peer unwired mid-transfer: its run ends at once (slot free, nothing more delivered, its
 * datagrams dropped as of an unknown key), another peer's run goes on, and the next wiring
 * takes the freed index. */
static void unwire_ends_a_peers_runs_and_frees_its_index(void) {
    pure_link_config rc = base();
    rc.peers_most = 2;
    ll_net n;
    ll_init(&n, 35, 1000000);
    int a = ll_node_add(&n, NULL), c = ll_node_add(&n, NULL), b = ll_node_add(&n, &rc), d = ll_node_add(&n, NULL);
    CHECK(ll_wire(&n, b, a, "*") == 0);
    CHECK(ll_wire(&n, b, c, "*") == 1);
    int sa = ll_link(&n, a, b, "out", "in", 1), sc = ll_link(&n, c, b, "out", "in", 1);
    for (int i = 0; i < 10; i++) {
        CHECK(pure_link_send(n.node[a].pl, sa, "0123456789", 10, 0) == i);
        CHECK(pure_link_send(n.node[c].pl, sc, "0123456789", 10, 0) == i);
    }
    ll_run(&n, 1000000000ull, NULL, NULL);
    CHECK_EQ_U(n.node[b].records_delivered, 20);
    pure_link *r = n.node[b].pl;
    pure_link_run_info info;
    int a_stream = -1;
    for (int h = 0; h < 2; h++)
        if (pure_link_run_info_get(r, h, &info) == 0 && info.peer == 0) a_stream = h;
    CHECK(a_stream >= 0);
    CHECK(pure_link_unwire_peer(r, 0, n.now_ns) == 0);
    CHECK(pure_link_unwire_peer(r, 0, n.now_ns) == PURE_LINK_ERR_NOT_FOUND);
    CHECK(pure_link_unwire_peer(r, 2, n.now_ns) == PURE_LINK_ERR_NOT_FOUND);
    CHECK(pure_link_run_info_get(r, a_stream, &info) == PURE_LINK_ERR_NOT_FOUND);
    pure_link_stats before = {.version = PURE_LINK_STATS_VERSION}, after = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(r, -1, &before) == 0);
    for (int i = 0; i < 5; i++) {
        CHECK(pure_link_send(n.node[a].pl, sa, "abcdefghij", 10, n.now_ns) >= 0);
        CHECK(pure_link_send(n.node[c].pl, sc, "abcdefghij", 10, n.now_ns) >= 0);
    }
    ll_run(&n, n.now_ns + 3000000000ull, NULL, NULL);
    CHECK(pure_link_stats_get(r, -1, &after) == 0);
    CHECK_EQ_U(n.node[b].records_delivered, 25);   /* c's five, none of a's */
    CHECK(after.dropped_unknown_key > before.dropped_unknown_key);
    /* Wired and unwired again and again: the key index forgets each one (no room leaks). */
    for (int i = 0; i < 1000; i++) {
        CHECK(pure_link_wire_peer(r, n.node[d].pub, "*", n.now_ns) == 0);   /* the freed index */
        CHECK(pure_link_unwire_peer(r, 0, n.now_ns) == 0);
    }
    CHECK(pure_link_wire_peer(r, n.node[d].pub, "*", n.now_ns) == 0);
    CHECK(pure_link_wire_peer(r, n.node[a].pub, "*", n.now_ns) == PURE_LINK_ERR_FULL);
    ll_free(&n);
}

/* A receiver's run, as a status view reads it: the one slot in use, and none other. */
static void run_info_reads_a_receivers_run(void) {
    ll_net n;
    ll_init(&n, 34, 1000000);
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, NULL);
    CHECK(ll_wire(&n, b, a, "*") == 0);
    int s = ll_link(&n, a, b, "out", "in", 1);
    pure_link_run_info info;
    CHECK(pure_link_run_info_get(n.node[b].pl, 0, &info) == PURE_LINK_ERR_NOT_FOUND);  /* nothing heard yet */
    for (int i = 0; i < 10; i++) CHECK(pure_link_send(n.node[a].pl, s, "0123456789", 10, 0) == i);
    n.node[b].hold_stored = 1;   /* delivered, not yet durable */
    ll_run(&n, 1000000000ull, NULL, NULL);
    CHECK(pure_link_run_info_get(n.node[b].pl, 0, &info) == 0);
    CHECK(info.peer == 0 && info.accepted == 1);
    CHECK(info.run == pure_link_sender_run(n.node[a].pl, s));
    CHECK_EQ_U(info.records_delivered, 10);
    CHECK_EQ_U(info.records_stored, 0);
    ll_store_all(&n, b);
    ll_run(&n, 2000000000ull, NULL, NULL);
    CHECK(pure_link_run_info_get(n.node[b].pl, 0, &info) == 0);
    CHECK_EQ_U(info.records_stored, 10);
    CHECK(info.bytes_delivered >= 100 && info.bytes_delivered < 200);   /* 10 records and their framing */
    CHECK(info.last_heard_ns > 0 && info.last_heard_ns <= 2000000000ull);
    CHECK(ll_addr_node(&n, &info.addr) == a);
    CHECK(pure_link_run_info_get(n.node[b].pl, 1, &info) == PURE_LINK_ERR_NOT_FOUND);
    ll_free(&n);
}

TEST_MAIN(TEST_CASE(config_limits_give_size_zero), TEST_CASE(init_refuses_too_little_memory),
          TEST_CASE(sender_names_and_queue_bounds), TEST_CASE(wiring_refuses_a_key_id_twice),
          TEST_CASE(none_gives_one_sided_endpoints),
          TEST_CASE(every_error_has_a_name), TEST_CASE(stats_for_sender_and_endpoint),
          TEST_CASE(last_drop_names_unknown_key_and_auth),
          TEST_CASE(run_info_reads_a_receivers_run),
          TEST_CASE(unwire_ends_a_peers_runs_and_frees_its_index))
