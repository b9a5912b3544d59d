/* rtt.h: the sender's round-trip-time estimate (RFC 9002 §5) and the timers derived from it.
 *
 * One pl_rtt per sender.  The sender feeds it one sample per ACK frame whose largest
 * acknowledged packet is newly acknowledged (RFC 9002 §5.1); everything else only reads it.
 * Times are nanoseconds.  No clock is read: a sample is computed by the caller. */
#ifndef PL_RTT_H
#define PL_RTT_H

#include <assert.h>
#include <stdint.h>

/* The RTT assumed before the first sample.  A local choice (RFC 9002 suggests 333 ms for
 * unknown paths); 100 ms fits the paths we target and is what the seed's runs assume. */
#define PL_RTT_NS_INITIAL     100000000ull
/* Timer granularity (RFC 9002 kGranularity): the least variance a PTO allows for. */
#define PL_RTT_NS_GRANULARITY 1000000ull
/* Persistent congestion: this many PTO periods without an acknowledgement (RFC 9002 §7.6.1). */
#define PL_RTT_PERSISTENT_CONGESTION_PTOS 3u
/* No RTT we keep may exceed this (one minute): it bounds the arithmetic below, and a longer
 * sample is a bug or an attack, not a path. */
#define PL_RTT_NS_MOST        60000000000ull

typedef struct pl_rtt {
    uint64_t rtt_ns_latest;    /* the last sample, raw (ack delay included) */
    uint64_t rtt_ns_min;       /* the least raw sample; 0 before the first sample */
    uint64_t rtt_ns_smoothed;  /* smoothed_rtt */
    uint64_t rtt_ns_variance;  /* rttvar: the mean deviation */
    uint8_t has_sample;
} pl_rtt;

/* rtt_ns_initial: 0 takes PL_RTT_NS_INITIAL. */
void pl_rtt_init(pl_rtt *rtt, uint64_t rtt_ns_initial);
/* One sample: sample_ns = ack receive time - send time of the largest newly acknowledged
 * packet; ack_delay_ns = the delay the receiver reported; ack_delay_ns_most = the receiver's
 * maximum ack delay (the reported delay is capped at it). */
void pl_rtt_on_sample(pl_rtt *rtt, uint64_t sample_ns, uint64_t ack_delay_ns, uint64_t ack_delay_ns_most);
/* The probe timeout period, before backoff: srtt + max(4 rttvar, granularity) + max ack delay
 * (inline: every packet sent arms the loss timer with it). */
static inline uint64_t pl_rtt_pto_ns(const pl_rtt *rtt, uint64_t ack_delay_ns_most) {
    assert(ack_delay_ns_most <= PL_RTT_NS_MOST);
    uint64_t spread_ns = 4 * rtt->rtt_ns_variance;
    if (spread_ns < PL_RTT_NS_GRANULARITY) spread_ns = PL_RTT_NS_GRANULARITY;
    return rtt->rtt_ns_smoothed + spread_ns + ack_delay_ns_most;
}
/* The span of losses that establishes persistent congestion (RFC 9002 §7.6.1). */
uint64_t pl_rtt_persistent_congestion_ns(const pl_rtt *rtt, uint64_t ack_delay_ns_most);

#endif
