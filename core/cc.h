/* cc.h: congestion control behind one small interface: CUBIC (RFC 9438, with HyStart++,
 * RFC 9406), NewReno (RFC 9002 §7) or BBR (draft-ietf-ccwg-bbr, cc_bbr.c), chosen at init
 * and dispatched by a switch (the state holds no function pointers, so it can live
 * anywhere in caller memory).
 *
 * Congestion episodes and undo.  A loss of a packet sent after the current episode began
 * (or any loss when no episode is current: none yet, or the last one was undone or ended
 * by persistent congestion) opens a new episode: one reduction per episode (RFC 9002
 * §7.3.2, the recovery period).
 * The episode saves the whole controller state from just before its reduction and counts
 * the losses attributed to it (every loss declared while it is current and whose packet
 * was sent before it began).  pl_cc_on_lost() returns the episode's id; the sender keeps
 * it with the lost packet, and if that packet is acknowledged after all it calls
 * pl_cc_on_spurious() with the id.  When every loss of the current episode has turned out
 * late, the saved state is restored (the seed's rule, [R 143]).
 *
 * What this deliberately does not do (the ngtcp2 behaviour the seed measured, [R 140-142]):
 * restore a window saved before an *earlier* episode.  Each episode saves its own state,
 * an undo only ever restores the undone episode's own snapshot, and only the current
 * episode can be undone.  A genuine loss is never acknowledged, so an episode with one
 * genuine loss never reaches "all late" and is never undone, however long the sender
 * keeps or forgets its lost packets. */
#ifndef PL_CC_H
#define PL_CC_H

#include <stdint.h>

#include "cc_bbr.h"
#include "pure_link.h"
#include "rtt.h"

/* RFC 9002 §7.2: initial window 10 datagrams, never below 2. */
#define PL_CC_WINDOW_INITIAL_DATAGRAMS 10u
#define PL_CC_WINDOW_MINIMUM_DATAGRAMS 2u
/* The window's ceiling: 4 GiB is ~2.9 M full packets, far above any bandwidth-delay
 * product we meet; it bounds CUBIC's integer arithmetic (see cc_cubic.c). */
#define PL_CC_WINDOW_MOST_BYTES (1ull << 32)
/* Datagram sizes the controller accepts. */
#define PL_CC_DATAGRAM_LEAST 64u
#define PL_CC_DATAGRAM_MOST  65535u
/* ssthresh before the first congestion event: slow start. */
#define PL_CC_SSTHRESH_NONE UINT64_MAX
/* NewReno's reduction (RFC 9002 kLossReductionFactor 0.5). */
#define PL_NEWRENO_BETA_NUM 1u
#define PL_NEWRENO_BETA_DEN 2u

/* NewReno's own state: bytes acknowledged in congestion avoidance, not yet a datagram's
 * worth of growth (so growth is exactly one datagram per window acknowledged). */
typedef struct pl_cc_newreno {
    uint64_t acked_bytes;
} pl_cc_newreno;

/* HyStart++ (RFC 9406) for the first slow start of CUBIC. */
enum { PL_HYSTART_SLOW_START = 0, PL_HYSTART_CSS = 1, PL_HYSTART_DONE = 2 };
typedef struct pl_cc_hystart {
    uint64_t round_start_ns;       /* a round ends with the ack of a packet sent at or after */
    uint64_t rtt_ns_round_min;     /* least sample of this round; UINT64_MAX none */
    uint64_t rtt_ns_last_round_min;/* of the round before; UINT64_MAX none */
    uint64_t rtt_ns_css_baseline;  /* the round min RTT that sent us into CSS */
    uint32_t samples;              /* samples taken this round */
    uint32_t css_rounds;           /* rounds spent in CSS */
    uint32_t state;                /* PL_HYSTART_* */
} pl_cc_hystart;

/* CUBIC's own state, in bytes and milliseconds (see cc_cubic.c for the units). */
typedef struct pl_cc_cubic {
    uint64_t w_max_bytes;          /* W_max: window just before the last reduction (or less,
                                      after fast convergence); 0 none */
    uint64_t cwnd_prior_bytes;     /* cwnd just before the last reduction */
    uint64_t cwnd_epoch_bytes;     /* cwnd when this congestion avoidance stage began */
    uint64_t epoch_start_ns;       /* t_epoch (valid when has_epoch) */
    uint64_t k_ms;                 /* K */
    uint64_t w_est_bytes;          /* W_est, the Reno-friendly estimate */
    uint64_t w_est_acc;            /* W_est growth not yet a byte (units: bytes*mss/17) */
    uint64_t cwnd_acc;             /* cwnd growth not yet a byte (units: bytes/cwnd) */
    uint64_t ack_last_ns;          /* time of the last ack (app-limited time is skipped) */
    uint32_t has_epoch;
    pl_cc_hystart hystart;
} pl_cc_cubic;

/* Everything an undo restores (BBR: only its loss-lowered bounds, see pl_cc_bbr_undo). */
typedef struct pl_cc_state {
    uint64_t cwnd_bytes;
    uint64_t ssthresh_bytes;       /* PL_CC_SSTHRESH_NONE before the first reduction */
    union {
        pl_cc_newreno newreno;
        pl_cc_cubic cubic;
        pl_cc_bbr bbr;
    } algo;
} pl_cc_state;

typedef struct pl_cc_episode {
    pl_cc_state saved;             /* the state just before this episode's reduction */
    uint64_t start_ns;             /* packets sent at or before this are in its recovery */
    uint32_t id;                   /* 1, 2, ...; 0: no episode yet */
    uint32_t lost_packets;         /* losses attributed to it */
    uint32_t spurious_packets;     /* of which acknowledged after all */
    uint8_t open;                  /* current: not undone, not collapsed */
    uint8_t recovering;            /* its recovery period has not ended yet */
} pl_cc_episode;

typedef struct pl_cc {
    uint32_t algo;                 /* PURE_LINK_CC_CUBIC, _NEWRENO or _BBR */
    uint32_t datagram_bytes;
    pl_cc_state state;
    pl_cc_episode episode;
    /* Statistics. */
    uint64_t congestion_events;    /* reductions (episodes opened) */
    uint64_t congestion_undos;     /* episodes whose every loss turned out late */
    uint64_t lost_packets;
    uint64_t lost_bytes;
    uint64_t spurious_losses;
    uint64_t persistent_congestions;
    uint64_t bytes_sent;
} pl_cc;

/* A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation), made by the sender
 * once per ACK frame that newly acknowledges packets; model-based controllers (BBR) steer
 * by it, loss-based ones ignore it. */
typedef struct pl_rate_sample {
    uint64_t delivery_rate_bytes_per_s; /* 0: no valid sample in this ACK */
    uint64_t delivered_bytes;           /* bytes newly delivered over the sample's interval */
    uint64_t interval_ns;               /* max(send elapsed, ack elapsed) */
    uint64_t rtt_ns;                    /* RTT of the newest packet acknowledged (0: none) */
    uint64_t prior_delivered_bytes;     /* sender's delivered count when that packet left */
    uint64_t delivered_total_bytes;     /* sender's delivered count now */
    uint64_t newly_acked_bytes, newly_lost_bytes; /* in this ACK frame */
    uint64_t bytes_in_flight;           /* after this ACK frame */
    uint64_t tx_in_flight_bytes;        /* in flight when the newest acknowledged packet left */
    uint8_t is_app_limited;             /* the sample may understate the path */
    /* The best of the samples each packet of the ACK frame makes on its own, as if it were
     * acknowledged alone (BBR takes the sample above when it is more): a loss round's best
     * (BBR's bw_latest, inflight_latest) then weighs as many samples as the round delivers
     * packets, however many of them a receiver covers with one ACK.  Not for the max
     * filter: with jitter, more samples of a max reach further above the path's rate. */
    uint64_t delivery_rate_best_bytes_per_s;
    uint64_t delivered_best_bytes;
} pl_rate_sample;

void pl_cc_init(pl_cc *cc, uint32_t algo, uint32_t datagram_bytes);
/* Seeds the controller's own randomness (BBR's probe timing; the others have none).
 * Optional: without it every controller starts from the same fixed seed. */
void pl_cc_seed(pl_cc *cc, uint64_t seed);
/* Once per ACK frame, after its pl_cc_on_acked / pl_cc_on_lost calls. */
void pl_cc_on_rate_sample(pl_cc *cc, const pl_rate_sample *rs, const pl_rtt *rtt, uint64_t now_ns);
/* The pacing rate the controller wants (bytes/s; 0: unpaced). */
uint64_t pl_cc_pacing_rate(const pl_cc *cc, const pl_rtt *rtt);
void pl_cc_on_sent(pl_cc *cc, uint64_t bytes, uint64_t now_ns);
/* For every newly acknowledged packet (not ack-only packets).  bytes_in_flight counts
 * these bytes still; app_limited: the packet was sent when the sender had nothing more
 * to send.  Growth is skipped in recovery, and when app_limited and the flight was below
 * the window (the window was not the limit: RFC 9002 §7.8).  Returns 1 when this ack
 * ends the current recovery period (tell RACK: pl_rack_on_recovery_end), else 0. */
int pl_cc_on_acked(pl_cc *cc, uint64_t bytes, uint64_t sent_ns, uint64_t now_ns, const pl_rtt *rtt,
                   uint64_t bytes_in_flight, int app_limited);
/* A packet was declared lost.  Returns the id of the episode the loss belongs to (>= 1);
 * the sender keeps it for pl_cc_on_spurious(). */
uint32_t pl_cc_on_lost(pl_cc *cc, uint64_t bytes, uint64_t sent_ns, uint64_t now_ns);
/* A packet declared lost in episode `episode` was acknowledged.  Call once per packet. */
void pl_cc_on_spurious(pl_cc *cc, uint32_t episode, uint64_t now_ns);
/* RFC 9002 §7.6.2: the window collapses to the minimum; the episode cannot be undone. */
void pl_cc_on_persistent_congestion(pl_cc *cc, uint64_t now_ns);

uint64_t pl_cc_cwnd(const pl_cc *cc);
uint64_t pl_cc_ssthresh(const pl_cc *cc);
int pl_cc_in_slow_start(const pl_cc *cc);
/* Whether a packet sent at sent_ns falls in the current recovery period (its ack will not
 * grow the window; its loss will not reduce it again). */
int pl_cc_in_recovery(const pl_cc *cc, uint64_t sent_ns);
/* Whether the sender is in recovery now: an episode began and no packet sent after its
 * start has been acknowledged yet.  This is RACK's "in recovery" (pl_rack_reo_wnd_ns);
 * note pl_cc_in_recovery(cc, now_ns) is not: it is true only at the episode's first instant. */
int pl_cc_recovering(const pl_cc *cc);

/* ---- For cc.c and the algorithm files only. ---- */
void pl_cc_newreno_init(pl_cc_state *state);
void pl_cc_newreno_on_acked(pl_cc_state *state, uint32_t mss, uint64_t bytes);
void pl_cc_newreno_on_congestion(pl_cc_state *state, uint32_t mss);

void pl_cc_cubic_init(pl_cc_state *state);
void pl_cc_cubic_on_acked(pl_cc_state *state, uint32_t mss, uint64_t bytes, uint64_t sent_ns, uint64_t now_ns,
                          const pl_rtt *rtt);
/* An ack that may not grow the window (app-limited): the time does not count for CUBIC. */
void pl_cc_cubic_on_idle_ack(pl_cc_state *state, uint64_t now_ns);
void pl_cc_cubic_on_congestion(pl_cc_state *state, uint32_t mss);
void pl_cc_cubic_on_persistent_congestion(pl_cc_state *state);
/* CUBIC's curve, exposed for tests: K for a reduction from w_max to cwnd_epoch, and
 * W_cubic(t) in bytes. */
uint64_t pl_cubic_k_ms(uint64_t w_max_bytes, uint64_t cwnd_epoch_bytes, uint32_t mss);
uint64_t pl_cubic_w_bytes(const pl_cc_cubic *cubic, uint32_t mss, uint64_t t_ms);

/* BBR (cc_bbr.c).  It steers by the rate samples; a lost packet only counts toward the
 * round's loss rate; an undo restores only the bounds that loss lowered. */
void pl_cc_bbr_init(pl_cc_state *state, uint32_t mss);
void pl_cc_bbr_seed(pl_cc_state *state, uint64_t seed);
void pl_cc_bbr_on_lost(pl_cc_state *state, uint64_t bytes);
void pl_cc_bbr_on_rate_sample(pl_cc_state *state, const pl_rate_sample *rs, uint64_t now_ns);
void pl_cc_bbr_undo(pl_cc_state *state, const pl_cc_state *saved);
void pl_cc_bbr_on_persistent_congestion(pl_cc_state *state);
uint64_t pl_cc_bbr_pacing_rate(const pl_cc_state *state, const pl_rtt *rtt);
int pl_cc_bbr_in_startup(const pl_cc_state *state);

#endif
