/* sim_tcp_cc.c: the simulated TCP's congestion window: slow start (with Linux's HyStart
 * delay test for CUBIC), CUBIC (RFC 9438) and NewReno (RFC 5681) congestion avoidance.
 * See sim_tcp.h.
 *
 * Units: windows in 1/65536 segment (SIM_TCP_FP), CUBIC's time in microseconds.  The
 * curve C (t - K)^3 is computed in 128-bit integers: with t - K clamped to 10^9 us
 * (1,000 s), 2 * 2^16 * (10^9)^3 is about 1.3e32, far below 2^128. */
#include "sim_tcp.h"

#include <assert.h>
#include <string.h>

#define US_PER_S 1000000ull
#define CUBIC_SPAN_US_MOST 1000000000ull  /* |t - K| beyond this is clamped (1,000 s) */
#define CUBIC_K_US_MOST (1ull << 40)      /* bisection range of K (about 12.7 days) */
#define WINDOW_LEAST_FP (2ull * SIM_TCP_FP) /* ssthresh never below 2 segments */

typedef unsigned __int128 u128;

_Static_assert((u128)2 * SIM_TCP_FP * CUBIC_SPAN_US_MOST * CUBIC_SPAN_US_MOST * CUBIC_SPAN_US_MOST < ((u128)1 << 127),
               "the cubic term fits 128 bits");

void sim_tcp_cc_init(sim_tcp_cc *cc, sim_tcp_algo algo, uint32_t initial_window, uint64_t window_most_segments,
                     int hystart) {
    assert(algo == SIM_TCP_CUBIC || algo == SIM_TCP_NEWRENO);
    assert(initial_window >= 1 && window_most_segments >= 2);
    memset(cc, 0, sizeof *cc);
    cc->algo = algo;
    cc->hystart = hystart && algo == SIM_TCP_CUBIC; /* HyStart is part of Linux's CUBIC */
    cc->window_most_fp = window_most_segments << SIM_TCP_FP_SHIFT;
    cc->cwnd_fp = (uint64_t)initial_window << SIM_TCP_FP_SHIFT;
    if (cc->cwnd_fp > cc->window_most_fp) cc->cwnd_fp = cc->window_most_fp;
    cc->ssthresh_fp = UINT64_MAX;
    cc->round_rtt_min_ns = UINT64_MAX;
}

uint64_t sim_tcp_cc_cwnd(const sim_tcp_cc *cc) {
    uint64_t s = cc->cwnd_fp >> SIM_TCP_FP_SHIFT;
    return s ? s : 1;
}

uint64_t sim_tcp_cc_ssthresh(const sim_tcp_cc *cc) {
    return cc->ssthresh_fp == UINT64_MAX ? UINT64_MAX : cc->ssthresh_fp >> SIM_TCP_FP_SHIFT;
}

int sim_tcp_cc_in_slow_start(const sim_tcp_cc *cc) { return cc->cwnd_fp < cc->ssthresh_fp; }

void sim_tcp_cc_set_cwnd(sim_tcp_cc *cc, uint64_t segments) {
    if (segments == 0) segments = 1;
    uint64_t fp = segments << SIM_TCP_FP_SHIFT;
    cc->cwnd_fp = fp < cc->window_most_fp ? fp : cc->window_most_fp;
    cc->acc = 0;
}

/* ---- CUBIC's curve ---- */

/* floor(cbrt(x)) by bisection over [0, CUBIC_K_US_MOST). */
static uint64_t cbrt_u128(u128 x) {
    uint64_t lo = 0, hi = CUBIC_K_US_MOST;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((u128)mid * mid * mid <= x) lo = mid;
        else hi = mid;
    }
    return lo;
}

uint64_t sim_cubic_k_us(uint64_t w_max_fp, uint64_t cwnd_fp) {
    if (cwnd_fp >= w_max_fp) return 0;
    /* K = cbrt((W_max - cwnd) / C) seconds; in us: cbrt(delta_fp / FP * C_DEN / C_NUM * 10^18). */
    u128 x = (u128)(w_max_fp - cwnd_fp) * SIM_CUBIC_C_DEN * US_PER_S * US_PER_S * US_PER_S /
             ((u128)SIM_CUBIC_C_NUM * SIM_TCP_FP);
    return cbrt_u128(x);
}

uint64_t sim_cubic_w_fp(uint64_t origin_fp, uint64_t k_us, uint64_t t_us) {
    uint64_t d = t_us >= k_us ? t_us - k_us : k_us - t_us;
    if (d > CUBIC_SPAN_US_MOST) d = CUBIC_SPAN_US_MOST;
    /* C d^3 in fixed point: C_NUM * FP * d^3 / (C_DEN * 10^18). */
    u128 term = (u128)SIM_CUBIC_C_NUM * SIM_TCP_FP * d * d * d /
                ((u128)SIM_CUBIC_C_DEN * US_PER_S * US_PER_S * US_PER_S);
    if (t_us >= k_us) {
        u128 w = (u128)origin_fp + term;
        return w > UINT64_MAX ? UINT64_MAX : (uint64_t)w;
    }
    return term >= origin_fp ? 0 : origin_fp - (uint64_t)term;
}

/* ---- growth ---- */

/* cwnd += acked * num / (den * cwnd) segments, keeping the remainder in *acc. */
static void grow_over_cwnd(uint64_t *w_fp, uint64_t *acc, uint64_t cwnd_fp, uint64_t acked, u128 num_fp2,
                           uint64_t den) {
    u128 total = (u128)acked * num_fp2 + *acc;
    u128 div = (u128)den * cwnd_fp;
    u128 inc = total / div;
    *acc = (uint64_t)(total % div);
    u128 w = (u128)*w_fp + inc;
    *w_fp = w > UINT64_MAX ? UINT64_MAX : (uint64_t)w;
}

static void cubic_start_epoch(sim_tcp_cc *cc, uint64_t now_ns) {
    cc->epoch_start_ns = now_ns ? now_ns : 1;
    if (cc->cwnd_fp < cc->w_max_fp) {
        cc->k_us = sim_cubic_k_us(cc->w_max_fp, cc->cwnd_fp);
        cc->origin_fp = cc->w_max_fp;
    } else {
        cc->k_us = 0;
        cc->origin_fp = cc->cwnd_fp;
    }
    cc->w_est_fp = cc->cwnd_fp;
    cc->acc = cc->est_acc = 0;
}

static void cubic_on_ack(sim_tcp_cc *cc, uint64_t acked, uint64_t now_ns, uint64_t min_rtt_ns) {
    if (cc->epoch_start_ns == 0) cubic_start_epoch(cc, now_ns);
    const uint64_t t_us = (now_ns - cc->epoch_start_ns) / 1000;
    /* The window aims at W_cubic one RTT ahead, at most 1.5 cwnd (RFC 9438 §4.2). */
    uint64_t target = sim_cubic_w_fp(cc->origin_fp, cc->k_us, t_us + min_rtt_ns / 1000);
    const uint64_t cwnd = cc->cwnd_fp;
    if (target < cwnd) target = cwnd;
    if (target > cwnd + cwnd / 2) target = cwnd + cwnd / 2;
    grow_over_cwnd(&cc->cwnd_fp, &cc->acc, cwnd, acked, (u128)(target - cwnd) * SIM_TCP_FP, 1);
    /* Reno-friendly region (§4.3): W_est grows by alpha per window acknowledged; alpha is
     * 1 once W_est has reached the window before the last reduction. */
    int full = cc->w_est_fp >= cc->cwnd_prior_fp;
    grow_over_cwnd(&cc->w_est_fp, &cc->est_acc, cwnd, acked,
                   (u128)(full ? 1 : SIM_CUBIC_ALPHA_NUM) * SIM_TCP_FP * SIM_TCP_FP, full ? 1 : SIM_CUBIC_ALPHA_DEN);
    if (sim_cubic_w_fp(cc->origin_fp, cc->k_us, t_us) < cc->w_est_fp && cc->cwnd_fp < cc->w_est_fp)
        cc->cwnd_fp = cc->w_est_fp;
}

void sim_tcp_cc_on_ack(sim_tcp_cc *cc, uint64_t acked, uint64_t now_ns, uint64_t min_rtt_ns) {
    if (acked == 0) return;
    if (cc->cwnd_fp < cc->ssthresh_fp) {
        /* Slow start: one segment per segment acknowledged, up to ssthresh; the rest of
         * this ACK counts in congestion avoidance. */
        uint64_t take = acked;
        if (cc->ssthresh_fp != UINT64_MAX) {
            uint64_t room = (cc->ssthresh_fp - cc->cwnd_fp + SIM_TCP_FP - 1) >> SIM_TCP_FP_SHIFT;
            if (room < take) take = room;
        }
        cc->cwnd_fp += take << SIM_TCP_FP_SHIFT;
        if (cc->cwnd_fp > cc->ssthresh_fp) cc->cwnd_fp = cc->ssthresh_fp;
        acked -= take;
    }
    if (acked > 0) {
        if (cc->algo == SIM_TCP_CUBIC) cubic_on_ack(cc, acked, now_ns, min_rtt_ns);
        else grow_over_cwnd(&cc->cwnd_fp, &cc->acc, cc->cwnd_fp, acked, (u128)SIM_TCP_FP * SIM_TCP_FP, 1);
    }
    if (cc->cwnd_fp > cc->window_most_fp) cc->cwnd_fp = cc->window_most_fp;
}

static void hystart_exit(sim_tcp_cc *cc) {
    cc->ssthresh_fp = cc->cwnd_fp;
    cc->hystart_done = 1;
    cc->hystart_exits++;
}

void sim_tcp_cc_on_rtt(sim_tcp_cc *cc, uint64_t now_ns, uint64_t rtt_ns, uint64_t min_rtt_ns, uint64_t snd_una,
                       uint64_t snd_nxt, int paced) {
    if (!cc->hystart || cc->hystart_done || !sim_tcp_cc_in_slow_start(cc)) return;
    if (snd_una >= cc->round_end_seq) { /* a new round of one window */
        cc->round_end_seq = snd_nxt;
        cc->round_start_ns = cc->last_ack_ns = now_ns;
        cc->round_rtt_min_ns = UINT64_MAX;
        cc->round_samples = 0;
    }
    if (sim_tcp_cc_cwnd(cc) < SIM_HYSTART_WINDOW_LEAST) return;
    if (now_ns - cc->last_ack_ns <= SIM_HYSTART_ACK_DELTA_NS) {
        cc->last_ack_ns = now_ns;
        uint64_t train_most = paced ? min_rtt_ns : min_rtt_ns / 2;
        if (now_ns - cc->round_start_ns > train_most) {
            hystart_exit(cc); /* a round's ACKs as long as the path's pipe: the window fills it */
            return;
        }
    }
    if (cc->round_samples >= SIM_HYSTART_SAMPLES) return;
    if (rtt_ns < cc->round_rtt_min_ns) cc->round_rtt_min_ns = rtt_ns;
    if (++cc->round_samples < SIM_HYSTART_SAMPLES) return;
    uint64_t thresh = min_rtt_ns / 8;
    if (thresh < SIM_HYSTART_DELAY_LEAST_NS) thresh = SIM_HYSTART_DELAY_LEAST_NS;
    if (thresh > SIM_HYSTART_DELAY_MOST_NS) thresh = SIM_HYSTART_DELAY_MOST_NS;
    if (cc->round_rtt_min_ns >= min_rtt_ns + thresh) hystart_exit(cc); /* a queue is building */
}

void sim_tcp_cc_on_congestion(sim_tcp_cc *cc) {
    const uint64_t cwnd = cc->cwnd_fp;
    cc->cwnd_prior_fp = cwnd;
    uint64_t ss;
    if (cc->algo == SIM_TCP_CUBIC) {
        /* Fast convergence (§4.7): a window that did not reach the last W_max releases
         * bandwidth by aiming lower, at (1 + beta) / 2 of it. */
        if (cwnd < cc->w_max_fp)
            cc->w_max_fp = (uint64_t)((u128)cwnd * (SIM_CUBIC_BETA_DEN + SIM_CUBIC_BETA_NUM) / (2 * SIM_CUBIC_BETA_DEN));
        else
            cc->w_max_fp = cwnd;
        ss = (uint64_t)((u128)cwnd * SIM_CUBIC_BETA_NUM / SIM_CUBIC_BETA_DEN);
    } else {
        ss = cwnd / 2;
    }
    cc->ssthresh_fp = ss > WINDOW_LEAST_FP ? ss : WINDOW_LEAST_FP;
    cc->epoch_start_ns = 0;
    cc->acc = cc->est_acc = 0;
    cc->hystart_done = 1; /* windows below ssthresh in recovery are no slow start to end */
    cc->reductions++;
}

void sim_tcp_cc_on_timeout(sim_tcp_cc *cc) {
    sim_tcp_cc_set_cwnd(cc, 1);
    cc->epoch_start_ns = 0;
    cc->hystart_done = 0;
    cc->round_end_seq = 0;
}
