/* cc.c: the congestion controller's interface: episodes, undo, and dispatch to the
 * algorithm.  See cc.h for the rules. */
#include "cc.h"
#include "pacer.h"

#include <assert.h>
#include <stddef.h>

_Static_assert(PL_CC_WINDOW_MINIMUM_DATAGRAMS >= 2, "RFC 9002: the window never falls below 2 datagrams");
_Static_assert(PL_CC_WINDOW_INITIAL_DATAGRAMS >= PL_CC_WINDOW_MINIMUM_DATAGRAMS, "start at or above the floor");
_Static_assert((uint64_t)PL_CC_DATAGRAM_MOST * PL_CC_WINDOW_INITIAL_DATAGRAMS < PL_CC_WINDOW_MOST_BYTES,
               "the initial window is below the ceiling");
_Static_assert(PL_NEWRENO_BETA_NUM < PL_NEWRENO_BETA_DEN, "a reduction reduces");

#define PL_CC_ALGO_VALID(algo) \
    ((algo) == PURE_LINK_CC_CUBIC || (algo) == PURE_LINK_CC_NEWRENO || (algo) == PURE_LINK_CC_BBR)

/* The controller's invariants: checked on entry to and exit from every function that
 * changes what they cover.  The read-only queries (the window, recovery, slow start, pacing
 * rate) and on_sent (a count) do not check again: nothing outside this file changes the
 * state they read. */
static void pl_cc_check(const pl_cc *cc) {
    assert(cc != NULL);
    assert(PL_CC_ALGO_VALID(cc->algo));
    assert(cc->state.cwnd_bytes >= (uint64_t)PL_CC_WINDOW_MINIMUM_DATAGRAMS * cc->datagram_bytes);
    assert(cc->state.cwnd_bytes <= PL_CC_WINDOW_MOST_BYTES);
    assert(cc->episode.spurious_packets <= cc->episode.lost_packets);
    (void)cc;
}

void pl_cc_init(pl_cc *cc, uint32_t algo, uint32_t datagram_bytes) {
    assert(cc != NULL);
    assert(PL_CC_ALGO_VALID(algo));
    assert(datagram_bytes >= PL_CC_DATAGRAM_LEAST && datagram_bytes <= PL_CC_DATAGRAM_MOST);
    *cc = (pl_cc){0};
    cc->algo = algo;
    cc->datagram_bytes = datagram_bytes;
    cc->state.cwnd_bytes = (uint64_t)PL_CC_WINDOW_INITIAL_DATAGRAMS * datagram_bytes;
    cc->state.ssthresh_bytes = PL_CC_SSTHRESH_NONE;
    if (algo == PURE_LINK_CC_CUBIC) pl_cc_cubic_init(&cc->state);
    else if (algo == PURE_LINK_CC_BBR) pl_cc_bbr_init(&cc->state, datagram_bytes);
    else pl_cc_newreno_init(&cc->state);
    pl_cc_check(cc);
}

void pl_cc_seed(pl_cc *cc, uint64_t seed) {
    pl_cc_check(cc);
    if (cc->algo == PURE_LINK_CC_BBR) pl_cc_bbr_seed(&cc->state, seed);
}

void pl_cc_on_sent(pl_cc *cc, uint64_t bytes, uint64_t now_ns) {
    (void)now_ns;  /* a count outside the invariants: no check at every packet */
    cc->bytes_sent += bytes;
}

int pl_cc_in_recovery(const pl_cc *cc, uint64_t sent_ns) {
    return cc->episode.open && sent_ns <= cc->episode.start_ns;
}

int pl_cc_recovering(const pl_cc *cc) {
    return cc->episode.open && cc->episode.recovering;
}

int pl_cc_on_acked(pl_cc *cc, uint64_t bytes, uint64_t sent_ns, uint64_t now_ns, const pl_rtt *rtt,
                   uint64_t bytes_in_flight, int app_limited) {
    pl_cc_check(cc);
    assert(rtt != NULL);
    assert(sent_ns <= now_ns);
    assert(bytes <= PL_CC_DATAGRAM_MOST);
    /* Packets sent before the reduction were sent under the old window: their acks say
     * nothing about the new one (RFC 9002 §7.3.2). */
    if (pl_cc_in_recovery(cc, sent_ns)) return 0;
    int ended = 0;
    if (cc->episode.open && cc->episode.recovering) {
        cc->episode.recovering = 0;
        ended = 1;
    }
    /* BBR grows its window from the ACK frame's rate sample, not per packet. */
    if (cc->algo == PURE_LINK_CC_BBR) return ended;
    /* A window the sender did not fill has not been tested by the path; growing it would
     * let it drift arbitrarily far above what the path can take (RFC 9002 §7.8). */
    if (app_limited && bytes_in_flight < cc->state.cwnd_bytes) {
        if (cc->algo == PURE_LINK_CC_CUBIC) pl_cc_cubic_on_idle_ack(&cc->state, now_ns);
        return ended;
    }
    if (cc->algo == PURE_LINK_CC_CUBIC)
        pl_cc_cubic_on_acked(&cc->state, cc->datagram_bytes, bytes, sent_ns, now_ns, rtt);
    else
        pl_cc_newreno_on_acked(&cc->state, cc->datagram_bytes, bytes);
    pl_cc_check(cc);
    return ended;
}

/* Opens a new episode: save the state, then reduce once. */
static void pl_cc_episode_open(pl_cc *cc, uint64_t now_ns) {
    pl_cc_episode *ep = &cc->episode;
    ep->saved = cc->state;
    ep->start_ns = now_ns;
    ep->id = ep->id + 1 == 0 ? 1 : ep->id + 1; /* 0 means "none" */
    ep->lost_packets = 0;
    ep->spurious_packets = 0;
    ep->open = 1;
    ep->recovering = 1;
    /* BBR does not reduce per episode: the round's loss rate moves its bounds. */
    if (cc->algo == PURE_LINK_CC_CUBIC) pl_cc_cubic_on_congestion(&cc->state, cc->datagram_bytes);
    else if (cc->algo == PURE_LINK_CC_NEWRENO) pl_cc_newreno_on_congestion(&cc->state, cc->datagram_bytes);
    cc->congestion_events++;
}

uint32_t pl_cc_on_lost(pl_cc *cc, uint64_t bytes, uint64_t sent_ns, uint64_t now_ns) {
    pl_cc_check(cc);
    assert(sent_ns <= now_ns);
    cc->lost_packets++;
    cc->lost_bytes += bytes;
    if (cc->algo == PURE_LINK_CC_BBR) pl_cc_bbr_on_lost(&cc->state, bytes);
    /* One reduction per episode: a loss of a packet sent before the episode began is a
     * symptom of the congestion already answered. */
    if (!pl_cc_in_recovery(cc, sent_ns)) pl_cc_episode_open(cc, now_ns);
    assert(cc->episode.lost_packets < UINT32_MAX);
    cc->episode.lost_packets++;
    pl_cc_check(cc);
    return cc->episode.id;
}

void pl_cc_on_spurious(pl_cc *cc, uint32_t episode, uint64_t now_ns) {
    pl_cc_check(cc);
    assert(episode >= 1);
    (void)now_ns;
    cc->spurious_losses++;
    pl_cc_episode *ep = &cc->episode;
    /* Only the current episode can be undone: restoring an older one would restore a
     * window from before reductions that were not undone (the ngtcp2 fault). */
    if (!ep->open || episode != ep->id) return;
    assert(ep->spurious_packets < ep->lost_packets);
    ep->spurious_packets++;
    if (ep->spurious_packets < ep->lost_packets) return; /* a genuine loss may remain */
    /* Every loss of the episode arrived late: the reduction answered no congestion.  Restore
     * its own snapshot (RFC 9438 §4.9), unless the window has since grown past it.  BBR
     * keeps its model and restores the bounds the episode's losses lowered. */
    if (cc->algo == PURE_LINK_CC_BBR) {
        pl_cc_bbr_undo(&cc->state, &ep->saved);
    } else if (cc->state.cwnd_bytes < ep->saved.cwnd_bytes) {
        uint64_t ack_last_ns = cc->state.algo.cubic.ack_last_ns;
        cc->state = ep->saved;
        /* The clock of the last ack is a fact, not state to roll back: CUBIC measures
         * app-limited gaps from it. */
        if (cc->algo == PURE_LINK_CC_CUBIC) cc->state.algo.cubic.ack_last_ns = ack_last_ns;
    }
    ep->open = 0;
    ep->recovering = 0;
    cc->congestion_undos++;
    pl_cc_check(cc);
}

void pl_cc_on_persistent_congestion(pl_cc *cc, uint64_t now_ns) {
    pl_cc_check(cc);
    (void)now_ns;
    cc->state.cwnd_bytes = (uint64_t)PL_CC_WINDOW_MINIMUM_DATAGRAMS * cc->datagram_bytes;
    if (cc->algo == PURE_LINK_CC_CUBIC) pl_cc_cubic_on_persistent_congestion(&cc->state);
    else if (cc->algo == PURE_LINK_CC_BBR) pl_cc_bbr_on_persistent_congestion(&cc->state);
    else cc->state.algo.newreno.acked_bytes = 0;
    /* Nothing was heard for several PTOs: whatever the losses turn out to be, the path
     * was not carrying this window.  Close the episode so no undo brings it back, and end
     * recovery (RFC 9002 §7.6.2 resets the recovery start time). */
    cc->episode.open = 0;
    cc->episode.recovering = 0;
    cc->persistent_congestions++;
    pl_cc_check(cc);
}

uint64_t pl_cc_cwnd(const pl_cc *cc) {
    return cc->state.cwnd_bytes;
}

uint64_t pl_cc_ssthresh(const pl_cc *cc) {
    return cc->state.ssthresh_bytes;
}

int pl_cc_in_slow_start(const pl_cc *cc) {
    if (cc->algo == PURE_LINK_CC_BBR) return pl_cc_bbr_in_startup(&cc->state);
    return cc->state.cwnd_bytes < cc->state.ssthresh_bytes;
}

/* Loss-based controllers steer by losses and ACKs alone: the rate sample is for model-based
 * ones. */
void pl_cc_on_rate_sample(pl_cc *cc, const pl_rate_sample *rs, const pl_rtt *rtt, uint64_t now_ns) {
    pl_cc_check(cc);
    assert(rs != NULL && rtt != NULL);
    if (cc->algo != PURE_LINK_CC_BBR) return;
    pl_cc_bbr_on_rate_sample(&cc->state, rs, now_ns);
    pl_cc_check(cc);
}

/* BBR paces at its model's rate; loss-based controllers at cwnd / srtt with a gain
 * (pacer.h); no RTT yet: unpaced. */
uint64_t pl_cc_pacing_rate(const pl_cc *cc, const pl_rtt *rtt) {
    assert(rtt != NULL);
    if (cc->algo == PURE_LINK_CC_BBR) {
        uint64_t rate = pl_cc_bbr_pacing_rate(&cc->state, rtt);
        return rate > PL_PACER_RATE_MOST ? PL_PACER_RATE_MOST : rate;
    }
    if (!rtt->has_sample) return 0;
    return pl_pacer_rate_bytes_per_s(pl_cc_cwnd(cc), rtt->rtt_ns_smoothed, pl_cc_in_slow_start(cc));
}
