/* test_index.c: the tables of map.c at their probe bound, their keyed hash against
 * libsodium's SipHash-2-4, the peer index at wiring, and the run slots' deadline heap
 * against a scan of every slot through a lossy transfer whose runs go idle and give their
 * slots to others. */
#include <sodium.h>

#include "harness.h"
#include "link_loop.h"
#include "internal.h"

static void siphash_matches_libsodium(void) {
    CHECK(sodium_init() >= 0);
    uint8_t key[crypto_shorthash_KEYBYTES], msg[24], out[crypto_shorthash_BYTES];
    for (int trial = 0; trial < 200; trial++) {
        randombytes_buf(key, sizeof key);
        randombytes_buf(msg, sizeof msg);
        uint64_t k[2] = {0, 0}, w[3] = {0, 0, 0}, want = 0;
        for (int i = 0; i < 16; i++) k[i / 8] |= (uint64_t)key[i] << (8 * (i % 8));
        for (int i = 0; i < 24; i++) w[i / 8] |= (uint64_t)msg[i] << (8 * (i % 8));
        size_t words = (size_t)trial % 4;
        crypto_shorthash(out, msg, 8 * words, key);
        for (int i = 0; i < 8; i++) want |= (uint64_t)out[i] << (8 * i);
        CHECK_EQ_U(pl_siphash(k, w, words, 2, 4), want);
    }
}

/* The slot a key starts its probes at (map.c's multiplicative home). */
static uint32_t home_of(const pl_map *m, uint64_t key) {
    return (uint32_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & m->mask;
}

/* Keys with one home, the first `count` found from `from` on. */
static void same_home(const pl_map *m, uint32_t home, uint64_t from, uint64_t *keys, int count) {
    for (uint64_t k = from; count > 0; k++)
        if (home_of(m, k) == home) *keys++ = k, count--;
}

static void map_probe_bound_at_its_edge(void) {
    enum { SLOTS = 256 };
    static uint64_t keys[SLOTS];
    static uint32_t values[SLOTS];
    pl_map m;
    pl_map_init(&m, keys, values, SLOTS, PL_INDEX_PROBES_MOST);
    uint64_t same[PL_INDEX_PROBES_MOST + 1];
    uint32_t home = home_of(&m, 1);
    same_home(&m, home, 1, same, PL_INDEX_PROBES_MOST + 1);
    for (uint32_t i = 0; i < PL_INDEX_PROBES_MOST; i++) {
        CHECK(pl_map_room(&m, same[i]));
        pl_map_put(&m, same[i], i);
    }
    /* Every slot within the bound of that home is taken: one more key of it has no room,
     * while a key whose home lies beyond the bound has. */
    CHECK(!pl_map_room(&m, same[PL_INDEX_PROBES_MOST]));
    uint64_t far;
    same_home(&m, (home + PL_INDEX_PROBES_MOST) & m.mask, 1, &far, 1);
    CHECK(pl_map_room(&m, far));
    for (uint32_t i = 0; i < PL_INDEX_PROBES_MOST; i++) CHECK_EQ_U(pl_map_get(&m, same[i]), i);
    CHECK_EQ_U(pl_map_get(&m, same[PL_INDEX_PROBES_MOST]), PL_MAP_NONE);
    /* Out of the middle: the chain closes up, each key is still found, and there is room. */
    pl_map_del(&m, same[10], 10);
    CHECK_EQ_U(pl_map_get(&m, same[10]), PL_MAP_NONE);
    for (uint32_t i = 0; i < PL_INDEX_PROBES_MOST; i++)
        if (i != 10) CHECK_EQ_U(pl_map_get(&m, same[i]), i);
    CHECK(pl_map_room(&m, same[PL_INDEX_PROBES_MOST]));
    pl_map_put(&m, same[PL_INDEX_PROBES_MOST], 99);
    CHECK_EQ_U(pl_map_get(&m, same[PL_INDEX_PROBES_MOST]), 99);
}

static void map_holds_values_under_one_key(void) {
    enum { SLOTS = 64 };
    static uint64_t keys[SLOTS];
    static uint32_t values[SLOTS];
    pl_map m;
    pl_map_init(&m, keys, values, SLOTS, 8);
    pl_map_put(&m, 7, 3), pl_map_put(&m, 7, 1), pl_map_put(&m, 7, 2);
    uint32_t at = 0, seen = 0, v;
    while ((v = pl_map_next(&m, 7, &at)) != PL_MAP_NONE) seen |= 1u << v;
    CHECK_EQ_U(seen, 0xe);
    pl_map_del(&m, 7, 1);
    at = 0, seen = 0;
    while ((v = pl_map_next(&m, 7, &at)) != PL_MAP_NONE) seen |= 1u << v;
    CHECK_EQ_U(seen, 0xc);
    pl_map_del(&m, 7, 1);  /* not there: nothing changes */
    CHECK_EQ_U(pl_map_get(&m, 8), PL_MAP_NONE);
}

/* 3,000 keys wire and are found by their key id, a key wired twice is refused, one more
 * than peers_most is refused, and an id no wired key has finds nothing. */
static void peer_index_finds_every_wired_key(void) {
    enum { PEERS = 3000 };
    pure_link_config c = {.senders_most = PURE_LINK_NONE, .peers_most = PEERS, .runs_most = 64};
    size_t n = pure_link_size(&c);
    void *mem = aligned_alloc(PURE_LINK_ALIGN, (n + PURE_LINK_ALIGN - 1) / PURE_LINK_ALIGN * PURE_LINK_ALIGN);
    uint8_t seed[32] = {4};
    pure_link *pl = pure_link_init(mem, n, &c, seed, 0);
    CHECK(pl != NULL);
    uint8_t key[32] = {0};
    int wired = 0;
    for (uint32_t i = 0; wired < PEERS; i++) {
        key[0] = (uint8_t)i, key[1] = (uint8_t)(i >> 8), key[2] = 0x77;
        int rc = pure_link_wire_peer(pl, key, "*", 0);
        if (rc == PURE_LINK_ERR_WIRING) continue;  /* an id already wired: FNV-1a met itself */
        CHECK(rc == wired);
        CHECK(pure_link_wire_peer(pl, key, "*", 0) == PURE_LINK_ERR_WIRING);
        wired++;
    }
    key[2] = 0x78;
    CHECK(pure_link_wire_peer(pl, key, "*", 0) == PURE_LINK_ERR_FULL);
    for (int i = 0; i < PEERS; i++) CHECK(pl_peer_find(pl, pl->peers[i].key_id) == &pl->peers[i]);
    uint32_t unwired = 1;
    for (int i = 0; i < PEERS; i++)
        if (pl->peers[i].key_id == unwired) unwired++, i = -1;
    CHECK(pl_peer_find(pl, unwired) == NULL);
    free(mem);
}

/* The deadline as a scan over every sender and slot would find it. */
static uint64_t deadline_scanned(const pure_link *pl) {
    uint64_t d = UINT64_MAX;
    for (uint32_t i = 0; i < pl->senders_used; i++)
        if (pl->senders[i].open && pl_sender_deadline(&pl->senders[i]) < d) d = pl_sender_deadline(&pl->senders[i]);
    for (uint32_t i = 0; i < pl->runs_used; i++)
        if (pl->runs[i].in_use && pl_run_deadline(&pl->runs[i]) < d) d = pl_run_deadline(&pl->runs[i]);
    return d;
}

static uint64_t heap_checks;

/* At every step of the transfer: the heap holds exactly the slots with a deadline, in
 * heap order, and the endpoint's deadline is the scan's. */
static int heap_consistent(ll_net *n, void *arg) {
    (void)arg;
    for (int k = 0; k < n->nodes; k++) {
        const pure_link *pl = n->node[k].pl;
        uint32_t with_deadline = 0;
        for (uint32_t i = 0; i < pl->runs_used; i++) {
            const pl_run *r = &pl->runs[i];
            uint64_t d = r->in_use ? pl_run_deadline(r) : PL_NONE;
            if (d == PL_NONE) { CHECK_EQ_U(r->heap_at, 0); continue; }
            with_deadline++;
            CHECK(r->heap_at >= 1 && r->heap_at <= pl->run_heap_count);
            CHECK_EQ_U(pl->run_heap[r->heap_at - 1], i);
            CHECK_EQ_U(r->deadline_ns, d);
            uint32_t at = r->heap_at - 1;
            if (at > 0) CHECK(pl->runs[pl->run_heap[(at - 1) / 2]].deadline_ns <= d);
        }
        CHECK_EQ_U(with_deadline, pl->run_heap_count);
        CHECK_EQ_U(pure_link_deadline(pl), deadline_scanned(pl));
        heap_checks++;
    }
    return 0;
}

/* Three nodes send over four outputs each to a receiver of six run slots that go idle after
 * 300 ms: runs come, wait for a slot, take an idle, settled or preempted one's, and the heap
 * follows them all. */
static void deadline_heap_follows_the_runs(void) {
    ll_net n;
    ll_init(&n, 21, 5 * PL_NS_PER_MS);
    n.loss_ppm = 20000, n.jitter_ns = 2 * PL_NS_PER_MS;
    pure_link_config rc = {.senders_most = PURE_LINK_NONE, .peers_most = 3, .runs_most = 6,
                           .idle_ns = 300 * PL_NS_PER_MS};
    int rx = ll_node_add(&n, &rc);
    pure_link_config sc = {.senders_most = 4, .peers_most = PURE_LINK_NONE};
    for (int s = 0; s < 3; s++) {
        int node = ll_node_add(&n, &sc);
        CHECK(ll_wire(&n, rx, node, "*") >= 0);
        for (int k = 0; k < 4; k++) {
            char source[16];
            snprintf(source, sizeof source, "out%d", k);
            int h = ll_link(&n, node, rx, source, "in", 1);
            CHECK(h >= 0);
            static uint8_t rec[700];
            for (int j = 0; j < 40; j++) CHECK(pure_link_send(n.node[node].pl, h, rec, sizeof rec, 0) >= 0);
        }
    }
    heap_checks = 0;
    ll_run(&n, 20 * PL_NS_PER_S, heap_consistent, NULL);
    CHECK(n.node[rx].records_delivered >= 12 * 40);
    CHECK(n.node[rx].pl->runs_used == 6);
    CHECK(heap_checks > 1000);
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(n.node[rx].pl, -1, &st);
    fprintf(stderr, "  %llu run key builds, %llu packets without a slot\n", (unsigned long long)st.run_key_builds, (unsigned long long)st.dropped_no_slot);
    /* Every output's run, in six slots; a run that lost its slot while quiet (to a peer
     * below its share of the slots, or settled) and came back was built again. */
    CHECK(st.run_key_builds >= 12 && st.run_key_builds <= 24);
    CHECK_EQ_U(n.node[rx].duplicates, 0);
    CHECK(st.dropped_no_slot > 0);      /* some waited for a slot to go idle */
    ll_free(&n);
}

TEST_MAIN(TEST_CASE(siphash_matches_libsodium), TEST_CASE(map_probe_bound_at_its_edge),
          TEST_CASE(map_holds_values_under_one_key), TEST_CASE(peer_index_finds_every_wired_key),
          TEST_CASE(deadline_heap_follows_the_runs))
