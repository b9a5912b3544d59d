/* test_keys.c: keys over time, end to end in virtual time — the memo across a kill -9,
 * LOST without a memo, replay after a restart, address changes and spoofing, epoch
 * changes mid-transfer, torn memo writes, and a (key, nonce) oracle over every seal. */
#include "harness.h"
#include "link_loop.h"
#include "wire.h"
#include "internal.h"

#define MS 1000000ull
#define S 1000000000ull

/* ---- A (key, nonce) oracle: a crypto table that wraps the null cipher and records every
 * (key, nonce) it seals under; a repeat fails the test. ---- */
#define ORACLE_MOST (1u << 20)
#define ORACLE_KEY_AT 512u  /* where the wrapper keeps the key inside the AEAD context */
typedef struct oracle_entry { uint8_t key[16], nonce[12]; uint8_t used; } oracle_entry;
static oracle_entry *oracle;
static uint64_t oracle_seals, oracle_repeats;

static uint64_t oracle_hash(const uint8_t key[16], const uint8_t nonce[12]) {
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < 16; i++) h = (h ^ key[i]) * 1099511628211ull;
    for (int i = 0; i < 12; i++) h = (h ^ nonce[i]) * 1099511628211ull;
    return h;
}

static void oracle_init(void *ctx, const uint8_t key[16]) {
    pure_link_crypto_null()->aead_init(ctx, key);
    memcpy((uint8_t *)ctx + ORACLE_KEY_AT, key, 16);
}

static void oracle_seal(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                        const uint8_t *in, size_t len, uint8_t *out) {
    const uint8_t *key = (const uint8_t *)ctx + ORACLE_KEY_AT;
    uint64_t h = oracle_hash(key, nonce) % ORACLE_MOST;
    oracle_seals++;
    for (;; h = (h + 1) % ORACLE_MOST) {
        oracle_entry *e = &oracle[h];
        if (!e->used) { memcpy(e->key, key, 16), memcpy(e->nonce, nonce, 12), e->used = 1; break; }
        if (memcmp(e->key, key, 16) == 0 && memcmp(e->nonce, nonce, 12) == 0) { oracle_repeats++; break; }
    }
    pure_link_crypto_null()->aead_seal(ctx, nonce, aad, aad_len, in, len, out);
}

static pure_link_crypto oracle_table;
static const pure_link_crypto *oracle_crypto(void) {
    if (!oracle) oracle = calloc(ORACLE_MOST, sizeof *oracle);
    oracle_table = *pure_link_crypto_default();
    oracle_table.name = "oracle(null)";
    oracle_table.aead_init = oracle_init;
    oracle_table.aead_seal = oracle_seal;
    oracle_table.aead_open = pure_link_crypto_null()->aead_open;
    return &oracle_table;
}

/* ---- helpers ---- */
static void queue(ll_net *n, int node, int sender, int count, size_t size) {
    uint8_t rec[2048];
    memset(rec, 0x5a, sizeof rec);
    for (int i = 0; i < count; i++) CHECK(pure_link_send(n->node[node].pl, sender, rec, size, n->now_ns) >= 0);
}

typedef struct want { int senders; int64_t each; } want;
static int stored_all(ll_net *n, void *arg) {
    const want *w = arg;
    for (int k = 0; k < w->senders; k++)
        if (n->node[0].stored_seen[k] < w->each) return 0;
    return 1;
}

static pure_link_stats stats_of(ll_net *n, int node) {
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(n->node[node].pl, -1, &st);
    return st;
}

static void three_outputs(ll_net *n, int a, int b) {
    for (int k = 0; k < 3; k++) {
        char name[8] = {'o', 'u', 't', (char)('0' + k), 0};
        CHECK(ll_link(n, a, b, name, "in", 7) == k);
    }
}

/* The seed's memo scenario: three outputs in epoch 1, receiver killed and restarted from
 * its memo: no LOST, no X25519, every record stored once. */
static void memo_restart_no_lost_no_x25519(void) {
    ll_net n;
    ll_init(&n, 11, 5 * MS);
    pure_link_config rc = {.memo_enabled = 1};
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, &rc);
    CHECK(ll_wire(&n, b, a, "*") >= 0);
    three_outputs(&n, a, b);
    for (int k = 0; k < 3; k++) queue(&n, a, k, 500, 200);
    want w = {3, 500};
    ll_run(&n, 10 * S, stored_all, &w);
    CHECK(stored_all(&n, &w));
    CHECK(ll_restart(&n, b) == 0);
    pure_link_stats st = stats_of(&n, b);
    CHECK_EQ_U(st.memo_runs_restored, 3);
    for (int k = 0; k < 3; k++) queue(&n, a, k, 500, 200);
    w.each = 1000;
    ll_run(&n, n.now_ns + 20 * S, stored_all, &w);
    CHECK(stored_all(&n, &w));
    st = stats_of(&n, b);
    CHECK_EQ_U(st.lost_notices_sent, 0);
    CHECK_EQ_U(st.x25519_ops, 0);
    CHECK_EQ_U(n.node[b].duplicates, 0);
    CHECK_EQ_U(n.node[b].out_of_order, 0);
    CHECK_EQ_U(stats_of(&n, a).lost_notices_received, 0);
    ll_free(&n);
}

/* A LOST honoured declares the sender's whole flight lost, but the receiver's restart took
 * those packets, not the path: the congestion controller hears of none of them (spec/
 * protocol.md §7; counted, BBR took them for one lossy round and resent at half the path's
 * rate).  The loop's path loses nothing, so any congestion episode here is the LOST's. */
static int flight_built(ll_net *n, void *arg) {
    const pl_sender *s = &n->node[*(const int *)arg].pl->senders[0];
    return s->epoch >= 1 && s->bytes_in_flight >= 20000;
}
static int lost_heard(ll_net *n, void *arg) {
    return n->node[*(const int *)arg].pl->senders[0].stats.lost_notices_received >= 1;
}

static void no_memo_lost_flight_is_no_congestion(void) {
    ll_net n;
    ll_init(&n, 13, 5 * MS);
    pure_link_config c = {0};
    int a = ll_node_add(&n, &c), b = ll_node_add(&n, &c);
    CHECK(ll_wire(&n, b, a, "*") >= 0);
    CHECK(ll_link(&n, a, b, "out", "in", 1) == 0);
    queue(&n, a, 0, 3000, 1000);
    ll_run(&n, 10 * S, flight_built, &a);
    const pl_sender *s = &n.node[a].pl->senders[0];
    CHECK(flight_built(&n, &a));
    uint64_t events = s->cc.congestion_events, lost = s->stats.packets_lost;
    CHECK(ll_restart(&n, b) == 0);  /* no memo: the run is unknown to the new receiver */
    ll_run(&n, n.now_ns + 10 * S, lost_heard, &a);
    CHECK(lost_heard(&n, &a));
    fprintf(stderr, "  packets lost at the LOST %llu, congestion events %llu -> %llu\n",
            (unsigned long long)(s->stats.packets_lost - lost), (unsigned long long)events,
            (unsigned long long)s->cc.congestion_events);
    CHECK(s->stats.packets_lost > lost);  /* the flight counts as lost ... */
    CHECK_EQ_U(s->cc.congestion_events, events);  /* ... but not as congestion */
    ll_free(&n);
}

/* Without a memo: LOST, recovery, every record once, and no (key, nonce) ever repeats. */
static void no_memo_lost_recovery_no_nonce_reuse(void) {
    oracle_seals = oracle_repeats = 0;
    const pure_link_crypto *oc = oracle_crypto();
    memset(oracle, 0, ORACLE_MOST * sizeof *oracle);
    ll_net n;
    ll_init(&n, 12, 5 * MS);
    pure_link_config c = {.crypto = oc};
    int a = ll_node_add(&n, &c), b = ll_node_add(&n, &c);
    CHECK(ll_wire(&n, b, a, "*") >= 0);
    three_outputs(&n, a, b);
    for (int k = 0; k < 3; k++) queue(&n, a, k, 400, 300);
    want w = {3, 400};
    ll_run(&n, 10 * S, stored_all, &w);
    CHECK(stored_all(&n, &w));
    CHECK(ll_restart(&n, b) == 0);
    for (int k = 0; k < 3; k++) queue(&n, a, k, 400, 300);
    w.each = 800;
    ll_run(&n, n.now_ns + 30 * S, stored_all, &w);
    CHECK(stored_all(&n, &w));
    pure_link_stats sb = stats_of(&n, b), sa = stats_of(&n, a);
    fprintf(stderr, "  LOST sent %llu, heard %llu; seals %llu, repeats %llu\n",
            (unsigned long long)sb.lost_notices_sent, (unsigned long long)sa.lost_notices_received,
            (unsigned long long)oracle_seals, (unsigned long long)oracle_repeats);
    CHECK(sb.lost_notices_sent >= 1);
    CHECK(sa.lost_notices_received >= 1);
    CHECK_EQ_U(n.node[b].duplicates, 0);
    CHECK_EQ_U(n.node[b].out_of_order, 0);
    CHECK(oracle_seals > 1000);
    CHECK_EQ_U(oracle_repeats, 0);
    ll_free(&n);
}

/* Without a memo, when the host stored more than the sender heard (its STOREDs were lost):
 * the sender binds again from the last count it heard (k), the host's mark is m > k.  The
 * receiver must find record m's start by parsing k..m-1 from their prefixes, so STORED
 * counts only what the parse has passed (spec/protocol.md §4.2): had it said m at once, the
 * sender would let go of bytes the receiver still needs, and no STREAM with base m follows.
 * Records of distinct lengths, so that a wrong start shows as a wrong record. */
typedef struct mark_watch { int block_replies; uint64_t bad_records; } mark_watch;
static int block_replies_tap(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    (void)n, (void)to, (void)data, (void)len;
    const mark_watch *w = arg;
    return !(w->block_replies && from == 1);
}
static mark_watch *mark_watch_of;
static void mark_record_check(ll_net *n, int node, const pure_link_event *ev) {
    (void)n, (void)node;
    size_t want_len = 100 + (size_t)(ev->record % 37);
    int ok = ev->len + ev->len2 == want_len;
    for (size_t i = 0; ok && i < ev->len; i++) ok = ev->data[i] == (uint8_t)ev->record;
    for (size_t i = 0; ok && i < ev->len2; i++) ok = ev->data2[i] == (uint8_t)ev->record;
    if (!ok) mark_watch_of->bad_records++;
}

static void no_memo_host_mark_above_sender_base(void) {
    ll_net n;
    ll_init(&n, 17, 5 * MS);
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, NULL);
    CHECK(ll_wire(&n, b, a, "*") >= 0);
    CHECK(ll_link(&n, a, b, "out", "in", 7) == 0);
    mark_watch mw = {0, 0};
    mark_watch_of = &mw;
    n.tap = block_replies_tap, n.tap_arg = &mw, n.on_record = mark_record_check;
    uint8_t rec[200];
    for (int i = 0; i < 600; i++) {
        memset(rec, (uint8_t)i, sizeof rec);
        CHECK(pure_link_send(n.node[a].pl, 0, rec, 100 + (size_t)(i % 37), n.now_ns) == i);
    }
    want w = {1, 50};
    ll_run(&n, 10 * S, stored_all, &w);
    CHECK(stored_all(&n, &w));
    mw.block_replies = 1;  /* the host goes on storing; the sender hears none of it */
    ll_run(&n, n.now_ns + 3 * S, NULL, NULL);
    int64_t k = n.node[a].stored_seen[0], m = 0;
    for (int i = 0; i < LL_STREAMS; i++)
        if (n.node[b].streams[i].run != 0) m = n.node[b].streams[i].stored;
    fprintf(stderr, "  sender heard %lld stored, host holds %lld\n", (long long)k, (long long)m);
    CHECK(m > k + 1);
    uint64_t delivered = n.node[b].records_delivered;
    CHECK(ll_restart(&n, b) == 0);
    mw.block_replies = 0;
    w.each = 600;
    ll_run(&n, n.now_ns + 30 * S, stored_all, &w);
    CHECK(stored_all(&n, &w));
    CHECK(stats_of(&n, b).lost_notices_sent >= 1);
    CHECK_EQ_U(n.node[b].records_delivered - delivered, 600 - (uint64_t)m);  /* none below the mark */
    CHECK_EQ_U(n.node[b].duplicates, 0);
    CHECK_EQ_U(n.node[b].out_of_order, 0);
    CHECK_EQ_U(mw.bad_records, 0);
    ll_free(&n);
}

/* Every packet of a finished transfer replayed after a receiver restart (with memo): no
 * record delivered again, no epoch rolled back (later records flow without LOST or X25519). */
typedef struct capture { uint8_t (*pkt)[PURE_LINK_DATAGRAM_MOST]; size_t *len; int count, most; } capture;
static int capture_tap(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    (void)n, (void)to;
    capture *c = arg;
    if (from == 0 && c->count < c->most) {
        memcpy(c->pkt[c->count], data, len);
        c->len[c->count++] = len;
    }
    return 1;
}

static void replay_after_restart_delivers_nothing(void) {
    for (int memo = 0; memo <= 1; memo++) {
        ll_net n;
        ll_init(&n, 13 + (uint64_t)memo, 5 * MS);
        pure_link_config rc = {.memo_enabled = (uint32_t)memo};
        int a = ll_node_add(&n, NULL), b = ll_node_add(&n, &rc);
        CHECK(ll_wire(&n, b, a, "*") >= 0);
        CHECK(ll_link(&n, a, b, "out", "in", 7) == 0);
        capture cap = {.most = 4096};
        cap.pkt = malloc((size_t)cap.most * sizeof *cap.pkt);
        cap.len = malloc((size_t)cap.most * sizeof *cap.len);
        n.tap = capture_tap, n.tap_arg = &cap;
        queue(&n, a, 0, 2000, 500);
        want w = {1, 2000};
        ll_run(&n, 20 * S, stored_all, &w);
        CHECK(stored_all(&n, &w));
        n.tap = NULL;
        uint64_t delivered = n.node[b].records_delivered;
        CHECK(ll_restart(&n, b) == 0);
        pure_link_stats before = stats_of(&n, b);
        for (int i = 0; i < cap.count; i++) {
            pure_link_receive(n.node[b].pl, &n.node[a].addr, cap.pkt[i], cap.len[i], n.now_ns);
            ll_service(&n, b);
        }
        ll_run(&n, n.now_ns + 2 * S, NULL, NULL);
        pure_link_stats after = stats_of(&n, b);
        fprintf(stderr, "  memo %d: replayed %d packets, delivered again %llu, x25519 %llu\n", memo, cap.count,
                (unsigned long long)(n.node[b].records_delivered - delivered),
                (unsigned long long)(after.x25519_ops - before.x25519_ops));
        CHECK_EQ_U(n.node[b].records_delivered, delivered);
        CHECK_EQ_U(n.node[b].duplicates, 0);
        if (memo) CHECK_EQ_U(after.x25519_ops, 0);  /* no replayed OFFER rolled an epoch */
        /* The live sender goes on. */
        queue(&n, a, 0, 100, 500);
        w.each = 2100;
        ll_run(&n, n.now_ns + 30 * S, stored_all, &w);
        CHECK(stored_all(&n, &w));
        CHECK_EQ_U(n.node[b].duplicates, 0);
        if (memo) CHECK_EQ_U(stats_of(&n, b).lost_notices_sent, 0);
        free(cap.pkt), free(cap.len);
        ll_free(&n);
    }
}

/* The sender's first reply dropped, so that its PTO probe repeats the OFFER in a second
 * epoch-0 packet; with `drop_accepts`, the first reply carrying each later ACCEPT too, so
 * that the OFFER of every epoch n >= 2 is repeated in epoch n - 1.  Every sender packet is
 * captured.  The null cipher lets the tap read the replies' frames. */
typedef struct probe_capture {
    capture cap;
    int replies_dropped, drop_accepts, accepts;
    uint8_t *memo_at_accept;  /* the receiver's disk as the first ACCEPT that passes leaves */
} probe_capture;
static int reply_has(const uint8_t *data, size_t len, uint8_t type);
static int probe_capture_tap(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    probe_capture *pc = arg;
    if (from == 1 && pc->replies_dropped == 0) { pc->replies_dropped = 1; return 0; }
    if (from == 1 && pc->drop_accepts && reply_has(data, len, PL_FRAME_ACCEPT) && pc->accepts++ % 2 == 1) return 0;
    if (from == 1 && pc->accepts == 0 && reply_has(data, len, PL_FRAME_ACCEPT)) {
        pc->accepts = 1;
        memcpy(pc->memo_at_accept, n->node[1].memo, n->node[1].memo_bytes);
    }
    return capture_tap(n, from, to, data, len, &pc->cap);
}

static int epoch_of(const uint8_t *data, size_t len) {
    pl_header h;
    CHECK(pl_header_decode(&h, data, len) > 0);
    return (int)h.epoch_field;
}

/* A transfer of 300 records with the first reply dropped; b keeps a memo.  Returns how
 * many captured packets are of epoch 0 (their indexes in e0[]). */
static int probe_transfer(ll_net *n, probe_capture *pc, uint64_t seed, uint64_t sender_epoch_packets, int settle,
                          int e0[8]) {
    ll_init(n, seed, 5 * MS);
    pure_link_config sc = {.epoch_packets = sender_epoch_packets, .crypto = pure_link_crypto_null()};
    pure_link_config rc = {.memo_enabled = 1, .crypto = pure_link_crypto_null()};
    int a = ll_node_add(n, &sc), b = ll_node_add(n, &rc);
    CHECK(ll_wire(n, b, a, "*") >= 0);
    CHECK(ll_link(n, a, b, "out", "in", 7) == 0);
    memset(pc, 0, sizeof *pc);
    pc->drop_accepts = sender_epoch_packets != 0;
    pc->memo_at_accept = malloc(n->node[b].memo_bytes);
    pc->cap.most = 4096;
    pc->cap.pkt = malloc((size_t)pc->cap.most * sizeof *pc->cap.pkt);
    pc->cap.len = malloc((size_t)pc->cap.most * sizeof *pc->cap.len);
    n->tap = probe_capture_tap, n->tap_arg = pc;
    /* With epochs turning, the records go in rounds 1 s apart: the X25519 rate (4/s per
     * peer) then lets every OFFER through, and the capture spans several epochs. */
    int rounds = sender_epoch_packets ? 4 : 1;
    for (int k = 1; k <= rounds; k++) {
        /* The last round drops nothing: the sender ends in the epoch the receiver recorded
         * (had it missed that ACCEPT, its packets of the epoch before would be live, and
         * LOST their due answer, spec/protocol.md §9). */
        if (k == rounds) pc->drop_accepts = 0;
        queue(n, a, 0, 300 / rounds, 500);
        want w = {1, 300 / rounds * k};
        ll_run(n, n->now_ns + 20 * S, stored_all, &w);
        CHECK(stored_all(n, &w));
        if (k < rounds) ll_run(n, n->now_ns + 1 * S, NULL, NULL);
    }
    if (settle) {
        /* A few records more, so the receiver hears the sender's last epoch before it dies. */
        queue(n, a, 0, 4, 500);
        want w = {1, 304};
        ll_run(n, n->now_ns + 20 * S, stored_all, &w);
        CHECK(stored_all(n, &w));
    }
    n->tap = NULL;
    int e0n = 0;
    for (int i = 0; i < pc->cap.count; i++)
        if (epoch_of(pc->cap.pkt[i], pc->cap.len[i]) == 0 && e0n < 8) e0[e0n++] = i;
    return e0n;
}

static void probe_free(probe_capture *pc) { free(pc->cap.pkt), free(pc->cap.len), free(pc->memo_at_accept); }

static void replay_one(ll_net *n, const probe_capture *pc, int i) {
    pure_link_receive(n->node[1].pl, &n->node[0].addr, pc->cap.pkt[i], pc->cap.len[i], n->now_ns);
    ll_service(n, 1);
}

/* The live sender goes on after the replay: stored, no LOST, no key work. */
static void probe_goes_on(ll_net *n, int64_t records_before) {
    queue(n, 0, 0, 50, 500);
    want w = {1, records_before + 50};
    ll_run(n, n->now_ns + 30 * S, stored_all, &w);
    CHECK(stored_all(n, &w));
    CHECK_EQ_U(n->node[1].duplicates, 0);
    CHECK_EQ_U(stats_of(n, 1).lost_notices_sent, 0);
}

/* The epoch-0 packets of a run (its first and the PTO probe that repeated the OFFER),
 * replayed into a receiver restarted from its memo, in either order and repeated: nothing
 * delivered, no X25519, the run not taken back to epoch 0 (spec/protocol.md §9, "the
 * recorded number": the memo holds the number of the first epoch-1 packet, above both). */
static void replay_epoch0_probe_after_restart(void) {
    static const char *orders[] = {"01", "10", "0101", "1100", "210", "012210"};
    for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
        ll_net n;
        probe_capture pc;
        int e0[8];
        int e0n = probe_transfer(&n, &pc, 31, 0, 0, e0);
        CHECK(e0n >= 2);  /* the probe repeated the OFFER in epoch 0 */
        uint64_t delivered = n.node[1].records_delivered;
        CHECK(ll_restart(&n, 1) == 0);
        CHECK_EQ_U(stats_of(&n, 1).memo_runs_restored, 1);
        for (const char *c = orders[o]; *c; c++) replay_one(&n, &pc, e0[(*c - '0') % e0n]);
        pure_link_run_info ri;
        CHECK(pure_link_run_info_get(n.node[1].pl, 0, &ri) == 0);
        CHECK_EQ_U(ri.epoch, 1);  /* not taken back to epoch 0 */
        ll_run(&n, n.now_ns + 2 * S, NULL, NULL);
        pure_link_stats st = stats_of(&n, 1);
        fprintf(stderr, "  order %s (%d epoch-0 packets): x25519 %llu, builds %llu, delivered again %llu\n",
                orders[o], e0n, (unsigned long long)st.x25519_ops, (unsigned long long)st.run_key_builds,
                (unsigned long long)(n.node[1].records_delivered - delivered));
        CHECK_EQ_U(st.x25519_ops, 0);
        CHECK_EQ_U(st.run_key_builds, 0);
        CHECK_EQ_U(n.node[1].records_delivered, delivered);
        probe_goes_on(&n, 300);
        CHECK_EQ_U(stats_of(&n, 1).x25519_ops, 0);
        probe_free(&pc);
        ll_free(&n);
    }
}

/* Known limit (spec/protocol.md §9, "the recorded number"): a receiver that dies after
 * the ACCEPT of epoch 1 and before it records the first epoch-1 packet's number restores
 * the OFFER's number, and a replayed PTO probe passes for a sender that never heard the
 * ACCEPT.  Its cost is bounded: E(0) once (one X25519), no run built, no LOST, nothing
 * delivered, and the live sender's next packet takes the run back to epoch 1. */
static void replay_epoch0_probe_before_second_record(void) {
    ll_net n;
    probe_capture pc;
    int e0[8];
    CHECK(probe_transfer(&n, &pc, 31, 0, 0, e0) >= 2);
    uint64_t delivered = n.node[1].records_delivered;
    memcpy(n.node[1].memo, pc.memo_at_accept, n.node[1].memo_bytes);
    CHECK(ll_restart(&n, 1) == 0);
    CHECK_EQ_U(stats_of(&n, 1).memo_runs_restored, 1);
    for (int k = 0; k < 3; k++) replay_one(&n, &pc, e0[1]), replay_one(&n, &pc, e0[0]);
    pure_link_run_info ri;
    CHECK(pure_link_run_info_get(n.node[1].pl, 0, &ri) == 0);
    pure_link_stats st = stats_of(&n, 1);
    fprintf(stderr, "  restored at the OFFER's number: run epoch %u, x25519 %llu, builds %llu\n", ri.epoch,
            (unsigned long long)st.x25519_ops, (unsigned long long)st.run_key_builds);
    CHECK_EQ_U(ri.epoch, 0);  /* the replay passed for the sender's own probe */
    CHECK_EQ_U(st.x25519_ops, 1);
    CHECK_EQ_U(st.run_key_builds, 0);
    CHECK_EQ_U(n.node[1].records_delivered, delivered);
    /* The live sender's packets of epoch 1 open under the E(1) the run kept, and its STREAM,
     * sent again to the new build, moves the binding the replay made up to its stored mark. */
    probe_goes_on(&n, 300);
    CHECK(pure_link_run_info_get(n.node[1].pl, 0, &ri) == 0);
    CHECK_EQ_U(ri.epoch, 1);
    st = stats_of(&n, 1);
    CHECK_EQ_U(st.x25519_ops, 1);
    CHECK_EQ_U(st.run_key_builds, 0);
    CHECK_EQ_U(st.lost_notices_sent, 0);
    CHECK_EQ_U(n.node[1].duplicates, 0);
    probe_free(&pc);
    ll_free(&n);
}

/* The same packets replayed into the live receiver (no restart), and every packet of a
 * capture spanning several epochs replayed after a restart, epoch-0 ones first and last:
 * nothing delivered, no key work. */
static void replay_probe_live_and_later_epochs(void) {
    ll_net n;
    probe_capture pc;
    int e0[8];
    CHECK(probe_transfer(&n, &pc, 32, 0, 0, e0) >= 2);
    uint64_t delivered = n.node[1].records_delivered, x25519 = stats_of(&n, 1).x25519_ops;
    uint64_t builds = stats_of(&n, 1).run_key_builds;
    for (int k = 0; k < 3; k++) replay_one(&n, &pc, e0[1]), replay_one(&n, &pc, e0[0]);
    ll_run(&n, n.now_ns + 2 * S, NULL, NULL);
    CHECK_EQ_U(stats_of(&n, 1).x25519_ops, x25519);
    CHECK_EQ_U(stats_of(&n, 1).run_key_builds, builds);
    CHECK_EQ_U(n.node[1].records_delivered, delivered);
    probe_goes_on(&n, 300);
    probe_free(&pc);
    ll_free(&n);
    for (int last = 0; last <= 1; last++) {
        int e0n = probe_transfer(&n, &pc, 33 + (uint64_t)last, 10, 1, e0);
        CHECK(e0n >= 2);
        int top = epoch_of(pc.cap.pkt[pc.cap.count - 1], pc.cap.len[pc.cap.count - 1]);
        fprintf(stderr, "  capture: %d packets, epochs up to %d, %d ACCEPTs seen\n", pc.cap.count, top, pc.accepts);
        CHECK(top >= 3);  /* the capture spans epochs 0 .. >= 3 */
        CHECK(pc.accepts >= 4);
        pure_link_run_info ri;
        CHECK(pure_link_run_info_get(n.node[1].pl, 0, &ri) == 0);
        CHECK_EQ_U(ri.epoch, (uint32_t)top);  /* the receiver heard the sender's last epoch */
        delivered = n.node[1].records_delivered;
        CHECK(ll_restart(&n, 1) == 0);
        for (int pass = 0; pass < 2; pass++) {
            if (!last) for (int k = 0; k < e0n; k++) replay_one(&n, &pc, e0[k]);
            for (int i = 0; i < pc.cap.count; i++) replay_one(&n, &pc, pass ? pc.cap.count - 1 - i : i);
            if (last) for (int k = e0n - 1; k >= 0; k--) replay_one(&n, &pc, e0[k]);
        }
        ll_run(&n, n.now_ns + 2 * S, NULL, NULL);
        pure_link_stats st = stats_of(&n, 1);
        CHECK(pure_link_run_info_get(n.node[1].pl, 0, &ri) == 0);
        fprintf(stderr, "  epochs 0..%d, epoch-0 %s: x25519 %llu, builds %llu, LOST %llu, run epoch %u, delivered again %llu\n", top,
                last ? "last" : "first", (unsigned long long)st.x25519_ops, (unsigned long long)st.run_key_builds,
                (unsigned long long)st.lost_notices_sent, ri.epoch, (unsigned long long)(n.node[1].records_delivered - delivered));
        CHECK_EQ_U(st.x25519_ops, 0);
        CHECK_EQ_U(st.run_key_builds, 0);
        CHECK_EQ_U(st.lost_notices_sent, 0);  /* no replay of epoch m - 1 passed for the sender's */
        CHECK_EQ_U(ri.epoch, (uint32_t)top);
        CHECK_EQ_U(n.node[1].records_delivered, delivered);
        probe_goes_on(&n, 304);
        probe_free(&pc);
        ll_free(&n);
    }
}

/* Two restarts from the memo in one epoch: after the first, the sender binds its stream
 * again (STREAM with its stored mark, 300) in packets of the restored epoch; one of them
 * replayed after the second restart opens (the restored run's window starts empty) and
 * binds the new build's stream at 300 while the host has stored 600, and its ACKs say the
 * stream is known.  The sender binds again for the new build all the same (spec/protocol.md
 * §4, "a new build binds again"), so its STREAM moves the binding up to 600 and the run goes
 * on (without that: 600 of 650 stored in 30 s). */
static int packet_has(const uint8_t *data, size_t len, uint8_t type, int reply);
static int sender_has(const uint8_t *data, size_t len, uint8_t type) { return packet_has(data, len, type, 0); }

static void replay_stream_after_second_restart(void) {
    ll_net n;
    ll_init(&n, 41, 5 * MS);
    pure_link_config rc = {.memo_enabled = 1, .crypto = pure_link_crypto_null()}, sc = {.crypto = pure_link_crypto_null()};
    int a = ll_node_add(&n, &sc), b = ll_node_add(&n, &rc);
    CHECK(ll_wire(&n, b, a, "*") >= 0);
    CHECK(ll_link(&n, a, b, "out", "in", 7) == 0);
    queue(&n, a, 0, 300, 500);
    want w = {1, 300};
    ll_run(&n, 20 * S, stored_all, &w);
    CHECK(stored_all(&n, &w));
    CHECK(ll_restart(&n, b) == 0);
    capture cap = {.most = 4096};
    cap.pkt = malloc((size_t)cap.most * sizeof *cap.pkt);
    cap.len = malloc((size_t)cap.most * sizeof *cap.len);
    n.tap = capture_tap, n.tap_arg = &cap;
    queue(&n, a, 0, 300, 500);
    w.each = 600;
    ll_run(&n, n.now_ns + 20 * S, stored_all, &w);
    CHECK(stored_all(&n, &w));
    n.tap = NULL;
    CHECK(ll_restart(&n, b) == 0);
    int streams = 0;
    for (int i = 0; i < cap.count; i++) {
        if (!sender_has(cap.pkt[i], cap.len[i], PL_FRAME_STREAM) || streams == 1) continue;
        streams++;
        pure_link_receive(n.node[b].pl, &n.node[a].addr, cap.pkt[i], cap.len[i], n.now_ns);
        ll_service(&n, b);
    }
    queue(&n, a, 0, 50, 500);
    w.each = 650;
    ll_run(&n, n.now_ns + 30 * S, stored_all, &w);
    fprintf(stderr, "  %d STREAM packets replayed; stored %lld of 650 after the replay\n", streams, (long long)n.node[a].stored_seen[0]);
    CHECK(stored_all(&n, &w));
    CHECK_EQ_U(n.node[b].duplicates, 0);
    free(cap.pkt), free(cap.len);
    ll_free(&n);
}

/* ---- Addresses ---- */
typedef struct addr_watch {
    pure_link_addr spoof;
    uint64_t from_spoof;     /* bytes the receiver got from the spoofed address */
    uint64_t to_spoof;       /* bytes the receiver sent to it, checked at every send */
    int over_limit;          /* set if ever to_spoof > 3 * from_spoof */
    int spoof_at;            /* inject a spoofed copy of the sender's packet with this count */
    int sender_packets;
} addr_watch;

/* 1 when a packet of the null cipher (plaintext frames) carries a frame of `type`; reply:
 * it is a receiver's reply (its frames decode as replies). */
static int packet_has(const uint8_t *data, size_t len, uint8_t type, int reply) {
    pl_header h;
    int hl = pl_header_decode(&h, data, len);
    if (hl < 0) return 0;
    const uint8_t *p = data + hl;
    size_t n = len - (size_t)hl - PURE_LINK_TAG_BYTES;
    for (size_t at = 0; at < n;) {
        pl_frame f;
        int used = pl_frame_decode(&f, p + at, n - at, reply);
        if (used < 0) return 0;
        if (f.type == type) return 1;
        at += (size_t)used;
    }
    return 0;
}

static int reply_has(const uint8_t *data, size_t len, uint8_t type) { return packet_has(data, len, type, 1); }

static int addr_tap(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    addr_watch *w = arg;
    if (from == 1 && to == 2) {
        w->to_spoof += len;
        if (w->to_spoof > 3 * w->from_spoof) w->over_limit = 1;  /* at this instant */
    }
    if (from == 0) {
        w->sender_packets++;
        if (w->spoof_at && w->sender_packets == w->spoof_at) {
            /* An attacker races a copy of this packet from a spoofed address. */
            ll_pkt *p = &n->q[n->qn++];
            p->at_ns = n->now_ns + n->delay_ns / 2;
            p->seq = n->seq++;
            p->to = 1;
            p->from = w->spoof;
            p->len = len;
            memcpy(p->data, data, len);
            w->from_spoof += len;
        }
    }
    return 1;
}

/* The first reply tapped after the move goes to the new address (the old one is gone). */
typedef struct first_reply { int armed, seen, challenged; } first_reply;
static int first_reply_tap(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    (void)n, (void)to;
    first_reply *f = arg;
    if (from == 1 && f->armed && !f->seen) {
        f->seen = 1;
        f->challenged = reply_has(data, len, PL_FRAME_CHALLENGE);
    }
    return 1;
}

static void address_change_mid_transfer(void) {
    ll_net n;
    ll_init(&n, 15, 10 * MS);
    pure_link_config c = {.crypto = pure_link_crypto_null()};
    int a = ll_node_add(&n, &c), b = ll_node_add(&n, &c);
    CHECK(ll_wire(&n, b, a, "*") >= 0);
    CHECK(ll_link(&n, a, b, "out", "in", 7) == 0);
    first_reply fr = {0};
    n.tap = first_reply_tap, n.tap_arg = &fr;
    queue(&n, a, 0, 1000, 1000);
    want w = {1, 1000};
    ll_run(&n, 10 * S, stored_all, &w);
    CHECK(stored_all(&n, &w));
    /* The sender's node moves: a new port, then a new address; each time with records
     * still to send, and with replies to the old address still in flight (lost). */
    for (int step = 0; step < 2; step++) {
        if (step == 0) n.node[a].addr.bytes[5] = 81;
        else n.node[a].addr.bytes[3] = 77;
        fr = (first_reply){.armed = 1};
        queue(&n, a, 0, 1000, 1000);
        w.each += 1000;
        ll_run(&n, n.now_ns + 30 * S, stored_all, &w);
        CHECK(stored_all(&n, &w));
        fprintf(stderr, "  step %d: reply seen %d, challenge %d, stored %lld\n", step, fr.seen, fr.challenged,
                (long long)n.node[a].stored_seen[0]);
        CHECK(fr.seen);
        CHECK(fr.challenged);
    }
    CHECK_EQ_U(n.node[b].duplicates, 0);
    CHECK_EQ_U(n.node[b].out_of_order, 0);
    ll_free(&n);
}

/* A spoofed copy of a fresh packet moves the run to the spoofed address; that address
 * never answers the CHALLENGE, gets at most 3x what came from it, and the real sender's
 * next packets bring the run back. */
static void spoofed_address_never_validated(void) {
    ll_net n;
    ll_init(&n, 16, 10 * MS);
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, NULL);
    /* The spoofed address belongs to a node (index 2) that stays silent. */
    int v = ll_node_add(&n, NULL);
    CHECK(ll_wire(&n, b, a, "*") >= 0);
    CHECK(ll_link(&n, a, b, "out", "in", 7) == 0);
    addr_watch aw = {0};
    aw.spoof = n.node[v].addr;
    aw.spoof_at = 40;
    n.tap = addr_tap, n.tap_arg = &aw;
    queue(&n, a, 0, 3000, 1000);
    want w = {1, 3000};
    ll_run(&n, 30 * S, stored_all, &w);
    CHECK(stored_all(&n, &w));
    /* Everything the receiver sent to the silent victim arrived in its queue position:
     * the victim's endpoint counted it as received. */
    pure_link_stats sv = stats_of(&n, v);
    fprintf(stderr, "  spoofed address: %llu B in from it, %llu B sent to it\n",
            (unsigned long long)aw.from_spoof, (unsigned long long)sv.bytes_received);
    CHECK(aw.from_spoof > 0);
    CHECK(aw.to_spoof > 0);            /* the run did move there ... */
    CHECK(!aw.over_limit);             /* ... and never got more than 3x, at any instant */
    CHECK(sv.bytes_received <= 3 * aw.from_spoof);
    CHECK_EQ_U(n.node[b].duplicates, 0);
    ll_free(&n);
}

/* An epoch change mid-transfer under a small limit, with no loss of records. */
static int count_epoch_fields(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    (void)n, (void)to, (void)len;
    uint32_t *seen = arg;
    if (from == 0) *seen |= 1u << (data[1] & 0x0f);
    return 1;
}

static void epoch_change_mid_transfer(void) {
    ll_net n;
    ll_init(&n, 17, 5 * MS);
    n.loss_ppm = 10000;
    pure_link_config sc = {.epoch_packets = 300};
    int a = ll_node_add(&n, &sc), b = ll_node_add(&n, NULL);
    CHECK(ll_wire(&n, b, a, "*") >= 0);
    CHECK(ll_link(&n, a, b, "out", "in", 7) == 0);
    uint32_t fields = 0;
    n.tap = count_epoch_fields, n.tap_arg = &fields;
    queue(&n, a, 0, 6000, 1000);
    want w = {1, 6000};
    ll_run(&n, 60 * S, stored_all, &w);
    CHECK(stored_all(&n, &w));
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n.node[a].pl, 0, &st) == 0);
    fprintf(stderr, "  epochs reached: %llu (fields seen 0x%x)\n", (unsigned long long)st.epochs, fields);
    CHECK(st.epochs >= 5);  /* 0, 1, and a new one after every 300 packets (at most one per round trip) */
    CHECK_EQ_U(n.node[b].duplicates, 0);
    CHECK_EQ_U(n.node[b].out_of_order, 0);
    CHECK_EQ_U(n.node[b].records_delivered, 6000);
    ll_free(&n);
}

/* ---- Memo: cut after every write of an update, and tear the next one ---- */
typedef struct two_packets { uint8_t e1[PURE_LINK_DATAGRAM_MOST], e2[PURE_LINK_DATAGRAM_MOST]; size_t l1, l2; } two_packets;
static int keep_epoch_packets(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    (void)n, (void)to;
    two_packets *t = arg;
    if (from != 0) return 1;
    if ((data[1] & 0x0f) == 1 && t->l1 == 0) memcpy(t->e1, data, len), t->l1 = len;
    if ((data[1] & 0x0f) == 2 && t->l2 == 0) memcpy(t->e2, data, len), t->l2 = len;
    return 1;
}

/* 1 if the datagram opens at node i (no drop counter moved). */
static int opens(ll_net *n, int i, const uint8_t *p, size_t len) {
    pure_link_stats a = stats_of(n, i);
    pure_link_receive(n->node[i].pl, &n->node[0].addr, p, len, n->now_ns);
    pure_link_stats b = stats_of(n, i);
    return a.dropped_auth == b.dropped_auth && a.dropped_replay == b.dropped_replay &&
           a.dropped_unknown_key == b.dropped_unknown_key && a.dropped_no_slot == b.dropped_no_slot &&
           a.dropped_stale_epoch == b.dropped_stale_epoch;
}

static void memo_torn_writes_old_or_new(void) {
    ll_net n;
    ll_init(&n, 18, 5 * MS);
    pure_link_config sc = {.epoch_ns = 2 * S}, rc = {.memo_enabled = 1};
    int a = ll_node_add(&n, &sc), b = ll_node_add(&n, &rc);
    CHECK(ll_wire(&n, b, a, "*") >= 0);
    CHECK(ll_link(&n, a, b, "out", "in", 7) == 0);
    two_packets tp = {0};
    n.tap = keep_epoch_packets, n.tap_arg = &tp;
    queue(&n, a, 0, 50, 100);
    want w = {1, 50};
    ll_run(&n, 1 * S, stored_all, &w);
    CHECK(stored_all(&n, &w));
    /* The disk now holds epoch 1; keep it, and log the writes of the change to epoch 2. */
    uint8_t *base = malloc(n.node[b].memo_bytes);
    memcpy(base, n.node[b].memo, n.node[b].memo_bytes);
    n.node[b].memo_logged = 0;
    ll_run(&n, 2 * S + 100 * MS, NULL, NULL);  /* the sender offers epoch 2 at 2 s */
    queue(&n, a, 0, 50, 100);
    w.each = 100;
    ll_run(&n, 4 * S, stored_all, &w);
    CHECK(stored_all(&n, &w));
    CHECK(tp.l1 > 0 && tp.l2 > 0);
    int writes = n.node[b].memo_logged;
    fprintf(stderr, "  the epoch-2 update took %d memo writes\n", writes);
    CHECK(writes >= 2);
    uint8_t *disk = malloc(n.node[b].memo_bytes);
    int saw_old = 0, saw_new = 0;
    for (int cut = 0; cut <= writes; cut++) {
        for (int torn = 0; torn <= (cut < writes); torn++) {
            memcpy(disk, base, n.node[b].memo_bytes);
            for (int k = 0; k < cut; k++) {
                struct ll_write *wr = &n.node[b].memo_log[k];
                memcpy(disk + wr->offset, wr->data, wr->len);
            }
            if (torn) {  /* the next write tears: its first half reaches the disk */
                struct ll_write *wr = &n.node[b].memo_log[cut];
                memcpy(disk + wr->offset, wr->data, wr->len / 2);
            }
            memcpy(n.node[b].memo, disk, n.node[b].memo_bytes);
            CHECK(ll_restart(&n, b) == 0);
            CHECK_EQ_U(stats_of(&n, b).memo_runs_restored, 1);
            int old_ok = opens(&n, b, tp.e1, tp.l1);
            CHECK(ll_restart(&n, b) == 0);
            int new_ok = opens(&n, b, tp.e2, tp.l2);
            CHECK(old_ok + new_ok == 1);  /* the old or the new state, never garbage */
            saw_old |= old_ok, saw_new |= new_ok;
            if (cut == 0) CHECK(old_ok);
            if (cut == writes) CHECK(new_ok);
        }
    }
    CHECK(saw_old && saw_new);
    free(base), free(disk);
    ll_free(&n);
}

/* A sender a and a receiver b that wires it; d gets a LOST trigger's header: a sender packet
 * of a (its key id, from a real header), 1 B packet number, epoch field 1, a run b never saw. */
static void lost_net(ll_net *n, uint64_t seed, int *a, int *b, uint8_t *d) {
    ll_init(n, seed, 1 * MS);
    *a = ll_node_add(n, NULL), *b = ll_node_add(n, NULL);
    CHECK(ll_wire(n, *b, *a, "*") >= 0);
    CHECK(ll_link(n, *a, *b, "out", "in", 7) >= 0);
    CHECK(pure_link_send(n->node[*a].pl, 0, "x", 1, 0) == 0);
    uint8_t buf[PURE_LINK_DATAGRAM_MOST];
    pure_link_addr to;
    CHECK(pure_link_pull(n->node[*a].pl, buf, sizeof buf, &to, 0) > 0);
    d[0] = PURE_LINK_VERSION, d[1] = 0x01;
    memcpy(d + 2, buf + 2, 4);
    for (int i = 6; i < 14; i++) d[i] = (uint8_t)(0x40 + i);
}

/* LOST at its edges: 63 B draws nothing, 64 B a LOST of 53 B; one per 5 ms per (peer,
 * run, address), so another run or another address has an allowance of its own. */
static void lost_size_condition_and_rate_at_the_edge(void) {
    ll_net n;
    int a, b;
    uint8_t d[PURE_LINK_DATAGRAM_MOST] = {0};
    lost_net(&n, 19, &a, &b, d);
    uint8_t out[PURE_LINK_DATAGRAM_MOST];
    pure_link_addr to, from = n.node[a].addr;
    uint64_t t = 1 * S;
    CHECK(pure_link_receive(n.node[b].pl, &from, d, 63, t) == 0);
    CHECK_EQ_U(pure_link_pull(n.node[b].pl, out, sizeof out, &to, t), 0);      /* 63 B: silence */
    t += 200 * MS;
    CHECK(pure_link_receive(n.node[b].pl, &from, d, 64, t) == 0);
    const unsigned lost_bytes = 19 + PL_FRAME_LOST_BYTES + PURE_LINK_TAG_BYTES;   /* 53 B */
    int m = pure_link_pull(n.node[b].pl, out, sizeof out, &to, t);
    CHECK_EQ_U(m, lost_bytes);                                                 /* 64 B: a 53 B LOST */
    CHECK(out[1] & 0x80);                                                      /* a reply */
    t += PL_LOST_GAP_NS - 1;
    CHECK(pure_link_receive(n.node[b].pl, &from, d, 1000, t) == 0);
    CHECK_EQ_U(pure_link_pull(n.node[b].pl, out, sizeof out, &to, t), 0);      /* within 5 ms: rate */
    d[13] ^= 1;                                                                /* another run ... */
    CHECK(pure_link_receive(n.node[b].pl, &from, d, 1000, t) == 0);
    CHECK_EQ_U(pure_link_pull(n.node[b].pl, out, sizeof out, &to, t), lost_bytes); /* ... has its own */
    d[13] ^= 1;
    pure_link_addr elsewhere = from;
    elsewhere.bytes[0] ^= 1;                                                   /* another address */
    CHECK(pure_link_receive(n.node[b].pl, &elsewhere, d, 1000, t) == 0);
    CHECK_EQ_U(pure_link_pull(n.node[b].pl, out, sizeof out, &to, t), lost_bytes);
    t += 3 * PL_LOST_GAP_NS;  /* a window with no trigger between: this one is picked for sure */
    CHECK(pure_link_receive(n.node[b].pl, &from, d, 1000, t) == 0);
    CHECK_EQ_U(pure_link_pull(n.node[b].pl, out, sizeof out, &to, t), lost_bytes); /* later: again */
    /* Every one of them is counted as a drop: no state for the run. */
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n.node[b].pl, -1, &st) == 0);
    CHECK_EQ_U(st.dropped_no_run, 6);
    ll_free(&n);
}

/* One address: PL_LOST_ADDR_BURST LOST at once (each of another run), then one per
 * PL_LOST_ADDR_GAP_NS; the endpoint: no more than PL_LOST_BYTES_PER_S after its burst
 * in a second, whatever the addresses and runs. */
static void lost_address_and_endpoint_bounds(void) {
    ll_net n;
    int a, b;
    uint8_t d[PURE_LINK_DATAGRAM_MOST] = {0}, out[PURE_LINK_DATAGRAM_MOST];
    lost_net(&n, 23, &a, &b, d);
    pure_link_addr to, from = n.node[a].addr;
    uint64_t t = 1 * S;
    unsigned got = 0;
    for (unsigned k = 0; k < PL_LOST_ADDR_BURST + 1; k++) {
        d[13] = (uint8_t)k;
        CHECK(pure_link_receive(n.node[b].pl, &from, d, 64, t) == 0);
        while (pure_link_pull(n.node[b].pl, out, sizeof out, &to, t) > 0) got++;
    }
    CHECK_EQ_U(got, PL_LOST_ADDR_BURST);                                       /* the burst, no more */
    d[13] = 100;
    t += PL_LOST_ADDR_GAP_NS - 1;
    CHECK(pure_link_receive(n.node[b].pl, &from, d, 64, t) == 0);
    CHECK_EQ_U(pure_link_pull(n.node[b].pl, out, sizeof out, &to, t), 0);
    d[13] = 101;
    t += 1;
    CHECK(pure_link_receive(n.node[b].pl, &from, d, 64, t) == 0);
    CHECK(pure_link_pull(n.node[b].pl, out, sizeof out, &to, t) > 0);           /* one gap on: one */
    /* Junk of new runs from new addresses, 20,000 in one second: the endpoint's bound. */
    t += 10 * S;
    uint64_t bytes = 0;
    for (uint32_t k = 0; k < 20000; k++) {
        pure_link_addr x = from;
        x.bytes[1] = (uint8_t)(k >> 8), x.bytes[2] = (uint8_t)k;
        d[12] = (uint8_t)(k >> 8), d[13] = (uint8_t)k;
        uint64_t at = t + (uint64_t)k * (1 * S / 20000);
        CHECK(pure_link_receive(n.node[b].pl, &x, d, 64, at) == 0);
        int len;
        while ((len = pure_link_pull(n.node[b].pl, out, sizeof out, &to, at)) > 0) bytes += (uint64_t)len;
    }
    fprintf(stderr, "  endpoint: %llu LOST bytes in 1 s of 20,000 junk datagrams\n", (unsigned long long)bytes);
    CHECK(bytes <= PL_LOST_BYTES_PER_S + PL_LOST_BYTES_BURST);
    CHECK(bytes >= PL_LOST_BYTES_PER_S * 9 / 10);  /* and the budget is used */
    ll_free(&n);
}

/* A full LOST queue: a notice for an address with none waiting takes the place of one of the
 * address with the most waiting; one for an address like every other is dropped. */
static void lost_queue_full_displaces_the_flood(void) {
    ll_net n;
    int a, b;
    uint8_t d[PURE_LINK_DATAGRAM_MOST] = {0}, out[PURE_LINK_DATAGRAM_MOST];
    lost_net(&n, 29, &a, &b, d);
    pure_link_addr to, flood = n.node[a].addr, honest = n.node[a].addr;
    flood.bytes[0] ^= 0x10;
    honest.bytes[0] ^= 0x20;
    uint64_t t = 1 * S;
    unsigned k = 0;
    for (; k < PL_LOST_ADDR_BURST; k++) {  /* the flood's address: its burst */
        d[13] = (uint8_t)k;
        CHECK(pure_link_receive(n.node[b].pl, &flood, d, 64, t) == 0);
    }
    for (; k < PL_LOST_QUEUE_MOST; k++) {  /* one each from other addresses: full */
        pure_link_addr x = flood;
        x.bytes[3] = (uint8_t)k;
        d[13] = (uint8_t)k;
        CHECK(pure_link_receive(n.node[b].pl, &x, d, 64, t) == 0);
    }
    d[13] = 200;
    CHECK(pure_link_receive(n.node[b].pl, &honest, d, 64, t) == 0);
    unsigned got = 0, to_flood = 0, to_honest = 0;
    while (pure_link_pull(n.node[b].pl, out, sizeof out, &to, t) > 0) {
        got++;
        to_flood += memcmp(&to, &flood, sizeof to) == 0;
        to_honest += memcmp(&to, &honest, sizeof to) == 0;
    }
    CHECK_EQ_U(got, PL_LOST_QUEUE_MOST);
    CHECK_EQ_U(to_honest, 1);
    CHECK_EQ_U(to_flood, PL_LOST_ADDR_BURST - 1);
    ll_free(&n);
}

/* The sender keeps its previous epoch's keys (replies sealed in them may still be on the
 * way) for 10 s after it moved on, then wipes them with their secret, as the receiver does. */
static void sender_wipes_previous_keys_after_10s(void) {
    pure_link_config tx = {.epoch_packets = 40};
    ll_net n;
    ll_init(&n, 31, 5 * MS);
    int a = ll_node_add(&n, &tx), b = ll_node_add(&n, NULL);
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[a].pub, "*", 0) >= 0);
    int h = ll_link(&n, a, b, "out", "in", 7);
    static uint8_t rec[1300];
    for (int k = 0; k < 60; k++) CHECK(pure_link_send(n.node[a].pl, h, rec, sizeof rec, 0) == k);
    ll_run(&n, 1 * S, NULL, NULL);
    const pl_sender *s = &n.node[a].pl->senders[h];
    CHECK_EQ_U(s->epoch, 2);  /* 40 packets in epoch 1, then epoch 2: fewer than 40 more */
    const pl_epoch_keys *prev = &s->keys[s->key_cur ^ 1];
    uint64_t switched_ns = s->epoch_started_ns;
    CHECK(prev->valid && prev->epoch == 1);
    ll_run(&n, switched_ns + 10 * S - 1, NULL, NULL);
    CHECK(prev->valid && prev->epoch == 1);
    ll_run(&n, switched_ns + 10 * S + 1, NULL, NULL);
    CHECK(!prev->valid);
    static const uint8_t zero[32];
    CHECK_MEM(prev->secret, zero, 32);
    CHECK(PL_SENDER_KEYS(s)->valid && PL_SENDER_KEYS(s)->epoch == 2);
    CHECK_EQ_U(n.node[b].records_delivered, 60);
    ll_free(&n);
}

/* An EPOCH event points at its keys inside the endpoint (no secret copied into the host's
 * struct): both publics and the epoch's secret, which the next pure_link_event_next wipes;
 * every other kind points at none. */
static void epoch_event_keys_wiped_at_next_take(void) {
    ll_net n;
    ll_init(&n, 23, 5 * MS);
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, NULL);
    CHECK(ll_wire(&n, b, a, "*") >= 0);
    CHECK(ll_link(&n, a, b, "out", "in", 7) == 0);
    n.node[a].hold_events = 1;  /* the sender's events wait in its queue */
    queue(&n, a, 0, 20, 1000);
    ll_run(&n, 2 * S, NULL, NULL);
    static const uint8_t zero[32];
    const pl_sender *s = &n.node[a].pl->senders[0];
    CHECK(s->epoch >= 1);
    pure_link_event ev;
    const uint8_t *held = NULL;
    uint8_t last_secret[32] = {0};
    uint32_t epochs = 0, last_epoch = 0;
    while (pure_link_event_next(n.node[a].pl, &ev)) {
        if (held != NULL) CHECK_MEM(held, zero, 32);  /* the EPOCH taken before: wiped */
        held = NULL;
        if (ev.kind != PURE_LINK_EVENT_EPOCH) {
            CHECK(ev.secret == NULL && ev.sender_public == NULL && ev.receiver_public == NULL);
            continue;
        }
        CHECK(ev.secret != NULL && ev.sender_public != NULL && ev.receiver_public != NULL);
        CHECK_MEM(ev.sender_public, n.node[a].pub, 32);
        CHECK_MEM(ev.receiver_public, n.node[b].pub, 32);
        CHECK(memcmp(ev.secret, zero, 32) != 0);
        memcpy(last_secret, ev.secret, 32), last_epoch = ev.epoch;
        held = ev.secret;
        epochs++;
    }
    CHECK(held == NULL || memcmp(held, zero, 32) == 0);  /* the empty queue's call wiped it too */
    CHECK(epochs >= 2);  /* epoch 0, then 1 */
    CHECK_EQ_U(last_epoch, s->epoch);
    CHECK_MEM(last_secret, PL_SENDER_KEYS(s)->secret, 32);
    ll_free(&n);
}

TEST_MAIN(TEST_CASE(memo_restart_no_lost_no_x25519), TEST_CASE(no_memo_lost_recovery_no_nonce_reuse),
          TEST_CASE(no_memo_lost_flight_is_no_congestion),
          TEST_CASE(no_memo_host_mark_above_sender_base),
          TEST_CASE(replay_after_restart_delivers_nothing),
          TEST_CASE(replay_epoch0_probe_after_restart), TEST_CASE(replay_epoch0_probe_before_second_record),
          TEST_CASE(replay_probe_live_and_later_epochs), TEST_CASE(replay_stream_after_second_restart), TEST_CASE(address_change_mid_transfer),
          TEST_CASE(spoofed_address_never_validated), TEST_CASE(epoch_change_mid_transfer),
          TEST_CASE(memo_torn_writes_old_or_new), TEST_CASE(lost_size_condition_and_rate_at_the_edge),
          TEST_CASE(lost_address_and_endpoint_bounds), TEST_CASE(lost_queue_full_displaces_the_flood),
          TEST_CASE(sender_wipes_previous_keys_after_10s),
          TEST_CASE(epoch_event_keys_wiped_at_next_take))
