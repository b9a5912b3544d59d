/* rack.h: time-based loss detection with an adaptive reordering window (RACK, RFC 8985
 * §6-7, in QUIC terms: packet numbers are never reused, so there is no retransmission
 * ambiguity and "end_seq" is the packet number).
 *
 * RACK remembers the most recently *sent* packet that has been delivered.  A packet sent
 * before it and still unacknowledged is lost once
 *
 *     now >= sent_ns + RACK.rtt + reo_wnd
 *
 * i.e. once it is late by more than the reordering window relative to a packet that left
 * after it and has already arrived.  The window is measured in time because jitter is
 * measured in time: a delay spread of 3 ms reorders 13 packets at 50 Mbit/s and 1 packet
 * at 5 Mbit/s, but it is always 3 ms.
 *
 * The window (RFC 8985 §6.2 step 4-5):
 *   - 0 while no reordering has been seen and the sender is in recovery: repairs go out at
 *     once, as with a duplicate-ACK threshold;
 *   - otherwise min(reo_wnd_mult * min_rtt / 4, srtt);
 *   - reo_wnd_mult grows by 1 (at most once per round trip) each time a packet declared
 *     lost is acknowledged after all (our stand-in for a DSACK), and falls back to 1 after
 *     16 recoveries without such an event.
 *
 * The sender also asks pl_rack_lost_by_count() (the packet threshold of RFC 9002, 3
 * packets).  It answers "no" once reordering has been seen: see rack.c for why. */
#ifndef PL_RACK_H
#define PL_RACK_H

#include <stdint.h>

#include "rtt.h"

/* RFC 9002 kPacketThreshold: acknowledged packets sent after a packet that make it lost. */
#define PL_RACK_PACKET_THRESHOLD 3u
/* The window is reo_wnd_mult quarters of min RTT (RFC 8985 §6.2). */
#define PL_RACK_REO_WND_MIN_RTT_DIVISOR 4u
/* Recoveries a grown multiplier persists before it falls back to 1 (RFC 8985: 16). */
#define PL_RACK_REO_WND_PERSIST 16u
/* The multiplier's ceiling.  The window is capped at srtt anyway; this only keeps the
 * counter bounded on paths where srtt is far above min RTT. */
#define PL_RACK_REO_WND_MULT_MOST 64u
/* "No packet number": no packet delivered yet, no round open. */
#define PL_RACK_PN_NONE UINT64_MAX

typedef struct pl_rack {
    uint64_t xmit_ns;            /* RACK.xmit_ts: send time of the most recently sent
                                    packet that was delivered */
    uint64_t pn;                 /* RACK.end_seq: its packet number; PL_RACK_PN_NONE */
    uint64_t rtt_ns;             /* RACK.rtt: its RTT (raw, ack delay included) */
    uint64_t pn_round_end;       /* RACK.dsack_round: the window grew in a round that ends
                                    when this packet number is acknowledged; PN_NONE */
    uint32_t reo_wnd_mult;       /* 1.. PL_RACK_REO_WND_MULT_MOST */
    uint32_t reo_wnd_persist;    /* recoveries left before the multiplier resets */
    uint8_t reordering_seen;     /* a packet was delivered after a later-sent one */
    uint64_t reorderings;        /* statistics: packets delivered out of order */
    uint64_t spurious_losses;    /* statistics: packets declared lost, then acknowledged */
} pl_rack;

void pl_rack_init(pl_rack *rack);

/* For every newly acknowledged packet.  pn_acked_largest_before is the largest packet
 * number acknowledged before the ACK frame being processed (PL_RACK_PN_NONE if none), so
 * the order in which the caller walks the frame's ranges does not matter. */
void pl_rack_on_acked(pl_rack *rack, uint64_t pn, uint64_t sent_ns, uint64_t now_ns,
                      uint64_t pn_acked_largest_before);
/* A packet the sender declared lost was acknowledged after all.  pn_next is the number
 * the next packet will be sent with (it closes the round of this window increase). */
void pl_rack_on_spurious(pl_rack *rack, uint64_t pn_next);
/* The sender's congestion controller left a recovery period (pl_cc_on_acked returned 1). */
void pl_rack_on_recovery_end(pl_rack *rack);

/* The reordering window now. */
uint64_t pl_rack_reo_wnd_ns(const pl_rack *rack, const pl_rtt *rtt, int in_recovery);
/* When an unacknowledged packet is lost by time: UINT64_MAX if it was not sent before
 * RACK's packet (no verdict yet), else sent_ns + RACK.rtt + reo_wnd_ns.  The sender arms
 * its loss timer at the least such value over the packets still outstanding. */
uint64_t pl_rack_lost_at_ns(const pl_rack *rack, uint64_t pn, uint64_t sent_ns, uint64_t reo_wnd_ns);
/* now_ns >= pl_rack_lost_at_ns(...). */
int pl_rack_lost_by_time(const pl_rack *rack, uint64_t pn, uint64_t sent_ns, uint64_t reo_wnd_ns,
                         uint64_t now_ns);
/* The packet threshold: pn_acked_largest >= pn + 3, and no reordering seen yet. */
int pl_rack_lost_by_count(const pl_rack *rack, uint64_t pn, uint64_t pn_acked_largest);

#endif
