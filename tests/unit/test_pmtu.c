/* test_pmtu.c: datagram sizes (spec/protocol.md §9) end to end over link_loop.h in virtual
 * time: the search on a path with an MTU, probes that cost no congestion, the host's hints,
 * black holes, replies within the base, and a receiver that takes every size. */
#include "harness.h"
#include "link_loop.h"
#include "internal.h"

#define MS 1000000ull
#define S 1000000000ull

/* The path's largest UDP payload (sender to receiver; replies pass) and what went over it. */
typedef struct mtu_tap {
    size_t sender_most;                  /* larger sender datagrams vanish; 0: no limit */
    uint64_t limit_from_ns;              /* the limit holds from then on */
    uint32_t ptb_bytes;                  /* a too-big datagram draws a hint of this size (a
                                            router's ICMP packet-too-big)... */
    uint64_t ptb_most, ptb_sent;         /* ... this many times at most */
    uint64_t probes, probe_largest;      /* loss-timer probes (the whole 32-bit packet number)
                                            from the sender, and the largest of them */
    size_t sent_largest, reply_largest;  /* datagrams that passed */
    uint64_t dropped;
    uint64_t sizes_seen[PURE_LINK_DATAGRAM_MOST + 1];
    uint64_t sizes_dropped[PURE_LINK_DATAGRAM_MOST + 1];
} mtu_tap;

static int tap_mtu(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    (void)to, (void)data;
    mtu_tap *t = arg;
    if (from != 0) {
        if (len > t->reply_largest) t->reply_largest = len;
        return 1;
    }
    pl_header h;
    if (pl_header_decode(&h, data, len) > 0 && h.pn_len == PL_PN_LEN_MOST) {
        t->probes++;
        if (len > t->probe_largest) t->probe_largest = len;
    }
    if (t->sender_most && n->now_ns >= t->limit_from_ns && len > t->sender_most) {
        t->dropped++;
        t->sizes_dropped[len]++;
        if (t->ptb_sent < t->ptb_most) {
            /* Between pulls, as a host reads its error queue between batches. */
            CHECK(pure_link_path_hint(n->node[0].pl, &n->node[to].addr, PURE_LINK_HINT_TOO_BIG, t->ptb_bytes,
                                      n->now_ns) == 1);
            t->ptb_sent++;
        }
        return 0;
    }
    if (len > t->sent_largest) t->sent_largest = len;
    t->sizes_seen[len]++;
    return 1;
}

/* The sending host: whenever fewer than 150 records of 1,000 B wait to be stored, it queues
 * 300 more (so the sender fills whole packets, at about 10 MB/s over a 20 ms round trip),
 * until `total` are queued; done when all are stored (an ll_run predicate, called between
 * events). */
typedef struct feeder { int64_t total, queued; } feeder;

static int feed(ll_net *n, void *arg) {
    feeder *f = arg;
    uint8_t rec[1000];
    if (f->queued - n->node[0].stored_seen[0] >= 150) return 0;
    for (int k = 0; k < 300 && f->queued < f->total; k++) {
        memset(rec, (uint8_t)f->queued, sizeof rec);
        CHECK(pure_link_send(n->node[0].pl, 0, rec, sizeof rec, n->now_ns) == f->queued);
        f->queued++;
    }
    return n->node[0].stored_seen[0] >= f->total;
}

static pure_link_stats sender_stats(ll_net *n) {
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n->node[0].pl, 0, &st) == 0);
    return st;
}

/* A pair a > b with one link, 10 ms each way, through the tap t (set up by the caller),
 * that has sent from f for its first `run_ns`. */
static void pair(ll_net *n, uint64_t seed, const pure_link_config *sender_cfg, mtu_tap *t, feeder *f,
                 uint64_t run_ns) {
    ll_init(n, seed, 10 * MS);
    int a = ll_node_add(n, sender_cfg), b = ll_node_add(n, NULL);
    CHECK(a == 0 && b == 1);
    CHECK(pure_link_wire_peer(n->node[b].pl, n->node[a].pub, "*", 0) >= 0);
    CHECK(ll_link(n, a, b, "out", "in", 7) == 0);
    n->tap = tap_mtu, n->tap_arg = t;
    ll_run(n, run_ns, feed, f);
}

/* A path that carries `most` B of UDP payload: the transfer completes, every record once,
 * at a size within 8 B of `most`, each size the path does not carry fails after exactly
 * PL_PMTU_PROBES_MOST probes of it are lost, and the lost probes are neither lost packets
 * nor congestion. */
static void search_finds(size_t most) {
    ll_net n;
    static mtu_tap t;
    t = (mtu_tap){.sender_most = most};
    feeder f = {20000, 0};
    pair(&n, 3, NULL, &t, &f, 20 * S);
    pure_link_stats st = sender_stats(&n);
    size_t best = most < PURE_LINK_DATAGRAM_MOST ? most : PURE_LINK_DATAGRAM_MOST;
    fprintf(stderr, "  path %zu B: size %llu, %llu probes (%llu lost), done at %.0f ms\n", most,
            (unsigned long long)st.datagram_bytes, (unsigned long long)st.pmtu_probes_sent,
            (unsigned long long)st.pmtu_probes_lost, (double)n.now_ns / MS);
    CHECK_EQ_U(n.node[0].stored_seen[0], 20000);
    CHECK_EQ_U(n.node[1].records_delivered, 20000);
    CHECK_EQ_U(n.node[1].duplicates, 0);
    CHECK(st.datagram_bytes <= best && st.datagram_bytes + PL_PMTU_GRAIN_BYTES > best);
    CHECK(t.sent_largest <= best);
    CHECK_EQ_U(st.packets_lost, 0);          /* only probes were too big */
    CHECK_EQ_U(st.congestion_events, 0);
    CHECK_EQ_U(st.pmtu_probes_lost, t.dropped);
    for (size_t len = 0; len <= PURE_LINK_DATAGRAM_MOST; len++)
        if (t.sizes_dropped[len] != 0) CHECK_EQ_U(t.sizes_dropped[len], PL_PMTU_PROBES_MOST);
    CHECK(best == PURE_LINK_DATAGRAM_MOST ? st.pmtu_probes_sent == 1 : st.pmtu_probes_lost >= PL_PMTU_PROBES_MOST);
    CHECK(t.reply_largest <= PURE_LINK_DATAGRAM_BASE);
    ll_free(&n);
}

static void search_on_a_1452_path(void) { search_finds(PURE_LINK_DATAGRAM_MOST); }
static void search_on_a_1372_path(void) { search_finds(1400 - 28); }
static void search_on_a_1252_path(void) { search_finds(1280 - 28); }
static void search_on_the_ipv6_minimum(void) { search_finds(PURE_LINK_DATAGRAM_BASE); }

/* The path narrows mid-transfer and says nothing (no hint): the sender falls back to the
 * base within a few round trips, finds the new size, and every record still arrives once. */
static void black_hole_falls_back_and_searches_again(void) {
    ll_net n;
    static mtu_tap t;
    t = (mtu_tap){.sender_most = 1300, .limit_from_ns = 300 * MS};
    feeder f = {60000, 0};
    pair(&n, 5, NULL, &t, &f, 300 * MS);
    CHECK_EQ_U(sender_stats(&n).datagram_bytes, PURE_LINK_DATAGRAM_MOST);
    uint64_t left_ns = 0;
    while (n.now_ns < 5 * S && left_ns == 0) {
        ll_run(&n, n.now_ns + 10 * MS, feed, &f);
        if (sender_stats(&n).datagram_bytes <= 1300) left_ns = n.now_ns;
    }
    fprintf(stderr, "  back at or below the path's 1,300 B %.0f ms after it narrowed\n",
            (double)(left_ns - 300 * MS) / MS);
    CHECK(left_ns != 0 && left_ns - 300 * MS < 1 * S);
    ll_run(&n, 60 * S, feed, &f);
    pure_link_stats st = sender_stats(&n);
    CHECK_EQ_U(n.node[0].stored_seen[0], 60000);
    CHECK_EQ_U(n.node[1].duplicates, 0);
    CHECK_EQ_U(st.pmtu_black_holes, 1);
    CHECK(st.datagram_bytes <= 1300 && st.datagram_bytes + PL_PMTU_GRAIN_BYTES > 1300);
    ll_free(&n);
}

/* A search that ended below the largest size starts again after pmtu_raise_ns, and finds
 * a path that grew back. */
static void raise_interval_finds_a_grown_path(void) {
    pure_link_config c = {.pmtu_raise_ns = 2 * S};
    ll_net n;
    static mtu_tap t;
    t = (mtu_tap){.sender_most = 1300};
    feeder f = {1000000, 0};
    pair(&n, 7, &c, &t, &f, 1 * S);
    CHECK(sender_stats(&n).datagram_bytes <= 1300);
    t.sender_most = 0;                            /* the path grows back at 1 s */
    ll_run(&n, 2 * S, feed, &f);
    CHECK(sender_stats(&n).datagram_bytes <= 1300);  /* not before the interval is over */
    ll_run(&n, 4 * S, feed, &f);
    CHECK_EQ_U(sender_stats(&n).datagram_bytes, PURE_LINK_DATAGRAM_MOST);
    ll_free(&n);
}

/* The host's hints: a too-big hint lowers the size at once and a probe confirms it; one
 * below the base, an unreachable, one for another address or of an unknown kind changes
 * nothing; every one is counted where the statistics say. */
static void hints_lower_at_once_and_are_counted(void) {
    ll_net n;
    static mtu_tap t;
    t = (mtu_tap){0};
    feeder f = {40000, 0};
    pair(&n, 9, NULL, &t, &f, 200 * MS);
    pure_link *pl = n.node[0].pl;
    const pure_link_addr *to = &n.node[1].addr;
    CHECK_EQ_U(sender_stats(&n).datagram_bytes, PURE_LINK_DATAGRAM_MOST);
    CHECK(pure_link_path_hint(pl, to, PURE_LINK_HINT_TOO_BIG, 1300, n.now_ns) == 1);
    CHECK_EQ_U(sender_stats(&n).datagram_bytes, 1300);
    memset(t.sizes_seen, 0, sizeof t.sizes_seen);
    ll_run(&n, n.now_ns + 300 * MS, feed, &f);
    for (size_t len = 1301; len <= PURE_LINK_DATAGRAM_MOST; len++) CHECK_EQ_U(t.sizes_seen[len], 0);
    CHECK(t.sizes_seen[1300] > 10);
    CHECK_EQ_U(sender_stats(&n).datagram_bytes, 1300);  /* confirmed, and the search stays below */
    CHECK(pure_link_path_hint(pl, to, PURE_LINK_HINT_TOO_BIG, PURE_LINK_DATAGRAM_BASE - 1, n.now_ns) == 1);
    CHECK_EQ_U(sender_stats(&n).datagram_bytes, 1300);  /* below the base: counted only */
    CHECK(pure_link_path_hint(pl, to, PURE_LINK_HINT_UNREACHABLE, 0, n.now_ns) == 1);
    CHECK_EQ_U(sender_stats(&n).datagram_bytes, 1300);
    CHECK(pure_link_path_hint(pl, to, PURE_LINK_HINT_TOO_BIG, 0, n.now_ns) == 1);
    CHECK_EQ_U(sender_stats(&n).datagram_bytes, PURE_LINK_DATAGRAM_BASE);  /* unknown: the base */
    pure_link_addr other = *to;
    other.bytes[0] ^= 1;
    CHECK(pure_link_path_hint(pl, &other, PURE_LINK_HINT_TOO_BIG, 1280, n.now_ns) == 0);
    CHECK(pure_link_path_hint(pl, &other, PURE_LINK_HINT_UNREACHABLE, 0, n.now_ns) == 0);
    CHECK(pure_link_path_hint(pl, to, 3, 1300, n.now_ns) == PURE_LINK_ERR_INVALID);
    CHECK(pure_link_path_hint(pl, to, 0, 1300, n.now_ns) == PURE_LINK_ERR_INVALID);
    pure_link_stats st = sender_stats(&n), all = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(pl, -1, &all) == 0);
    CHECK_EQ_U(st.path_too_big_hints, 3);
    CHECK_EQ_U(st.path_unreachable_hints, 1);
    CHECK_EQ_U(all.path_too_big_hints, 4);           /* the other address's, at the endpoint */
    CHECK_EQ_U(all.path_unreachable_hints, 2);
    CHECK_EQ_U(all.datagram_bytes, PURE_LINK_DATAGRAM_BASE);  /* its one open sender's */
    /* Everything still arrives once. */
    ll_run(&n, 30 * S, feed, &f);
    CHECK_EQ_U(n.node[0].stored_seen[0], 40000);
    CHECK_EQ_U(n.node[1].duplicates, 0);
    ll_free(&n);
}

/* The loss timer's probes stay at the base size whatever size full packets have reached:
 * in a black hole they are what still comes through and shows it (the probe of a LOST that
 * names no packet of ours, epoch.c, goes the same way).  An outage of 1 s after the search
 * found 1,452 B: every probe is at most the base, the outage is not taken for a black hole
 * (the probes were lost too), and the size is kept. */
static void loss_timer_probes_stay_at_the_base(void) {
    ll_net n;
    static mtu_tap t;
    t = (mtu_tap){.sender_most = 1, .limit_from_ns = 300 * MS};  /* nothing passes from then */
    feeder f = {40000, 0};
    pair(&n, 17, NULL, &t, &f, 300 * MS);
    CHECK_EQ_U(sender_stats(&n).datagram_bytes, PURE_LINK_DATAGRAM_MOST);
    t.probes = t.probe_largest = 0;
    ll_run(&n, 1300 * MS, feed, &f);
    fprintf(stderr, "  %llu loss-timer probes in the outage, the largest %llu B\n", (unsigned long long)t.probes,
            (unsigned long long)t.probe_largest);
    CHECK(t.probes >= 4);
    CHECK(t.probe_largest <= PURE_LINK_DATAGRAM_BASE);
    t.sender_most = 0;
    ll_run(&n, 30 * S, feed, &f);
    pure_link_stats st = sender_stats(&n);
    CHECK_EQ_U(n.node[0].stored_seen[0], 40000);
    CHECK_EQ_U(n.node[1].duplicates, 0);
    CHECK_EQ_U(st.pmtu_black_holes, 0);
    CHECK_EQ_U(st.datagram_bytes, PURE_LINK_DATAGRAM_MOST);
    ll_free(&n);
}

/* 20,000 records over a path that carries t->sender_most B, its router answering the first
 * datagram too big for it with a too-big hint of t->ptb_bytes: every record arrives once,
 * none is lost (only probes are), and the sender's size never goes above what the path
 * carries.  Returns the sender's statistics. */
static pure_link_stats hinted_transfer(ll_net *n, mtu_tap *t, uint64_t seed) {
    feeder f = {20000, 0};
    pair(n, seed, NULL, t, &f, 1 * MS);
    while (n->now_ns < 20 * S && !feed(n, &f)) {
        ll_run(n, n->now_ns + 1 * MS, feed, &f);
        CHECK(sender_stats(n).datagram_bytes <= t->sender_most);
    }
    pure_link_stats st = sender_stats(n);
    fprintf(stderr, "  size %llu after %llu probes (%llu lost), %llu hints\n", (unsigned long long)st.datagram_bytes,
            (unsigned long long)st.pmtu_probes_sent, (unsigned long long)st.pmtu_probes_lost,
            (unsigned long long)t->ptb_sent);
    CHECK_EQ_U(n->node[0].stored_seen[0], 20000);
    CHECK_EQ_U(n->node[1].duplicates, 0);
    CHECK_EQ_U(st.packets_lost, 0);
    CHECK_EQ_U(t->ptb_sent, 1);                          /* the first probe's, here */
    return st;
}

/* A router in front of a 1,372 B path answers the first probe (1,452 B) with a too-big
 * naming 1,372: the next probe is of exactly that size, and once it is acknowledged the
 * search is over there (halving below the hint alone stopped within 8 B of it, at 1,368,
 * five probes later). */
static void too_big_hint_above_the_size_is_probed_next(void) {
    ll_net n;
    static mtu_tap t;
    t = (mtu_tap){.sender_most = 1372, .ptb_bytes = 1372, .ptb_most = 1};
    pure_link_stats st = hinted_transfer(&n, &t, 13);
    CHECK_EQ_U(st.datagram_bytes, 1372);
    CHECK_EQ_U(st.pmtu_probes_sent, 2);                  /* 1,452 (refused), then 1,372 */
    for (size_t len = PURE_LINK_DATAGRAM_BASE + 1; len < 1372; len++) CHECK_EQ_U(t.sizes_seen[len], 0);
    ll_free(&n);
}

/* A hint is unauthenticated: one naming more than the path carries (1,400 B where only
 * 1,300 pass, and no word about the drops past the first) raises nothing; its probes are
 * lost, and the search goes on below it to the path's size. */
static void too_big_hint_that_lies_costs_its_probes(void) {
    ll_net n;
    static mtu_tap t;
    t = (mtu_tap){.sender_most = 1300, .ptb_bytes = 1400, .ptb_most = 1};
    pure_link_stats st = hinted_transfer(&n, &t, 15);
    CHECK(st.datagram_bytes <= 1300 && st.datagram_bytes + PL_PMTU_GRAIN_BYTES > 1300);
    CHECK(st.pmtu_probes_lost >= 1 + PL_PMTU_PROBES_MOST);  /* 1,452 once, 1,400 three times */
    ll_free(&n);
}

/* The sender of node 0 (the one link's). */
static pl_sender *sender_of(ll_net *n) { return &n->node[0].pl->senders[0]; }

/* Feeds as feed() does and stops once the sender has sent a size probe. */
static int feed_until_probe(ll_net *n, void *arg) {
    feed(n, arg);
    return sender_of(n)->pmtu.sent_pn != PL_NONE;
}

/* Stops once the sent packet arg is no longer in flight. */
static int feed_until_lost(ll_net *n, void *arg) {
    const pl_sent *e = arg;
    static feeder none = {0, 0};
    feed(n, &none);
    return e->state != PL_SENT_FLIGHT;
}

/* The search's first probe (1,452 B) carries record bytes, filling it with no PADDING when
 * the sender has bytes enough; later probes (a size that failed, or below one) are PING and
 * PADDING alone. */
static void first_probe_carries_records(void) {
    ll_net n;
    static mtu_tap t;
    t = (mtu_tap){.sender_most = 1300};
    feeder f = {20000, 0};
    pair(&n, 21, NULL, &t, &f, 0);
    ll_run(&n, 1 * S, feed_until_probe, &f);
    pl_sender *s = sender_of(&n);
    const pl_sent *e = &s->sent[s->pmtu.sent_pn % s->sent_most];
    CHECK(e->pn == s->pmtu.sent_pn && e->size_probe && e->bytes == PURE_LINK_DATAGRAM_MOST);
    fprintf(stderr, "  first probe: %u B, %llu record bytes (stream %u, response %u, offer %u)\n", e->bytes,
            (unsigned long long)e->len, e->has_stream, e->has_response, e->has_offer);
    /* The header with a packet number of 1 to 4 B, PING, the STREAM and RESPONSE still due
     * (37 B here at most), the RECORDS head, the tag: the rest is record bytes, no PADDING. */
    CHECK(e->len > 0);
    CHECK(e->len + PL_HEADER_SENDER_FIXED + PL_PN_LEN_MOST + 1 + 37 + PL_FRAME_RECORDS_HEAD + PURE_LINK_TAG_BYTES >=
          PURE_LINK_DATAGRAM_MOST);
    /* It is lost (the path carries 1,300 B): the later probes carry nothing. */
    uint64_t first = s->pmtu.sent_pn;
    while (n.now_ns < 5 * S && s->pmtu.sent_pn == first) ll_run(&n, n.now_ns + 1 * MS, feed, &f);
    e = &s->sent[s->pmtu.sent_pn % s->sent_most];
    CHECK(e->pn == s->pmtu.sent_pn && e->size_probe && e->len == 0);
    ll_free(&n);
}

/* The first probe is lost on a path that carries 1,300 B: its record bytes go again at once
 * (like a lost packet's: no wait for the 1 s resend rule), each record is stored once, and
 * its loss is neither a lost packet nor congestion (the window is not cut). */
static void lost_probe_records_resent_at_once(void) {
    ll_net n;
    static mtu_tap t;
    t = (mtu_tap){.sender_most = 1300};
    feeder f = {200, 0};                          /* 200 records: the sender runs dry */
    pair(&n, 23, NULL, &t, &f, 0);
    ll_run(&n, 1 * S, feed_until_probe, &f);
    pl_sender *s = sender_of(&n);
    const pl_sent *e = &s->sent[s->pmtu.sent_pn % s->sent_most];
    uint64_t probe_pn = e->pn, lo = e->off, hi = e->off + e->len, cwnd = pl_cc_cwnd(&s->cc);
    CHECK(e->size_probe && hi > lo);
    ll_run(&n, 1 * S, feed_until_lost, (void *)e);
    CHECK(e->pn == probe_pn && e->state == PL_SENT_LOST);
    uint64_t lost_ns = n.now_ns;
    /* Its bytes went again as it was declared lost (the same event), in packets of their own
     * (not probes), and the window was not cut. */
    uint64_t covered = lo;
    for (uint64_t pn = probe_pn + 1; pn < s->pn_next; pn++) {
        const pl_sent *r = &s->sent[pn % s->sent_most];
        if (r->pn == pn && r->len > 0 && r->off <= covered && r->off + r->len > covered && !r->size_probe &&
            r->sent_ns == lost_ns)
            covered = r->off + r->len;
    }
    CHECK(covered >= hi);
    CHECK(pl_cc_cwnd(&s->cc) >= cwnd);
    ll_run(&n, 5 * S, feed, &f);
    pure_link_stats st = sender_stats(&n);
    fprintf(stderr, "  probe lost at %.1f ms; all stored at %.1f ms; %llu packets resent\n", (double)lost_ns / MS,
            (double)n.now_ns / MS, (unsigned long long)st.packets_retransmitted);
    CHECK_EQ_U(n.node[0].stored_seen[0], 200);
    CHECK_EQ_U(n.node[1].records_delivered, 200);
    CHECK_EQ_U(n.node[1].duplicates, 0);
    CHECK(n.now_ns < lost_ns + 200 * MS);         /* a few round trips, not the 1 s rule */
    CHECK_EQ_U(st.records_resent, 0);             /* the 1 s resend rule never fired */
    /* Once: the probe's bytes fill at most two packets of the base size, nothing else was lost. */
    CHECK(st.packets_retransmitted >= 1 && st.packets_retransmitted <= 2);
    CHECK_EQ_U(st.packets_lost, 0);
    CHECK_EQ_U(st.congestion_events, 0);
    CHECK(st.pmtu_probes_lost >= 1);
    ll_free(&n);
}

/* A probe in flight takes no room in the window from the packets after it: the first
 * flight after ACCEPT fills the window with packets of the base size beside the probe, as
 * it would without it.  The probe still counts in bytes_in_flight (the controller's and
 * the rate samples' view). */
static void probe_takes_no_room_from_others(void) {
    ll_net n;
    static mtu_tap t;
    t = (mtu_tap){0};
    feeder f = {20000, 0};
    pair(&n, 25, NULL, &t, &f, 0);
    ll_run(&n, 1 * S, feed_until_probe, &f);
    pl_sender *s = sender_of(&n);
    const pl_sent *e = &s->sent[s->pmtu.sent_pn % s->sent_most];
    uint64_t probe_pn = e->pn, sent_ns = e->sent_ns;
    ll_run(&n, sent_ns + 19 * MS, feed, &f);     /* the flight's first ACK is a round trip away */
    CHECK(e->pn == probe_pn && e->state == PL_SENT_FLIGHT);
    uint64_t others = s->bytes_in_flight - e->bytes, cwnd = pl_cc_cwnd(&s->cc);
    fprintf(stderr, "  window %llu B: the probe (%u B) and %llu B of other packets in flight\n",
            (unsigned long long)cwnd, e->bytes, (unsigned long long)others);
    CHECK(others <= cwnd);
    CHECK(others + PURE_LINK_DATAGRAM_MOST > cwnd);  /* the others alone fill the window */
    CHECK(s->bytes_in_flight > cwnd);
    ll_free(&n);
}

/* The receiver takes a sender packet of every size from the base to the largest (hints
 * set the sender's size one by one), and drops one byte more as a bad header. */
static void receiver_takes_every_size(void) {
    ll_net n;
    static mtu_tap t;
    t = (mtu_tap){0};
    feeder f = {1000000, 0};
    pair(&n, 11, NULL, &t, &f, 200 * MS);
    static const uint32_t sizes[] = {PURE_LINK_DATAGRAM_BASE, 1233, 1251, 1252, 1300, 1371, 1372, 1422, 1451};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        /* From the largest down: each hint lowers the size. */
        uint32_t size = sizes[sizeof sizes / sizeof sizes[0] - 1 - i];
        CHECK(pure_link_path_hint(n.node[0].pl, &n.node[1].addr, PURE_LINK_HINT_TOO_BIG, size, n.now_ns) == 1);
        ll_run(&n, n.now_ns + 100 * MS, feed, &f);
        CHECK(t.sizes_seen[size] > 0);
    }
    CHECK(t.sizes_seen[PURE_LINK_DATAGRAM_MOST] > 0);
    pure_link_stats r = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n.node[1].pl, -1, &r) == 0);
    CHECK_EQ_U(r.packets_opened, r.packets_received);  /* every one opened, none dropped */
    uint8_t big[PURE_LINK_DATAGRAM_MOST + 1];
    memset(big, 0, sizeof big);
    big[0] = PURE_LINK_VERSION;
    CHECK(pure_link_receive(n.node[1].pl, &n.node[0].addr, big, sizeof big, n.now_ns) == 0);
    pure_link_stats r2 = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n.node[1].pl, -1, &r2) == 0);
    CHECK_EQ_U(r2.dropped_bad_header, r.dropped_bad_header + 1);
    ll_free(&n);
}

/* Random loss of 1 % on a path that carries every size: losses of full packets with an
 * ACK of only smaller ones between them are no black hole (it takes
 * PL_PMTU_BLACK_HOLE_LOSSES with none above the base acknowledged), and the size stays. */
static int feed_and_pull(ll_net *n, void *arg) {
    const feeder *f = arg;
    int64_t queued = f->queued;
    int done = feed(n, arg);
    if (f->queued != queued) ll_pull_out(n, 0);  /* the sender may have been idle, all stored */
    return done;
}

static void random_loss_is_no_black_hole(void) {
    ll_net n;
    static mtu_tap t;
    t = (mtu_tap){0};
    feeder f = {30000, 0};
    pair(&n, 13, NULL, &t, &f, 0);
    n.loss_ppm = 10000;
    ll_run(&n, 60 * S, feed_and_pull, &f);
    pure_link_stats st = sender_stats(&n);
    fprintf(stderr, "  %llu packets lost, %llu black holes, size %llu\n", (unsigned long long)st.packets_lost,
            (unsigned long long)st.pmtu_black_holes, (unsigned long long)st.datagram_bytes);
    CHECK_EQ_U(n.node[0].stored_seen[0], 30000);
    CHECK(st.packets_lost > 100);
    CHECK_EQ_U(st.pmtu_black_holes, 0);
    CHECK_EQ_U(st.datagram_bytes, PURE_LINK_DATAGRAM_MOST);
    ll_free(&n);
}

TEST_MAIN(TEST_CASE(search_on_a_1452_path), TEST_CASE(search_on_a_1372_path), TEST_CASE(search_on_a_1252_path),
          TEST_CASE(search_on_the_ipv6_minimum), TEST_CASE(black_hole_falls_back_and_searches_again),
          TEST_CASE(raise_interval_finds_a_grown_path), TEST_CASE(hints_lower_at_once_and_are_counted),
          TEST_CASE(loss_timer_probes_stay_at_the_base), TEST_CASE(too_big_hint_above_the_size_is_probed_next), TEST_CASE(too_big_hint_that_lies_costs_its_probes),
          TEST_CASE(receiver_takes_every_size), TEST_CASE(first_probe_carries_records),
          TEST_CASE(lost_probe_records_resent_at_once), TEST_CASE(probe_takes_no_room_from_others),
          TEST_CASE(random_loss_is_no_black_hole))
