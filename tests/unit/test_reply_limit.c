/* test_reply_limit.c: the AEAD limit on reply keys (spec/crypto.md §10, protocol.md §3).
 * A receiver seals at most 2^23 replies under one reply key and keeps the last 2^16 of them
 * for the ACCEPT of the next epoch (the one reply that must go under the old key); a sender
 * offers a new epoch once it has opened epoch_packets replies under the key, at most 2^22.
 * The host here reports each record stored on its own and sends what that draws at once,
 * and its receiver answers every store at once, as a receiver may (how often it answers is
 * its choice, spec/protocol.md §5; this core's STORED rides on its next ACK, which the test
 * calls for after each store through the run's state), so every small record draws a
 * reply: dozens per packet, and the reply key is the first to wear out.  A crypto table
 * around the null cipher counts the seals under every key, from outside the core.  The
 * receiver's count starts near the limit through its state (a test-only way, as
 * test_run_edge.c does for packet numbers: 2^23 replies would take minutes); every reply
 * after that, the whole reserve included, goes the real path. */
#include "harness.h"
#include "link_loop.h"
#include "wire.h"
#include "internal.h"

#define MS 1000000ull
#define S 1000000000ull
#define LIMIT PL_EPOCH_PACKETS_LIMIT
#define RESERVE PL_EPOCH_PACKETS_RESERVE
#define RECORDS 4000
#define RECORD_BYTES 32  /* about 40 records, so about 40 replies, per packet */

/* ---- Seals per key: a crypto table that wraps the null cipher ---- */
#define KEYS_MOST 4096u
#define COUNT_KEY_AT 512u  /* where the wrapper keeps the key inside the AEAD context */
typedef struct key_count { uint8_t key[16]; uint64_t seals; } key_count;
static key_count keys_seen[KEYS_MOST];
static unsigned keys_count;
static uint64_t last_seals;  /* the count of the key the latest seal used, that seal included */

static key_count *key_find(const uint8_t key[16]) {
    for (unsigned i = 0; i < keys_count; i++)
        if (memcmp(keys_seen[i].key, key, 16) == 0) return &keys_seen[i];
    if (keys_count == KEYS_MOST) { fprintf(stderr, "more keys than the table holds\n"); abort(); }
    key_count *c = &keys_seen[keys_count++];
    memcpy(c->key, key, 16);
    c->seals = 0;
    return c;
}

static void count_init(void *ctx, const uint8_t key[16]) {
    pure_link_crypto_null()->aead_init(ctx, key);
    memcpy((uint8_t *)ctx + COUNT_KEY_AT, key, 16);
}

static void count_seal(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                       const uint8_t *in, size_t len, uint8_t *out) {
    key_count *c = key_find((const uint8_t *)ctx + COUNT_KEY_AT);
    last_seals = ++c->seals;
    pure_link_crypto_null()->aead_seal(ctx, nonce, aad, aad_len, in, len, out);
}

static pure_link_crypto count_table;
static const pure_link_crypto *count_crypto(void) {
    count_table = *pure_link_crypto_null();
    count_table.name = "count(null)";
    count_table.aead_init = count_init;
    count_table.aead_seal = count_seal;
    keys_count = 0;
    return &count_table;
}

static uint64_t seals_most(void) {
    uint64_t most = 0;
    for (unsigned i = 0; i < keys_count; i++)
        if (keys_seen[i].seals > most) most = keys_seen[i].seals;
    return most;
}

/* ---- What the receiver's replies carry ---- */
typedef struct watch {
    int receiver;
    int drop_accepts;            /* 1: replies carrying ACCEPT are dropped, the newest kept */
    uint8_t held[PURE_LINK_DATAGRAM_MOST];
    size_t held_len;
    uint64_t accepts_dropped;
    uint64_t reserve_replies;    /* replies sealed in a key's last RESERVE */
    uint64_t reserve_no_accept;  /* ... that carried no ACCEPT */
} watch;

static int watch_tap(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    (void)n, (void)to;
    watch *w = arg;
    if (from != w->receiver) return 1;
    pl_header h;
    int hl = pl_header_decode(&h, data, len);
    CHECK(hl > 0 && h.reply);
    pl_frame frames[PL_FRAMES_MOST];
    int count = pl_payload_decode(frames, PL_FRAMES_MOST, data + hl, len - (size_t)hl - PURE_LINK_TAG_BYTES, 1);
    CHECK(count > 0);
    int accept = 0;
    for (int i = 0; i < count; i++) accept |= frames[i].type == PL_FRAME_ACCEPT;
    if (last_seals > LIMIT - RESERVE) {  /* sealed with RESERVE or fewer seals left */
        w->reserve_replies++;
        w->reserve_no_accept += !accept;
    }
    if (accept && w->drop_accepts) {
        memcpy(w->held, data, len);
        w->held_len = len;
        w->accepts_dropped++;
        return 0;
    }
    return 1;
}

/* ---- A sender and a receiver whose host stores record by record ---- */

/* The receiver answers this store now: the ACK its policy would hold is due. */
static void answer_each_store(ll_net *n, int node, int stream) { n->node[node].pl->runs[stream].ack_pending = 1; }

static void pair_setup(ll_net *n, uint64_t seed, pure_link_config *tx, watch *w) {
    const pure_link_crypto *c = count_crypto();
    ll_init(n, seed, 5 * MS);
    tx->crypto = c;
    pure_link_config rx = {.crypto = c};
    int a = ll_node_add(n, tx), b = ll_node_add(n, &rx);
    CHECK(a == 0 && b == 1);
    n->node[b].pull_each_stored = 1;
    n->node[b].before_pull = answer_each_store;
    CHECK(ll_wire(n, b, a, "*") >= 0);
    CHECK(ll_link(n, a, b, "out", "in", 7) == 0);
    static uint8_t rec[RECORD_BYTES];
    for (int k = 0; k < RECORDS; k++) {
        memset(rec, k, sizeof rec);
        CHECK(pure_link_send(n->node[a].pl, 0, rec, sizeof rec, 0) == k);
    }
    memset(w, 0, sizeof *w);
    w->receiver = b;
    n->tap = watch_tap, n->tap_arg = w;
}

static int delivered_some(ll_net *n, void *arg) { (void)arg; return n->node[1].records_delivered >= RECORDS / 8; }
static int stored_all(ll_net *n, void *arg) { (void)arg; return n->node[0].stored_seen[0] >= RECORDS; }

static pl_run *the_run(ll_net *n) {
    pl_run *r = &n->node[1].pl->runs[0];
    CHECK(r->in_use);
    return r;
}

/* The receiver's current reply key goes on from `replies` seals, as if they had gone; the
 * counting table with it.  Returns the key's entry in the table. */
static key_count *replies_start_at(ll_net *n, uint64_t replies) {
    pl_run *r = the_run(n);
    CHECK(r->epoch >= 1);
    pl_epoch_keys *k = &r->keys[r->epoch % PL_EPOCH_KEYS];
    key_count *c = key_find(k->reply_key);
    CHECK(c->seals > 0);
    CHECK_EQ_U(c->seals, k->replies);  /* the run counted every seal the table saw */
    k->replies = c->seals = replies;
    return c;
}

/* A transfer an eighth done, its reply key 300 replies short of the reserve. */
static key_count *near_the_reserve(ll_net *n, uint64_t seed, watch *w, uint32_t *epoch) {
    pure_link_config tx = {0};
    pair_setup(n, seed, &tx, w);
    ll_run(n, 10 * S, delivered_some, NULL);
    CHECK(delivered_some(n, NULL));
    *epoch = the_run(n)->epoch;
    return replies_start_at(n, LIMIT - RESERVE - 300);
}

static int key_at_limit(ll_net *n, void *arg) { (void)n; return ((key_count *)arg)->seals >= LIMIT; }

static void nothing_lost(ll_net *n) {
    CHECK(stored_all(n, NULL));
    CHECK_EQ_U(n->node[1].records_delivered, RECORDS);
    CHECK_EQ_U(n->node[1].duplicates, 0);
    CHECK_EQ_U(n->node[1].out_of_order, 0);
}

static uint64_t held_key_limit(ll_net *n) {
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n->node[1].pl, -1, &st) == 0);
    return st.replies_held_key_limit;
}

/* The reply key crosses 2^23 - 2^16 before the sender has any reason to offer (it opened
 * few of those replies: as if most were lost).  From there the receiver answers nothing
 * but an OFFER, so the run waits for the sender's clock (120 s); its OFFER draws the ACCEPT,
 * with the ACK and STORED that were due in the same reply, and the run goes on in the next
 * epoch under a new reply key. */
static void reserve_keeps_room_for_accept(void) {
    ll_net n;
    watch w;
    uint32_t epoch;
    key_count *c = near_the_reserve(&n, 41, &w, &epoch);
    ll_run(&n, 400 * S, stored_all, NULL);
    nothing_lost(&n);
    fprintf(stderr, "  key at %llu seals, %llu replies in the reserve, held %llu times, epoch %u -> %u\n",
            (unsigned long long)c->seals, (unsigned long long)w.reserve_replies,
            (unsigned long long)held_key_limit(&n), epoch, the_run(&n)->epoch);
    CHECK(c->seals > LIMIT - RESERVE);      /* the reserve was entered ... */
    CHECK(c->seals < LIMIT);                /* ... and one ACCEPT was enough */
    CHECK(w.reserve_replies >= 1);
    CHECK_EQ_U(w.reserve_no_accept, 0);
    CHECK(held_key_limit(&n) > 0);
    CHECK(seals_most() <= LIMIT);
    CHECK(the_run(&n)->epoch > epoch);
    CHECK(n.node[0].pl->senders[0].epoch > epoch);
    CHECK(n.now_ns >= 120 * S);             /* it was the sender's clock that moved it */
    ll_free(&n);
}

/* Every ACCEPT is lost until the receiver has sealed its last reply under the key: the
 * whole reserve goes in ACCEPTs (one per OFFER the sender repeats), then nothing more is
 * sealed under the key, however long the sender keeps offering.  One late ACCEPT (the
 * newest, held on the way) then moves the epoch, and the transfer completes. */
static void limit_holds_then_late_accept_moves(void) {
    ll_net n;
    watch w;
    uint32_t epoch;
    key_count *c = near_the_reserve(&n, 42, &w, &epoch);
    w.drop_accepts = 1;
    ll_run(&n, UINT64_MAX / 2, key_at_limit, c);
    CHECK_EQ_U(c->seals, LIMIT);
    CHECK(w.accepts_dropped >= RESERVE);     /* the reserve went in ACCEPTs ... */
    CHECK_EQ_U(w.reserve_no_accept, 0);      /* ... and in nothing else */
    CHECK_EQ_U(w.reserve_replies, RESERVE);
    uint64_t held = held_key_limit(&n), dropped = w.accepts_dropped;
    ll_run(&n, n.now_ns + 600 * S, NULL, NULL);
    fprintf(stderr, "  at the limit after %llu s: %llu ACCEPTs dropped, held %llu times (%llu more in 600 s)\n",
            (unsigned long long)(n.now_ns / S), (unsigned long long)w.accepts_dropped,
            (unsigned long long)held_key_limit(&n), (unsigned long long)(held_key_limit(&n) - held));
    CHECK_EQ_U(c->seals, LIMIT);             /* the sender went on offering; nothing went */
    CHECK_EQ_U(w.accepts_dropped, dropped);
    CHECK(held_key_limit(&n) > held);
    CHECK_EQ_U(the_run(&n)->epoch, epoch);
    CHECK(n.node[1].records_delivered < RECORDS);
    /* The newest ACCEPT arrives late. */
    w.drop_accepts = 0;
    CHECK(w.held_len > 0);
    ll_pkt *p = &n.q[n.qn++];
    p->at_ns = n.now_ns, p->seq = n.seq++, p->to = 0, p->from = n.node[1].addr, p->len = w.held_len;
    memcpy(p->data, w.held, w.held_len);
    ll_run(&n, n.now_ns + 60 * S, stored_all, NULL);
    nothing_lost(&n);
    CHECK_EQ_U(c->seals, LIMIT);
    CHECK(seals_most() <= LIMIT);
    CHECK(the_run(&n)->epoch > epoch);
    ll_free(&n);
}

/* ---- The sender's count ---- */

/* The sender offers when it has opened epoch_packets replies under the key, though it
 * sealed far fewer packets: every new epoch here is offered for its replies. */
typedef struct offers { uint32_t epoch_seen; uint64_t by_replies, by_packets, other; } offers;
static int see_offer(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    (void)to, (void)data, (void)len;
    offers *o = arg;
    const pl_sender *s = &n->node[0].pl->senders[0];
    if (from != 0 || s->offer_epoch <= o->epoch_seen || s->epoch == 0) return 1;
    o->epoch_seen = s->offer_epoch;
    const pure_link_config *c = &n->node[0].pl->config;
    if (PL_SENDER_KEYS(s)->replies >= c->epoch_packets) o->by_replies++;
    else if (s->epoch_packets >= c->epoch_packets) o->by_packets++;
    else o->other++;
    return 1;
}

static void sender_offers_for_replies(void) {
    ll_net n;
    watch w;
    pure_link_config tx = {.epoch_packets = 300};
    pair_setup(&n, 43, &tx, &w);
    offers o = {0};
    n.tap = see_offer, n.tap_arg = &o;
    ll_run(&n, 60 * S, stored_all, NULL);
    nothing_lost(&n);
    const pl_sender *s = &n.node[0].pl->senders[0];
    fprintf(stderr, "  %llu packets, %llu replies opened; offers: %llu for replies, %llu for packets, %llu other\n",
            (unsigned long long)s->stats.packets_sent, (unsigned long long)s->stats.packets_received,
            (unsigned long long)o.by_replies, (unsigned long long)o.by_packets, (unsigned long long)o.other);
    CHECK(s->stats.packets_received > 4 * s->stats.packets_sent);  /* several replies per packet */
    CHECK(o.by_replies >= 2);
    CHECK_EQ_U(o.other, 0);
    CHECK(s->stats.packets_sent < 300 * (o.by_replies + o.by_packets + 1));  /* fewer than 300 a key */
    CHECK_EQ_U(held_key_limit(&n), 0);
    ll_free(&n);
}

/* With epoch_packets above 2^22 (its most is 2^23 - 2^16), replies still bring an offer at
 * 2^22: half the limit, so that a receiver reaches its reserve first only when more than
 * about half of the replies are lost.  The sender's count starts at 2^22 - 2. */
static int offered(ll_net *n, void *arg) { (void)arg; return n->node[0].pl->senders[0].offer_epoch != 0; }

static void sender_offers_at_2_22_replies(void) {
    ll_net n;
    watch w;
    pure_link_config tx = {.epoch_packets = LIMIT - RESERVE};
    pair_setup(&n, 44, &tx, &w);
    ll_run(&n, 10 * S, delivered_some, NULL);
    CHECK(delivered_some(&n, NULL));
    pl_sender *s = &n.node[0].pl->senders[0];
    CHECK(s->epoch == 1 && s->offer_epoch == 0);
    uint64_t opened = s->stats.packets_received;
    PL_SENDER_KEYS(s)->replies = PL_EPOCH_REPLIES_OFFER - 2;
    ll_run(&n, 10 * S, offered, NULL);
    CHECK(offered(&n, NULL));
    CHECK_EQ_U(PL_SENDER_KEYS(s)->replies, PL_EPOCH_REPLIES_OFFER);  /* at that reply, not before */
    CHECK(s->stats.packets_received >= opened + 2);
    CHECK(s->epoch_packets < tx.epoch_packets);
    ll_run(&n, 60 * S, stored_all, NULL);
    nothing_lost(&n);
    CHECK(s->epoch >= 2);
    ll_free(&n);
}

TEST_MAIN(TEST_CASE(reserve_keeps_room_for_accept), TEST_CASE(limit_holds_then_late_accept_moves),
          TEST_CASE(sender_offers_for_replies), TEST_CASE(sender_offers_at_2_22_replies))
