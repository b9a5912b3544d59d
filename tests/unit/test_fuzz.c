/* test_fuzz.c: bad input, deterministic and bounded — garbage datagrams get no answer but
 * the spec'd LOST; mutated packets fed behind a cipher that accepts everything reach the
 * frame parser and the state machines without a crash or a broken invariant.
 * (A libFuzzer entry point for the same endpoint lives in tests/fuzz/fuzz_endpoint.c.) */
#include "harness.h"
#include "link_loop.h"
#include "wire.h"

#define MS 1000000ull
#define S 1000000000ull

static uint64_t rng_state;
static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A cipher that opens everything: the tag is ignored, so every mutation reaches the
 * frame parser (the null cipher would stop it at the checksum). */
static int open_all(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len, const uint8_t *in,
                    size_t len, uint8_t *out) {
    (void)ctx, (void)nonce, (void)aad, (void)aad_len;
    if (len < 16) return -1;
    memmove(out, in, len - 16);
    return 0;
}
static pure_link_crypto open_all_table;

static void garbage_gets_no_answer_but_lost(void) {
    ll_net n;
    ll_init(&n, 21, 1 * MS);
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, NULL);
    CHECK(ll_wire(&n, b, a, "*") >= 0);
    uint32_t key_id = 0;  /* the wired key's id, big-endian on the wire */
    {
        /* Learn it from a real first packet. */
        CHECK(ll_link(&n, a, b, "out", "in", 1) == 0);
        CHECK(pure_link_send(n.node[a].pl, 0, "x", 1, 0) == 0);
        uint8_t buf[PURE_LINK_DATAGRAM_MOST];
        pure_link_addr to;
        CHECK(pure_link_pull(n.node[a].pl, buf, sizeof buf, &to, 0) > 0);
        key_id = (uint32_t)buf[2] << 24 | (uint32_t)buf[3] << 16 | (uint32_t)buf[4] << 8 | buf[5];
    }
    rng_state = 99;
    uint64_t answered = 0, lost = 0, garbage = 0;
    uint8_t d[1500], out[PURE_LINK_DATAGRAM_MOST];
    for (int i = 0; i < 200000; i++) {
        size_t len = (size_t)(rnd() % 1500);
        for (size_t k = 0; k < len; k++) d[k] = (uint8_t)rnd();
        int shape = (int)(rnd() % 4);
        if (shape >= 1 && len > 0) d[0] = 1;                       /* right version */
        if (shape >= 2 && len > 1) d[1] &= 0x3f;                   /* sender packet, no reserved bit */
        if (shape >= 3 && len > 6) d[2] = (uint8_t)(key_id >> 24), d[3] = (uint8_t)(key_id >> 16),
                                   d[4] = (uint8_t)(key_id >> 8), d[5] = (uint8_t)key_id;
        n.now_ns += 10 * MS;
        pure_link_addr from = {.len = 6, .bytes = {192, 0, 2, (uint8_t)i, 0, 9}};
        garbage += len;
        CHECK(pure_link_receive(n.node[b].pl, &from, d, len, n.now_ns) == 0);
        pure_link_addr to;
        int m;
        while ((m = pure_link_pull(n.node[b].pl, out, sizeof out, &to, n.now_ns)) > 0) {
            answered += (uint64_t)m;
            /* The only answer allowed: a LOST, smaller than its trigger, to its source. */
            CHECK(shape == 3 && (size_t)m <= len && len >= 64);
            CHECK(to.len == from.len && memcmp(to.bytes, from.bytes, from.len) == 0);
            lost++;
        }
        pure_link_event ev;
        while (pure_link_event_next(n.node[b].pl, &ev)) CHECK(ev.kind != PURE_LINK_EVENT_RECORD);
    }
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(n.node[b].pl, -1, &st);
    fprintf(stderr, "  %llu B of garbage, %llu B answered in %llu LOST notices; dropped: header %llu key %llu auth %llu\n",
            (unsigned long long)garbage, (unsigned long long)answered, (unsigned long long)lost,
            (unsigned long long)st.dropped_bad_header, (unsigned long long)st.dropped_unknown_key,
            (unsigned long long)st.dropped_auth);
    CHECK(answered <= garbage / 10);
    CHECK(st.dropped_bad_header > 0 && st.dropped_unknown_key > 0);
    ll_free(&n);
}

/* Mutations of real packets, opened by a cipher that accepts anything. */
typedef struct mutator { int on; uint64_t mutated; } mutator;
static int mutate_tap(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    (void)n, (void)from, (void)to;
    mutator *m = arg;
    if (!m->on || rnd() % 3 != 0) return 1;
    m->mutated++;
    int flips = 1 + (int)(rnd() % 4);
    for (int i = 0; i < flips; i++) {
        size_t at = 2 + (size_t)(rnd() % (len - 2));  /* keep version and direction */
        data[at] ^= (uint8_t)(1u << (rnd() % 8));
    }
    return 1;
}

static void mutated_packets_behind_open_all_cipher(void) {
    open_all_table = *pure_link_crypto_null();
    open_all_table.name = "open-all";
    open_all_table.aead_open = open_all;
    rng_state = 7;
    for (int round = 0; round < 20; round++) {
        ll_net n;
        ll_init(&n, 100 + (uint64_t)round, 5 * MS);
        n.jitter_ns = 2 * MS;
        pure_link_config c = {.crypto = &open_all_table};
        int a = ll_node_add(&n, &c), b = ll_node_add(&n, &c);
        CHECK(ll_wire(&n, b, a, "*") >= 0);
        CHECK(ll_link(&n, a, b, "out", "in", 1) == 0);
        uint8_t rec[700];
        memset(rec, 0x33, sizeof rec);
        for (int i = 0; i < 300; i++) CHECK(pure_link_send(n.node[a].pl, 0, rec, (size_t)(rnd() % 700), 0) >= 0);
        mutator m = {.on = 1};
        n.tap = mutate_tap, n.tap_arg = &m;
        ll_run(&n, 20 * S, NULL, NULL);  /* must not crash or assert; progress not required */
        CHECK(m.mutated > 0);
        ll_free(&n);
    }
}

/* An authenticated sender that writes the bytes at the delivery point again, with another
 * length prefix, while the record they began is still on its way (broken, or hostile):
 * delivery follows the bytes the receiver holds, read again, not the prefix it had read
 * before; the 3,000 B record becomes one of 10 B and one to the packet's end. */
typedef struct rewrite { int armed, done; uint32_t at; uint64_t lens[8]; int records; } rewrite;
static int rewrite_tap(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    (void)n, (void)to;
    rewrite *w = arg;
    pl_header h;
    pl_frame f[PL_FRAMES_MOST];
    int hl = pl_packet_decode(&h, data, len), count;
    if (!w->armed || w->done || from != 0 || hl < 0 || h.reply) return 1;
    if ((count = pl_payload_decode(f, PL_FRAMES_MOST, data + hl, len - (size_t)hl - 16, 0)) <= 0) return 1;
    const pl_frame *r = &f[count - 1];
    if (r->type != PL_FRAME_RECORDS || r->records.offset32 <= w->at || r->records.len < 64) return 1;
    uint8_t *d = data + (r->records.data - data);  /* the frame's bytes, in this packet */
    size_t dlen = r->records.len, rest = dlen - 13;
    d[-4] = (uint8_t)(w->at >> 24), d[-3] = (uint8_t)(w->at >> 16), d[-2] = (uint8_t)(w->at >> 8), d[-1] = (uint8_t)w->at;
    d[0] = 10;
    memset(d + 1, 'z', 10);
    d[11] = (uint8_t)(0x40 | rest >> 8), d[12] = (uint8_t)rest;
    memset(d + 13, 'y', rest);
    w->done = 1;
    return 1;
}

static rewrite *rewrite_seen;
static void rewrite_record(ll_net *n, int node, const pure_link_event *ev) {
    (void)n, (void)node;
    if (rewrite_seen->records < 8) rewrite_seen->lens[rewrite_seen->records++] = ev->len + ev->len2;
}

static void prefix_written_again_is_read_again(void) {
    open_all_table = *pure_link_crypto_null();
    open_all_table.name = "open-all";
    open_all_table.aead_open = open_all;
    ll_net n;
    ll_init(&n, 29, 5 * MS);
    pure_link_config c = {.crypto = &open_all_table};
    int a = ll_node_add(&n, &c), b = ll_node_add(&n, &c);
    CHECK(a == 0);
    CHECK(ll_wire(&n, b, a, "*") >= 0);
    CHECK(ll_link(&n, a, b, "out", "in", 1) == 0);
    rewrite w = {.at = 102};  /* record 0: 100 B behind a 2 B prefix; record 1 starts at 102 */
    rewrite_seen = &w;
    n.tap = rewrite_tap, n.tap_arg = &w, n.on_record = rewrite_record;
    static uint8_t rec[3000];
    memset(rec, 0x33, sizeof rec);
    CHECK(pure_link_send(n.node[a].pl, 0, rec, 100, 0) == 0);
    ll_run(&n, 1 * S, NULL, NULL);
    CHECK(w.records == 1 && w.lens[0] == 100);
    w.armed = 1;  /* record 1's first packet goes as sent, its second writes [102, ...) again */
    CHECK(pure_link_send(n.node[a].pl, 0, rec, sizeof rec, n.now_ns) == 1);
    ll_run(&n, 2 * S, NULL, NULL);
    CHECK(w.done);
    CHECK(w.records >= 3);
    CHECK_EQ_U(w.lens[1], 10);
    ll_free(&n);
}

TEST_MAIN(TEST_CASE(garbage_gets_no_answer_but_lost), TEST_CASE(mutated_packets_behind_open_all_cipher),
          TEST_CASE(prefix_written_again_is_read_again))
