/* pacer.h: spreads a sender's packets over the round trip (RFC 9002 §7.7).
 *
 * A credit (token bucket) pacer: credit accrues at the pacing rate up to a burst of
 * PL_PACER_BURST_DATAGRAMS datagrams, and a packet may leave when the credit covers it.
 * The sender asks pl_pacer_next_send_ns() "when may this packet go?", sends it then (or
 * schedules its deadline), and reports it with pl_pacer_on_sent().  The rate is
 * cwnd / srtt times a gain (pl_pacer_rate_bytes_per_s); the sender sets it with
 * pl_pacer_set_rate() whenever the window or the RTT changes.
 *
 * Why the burst grows with the rate: a host wakes once per burst to send it, and at a
 * high rate 10 datagrams a wake-up spend more on waking (a timer, a system call per
 * batch) than on sending.  As Linux's TCP pacing does, a burst is 1 ms of the rate, at
 * least the 10 datagrams of RFC 9002 and at most PL_PACER_BURST_DATAGRAMS_MOST (a
 * driver's GSO train is 44).  Below 10 datagrams a millisecond (116 Mbit/s) nothing
 * changes.
 *
 * Why a gain above 1: a pacer that sends exactly cwnd per srtt never fills the window
 * (acks come back, and the window grows, while it is still spreading the last one).  2 in
 * slow start lets the window double per round; 1.25 in congestion avoidance leaves room
 * for the window's growth and for ack compression, and is RFC 9002's N. */
#ifndef PL_PACER_H
#define PL_PACER_H

#include <stdint.h>

#define PL_PACER_BURST_DATAGRAMS 10u             /* RFC 9002 §7.7: bursts up to the initial window */
#define PL_PACER_BURST_DATAGRAMS_MOST 64u        /* the largest burst, at high rates */
#define PL_PACER_BURST_NS 1000000u               /* a burst is this much of the rate (1 ms) */
#define PL_PACER_GAIN_PERCENT_SLOW_START 200u
#define PL_PACER_GAIN_PERCENT_AVOIDANCE 125u
#define PL_PACER_RATE_MOST 1000000000000ull      /* bytes/s (8 Tbit/s): bounds the arithmetic */
#define PL_PACER_NS_PER_S 1000000000ull

typedef struct pl_pacer {
    uint64_t rate_bytes_per_s;   /* 0: not paced (every packet may go at once) */
    uint64_t credit;             /* credit at credit_ns, in bytes * 1e9 (byte-ns per s) */
    uint64_t credit_ns;
    uint64_t burst;              /* the credit's ceiling, same units */
    uint64_t burst_least, burst_most; /* its bounds: 10 and 64 datagrams */
} pl_pacer;

/* Starts with a full burst of credit and no rate. */
void pl_pacer_init(pl_pacer *pacer, uint32_t datagram_bytes, uint64_t now_ns);
/* cwnd * gain / srtt, at most PL_PACER_RATE_MOST; gain per slow_start. */
uint64_t pl_pacer_rate_bytes_per_s(uint64_t cwnd_bytes, uint64_t rtt_ns_smoothed, int slow_start);
/* Credit earned so far accrues at the old rate, later credit at the new one. */
void pl_pacer_set_rate(pl_pacer *pacer, uint64_t rate_bytes_per_s, uint64_t now_ns);
/* The earliest time >= now_ns at which a packet of `bytes` may leave. */
uint64_t pl_pacer_next_send_ns(const pl_pacer *pacer, uint64_t now_ns, uint64_t bytes);
/* A packet of `bytes` left at now_ns (normally at or after pl_pacer_next_send_ns). */
void pl_pacer_on_sent(pl_pacer *pacer, uint64_t bytes, uint64_t now_ns);

#endif
