/* test_properties.c: the core's security properties, each asserted as the property reads
 * (spec/protocol.md, spec/crypto.md, spec/memo.md), over the in-memory network of
 * link_loop.h in virtual time.  Both ends use the null cipher, whose packets are plaintext
 * with a checksum tag, so a tap reads every frame on the wire; a wrapper around its seal
 * sees every (key, nonce) used.  Each case names the property it holds, and
 * tests/mutants/list names the one-line change of the code that each must catch. */
#include "harness.h"
#include "link_loop.h"
#include "internal.h"
#include "packet_read.h"

#define MS 1000000ull
#define S 1000000000ull

/* ---- The null cipher, watched: every seal's key and nonce ---- */

#define SEALS_MOST 200000
typedef struct seal_seen {
    uint8_t key[PURE_LINK_AEAD_KEY_BYTES], nonce[12];
    uint64_t text_hash;
} seal_seen;
static seal_seen *seals;
static size_t seals_n;
static pure_link_crypto watched;

static uint64_t hash_bytes(const uint8_t *p, size_t n, uint64_t h) {
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* The null cipher's context starts with a 4-byte magic, then its key (aead_null.c). */
static void watched_seal(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                         const uint8_t *in, size_t len, uint8_t *out) {
    if (seals_n < SEALS_MOST) {
        seal_seen *s = &seals[seals_n++];
        memcpy(s->key, (const uint8_t *)ctx + 4, sizeof s->key);
        memcpy(s->nonce, nonce, 12);
        s->text_hash = hash_bytes(in, len, hash_bytes(aad, aad_len, 0xcbf29ce484222325ull));
    }
    pure_link_crypto_null()->aead_seal(ctx, nonce, aad, aad_len, in, len, out);
}

static const pure_link_crypto *crypto_watched(void) {
    watched = *pure_link_crypto_null();
    watched.aead_seal = watched_seal;
    if (seals == NULL) seals = calloc(SEALS_MOST, sizeof *seals);
    seals_n = 0;
    return &watched;
}

static int seal_cmp(const void *a, const void *b) {
    const seal_seen *x = a, *y = b;
    int c = memcmp(x->key, y->key, sizeof x->key);
    return c ? c : memcmp(x->nonce, y->nonce, 12);
}

/* Returns how many seals used a (key, nonce) an earlier seal of other bytes used. */
static size_t seals_reused(void) {
    qsort(seals, seals_n, sizeof *seals, seal_cmp);
    size_t reused = 0;
    for (size_t i = 1; i < seals_n; i++)
        if (seal_cmp(&seals[i - 1], &seals[i]) == 0 && seals[i - 1].text_hash != seals[i].text_hash) reused++;
    return reused;
}

/* ---- A pair: node 0 sends, node 1 receives; null cipher both ---- */

static pure_link_config null_config(void) {
    pure_link_config c;
    memset(&c, 0, sizeof c);
    c.crypto = crypto_watched();
    return c;
}

static int pair(ll_net *n, const pure_link_config *send_cfg, const pure_link_config *recv_cfg) {
    ll_init(n, 7, 10 * MS);
    int a = ll_node_add(n, send_cfg), b = ll_node_add(n, recv_cfg);
    CHECK(a == 0 && b == 1);
    CHECK(ll_wire(n, b, a, "out") >= 0);
    int s = ll_link(n, a, b, "out", "in", 7);
    CHECK(s == 0);
    return s;
}

static void send_some(ll_net *n, int count, size_t size) {
    static uint8_t rec[4096];
    for (int i = 0; i < count; i++) {
        memset(rec, (uint8_t)i, size);
        CHECK(pure_link_send(n->node[0].pl, 0, rec, size, n->now_ns) >= 0);
    }
}

static int stored_at_least(ll_net *n, void *arg) { return n->node[0].stored_seen[0] >= *(int64_t *)arg; }

/* Sends `count` records, one every `gap_ns`, each followed by the network running on. */
static void trickle(ll_net *n, int count, size_t size, uint64_t gap_ns) {
    for (int i = 0; i < count; i++) {
        send_some(n, 1, size);
        ll_run(n, n->now_ns + gap_ns, NULL, NULL);
    }
}

/* A datagram's header and frames (the null cipher leaves them readable); 0 if not one. */
/* ---- 1. Replays after the window moved: dropped and counted, never opened or answered ---- */

typedef struct capture {
    uint8_t data[64][PURE_LINK_DATAGRAM_MOST];
    size_t len[64];
    int n;
} capture;

static int capture_epoch1(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    capture *c = arg;
    /* sender packets of epoch >= 1 (header byte 1: reply bit clear, epoch field low 4 bits) */
    if (from == 0 && (data[1] & 0x80) == 0 && (data[1] & 0x0f) != 0 && c->n < 64 && (n->seq % 40) == 0) {
        memcpy(c->data[c->n], data, len);
        c->len[c->n++] = len;
    }
    return 1;
}

static void replays_after_the_window_moved_are_dropped_and_counted(void) {
    ll_net n;
    pure_link_config cs = null_config(), cr = null_config();
    pair(&n, &cs, &cr);
    static capture c;
    c.n = 0;
    n.tap = capture_epoch1, n.tap_arg = &c;
    send_some(&n, 4000, 1000);  /* some 4,000 packets: the 2,048-packet window moves on */
    int64_t want = 4000;
    ll_run(&n, 30 * S, stored_at_least, &want);
    CHECK_EQ_U(n.node[0].stored_seen[0], 4000);
    CHECK(c.n >= 40);
    n.tap = NULL;
    pure_link_stats before = {.version = PURE_LINK_STATS_VERSION}, after = before;
    pure_link_stats_get(n.node[1].pl, -1, &before);
    uint64_t out = n.node[1].packets_out, delivered = n.node[1].records_delivered;
    for (int i = 0; i < c.n; i++) {
        pure_link_receive(n.node[1].pl, &n.node[0].addr, c.data[i], c.len[i], n.now_ns);
        ll_service(&n, 1);
    }
    pure_link_stats_get(n.node[1].pl, -1, &after);
    uint64_t replay = after.dropped_replay - before.dropped_replay, auth = after.dropped_auth - before.dropped_auth;
    fprintf(stderr, "  %d replays: dropped_replay +%llu, dropped_auth +%llu, opened +%llu\n", c.n,
            (unsigned long long)replay, (unsigned long long)auth,
            (unsigned long long)(after.packets_opened - before.packets_opened));
    /* A packet number sent short decodes near the largest now: the AEAD refuses it under that
     * number.  The others are known for replays. */
    CHECK_EQ_U(replay + auth, (uint64_t)c.n);
    CHECK(replay >= (uint64_t)c.n / 2);
    CHECK_EQ_U(after.packets_opened, before.packets_opened);
    CHECK_EQ_U(n.node[1].packets_out, out);  /* no ACK, nothing */
    CHECK_EQ_U(n.node[1].records_delivered, delivered);
    ll_free(&n);
}

/* ---- 2. The memo never holds a superseded secret once an update is complete ---- */

#define SECRETS_MOST 256
typedef struct secrets { uint8_t s[SECRETS_MOST][32]; int n; } secrets;

static void note_secret(secrets *k, const uint8_t *s) {
    static const uint8_t zero[32];
    if (memcmp(s, zero, 32) == 0) return;
    for (int i = 0; i < k->n; i++)
        if (memcmp(k->s[i], s, 32) == 0) return;
    if (k->n < SECRETS_MOST) memcpy(k->s[k->n++], s, 32);
}

/* Every secret the memo's slot copies hold now. */
static void memo_secrets(const ll_node *d, secrets *k) {
    for (size_t at = PL_MEMO_HEADER_BYTES; at + PL_MEMO_SLOT_BYTES <= d->memo_bytes; at += PL_MEMO_SLOT_BYTES)
        note_secret(k, d->memo + at + PL_MEMO_SECRET);
}

static int memo_update_complete(const pure_link *pl) {
    for (size_t i = 0; i < PL_MEMO_WRITES_MOST; i++)
        if (pl->memo_writes[i].busy) return 0;
    return 1;
}

static int memo_holds(const ll_node *d, const uint8_t *s) {
    for (size_t at = 0; at + 32 <= d->memo_bytes; at++)
        if (memcmp(d->memo + at, s, 32) == 0) return 1;
    return 0;
}

static void memo_never_holds_a_superseded_secret(void) {
    ll_net n;
    pure_link_config cs = null_config(), cr = null_config();
    cs.epoch_ns = 200 * MS;  /* a new epoch every 200 ms */
    cr.memo_enabled = 1;
    pair(&n, &cs, &cr);
    secrets ever = {.n = 0};
    int complete_steps = 0;
    for (int step = 0; step < 150; step++) {  /* 1.5 s: some seven epochs */
        trickle(&n, 1, 200, 10 * MS);
        memo_secrets(&n.node[1], &ever);
        /* Checked at every step with no write in progress, not only at the end: a later
         * write of the same epoch (the epoch proven at its first packet) would hide an
         * update that left its other copy behind. */
        if (!memo_update_complete(n.node[1].pl) || !n.node[1].pl->runs[0].in_use) continue;
        const pl_run *r = &n.node[1].pl->runs[0];
        secrets now = {.n = 0};
        memo_secrets(&n.node[1], &now);
        for (int i = 0; i < now.n; i++) CHECK(memcmp(now.s[i], r->keys[r->epoch_newest % PL_EPOCH_KEYS].secret, 32) == 0);
        complete_steps++;
    }
    CHECK(complete_steps >= 100);
    /* Every update is complete here (the memo disk takes each write at once); the only
     * secret it may hold is the newest of the run. */
    const pure_link *pl = n.node[1].pl;
    CHECK(pl->runs_used >= 1 && pl->runs[0].in_use);
    const pl_run *r = &pl->runs[0];
    const uint8_t *newest = r->keys[r->epoch_newest % PL_EPOCH_KEYS].secret;
    fprintf(stderr, "  epoch %u, %d secrets seen in the memo\n", r->epoch_newest, ever.n);
    CHECK(r->epoch_newest >= 5 && ever.n >= 5);
    CHECK(memo_holds(&n.node[1], newest));
    for (int i = 0; i < ever.n; i++)
        if (memcmp(ever.s[i], newest, 32) != 0) CHECK(!memo_holds(&n.node[1], ever.s[i]));
    ll_free(&n);
}

/* ---- 3. A LOST whose echoed tag is not one of ours changes nothing, in every epoch ---- */

typedef struct lost_tap { int corrupt; uint64_t run, epoch0_after; } lost_tap;

/* Once `corrupt` is set, every sender packet reaches the receiver with its tag's first
 * bytes changed: what the receiver cannot open it answers with a LOST that echoes them. */
static int corrupt_tags(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    lost_tap *t = arg;
    if (from != 0 || !t->corrupt) return 1;
    pl_header h;
    if (pl_packet_decode(&h, data, len) > 0 && h.run == t->run && h.epoch_field == 0) t->epoch0_after++;
    data[len - PURE_LINK_TAG_BYTES] ^= 0x5a;
    return 1;
}

static void lost_with_a_wrong_tag_is_ignored_in_every_epoch(void) {
    for (int epochs = 1; epochs <= 3; epochs++) {
        ll_net n;
        pure_link_config cs = null_config(), cr = null_config();
        cs.epoch_ns = 300 * MS;
        pair(&n, &cs, &cr);
        lost_tap t = {0, 0, 0};
        n.tap = corrupt_tags, n.tap_arg = &t;
        trickle(&n, 30 * epochs, 200, 10 * MS);  /* 300 ms an epoch */
        const pl_sender *s = &n.node[0].pl->senders[0];
        uint32_t epoch = s->epoch;
        CHECK(epoch >= (uint32_t)epochs);
        t.corrupt = 1;  /* from now on; the genuine packets in flight land first */
        t.run = s->run;
        ll_run(&n, n.now_ns + 3 * n.delay_ns, NULL, NULL);
        ll_restart(&n, 1);  /* no memo: the receiver knows no epoch of the run, and says LOST */
        trickle(&n, 40, 200, 10 * MS);
        pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
        pure_link_stats_get(n.node[0].pl, 0, &st);
        fprintf(stderr, "  epoch %u: %llu LOST heard, %llu epoch-0 packets after\n", epoch,
                (unsigned long long)st.lost_notices_received, (unsigned long long)t.epoch0_after);
        CHECK(st.lost_notices_received >= 1);
        CHECK_EQ_U(t.epoch0_after, 0);  /* the run did not start over from epoch 0 */
        ll_free(&n);
    }
}

/* ---- 4. A receiver holds no key of an epoch it left, once the next took over ---- */

static int zero(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i]) return 0;
    return 1;
}

static void receiver_holds_no_key_of_an_epoch_it_left(void) {
    ll_net n;
    pure_link_config cs = null_config(), cr = null_config();
    cs.epoch_ns = PL_OLD_EPOCH_NS + 2 * S;  /* longer than old keys live, as by default */
    pair(&n, &cs, &cr);
    trickle(&n, 300, 200, 150 * MS);  /* 45 s: epochs 1 to 4 */
    const pl_run *r = &n.node[1].pl->runs[0];
    uint32_t epoch = r->epoch;
    CHECK(epoch >= 3);
    for (uint32_t i = 0; i < PL_EPOCH_KEYS; i++) {
        const pl_epoch_keys *k = &r->keys[i];
        CHECK(!k->valid || k->epoch + 1 >= epoch);  /* at most the previous epoch's */
    }
    /* Quiet past the old epochs' lifetime: only the current epoch's keys remain (and the
     * next one's, if offered), and the others' secrets are gone from memory. */
    ll_run(&n, n.now_ns + PL_OLD_EPOCH_NS + S, NULL, NULL);
    CHECK_EQ_U(r->epoch, epoch);
    for (uint32_t i = 0; i < PL_EPOCH_KEYS; i++) {
        const pl_epoch_keys *k = &r->keys[i];
        if (k->valid && k->epoch >= epoch) continue;  /* the current epoch's, or the next one offered */
        CHECK(!k->valid);
        CHECK(zero(k->secret, 32) && zero(k->data_key, sizeof k->data_key) && zero(k->reply_key, sizeof k->reply_key));
    }
    ll_free(&n);
}

/* ---- 5. The ACK delay on the wire decodes to the time the receiver held the ACK ---- */

typedef struct ack_tap {
    uint64_t largest_pn;        /* of sender packets, PL_PN_NONE before one */
    uint64_t arrive_ns[8192];   /* by packet number: when it reaches the receiver */
    uint64_t acks, delayed, bad;
} ack_tap;

static int watch_ack_delay(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    ack_tap *t = arg;
    pl_header h;
    pl_frame f[PL_FRAMES_MOST];
    int count;
    if (!read_packet(data, len, &h, f, &count)) return 1;
    if (from == 0) {
        uint64_t pn = pl_pn_decode(t->largest_pn, h.pn_truncated, h.pn_len);
        if (t->largest_pn == PL_PN_NONE || pn > t->largest_pn) t->largest_pn = pn;
        if (pn < 8192) t->arrive_ns[pn] = n->now_ns + n->delay_ns;  /* no jitter, no loss */
        return 1;
    }
    for (int i = 0; i < count; i++) {
        if (f[i].type != PL_FRAME_ACK || f[i].ack.ranges[0].largest >= 8192) continue;
        uint64_t held_ns = n->now_ns - t->arrive_ns[f[i].ack.ranges[0].largest];
        t->acks++;
        t->delayed += held_ns >= MS;
        if (f[i].ack.ack_delay_us != held_ns / 1000) {
            if (t->bad++ < 3)
                fprintf(stderr, "  ACK of %llu held %llu ns, says %llu us\n", (unsigned long long)f[i].ack.ranges[0].largest,
                        (unsigned long long)held_ns, (unsigned long long)f[i].ack.ack_delay_us);
        }
    }
    return 1;
}

static void ack_delay_on_the_wire_is_the_delay_held(void) {
    ll_net n;
    pure_link_config cs = null_config(), cr = null_config();
    cr.ack_delay_us = 7000;
    cs.copies = 2;  /* off: a lone record's copy would call for its ACK before the timer */
    pair(&n, &cs, &cr);
    static ack_tap t;
    memset(&t, 0, sizeof t);
    t.largest_pn = PL_PN_NONE;
    n.tap = watch_ack_delay, n.tap_arg = &t;
    send_some(&n, 400, 4000);       /* past the run's first 1,024 packets, whose stores are */
    ll_run(&n, n.now_ns + 5 * S, NULL, NULL);  /* answered at once */
    trickle(&n, 50, 100, 50 * MS);  /* lone packets: each ACK waits for its timer */
    send_some(&n, 500, 1000);       /* and a burst: ACKs at once */
    ll_run(&n, n.now_ns + 5 * S, NULL, NULL);
    fprintf(stderr, "  %llu ACKs, %llu delayed by 1 ms or more, %llu wrong\n", (unsigned long long)t.acks,
            (unsigned long long)t.delayed, (unsigned long long)t.bad);
    CHECK(t.acks >= 50 && t.delayed >= 20);
    CHECK_EQ_U(t.bad, 0);
    ll_free(&n);
}

/* ---- 6. No (key, nonce) seals two different plaintexts: LOSTs, replies, data ---- */

static void every_lost_under_a_fresh_key_and_nonce(void) {
    ll_net n;
    pure_link_config cs = null_config(), cr = null_config();
    pair(&n, &cs, &cr);
    /* A receiver restarted without a memo answers the run's next packet with a LOST; the
     * sender starts the run over from epoch 0 and goes on.  Six times over one run. */
    uint64_t losts = 0;
    for (int restart = 0; restart < 6; restart++) {
        trickle(&n, 30, 200, 10 * MS);
        ll_restart(&n, 1);
        trickle(&n, 30, 200, 10 * MS);
        pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
        pure_link_stats_get(n.node[1].pl, -1, &st);
        losts += st.lost_notices_sent;
    }
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(n.node[0].pl, 0, &st);
    fprintf(stderr, "  %llu LOST sent, %llu heard, %zu seals in all\n", (unsigned long long)losts,
            (unsigned long long)st.lost_notices_received, seals_n);
    CHECK(losts >= 6);
    CHECK_EQ_U(seals_reused(), 0);
    ll_free(&n);
}

/* ---- 7. Before an address is validated, at every instant, replies <= 3x received ---- */

typedef struct amp_tap {
    pure_link_addr moved;       /* the sender's new address */
    int let_through;            /* sender packets from it still to deliver */
    uint64_t in_bytes, out_bytes, over, replies;
} amp_tap;

static int watch_amplification(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    amp_tap *t = arg;
    if (t->moved.len == 0) return 1;
    if (from == 0) {
        if (t->let_through == 0) return 0;  /* the new address never answers a CHALLENGE */
        t->let_through--;
        t->in_bytes += len;                 /* delivered (no loss): received within the delay */
        return 1;
    }
    t->replies++;
    t->out_bytes += len;
    if (t->out_bytes > PURE_LINK_AMPLIFICATION * t->in_bytes) t->over++;
    return 1;
}

static void amplification_limit_holds_at_every_instant(void) {
    ll_net n;
    pure_link_config cs = null_config(), cr = null_config();
    pair(&n, &cs, &cr);
    ll_node *rx = &n.node[1];
    rx->hold_stored = 1;  /* the host stores late: each mark it reports later draws a STORED */
    send_some(&n, 200, 100);
    ll_run(&n, n.now_ns + 2 * S, NULL, NULL);
    CHECK(rx->records_delivered >= 200);
    static amp_tap t;
    memset(&t, 0, sizeof t);
    n.tap = watch_amplification, n.tap_arg = &t;
    /* The sender moves; one packet of it reaches the receiver from the new address. */
    n.node[0].addr.bytes[5] = 81;
    t.moved = n.node[0].addr;
    t.let_through = 1;
    send_some(&n, 1, 100);
    ll_run(&n, n.now_ns + 50 * MS, NULL, NULL);
    CHECK(t.in_bytes > 0);
    /* Now the host reports its records stored one at a time, each a little more than the
     * ack delay after the last (a STORED with no ACK due waits that long, §5): every mark
     * could go out, but only as much as 3x what came from the new address may. */
    ll_stream *st = &rx->streams[0];
    for (int64_t k = st->stored + 1; k <= st->next; k++) {
        pure_link_stored(rx->pl, st->handle, k, n.now_ns);
        ll_run(&n, n.now_ns + 6 * MS, NULL, NULL);
    }
    ll_run(&n, n.now_ns + 2 * S, NULL, NULL);
    pure_link_stats s = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(rx->pl, -1, &s);
    fprintf(stderr, "  in %llu B, out %llu B in %llu replies, over 3x %llu times, held back %llu\n",
            (unsigned long long)t.in_bytes, (unsigned long long)t.out_bytes, (unsigned long long)t.replies,
            (unsigned long long)t.over, (unsigned long long)s.dropped_amplification);
    CHECK(t.replies >= 1);
    CHECK(s.dropped_amplification >= 1);  /* the limit was reached: the case tested something */
    CHECK_EQ_U(t.over, 0);
    ll_free(&n);
}

/* ---- 8. No ACCEPT before the memo write of its epoch is reported durable ---- */

typedef struct accept_tap { int memo_done; uint64_t early, accepts; } accept_tap;

static int watch_accept(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    accept_tap *t = arg;
    pl_header h;
    pl_frame f[PL_FRAMES_MOST];
    int count;
    if (from != 1 || !read_packet(data, len, &h, f, &count)) return 1;
    for (int i = 0; i < count; i++)
        if (f[i].type == PL_FRAME_ACCEPT) {
            t->accepts++;
            t->early += !t->memo_done;
        }
    return 1;
}

static void accept_never_before_the_memo_write_is_reported(void) {
    ll_net n;
    pure_link_config cs = null_config(), cr = null_config();
    cr.memo_enabled = 1;
    pair(&n, &cs, &cr);
    ll_node *rx = &n.node[1];
    rx->memo_hold = 1;  /* writes wait in memo_log until reported */
    accept_tap t = {0, 0, 0};
    n.tap = watch_accept, n.tap_arg = &t;
    trickle(&n, 100, 200, 10 * MS);  /* 1 s of OFFERs in epoch 0 */
    CHECK(rx->memo_logged >= 1);
    /* The disk says every write is durable: the ACCEPT may go now. */
    rx->memo_hold = 0;
    t.memo_done = 1;
    for (int i = 0; i < rx->memo_logged; i++) {
        struct ll_write *w = &rx->memo_log[i];
        memcpy(rx->memo + w->offset, w->data, w->len);
        pure_link_memo_written(rx->pl, w->token, n.now_ns);
    }
    ll_service(&n, 1);
    int64_t want = 101;
    send_some(&n, 1, 200);
    ll_run(&n, n.now_ns + 5 * S, stored_at_least, &want);
    fprintf(stderr, "  %llu ACCEPTs, %llu before the memo was durable\n", (unsigned long long)t.accepts,
            (unsigned long long)t.early);
    CHECK(t.accepts >= 1);
    CHECK_EQ_U(t.early, 0);
    CHECK_EQ_U(n.node[0].stored_seen[0], 101);
    ll_free(&n);
}

/* ---- 9. An OFFER whose X25519 output is all zero is refused: no epoch, no ACCEPT ---- */

static int low_order_offers;
static pure_link_crypto low_order;

/* Once set, every new ephemeral public key is the point 0, of low order: any X25519 with
 * it gives all zero. */
static void low_order_base(uint8_t pub[32], const uint8_t secret[32]) {
    if (low_order_offers) memset(pub, 0, 32);
    else pure_link_crypto_null()->x25519_base(pub, secret);
}

static void all_zero_x25519_offer_is_refused(void) {
    ll_net n;
    pure_link_config cs = null_config(), cr = null_config();
    low_order = watched;
    low_order.x25519_base = low_order_base;
    cs.crypto = &low_order;
    low_order_offers = 0;
    ll_init(&n, 7, 10 * MS);
    int a = ll_node_add(&n, &cs), b = ll_node_add(&n, &cr);  /* static keys as usual */
    CHECK(ll_wire(&n, b, a, "out") >= 0);
    low_order_offers = 1;
    CHECK(ll_link(&n, a, b, "out", "in", 7) == 0);
    accept_tap t = {1, 0, 0};
    n.tap = watch_accept, n.tap_arg = &t;
    trickle(&n, 100, 200, 10 * MS);
    low_order_offers = 0;
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(n.node[1].pl, -1, &st);
    const pure_link *pl = n.node[1].pl;
    fprintf(stderr, "  %llu X25519 at the receiver, %llu ACCEPTs\n", (unsigned long long)st.x25519_ops,
            (unsigned long long)t.accepts);
    CHECK(pl->runs_used >= 1 && pl->runs[0].in_use);
    CHECK(st.x25519_ops >= 2);  /* it tried */
    CHECK_EQ_U(pl->runs[0].epoch_newest, 0);
    CHECK_EQ_U(t.accepts, 0);
    ll_free(&n);
}

/* ---- 10. X25519 for OFFERs at a bounded rate per peer, however fast the peer offers ---- */

static void offer_x25519_at_a_bounded_rate_per_peer(void) {
    ll_net n;
    pure_link_config cs = null_config(), cr = null_config();
    cs.epoch_ns = 5 * MS;  /* a sender that wants a new epoch every 5 ms */
    pair(&n, &cs, &cr);
    n.delay_ns = MS;
    trickle(&n, 1000, 100, 10 * MS);  /* 10 s */
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(n.node[1].pl, -1, &st);
    uint64_t most = PL_OFFERS_PER_S * 10 + PL_OFFERS_PER_S + 2;  /* the rate, its burst, E(0) */
    fprintf(stderr, "  %llu X25519 at the receiver in 10 s (at most %llu), %llu epochs\n",
            (unsigned long long)st.x25519_ops, (unsigned long long)most, (unsigned long long)st.epochs);
    CHECK(st.x25519_ops >= PL_OFFERS_PER_S * 5);  /* the sender did push at the limit */
    CHECK(st.x25519_ops <= most);
    ll_free(&n);
}

/* ---- 11. A run moves only on its newest packet: an older one from elsewhere does not ---- */

typedef struct hold_tap { int hold; uint8_t data[PURE_LINK_DATAGRAM_MOST]; size_t len; } hold_tap;

/* Keeps back one sender packet of epoch >= 1 (as if delayed on the path). */
static int hold_one(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    hold_tap *t = arg;
    if (from != 0 || !t->hold || (data[1] & 0x0f) == 0) return 1;
    memcpy(t->data, data, len);
    t->len = len;
    t->hold = 0;
    return 0;
}

static void older_packet_from_elsewhere_does_not_move_the_run(void) {
    ll_net n;
    pure_link_config cs = null_config(), cr = null_config();
    pair(&n, &cs, &cr);
    trickle(&n, 20, 200, 10 * MS);
    hold_tap t = {1, {0}, 0};
    n.tap = hold_one, n.tap_arg = &t;
    trickle(&n, 20, 200, 10 * MS);  /* newer packets arrive from the sender's address */
    CHECK(t.len > 0);
    pure_link_stats before = {.version = PURE_LINK_STATS_VERSION}, after = before;
    pure_link_stats_get(n.node[1].pl, -1, &before);
    pure_link_addr elsewhere = n.node[0].addr;
    elsewhere.bytes[5] = 99;
    pure_link_receive(n.node[1].pl, &elsewhere, t.data, t.len, n.now_ns);  /* authentic, fresh, not newest */
    ll_service(&n, 1);
    pure_link_stats_get(n.node[1].pl, -1, &after);
    const pl_run *r = &n.node[1].pl->runs[0];
    fprintf(stderr, "  opened +%llu, moves +%llu\n", (unsigned long long)(after.packets_opened - before.packets_opened),
            (unsigned long long)(after.address_moves - before.address_moves));
    CHECK_EQ_U(after.packets_opened - before.packets_opened, 1);  /* it was taken: only the move is refused */
    CHECK_EQ_U(after.address_moves, before.address_moves);
    CHECK(r->addr.len == n.node[0].addr.len && memcmp(r->addr.bytes, n.node[0].addr.bytes, r->addr.len) == 0);
    ll_free(&n);
}

TEST_MAIN(TEST_CASE(all_zero_x25519_offer_is_refused), TEST_CASE(offer_x25519_at_a_bounded_rate_per_peer),
          TEST_CASE(older_packet_from_elsewhere_does_not_move_the_run), TEST_CASE(replays_after_the_window_moved_are_dropped_and_counted),
          TEST_CASE(memo_never_holds_a_superseded_secret), TEST_CASE(lost_with_a_wrong_tag_is_ignored_in_every_epoch),
          TEST_CASE(receiver_holds_no_key_of_an_epoch_it_left), TEST_CASE(ack_delay_on_the_wire_is_the_delay_held),
          TEST_CASE(every_lost_under_a_fresh_key_and_nonce), TEST_CASE(amplification_limit_holds_at_every_instant),
          TEST_CASE(accept_never_before_the_memo_write_is_reported))
