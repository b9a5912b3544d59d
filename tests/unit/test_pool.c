/* test_pool.c: the receive pool (spec/protocol.md §4.2 "Receive memory") — many runs share
 * one small budget, records of one block, two blocks and more (the hand-over ring), and
 * two 16 MiB records that each need the whole pool's ticket; every record arrives once,
 * in order, byte for byte, and the runs never hold more than the pool — whether the long
 * records come first or after the runs have started, and whether the host stores at once
 * or holds its STOREDs for a while. */
#include "harness.h"
#include "link_loop.h"
#include "internal.h"

#define MIB (1024u * 1024u)
#define POOL_LEAST (16u * MIB + 32u * 1024u)   /* a largest record and two blocks */
#define SENDERS 24
#define SMALL_RECORDS 40

static uint64_t runs[SENDERS];
static uint64_t bad_bytes, checked;

static uint8_t pattern(uint64_t run, int64_t record, size_t j) {
    return (uint8_t)((run >> (8 * (record % 8))) + (uint64_t)record * 13u + j * 31u + (j >> 9));
}

static void check_record(ll_net *n, int node, const pure_link_event *ev) {
    (void)n, (void)node;
    for (size_t j = 0; j < ev->len + ev->len2; j++) {
        uint8_t b = j < ev->len ? ev->data[j] : ev->data2[j - ev->len];
        if (b != pattern(ev->run, ev->record, j)) { bad_bytes++; break; }
    }
    checked++;
}

static size_t small_size(int64_t k) {
    static const size_t sizes[] = {100, 3000, 20000, 40000};  /* 1, 1-2, 2-3 and 3-4 blocks */
    return sizes[k % 4];
}

/* Two runs send a largest record as their record big_at (the others and the rest small);
 * the host reports nothing stored for its first hold_ms, then stores at once. */
static void pool_run(uint64_t seed, int64_t big_at, uint64_t hold_ms) {
    pure_link_config tx = {.peers_most = PURE_LINK_NONE, .senders_most = SENDERS,
                           .send_queue_bytes = 18u * MIB, .packets_in_flight_most = 1024,
                           .send_memory_bytes = 64u * MIB};
    pure_link_config rx = {.senders_most = PURE_LINK_NONE, .receive_memory_bytes = POOL_LEAST};
    ll_net n;
    ll_init(&n, seed, 2000000);
    bad_bytes = checked = 0;
    n.on_record = check_record;
    int a = ll_node_add(&n, &tx), b = ll_node_add(&n, &rx);
    CHECK(ll_wire(&n, b, a, "*") == 0);
    static uint8_t rec[16u * MIB];
    int64_t total = 0;
    for (int i = 0; i < SENDERS; i++) {
        char source[16];
        snprintf(source, sizeof source, "out%d", i);
        CHECK(ll_link(&n, a, b, source, "in", 1) == i);
        runs[i] = pure_link_sender_run(n.node[a].pl, i);
        int big = i < 2;  /* two runs send a largest record */
        for (int64_t k = 0; k < SMALL_RECORDS + big; k++) {
            size_t len = big && k == big_at ? 16u * MIB : small_size(k);
            for (size_t j = 0; j < len; j++) rec[j] = pattern(runs[i], k, j);
            CHECK(pure_link_send(n.node[a].pl, i, rec, len, 0) == k);
            total++;
        }
    }
    if (hold_ms > 0) {
        n.node[b].hold_stored = 1;
        ll_run(&n, hold_ms * 1000000ull, NULL, NULL);
        ll_store_all(&n, b);
    }
    ll_run(&n, 120ull * 1000000000ull, NULL, NULL);
    CHECK_EQ_U(n.node[b].records_delivered, total);
    CHECK_EQ_U(checked, total);
    CHECK_EQ_U(bad_bytes, 0);
    CHECK_EQ_U(n.node[b].duplicates, 0);
    CHECK_EQ_U(n.node[b].out_of_order, 0);
    for (int i = 0; i < SENDERS; i++) {
        pure_link_stats s = {.version = PURE_LINK_STATS_VERSION};
        CHECK(pure_link_stats_get(n.node[a].pl, i, &s) == 0);
        CHECK_EQ_U(s.records_stored, SMALL_RECORDS + (i < 2));
    }
    pure_link_stats e = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n.node[b].pl, -1, &e) == 0);
    CHECK_EQ_U(e.receive_memory_bytes, POOL_LEAST);
    CHECK(e.receive_memory_bytes_peak <= e.receive_memory_bytes);
    CHECK(e.receive_memory_bytes_peak > 16u * MIB);  /* a largest record was held whole */
    ll_free(&n);
}

static void pool_shared_by_many_runs(void) { pool_run(41, 0, 0); }

/* The long records come after five small ones, so the small runs fill the pool first and
 * some of their records queue for the ticket while a long one waits for free blocks: a
 * queued record that went through within its share before its turn must not take the
 * ticket (it would hold it for a record already handed over, and accept nothing more),
 * and runs holding parts of records must not keep the blocks the long one waits for. */
static void pool_long_records_after_small(void) {
    pool_run(3, 5, 0);
    pool_run(1, 5, 200);
}

/* The host stores nothing for 2 s: the runs hold every record they delivered; the last
 * record of two runs is a largest one, and it must go through once the host catches up. */
static void pool_long_records_after_host_held(void) {
    pool_run(41, SMALL_RECORDS - 1, 2000);
    pool_run(2, 5, 2000);
}

/* Node a (two senders, on links named first and second) towards node b. */
static void two_links(ll_net *n, uint64_t seed, const pure_link_config *tx, const pure_link_config *rx,
                      const char *first, const char *second, int *a, int *b) {
    ll_init(n, seed, 2000000);
    *a = ll_node_add(n, tx), *b = ll_node_add(n, rx);
    CHECK(ll_wire(n, *b, *a, "*") == 0);
    CHECK(ll_link(n, *a, *b, first, "in", 1) == 0);
    CHECK(ll_link(n, *a, *b, second, "in", 1) == 1);
}

/* A run whose stream breaks (a record prefix above the largest record, written into the
 * sender's queue) can hand nothing more over: it gives back every block though its
 * sender keeps sending, and the least pool still takes another run's largest record. */
static void pool_broken_stream_gives_back(void) {
    pure_link_config tx = {.peers_most = PURE_LINK_NONE, .senders_most = 2, .send_queue_bytes = 18u * MIB,
                           .send_memory_bytes = 40u * MIB};
    pure_link_config rx = {.senders_most = PURE_LINK_NONE, .receive_memory_bytes = POOL_LEAST};
    ll_net n;
    int a, b;
    two_links(&n, 43, &tx, &rx, "bad", "good", &a, &b);
    static uint8_t rec[16u * MIB];
    CHECK(pure_link_send(n.node[a].pl, 0, rec, 100, 0) == 0);
    for (int64_t k = 1; k < 10; k++) CHECK(pure_link_send(n.node[a].pl, 0, rec, 40000, 0) == k);
    pl_sender *s = &n.node[a].pl->senders[0];
    uint8_t prefix[8];
    CHECK_EQ_U(pl_varint_put(prefix, sizeof prefix, PL_RECORD_MOST + 1u), 4);  /* as long as 40,000's */
    pl_queue_put(n.node[a].pl, s, s->record_start[1], prefix, 4);
    ll_run(&n, 5ull * 1000000000ull, NULL, NULL);
    pure_link_stats e = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n.node[b].pl, -1, &e) == 0);
    CHECK_EQ_U(n.node[b].records_delivered, 1);
    CHECK(e.dropped_malformed > 0);
    const pl_pool *p = &n.node[b].pl->pool;
    CHECK_EQ_U(p->store.free_count, p->store.blocks);  /* record 0 stored, nothing else kept */
    CHECK(pure_link_send(n.node[a].pl, 1, rec, sizeof rec, n.now_ns) == 0);
    ll_run(&n, n.now_ns + 20ull * 1000000000ull, NULL, NULL);
    CHECK_EQ_U(n.node[b].records_delivered, 2);
    CHECK_EQ_U(p->store.free_count, p->store.blocks);
    ll_free(&n);
}

/* The send pool: two senders share the least pool; a largest record leaves one block, so
 * the other sender's 20 KiB record is FULL until that record is stored and its blocks
 * come back. */
static void send_pool_gives_back_on_stored(void) {
    pure_link_config tx = {.peers_most = PURE_LINK_NONE, .senders_most = 2, .send_memory_bytes = POOL_LEAST};
    pure_link_config rx = {.senders_most = PURE_LINK_NONE};
    ll_net n;
    int a, b;
    two_links(&n, 42, &tx, &rx, "big", "small", &a, &b);
    static uint8_t rec[16u * MIB];
    CHECK(pure_link_send(n.node[a].pl, 0, rec, sizeof rec, 0) == 0);
    CHECK(pure_link_send(n.node[a].pl, 1, rec, 20000, 0) == PURE_LINK_ERR_FULL);
    CHECK(pure_link_send(n.node[a].pl, 1, rec, 1000, 0) == 0);  /* the one block left */
    ll_run(&n, 10ull * 1000000000ull, NULL, NULL);
    CHECK_EQ_U(n.node[a].stored_seen[0], 1);
    CHECK(pure_link_send(n.node[a].pl, 1, rec, 20000, n.now_ns) == 1);
    ll_free(&n);
}

/* ---- The pool's rules on run slots set up by hand (no packets): a receiver of two
 * wired peers and the default pool (20 MiB, no reserve: it holds one largest record, not
 * two). ---- */

typedef struct bare { pure_link *pl; void *mem; } bare;

static bare bare_receiver(void) {
    pure_link_config c = {.senders_most = PURE_LINK_NONE, .peers_most = 2, .runs_most = 8};
    bare b;
    size_t n = pure_link_size(&c);
    b.mem = aligned_alloc(PURE_LINK_ALIGN, (n + PURE_LINK_ALIGN - 1) / PURE_LINK_ALIGN * PURE_LINK_ALIGN);
    uint8_t seed[32] = {5};
    b.pl = pure_link_init(b.mem, n, &c, seed, 0);
    CHECK(b.pl != NULL);
    for (uint8_t k = 1; k <= 2; k++) {
        uint8_t key[32] = {k, 9};
        CHECK(pure_link_wire_peer(b.pl, key, "*", 0) == k - 1);
    }
    return b;
}

static pl_run *bare_run(pure_link *pl, int peer, uint64_t run) {
    pure_link_addr from = {.len = 6, .bytes = {10, 0, 0, (uint8_t)(peer + 1), 0, 80}};
    pl_run *r = pl_run_fresh(pl);
    CHECK(r != NULL && pl_run_index_room(pl, peer, run));
    pl_run_reset(pl, r, peer, run, &from, pl->now_ns);
    return r;
}

/* Run r receives stream bytes [lo, hi), beyond its delivery point. */
static void bare_bytes(pure_link *pl, pl_run *r, uint64_t lo, uint64_t hi) {
    static uint8_t junk[PURE_LINK_DATAGRAM_MOST];
    for (uint64_t at = lo; at < hi; at += sizeof junk) {
        size_t n = hi - at < sizeof junk ? (size_t)(hi - at) : sizeof junk;
        CHECK(pl_run_mem_write(pl, r, at, junk, n) == 0);
        CHECK(pl_run_have_add(pl, r, at, at + n) == 0);
    }
}

/* Shares are per peer first, then per run within the peer (spec/protocol.md §4.2): peer 0's
 * three runs together get what peer 1's one run gets. */
static void pool_share_per_peer_then_per_run(void) {
    bare b = bare_receiver();
    pure_link *pl = b.pl;
    uint64_t blocks = pl->pool.store.blocks;
    CHECK_EQ_U(pl->pool.big_blocks, 0);
    pl_run *r[3], *s = bare_run(pl, 1, 100);
    for (int i = 0; i < 3; i++) r[i] = bare_run(pl, 0, 10 + (uint64_t)i);
    CHECK_EQ_U(pl_run_window(pl, s), pl->config.stream_buffer_bytes);  /* alone: a run's most */
    for (int i = 0; i < 3; i++) bare_bytes(pl, r[i], 0, 1);
    CHECK_EQ_U(pl->pool.peers_holding, 1);
    CHECK_EQ_U(pl_run_window(pl, r[0]), blocks / 3 * PL_BLOCK_BYTES);   /* peer 0 alone */
    CHECK_EQ_U(pl_run_window(pl, s), blocks / 2 * PL_BLOCK_BYTES);     /* its peer counted */
    bare_bytes(pl, s, 0, 1);
    CHECK_EQ_U(pl->pool.peers_holding, 2);
    CHECK_EQ_U(pl_run_window(pl, r[2]), blocks / 2 / 3 * PL_BLOCK_BYTES);
    CHECK_EQ_U(pl_run_window(pl, s), blocks / 2 * PL_BLOCK_BYTES);      /* not blocks / 4 */
    pl_run_mem_release(pl, s);
    CHECK_EQ_U(pl->pool.peers_holding, 1);
    CHECK_EQ_U(pl->peers[0].runs_holding, 3);
    free(b.mem);
}

/* Run r's delivery point and stored mark at stream offset off (a record of off bytes handed
 * over and stored): its share, counted in bytes from there, spans one block more than it
 * holds. */
static void bare_mark(pl_run *r, uint64_t off) {
    r->stored_off = r->deliver_off = off;
    r->stored_record = r->deliver_record = 1;
}

/* Lower bytes first (spec/protocol.md §4.2): two runs, each within its share (half the pool,
 * from an unaligned stored mark), hold every block of the pool beyond a hole — r's inside
 * its record, s's at its delivery point.  The bytes of each hole still find a block: the
 * run gives back its highest one, with the bytes in it.  Before, neither hole could ever
 * fill (no free block, nobody over its share, no ticket asked) and both runs stalled. */
static void pool_lower_bytes_first(void) {
    bare b = bare_receiver();
    pure_link *pl = b.pl;
    uint32_t blocks = pl->pool.store.blocks;
    CHECK_EQ_U(pl->pool.big_blocks, 0);
    pl_run *r = bare_run(pl, 0, 20), *s = bare_run(pl, 1, 21);
    bare_mark(r, 100), bare_mark(s, 100);
    bare_bytes(pl, r, 100, PL_BLOCK_BYTES);
    bare_bytes(pl, s, PL_BLOCK_BYTES, PL_BLOCK_BYTES + 1);
    uint64_t window = pl_run_window(pl, r);
    CHECK_EQ_U(window, blocks / 2 * PL_BLOCK_BYTES);
    CHECK_EQ_U(pl_run_window(pl, s), window);
    bare_bytes(pl, r, 2 * PL_BLOCK_BYTES, 100 + window);
    bare_bytes(pl, s, PL_BLOCK_BYTES + 1, 100 + window);
    CHECK_EQ_U(pl->pool.store.free_count, 0);        /* every block held, each run within its share */
    CHECK_EQ_U(r->mem_blocks, blocks / 2);
    CHECK_EQ_U(s->mem_blocks, blocks / 2);
    CHECK_EQ_U(pl_run_window(pl, r), window);
    static uint8_t fill[1400];
    CHECK(pl_run_mem_write(pl, r, PL_BLOCK_BYTES, fill, sizeof fill) == -1);  /* no free block */
    CHECK(pl_run_mem_write(pl, s, 100, fill, sizeof fill) == -1);
    CHECK(pl_run_mem_write_lower(pl, r, PL_BLOCK_BYTES, fill, sizeof fill) == 0);  /* the hole in r's record */
    CHECK(pl_run_mem_write_lower(pl, s, 100, fill, sizeof fill) == 0);             /* s's delivery point */
    CHECK_EQ_U(r->mem_blocks, blocks / 2);
    CHECK_EQ_U(s->mem_blocks, blocks / 2);
    CHECK_EQ_U(pl->pool.store.free_count, 0);
    uint64_t top = (100 + window - 1) / PL_BLOCK_BYTES;  /* the highest block went back, its bytes too */
    CHECK_EQ_U(r->mem_top, top);
    CHECK_EQ_U(r->have.r[r->have.count - 1].hi, top * PL_BLOCK_BYTES);
    CHECK_EQ_U(s->have.r[s->have.count - 1].hi, top * PL_BLOCK_BYTES);
    /* A run with no block beyond the bytes takes none from another run. */
    pl_run *t = bare_run(pl, 1, 22);
    CHECK(pl_run_mem_write_lower(pl, t, 0, fill, sizeof fill) == -1);
    CHECK_EQ_U(t->mem_blocks, 0);
    CHECK(pl_run_mem_write(pl, r, top * PL_BLOCK_BYTES - 1, fill, 1) == 0);        /* its own block */
    CHECK(pl_run_mem_write_lower(pl, r, top * PL_BLOCK_BYTES, fill, 1) == -1);     /* r's highest: none beyond */
    CHECK_EQ_U(r->mem_top, top);
    free(b.mem);
}

/* A run holding memory and the ticket, quiet for PL_RUN_STOPPED_NS, gives both back (spec
 * §4.2 "Stopped runs"); a packet heard in between puts it off. */
static void pool_stopped_run_gives_back(void) {
    bare b = bare_receiver();
    pure_link *pl = b.pl;
    uint64_t blocks = pl->pool.store.blocks, t0 = pl->now_ns;
    pl_run *r = bare_run(pl, 0, 7);
    bare_bytes(pl, r, 0, 3 * PL_BLOCK_BYTES);
    pl_run_ticket_ask(pl, r, 8u * MIB);  /* the free blocks hold it: granted */
    CHECK_EQ_U(r->ticket_state, PL_TICKET_HELD);
    CHECK_EQ_U(pl->pool.ticket, r->handle);
    CHECK(pure_link_tick(pl, t0 + PL_RUN_STOPPED_NS / 2) == 0);
    r->last_heard_ns = t0 + PL_RUN_STOPPED_NS / 2;  /* a packet, say */
    CHECK(pure_link_tick(pl, t0 + PL_RUN_STOPPED_NS) == 0);
    CHECK(pure_link_tick(pl, t0 + PL_RUN_STOPPED_NS / 2 * 3 - 1) == 0);
    CHECK_EQ_U(r->mem_blocks, 3);
    CHECK_EQ_U(pl->pool.ticket, r->handle);
    CHECK(pure_link_tick(pl, t0 + PL_RUN_STOPPED_NS / 2 * 3) == 0);
    CHECK_EQ_U(r->mem_blocks, 0);
    CHECK_EQ_U(r->have.count, 0);
    CHECK_EQ_U(r->ticket_state, PL_TICKET_NONE);
    CHECK(pl->pool.ticket < 0 && pl->pool.promised == 0);
    CHECK_EQ_U(pl->pool.store.free_count, blocks);
    CHECK_EQ_U(pl->pool.peers_holding, 0);
    CHECK(pure_link_deadline(pl) == PURE_LINK_NONE || pure_link_deadline(pl) > t0 + 10 * PL_NS_PER_S);
    free(b.mem);
}

TEST_MAIN(TEST_CASE(pool_shared_by_many_runs), TEST_CASE(pool_long_records_after_small),
          TEST_CASE(pool_long_records_after_host_held),
          TEST_CASE(pool_broken_stream_gives_back), TEST_CASE(send_pool_gives_back_on_stored),
          TEST_CASE(pool_share_per_peer_then_per_run), TEST_CASE(pool_stopped_run_gives_back),
          TEST_CASE(pool_lower_bytes_first))
