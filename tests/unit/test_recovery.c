/* test_recovery.c: the sender's loss-recovery building blocks, in virtual time.
 *
 * RTT estimation (RFC 9002 §5), RACK's reordering window (RFC 8985), NewReno (RFC 9002
 * §7), CUBIC (RFC 9438) with HyStart++ (RFC 9406), the seed's undo rule, and the pacer.
 * Every expected value below is worked out from the RFC formulas in the comment next to
 * it, not read back from the code. */
#include <stdint.h>

#include "cc.h"
#include "pacer.h"
#include "rack.h"
#include "rtt.h"

#include "harness.h"

#define MSS 1452u
#define US 1000ull
#define MS 1000000ull
#define SEC 1000000000ull
#define PKTS(n) ((uint64_t)(n) * MSS)

/* ---------------------------------------------------------------- RTT (RFC 9002 §5) */

static void rtt_first_sample(void) {
    pl_rtt r;
    pl_rtt_init(&r, 0);
    CHECK_EQ_U(r.rtt_ns_smoothed, PL_RTT_NS_INITIAL);
    CHECK_EQ_U(r.rtt_ns_variance, PL_RTT_NS_INITIAL / 2);
    CHECK(!r.has_sample);
    /* First sample: smoothed = sample, rttvar = sample / 2, min = sample; the ack delay
     * is not subtracted. */
    pl_rtt_on_sample(&r, 40 * MS, 10 * MS, 25 * MS);
    CHECK(r.has_sample);
    CHECK_EQ_U(r.rtt_ns_latest, 40 * MS);
    CHECK_EQ_U(r.rtt_ns_min, 40 * MS);
    CHECK_EQ_U(r.rtt_ns_smoothed, 40 * MS);
    CHECK_EQ_U(r.rtt_ns_variance, 20 * MS);
}

static void rtt_later_samples(void) {
    pl_rtt r;
    pl_rtt_init(&r, 0);
    pl_rtt_on_sample(&r, 40 * MS, 0, 25 * MS);
    /* 60 ms with 10 ms ack delay: 60 >= min 40 + 10, adjusted = 50.
     * rttvar = 3/4 * 20 + 1/4 * |40 - 50| = 17.5; srtt = 7/8 * 40 + 1/8 * 50 = 41.25. */
    pl_rtt_on_sample(&r, 60 * MS, 10 * MS, 25 * MS);
    CHECK_EQ_U(r.rtt_ns_latest, 60 * MS);
    CHECK_EQ_U(r.rtt_ns_min, 40 * MS);
    CHECK_EQ_U(r.rtt_ns_variance, 17500 * US);
    CHECK_EQ_U(r.rtt_ns_smoothed, 41250 * US);
    /* 30 ms, no delay: min = 30; rttvar = 3/4 * 17.5 + 1/4 * |41.25 - 30| = 15.9375;
     * srtt = 7/8 * 41.25 + 1/8 * 30 = 39.84375. */
    pl_rtt_on_sample(&r, 30 * MS, 0, 25 * MS);
    CHECK_EQ_U(r.rtt_ns_min, 30 * MS);
    CHECK_EQ_U(r.rtt_ns_variance, 15937500);
    CHECK_EQ_U(r.rtt_ns_smoothed, 39843750);
}

static void rtt_ack_delay_capped(void) {
    pl_rtt r;
    pl_rtt_init(&r, 0);
    pl_rtt_on_sample(&r, 40 * MS, 0, 25 * MS);
    /* The peer claims 50 ms of delay but promised at most 25: adjusted = 100 - 25 = 75.
     * rttvar = 3/4 * 20 + 1/4 * 35 = 23.75; srtt = 7/8 * 40 + 1/8 * 75 = 44.375. */
    pl_rtt_on_sample(&r, 100 * MS, 50 * MS, 25 * MS);
    CHECK_EQ_U(r.rtt_ns_smoothed, 44375 * US);
    CHECK_EQ_U(r.rtt_ns_variance, 23750 * US);
}

static void rtt_min_not_adjusted_by_ack_delay(void) {
    pl_rtt r;
    pl_rtt_init(&r, 0);
    pl_rtt_on_sample(&r, 40 * MS, 0, 25 * MS);
    /* 45 ms with 10 ms delay: 45 < min 40 + 10, so the delay is not subtracted
     * (adjusted = 45, not 35): srtt = 7/8 * 40 + 1/8 * 45 = 40.625. */
    pl_rtt_on_sample(&r, 45 * MS, 10 * MS, 25 * MS);
    CHECK_EQ_U(r.rtt_ns_smoothed, 40625 * US);
    CHECK_EQ_U(r.rtt_ns_min, 40 * MS);
    /* 35 ms with 20 ms delay: min RTT takes the raw 35, never 15. */
    pl_rtt_on_sample(&r, 35 * MS, 20 * MS, 25 * MS);
    CHECK_EQ_U(r.rtt_ns_min, 35 * MS);
}

static void rtt_pto(void) {
    pl_rtt r;
    pl_rtt_init(&r, 0);
    /* Before a sample: 100 + 4 * 50 + 25 ms. */
    CHECK_EQ_U(pl_rtt_pto_ns(&r, 25 * MS), 325 * MS);
    pl_rtt_on_sample(&r, 40 * MS, 0, 25 * MS);
    /* srtt 40 + 4 * rttvar 20 + max ack delay 25 = 145 ms. */
    CHECK_EQ_U(pl_rtt_pto_ns(&r, 25 * MS), 145 * MS);
    CHECK_EQ_U(pl_rtt_persistent_congestion_ns(&r, 25 * MS), 3 * 145 * MS);
    /* A steady path: rttvar decays below granularity / 4, and the granularity (1 ms)
     * takes its place: 10 + 1 + 5 ms. */
    pl_rtt_init(&r, 0);
    for (int i = 0; i < 40; i++) pl_rtt_on_sample(&r, 10 * MS, 0, 5 * MS);
    CHECK(4 * r.rtt_ns_variance < PL_RTT_NS_GRANULARITY);
    CHECK_EQ_U(pl_rtt_pto_ns(&r, 5 * MS), 16 * MS);
}

/* ---------------------------------------------------------------- RACK (RFC 8985) */

/* An RTT estimate with min = srtt = rtt_ns. */
static pl_rtt rtt_steady(uint64_t rtt_ns) {
    pl_rtt r;
    pl_rtt_init(&r, 0);
    pl_rtt_on_sample(&r, rtt_ns, 0, 0);
    return r;
}

static void rack_reo_wnd_before_reordering(void) {
    pl_rack k;
    pl_rack_init(&k);
    pl_rtt r = rtt_steady(40 * MS);
    /* No reordering seen: 0 in recovery (repair at once), min_rtt / 4 outside it. */
    CHECK_EQ_U(pl_rack_reo_wnd_ns(&k, &r, 1), 0);
    CHECK_EQ_U(pl_rack_reo_wnd_ns(&k, &r, 0), 10 * MS);
    /* In-order acks are not reordering. */
    pl_rack_on_acked(&k, 5, 1 * MS, 41 * MS, PL_RACK_PN_NONE);
    pl_rack_on_acked(&k, 7, 2 * MS, 42 * MS, 5);
    CHECK(!k.reordering_seen);
    CHECK_EQ_U(pl_rack_reo_wnd_ns(&k, &r, 1), 0);
}

static void rack_reo_wnd_after_reordering(void) {
    pl_rack k;
    pl_rack_init(&k);
    pl_rtt r = rtt_steady(40 * MS);
    pl_rack_on_acked(&k, 5, 1 * MS, 41 * MS, PL_RACK_PN_NONE);
    pl_rack_on_acked(&k, 7, 3 * MS, 43 * MS, 5);
    /* 6 arrives after 7 was acknowledged: reordering. */
    pl_rack_on_acked(&k, 6, 2 * MS, 44 * MS, 7);
    CHECK(k.reordering_seen);
    CHECK_EQ_U(k.reorderings, 1);
    CHECK_EQ_U(pl_rack_reo_wnd_ns(&k, &r, 1), 10 * MS);
    CHECK_EQ_U(pl_rack_reo_wnd_ns(&k, &r, 0), 10 * MS);
    /* RACK keeps the most recently sent delivered packet (7), not the last acked (6). */
    CHECK_EQ_U(k.pn, 7);
    CHECK_EQ_U(k.rtt_ns, 40 * MS);
}

static void rack_frame_order_is_not_reordering(void) {
    pl_rack k;
    pl_rack_init(&k);
    /* One ACK frame newly acknowledging 7, 6, 5, walked from the top, after 4. */
    pl_rack_on_acked(&k, 4, 0, 40 * MS, PL_RACK_PN_NONE);
    pl_rack_on_acked(&k, 7, 3 * MS, 50 * MS, 4);
    pl_rack_on_acked(&k, 6, 2 * MS, 50 * MS, 4);
    pl_rack_on_acked(&k, 5, 1 * MS, 50 * MS, 4);
    CHECK(!k.reordering_seen);
    CHECK_EQ_U(k.pn, 7);
    CHECK_EQ_U(k.rtt_ns, 47 * MS);
}

static void rack_reo_wnd_grows_on_spurious_capped_at_srtt(void) {
    pl_rack k;
    pl_rack_init(&k);
    pl_rtt r = rtt_steady(40 * MS);
    /* One late packet: 2 quarters of min RTT. */
    pl_rack_on_spurious(&k, 100);
    CHECK_EQ_U(k.reo_wnd_mult, 2);
    CHECK_EQ_U(pl_rack_reo_wnd_ns(&k, &r, 0), 20 * MS);
    /* More late packets in the same round: one finding, no more growth. */
    pl_rack_on_spurious(&k, 105);
    pl_rack_on_acked(&k, 99, 1 * MS, 41 * MS, PL_RACK_PN_NONE);
    pl_rack_on_spurious(&k, 110);
    CHECK_EQ_U(k.reo_wnd_mult, 2);
    CHECK_EQ_U(k.spurious_losses, 3);
    /* Packet 100 acknowledged: the round is over; the next late packet grows it again. */
    pl_rack_on_acked(&k, 100, 2 * MS, 42 * MS, 99);
    pl_rack_on_spurious(&k, 200);
    CHECK_EQ_U(pl_rack_reo_wnd_ns(&k, &r, 0), 30 * MS);
    /* Three more rounds, each closed by the ack of the packet that was next to be sent
     * when the window last grew, each with a late packet. */
    uint64_t round_end = 200;
    for (int i = 0; i < 3; i++) {
        pl_rack_on_acked(&k, round_end, 3 * MS, 43 * MS, round_end - 1);
        round_end += 100;
        pl_rack_on_spurious(&k, round_end);
    }
    /* 6 quarters would be 60 ms; the window never exceeds srtt (40 ms). */
    CHECK_EQ_U(k.reo_wnd_mult, 6);
    CHECK_EQ_U(pl_rack_reo_wnd_ns(&k, &r, 0), 40 * MS);
}

static void rack_reo_wnd_resets_after_16_recoveries(void) {
    pl_rack k;
    pl_rack_init(&k);
    pl_rtt r = rtt_steady(40 * MS);
    pl_rack_on_spurious(&k, 10);
    CHECK_EQ_U(pl_rack_reo_wnd_ns(&k, &r, 0), 20 * MS);
    for (int i = 0; i < 15; i++) pl_rack_on_recovery_end(&k);
    CHECK_EQ_U(pl_rack_reo_wnd_ns(&k, &r, 0), 20 * MS);
    pl_rack_on_recovery_end(&k);
    CHECK_EQ_U(pl_rack_reo_wnd_ns(&k, &r, 0), 10 * MS);
    /* And stays at 1 (no underflow). */
    pl_rack_on_recovery_end(&k);
    CHECK_EQ_U(k.reo_wnd_mult, 1);
}

static void rack_lost_by_time(void) {
    pl_rack k;
    pl_rack_init(&k);
    /* Nothing delivered: no verdict. */
    CHECK_EQ_U(pl_rack_lost_at_ns(&k, 3, 0, 0), UINT64_MAX);
    /* Packet 10 sent at 100 ms, acknowledged at 140 ms: RACK.rtt = 40 ms. */
    pl_rack_on_acked(&k, 10, 100 * MS, 140 * MS, PL_RACK_PN_NONE);
    /* Packet 8, sent at 99 ms, with a 10 ms window: lost at 99 + 40 + 10 = 149 ms. */
    CHECK_EQ_U(pl_rack_lost_at_ns(&k, 8, 99 * MS, 10 * MS), 149 * MS);
    CHECK(!pl_rack_lost_by_time(&k, 8, 99 * MS, 10 * MS, 149 * MS - 1));
    CHECK(pl_rack_lost_by_time(&k, 8, 99 * MS, 10 * MS, 149 * MS));
    /* Packets sent after RACK's packet (and RACK's own) get no verdict. */
    CHECK_EQ_U(pl_rack_lost_at_ns(&k, 11, 101 * MS, 10 * MS), UINT64_MAX);
    CHECK_EQ_U(pl_rack_lost_at_ns(&k, 10, 100 * MS, 10 * MS), UINT64_MAX);
    CHECK(!pl_rack_lost_by_time(&k, 11, 101 * MS, 0, 10 * SEC));
}

static void rack_packet_threshold_disabled_after_reordering(void) {
    pl_rack k;
    pl_rack_init(&k);
    /* RFC 9002: lost when 3 later packets are acknowledged. */
    CHECK(!pl_rack_lost_by_count(&k, 5, PL_RACK_PN_NONE));
    CHECK(!pl_rack_lost_by_count(&k, 5, 7));
    CHECK(pl_rack_lost_by_count(&k, 5, 8));
    CHECK(!pl_rack_lost_by_count(&k, 9, 8));
    pl_rack_on_acked(&k, 8, 2 * MS, 42 * MS, PL_RACK_PN_NONE);
    pl_rack_on_acked(&k, 6, 1 * MS, 43 * MS, 8);
    CHECK(k.reordering_seen);
    /* Once reordering is seen, order says nothing about loss: only time decides. */
    CHECK(!pl_rack_lost_by_count(&k, 5, 8));
    CHECK(!pl_rack_lost_by_count(&k, 5, 1000));
}

/* A tiny deterministic generator for the jitter scenario (xorshift64*). */
static uint64_t test_rng(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

#define JITTER_PACKETS 2000u

/* Runs JITTER_PACKETS packets, one every 232 us (1,452 B at 50 Mbit/s), over a 20 ms path
 * whose delay varies uniformly by up to 3 ms (the seed's jitter rows), nothing dropped.
 * Every arrival is acknowledged at once.  Returns how many packets loss detection
 * declares lost (all of them spurious).  count_rule_always: keep the 3-packet rule on
 * after reordering is seen (what we do not do). */
static unsigned jitter_declared_lost(int count_rule_always) {
    static uint64_t sent_ns[JITTER_PACKETS], arrive_ns[JITTER_PACKETS];
    static uint8_t acked[JITTER_PACKETS], lost[JITTER_PACKETS];
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (unsigned i = 0; i < JITTER_PACKETS; i++) {
        sent_ns[i] = (uint64_t)i * 232 * US;
        arrive_ns[i] = sent_ns[i] + 20 * MS + test_rng(&seed) % (3 * MS);
        acked[i] = lost[i] = 0;
    }
    pl_rack k;
    pl_rack_init(&k);
    pl_rtt r;
    pl_rtt_init(&r, 0);
    uint64_t largest = PL_RACK_PN_NONE;
    unsigned declared = 0;
    for (unsigned n = 0; n < JITTER_PACKETS; n++) {
        /* The next arrival (ties broken by packet number). */
        unsigned pn = JITTER_PACKETS;
        for (unsigned i = 0; i < JITTER_PACKETS; i++)
            if (!acked[i] && (pn == JITTER_PACKETS || arrive_ns[i] < arrive_ns[pn])) pn = i;
        uint64_t now = arrive_ns[pn];
        acked[pn] = 1;
        if (lost[pn]) pl_rack_on_spurious(&k, JITTER_PACKETS);
        pl_rack_on_acked(&k, pn, sent_ns[pn], now, largest);
        if (largest == PL_RACK_PN_NONE || pn > largest) {
            largest = pn;
            pl_rtt_on_sample(&r, now - sent_ns[pn], 0, 0);
        }
        uint64_t wnd = pl_rack_reo_wnd_ns(&k, &r, 0);
        for (unsigned i = 0; i < pn; i++) {
            if (acked[i] || lost[i]) continue;
            int by_count = count_rule_always ? largest >= i + PL_RACK_PACKET_THRESHOLD
                                             : pl_rack_lost_by_count(&k, i, largest);
            if (by_count || pl_rack_lost_by_time(&k, i, sent_ns[i], wnd, now)) {
                lost[i] = 1;
                declared++;
            }
        }
    }
    return declared;
}

static void rack_jitter_is_not_loss(void) {
    unsigned ours = jitter_declared_lost(0);
    unsigned count_rule = jitter_declared_lost(1);
    fprintf(stderr, "  3 ms jitter, 2000 packets, no drops: declared lost %u (ours), %u (3-packet rule kept)\n",
            ours, count_rule);
    /* Before the first reordering is seen the 3-packet rule may fire once or twice; after
     * that, the time window (5 ms > 3 ms of jitter) declares nothing. */
    CHECK(ours <= 2);
    CHECK(count_rule > 100);
}

/* ---------------------------------------------------------------- a flow in virtual time */

/* A window-limited flow: packets of MSS bytes, each acknowledged one RTT after it was
 * sent, acks spaced so that one window is acknowledged per RTT. */
typedef struct flow {
    pl_cc cc;
    pl_rtt rtt;
    uint64_t rtt_ns;
    uint64_t now;
} flow;

static void flow_init(flow *f, uint32_t algo, uint64_t rtt_ns) {
    pl_cc_init(&f->cc, algo, MSS);
    f->rtt = rtt_steady(rtt_ns);
    f->rtt_ns = rtt_ns;
    f->now = 10 * SEC;
}

static int flow_ack(flow *f, int app_limited) {
    uint64_t cwnd = pl_cc_cwnd(&f->cc);
    f->now += f->rtt_ns * MSS / cwnd;
    uint64_t in_flight = app_limited ? cwnd / 2 : cwnd;
    return pl_cc_on_acked(&f->cc, MSS, f->now - f->rtt_ns, f->now, &f->rtt, in_flight, app_limited);
}

static void flow_run_until(flow *f, uint64_t until_ns, int app_limited) {
    while (f->now < until_ns) flow_ack(f, app_limited);
}

static void flow_grow_to(flow *f, uint64_t cwnd_bytes) {
    while (pl_cc_cwnd(&f->cc) < cwnd_bytes) flow_ack(f, 0);
}

/* A packet sent half an RTT ago is declared lost now. */
static uint32_t flow_lose(flow *f) {
    return pl_cc_on_lost(&f->cc, MSS, f->now - f->rtt_ns / 2, f->now);
}

/* ---------------------------------------------------------------- NewReno (RFC 9002 §7) */

static void newreno_slow_start(void) {
    flow f;
    flow_init(&f, PURE_LINK_CC_NEWRENO, 100 * MS);
    CHECK_EQ_U(pl_cc_cwnd(&f.cc), PKTS(10));
    CHECK(pl_cc_in_slow_start(&f.cc));
    /* Every acknowledged byte adds a byte: one window acknowledged doubles it. */
    for (int i = 0; i < 10; i++) flow_ack(&f, 0);
    CHECK_EQ_U(pl_cc_cwnd(&f.cc), PKTS(20));
    for (int i = 0; i < 20; i++) flow_ack(&f, 0);
    CHECK_EQ_U(pl_cc_cwnd(&f.cc), PKTS(40));
    /* An application-limited flight below the window does not grow it ... */
    for (int i = 0; i < 20; i++) flow_ack(&f, 1);
    CHECK_EQ_U(pl_cc_cwnd(&f.cc), PKTS(40));
    /* ... but an application-limited packet of a full window does. */
    f.now += MS;
    pl_cc_on_acked(&f.cc, MSS, f.now - f.rtt_ns, f.now, &f.rtt, PKTS(40), 1);
    CHECK_EQ_U(pl_cc_cwnd(&f.cc), PKTS(41));
}

static void newreno_one_reduction_per_episode(void) {
    flow f;
    flow_init(&f, PURE_LINK_CC_NEWRENO, 100 * MS);
    flow_grow_to(&f, PKTS(40));
    uint64_t start = f.now;
    CHECK_EQ_U(flow_lose(&f), 1);
    CHECK_EQ_U(pl_cc_cwnd(&f.cc), PKTS(20));
    CHECK_EQ_U(pl_cc_ssthresh(&f.cc), PKTS(20));
    CHECK(pl_cc_in_recovery(&f.cc, start));
    CHECK(!pl_cc_in_recovery(&f.cc, start + 1));
    CHECK(pl_cc_recovering(&f.cc));
    /* More losses of packets sent before the episode began: the same episode. */
    f.now += 5 * MS;
    CHECK_EQ_U(pl_cc_on_lost(&f.cc, MSS, start - 10 * MS, f.now), 1);
    CHECK_EQ_U(pl_cc_on_lost(&f.cc, MSS, start, f.now), 1);
    CHECK_EQ_U(pl_cc_cwnd(&f.cc), PKTS(20));
    CHECK_EQ_U(f.cc.congestion_events, 1);
    CHECK_EQ_U(f.cc.episode.lost_packets, 3);
    /* Acks of packets sent before it do not grow the window and do not end it. */
    CHECK_EQ_U(pl_cc_on_acked(&f.cc, MSS, start - 1, f.now, &f.rtt, PKTS(20), 0), 0);
    CHECK_EQ_U(pl_cc_cwnd(&f.cc), PKTS(20));
    /* The first ack of a packet sent after it ends the recovery period, once. */
    f.now = start + 100 * MS;
    CHECK(pl_cc_recovering(&f.cc));
    CHECK_EQ_U(pl_cc_on_acked(&f.cc, MSS, start + 1, f.now, &f.rtt, PKTS(20), 0), 1);
    CHECK(!pl_cc_recovering(&f.cc));
    CHECK_EQ_U(pl_cc_on_acked(&f.cc, MSS, start + 2, f.now, &f.rtt, PKTS(20), 0), 0);
    /* A loss of a packet sent after the episode began: a new episode, a new reduction. */
    CHECK_EQ_U(pl_cc_on_lost(&f.cc, MSS, start + 1, f.now), 2);
    CHECK_EQ_U(pl_cc_cwnd(&f.cc), PKTS(10));
    CHECK_EQ_U(f.cc.congestion_events, 2);
    /* Never below 2 datagrams. */
    for (int i = 0; i < 10; i++) {
        f.now += 200 * MS;
        pl_cc_on_lost(&f.cc, MSS, f.now - 50 * MS, f.now);
    }
    CHECK_EQ_U(pl_cc_cwnd(&f.cc), PKTS(2));
}

static void newreno_avoidance_one_datagram_per_rtt(void) {
    flow f;
    flow_init(&f, PURE_LINK_CC_NEWRENO, 100 * MS);
    flow_grow_to(&f, PKTS(40));
    flow_lose(&f);
    uint64_t start = f.now;
    CHECK_EQ_U(pl_cc_cwnd(&f.cc), PKTS(20));
    /* Ten round trips after recovery (packets sent after the episode began), each
     * acknowledging one whole window: one datagram more per round trip. */
    f.now = start + 100 * MS;
    for (int round = 0; round < 10; round++) {
        uint64_t n = pl_cc_cwnd(&f.cc) / MSS;
        for (uint64_t i = 0; i < n; i++) {
            f.now += MS;
            pl_cc_on_acked(&f.cc, MSS, f.now - 100 * MS, f.now, &f.rtt, pl_cc_cwnd(&f.cc), 0);
        }
        CHECK_EQ_U(pl_cc_cwnd(&f.cc), PKTS(21 + round));
    }
}

/* ---------------------------------------------------------------- CUBIC (RFC 9438) */

static void cubic_reduction_is_beta(void) {
    flow f;
    flow_init(&f, PURE_LINK_CC_CUBIC, 100 * MS);
    flow_grow_to(&f, PKTS(100));
    CHECK_EQ_U(pl_cc_cwnd(&f.cc), PKTS(100));
    flow_lose(&f);
    /* cwnd = ssthresh = 0.7 W; W_max = W (no earlier plateau, so no fast convergence). */
    CHECK_EQ_U(pl_cc_cwnd(&f.cc), PKTS(70));
    CHECK_EQ_U(pl_cc_ssthresh(&f.cc), PKTS(70));
    CHECK_EQ_U(f.cc.state.algo.cubic.w_max_bytes, PKTS(100));
    /* K = cbrt(W_max (1 - beta) / C) = cbrt(100 * 0.3 / 0.4) = cbrt(75) = 4.2172 s. */
    CHECK_EQ_U(pl_cubic_k_ms(PKTS(100), PKTS(70), MSS), 4217);
    /* Other points of the same formula: cbrt(300 / 0.4) = 9.0856 s; a fall of 400
     * datagrams takes cbrt(400 / 0.4) = 10 s exactly; no fall, no wait. */
    CHECK_EQ_U(pl_cubic_k_ms(PKTS(1000), PKTS(700), MSS), 9085);
    CHECK_EQ_U(pl_cubic_k_ms(PKTS(1400), PKTS(1000), MSS), 10000);
    CHECK_EQ_U(pl_cubic_k_ms(PKTS(10), PKTS(10), MSS), 0);
}

/* cwnd at each step_ns from the epoch start for `steps` steps. */
static void cubic_trace(flow *f, uint64_t step_ns, unsigned steps, uint64_t *out) {
    const pl_cc_cubic *c = &f->cc.state.algo.cubic;
    for (unsigned i = 0; i < steps; i++) {
        flow_run_until(f, c->epoch_start_ns + (i + 1) * step_ns, 0);
        out[i] = pl_cc_cwnd(&f->cc);
    }
}

static void cubic_concave_then_convex_reaches_w_max_at_k(void) {
    flow f;
    flow_init(&f, PURE_LINK_CC_CUBIC, 100 * MS);
    flow_grow_to(&f, PKTS(100));
    flow_lose(&f);
    /* Recovery lasts one RTT; the epoch begins with the first ack after it. */
    flow_run_until(&f, f.now + 100 * MS, 0);
    flow_ack(&f, 0);
    const pl_cc_cubic *c = &f.cc.state.algo.cubic;
    CHECK(c->has_epoch);
    CHECK_EQ_U(c->k_ms, 4217);
    uint64_t w[80]; /* cwnd every 100 ms for 8 s */
    cubic_trace(&f, 100 * MS, 80, w);
    /* Concave: the first second climbs far more than the second before K. */
    uint64_t early = w[9] - PKTS(70), late = w[41] - w[31];
    fprintf(stderr, "  cwnd (datagrams): 1 s %.1f, 2 s %.1f, 3 s %.1f, 4 s %.1f, 4.2 s %.1f, 5 s %.1f, 6 s %.1f, 8 s %.1f\n",
            w[9] / (double)MSS, w[19] / (double)MSS, w[29] / (double)MSS, w[39] / (double)MSS,
            w[41] / (double)MSS, w[49] / (double)MSS, w[59] / (double)MSS, w[79] / (double)MSS);
    CHECK(early > 4 * late);
    /* The target looks one RTT ahead (W_cubic(t + RTT)) and each window of acks closes
     * the gap to it, so cwnd keeps up with the curve itself: at 1 s, W_cubic(1 s) =
     * 100 - 0.4 * 3.217^3 = 86.7 datagrams, within half a datagram. */
    uint64_t curve = pl_cubic_w_bytes(c, MSS, 1000);
    CHECK(w[9] + MSS / 2 >= curve && w[9] <= curve + MSS / 2);
    /* Reaches W_max at K: the first 100 ms step at or above it is within 0.1 s of K. */
    unsigned hit = 0;
    while (hit < 80 && w[hit] < PKTS(100)) hit++;
    uint64_t hit_ms = (hit + 1) * 100;
    fprintf(stderr, "  W_max reached %llu ms after the epoch began; K = 4217 ms\n", (unsigned long long)hit_ms);
    CHECK(hit_ms + 100 >= 4217 && hit_ms <= 4217 + 100);
    /* It stays near the plateau around K: within 1 datagram from 3.7 s to 4.7 s. */
    for (unsigned i = 36; i <= 46; i++) CHECK(w[i] + MSS >= PKTS(100) && w[i] <= PKTS(101));
    /* Convex: each second after K climbs more than the one before. */
    uint64_t d1 = w[51] - w[41], d2 = w[61] - w[51], d3 = w[71] - w[61];
    CHECK(d2 > d1 && d3 > d2);
    /* W_cubic(K + 3.8 s) = 100 + 0.4 * 3.8^3 = 121.9 datagrams (cwnd leads by about an RTT). */
    CHECK(w[79] >= PKTS(120) && w[79] <= PKTS(125));
}

static void cubic_fast_convergence(void) {
    flow f;
    flow_init(&f, PURE_LINK_CC_CUBIC, 100 * MS);
    flow_grow_to(&f, PKTS(100));
    flow_lose(&f);
    flow_run_until(&f, f.now + 150 * MS, 0);
    /* A second congestion event at 90 datagrams, below the plateau of 100: the flow's
     * share shrank, so W_max = 90 * (1 + 0.7) / 2 = 76.5 datagrams. */
    flow_grow_to(&f, PKTS(90));
    uint64_t w = pl_cc_cwnd(&f.cc);
    flow_lose(&f);
    CHECK_EQ_U(f.cc.state.algo.cubic.w_max_bytes, w * 17 / 20);
    CHECK_EQ_U(pl_cc_cwnd(&f.cc), w * 7 / 10);
    /* A third event above the (lowered) plateau: W_max = cwnd, no convergence. */
    flow_run_until(&f, f.now + 150 * MS, 0);
    flow_grow_to(&f, PKTS(80));
    w = pl_cc_cwnd(&f.cc);
    CHECK(w > f.cc.state.algo.cubic.w_max_bytes);
    flow_lose(&f);
    CHECK_EQ_U(f.cc.state.algo.cubic.w_max_bytes, w);
}

static void cubic_reno_friendly_at_small_rtt(void) {
    flow f;
    flow_init(&f, PURE_LINK_CC_CUBIC, 1 * MS);
    flow_grow_to(&f, PKTS(100));
    flow_lose(&f);
    flow_run_until(&f, f.now + 1 * MS, 0);
    flow_ack(&f, 0);
    const pl_cc_cubic *c = &f.cc.state.algo.cubic;
    uint64_t epoch = c->epoch_start_ns;
    /* At 1 ms the cubic curve barely moves in 50 ms (W_cubic(0.05 s) = 71.06 datagrams);
     * Reno's estimate grows 9/17 datagram per RTT: 70 + 50 * 9/17 = 96.5 datagrams. */
    flow_run_until(&f, epoch + 50 * MS, 0);
    uint64_t cubic_w = pl_cubic_w_bytes(c, MSS, 50);
    fprintf(stderr, "  RTT 1 ms, 50 ms after the epoch: cwnd %.1f, W_cubic %.1f, W_est %.1f datagrams\n",
            pl_cc_cwnd(&f.cc) / (double)MSS, cubic_w / (double)MSS, c->w_est_bytes / (double)MSS);
    CHECK(cubic_w < PKTS(72));
    CHECK(pl_cc_cwnd(&f.cc) >= PKTS(94) && pl_cc_cwnd(&f.cc) <= PKTS(99));
    CHECK_EQ_U(pl_cc_cwnd(&f.cc), c->w_est_bytes);
    /* Once W_est passes the window of the last reduction (100), alpha is 1: one datagram
     * per RTT.  100 is reached after 30 / (9/17) = 56.7 RTTs; at 100 ms: 100 + 43.3. */
    flow_run_until(&f, epoch + 100 * MS, 0);
    CHECK(pl_cc_cwnd(&f.cc) >= PKTS(140) && pl_cc_cwnd(&f.cc) <= PKTS(146));
}

static void cubic_app_limited_time_is_skipped(void) {
    flow a, b;
    flow_init(&a, PURE_LINK_CC_CUBIC, 100 * MS);
    flow_grow_to(&a, PKTS(100));
    flow_lose(&a);
    flow_run_until(&a, a.now + 100 * MS, 0);
    b = a;
    /* a: 2 s of window-limited acks.  b: 1 s, then 5 s application-limited, then 1 s. */
    flow_run_until(&a, a.now + 2 * SEC, 0);
    flow_run_until(&b, b.now + 1 * SEC, 0);
    uint64_t paused = pl_cc_cwnd(&b.cc);
    flow_run_until(&b, b.now + 5 * SEC, 1);
    CHECK_EQ_U(pl_cc_cwnd(&b.cc), paused);
    flow_run_until(&b, b.now + 1 * SEC, 0);
    /* The pause did not count as time on the curve: b is where a is (within a datagram),
     * not 5 s further up the curve (which would be well past W_max). */
    uint64_t wa = pl_cc_cwnd(&a.cc), wb = pl_cc_cwnd(&b.cc);
    CHECK(wa + MSS >= wb && wb + MSS >= wa);
    CHECK(wb < PKTS(100));
}

/* Slow start in rounds: round r's acks arrive over its RTT rtts[r], each for a packet
 * sent one RTT earlier (in round r - 1).  Stops at `rounds` or when slow start ends.
 * Returns the rounds run; *css_cwnd is the window when CSS was first entered. */
static int hystart_rounds(pl_cc *cc, const uint64_t *rtts, int rounds, uint64_t *css_cwnd, int *saw_css) {
    pl_rtt r = rtt_steady(rtts[0]);
    uint64_t start = 10 * SEC;
    int round = 0;
    for (; round < rounds && pl_cc_in_slow_start(cc); round++) {
        if (round > 0) start += rtts[round];
        uint64_t n = pl_cc_cwnd(cc) / MSS;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t now = start + i * (rtts[round] / n);
            pl_cc_on_acked(cc, MSS, now - rtts[round], now, &r, pl_cc_cwnd(cc), 0);
            int css = cc->state.algo.cubic.hystart.state == PL_HYSTART_CSS;
            if (css && !*saw_css) *css_cwnd = pl_cc_cwnd(cc);
            *saw_css |= css;
        }
    }
    return round;
}

static void cubic_hystart_leaves_slow_start_on_delay(void) {
    pl_cc cc;
    pl_cc_init(&cc, PURE_LINK_CC_CUBIC, MSS);
    /* Rounds of 20 ms while the queue is empty; from round 4 the queue adds 10 ms. */
    uint64_t rtts[40];
    for (int i = 0; i < 40; i++) rtts[i] = i < 4 ? 20 * MS : 30 * MS;
    uint64_t css_cwnd = 0;
    int saw_css = 0;
    int rounds = hystart_rounds(&cc, rtts, 40, &css_cwnd, &saw_css);
    fprintf(stderr, "  HyStart++: CSS entered at %.2f datagrams; slow start left in round %d at %.2f\n",
            css_cwnd / (double)MSS, rounds - 1, pl_cc_ssthresh(&cc) / (double)MSS);
    /* 10, 20, 40, 80, 160 datagrams after the 20 ms rounds.  In round 4 the 8th sample
     * (30 ms >= 20 + max(20/8, 4) ms) enters CSS: 160 + 7 + 1/4 datagrams. */
    CHECK(saw_css);
    CHECK_EQ_U(css_cwnd, PKTS(167) + MSS / 4);
    /* CSS grows a quarter datagram per ack: the rest of round 4 (152 acks) and rounds 5-8
     * (205, 256, 320, 400 acks); at round 9's first ack, 5 CSS rounds are done and
     * ssthresh = cwnd: (167 + 1334 / 4) datagrams = 726,726 B, without a single loss. */
    CHECK_EQ_U(rounds, 10);
    CHECK(!pl_cc_in_slow_start(&cc));
    CHECK_EQ_U(pl_cc_ssthresh(&cc), 726726);
    CHECK_EQ_U(cc.congestion_events, 0);
    /* Plain slow start would have reached 2,560 datagrams by then. */
    CHECK(pl_cc_cwnd(&cc) < PKTS(520));
}

static void cubic_hystart_jitter_returns_to_slow_start(void) {
    pl_cc cc;
    pl_cc_init(&cc, PURE_LINK_CC_CUBIC, MSS);
    /* 20 ms, 20 ms, then one 30 ms round (a delay spike), then 20 ms again. */
    const uint64_t rtts[5] = {20 * MS, 20 * MS, 30 * MS, 20 * MS, 20 * MS};
    uint64_t css_cwnd = 0;
    int saw_css = 0;
    hystart_rounds(&cc, rtts, 5, &css_cwnd, &saw_css);
    CHECK(saw_css);
    CHECK_EQ_U(cc.state.algo.cubic.hystart.state, PL_HYSTART_SLOW_START);
    CHECK(pl_cc_in_slow_start(&cc));
}

/* ---------------------------------------------------------------- undo (the seed's rule) */

static const uint32_t algos[2] = {PURE_LINK_CC_CUBIC, PURE_LINK_CC_NEWRENO};

static void undo_all_spurious_restores(void) {
    for (int a = 0; a < 2; a++) {
        flow f;
        flow_init(&f, algos[a], 100 * MS);
        flow_grow_to(&f, PKTS(40));
        flow_lose(&f);
        flow_run_until(&f, f.now + 150 * MS, 0); /* leave recovery; CUBIC has an epoch */
        flow_grow_to(&f, PKTS(36));
        uint64_t before = pl_cc_cwnd(&f.cc);
        pl_cc_state saved = f.cc.state;
        uint64_t start = f.now;
        uint32_t e = pl_cc_on_lost(&f.cc, MSS, start - 30 * MS, start);
        CHECK_EQ_U(pl_cc_on_lost(&f.cc, MSS, start - 20 * MS, start + 1 * MS), e);
        CHECK_EQ_U(pl_cc_on_lost(&f.cc, MSS, start - 10 * MS, start + 2 * MS), e);
        CHECK(pl_cc_cwnd(&f.cc) < before);
        pl_cc_on_spurious(&f.cc, e, start + 5 * MS);
        pl_cc_on_spurious(&f.cc, e, start + 6 * MS);
        CHECK(pl_cc_cwnd(&f.cc) < before);
        CHECK_EQ_U(f.cc.congestion_undos, 0);
        /* The third and last loss of the episode arrives late: the reduction is undone,
         * exactly: window, threshold and the algorithm's own state. */
        pl_cc_on_spurious(&f.cc, e, start + 7 * MS);
        CHECK_EQ_U(pl_cc_cwnd(&f.cc), before);
        CHECK_EQ_U(f.cc.state.cwnd_bytes, saved.cwnd_bytes);
        CHECK_EQ_U(f.cc.state.ssthresh_bytes, saved.ssthresh_bytes);
        if (algos[a] == PURE_LINK_CC_CUBIC) {
            const pl_cc_cubic *now_c = &f.cc.state.algo.cubic, *was = &saved.algo.cubic;
            CHECK_EQ_U(now_c->w_max_bytes, was->w_max_bytes);
            CHECK_EQ_U(now_c->k_ms, was->k_ms);
            CHECK_EQ_U(now_c->epoch_start_ns, was->epoch_start_ns);
            CHECK_EQ_U(now_c->w_est_bytes, was->w_est_bytes);
            CHECK_EQ_U(now_c->has_epoch, 1);
        }
        CHECK_EQ_U(f.cc.congestion_undos, 1);
        CHECK_EQ_U(f.cc.spurious_losses, 3);
        CHECK(!pl_cc_in_recovery(&f.cc, start - 30 * MS));
    }
}

static void undo_partially_spurious_does_not_restore(void) {
    for (int a = 0; a < 2; a++) {
        flow f;
        flow_init(&f, algos[a], 100 * MS);
        flow_grow_to(&f, PKTS(40));
        uint64_t start = f.now;
        uint32_t e = pl_cc_on_lost(&f.cc, MSS, start - 30 * MS, start);
        pl_cc_on_lost(&f.cc, MSS, start - 20 * MS, start);
        pl_cc_on_lost(&f.cc, MSS, start - 10 * MS, start);
        uint64_t reduced = pl_cc_cwnd(&f.cc);
        /* Two of three arrive late; the third was genuinely lost (never acknowledged). */
        pl_cc_on_spurious(&f.cc, e, start + 5 * MS);
        pl_cc_on_spurious(&f.cc, e, start + 6 * MS);
        CHECK_EQ_U(pl_cc_cwnd(&f.cc), reduced);
        flow_run_until(&f, start + 2 * SEC, 0);
        CHECK_EQ_U(f.cc.congestion_undos, 0);
        CHECK(pl_cc_cwnd(&f.cc) < PKTS(40));
    }
}

static void undo_never_restores_an_earlier_episode(void) {
    for (int a = 0; a < 2; a++) {
        flow f;
        flow_init(&f, algos[a], 100 * MS);
        flow_grow_to(&f, PKTS(40));
        /* Episode A: a genuine loss at 40 datagrams. */
        uint32_t ea = flow_lose(&f);
        uint64_t after_a = pl_cc_cwnd(&f.cc);
        flow_run_until(&f, f.now + 150 * MS, 0);
        flow_grow_to(&f, after_a + 3 * MSS);
        /* Episode B: one loss that turns out late. */
        uint64_t before_b = pl_cc_cwnd(&f.cc);
        uint32_t eb = flow_lose(&f);
        CHECK(eb != ea);
        CHECK(pl_cc_cwnd(&f.cc) < before_b);
        pl_cc_on_spurious(&f.cc, eb, f.now + 10 * MS);
        /* Undoing B brings back B's own reduction, never A's: the window is what it was
         * just before B, far below the 40 datagrams of before A (ngtcp2 would restore
         * those: the seed's 22 of 34 restores). */
        CHECK_EQ_U(pl_cc_cwnd(&f.cc), before_b);
        CHECK(pl_cc_cwnd(&f.cc) < PKTS(40));
        CHECK_EQ_U(f.cc.congestion_undos, 1);
        /* A late ack for A's packet (if the sender had kept it) changes nothing: A is
         * not the current episode. */
        pl_cc_on_spurious(&f.cc, ea, f.now + 20 * MS);
        CHECK_EQ_U(pl_cc_cwnd(&f.cc), before_b);
        CHECK_EQ_U(f.cc.congestion_undos, 1);
        /* Nor can B be undone twice. */
        uint32_t ec = flow_lose(&f);
        pl_cc_on_spurious(&f.cc, eb, f.now + 30 * MS);
        CHECK(pl_cc_cwnd(&f.cc) < before_b);
        CHECK(ec != eb);
    }
}

static void persistent_congestion_collapses(void) {
    for (int a = 0; a < 2; a++) {
        flow f;
        flow_init(&f, algos[a], 100 * MS);
        flow_grow_to(&f, PKTS(40));
        uint32_t e = flow_lose(&f);
        uint64_t ssthresh = pl_cc_ssthresh(&f.cc);
        pl_cc_on_persistent_congestion(&f.cc, f.now);
        CHECK_EQ_U(pl_cc_cwnd(&f.cc), PKTS(2));
        CHECK_EQ_U(pl_cc_ssthresh(&f.cc), ssthresh);
        CHECK_EQ_U(f.cc.persistent_congestions, 1);
        /* Not undone even if its loss turns out late. */
        pl_cc_on_spurious(&f.cc, e, f.now + MS);
        CHECK_EQ_U(pl_cc_cwnd(&f.cc), PKTS(2));
        CHECK_EQ_U(f.cc.congestion_undos, 0);
        /* Slow start again up to ssthresh, with no recovery period in the way. */
        CHECK(pl_cc_in_slow_start(&f.cc));
        CHECK(!pl_cc_in_recovery(&f.cc, 0));
        for (int i = 0; i < 2; i++) flow_ack(&f, 0);
        CHECK_EQ_U(pl_cc_cwnd(&f.cc), PKTS(4));
    }
}

/* ---------------------------------------------------------------- pacer */

static void pacer_spreads_a_window_over_the_rtt(void) {
    pl_pacer p;
    uint64_t now = 5 * SEC;
    pl_pacer_init(&p, MSS, now);
    /* 100 datagrams per 100 ms = 1,452,000 B/s: one datagram a millisecond. */
    pl_pacer_set_rate(&p, PKTS(100) * 10, now);
    uint64_t t[100];
    for (int i = 0; i < 100; i++) {
        now = pl_pacer_next_send_ns(&p, now, MSS);
        t[i] = now;
        pl_pacer_on_sent(&p, MSS, now);
    }
    /* The burst goes at once; the rest one per millisecond; the window fits in 90 ms. */
    for (int i = 0; i < 10; i++) CHECK_EQ_U(t[i], 5 * SEC);
    for (int i = 10; i < 100; i++) CHECK_EQ_U(t[i] - t[i - 1], 1 * MS);
    CHECK_EQ_U(t[99] - t[0], 90 * MS);
}

static void pacer_allows_the_burst_after_idle(void) {
    pl_pacer p;
    uint64_t now = 0;
    pl_pacer_init(&p, MSS, now);
    pl_pacer_set_rate(&p, PKTS(1000), now); /* 1 datagram a millisecond */
    for (int i = 0; i < 30; i++) {
        now = pl_pacer_next_send_ns(&p, now, MSS);
        pl_pacer_on_sent(&p, MSS, now);
    }
    /* A second idle earns at most the burst: 10 datagrams at once, the 11th waits. */
    now += 1 * SEC;
    for (int i = 0; i < 10; i++) {
        CHECK_EQ_U(pl_pacer_next_send_ns(&p, now, MSS), now);
        pl_pacer_on_sent(&p, MSS, now);
    }
    CHECK_EQ_U(pl_pacer_next_send_ns(&p, now, MSS), now + 1 * MS);
    /* Half a millisecond later, half the wait remains. */
    CHECK_EQ_U(pl_pacer_next_send_ns(&p, now + 500 * US, MSS), now + 1 * MS);
    /* A smaller packet needs less credit. */
    CHECK_EQ_U(pl_pacer_next_send_ns(&p, now, MSS / 2), now + 500 * US);
}

static void pacer_burst_is_a_millisecond_of_a_high_rate(void) {
    pl_pacer p;
    uint64_t now = 0;
    pl_pacer_init(&p, MSS, now);
    /* 40 datagrams a millisecond: after an idle second, 40 go at once, the 41st waits. */
    pl_pacer_set_rate(&p, PKTS(40000), now);
    now += 1 * SEC;
    for (int i = 0; i < 40; i++) {
        CHECK_EQ_U(pl_pacer_next_send_ns(&p, now, MSS), now);
        pl_pacer_on_sent(&p, MSS, now);
    }
    CHECK(pl_pacer_next_send_ns(&p, now, MSS) > now);
    /* 1,000 datagrams a millisecond: the burst stops at 64. */
    pl_pacer_set_rate(&p, PKTS(1000000), now);
    now += 1 * SEC;
    for (int i = 0; i < 64; i++) {
        CHECK_EQ_U(pl_pacer_next_send_ns(&p, now, MSS), now);
        pl_pacer_on_sent(&p, MSS, now);
    }
    CHECK(pl_pacer_next_send_ns(&p, now, MSS) > now);
    /* Back to a low rate: the burst shrinks to 10 and the credit with it. */
    pl_pacer_set_rate(&p, PKTS(1000), now + 1 * SEC);
    now += 2 * SEC;
    for (int i = 0; i < 10; i++) {
        CHECK_EQ_U(pl_pacer_next_send_ns(&p, now, MSS), now);
        pl_pacer_on_sent(&p, MSS, now);
    }
    CHECK_EQ_U(pl_pacer_next_send_ns(&p, now, MSS), now + 1 * MS);
}

static void pacer_rate_and_gain(void) {
    /* cwnd / srtt * gain: 145,200 B / 100 ms = 1,452,000 B/s; x2 in slow start, x1.25 after. */
    CHECK_EQ_U(pl_pacer_rate_bytes_per_s(PKTS(100), 100 * MS, 1), 2904000);
    CHECK_EQ_U(pl_pacer_rate_bytes_per_s(PKTS(100), 100 * MS, 0), 1815000);
    CHECK_EQ_U(pl_pacer_rate_bytes_per_s(PL_CC_WINDOW_MOST_BYTES * 4, 1, 0), PL_PACER_RATE_MOST);
    /* Unpaced (no rate): every packet may go now. */
    pl_pacer p;
    pl_pacer_init(&p, MSS, 0);
    for (int i = 0; i < 100; i++) {
        CHECK_EQ_U(pl_pacer_next_send_ns(&p, 7, MSS), 7);
        pl_pacer_on_sent(&p, MSS, 7);
    }
    /* A rate change keeps credit earned at the old rate. */
    pl_pacer_init(&p, MSS, 0);
    pl_pacer_set_rate(&p, PKTS(1000), 0);
    for (int i = 0; i < 10; i++) pl_pacer_on_sent(&p, MSS, 0); /* credit spent */
    pl_pacer_set_rate(&p, PKTS(1000) / 2, 1 * MS);           /* 1 datagram earned */
    CHECK_EQ_U(pl_pacer_next_send_ns(&p, 1 * MS, MSS), 1 * MS);
    pl_pacer_on_sent(&p, MSS, 1 * MS);
    CHECK_EQ_U(pl_pacer_next_send_ns(&p, 1 * MS, MSS), 3 * MS);
}

TEST_MAIN(TEST_CASE(rtt_first_sample), TEST_CASE(rtt_later_samples), TEST_CASE(rtt_ack_delay_capped),
          TEST_CASE(rtt_min_not_adjusted_by_ack_delay), TEST_CASE(rtt_pto),
          TEST_CASE(rack_reo_wnd_before_reordering), TEST_CASE(rack_reo_wnd_after_reordering),
          TEST_CASE(rack_frame_order_is_not_reordering), TEST_CASE(rack_reo_wnd_grows_on_spurious_capped_at_srtt),
          TEST_CASE(rack_reo_wnd_resets_after_16_recoveries), TEST_CASE(rack_lost_by_time),
          TEST_CASE(rack_packet_threshold_disabled_after_reordering), TEST_CASE(rack_jitter_is_not_loss),
          TEST_CASE(newreno_slow_start), TEST_CASE(newreno_one_reduction_per_episode),
          TEST_CASE(newreno_avoidance_one_datagram_per_rtt), TEST_CASE(cubic_reduction_is_beta),
          TEST_CASE(cubic_concave_then_convex_reaches_w_max_at_k), TEST_CASE(cubic_fast_convergence),
          TEST_CASE(cubic_reno_friendly_at_small_rtt), TEST_CASE(cubic_app_limited_time_is_skipped),
          TEST_CASE(cubic_hystart_leaves_slow_start_on_delay), TEST_CASE(cubic_hystart_jitter_returns_to_slow_start),
          TEST_CASE(undo_all_spurious_restores), TEST_CASE(undo_partially_spurious_does_not_restore),
          TEST_CASE(undo_never_restores_an_earlier_episode), TEST_CASE(persistent_congestion_collapses),
          TEST_CASE(pacer_spreads_a_window_over_the_rtt), TEST_CASE(pacer_allows_the_burst_after_idle),
          TEST_CASE(pacer_burst_is_a_millisecond_of_a_high_rate),
          TEST_CASE(pacer_rate_and_gain))
