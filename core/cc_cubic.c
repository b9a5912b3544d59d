/* cc_cubic.c: CUBIC (RFC 9438) with HyStart++ (RFC 9406) in its first slow start.
 *
 * Units.  Windows are bytes; CUBIC's constant C is in datagrams per second cubed, so the
 * curve is W_cubic(t) = C * mss * (t - K)^3 + W_max bytes.  Time on the curve is whole
 * milliseconds: (t - K)^3 in ms^3 fits 64 bits for |t - K| up to PL_CUBIC_SPAN_MS_MOST, and
 * a millisecond moves the curve by far less than a datagram anywhere near its plateau.
 * All arithmetic is integer, so every run of the simulator is bit-for-bit repeatable. */
#include "cc.h"

#include <assert.h>
#include <stddef.h>

/* C = 0.4 (RFC 9438 §5). */
#define PL_CUBIC_C_NUM 4u
#define PL_CUBIC_C_DEN 10u
/* beta_cubic = 0.7: the window after a reduction. */
#define PL_CUBIC_BETA_NUM 7u
#define PL_CUBIC_BETA_DEN 10u
/* alpha_cubic = 3 (1 - beta) / (1 + beta) = 9/17: the Reno-friendly estimate's slope,
 * which gives the same average window as Reno's AIMD(1, 0.5). */
#define PL_CUBIC_ALPHA_NUM 9u
#define PL_CUBIC_ALPHA_DEN 17u
/* target <= 1.5 cwnd: growth never outruns slow start. */
#define PL_CUBIC_TARGET_NUM 3u
#define PL_CUBIC_TARGET_DEN 2u
/* Fast convergence (RFC 9438 §4.7): on.  It yields bandwidth to newcomers; the share
 * against TCP CUBIC is one of our goals, and Linux runs with it on. */
#define PL_CUBIC_FAST_CONVERGENCE 1
/* The most |t - K| the curve is evaluated at: 2,000 s.  Its cube, 8e18 ms^3, fits. */
#define PL_CUBIC_SPAN_MS_MOST 2000000ull
#define PL_NS_PER_MS 1000000ull
#define PL_MS_PER_S 1000ull

/* HyStart++ (RFC 9406 §4.3).  L (the per-ack cap) is infinite because we pace. */
#define PL_HYSTART_RTT_NS_THRESH_LEAST 4000000ull
#define PL_HYSTART_RTT_NS_THRESH_MOST 16000000ull
#define PL_HYSTART_RTT_DIVISOR 8u
#define PL_HYSTART_SAMPLES 8u
#define PL_HYSTART_CSS_GROWTH_DIVISOR 4u
#define PL_HYSTART_CSS_ROUNDS 5u

_Static_assert(PL_CUBIC_BETA_NUM < PL_CUBIC_BETA_DEN, "a reduction reduces");
_Static_assert(PL_CUBIC_ALPHA_NUM * (PL_CUBIC_BETA_DEN + PL_CUBIC_BETA_NUM) ==
                   3 * (PL_CUBIC_BETA_DEN - PL_CUBIC_BETA_NUM) * PL_CUBIC_ALPHA_DEN,
               "alpha = 3 (1 - beta) / (1 + beta)");
_Static_assert(PL_CUBIC_SPAN_MS_MOST * PL_CUBIC_SPAN_MS_MOST <= UINT64_MAX / PL_CUBIC_SPAN_MS_MOST,
               "(t - K)^3 in ms^3 fits 64 bits");
/* K^3 = (W_max - cwnd) * C_DEN * 1e3 / (C_NUM * mss) * 1e6 ms^3 must fit; with the window's
 * ceiling and the least datagram: */
_Static_assert(PL_CC_WINDOW_MOST_BYTES * PL_CUBIC_C_DEN * PL_MS_PER_S / (PL_CUBIC_C_NUM * PL_CC_DATAGRAM_LEAST) <=
                   UINT64_MAX / PL_NS_PER_MS,
               "K's cube fits 64 bits");
_Static_assert(PL_HYSTART_RTT_NS_THRESH_LEAST <= PL_HYSTART_RTT_NS_THRESH_MOST, "a range");

/* floor(cbrt(x)), by bisection: used once per congestion event. */
static uint64_t pl_cbrt_floor(uint64_t x) {
    uint64_t lo = 0, hi = 2642245; /* 2642245^3 < 2^64 <= 2642246^3 */
    while (lo < hi) {
        uint64_t mid = (lo + hi + 1) / 2;
        if (mid * mid * mid <= x) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* C * mss * d^3 in bytes, d in ms: d^3 / 1e9 s^3, split so no product overflows. */
static uint64_t pl_cubic_rise_bytes(uint64_t d_ms, uint32_t mss) {
    assert(d_ms <= PL_CUBIC_SPAN_MS_MOST);
    const uint64_t ms3_per_s3 = PL_MS_PER_S * PL_MS_PER_S * PL_MS_PER_S;
    uint64_t d3 = d_ms * d_ms * d_ms;
    uint64_t whole = d3 / ms3_per_s3, part = d3 % ms3_per_s3;
    return whole * PL_CUBIC_C_NUM * mss / PL_CUBIC_C_DEN +
           part * PL_CUBIC_C_NUM * mss / (PL_CUBIC_C_DEN * ms3_per_s3);
}

uint64_t pl_cubic_k_ms(uint64_t w_max_bytes, uint64_t cwnd_epoch_bytes, uint32_t mss) {
    assert(mss >= PL_CC_DATAGRAM_LEAST && mss <= PL_CC_DATAGRAM_MOST);
    assert(w_max_bytes <= PL_CC_WINDOW_MOST_BYTES);
    if (w_max_bytes <= cwnd_epoch_bytes) return 0;
    /* K = cbrt((W_max - cwnd_epoch) / (C * mss)) s; in ms, K^3 = that * 1e9. */
    uint64_t scaled = (w_max_bytes - cwnd_epoch_bytes) * PL_CUBIC_C_DEN * PL_MS_PER_S / (PL_CUBIC_C_NUM * mss);
    uint64_t k_ms = pl_cbrt_floor(scaled * PL_NS_PER_MS);
    assert(k_ms <= PL_CUBIC_SPAN_MS_MOST);
    return k_ms;
}

uint64_t pl_cubic_w_bytes(const pl_cc_cubic *cubic, uint32_t mss, uint64_t t_ms) {
    assert(cubic != NULL);
    if (t_ms < cubic->k_ms) {
        uint64_t fall = pl_cubic_rise_bytes(cubic->k_ms - t_ms, mss);
        return cubic->w_max_bytes > fall ? cubic->w_max_bytes - fall : 0;
    }
    uint64_t d_ms = t_ms - cubic->k_ms;
    if (d_ms > PL_CUBIC_SPAN_MS_MOST) d_ms = PL_CUBIC_SPAN_MS_MOST;
    uint64_t w = cubic->w_max_bytes + pl_cubic_rise_bytes(d_ms, mss);
    return w > PL_CC_WINDOW_MOST_BYTES ? PL_CC_WINDOW_MOST_BYTES : w;
}

void pl_cc_cubic_init(pl_cc_state *state) {
    assert(state != NULL);
    pl_cc_cubic *c = &state->algo.cubic;
    *c = (pl_cc_cubic){0};
    c->hystart.state = PL_HYSTART_SLOW_START;
    c->hystart.rtt_ns_round_min = UINT64_MAX;
    c->hystart.rtt_ns_last_round_min = UINT64_MAX;
    c->hystart.rtt_ns_css_baseline = UINT64_MAX;
}

/* RFC 9406's round bookkeeping and its two exits; returns the growth for `bytes`. */
static uint64_t pl_hystart_on_acked(pl_cc_state *state, uint64_t bytes, uint64_t sent_ns, uint64_t now_ns) {
    pl_cc_hystart *hs = &state->algo.cubic.hystart;
    if (hs->state == PL_HYSTART_DONE) return bytes;
    /* A round ends when a packet sent after it began is acknowledged. */
    if (sent_ns >= hs->round_start_ns) {
        hs->rtt_ns_last_round_min = hs->rtt_ns_round_min;
        hs->rtt_ns_round_min = UINT64_MAX;
        hs->samples = 0;
        hs->round_start_ns = now_ns;
        if (hs->state == PL_HYSTART_CSS) hs->css_rounds++;
    }
    uint64_t sample_ns = now_ns - sent_ns;
    if (sample_ns < hs->rtt_ns_round_min) hs->rtt_ns_round_min = sample_ns;
    hs->samples++;
    int judged = hs->samples >= PL_HYSTART_SAMPLES && hs->rtt_ns_last_round_min != UINT64_MAX;
    if (judged && hs->state == PL_HYSTART_SLOW_START) {
        /* The queue has begun to fill when a round's least RTT rises by an eighth of the
         * last round's (within 4..16 ms): slow down before it overflows. */
        uint64_t thresh = hs->rtt_ns_last_round_min / PL_HYSTART_RTT_DIVISOR;
        if (thresh < PL_HYSTART_RTT_NS_THRESH_LEAST) thresh = PL_HYSTART_RTT_NS_THRESH_LEAST;
        if (thresh > PL_HYSTART_RTT_NS_THRESH_MOST) thresh = PL_HYSTART_RTT_NS_THRESH_MOST;
        if (hs->rtt_ns_round_min >= hs->rtt_ns_last_round_min + thresh) {
            hs->state = PL_HYSTART_CSS;
            hs->rtt_ns_css_baseline = hs->rtt_ns_round_min;
            hs->css_rounds = 0;
        }
    } else if (judged && hs->state == PL_HYSTART_CSS && hs->rtt_ns_round_min < hs->rtt_ns_css_baseline) {
        /* The rise was jitter, not a queue: back to slow start. */
        hs->state = PL_HYSTART_SLOW_START;
        hs->rtt_ns_css_baseline = UINT64_MAX;
    }
    if (hs->state != PL_HYSTART_CSS) return bytes;
    if (hs->css_rounds >= PL_HYSTART_CSS_ROUNDS) {
        /* Conservative slow start lasted its rounds: congestion avoidance from here. */
        hs->state = PL_HYSTART_DONE;
        state->ssthresh_bytes = state->cwnd_bytes;
        return 0;
    }
    return bytes / PL_HYSTART_CSS_GROWTH_DIVISOR;
}

static void pl_cubic_epoch_start(pl_cc_state *state, uint32_t mss, uint64_t now_ns) {
    pl_cc_cubic *c = &state->algo.cubic;
    c->has_epoch = 1;
    c->epoch_start_ns = now_ns;
    c->cwnd_epoch_bytes = state->cwnd_bytes;
    /* Without a reduction to climb back from (after HyStart++ or persistent congestion),
     * the plateau is where we stand: K = 0, W_max = cwnd (RFC 9438 §4.8, §4.10). */
    if (c->w_max_bytes < state->cwnd_bytes) c->w_max_bytes = state->cwnd_bytes;
    c->k_ms = pl_cubic_k_ms(c->w_max_bytes, c->cwnd_epoch_bytes, mss);
    c->w_est_bytes = state->cwnd_bytes;
    c->w_est_acc = 0;
    c->cwnd_acc = 0;
}

/* W_est += alpha * mss * bytes / cwnd; alpha becomes 1 once W_est is back at the window
 * of the last reduction (RFC 9438 §4.3). */
static void pl_cubic_grow_estimate(pl_cc_state *state, uint32_t mss, uint64_t bytes) {
    pl_cc_cubic *c = &state->algo.cubic;
    uint64_t alpha_num = c->w_est_bytes >= c->cwnd_prior_bytes ? PL_CUBIC_ALPHA_DEN : PL_CUBIC_ALPHA_NUM;
    uint64_t den = PL_CUBIC_ALPHA_DEN * state->cwnd_bytes;
    c->w_est_acc += bytes * mss * alpha_num;
    c->w_est_bytes += c->w_est_acc / den;
    c->w_est_acc %= den;
}

static void pl_cubic_avoid(pl_cc_state *state, uint32_t mss, uint64_t bytes, uint64_t now_ns, const pl_rtt *rtt) {
    pl_cc_cubic *c = &state->algo.cubic;
    if (!c->has_epoch) pl_cubic_epoch_start(state, mss, now_ns);
    uint64_t t_ms = (now_ns - c->epoch_start_ns) / PL_NS_PER_MS;
    uint64_t t_next_ms = (now_ns - c->epoch_start_ns + rtt->rtt_ns_smoothed) / PL_NS_PER_MS;
    pl_cubic_grow_estimate(state, mss, bytes);
    if (pl_cubic_w_bytes(c, mss, t_ms) < c->w_est_bytes) {
        /* Reno-friendly region: where Reno would be ahead (short RTTs, small windows),
         * CUBIC is at least Reno. */
        if (c->w_est_bytes > state->cwnd_bytes) state->cwnd_bytes = c->w_est_bytes;
    } else {
        /* Concave or convex region: close (target - cwnd) over one window of acks. */
        uint64_t target = pl_cubic_w_bytes(c, mss, t_next_ms);
        uint64_t most = state->cwnd_bytes * PL_CUBIC_TARGET_NUM / PL_CUBIC_TARGET_DEN;
        if (target < state->cwnd_bytes) target = state->cwnd_bytes;
        if (target > most) target = most;
        c->cwnd_acc += (target - state->cwnd_bytes) * bytes;
        uint64_t step = c->cwnd_acc / state->cwnd_bytes;
        c->cwnd_acc %= state->cwnd_bytes;
        state->cwnd_bytes += step;
    }
    if (state->cwnd_bytes > PL_CC_WINDOW_MOST_BYTES) state->cwnd_bytes = PL_CC_WINDOW_MOST_BYTES;
}

void pl_cc_cubic_on_acked(pl_cc_state *state, uint32_t mss, uint64_t bytes, uint64_t sent_ns, uint64_t now_ns,
                          const pl_rtt *rtt) {
    assert(state != NULL && rtt != NULL);
    assert(sent_ns <= now_ns);
    state->algo.cubic.ack_last_ns = now_ns;
    if (state->cwnd_bytes < state->ssthresh_bytes) {
        state->cwnd_bytes += pl_hystart_on_acked(state, bytes, sent_ns, now_ns);
        if (state->cwnd_bytes > PL_CC_WINDOW_MOST_BYTES) state->cwnd_bytes = PL_CC_WINDOW_MOST_BYTES;
        return;
    }
    pl_cubic_avoid(state, mss, bytes, now_ns, rtt);
}

void pl_cc_cubic_on_idle_ack(pl_cc_state *state, uint64_t now_ns) {
    assert(state != NULL);
    pl_cc_cubic *c = &state->algo.cubic;
    /* Time the window was not the limit is not time on the curve: move the epoch forward
     * by it, so an application that pauses does not come back to a window the curve grew
     * in its absence (RFC 9438 §5.8). */
    if (c->has_epoch && now_ns > c->ack_last_ns) {
        assert(c->ack_last_ns >= c->epoch_start_ns);
        c->epoch_start_ns += now_ns - c->ack_last_ns;
    }
    c->ack_last_ns = now_ns;
}

void pl_cc_cubic_on_congestion(pl_cc_state *state, uint32_t mss) {
    assert(state != NULL);
    pl_cc_cubic *c = &state->algo.cubic;
    uint64_t cwnd = state->cwnd_bytes;
    /* Fast convergence: a reduction below the last plateau means the flow's share shrank;
     * aim lower, at the midpoint of cwnd and its reduced value, to release bandwidth. */
    if (PL_CUBIC_FAST_CONVERGENCE && cwnd < c->w_max_bytes)
        c->w_max_bytes = cwnd * (PL_CUBIC_BETA_DEN + PL_CUBIC_BETA_NUM) / (2 * PL_CUBIC_BETA_DEN);
    else
        c->w_max_bytes = cwnd;
    c->cwnd_prior_bytes = cwnd;
    uint64_t ssthresh = cwnd * PL_CUBIC_BETA_NUM / PL_CUBIC_BETA_DEN;
    uint64_t floor = (uint64_t)PL_CC_WINDOW_MINIMUM_DATAGRAMS * mss;
    if (ssthresh < floor) ssthresh = floor;
    state->ssthresh_bytes = ssthresh;
    state->cwnd_bytes = ssthresh;
    c->has_epoch = 0;
    c->w_est_acc = 0;
    c->cwnd_acc = 0;
    c->hystart.state = PL_HYSTART_DONE;
}

void pl_cc_cubic_on_persistent_congestion(pl_cc_state *state) {
    assert(state != NULL);
    pl_cc_cubic *c = &state->algo.cubic;
    /* The next congestion avoidance starts from where it stands (RFC 9438 §4.8). */
    c->w_max_bytes = 0;
    c->has_epoch = 0;
    c->w_est_acc = 0;
    c->cwnd_acc = 0;
    c->hystart.state = PL_HYSTART_DONE;
}
