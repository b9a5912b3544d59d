/* cc_bbr.c: a model-based congestion controller of the BBR family (BBRv3 as
 * draft-ietf-ccwg-bbr describes it), written from the draft's description.
 *
 * The model: the bottleneck bandwidth (a windowed max of delivery-rate samples over two
 * ProbeBW cycles) and the path's round trip (a 10 s windowed min, refreshed by ProbeRTT).
 * The controller paces at gain * bw and caps the flight at cwnd_gain * bw * min_rtt plus an
 * allowance for ACK aggregation.  The states: Startup (double the rate per round until it
 * stops growing), Drain (empty Startup's queue), ProbeBW (DOWN, CRUISE, REFILL, UP: hold
 * the rate, probe above it now and then) and ProbeRTT (briefly shrink the flight to see the
 * bare RTT).
 *
 * Loss.  Loss below PL_BBR_LOSS_THRESH_PERCENT of a round's data is the path's noise and
 * changes nothing: that is what keeps the rate on a lossy path, where a loss-based
 * controller is held to the Mathis bound.  Loss above it means the flight was too high:
 * when it answers a probe, inflight_hi (the most the path took) falls to what was in
 * flight; outside probes each congested round cuts the lower bounds bw_lo and inflight_lo
 * to 70 % (never below what the round delivered).  These bounds are how a BBR flow yields
 * to a loss-based one that fills the queue.  But a loss-based flow that fills a drop-tail
 * queue takes nearly all the drops itself (its ACK-clocked bursts arrive at the full
 * queue; our paced packets seldom do), so our loss rate stays far below the threshold
 * while it backs off again and again.  A loss round with any loss whose every RTT sample
 * showed a standing queue is therefore congested too: it cuts inflight_lo (and, once per
 * ProbeBW cycle, inflight_hi) to 70 % as a CUBIC flow cuts its window, and bw_lo as the
 * draft's loss response does.  Two more rules keep the probing in step with such a flow:
 * probes come no more often than a CUBIC flow of our BDP regains its window (its K), and
 * UP, while inflight_hi caps the window, goes on raising it (1, 2, 4, ... datagrams per
 * round) until loss ends it, as the draft's UP does.  Random loss on an uncongested path
 * comes with no standing queue and still changes nothing.  Our loss rate is counted per
 * loss round from the losses the sender declares (pl_cc_bbr_on_lost) and the bytes it
 * acknowledges; the draft's per-sample rs.lost would need the sender to keep a lost count
 * per packet.
 *
 * The seed's undo rule: when every loss of an episode turns out late, the bounds return
 * to what they were when the episode began (pl_cc_bbr_undo).
 *
 * All arithmetic is integer and every input is a parameter, so runs repeat bit for bit;
 * the randomness of the probe timing comes from a generator in the state (pl_cc_seed). */
#include "cc.h"

#include <assert.h>
#include <stddef.h>

/* The generator's state when nobody seeds it (any non-zero constant). */
#define PL_BBR_SEED_DEFAULT 0x9e3779b97f4a7c15ull

_Static_assert(PL_CC_WINDOW_MOST_BYTES < UINT64_MAX / PL_BBR_NS_PER_S,
               "a product bw * ns that overflows 64 bits is far above the window's ceiling");
_Static_assert(PL_BBR_BW_MOST <= UINT64_MAX / PL_BBR_GAIN_STARTUP_PACING, "gain * bw fits");
_Static_assert(PL_BBR_MIN_PIPE_DATAGRAMS >= PL_CC_WINDOW_MINIMUM_DATAGRAMS, "BBR's floor is within cc.h's");

static uint64_t pl_min64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t pl_max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* bw * ns / 1e9 in bytes, at most the window's ceiling (a product that overflows is far
 * above it: see the assertion above). */
static uint64_t pl_bbr_volume(uint64_t bw, uint64_t ns) {
    if (ns != 0 && bw > UINT64_MAX / ns) return PL_CC_WINDOW_MOST_BYTES;
    return pl_min64(bw * ns / PL_BBR_NS_PER_S, PL_CC_WINDOW_MOST_BYTES);
}

static uint64_t pl_bbr_percent(uint64_t x, uint64_t percent) {
    assert(x <= UINT64_MAX / 1000);
    return x * percent / 100;
}

/* xorshift64*: the probe timing's randomness. */
static uint64_t pl_bbr_random(pl_cc_bbr *b) {
    uint64_t x = b->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    b->rng = x;
    return x * 2685821657736338717ull;
}

static uint64_t pl_bbr_min_pipe(const pl_cc_bbr *b) { return (uint64_t)PL_BBR_MIN_PIPE_DATAGRAMS * b->mss; }

static int pl_bbr_in_probe_bw(const pl_cc_bbr *b) {
    return b->mode >= PL_BBR_PROBE_BW_DOWN && b->mode <= PL_BBR_PROBE_BW_UP;
}

/* States that push the flight up to find the bandwidth: loss there is expected. */
static int pl_bbr_probing_bw(const pl_cc_bbr *b) {
    return b->mode == PL_BBR_STARTUP || b->mode == PL_BBR_PROBE_BW_REFILL || b->mode == PL_BBR_PROBE_BW_UP;
}

static uint32_t pl_bbr_pacing_gain(const pl_cc_bbr *b) {
    switch (b->mode) {
    case PL_BBR_STARTUP: return PL_BBR_GAIN_STARTUP_PACING;
    case PL_BBR_DRAIN: return PL_BBR_GAIN_DRAIN_PACING;
    case PL_BBR_PROBE_BW_DOWN: return PL_BBR_GAIN_DOWN_PACING;
    case PL_BBR_PROBE_BW_REFILL: return PL_BBR_GAIN_REFILL_PACING;
    case PL_BBR_PROBE_BW_UP: return PL_BBR_GAIN_UP_PACING;
    default: return PL_BBR_GAIN_CRUISE_PACING; /* CRUISE, PROBE_RTT */
    }
}

static uint32_t pl_bbr_cwnd_gain(const pl_cc_bbr *b) {
    if (b->mode == PL_BBR_STARTUP || b->mode == PL_BBR_DRAIN) return PL_BBR_GAIN_STARTUP_CWND;
    return b->mode == PL_BBR_PROBE_BW_UP ? PL_BBR_GAIN_UP_CWND : PL_BBR_GAIN_CWND;
}

/* ---- The model's volumes ---- */

/* gain * bw * min_rtt; before any RTT sample, the initial window. */
static uint64_t pl_bbr_bdp_multiple(const pl_cc_bbr *b, uint64_t bw, uint32_t gain) {
    if (b->min_rtt_ns == PL_BBR_NONE) return (uint64_t)PL_CC_WINDOW_INITIAL_DATAGRAMS * b->mss;
    return pl_bbr_percent(pl_bbr_volume(bw, b->min_rtt_ns), gain);
}

static uint64_t pl_bbr_send_quantum(const pl_cc_bbr *b) {
    uint64_t q = pl_bbr_volume(b->pacing_rate, PL_BBR_SEND_QUANTUM_NS);
    q = pl_min64(q, PL_BBR_SEND_QUANTUM_BYTES_MOST);
    return pl_max64(q, (uint64_t)PL_BBR_SEND_QUANTUM_DATAGRAMS_LEAST * b->mss);
}

/* Room for the pacer's bursts and the receiver's delayed ACKs on top of the BDP. */
static uint64_t pl_bbr_quantization_budget(const pl_cc_bbr *b, uint64_t inflight) {
    inflight = pl_max64(inflight, 3 * pl_bbr_send_quantum(b));
    inflight = pl_max64(inflight, pl_bbr_min_pipe(b));
    if (b->mode == PL_BBR_PROBE_BW_UP) inflight += 2ull * b->mss;
    return pl_min64(inflight, PL_CC_WINDOW_MOST_BYTES);
}

static uint64_t pl_bbr_inflight(const pl_cc_bbr *b, uint64_t bw, uint32_t gain) {
    return pl_bbr_quantization_budget(b, pl_bbr_bdp_multiple(b, bw, gain));
}

/* inflight_hi less the headroom left for other flows. */
static uint64_t pl_bbr_inflight_with_headroom(const pl_cc_bbr *b) {
    if (b->inflight_hi == PL_BBR_NONE) return PL_BBR_NONE;
    uint64_t headroom = pl_max64(b->mss, pl_bbr_percent(b->inflight_hi, PL_BBR_HEADROOM_PERCENT));
    uint64_t room = b->inflight_hi > headroom ? b->inflight_hi - headroom : 0;
    return pl_max64(room, pl_bbr_min_pipe(b));
}

static uint64_t pl_bbr_target_inflight(const pl_cc_state *s) {
    const pl_cc_bbr *b = &s->algo.bbr;
    return pl_min64(pl_bbr_bdp_multiple(b, b->bw, PL_BBR_GAIN_UNIT), s->cwnd_bytes);
}

static uint64_t pl_bbr_extra_acked(const pl_cc_bbr *b) {
    return pl_max64(b->extra_acked_slot[0], b->extra_acked_slot[1]);
}

/* ---- Rounds and the loss rate ---- */

static void pl_bbr_start_round(pl_cc_bbr *b) { b->next_round_delivered = b->delivered; }

static void pl_bbr_update_round(pl_cc_bbr *b, const pl_rate_sample *rs) {
    b->round_start = 0;
    if (rs->prior_delivered_bytes < b->next_round_delivered) return;
    pl_bbr_start_round(b);
    b->round_count++;
    b->rounds_since_bw_probe++;
    b->round_start = 1;
}

/* The flight was too high when this loss round has lost more than the threshold's share
 * of what was in flight when the acknowledged packet left. */
static int pl_bbr_too_high(const pl_cc_bbr *b, const pl_rate_sample *rs) {
    uint64_t tx = pl_max64(rs->tx_in_flight_bytes, b->mss);
    return b->loss_round_lost_bytes > 0 && b->loss_round_lost_bytes * 100 > tx * PL_BBR_LOSS_THRESH_PERCENT;
}

/* Even the least RTT sample of this loss round stood well above the min RTT: a queue stayed
 * (jitter raises some samples, not all of them). */
static int pl_bbr_queue_above(const pl_cc_bbr *b, uint64_t base_ns) {
    if (base_ns == PL_BBR_NONE || b->loss_round_rtt_min_ns == PL_BBR_NONE) return 0;
    return b->loss_round_rtt_min_ns > base_ns + base_ns / PL_BBR_QUEUE_LOSS_RTT_DIVISOR;
}

static int pl_bbr_standing_queue(const pl_cc_bbr *b) { return pl_bbr_queue_above(b, b->min_rtt_ns); }

/* What the loss round ending now delivered: its acknowledged bytes over its length, or 0
 * for a round shorter than the min RTT (as the rate sampler, a short span says more about
 * ACK bunching than about the path). */
static uint64_t pl_bbr_loss_round_rate(const pl_cc_bbr *b, uint64_t now_ns) {
    assert(now_ns >= b->loss_round_start_ns);
    uint64_t elapsed_ns = now_ns - b->loss_round_start_ns;
    if (b->min_rtt_ns == PL_BBR_NONE || elapsed_ns == 0 || elapsed_ns < b->min_rtt_ns) return 0;
    uint64_t acked = pl_min64(b->loss_round_acked_bytes, PL_CC_WINDOW_MOST_BYTES);
    return pl_min64(acked * PL_BBR_NS_PER_S / elapsed_ns, PL_BBR_BW_MOST);
}

/* The latest delivery signals, and the verdict on a loss round that ends here.  The round's
 * best rate and volume take every packet's own sample, not one per ACK frame: how many
 * packets an ACK covers is the receiver's choice (pl_rate_sample). */
static void pl_bbr_update_latest(pl_cc_bbr *b, const pl_rate_sample *rs, uint64_t now_ns) {
    b->bw_latest = pl_max64(b->bw_latest, rs->delivery_rate_best_bytes_per_s);
    b->inflight_latest = pl_max64(b->inflight_latest, rs->delivered_best_bytes);
    b->loss_round_acked_bytes += rs->newly_acked_bytes;
    if (rs->rtt_ns > 0) {
        b->loss_round_rtt_min_ns = pl_min64(b->loss_round_rtt_min_ns, rs->rtt_ns);
        b->rtt_least_ns = pl_min64(b->rtt_least_ns, rs->rtt_ns);
    }
    b->loss_round_start = 0;
    if (rs->prior_delivered_bytes < b->loss_round_delivered) return;
    b->loss_round_delivered = b->delivered;
    b->loss_round_start = 1;
    b->loss_round_bw = pl_bbr_loss_round_rate(b, now_ns);
    b->loss_round_start_ns = now_ns;
    /* Losses that ended Startup were answered there (inflight_hi, Drain): judged again at
     * the end of their loss round, in Drain, they cut bw_lo to the rate Startup had reached
     * when they came, and the sender paced below the path until the next probe, seconds
     * later (pl_bbr_check_startup_high_loss).  So were the losses of packets sent in
     * ProbeRTT, by its exit (pl_bbr_note_sending). */
    int answered = b->loss_round_answered || b->loss_round_of_probe_rtt;
    uint64_t lost = answered ? 0 : b->loss_round_lost_bytes, all = lost + b->loss_round_acked_bytes;
    b->loss_round_answered = 0;
    b->loss_round_congested = lost > 0 && lost * 100 > all * PL_BBR_LOSS_THRESH_PERCENT;
    int standing = pl_bbr_standing_queue(b);
    b->loss_round_queue_loss = lost > 0 && standing;
    /* A probe's packets meet the queue the probe built: it is another flow's only if it
     * stood before the probe too (pl_bbr_queue_cut_floor).  That queue is judged against
     * the least RTT of the run, not the min RTT filter: a queue that another flow keeps
     * from draining lifts the filter itself (ProbeRTT is skipped while each interval's
     * least sample stays within an eighth of the min, so the filter may take a value an
     * eighth higher every window).  Against the filter, it hid the queue it measures:
     * share beside one TCP CUBIC flow, RTT 100 ms, seed 2, the filter at 131..169 ms on a
     * 100.5 ms path, every round before a probe at 150..167 ms judged free of a queue, and
     * the floor took 17 of the 21 cuts of inflight_hi (share 0.742 over 240 s). */
    b->loss_round_own_queue = b->loss_round_of_probe && !b->queue_before_probe;
    if (!b->loss_round_of_probe && !b->loss_round_of_probe_rtt)
        b->queue_before_probe = (uint8_t)pl_bbr_queue_above(b, b->rtt_least_ns);
    b->loss_round_of_probe_rtt = b->sent_in_probe_rtt;
    b->loss_round_of_probe = b->sent_in_probe;
    b->sent_in_probe_rtt = 0;
    b->sent_in_probe = 0;
    b->loss_round_rtt_min_ns = PL_BBR_NONE;
    b->loss_round_lost_bytes = 0;
    b->loss_round_acked_bytes = 0;
    b->loss_round_lost_packets = 0;
}

/* A loss round ends when a packet sent after it began is acknowledged, so the losses it
 * counts are mostly of packets sent during the loss round before it.  ProbeRTT holds the
 * flight to half a BDP on purpose, and its exit resets the lower bounds: that is the answer
 * to its rounds.  The loss round of its last packets ends after the exit, in CRUISE (or
 * Startup); judged there, a round of few packets lost above the threshold by chance and,
 * having delivered at ProbeRTT's rate, cut bw_lo to 70 % of the estimate until the next
 * probe, seconds later (M6, RTT 100 ms, 1 % loss, jitter 3 ms, seed 8: ProbeRTT began
 * inside UP; 6 random losses in the 213 packets of its last loss round, 34 Mbit/s for 6 s). */
static void pl_bbr_note_sending(pl_cc_bbr *b) {
    if (b->mode == PL_BBR_PROBE_RTT) b->sent_in_probe_rtt = 1;
    if (b->mode == PL_BBR_PROBE_BW_REFILL || b->mode == PL_BBR_PROBE_BW_UP) b->sent_in_probe = 1;
}

/* The least a cut for queue loss leaves.  None when the queue may be another flow's: the
 * cut is how we yield to it.  But a probe builds a queue on purpose, and the loss round of
 * its packets, ending in DOWN, sees every RTT sample above the min.  With random loss it
 * cut inflight_hi to 70 % of the bound UP had reached and inflight_lo to 70 % of the
 * window; CRUISE's headroom took the window below the BDP, and random loss (2 losses in a
 * round of 90 packets are above the threshold) held the sender there for seconds (M6,
 * RTT 20 ms, 1 % loss, jitter 3 ms, seed 6: 37 Mbit/s from 11 to 17 s).  When no queue
 * stood in the last loss round before the probe, the cut stops at the BDP (inflight_hi at
 * the BDP plus CRUISE's headroom): loss behind a queue we built ourselves says the flight
 * was above the BDP, not below it. */
static uint64_t pl_bbr_queue_cut_floor(const pl_cc_bbr *b, int headroom) {
    if (!b->loss_round_own_queue) return 0;
    uint64_t bdp = pl_bbr_bdp_multiple(b, b->max_bw, PL_BBR_GAIN_UNIT);
    return headroom ? bdp * 100 / (100 - PL_BBR_HEADROOM_PERCENT) : bdp;
}

/* The next loss round starts from this sample's signals. */
static void pl_bbr_advance_latest(pl_cc_bbr *b, const pl_rate_sample *rs) {
    if (!b->loss_round_start) return;
    b->bw_latest = rs->delivery_rate_best_bytes_per_s;
    b->inflight_latest = rs->delivered_best_bytes;
}

/* ---- Bandwidth filter and bounds ---- */

static void pl_bbr_update_max_bw(pl_cc_bbr *b, const pl_rate_sample *rs) {
    uint64_t rate = rs->delivery_rate_bytes_per_s;
    if (rate == 0) return;
    /* An app-limited sample understates the path: it may only raise the estimate. */
    if (rate < b->max_bw && rs->is_app_limited) return;
    uint64_t *slot = &b->bw_slot[b->cycle_count % PL_BBR_BW_FILTER_CYCLES];
    *slot = pl_max64(*slot, rate);
    b->max_bw = pl_max64(b->bw_slot[0], b->bw_slot[1]);
}

/* A new ProbeBW cycle: forget the samples of the cycle before last. */
static void pl_bbr_advance_max_bw_filter(pl_cc_bbr *b) {
    b->cycle_count++;
    b->bw_slot[b->cycle_count % PL_BBR_BW_FILTER_CYCLES] = 0;
    b->max_bw = pl_max64(b->bw_slot[0], b->bw_slot[1]);
}

/* What a loss round delivered: the best of its rate samples, or its acknowledged bytes over
 * its length when that is more.  A sample's interval runs over its sending too, so in a
 * round paced below the estimate (DOWN's, after a probe) every sample shows the pacing rate
 * while the queue the probe left still drains at the path's: a cut to the samples alone
 * would pace below the path until the next probe. */
static uint64_t pl_bbr_round_delivered_rate(const pl_cc_bbr *b) { return pl_max64(b->bw_latest, b->loss_round_bw); }

static void pl_bbr_reset_lower_bounds(pl_cc_bbr *b) {
    b->bw_lo = PL_BBR_NONE;
    b->inflight_lo = PL_BBR_NONE;
}

/* Loss from a standing queue, below the loss threshold: the window falls to 70 % of its
 * bound with no floor, as a loss-based flow's would, and bw_lo as the draft cuts it for
 * loss (to 70 %, never below what the round delivered).  The max-bw filter keeps its
 * peaks: clamping it to what a round delivered ratchets it down, since the rounds that
 * see queue loss are often DOWN's or ProbeRTT's, which send below the estimate. */
static void pl_bbr_cut_for_queue_loss(pl_cc_bbr *b) {
    b->bw_lo = pl_max64(pl_bbr_round_delivered_rate(b), pl_bbr_percent(b->bw_lo, PL_BBR_BETA_PERCENT));
    uint64_t cut = pl_max64(pl_bbr_percent(b->inflight_lo, PL_BBR_BETA_PERCENT), pl_bbr_queue_cut_floor(b, 0));
    b->inflight_lo = pl_min64(b->inflight_lo, cut);
}

/* A congested round outside a probe: cut the lower bounds, but never below what the round
 * just delivered (loss from a standing queue: see above). */
static void pl_bbr_adapt_lower_bounds(pl_cc_state *s) {
    pl_cc_bbr *b = &s->algo.bbr;
    if (pl_bbr_probing_bw(b)) return;
    if (b->bw_lo == PL_BBR_NONE) b->bw_lo = b->max_bw;
    if (b->inflight_lo == PL_BBR_NONE) b->inflight_lo = s->cwnd_bytes;
    if (!b->loss_round_congested) {
        pl_bbr_cut_for_queue_loss(b);
        return;
    }
    b->bw_lo = pl_max64(pl_bbr_round_delivered_rate(b), pl_bbr_percent(b->bw_lo, PL_BBR_BETA_PERCENT));
    b->inflight_lo = pl_max64(b->inflight_latest, pl_bbr_percent(b->inflight_lo, PL_BBR_BETA_PERCENT));
}

static void pl_bbr_update_congestion_signals(pl_cc_state *s, const pl_rate_sample *rs) {
    pl_cc_bbr *b = &s->algo.bbr;
    pl_bbr_update_round(b, rs);
    pl_bbr_update_max_bw(b, rs);
    if (!b->loss_round_start) return;
    /* Loss from a standing queue outside a probe lowers the long-term bound too, once per
     * ProbeBW cycle: one cut per episode to 70 %, as a loss-based flow makes, and the
     * probe that follows can raise it again.  When the probe's own loss has already set
     * the bound to the flight that lost (pl_bbr_handle_too_high), the cut is from the bound
     * the probe had reached, as a CUBIC flow cuts from its window when it sees the loss;
     * it never raises the bound.  (Not from "none": that bound comes from probes.) */
    if (b->loss_round_queue_loss && b->full_bw_reached && !pl_bbr_probing_bw(b) && b->inflight_hi != PL_BBR_NONE &&
        !b->inflight_hi_queue_cut) {
        uint64_t base = b->inflight_hi_cycle != PL_BBR_NONE ? b->inflight_hi_cycle : b->inflight_hi;
        uint64_t cut = pl_max64(pl_bbr_percent(base, PL_BBR_BETA_PERCENT), pl_bbr_min_pipe(b));
        cut = pl_max64(cut, pl_bbr_queue_cut_floor(b, 1));
        b->inflight_hi = pl_min64(b->inflight_hi, cut);
        b->inflight_hi_queue_cut = 1;
        b->inflight_hi_cut_delivered = b->delivered;
    }
    if (b->loss_round_congested || b->loss_round_queue_loss) pl_bbr_adapt_lower_bounds(s);
}

static void pl_bbr_bound_bw_for_model(pl_cc_bbr *b) { b->bw = pl_min64(b->max_bw, b->bw_lo); }

/* ---- ACK aggregation: how far ACKs ran ahead of the bandwidth, max over 10 rounds ---- */

static void pl_bbr_update_ack_aggregation(pl_cc_state *s, const pl_rate_sample *rs, uint64_t now_ns) {
    pl_cc_bbr *b = &s->algo.bbr;
    /* In Startup the filter remembers about a round (its slots turn every round): the
     * bandwidth estimate lags the doubling flight, and what the ACKs delivered beyond it is
     * the growth the window must allow (the draft's one-round window in Startup). */
    uint32_t slot_rounds = b->full_bw_reached ? PL_BBR_EXTRA_ACKED_SLOT_ROUNDS : PL_BBR_EXTRA_ACKED_SLOT_ROUNDS_STARTUP;
    if (b->round_start && ++b->extra_acked_slot_rounds >= slot_rounds) {
        b->extra_acked_slot_rounds = 0;
        b->extra_acked_index ^= 1;
        b->extra_acked_slot[b->extra_acked_index] = 0;
    }
    uint64_t expected = pl_bbr_volume(b->bw, now_ns - b->extra_acked_interval_start_ns);
    if (b->extra_acked_delivered <= expected) {
        /* The ACKs fell behind the estimate: a new aggregation interval starts here. */
        b->extra_acked_delivered = 0;
        b->extra_acked_interval_start_ns = now_ns;
        expected = 0;
    }
    b->extra_acked_delivered = pl_min64(b->extra_acked_delivered + rs->newly_acked_bytes, PL_CC_WINDOW_MOST_BYTES);
    uint64_t extra = pl_min64(b->extra_acked_delivered - expected, s->cwnd_bytes);
    uint64_t *slot = &b->extra_acked_slot[b->extra_acked_index];
    *slot = pl_max64(*slot, extra);
}

/* ---- Startup and Drain ---- */

static void pl_bbr_enter_startup(pl_cc_bbr *b) { b->mode = PL_BBR_STARTUP; }

/* The pipe is full when three rounds in a row, each with a sample the application did not
 * limit, failed to raise the bandwidth by a quarter. */
static void pl_bbr_check_full_bw(pl_cc_bbr *b, const pl_rate_sample *rs) {
    /* No estimate yet (no sample long enough to judge): nothing to compare. */
    if (b->full_bw_reached || !b->round_start || rs->is_app_limited || b->max_bw == 0) return;
    if (b->max_bw >= pl_bbr_percent(b->full_bw, PL_BBR_FULL_BW_GROWTH_PERCENT)) {
        b->full_bw = b->max_bw;
        b->full_bw_count = 0;
        return;
    }
    if (++b->full_bw_count >= PL_BBR_FULL_BW_ROUNDS) b->full_bw_reached = 1;
}

/* Startup also ends on heavy loss (a queue that overflowed): the flight that lost is an
 * upper bound.  That is the whole answer to the losses of the loss round under way, which
 * ends in Drain: there they are not judged again (Linux's BBRv3 ends Startup on loss only
 * at a loss round's end, while Startup, a probing state, keeps the lower bounds out of it).
 * A loss round that ended with this very sample was judged in Startup already. */
static void pl_bbr_check_startup_high_loss(pl_cc_bbr *b, int loss_exit) {
    if (b->full_bw_reached || b->mode != PL_BBR_STARTUP || !loss_exit) return;
    b->full_bw_reached = 1;
    b->startup_loss_exit = 1;
    b->loss_round_answered = !b->loss_round_start;
    b->inflight_hi = pl_max64(pl_bbr_bdp_multiple(b, b->max_bw, PL_BBR_GAIN_UNIT), b->inflight_latest);
}

static void pl_bbr_check_startup_done(pl_cc_bbr *b, const pl_rate_sample *rs, int loss_exit) {
    pl_bbr_check_full_bw(b, rs);
    pl_bbr_check_startup_high_loss(b, loss_exit);
    if (b->mode == PL_BBR_STARTUP && b->full_bw_reached) b->mode = PL_BBR_DRAIN;
}

/* ---- ProbeBW ---- */

/* The integer cube root (floor). */
static uint64_t pl_bbr_cbrt(uint64_t x) {
    uint64_t lo = 0, hi = 2097151; /* 2^21 - 1: its cube still fits 64 bits */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (mid * mid * mid <= x) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* How long a CUBIC flow with our BDP takes to regain its window after a loss (its K).
 * Probing much more often than that takes from such a flow what it has not yet had the
 * time to win back: at long RTTs this, not 2 s, sets the pace.  (Half the BDP served
 * while UP ended at its first round; now that UP runs until loss, each probe takes more,
 * and with half the BDP BBR takes 0.64 of the path from TCP CUBIC at RTT 100 ms on
 * some seeds.) */
static uint64_t pl_bbr_cubic_epoch_ns(const pl_cc_bbr *b) {
    uint64_t datagrams = pl_bbr_bdp_multiple(b, b->bw, PL_BBR_CUBIC_K_BDP_GAIN) / b->mss;
    datagrams = pl_min64(datagrams, PL_BBR_CUBIC_K_DATAGRAMS_MOST);
    /* K in ms = cbrt(W * 3/4 * 1e9 ms^3). */
    uint64_t cube_ms3 = datagrams * PL_BBR_CUBIC_K_NUMERATOR / PL_BBR_CUBIC_K_DENOMINATOR * 1000000000ull;
    return pl_bbr_cbrt(cube_ms3) * PL_BBR_NS_PER_MS;
}

static void pl_bbr_pick_probe_wait(pl_cc_bbr *b) {
    /* Rounds count from 0 or 1, and the wall-clock wait gets up to 1 s at random: flows
     * sharing a bottleneck do not probe in step. */
    b->rounds_since_bw_probe = pl_bbr_random(b) % 2;
    uint64_t wait_ns = pl_max64(PL_BBR_PROBE_WAIT_NS_BASE, pl_bbr_cubic_epoch_ns(b));
    b->bw_probe_wait_ns = wait_ns + pl_bbr_random(b) % PL_BBR_PROBE_WAIT_NS_RANDOM;
}

static void pl_bbr_start_down(pl_cc_bbr *b, uint64_t now_ns) {
    b->bw_latest = 0;
    b->inflight_latest = 0;
    b->bw_probe_up_cnt = PL_BBR_NONE;
    pl_bbr_pick_probe_wait(b);
    b->cycle_stamp_ns = now_ns;
    b->ack_phase = PL_BBR_ACKS_PROBE_STOPPING;
    pl_bbr_start_round(b);
    b->mode = PL_BBR_PROBE_BW_DOWN;
}

static void pl_bbr_start_cruise(pl_cc_bbr *b) { b->mode = PL_BBR_PROBE_BW_CRUISE; }

static void pl_bbr_start_refill(pl_cc_bbr *b) {
    /* A probe tests the path afresh: the lower bounds from earlier loss no longer hold. */
    pl_bbr_reset_lower_bounds(b);
    b->inflight_hi_queue_cut = 0;
    b->inflight_hi_cycle = PL_BBR_NONE;
    b->bw_probe_up_rounds = 0;
    b->bw_probe_up_acks = 0;
    b->ack_phase = PL_BBR_ACKS_REFILLING;
    pl_bbr_start_round(b);
    b->mode = PL_BBR_PROBE_BW_REFILL;
}

/* In UP, inflight_hi grows by 1, 2, 4, ... datagrams per round. */
static void pl_bbr_raise_inflight_hi_slope(pl_cc_state *s) {
    pl_cc_bbr *b = &s->algo.bbr;
    uint64_t growth_datagrams = 1ull << b->bw_probe_up_rounds;
    if (b->bw_probe_up_rounds < PL_BBR_PROBE_UP_ROUNDS_MOST) b->bw_probe_up_rounds++;
    b->bw_probe_up_cnt = pl_max64(s->cwnd_bytes / growth_datagrams, b->mss);
}

static void pl_bbr_start_up(pl_cc_state *s, uint64_t now_ns) {
    pl_cc_bbr *b = &s->algo.bbr;
    b->ack_phase = PL_BBR_ACKS_PROBE_STARTING;
    pl_bbr_start_round(b);
    b->cycle_stamp_ns = now_ns;
    b->mode = PL_BBR_PROBE_BW_UP;
    b->up_capped_this_round = 0;
    b->up_capped_last_round = 0;
    pl_bbr_raise_inflight_hi_slope(s);
}

/* The window limited the sender: the flight before this ACK had no room for a datagram. */
static int pl_bbr_cwnd_limited(const pl_cc_state *s, const pl_rate_sample *rs) {
    return rs->bytes_in_flight + rs->newly_acked_bytes + s->algo.bbr.mss > s->cwnd_bytes;
}

static void pl_bbr_probe_inflight_hi_upward(pl_cc_state *s, const pl_rate_sample *rs) {
    pl_cc_bbr *b = &s->algo.bbr;
    /* Judged before the raise below: the window this ACK found is the one set for the old
     * inflight_hi, and the raise must not make the bound look as if it no longer capped. */
    int capped = pl_bbr_cwnd_limited(s, rs) && s->cwnd_bytes >= b->inflight_hi;
    if (b->round_start) {
        b->up_capped_last_round = b->up_capped_this_round;
        b->up_capped_this_round = 0;
    }
    if (capped) b->up_capped_this_round = 1;
    if (!capped) {
        b->bw_probe_up_acks = 0; /* inflight_hi is not what limits: nothing to learn */
        return;
    }
    b->bw_probe_up_acks += rs->newly_acked_bytes;
    if (b->bw_probe_up_acks >= b->bw_probe_up_cnt) {
        uint64_t delta = b->bw_probe_up_acks / b->bw_probe_up_cnt;
        b->bw_probe_up_acks -= delta * b->bw_probe_up_cnt;
        b->inflight_hi = pl_min64(b->inflight_hi + delta * b->mss, PL_CC_WINDOW_MOST_BYTES);
    }
    if (b->round_start) pl_bbr_raise_inflight_hi_slope(s);
}

/* Loss above the threshold while the samples reflect a probe: the probe found the limit. */
static void pl_bbr_handle_too_high(pl_cc_state *s, const pl_rate_sample *rs, uint64_t now_ns) {
    pl_cc_bbr *b = &s->algo.bbr;
    b->bw_probe_samples = 0;
    if (!rs->is_app_limited) {
        uint64_t floor = pl_bbr_percent(pl_bbr_target_inflight(s), PL_BBR_BETA_PERCENT);
        if (b->inflight_hi_cycle == PL_BBR_NONE) b->inflight_hi_cycle = b->inflight_hi;
        b->inflight_hi = pl_max64(rs->tx_in_flight_bytes, floor);
    }
    if (b->mode == PL_BBR_PROBE_BW_UP) pl_bbr_start_down(b, now_ns);
}

static void pl_bbr_adapt_upper_bounds(pl_cc_state *s, const pl_rate_sample *rs, int too_high, uint64_t now_ns) {
    pl_cc_bbr *b = &s->algo.bbr;
    if (b->ack_phase == PL_BBR_ACKS_PROBE_STARTING && b->round_start) b->ack_phase = PL_BBR_ACKS_PROBE_FEEDBACK;
    if (b->ack_phase == PL_BBR_ACKS_PROBE_STOPPING && b->round_start) {
        /* The probe's samples are in: the best moment to forget the cycle before last. */
        b->bw_probe_samples = 0;
        b->ack_phase = PL_BBR_ACKS_INIT;
        if (pl_bbr_in_probe_bw(b) && !rs->is_app_limited) pl_bbr_advance_max_bw_filter(b);
    }
    if (too_high) {
        if (b->bw_probe_samples) pl_bbr_handle_too_high(s, rs, now_ns);
        return;
    }
    if (b->inflight_hi == PL_BBR_NONE) return;
    /* A packet sent before a cut for queue loss carries the flight that lost: it may not
     * undo the cut (its ACKs come in the round the cut is made). */
    if (rs->tx_in_flight_bytes > b->inflight_hi && rs->prior_delivered_bytes >= b->inflight_hi_cut_delivered)
        b->inflight_hi = rs->tx_in_flight_bytes;
    if (b->mode == PL_BBR_PROBE_BW_UP) pl_bbr_probe_inflight_hi_upward(s, rs);
}

static int pl_bbr_elapsed_in_phase(const pl_cc_bbr *b, uint64_t interval_ns, uint64_t now_ns) {
    return now_ns > b->cycle_stamp_ns + interval_ns;
}

/* A Reno flow sharing the path regains a BDP in about BDP-in-datagrams rounds: probe no
 * less often than that, so BBR does not fall behind it (at most 63 rounds). */
static int pl_bbr_reno_probe_time(const pl_cc_state *s) {
    const pl_cc_bbr *b = &s->algo.bbr;
    uint64_t rounds = pl_min64(pl_bbr_target_inflight(s) / b->mss, PL_BBR_RENO_ROUNDS_MOST);
    return b->rounds_since_bw_probe >= rounds;
}

static int pl_bbr_check_time_to_probe(pl_cc_state *s, uint64_t now_ns) {
    pl_cc_bbr *b = &s->algo.bbr;
    if (!pl_bbr_elapsed_in_phase(b, b->bw_probe_wait_ns, now_ns) && !pl_bbr_reno_probe_time(s)) return 0;
    pl_bbr_start_refill(b);
    return 1;
}

/* DOWN has drained the queue once the flight is within one BDP (and below the headroom). */
static int pl_bbr_check_time_to_cruise(const pl_cc_bbr *b, const pl_rate_sample *rs) {
    if (rs->bytes_in_flight > pl_bbr_inflight_with_headroom(b)) return 0;
    return rs->bytes_in_flight <= pl_bbr_inflight(b, b->max_bw, PL_BBR_GAIN_UNIT);
}

/* UP normally ends after a round trip once the flight is a quarter above the BDP.  But
 * when another flow keeps a queue, the flight is that far above the BDP from the start.
 * While inflight_hi is what caps the window, the bandwidth cannot show whether the path
 * has more room, so UP goes on (the draft's rule), raising inflight_hi by 1, 2, 4, ...
 * datagrams per round, until loss ends it or the window stops being capped.  Capped means
 * in this round or the last, as the draft's is_cwnd_limited spans a round: one ACK that
 * finds a gap in the pacing would otherwise end UP after its first round. */
static int pl_bbr_up_capped(const pl_cc_bbr *b) {
    return b->inflight_hi != PL_BBR_NONE && (b->up_capped_this_round || b->up_capped_last_round);
}

static void pl_bbr_update_probe_bw_phase(pl_cc_state *s, const pl_rate_sample *rs, int too_high, uint64_t now_ns) {
    pl_cc_bbr *b = &s->algo.bbr;
    if (!b->full_bw_reached) return;
    pl_bbr_adapt_upper_bounds(s, rs, too_high, now_ns);
    switch (b->mode) {
    case PL_BBR_PROBE_BW_DOWN:
        if (pl_bbr_check_time_to_probe(s, now_ns)) return;
        if (pl_bbr_check_time_to_cruise(b, rs)) pl_bbr_start_cruise(b);
        return;
    case PL_BBR_PROBE_BW_CRUISE:
        (void)pl_bbr_check_time_to_probe(s, now_ns);
        return;
    case PL_BBR_PROBE_BW_REFILL:
        /* One round of refilling at the old rate; its ACKs now reflect the fuller pipe. */
        if (b->round_start) {
            b->bw_probe_samples = 1;
            pl_bbr_start_up(s, now_ns);
        }
        return;
    case PL_BBR_PROBE_BW_UP:
        if (pl_bbr_up_capped(b)) return;
        if (pl_bbr_elapsed_in_phase(b, b->min_rtt_ns, now_ns) &&
            rs->bytes_in_flight > pl_bbr_inflight(b, b->max_bw, PL_BBR_GAIN_UP_PACING))
            pl_bbr_start_down(b, now_ns);
        return;
    default:
        return;
    }
}

static void pl_bbr_check_drain(pl_cc_bbr *b, const pl_rate_sample *rs, uint64_t now_ns) {
    if (b->mode == PL_BBR_DRAIN && rs->bytes_in_flight <= pl_bbr_inflight(b, b->max_bw, PL_BBR_GAIN_UNIT))
        pl_bbr_start_down(b, now_ns);
}

/* ---- Min RTT and ProbeRTT ---- */

static void pl_bbr_update_min_rtt(pl_cc_bbr *b, const pl_rate_sample *rs, uint64_t now_ns) {
    /* The clocks start at the first sample. */
    b->probe_rtt_expired = b->probe_rtt_min_ns != PL_BBR_NONE &&
                           now_ns > b->probe_rtt_min_stamp_ns + PL_BBR_PROBE_RTT_INTERVAL_NS;
    int min_rtt_expired = b->min_rtt_ns != PL_BBR_NONE && now_ns > b->min_rtt_stamp_ns + PL_BBR_MIN_RTT_WINDOW_NS;
    /* ProbeRTT drains the queue to see the bare RTT.  An interval whose least sample came
     * within an eighth of the min RTT has seen it already (no queue hid it): draining
     * would only cost throughput, so the interval simply starts again.  But when the
     * filter is about to forget its min RTT and the interval has not seen anything near
     * it, a queue may be hiding it: look now, before a raised value is adopted. */
    int similar = b->min_rtt_ns != PL_BBR_NONE &&
                  b->probe_rtt_min_ns <= b->min_rtt_ns + b->min_rtt_ns / PL_BBR_PROBE_RTT_SIMILAR_DIVISOR;
    if (b->probe_rtt_expired && similar) {
        b->probe_rtt_expired = 0;
        b->probe_rtt_min_ns = PL_BBR_NONE; /* a new interval starts with this sample */
    } else if (min_rtt_expired && !similar) {
        b->probe_rtt_expired = 1;
    }
    if (rs->rtt_ns > 0 && (rs->rtt_ns < b->probe_rtt_min_ns || b->probe_rtt_expired)) {
        b->probe_rtt_min_ns = rs->rtt_ns;
        b->probe_rtt_min_stamp_ns = now_ns;
    }
    if (b->probe_rtt_min_ns < b->min_rtt_ns || min_rtt_expired) {
        b->min_rtt_ns = b->probe_rtt_min_ns;
        b->min_rtt_stamp_ns = b->probe_rtt_min_stamp_ns;
    }
}

static uint64_t pl_bbr_probe_rtt_cwnd(const pl_cc_bbr *b) {
    return pl_max64(pl_bbr_bdp_multiple(b, b->bw, PL_BBR_GAIN_PROBE_RTT_CWND), pl_bbr_min_pipe(b));
}

static void pl_bbr_exit_probe_rtt(pl_cc_state *s, uint64_t now_ns) {
    pl_cc_bbr *b = &s->algo.bbr;
    pl_bbr_reset_lower_bounds(b);
    s->cwnd_bytes = pl_max64(s->cwnd_bytes, b->prior_cwnd);
    if (!b->full_bw_reached) {
        pl_bbr_enter_startup(b);
        return;
    }
    pl_bbr_start_down(b, now_ns);
    pl_bbr_start_cruise(b);
}

static void pl_bbr_handle_probe_rtt(pl_cc_state *s, const pl_rate_sample *rs, uint64_t now_ns) {
    pl_cc_bbr *b = &s->algo.bbr;
    if (b->probe_rtt_done_ns == 0) {
        /* The flight must first fall to the ProbeRTT window; then hold it 200 ms and a round. */
        if (rs->bytes_in_flight > pl_bbr_probe_rtt_cwnd(b)) return;
        b->probe_rtt_done_ns = now_ns + PL_BBR_PROBE_RTT_DURATION_NS;
        b->probe_rtt_round_done = 0;
        pl_bbr_start_round(b);
        return;
    }
    if (b->round_start) b->probe_rtt_round_done = 1;
    if (!b->probe_rtt_round_done || now_ns <= b->probe_rtt_done_ns) return;
    b->probe_rtt_min_stamp_ns = now_ns;
    pl_bbr_exit_probe_rtt(s, now_ns);
}

static void pl_bbr_check_probe_rtt(pl_cc_state *s, const pl_rate_sample *rs, uint64_t now_ns) {
    pl_cc_bbr *b = &s->algo.bbr;
    if (b->mode != PL_BBR_PROBE_RTT && b->probe_rtt_expired) {
        b->prior_cwnd = s->cwnd_bytes;
        b->probe_rtt_done_ns = 0;
        b->ack_phase = PL_BBR_ACKS_PROBE_STOPPING;
        pl_bbr_start_round(b);
        b->mode = PL_BBR_PROBE_RTT;
    }
    if (b->mode == PL_BBR_PROBE_RTT) pl_bbr_handle_probe_rtt(s, rs, now_ns);
}

/* ---- Control: pacing rate and window ---- */

/* The draft's initial pacing rate: Startup's gain over the initial window per round trip
 * (the first RTT sample's; before any, pl_cc_bbr_pacing_rate leaves the sender unpaced). */
static uint64_t pl_bbr_initial_pacing_rate(const pl_cc_bbr *b) {
    if (b->min_rtt_ns == PL_BBR_NONE || b->min_rtt_ns == 0) return 0;
    uint64_t window = (uint64_t)PL_CC_WINDOW_INITIAL_DATAGRAMS * b->mss;
    uint64_t nominal = pl_min64(window * PL_BBR_NS_PER_S / b->min_rtt_ns, PL_BBR_BW_MOST);
    return pl_bbr_percent(nominal, PL_BBR_GAIN_STARTUP_PACING);
}

static void pl_bbr_set_pacing_rate(pl_cc_bbr *b) {
    if (b->bw == 0) return;
    uint64_t rate = pl_bbr_percent(b->bw, pl_bbr_pacing_gain(b));
    rate = pl_bbr_percent(rate, 100 - PL_BBR_PACING_MARGIN_PERCENT);
    /* A run's first sample is its single epoch-0 packet (protocol.md §3): one datagram per
     * round trip says nothing of the path, yet paced at its rate the initial window would
     * take ten round trips.  Startup starts from the initial pacing rate instead. */
    if (!b->full_bw_reached) rate = pl_max64(rate, pl_bbr_initial_pacing_rate(b));
    /* Until the pipe is known to be full, the rate only rises: an early sample taken before
     * the pacer got going must not slow Startup down. */
    if (b->full_bw_reached || rate > b->pacing_rate) b->pacing_rate = rate;
}

/* The most the model lets into the flight. */
static uint64_t pl_bbr_bound_for_model(const pl_cc_bbr *b) {
    uint64_t cap = PL_BBR_NONE;
    if (pl_bbr_in_probe_bw(b) && b->mode != PL_BBR_PROBE_BW_CRUISE) cap = b->inflight_hi;
    else if (b->mode == PL_BBR_PROBE_RTT || b->mode == PL_BBR_PROBE_BW_CRUISE) cap = pl_bbr_inflight_with_headroom(b);
    cap = pl_min64(cap, b->inflight_lo);
    return pl_max64(cap, pl_bbr_min_pipe(b));
}

static void pl_bbr_set_cwnd(pl_cc_state *s, const pl_rate_sample *rs) {
    pl_cc_bbr *b = &s->algo.bbr;
    uint64_t most = pl_bbr_inflight(b, b->bw, pl_bbr_cwnd_gain(b));
    /* ACKs that arrive in bursts, or ahead of Startup's lagging estimate, need the window to
     * cover what they deliver. */
    most = pl_min64(most + pl_bbr_extra_acked(b), PL_CC_WINDOW_MOST_BYTES);
    uint64_t cwnd = s->cwnd_bytes, acked = rs->newly_acked_bytes;
    uint64_t initial = (uint64_t)PL_CC_WINDOW_INITIAL_DATAGRAMS * b->mss;
    if (b->full_bw_reached) cwnd = pl_min64(cwnd + acked, most);
    else if (cwnd < most || rs->delivered_total_bytes < initial) cwnd += acked;
    cwnd = pl_max64(cwnd, pl_bbr_min_pipe(b));
    if (b->mode == PL_BBR_PROBE_RTT) cwnd = pl_min64(cwnd, pl_bbr_probe_rtt_cwnd(b));
    cwnd = pl_min64(cwnd, pl_bbr_bound_for_model(b));
    s->cwnd_bytes = pl_min64(cwnd, PL_CC_WINDOW_MOST_BYTES);
}

/* ---- The interface (cc.h) ---- */

void pl_cc_bbr_init(pl_cc_state *state, uint32_t mss) {
    assert(state != NULL);
    assert(mss >= PL_CC_DATAGRAM_LEAST && mss <= PL_CC_DATAGRAM_MOST);
    pl_cc_bbr *b = &state->algo.bbr;
    *b = (pl_cc_bbr){0};
    b->mss = mss;
    b->bw_lo = PL_BBR_NONE;
    b->inflight_hi = PL_BBR_NONE;
    b->inflight_hi_cycle = PL_BBR_NONE;
    b->inflight_lo = PL_BBR_NONE;
    b->min_rtt_ns = PL_BBR_NONE;
    b->rtt_least_ns = PL_BBR_NONE;
    b->probe_rtt_min_ns = PL_BBR_NONE;
    b->loss_round_rtt_min_ns = PL_BBR_NONE;
    b->bw_probe_up_cnt = PL_BBR_NONE;
    b->rng = PL_BBR_SEED_DEFAULT;
    pl_bbr_enter_startup(b);
    state->ssthresh_bytes = PL_CC_SSTHRESH_NONE;
}

void pl_cc_bbr_seed(pl_cc_state *state, uint64_t seed) {
    assert(state != NULL);
    state->algo.bbr.rng = seed != 0 ? seed : PL_BBR_SEED_DEFAULT; /* xorshift's state is never 0 */
}

void pl_cc_bbr_on_lost(pl_cc_state *state, uint64_t bytes) {
    assert(state != NULL);
    pl_cc_bbr *b = &state->algo.bbr;
    b->loss_round_lost_bytes = pl_min64(b->loss_round_lost_bytes + bytes, PL_CC_WINDOW_MOST_BYTES);
    if (b->loss_round_lost_packets < UINT32_MAX) b->loss_round_lost_packets++;
}

void pl_cc_bbr_on_rate_sample(pl_cc_state *state, const pl_rate_sample *rs, uint64_t now_ns) {
    assert(state != NULL && rs != NULL);
    pl_cc_bbr *b = &state->algo.bbr;
    assert(rs->delivered_total_bytes >= b->delivered);
    assert(rs->prior_delivered_bytes <= rs->delivered_total_bytes);
    /* Volumes beyond the window's ceiling and rates beyond PL_BBR_BW_MOST mean nothing
     * here and would only strain the arithmetic. */
    pl_rate_sample r = *rs;
    r.delivery_rate_bytes_per_s = pl_min64(r.delivery_rate_bytes_per_s, PL_BBR_BW_MOST);
    r.delivery_rate_best_bytes_per_s = pl_min64(pl_max64(r.delivery_rate_best_bytes_per_s, r.delivery_rate_bytes_per_s),
                                                PL_BBR_BW_MOST);
    r.delivered_best_bytes = pl_min64(pl_max64(r.delivered_best_bytes, r.delivered_bytes), PL_CC_WINDOW_MOST_BYTES);
    r.delivered_bytes = pl_min64(r.delivered_bytes, PL_CC_WINDOW_MOST_BYTES);
    r.newly_acked_bytes = pl_min64(r.newly_acked_bytes, PL_CC_WINDOW_MOST_BYTES);
    r.bytes_in_flight = pl_min64(r.bytes_in_flight, PL_CC_WINDOW_MOST_BYTES);
    r.tx_in_flight_bytes = pl_min64(r.tx_in_flight_bytes, PL_CC_WINDOW_MOST_BYTES);
    b->delivered = r.delivered_total_bytes;
    /* Judged before this ACK can close the loss round whose losses it weighs. */
    int too_high = pl_bbr_too_high(b, &r);
    int loss_exit = too_high && b->loss_round_lost_packets >= PL_BBR_STARTUP_FULL_LOSS_PACKETS;
    /* The model and the state machine (the draft's order). */
    pl_bbr_update_latest(b, &r, now_ns);
    pl_bbr_update_congestion_signals(state, &r);
    pl_bbr_update_ack_aggregation(state, &r, now_ns);
    pl_bbr_check_startup_done(b, &r, loss_exit);
    pl_bbr_check_drain(b, &r, now_ns);
    pl_bbr_update_probe_bw_phase(state, &r, too_high, now_ns);
    pl_bbr_update_min_rtt(b, &r, now_ns);
    pl_bbr_check_probe_rtt(state, &r, now_ns);
    pl_bbr_advance_latest(b, &r);
    pl_bbr_note_sending(b);
    pl_bbr_bound_bw_for_model(b);
    /* The controls. */
    pl_bbr_set_pacing_rate(b);
    pl_bbr_set_cwnd(state, &r);
}

void pl_cc_bbr_undo(pl_cc_state *state, const pl_cc_state *saved) {
    assert(state != NULL && saved != NULL);
    pl_cc_bbr *b = &state->algo.bbr;
    const pl_cc_bbr *was = &saved->algo.bbr;
    /* Only the bounds loss lowered go back; the model (bandwidth, RTT, rounds, state) holds
     * facts measured since, and bounds raised since stay raised. */
    b->inflight_hi = pl_max64(b->inflight_hi, was->inflight_hi);
    b->inflight_lo = pl_max64(b->inflight_lo, was->inflight_lo);
    b->bw_lo = pl_max64(b->bw_lo, was->bw_lo);
    /* A Startup that these losses alone ended goes on: its bandwidth was still growing, and
     * losses that arrived late (reordering in the first flights) said nothing of a full
     * pipe.  Left ended, the sender cruised at the first rounds' rate and took seconds to
     * grow out of it (M6, RTT 20 ms, jitter 3 ms: 1.6 Mbit/s less over 30 s in one seed). */
    if (b->startup_loss_exit && was->mode == PL_BBR_STARTUP && !was->full_bw_reached && b->mode != PL_BBR_PROBE_RTT) {
        b->full_bw_reached = 0;
        b->startup_loss_exit = 0;
        b->mode = PL_BBR_STARTUP;
    }
    pl_bbr_bound_bw_for_model(b);
    state->cwnd_bytes = pl_max64(state->cwnd_bytes, pl_min64(saved->cwnd_bytes, pl_bbr_bound_for_model(b)));
}

void pl_cc_bbr_on_persistent_congestion(pl_cc_state *state) {
    assert(state != NULL);
    pl_cc_bbr *b = &state->algo.bbr;
    /* Nothing came back for several PTOs: start the flight again from the floor.  The
     * window grows back by what is acknowledged, up to what the model allows. */
    state->cwnd_bytes = pl_bbr_min_pipe(b);
}

uint64_t pl_cc_bbr_pacing_rate(const pl_cc_state *state, const pl_rtt *rtt) {
    assert(state != NULL && rtt != NULL);
    const pl_cc_bbr *b = &state->algo.bbr;
    if (b->pacing_rate != 0) return b->pacing_rate;
    /* No bandwidth sample yet: Startup's gain over the window per smoothed RTT, or unpaced
     * before any RTT sample (the initial window goes at once, as with CUBIC). */
    if (!rtt->has_sample || rtt->rtt_ns_smoothed == 0) return 0;
    uint64_t nominal = pl_min64(state->cwnd_bytes * PL_BBR_NS_PER_S / rtt->rtt_ns_smoothed, PL_BBR_BW_MOST);
    return pl_bbr_percent(nominal, PL_BBR_GAIN_STARTUP_PACING);
}

int pl_cc_bbr_in_startup(const pl_cc_state *state) {
    assert(state != NULL);
    return state->algo.bbr.mode == PL_BBR_STARTUP;
}
