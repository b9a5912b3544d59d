/* cc_newreno.c: NewReno as RFC 9002 §7.3 describes it, in bytes.
 *
 * Slow start adds every acknowledged byte; congestion avoidance adds one datagram per
 * window of acknowledged bytes (the byte-counting form of "mss * acked / cwnd", without
 * its rounding loss); a congestion event halves the window. */
#include "cc.h"

#include <assert.h>
#include <stddef.h>

static uint64_t pl_newreno_floor_bytes(uint32_t mss) {
    return (uint64_t)PL_CC_WINDOW_MINIMUM_DATAGRAMS * mss;
}

void pl_cc_newreno_init(pl_cc_state *state) {
    assert(state != NULL);
    state->algo.newreno.acked_bytes = 0;
}

void pl_cc_newreno_on_acked(pl_cc_state *state, uint32_t mss, uint64_t bytes) {
    assert(state != NULL);
    if (state->cwnd_bytes < state->ssthresh_bytes) {
        state->cwnd_bytes += bytes;
        if (state->cwnd_bytes > PL_CC_WINDOW_MOST_BYTES) state->cwnd_bytes = PL_CC_WINDOW_MOST_BYTES;
        return;
    }
    pl_cc_newreno *nr = &state->algo.newreno;
    nr->acked_bytes += bytes;
    /* bytes is at most one datagram and the window at least two: one step suffices. */
    if (nr->acked_bytes >= state->cwnd_bytes) {
        nr->acked_bytes -= state->cwnd_bytes;
        state->cwnd_bytes += mss;
        if (state->cwnd_bytes > PL_CC_WINDOW_MOST_BYTES) state->cwnd_bytes = PL_CC_WINDOW_MOST_BYTES;
    }
    assert(nr->acked_bytes < state->cwnd_bytes);
}

void pl_cc_newreno_on_congestion(pl_cc_state *state, uint32_t mss) {
    assert(state != NULL);
    uint64_t ssthresh = state->cwnd_bytes * PL_NEWRENO_BETA_NUM / PL_NEWRENO_BETA_DEN;
    if (ssthresh < pl_newreno_floor_bytes(mss)) ssthresh = pl_newreno_floor_bytes(mss);
    state->ssthresh_bytes = ssthresh;
    state->cwnd_bytes = ssthresh;
    state->algo.newreno.acked_bytes = 0;
}
