/* test_slots.c: a run slot's fixed state beside the pools — the key cache (keycache.c) and
 * the hole tables (holes.c) at their edges, and a transfer whose receiver keeps one run
 * entry of expanded keys for three runs. */
#include "harness.h"
#include "link_loop.h"
#include "internal.h"

static pure_link *endpoint(pure_link_config c, void **mem) {
    size_t n = pure_link_size(&c);
    CHECK(n > 0);
    *mem = aligned_alloc(PURE_LINK_ALIGN, (n + PURE_LINK_ALIGN - 1) / PURE_LINK_ALIGN * PURE_LINK_ALIGN);
    uint8_t seed[32] = {9};
    pure_link *pl = pure_link_init(*mem, n, &c, seed, 0);
    CHECK(pl != NULL);
    return pl;
}

static void key_cache_entries_follow_the_config(void) {
    pure_link_config c = {.senders_most = 3, .runs_most = 100};
    CHECK_EQ_U(pl_key_cache_entries(&c), 6 + 200);            /* two per slot: below the least */
    c.runs_most = 512; CHECK_EQ_U(pl_key_cache_entries(&c), 6 + 1024);
    c.runs_most = 513; CHECK_EQ_U(pl_key_cache_entries(&c), 6 + 1024);  /* the least */
    c.runs_most = 8192; CHECK_EQ_U(pl_key_cache_entries(&c), 6 + 1024);
    c.runs_most = 8200; CHECK_EQ_U(pl_key_cache_entries(&c), 6 + 1025);  /* one per 8 slots */
    c.runs_most = 0, c.senders_most = 0; CHECK_EQ_U(pl_key_cache_entries(&c), 0);
}

static int held(const pure_link *pl, const pl_epoch_keys *k) { return pl->keys.build[k->entry] == k->build; }

/* What a fresh expansion of run i's data key seals (the reference for a rebuilt entry). */
static void seal_fresh(const pure_link *pl, const uint8_t secret[32], uint64_t run, uint8_t out[32]) {
    pl_packet_key pk;
    _Alignas(16) uint8_t ctx[PURE_LINK_AEAD_CTX_BYTES];
    static const uint8_t a[32] = {1}, b[32] = {2}, msg[16] = "sixteen bytes...";
    pl_data_key(&pk, secret, a, b, run, 0);
    pl->crypto->aead_init(ctx, pk.key);
    pl->crypto->aead_seal(ctx, pk.iv, NULL, 0, msg, sizeof msg, out);
}

static void seal_cached(pure_link *pl, pl_epoch_keys *k, uint8_t out[32]) {
    static const uint8_t msg[16] = "sixteen bytes...";
    pl->crypto->aead_seal(pl_keys_ctx(pl, k)->data, k->data_iv, NULL, 0, msg, sizeof msg, out);
}

/* 2,048 run slots: 1,024 run entries.  1,024 derivations all stay expanded; the 1,025th takes
 * one entry; the keys that lost it expand again at their next use, with neither an X25519
 * nor an HKDF (the packet keys stay in the slot), into the same contexts. */
static void key_cache_full_takes_one_entry_back(void) {
    void *mem;
    pure_link *pl = endpoint((pure_link_config){.senders_most = 2, .runs_most = 2048, .peers_most = 8}, &mem);
    CHECK_EQ_U(pl->keys.entries, 4 + 1024);
    static const uint8_t a[32] = {1}, b[32] = {2};
    uint8_t secret[32] = {0};
    for (uint32_t i = 0; i <= 1024; i++) {
        secret[0] = (uint8_t)i, secret[1] = (uint8_t)(i >> 8);
        pl_epoch_keys_set(pl, &pl->runs[i].keys[0], 0, secret, a, b, i, 77, 1);
        CHECK(pl->runs[i].keys[0].entry >= pl->keys.pinned);  /* never a sender's entry */
        if (i == 1023) {
            uint64_t before = pl->keys.expansions;
            for (uint32_t j = 0; j < 1024; j++) CHECK(held(pl, &pl->runs[j].keys[0]));
            for (uint32_t j = 0; j < 1024; j++) (void)pl_keys_ctx(pl, &pl->runs[j].keys[0]);
            CHECK_EQ_U(pl->keys.expansions, before);  /* every lookup a hit */
        }
    }
    CHECK_EQ_U(pl->keys.expansions, 1025);
    uint32_t lost = 1025, lost_count = 0;
    for (uint32_t j = 0; j <= 1024; j++)
        if (!held(pl, &pl->runs[j].keys[0])) lost = j, lost_count++;
    CHECK_EQ_U(lost_count, 1);
    CHECK(lost < 1024);
    uint64_t x25519 = pl->stats.x25519_ops, builds = pl->keys.builds;
    uint8_t cached[32], fresh[32];
    secret[0] = (uint8_t)lost, secret[1] = (uint8_t)(lost >> 8);
    seal_cached(pl, &pl->runs[lost].keys[0], cached);
    seal_fresh(pl, secret, lost, fresh);
    CHECK_MEM(cached, fresh, sizeof cached);
    CHECK_EQ_U(pl->keys.expansions, 1026);  /* expanded once more */
    CHECK_EQ_U(pl->keys.builds, builds);    /* no new derivation */
    CHECK_EQ_U(pl->stats.x25519_ops, x25519);
    CHECK(held(pl, &pl->runs[lost].keys[0]));
    /* Wiped keys leave their entry empty and zero; new keys in their place take it back. */
    pl_epoch_keys *k = &pl->runs[lost].keys[0];
    uint32_t e = k->entry;
    pl_keys_wipe(pl, k);
    CHECK(!k->valid && pl->keys.build[e] == 0 && pl->keys.ctx[e].data[0] == 0 && pl->keys.ctx[e].data[100] == 0);
    pl_epoch_keys_set(pl, k, 0, secret, a, b, lost, 77, 1);
    CHECK_EQ_U(k->entry, e);
    free(mem);
}

static void hole_tables_follow_the_config(void) {
    pure_link_config c = {.runs_most = 10};
    CHECK_EQ_U(pl_hole_tables(&c), 10);  /* at most one per slot */
    c.runs_most = 100; CHECK_EQ_U(pl_hole_tables(&c), 64);
    c.runs_most = 64 * 32; CHECK_EQ_U(pl_hole_tables(&c), 64);
    c.runs_most = 65 * 32; CHECK_EQ_U(pl_hole_tables(&c), 65);
}

/* Ranges [10k, 10k + 5) for k in [from, to). */
static int add_holes(pure_link *pl, pl_run *r, uint64_t from, uint64_t to) {
    for (uint64_t k = from; k < to; k++)
        if (pl_run_have_add(pl, r, 10 * k, 10 * k + 5) != 0) return -1;
    return 0;
}

static int holes_are(const pl_run *r, uint64_t from, uint64_t to) {
    if (r->have.count != to - from) return 0;
    for (uint32_t i = 0; i < r->have.count; i++)
        if (r->have.r[i].lo != 10 * (from + i) || r->have.r[i].hi != 10 * (from + i) + 5) return 0;
    return 1;
}

/* 100 run slots: 64 tables.  Runs 0..63 each borrow one at their 17th range; run 64 then
 * stays at the slot's 16 and refuses the 17th, keeping what it had.  Run 0 keeps its table
 * down to 9 ranges and gives it back at 8 (half the slot's room); run 64 can borrow it. */
static void hole_tables_all_lent(void) {
    void *mem;
    pure_link *pl = endpoint((pure_link_config){.senders_most = PURE_LINK_NONE, .runs_most = 100, .peers_most = 8},
                             &mem);
    CHECK_EQ_U(pl->hole_tables.blocks, 64);
    for (uint32_t i = 0; i <= 64; i++) pl_run_have_clear(pl, &pl->runs[i]);
    for (uint32_t i = 0; i < 64; i++) {
        pl_run *r = &pl->runs[i];
        CHECK(add_holes(pl, r, 0, 16) == 0 && r->have_table == 0);
        CHECK(add_holes(pl, r, 16, 17) == 0 && r->have_table != 0);
        CHECK(holes_are(r, 0, 17));
    }
    CHECK(add_holes(pl, &pl->runs[0], 17, PL_RANGES_MOST) == 0);
    CHECK(add_holes(pl, &pl->runs[0], PL_RANGES_MOST, PL_RANGES_MOST + 1) != 0);  /* a table's edge */
    pl_run *last = &pl->runs[64];
    CHECK(add_holes(pl, last, 0, 16) == 0);
    CHECK(add_holes(pl, last, 16, 17) != 0);
    CHECK(last->have_table == 0 && holes_are(last, 0, 16));
    pl_run *first = &pl->runs[0];
    pl_rangeset_remove_below(&first->have, 10 * (PL_RANGES_MOST - 9));
    pl_run_have_fit(pl, first);
    CHECK(first->have_table != 0 && holes_are(first, PL_RANGES_MOST - 9, PL_RANGES_MOST));
    pl_rangeset_remove_below(&first->have, 10 * (PL_RANGES_MOST - 8));
    pl_run_have_fit(pl, first);
    CHECK(first->have_table == 0 && first->have.r == first->have_inline);
    CHECK(holes_are(first, PL_RANGES_MOST - 8, PL_RANGES_MOST));
    CHECK(add_holes(pl, last, 16, 17) == 0 && last->have_table != 0 && holes_are(last, 0, 17));
    pl_run_have_clear(pl, last);  /* a cleared set gives its table back */
    CHECK(last->have_table == 0 && pl->hole_tables.free_count == 1);
    free(mem);
}

#define RUNS 3
#define RECORDS 1000

/* Three senders to a receiver over a lossy link, epochs changing every 200 packets, once with
 * its key cache as configured and once cut to one run entry after init: a packet of another
 * run than the last one's then finds its contexts gone.  Both deliver every record once; the
 * cut one expands keys again many times and does the same X25519 work (none for a lookup). */
static void transfer(int cut, uint64_t *expansions, uint64_t *x25519, uint64_t *delivered) {
    pure_link_config tx = {.peers_most = PURE_LINK_NONE, .senders_most = RUNS, .epoch_packets = 200};
    pure_link_config rx = {.senders_most = PURE_LINK_NONE};
    ll_net n;
    ll_init(&n, 7, 2000000);
    n.loss_ppm = 20000;
    int a = ll_node_add(&n, &tx), b = ll_node_add(&n, &rx);
    pure_link *rpl = n.node[b].pl;
    if (cut) rpl->keys.entries = rpl->keys.pinned + 1;
    CHECK(ll_wire(&n, b, a, "*") == 0);
    static uint8_t rec[8192];
    for (int i = 0; i < RUNS; i++) {
        char source[16];
        snprintf(source, sizeof source, "out%d", i);
        CHECK(ll_link(&n, a, b, source, "in", 1) == i);
        for (int k = 0; k < RECORDS; k++) {
            memset(rec, k, sizeof rec);
            CHECK(pure_link_send(n.node[a].pl, i, rec, 1000 + (size_t)k * 7, 0) == k);
        }
    }
    ll_run(&n, 60ull * 1000000000ull, NULL, NULL);
    CHECK_EQ_U(n.node[b].duplicates, 0);
    CHECK_EQ_U(n.node[b].out_of_order, 0);
    *expansions = rpl->keys.expansions;
    *x25519 = rpl->stats.x25519_ops;
    *delivered = n.node[b].records_delivered;
    ll_free(&n);
}

static void one_run_entry_for_three_runs(void) {
    uint64_t e_full, x_full, d_full, e_cut, x_cut, d_cut;
    transfer(0, &e_full, &x_full, &d_full);
    transfer(1, &e_cut, &x_cut, &d_cut);
    CHECK_EQ_U(d_full, RUNS * RECORDS);
    CHECK_EQ_U(d_cut, RUNS * RECORDS);
    CHECK_EQ_U(x_cut, x_full);
    CHECK(x_full > 1 + RUNS);  /* E(0), and more than one new epoch per run on the way */
    CHECK(e_cut > 10 * e_full);
}

/* Init clears only what is read before it is written: in memory full of 0xa5 the peers and
 * run slots stay as they were until taken, and they still behave as empty: a stream handle
 * never used is not found, and peers_most keys wire (their key ids differ) but one more not. */
static void init_leaves_unused_slots_alone(void) {
    pure_link_config c = {.senders_most = PURE_LINK_NONE, .peers_most = 40, .runs_most = 4000};
    size_t n = pure_link_size(&c);
    void *mem = aligned_alloc(PURE_LINK_ALIGN, (n + PURE_LINK_ALIGN - 1) / PURE_LINK_ALIGN * PURE_LINK_ALIGN);
    memset(mem, 0xa5, n);
    uint8_t seed[32] = {3};
    pure_link *pl = pure_link_init(mem, n, &c, seed, 0);
    CHECK(pl != NULL);
    const uint8_t *first_run = (const uint8_t *)&pl->runs[0], *last_peer = (const uint8_t *)&pl->peers[39];
    for (size_t i = 0; i < sizeof(pl_run) * 4000; i += 997) CHECK(first_run[i] == 0xa5);
    for (size_t i = 0; i < sizeof(pl_peer); i++) CHECK(last_peer[i] == 0xa5);
    /* Nor does init write the free stacks, the indexes' values or the run heap. */
    const uint32_t poison = 0xa5a5a5a5u;
    CHECK(pl->pool.store.blocks > 1000 && pl->pool.store.free_stack[0] == poison);
    CHECK(pl->pool.store.free_stack[pl->pool.store.blocks - 1] == poison);
    CHECK(pl->hole_tables.free_stack[pl->hole_tables.blocks - 1] == poison);
    CHECK(pl->run_index.values[pl->run_index.mask] == poison && pl->peer_index.values[0] == poison);
    CHECK(pl->run_heap[0] == poison && pl->run_heap[3999] == poison);
    CHECK(pure_link_stored(pl, 3999, 1, 0) == PURE_LINK_ERR_NOT_FOUND);
    CHECK(pure_link_stream_answer(pl, 0, 0, 0, 0) == PURE_LINK_ERR_NOT_FOUND);
    uint8_t key[32] = {0};
    for (int i = 0; i <= 40; i++) {
        key[0] = (uint8_t)i, key[1] = 0x5a;
        CHECK(pure_link_wire_peer(pl, key, "*", 0) == (i < 40 ? i : PURE_LINK_ERR_FULL));
    }
    free(mem);
}

/* Without a memo the endpoint keeps no mirror of its slots: turning the memo on adds the
 * mirror's bytes (one entry per side slot and per peer), no more than alignment beside. */
static void memo_mirror_only_with_a_memo(void) {
    pure_link_config off = {.senders_most = PURE_LINK_NONE, .peers_most = 40, .runs_most = 400}, on = off;
    on.memo_enabled = 1;
    size_t mirror = (PURE_LINK_MEMO_SIDE_SLOTS + 40) * sizeof(pl_memo_mirror);
    size_t a = pure_link_size(&off), b = pure_link_size(&on);
    CHECK(a > 0 && b >= a + mirror && b < a + mirror + PURE_LINK_ALIGN);
}

/* A block store hands out the blocks nobody has taken in ascending order and a block given
 * back before them, as a stack filled at init would, though init writes none of its
 * entries: a poisoned stack never yields the poison, and only entries of given-back blocks
 * are written. */
static void blocks_come_out_of_an_unwritten_stack(void) {
    enum { BLOCKS = 8 };
    uint32_t stack[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) stack[i] = 0xa5a5a5a5u;
    pl_blocks b = {.free_stack = stack, .blocks = BLOCKS};
    pl_blocks_init(&b);
    CHECK_EQ_U(b.free_count, BLOCKS);
    for (int i = 0; i < BLOCKS; i++) CHECK(stack[i] == 0xa5a5a5a5u);
    CHECK_EQ_U(pl_blocks_take(&b), 0);
    CHECK_EQ_U(pl_blocks_take(&b), 1);
    CHECK_EQ_U(pl_blocks_take(&b), 2);
    pl_blocks_give(&b, 1);
    CHECK(stack[BLOCKS - 3] == 1 && stack[BLOCKS - 4] == 0xa5a5a5a5u);
    CHECK_EQ_U(pl_blocks_take(&b), 1);  /* the given-back block first */
    CHECK_EQ_U(pl_blocks_take(&b), 3);  /* then the lowest never taken */
    pl_blocks_give(&b, 0), pl_blocks_give(&b, 2);
    CHECK_EQ_U(pl_blocks_take(&b), 2);
    CHECK_EQ_U(pl_blocks_take(&b), 0);
    for (uint32_t k = 4; k < BLOCKS; k++) CHECK_EQ_U(pl_blocks_take(&b), k);
    CHECK_EQ_U(b.free_count, 0);
    CHECK_EQ_U(b.used_peak, BLOCKS);
    for (uint32_t k = 0; k < BLOCKS; k++) pl_blocks_give(&b, (k * 3) % BLOCKS);  /* every block */
    for (int k = BLOCKS - 1; k >= 0; k--) CHECK_EQ_U(pl_blocks_take(&b), ((uint32_t)k * 3) % BLOCKS);
}

/* A transfer between endpoints set up in memory full of 0xa5 (ll_restart before the first
 * datagram): records of one to three blocks over a lossy link all arrive once and in order,
 * so nothing init left unwritten is read as state. */
static void transfer_over_poisoned_memory(void) {
    pure_link_config tx = {.peers_most = PURE_LINK_NONE, .senders_most = 2};
    pure_link_config rx = {.senders_most = PURE_LINK_NONE, .peers_most = 2, .runs_most = 8};
    ll_net n;
    ll_init(&n, 11, 2000000);
    n.loss_ppm = 20000;
    int a = ll_node_add(&n, &tx), b = ll_node_add(&n, &rx);
    CHECK(ll_restart(&n, a) == 0 && ll_restart(&n, b) == 0);
    CHECK(ll_wire(&n, b, a, "*") == 0);
    static uint8_t rec[40000];
    enum { STREAMS = 2, COUNT = 60 };
    for (int i = 0; i < STREAMS; i++) {
        char source[16];
        snprintf(source, sizeof source, "out%d", i);
        CHECK(ll_link(&n, a, b, source, "in", 1) == i);
        for (int k = 0; k < COUNT; k++) {
            memset(rec, k + i, sizeof rec);
            CHECK(pure_link_send(n.node[a].pl, i, rec, 100 + (size_t)k * 661, 0) == k);
        }
    }
    ll_run(&n, 60ull * 1000000000ull, NULL, NULL);
    CHECK_EQ_U(n.node[b].records_delivered, STREAMS * COUNT);
    CHECK_EQ_U(n.node[b].duplicates, 0);
    CHECK_EQ_U(n.node[b].out_of_order, 0);
    ll_free(&n);
}

TEST_MAIN(TEST_CASE(init_leaves_unused_slots_alone), TEST_CASE(memo_mirror_only_with_a_memo),
          TEST_CASE(blocks_come_out_of_an_unwritten_stack), TEST_CASE(transfer_over_poisoned_memory), TEST_CASE(key_cache_entries_follow_the_config), TEST_CASE(key_cache_full_takes_one_entry_back),
          TEST_CASE(hole_tables_follow_the_config), TEST_CASE(hole_tables_all_lent),
          TEST_CASE(one_run_entry_for_three_runs))
