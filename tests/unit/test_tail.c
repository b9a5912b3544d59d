/* test_tail.c: waits that only the 1 s resend rule ended.  With nothing in flight and bytes
 * acknowledged but not stored, a lost STORED is asked for again by a PING one PTO after the
 * last packet, backed off while STORED does not move (spec/protocol.md §4.2 "asking for
 * STORED"); and after a receiver lost the run's stream, a packet sent before the sender
 * heard of it delivers no byte, whatever ACK covers it later (§4.1 "packets sent before the
 * loss was heard").  Over the in-memory network of link_loop.h in virtual time, with the
 * null cipher, whose packets a tap reads and drops. */
#include "harness.h"
#include "link_loop.h"
#include "internal.h"
#include "packet_read.h"

#define MS 1000000ull
#define S 1000000000ull
#define DELAY_NS (10 * MS) /* one way */
#define RECORDS 20

typedef struct tail_tap {
    int64_t drop_stored;       /* drop the first reply whose STORED says this count (-1: none) */
    uint64_t dropped_ns;       /* when it was dropped (0: not yet) */
    uint64_t pings, pings_after_ns; /* sender packets of a PING alone, sent after pings_after_ns */
    uint64_t record_packets_after_ns, record_packets; /* sender packets with record bytes after */
    int drop_unknown;          /* drop the replies whose ACK says stream unknown, this one (1:
                                  the first) of those counted from unknown_after_ns on */
    uint64_t unknown_after_ns, unknown_seen, unknown_dropped;
} tail_tap;

static int tap(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    (void)to;
    tail_tap *t = arg;
    pl_header h;
    pl_frame f[PL_FRAMES_MOST];
    int count;
    CHECK(read_packet(data, len, &h, f, &count));
    if (from == 0) {
        int ping = 0, records = 0;
        for (int i = 0; i < count; i++) {
            ping |= f[i].type == PL_FRAME_PING;
            records |= f[i].type == PL_FRAME_RECORDS || f[i].type == PL_FRAME_RECORD;
        }
        if (ping && !records && count == 1 && n->now_ns >= t->pings_after_ns) t->pings++;
        if (records && n->now_ns >= t->record_packets_after_ns) t->record_packets++;
        return 1;
    }
    for (int i = 0; i < count; i++)
        if (f[i].type == PL_FRAME_ACK && (f[i].ack.flags & PL_ACK_FLAG_STREAM_UNKNOWN) && n->now_ns >= t->unknown_after_ns &&
            t->drop_unknown > 0 && ++t->unknown_seen == (uint64_t)t->drop_unknown) {
            t->unknown_dropped++;
            return 0;
        }
    for (int i = 0; i < count; i++)
        if (f[i].type == PL_FRAME_STORED && t->dropped_ns == 0 && (int64_t)f[i].stored.stored == t->drop_stored) {
            t->dropped_ns = n->now_ns;
            return 0;
        }
    return 1;
}

static void pair_memo(ll_net *n, tail_tap *t, uint64_t delay_ns, int memo) {
    pure_link_config cs = {.crypto = pure_link_crypto_null()}, cr = cs;
    cr.memo_enabled = (uint32_t)memo;
    ll_init(n, 11, delay_ns);
    CHECK(ll_node_add(n, &cs) == 0 && ll_node_add(n, &cr) == 1);
    CHECK(ll_wire(n, 1, 0, "out") >= 0);
    CHECK(ll_link(n, 0, 1, "out", "in", 7) == 0);
    memset(t, 0, sizeof *t);
    t->drop_stored = -1;
    n->tap = tap, n->tap_arg = t;
}

static void pair(ll_net *n, tail_tap *t) { pair_memo(n, t, DELAY_NS, 0); }

static void send_sized(ll_net *n, int count, size_t size) {
    static uint8_t rec[4096];
    memset(rec, 0x5a, size);
    for (int i = 0; i < count; i++) CHECK(pure_link_send(n->node[0].pl, 0, rec, size, n->now_ns) >= 0);
}

static void send_some(ll_net *n, int count) { send_sized(n, count, 200); }

static int stored_all(ll_net *n, void *arg) { (void)arg; return n->node[0].stored_seen[0] >= RECORDS; }
static int stored_count(ll_net *n, void *arg) { return n->node[0].stored_seen[0] >= *(const int64_t *)arg; }

static pure_link_stats stats_of(ll_net *n, int node) {
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(n->node[node].pl, -1, &st);
    return st;
}

/* The last STORED of a transfer is lost: every record was acknowledged, the host stored
 * them 40 ms later (a slow disk), and the reply that said so alone is dropped.  Nothing is
 * in flight and the sender has nothing more to send, so no later reply would carry STORED:
 * its PING one PTO after its last packet draws one.  The PTO is srtt + max(4 rttvar, 1 ms)
 * + 25 ms from the last packet, and the reply comes a round trip and at most the receiver's
 * ack delay (5 ms) after the PING.  Without the PING the sender waited for the 1 s resend
 * rule and sent the records again. */
static void lost_last_stored_asked_for(void) {
    ll_net n;
    static tail_tap t;
    pair(&n, &t);
    ll_run(&n, n.now_ns + 1 * S, NULL, NULL);   /* the handshake, then nothing in flight */
    n.node[1].hold_stored = 1;
    uint64_t sent_ns = n.now_ns;
    send_some(&n, RECORDS);
    t.pings_after_ns = n.now_ns;
    ll_run(&n, n.now_ns + 40 * MS, NULL, NULL);
    const pl_sender *s = &n.node[0].pl->senders[0];
    CHECK(s->eliciting_in_flight == 0 && s->acked_end > s->stored_off);  /* all acknowledged, none stored */
    uint64_t last_ns = s->last_send_ns;   /* the last record packet, or its copy */
    uint64_t pto_ns = pl_rtt_pto_ns(&s->rtt, PL_ACK_DELAY_NS_PEER);
    CHECK_EQ_U(s->timers[PL_ST_LOSS], last_ns + pto_ns);  /* the ask is armed: one PTO after it */
    t.drop_stored = RECORDS;
    ll_store_all(&n, 1);
    CHECK(t.dropped_ns == n.now_ns);
    ll_run(&n, n.now_ns + 5 * S, stored_all, NULL);
    CHECK(stored_all(&n, NULL));
    fprintf(stderr, "  records sent at %llu ms, the last packet at %llu ms, their STORED lost at %llu ms, "
            "heard %.1f ms after the last packet (PTO %.1f ms), %llu PING\n",
            (unsigned long long)(sent_ns / MS), (unsigned long long)(last_ns / MS), (unsigned long long)(t.dropped_ns / MS),
            (double)(n.now_ns - last_ns) / MS, (double)pto_ns / MS, (unsigned long long)t.pings);
    CHECK(n.now_ns - last_ns <= pto_ns + 2 * DELAY_NS + 5 * MS);
    CHECK_EQ_U(t.pings, 1);
    CHECK_EQ_U(stats_of(&n, 0).records_resent, 0);
    CHECK_EQ_U(n.node[1].duplicates, 0);
    ll_free(&n);
}

/* A host that holds STORED back (a slow disk) is asked at the PTO, then at doubling waits,
 * and once STORED moves the next ask is one PTO again: a PING per PTO would be 20 in a
 * second here, the doubling 4 (at 1, 3, 7 and 15 PTOs of about 48 ms). */
static void asks_back_off_while_stored_stays(void) {
    ll_net n;
    static tail_tap t;
    pair(&n, &t);
    ll_run(&n, n.now_ns + 1 * S, NULL, NULL);
    n.node[1].hold_stored = 1;
    send_some(&n, RECORDS);
    t.pings_after_ns = n.now_ns;
    ll_run(&n, n.now_ns + 1 * S, NULL, NULL);
    uint64_t held = t.pings;
    fprintf(stderr, "  STORED held for 1 s: %llu PINGs\n", (unsigned long long)held);
    CHECK(held >= 3 && held <= 5);
    CHECK_EQ_U(n.node[0].pl->senders[0].stored_asks, held);
    ll_store_all(&n, 1);
    ll_run(&n, n.now_ns + 5 * S, stored_all, NULL);
    CHECK(stored_all(&n, NULL));
    CHECK_EQ_U(n.node[0].pl->senders[0].stored_asks, 0);
    ll_free(&n);
}

/* Everything stored: nothing to ask, no PING, no timer. */
static void nothing_asked_when_all_stored(void) {
    ll_net n;
    static tail_tap t;
    pair(&n, &t);
    ll_run(&n, n.now_ns + 1 * S, NULL, NULL);
    send_some(&n, RECORDS);
    t.pings_after_ns = n.now_ns;
    ll_run(&n, n.now_ns + 5 * S, stored_all, NULL);
    CHECK(stored_all(&n, NULL));
    ll_run(&n, n.now_ns + 2 * S, NULL, NULL);
    CHECK_EQ_U(t.pings, 0);
    CHECK_EQ_U(n.node[0].pl->senders[0].timers[PL_ST_LOSS], PL_NONE);
    ll_free(&n);
}

/* A receiver restarted from its memo knows the run but not its stream: it acknowledges the
 * sender's packets alone, each ACK saying "stream unknown", until a STREAM binds it again.
 * Here two packets reach it unbound (a record and its copy, a quarter RTT apart on this
 * 60 ms path, as a PTO's two probes are 25 ms apart), the first one's ACK is heard and the
 * second one's lost; the sender binds again and resends its 200 KB from its stored mark, and
 * the receiver, bound, acknowledges the second packet again in an ACK without the flag.
 * That packet was sent before the sender heard of the loss: its bytes were dropped, and they
 * must go again with the resend, not count as received (taken as received, they left a hole
 * that waited for the 1 s resend rule while the receiver held everything after it). */
static void ack_of_a_packet_sent_before_the_stream_was_lost(void) {
    ll_net n;
    static tail_tap t;
    pair_memo(&n, &t, 30 * MS, 1);
    ll_run(&n, n.now_ns + 1 * S, NULL, NULL);
    n.node[1].hold_stored = 1;   /* acknowledged, none stored: the resend is every byte */
    for (int i = 0; i < 100; i++) {     /* 200 KB/s: the window and the pacing rate stay small */
        send_sized(&n, 1, 1000);
        ll_run(&n, n.now_ns + 5 * MS, NULL, NULL);
    }
    ll_run(&n, 1600 * MS, NULL, NULL);  /* the 1 s resend rule is due at 2.06 s, not before */
    const pl_sender *s = &n.node[0].pl->senders[0];
    CHECK(s->records_stored == 0 && s->acked_end == s->next_off);  /* every byte acknowledged, none stored */
    CHECK(ll_restart(&n, 1) == 0);
    n.node[1].hold_stored = 0;
    ll_stream *st = &n.node[1].streams[0];
    st->next = st->stored;       /* the host stored nothing: every record comes again */
    uint64_t restart_ns = n.now_ns, resent_before = stats_of(&n, 0).records_resent;  /* the 1 s rule, while held */
    t.drop_unknown = 2, t.unknown_after_ns = n.now_ns;
    send_some(&n, 1);
    int64_t want = 101;
    ll_run(&n, n.now_ns + 5 * S, stored_count, &want);
    fprintf(stderr, "  restarted at %llu ms: %llu replies said stream unknown, %llu lost; all stored %llu ms later, "
            "%llu records resent by the 1 s rule\n", (unsigned long long)(restart_ns / MS),
            (unsigned long long)t.unknown_seen, (unsigned long long)t.unknown_dropped,
            (unsigned long long)((n.now_ns - restart_ns) / MS),
            (unsigned long long)(stats_of(&n, 0).records_resent - resent_before));
    CHECK_EQ_U(t.unknown_dropped, 1);
    CHECK(stored_count(&n, &want));
    CHECK_EQ_U(stats_of(&n, 0).records_resent - resent_before, 0);
    CHECK(n.now_ns - restart_ns < 500 * MS);
    CHECK_EQ_U(n.node[1].duplicates, 0);
    CHECK_EQ_U(n.node[1].out_of_order, 0);
    ll_free(&n);
}

#define TESTS                                                                                                  \
    TEST_CASE(lost_last_stored_asked_for), TEST_CASE(asks_back_off_while_stored_stays),                       \
        TEST_CASE(nothing_asked_when_all_stored), TEST_CASE(ack_of_a_packet_sent_before_the_stream_was_lost)
TEST_MAIN(TESTS)
