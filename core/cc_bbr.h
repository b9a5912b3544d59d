/* cc_bbr.h: the state and the named constants of our BBR (cc_bbr.c), a model-based
 * controller in the BBRv3 line (draft-ietf-ccwg-bbr).  Included by cc.h, whose union holds
 * the state; the functions are declared in cc.h with the other algorithms'.
 *
 * Gains are in hundredths (PL_BBR_GAIN_UNIT = 1.00), rates in bytes per second, volumes
 * in bytes, times in nanoseconds.  PL_BBR_NONE stands for "no bound" (infinity) and for
 * "no estimate yet" (min RTT). */
#ifndef PL_CC_BBR_H
#define PL_CC_BBR_H

#include <stdint.h>

#define PL_BBR_NONE UINT64_MAX
#define PL_BBR_GAIN_UNIT 100u

/* Startup doubles the delivery rate per round: pacing gain 4 ln 2 = 2.77 (the least gain
 * that does), and a window twice the estimated BDP so the pacer, not the window, limits. */
#define PL_BBR_GAIN_STARTUP_PACING 277u
#define PL_BBR_GAIN_STARTUP_CWND 200u
/* Drain: the inverse of Startup's gain empties Startup's queue in about one round. */
#define PL_BBR_GAIN_DRAIN_PACING 35u
/* ProbeBW: DOWN drains whatever queue UP built, CRUISE and REFILL hold the rate, UP probes
 * a quarter above it; the window is two BDPs (a quarter more while probing). */
#define PL_BBR_GAIN_DOWN_PACING 90u
#define PL_BBR_GAIN_CRUISE_PACING 100u
#define PL_BBR_GAIN_REFILL_PACING 100u
#define PL_BBR_GAIN_UP_PACING 125u
#define PL_BBR_GAIN_CWND 200u
#define PL_BBR_GAIN_UP_CWND 225u
/* ProbeRTT holds the flight to half a BDP: enough to see the path's bare RTT. */
#define PL_BBR_GAIN_PROBE_RTT_CWND 50u
/* How far below the estimate to pace.  The draft paces 1 % below it, so that a flow alone
 * builds no standing queue.  We pace at it: on a clean path the estimate is exact and a
 * margin idles the bottleneck by its percentage for good; on a noisy one the max filter
 * overestimates by more than 1 % anyway, and what bounds the queue there is the window
 * (and each DOWN phase, which drains it). */
#define PL_BBR_PACING_MARGIN_PERCENT 0u

/* Loss: below 2 % of the data in a round loss is the path's noise, not our excess; at or
 * above it the flight was too high.  The response cuts the bounds to 70 %; in CRUISE the
 * window keeps 15 % of inflight_hi free for other flows. */
#define PL_BBR_LOSS_THRESH_PERCENT 2u
#define PL_BBR_BETA_PERCENT 70u
#define PL_BBR_HEADROOM_PERCENT 15u
/* Loss from a standing queue.  A loss round that lost anything while even its least RTT
 * sample stood at least min_rtt / 4 above the min RTT lost from a queue that stayed full
 * for the whole round: the path is shared with a flow that fills the queue (or our own
 * estimate runs high), however small the loss rate.  Such a round cuts the window bounds
 * to 70 % (inflight_lo; and inflight_hi, once per ProbeBW cycle, outside probes, unless a
 * probe's loss already set it), with no floor at what the round delivered. */
#define PL_BBR_QUEUE_LOSS_RTT_DIVISOR 4u

/* Startup ends when three rounds in a row grew the bandwidth by less than 25 %, or when a
 * round lost at least 6 packets at a loss rate above the threshold. */
#define PL_BBR_FULL_BW_GROWTH_PERCENT 125u
#define PL_BBR_FULL_BW_ROUNDS 3u
#define PL_BBR_STARTUP_FULL_LOSS_PACKETS 6u

/* The least window: keeps the ACK clock going (4 datagrams). */
#define PL_BBR_MIN_PIPE_DATAGRAMS 4u
/* Min RTT filter and ProbeRTT timing. */
#define PL_BBR_MIN_RTT_WINDOW_NS 10000000000ull
#define PL_BBR_PROBE_RTT_INTERVAL_NS 5000000000ull
#define PL_BBR_PROBE_RTT_DURATION_NS 200000000ull
/* ProbeRTT is skipped when the interval's least RTT came within min_rtt / 8 of the min. */
#define PL_BBR_PROBE_RTT_SIMILAR_DIVISOR 8u
/* Between bandwidth probes: 2 s, or the time a CUBIC flow with our BDP takes to regain
 * its window after a loss if longer (K = cbrt(W (1 - beta) / C) s, beta 0.7, C 0.4, W in
 * datagrams), plus up to 1 s at random (so flows do not synchronise); or sooner, after as
 * many rounds as a Reno flow needs to grow by the BDP (at most 63). */
#define PL_BBR_PROBE_WAIT_NS_BASE 2000000000ull
#define PL_BBR_CUBIC_K_NUMERATOR 3u   /* (1 - beta) / C = 0.3 / 0.4 */
#define PL_BBR_CUBIC_K_DENOMINATOR 4u
#define PL_BBR_CUBIC_K_DATAGRAMS_MOST 1000000ull /* bounds the cube root's argument */
#define PL_BBR_CUBIC_K_BDP_GAIN 100u  /* W = the BDP (in PL_BBR_GAIN_UNIT) */
#define PL_BBR_NS_PER_MS 1000000ull
#define PL_BBR_PROBE_WAIT_NS_RANDOM 1000000000ull
#define PL_BBR_RENO_ROUNDS_MOST 63u
/* The max-bw filter spans 2 ProbeBW cycles (its two slots). */
#define PL_BBR_BW_FILTER_CYCLES 2u
/* The ACK-aggregation filter spans 10 rounds, as two slots of 5 (after Startup). */
#define PL_BBR_EXTRA_ACKED_SLOT_ROUNDS 5u
/* In Startup, slots of 1 round: the filter spans the last one or two rounds. */
#define PL_BBR_EXTRA_ACKED_SLOT_ROUNDS_STARTUP 1u
/* ProbeBW UP raises inflight_hi by 1, 2, 4, ... datagrams per round, at most 2^30. */
#define PL_BBR_PROBE_UP_ROUNDS_MOST 30u
/* The send quantum is a millisecond of pacing, 2 datagrams to 64 KiB. */
#define PL_BBR_SEND_QUANTUM_NS 1000000ull
#define PL_BBR_SEND_QUANTUM_DATAGRAMS_LEAST 2u
#define PL_BBR_SEND_QUANTUM_BYTES_MOST 65536ull
/* Delivery rates above this are clamped (8 Tbit/s): bounds the arithmetic. */
#define PL_BBR_BW_MOST 1000000000000ull
#define PL_BBR_NS_PER_S 1000000000ull

_Static_assert(PL_BBR_GAIN_DRAIN_PACING * PL_BBR_GAIN_STARTUP_PACING <= PL_BBR_GAIN_UNIT * PL_BBR_GAIN_UNIT,
               "Drain undoes at least Startup's gain");
_Static_assert(PL_BBR_GAIN_DOWN_PACING < PL_BBR_GAIN_UNIT && PL_BBR_GAIN_UP_PACING > PL_BBR_GAIN_UNIT,
               "DOWN drains, UP probes");
_Static_assert(PL_BBR_BETA_PERCENT < 100 && PL_BBR_HEADROOM_PERCENT < 100, "reductions reduce");
_Static_assert(PL_BBR_LOSS_THRESH_PERCENT < 100, "a loss rate");
_Static_assert(PL_BBR_PACING_MARGIN_PERCENT < 100, "a margin below the estimate");
_Static_assert(PL_BBR_PROBE_RTT_INTERVAL_NS < PL_BBR_MIN_RTT_WINDOW_NS,
               "ProbeRTT refreshes the min RTT before the filter forgets it");
_Static_assert(PL_BBR_BW_FILTER_CYCLES == 2, "the filter is two slots");
_Static_assert(PL_BBR_PROBE_UP_ROUNDS_MOST < 64, "a shift of 1");
_Static_assert(PL_BBR_QUEUE_LOSS_RTT_DIVISOR > 0, "a queue");
_Static_assert(PL_BBR_CUBIC_K_DATAGRAMS_MOST * PL_BBR_CUBIC_K_NUMERATOR * 1000000000ull < (1ull << 63),
               "K's argument in ms^3 fits");

enum {
    PL_BBR_STARTUP = 0,
    PL_BBR_DRAIN = 1,
    PL_BBR_PROBE_BW_DOWN = 2,
    PL_BBR_PROBE_BW_CRUISE = 3,
    PL_BBR_PROBE_BW_REFILL = 4,
    PL_BBR_PROBE_BW_UP = 5,
    PL_BBR_PROBE_RTT = 6
};

/* Where the ACKs stand relative to a bandwidth probe. */
enum {
    PL_BBR_ACKS_INIT = 0,
    PL_BBR_ACKS_REFILLING = 1,
    PL_BBR_ACKS_PROBE_STARTING = 2,
    PL_BBR_ACKS_PROBE_FEEDBACK = 3,
    PL_BBR_ACKS_PROBE_STOPPING = 4
};

typedef struct pl_cc_bbr {
    /* The model. */
    uint64_t bw_slot[PL_BBR_BW_FILTER_CYCLES]; /* max delivery rate in this / the last cycle */
    uint64_t max_bw;                 /* max of the slots */
    uint64_t bw_lo;                  /* lower bound from loss; PL_BBR_NONE: none */
    uint64_t bw;                     /* min(max_bw, bw_lo): what the model steers by */
    uint64_t bw_latest;              /* max delivery rate in this loss round */
    uint64_t inflight_hi;            /* upper bound on the flight; PL_BBR_NONE: none */
    uint64_t inflight_lo;            /* lower bound from loss; PL_BBR_NONE: none */
    uint64_t inflight_latest;        /* max delivered-per-sample in this loss round */
    uint64_t inflight_hi_cut_delivered; /* the delivered count at the last queue-loss cut of it */
    uint64_t inflight_hi_cycle;      /* inflight_hi before this cycle's probe loss; PL_BBR_NONE: none */
    uint64_t min_rtt_ns;             /* PL_BBR_NONE: no sample yet */
    uint64_t min_rtt_stamp_ns;
    uint64_t rtt_least_ns;           /* the least RTT sample of the run (PL_BBR_NONE: none yet) */
    uint64_t probe_rtt_min_ns;       /* least RTT since probe_rtt_min_stamp_ns */
    uint64_t probe_rtt_min_stamp_ns;
    uint64_t extra_acked_slot[2];    /* ACK aggregation: max excess in each 5-round slot */
    uint64_t extra_acked_interval_start_ns;
    uint64_t extra_acked_delivered;
    /* Rounds: a round ends when a packet sent after it began is acknowledged. */
    uint64_t next_round_delivered;
    uint64_t round_count;
    uint64_t loss_round_delivered;   /* the loss round's own boundary (not reset by phases) */
    uint64_t loss_round_lost_bytes;  /* declared lost in this loss round */
    uint64_t loss_round_acked_bytes; /* newly acknowledged in this loss round */
    uint32_t loss_round_lost_packets;
    uint64_t loss_round_rtt_min_ns;  /* least RTT sample in this loss round; PL_BBR_NONE: none */
    uint64_t loss_round_start_ns;    /* when this loss round began */
    uint64_t loss_round_bw;          /* the loss round just ended: acknowledged bytes/s over it */
    uint32_t extra_acked_slot_rounds;
    uint64_t delivered;              /* the sender's delivered count at the last sample */
    /* Startup. */
    uint64_t full_bw;
    uint32_t full_bw_count;
    /* ProbeBW. */
    uint64_t cycle_stamp_ns;
    uint64_t bw_probe_wait_ns;
    uint64_t rounds_since_bw_probe;
    uint64_t bw_probe_up_cnt;        /* bytes acknowledged per datagram of inflight_hi growth */
    uint64_t bw_probe_up_acks;
    uint32_t bw_probe_up_rounds;
    uint32_t cycle_count;
    uint8_t up_capped_this_round;    /* UP: inflight_hi capped the window in this round */
    uint8_t up_capped_last_round;    /* ... in the round before */
    /* ProbeRTT. */
    uint64_t probe_rtt_done_ns;      /* 0: not yet armed */
    uint64_t prior_cwnd;             /* the window before ProbeRTT */
    /* Output and scratch. */
    uint64_t pacing_rate;            /* bytes/s; 0: none yet */
    uint64_t rng;                    /* xorshift64* state (never 0) */
    uint32_t mss;
    uint8_t mode;                    /* PL_BBR_STARTUP .. PL_BBR_PROBE_RTT */
    uint8_t ack_phase;               /* PL_BBR_ACKS_* */
    uint8_t full_bw_reached;
    uint8_t startup_loss_exit;       /* Startup ended on loss, not on a bandwidth plateau */
    uint8_t round_start;             /* this sample began a round */
    uint8_t loss_round_start;        /* this sample began a loss round */
    uint8_t loss_round_congested;    /* the loss round just ended lost above the threshold */
    uint8_t loss_round_queue_loss;   /* ... or lost anything from a standing queue */
    uint8_t loss_round_answered;     /* this loss round's losses ended Startup: their answer */
    uint8_t sent_in_probe_rtt;       /* packets left in ProbeRTT during this loss round */
    uint8_t loss_round_of_probe_rtt; /* ... during the loss round before: this one counts their losses */
    uint8_t sent_in_probe;           /* packets left in REFILL or UP during this loss round */
    uint8_t loss_round_of_probe;     /* ... during the loss round before */
    uint8_t queue_before_probe;      /* the last loss round of packets sent in neither had a standing queue */
    uint8_t loss_round_own_queue;    /* the loss round just ended: a probe's packets behind its own queue */
    uint8_t inflight_hi_queue_cut;   /* inflight_hi was cut for loss in this cycle */
    uint8_t bw_probe_samples;        /* samples now reflect a bandwidth probe */
    uint8_t probe_rtt_round_done;
    uint8_t probe_rtt_expired;
    uint8_t extra_acked_index;       /* the slot being filled */
} pl_cc_bbr;

#endif
