/* rtt.c: RFC 9002 §5 RTT estimation.  See rtt.h. */
#include "rtt.h"

#include <assert.h>
#include <stddef.h>

_Static_assert(PL_RTT_NS_GRANULARITY > 0, "the PTO needs a floor");
_Static_assert(PL_RTT_NS_INITIAL <= PL_RTT_NS_MOST, "the initial RTT is an RTT we could keep");
/* pl_rtt_pto_ns adds three terms of at most 4 * PL_RTT_NS_MOST each, and the persistent
 * congestion span multiplies that sum: both stay far below 2^64. */
_Static_assert(PL_RTT_NS_MOST < (1ull << 40), "RTT arithmetic stays in 64 bits");

static uint64_t pl_rtt_abs_diff(uint64_t a, uint64_t b) {
    return a > b ? a - b : b - a;
}

void pl_rtt_init(pl_rtt *rtt, uint64_t rtt_ns_initial) {
    assert(rtt != NULL);
    if (rtt_ns_initial == 0) rtt_ns_initial = PL_RTT_NS_INITIAL;
    assert(rtt_ns_initial <= PL_RTT_NS_MOST);
    rtt->rtt_ns_latest = 0;
    rtt->rtt_ns_min = 0;
    rtt->rtt_ns_smoothed = rtt_ns_initial;
    rtt->rtt_ns_variance = rtt_ns_initial / 2;
    rtt->has_sample = 0;
}

void pl_rtt_on_sample(pl_rtt *rtt, uint64_t sample_ns, uint64_t ack_delay_ns, uint64_t ack_delay_ns_most) {
    assert(rtt != NULL);
    assert(ack_delay_ns_most <= PL_RTT_NS_MOST);
    /* A sample beyond any real path is clamped rather than trusted to the arithmetic. */
    if (sample_ns > PL_RTT_NS_MOST) sample_ns = PL_RTT_NS_MOST;
    rtt->rtt_ns_latest = sample_ns;

    if (!rtt->has_sample) {
        /* The first sample stands alone: the receiver's delay is not subtracted, because
         * with one sample there is no min RTT to keep the subtraction honest. */
        rtt->rtt_ns_min = sample_ns;
        rtt->rtt_ns_smoothed = sample_ns;
        rtt->rtt_ns_variance = sample_ns / 2;
        rtt->has_sample = 1;
        return;
    }

    /* min RTT is the raw sample: ack delay is a claim of the peer, and min RTT must not be
     * talked down by it (RFC 9002 §5.2). */
    if (sample_ns < rtt->rtt_ns_min) rtt->rtt_ns_min = sample_ns;

    /* The peer's claim is believed only up to the delay it promised, and only when the
     * result stays at or above min RTT (RFC 9002 §5.3). */
    if (ack_delay_ns > ack_delay_ns_most) ack_delay_ns = ack_delay_ns_most;
    uint64_t adjusted_ns = sample_ns;
    if (sample_ns >= rtt->rtt_ns_min + ack_delay_ns) adjusted_ns = sample_ns - ack_delay_ns;

    /* rttvar uses the smoothed RTT from before this sample. */
    uint64_t deviation_ns = pl_rtt_abs_diff(rtt->rtt_ns_smoothed, adjusted_ns);
    rtt->rtt_ns_variance = (3 * rtt->rtt_ns_variance + deviation_ns) / 4;
    rtt->rtt_ns_smoothed = (7 * rtt->rtt_ns_smoothed + adjusted_ns) / 8;
    assert(rtt->rtt_ns_smoothed <= PL_RTT_NS_MOST);
}

uint64_t pl_rtt_persistent_congestion_ns(const pl_rtt *rtt, uint64_t ack_delay_ns_most) {
    return pl_rtt_pto_ns(rtt, ack_delay_ns_most) * PL_RTT_PERSISTENT_CONGESTION_PTOS;
}
