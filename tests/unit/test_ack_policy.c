/* test_ack_policy.c: the receiver's ack policy (spec/protocol.md §5, "ack policy"; §4.2,
 * STORED): an ACK after 2 ack-eliciting packets, at once when a packet arrives out of order
 * (a hole appears or is filled), otherwise when the ack delay runs out; a stored mark that
 * moved rides on the next ACK, alone only when none is due within the delay, and goes at
 * once when it moved 16 records or more past the last STORED sent, or in the run's first
 * 1,024 packets; the first packet's ACK goes as soon as the host answers its STREAM,
 * whatever the ACCEPT waits for.  Over the in-memory network of link_loop.h in virtual
 * time, with the null cipher, whose packets a tap reads: every sender packet's arrival and
 * every reply's time and frames. */
#include "harness.h"
#include "link_loop.h"
#include "internal.h"
#include "packet_read.h"

#define MS 1000000ull
#define S 1000000000ull
#define DELAY_NS (10 * MS)       /* one way */
#define ACK_DELAY_US 7000u       /* the receiver's maximum ack delay here */
#define PNS_MOST 8192
#define REPLIES_MOST 8192
#define QUICK 1024u              /* the run's first packets: a stored mark that moved goes at once */

typedef struct reply_seen {
    uint64_t at_ns;              /* when it left the receiver */
    int ack, stored, accept;
    pl_frame ack_frame;
} reply_seen;

typedef struct ack_log {
    uint64_t largest_pn;             /* of sender packets, PL_PN_NONE before one */
    uint64_t arrive_ns[PNS_MOST];    /* by packet number: when it reaches the receiver */
    uint64_t packets;                /* sender packets */
    uint64_t hold_pn, hold_ns;       /* this packet arrives hold_ns late (hold_ns 0: none) */
    reply_seen replies[REPLIES_MOST];
    size_t replies_n;
} ack_log;

static int tap(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    ack_log *t = arg;
    pl_header h;
    pl_frame f[PL_FRAMES_MOST];
    int count;
    CHECK(read_packet(data, len, &h, f, &count));
    if (from == 0) {
        uint64_t pn = pl_pn_decode(t->largest_pn, h.pn_truncated, h.pn_len);
        if (t->largest_pn == PL_PN_NONE || pn > t->largest_pn) t->largest_pn = pn;
        t->packets++;
        CHECK(pn < PNS_MOST);
        t->arrive_ns[pn] = n->now_ns + n->delay_ns;
        if (t->hold_ns == 0 || pn != t->hold_pn) return 1;
        /* This one goes the long way: queued here, later than the packets after it. */
        CHECK(n->qn < n->qcap);
        ll_pkt *p = &n->q[n->qn++];
        p->at_ns = t->arrive_ns[pn] = n->now_ns + n->delay_ns + t->hold_ns;
        p->seq = n->seq++, p->to = to, p->from = n->node[from].addr, p->len = len;
        memcpy(p->data, data, len);
        n->dropped_packets--;  /* ll_pull_out counts it dropped; it is not */
        return 0;
    }
    CHECK(t->replies_n < REPLIES_MOST);
    reply_seen *r = &t->replies[t->replies_n++];
    memset(r, 0, sizeof *r);
    r->at_ns = n->now_ns;
    for (int i = 0; i < count; i++) {
        if (f[i].type == PL_FRAME_ACK) r->ack = 1, r->ack_frame = f[i];
        r->stored |= f[i].type == PL_FRAME_STORED;
        r->accept |= f[i].type == PL_FRAME_ACCEPT;
    }
    return 1;
}

static int acks_pn(const reply_seen *r, uint64_t pn) {
    if (!r->ack) return 0;
    for (uint32_t i = 0; i <= r->ack_frame.ack.range_count; i++)
        if (r->ack_frame.ack.ranges[i].smallest <= pn && pn <= r->ack_frame.ack.ranges[i].largest) return 1;
    return 0;
}

/* The first reply whose ACK covers pn, or NULL. */
static const reply_seen *first_ack_of(const ack_log *t, uint64_t pn) {
    for (size_t i = 0; i < t->replies_n; i++)
        if (acks_pn(&t->replies[i], pn)) return &t->replies[i];
    return NULL;
}

static void pair(ll_net *n, ack_log *t, int memo) {
    pure_link_config cs = {.crypto = pure_link_crypto_null()}, cr = cs;
    cs.copies = 2;               /* off: a lone record goes once, and its ACK waits */
    cr.ack_delay_us = ACK_DELAY_US;
    cr.memo_enabled = (uint32_t)memo;
    ll_init(n, 7, DELAY_NS);
    CHECK(ll_node_add(n, &cs) == 0 && ll_node_add(n, &cr) == 1);
    CHECK(ll_wire(n, 1, 0, "out") >= 0);
    CHECK(ll_link(n, 0, 1, "out", "in", 7) == 0);
    memset(t, 0, sizeof *t);
    t->largest_pn = PL_PN_NONE;
    n->tap = tap, n->tap_arg = t;
    n->node[1].hold_stored = 1;  /* no STORED moves: the ACKs alone */
}

static void send_some(ll_net *n, int count, size_t size) {
    static uint8_t rec[4096];
    for (int i = 0; i < count; i++) {
        memset(rec, (uint8_t)i, size);
        CHECK(pure_link_send(n->node[0].pl, 0, rec, size, n->now_ns) >= 0);
    }
}

/* Records one at a time, gap_ns apart: each a packet alone. */
static void trickle(ll_net *n, int count, uint64_t gap_ns) {
    for (int i = 0; i < count; i++) {
        send_some(n, 1, 100);
        ll_run(n, n->now_ns + gap_ns, NULL, NULL);
    }
}

/* Past the run's first QUICK packets: 400 records of 4,000 B (3 packets each), stored, then
 * the log starts over.  The host holds its stores from here on unless a case lets them go. */
static int delivered_400(ll_net *n, void *arg) { (void)arg; return n->node[1].records_delivered >= 400; }
static void past_quick_start(ll_net *n, ack_log *t) {
    n->node[1].hold_stored = 0;
    send_some(n, 400, 4000);
    ll_run(n, n->now_ns + 10 * S, delivered_400, NULL);
    ll_run(n, n->now_ns + 1 * S, NULL, NULL);  /* quiet: every ACK and STORED sent */
    CHECK_EQ_U(n->node[1].records_delivered, 400);
    CHECK(t->largest_pn >= QUICK);
    t->replies_n = 0;
    t->packets = 0;
    n->node[1].hold_stored = 1;
}

static int delivered_600(ll_net *n, void *arg) { (void)arg; return n->node[1].records_delivered >= 600; }
static int stored_1000(ll_net *n, void *arg) { (void)arg; return n->node[0].stored_seen[0] >= 1000; }

static size_t replies_with_ack(const ack_log *t) {
    size_t k = 0;
    for (size_t i = 0; i < t->replies_n; i++) k += t->replies[i].ack;
    return k;
}

/* A bulk of packets in order, nothing stored: one ACK per 2 of them. */
static void ack_every_second_packet(void) {
    ll_net n;
    static ack_log t;
    pair(&n, &t, 0);
    send_some(&n, 600, 1000);
    ll_run(&n, n.now_ns + 5 * S, delivered_600, NULL);
    ll_run(&n, n.now_ns + 20 * MS, NULL, NULL);  /* the last ACKs on their way */
    CHECK_EQ_U(n.node[1].records_delivered, 600);
    size_t acks = replies_with_ack(&t);
    fprintf(stderr, "  %llu packets, %zu replies, %zu with an ACK\n", (unsigned long long)t.packets, t.replies_n, acks);
    CHECK(t.packets >= 400);
    /* Every ACK sent for the count newly covers 2 packets; the few the delay sends (an odd
     * packet at the end of a flight) cover one. */
    CHECK(acks <= t.packets / 2 + t.packets / 20);
    CHECK(acks >= t.packets / 2 - 2);
    size_t twos = 0;
    for (size_t i = 1; i < t.replies_n; i++) {
        const reply_seen *a = &t.replies[i - 1], *b = &t.replies[i];
        if (a->ack && b->ack && b->ack_frame.ack.ranges[0].largest == a->ack_frame.ack.ranges[0].largest + 2) twos++;
    }
    CHECK(twos >= t.packets / 2 - t.packets / 10);
    ll_free(&n);
}

/* A packet alone waits for the ack delay, no more, no less; the ACK says so. */
static void ack_delay_runs_out(void) {
    ll_net n;
    static ack_log t;
    pair(&n, &t, 0);
    trickle(&n, 2, 1 * S);     /* the STREAM, acknowledged once the host answers; a size probe */
    size_t from = t.replies_n;
    uint64_t first_pn = t.largest_pn + 1;
    trickle(&n, 20, 50 * MS);  /* lone packets, 50 ms apart: nothing else calls for an ACK */
    uint64_t delayed = 0;
    for (uint64_t pn = first_pn; pn <= t.largest_pn; pn++) {
        const reply_seen *r = first_ack_of(&t, pn);
        CHECK(r != NULL && r >= &t.replies[from]);
        CHECK_EQ_U(r->at_ns - t.arrive_ns[pn], ACK_DELAY_US * 1000ull);
        CHECK_EQ_U(r->ack_frame.ack.ack_delay_us, ACK_DELAY_US);
        delayed++;
    }
    fprintf(stderr, "  %llu lone packets, each acknowledged %u us after it arrived\n", (unsigned long long)delayed,
            ACK_DELAY_US);
    CHECK(delayed >= 20);
    ll_free(&n);
}

/* A packet that arrives after a later one (a hole appears) and the late one itself (the
 * hole is filled) are each acknowledged at the instant they arrive. */
static void ack_at_once_on_a_hole(void) {
    ll_net n;
    static ack_log t;
    pair(&n, &t, 0);
    ll_run(&n, n.now_ns + 1 * S, NULL, NULL);
    trickle(&n, 2, 50 * MS);
    t.hold_pn = t.largest_pn + 1, t.hold_ns = 55 * MS;  /* the next packet comes 5 ms after the one after it */
    trickle(&n, 4, 50 * MS);
    uint64_t late = t.hold_pn, early = late + 1;
    CHECK(t.largest_pn > early && t.arrive_ns[late] > t.arrive_ns[early]);
    const reply_seen *hole = first_ack_of(&t, early), *filled = first_ack_of(&t, late);
    CHECK(hole != NULL && filled != NULL);
    CHECK(!acks_pn(hole, late));
    fprintf(stderr, "  packet %llu arrived %llu ms late: ACK of the one after it %llu ns after its arrival, its own %llu ns\n",
            (unsigned long long)late, (unsigned long long)(t.hold_ns / MS),
            (unsigned long long)(hole->at_ns - t.arrive_ns[early]), (unsigned long long)(filled->at_ns - t.arrive_ns[late]));
    CHECK_EQ_U(hole->at_ns, t.arrive_ns[early]);
    CHECK_EQ_U(filled->at_ns, t.arrive_ns[late]);
    ll_free(&n);
}

/* Each of a run's first QUICK packets moves the stored mark of a host that stores at once
 * (1,000 B records: every packet ends one), and each such STORED goes at once with its
 * ACK: a reply on every packet's arrival.  After them the STOREDs ride on the ACKs, about
 * one reply per 2 packets. */
static void quick_start_stored_at_once(void) {
    ll_net n;
    static ack_log t;
    pair(&n, &t, 0);
    n.node[1].hold_stored = 0;
    send_some(&n, 1600, 1000);
    ll_run(&n, n.now_ns + 10 * S, NULL, NULL);
    CHECK_EQ_U(n.node[0].stored_seen[0], 1600);
    CHECK(t.largest_pn >= QUICK + 100);
    uint64_t quick_at_once = 0, after = 0, after_at_once = 0;
    for (uint64_t pn = 1; pn <= t.largest_pn; pn++) {  /* 0: the STREAM, answered with the host's answer */
        const reply_seen *r = first_ack_of(&t, pn);
        CHECK(r != NULL);
        int at_once = r->at_ns == t.arrive_ns[pn] && r->stored;
        if (pn < QUICK) quick_at_once += (uint64_t)at_once;
        else after++, after_at_once += (uint64_t)at_once;
    }
    fprintf(stderr, "  %llu of the first %u packets answered with STORED on arrival; %llu of the %llu after them\n",
            (unsigned long long)quick_at_once, QUICK - 1, (unsigned long long)after_at_once, (unsigned long long)after);
    CHECK_EQ_U(quick_at_once, QUICK - 1);
    CHECK(after_at_once <= after / 2 + after / 20);
    ll_free(&n);
}

/* Past the run's first packets, the host stores every record at once: its STOREDs ride on
 * the ACKs, so the replies stay at one per 2 packets.  A mark the host moves with no ACK
 * due goes alone once the delay runs out, and at once when it moved 16 records or more
 * past the last STORED sent. */
static void store_then_reply(ll_net *n, ack_log *t, int records, uint64_t expect_after_ns) {
    uint64_t had = (uint64_t)n->node[0].stored_seen[0];
    n->node[1].hold_stored = 1;
    send_some(n, records, 100);  /* one packet, its ACK on its own */
    ll_run(n, n->now_ns + 1 * S, NULL, NULL);
    CHECK_EQ_U((uint64_t)n->node[0].stored_seen[0], had);
    size_t before = t->replies_n;
    uint64_t store_ns = n->now_ns;
    ll_store_all(n, 1);
    ll_run(n, n->now_ns + 1 * S, NULL, NULL);
    CHECK_EQ_U((uint64_t)n->node[0].stored_seen[0], had + (uint64_t)records);
    CHECK_EQ_U(t->replies_n, before + 1);
    CHECK(t->replies[before].stored);
    fprintf(stderr, "  %d records stored: STORED %llu us after\n", records,
            (unsigned long long)((t->replies[before].at_ns - store_ns) / 1000));
    CHECK_EQ_U(t->replies[before].at_ns - store_ns, expect_after_ns);
}

static void stored_rides_the_ack(void) {
    ll_net n;
    static ack_log t;
    pair(&n, &t, 0);
    past_quick_start(&n, &t);
    n.node[1].hold_stored = 0;
    send_some(&n, 600, 1000);
    ll_run(&n, n.now_ns + 5 * S, stored_1000, NULL);
    CHECK(n.node[0].stored_seen[0] == 1000);
    ll_run(&n, n.now_ns + 1 * S, NULL, NULL);
    size_t stored = 0, alone = 0;
    for (size_t i = 0; i < t.replies_n; i++) stored += t.replies[i].stored, alone += t.replies[i].stored && !t.replies[i].ack;
    fprintf(stderr, "  %llu packets, %zu replies, %zu with STORED, %zu of them alone\n", (unsigned long long)t.packets,
            t.replies_n, stored, alone);
    CHECK(t.replies_n <= t.packets / 2 + t.packets / 20);
    CHECK(alone <= 2);
    store_then_reply(&n, &t, 1, ACK_DELAY_US * 1000ull);
    store_then_reply(&n, &t, 15, ACK_DELAY_US * 1000ull);
    store_then_reply(&n, &t, 16, 0);
    store_then_reply(&n, &t, 40, 0);
    ll_free(&n);
}

/* The first packet, epoch 0: its ACK goes as soon as the host answers the STREAM (here at
 * once), while the ACCEPT waits for the memo write; it is not held for the ack delay. */
static void first_packet_not_delayed(void) {
    ll_net n;
    static ack_log t;
    pair(&n, &t, 1);
    n.node[1].memo_hold = 1;     /* the memo write does not complete: no ACCEPT */
    send_some(&n, 1, 100);
    ll_run(&n, n.now_ns + 40 * MS, NULL, NULL);
    const reply_seen *r = first_ack_of(&t, 0);
    CHECK(r != NULL && !r->accept);
    fprintf(stderr, "  packet 0 acknowledged %llu ns after it arrived\n", (unsigned long long)(r->at_ns - t.arrive_ns[0]));
    CHECK_EQ_U(r->at_ns, t.arrive_ns[0]);
    ll_free(&n);
}

#define TESTS                                                                                                  \
    TEST_CASE(ack_every_second_packet), TEST_CASE(ack_delay_runs_out), TEST_CASE(ack_at_once_on_a_hole), \
        TEST_CASE(quick_start_stored_at_once), TEST_CASE(stored_rides_the_ack), \
        TEST_CASE(first_packet_not_delayed)
TEST_MAIN(TESTS)
