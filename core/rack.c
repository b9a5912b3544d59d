/* rack.c: RACK loss detection and its adaptive reordering window.  See rack.h.
 *
 * Why the packet threshold stops once reordering is seen.  The threshold says "3 packets
 * sent after this one have arrived, so this one is lost".  That is a statement about
 * order, and jitter scrambles order without losing anything: with packets 232 us apart
 * (1,452 B at 50 Mbit/s) and 3 ms of delay spread, a packet is routinely overtaken by a
 * dozen later ones.  Each such packet would be declared lost, resent, and worse, counted
 * as a congestion signal, so the window collapses on a path that drops nothing (quinn's
 * 1-2 Mbit/s in the seed's jitter rows).  The time rule asks the right question instead:
 * "is it later than the reordering we have measured?".  So, as RFC 8985 does with
 * DupThresh once reordering is seen, we let time alone decide from then on.  Before any
 * reordering, the threshold stays: it repairs a real loss within one packet time rather
 * than a quarter RTT. */
#include "rack.h"

#include <assert.h>
#include <stddef.h>

_Static_assert(PL_RACK_PACKET_THRESHOLD >= 1, "a packet cannot be lost by its own ack");
_Static_assert(PL_RACK_REO_WND_PERSIST >= 1, "a grown window lasts at least one recovery");
_Static_assert(PL_RACK_REO_WND_MULT_MOST >= 1 &&
               PL_RACK_REO_WND_MULT_MOST * (PL_RTT_NS_MOST / PL_RACK_REO_WND_MIN_RTT_DIVISOR) < UINT64_MAX / 2,
               "mult * min_rtt / 4 stays in 64 bits");

void pl_rack_init(pl_rack *rack) {
    assert(rack != NULL);
    rack->xmit_ns = 0;
    rack->pn = PL_RACK_PN_NONE;
    rack->rtt_ns = 0;
    rack->pn_round_end = PL_RACK_PN_NONE;
    rack->reo_wnd_mult = 1;
    rack->reo_wnd_persist = 0;
    rack->reordering_seen = 0;
    rack->reorderings = 0;
    rack->spurious_losses = 0;
}

void pl_rack_on_acked(pl_rack *rack, uint64_t pn, uint64_t sent_ns, uint64_t now_ns,
                      uint64_t pn_acked_largest_before) {
    assert(rack != NULL);
    assert(pn != PL_RACK_PN_NONE);
    assert(sent_ns <= now_ns);
    /* Packet numbers are never reused, so a newly acknowledged packet below the largest
     * acknowledged before this frame reached the peer after a packet sent later: that is
     * reordering (or a delay long enough to look like it), never a retransmission. */
    if (pn_acked_largest_before != PL_RACK_PN_NONE && pn < pn_acked_largest_before) {
        rack->reordering_seen = 1;
        rack->reorderings++;
    }
    /* Packet numbers grow with send time, so "sent after" is "numbered after". */
    if (rack->pn == PL_RACK_PN_NONE || pn > rack->pn) {
        rack->pn = pn;
        rack->xmit_ns = sent_ns;
        rack->rtt_ns = now_ns - sent_ns;
    }
    if (rack->pn_round_end != PL_RACK_PN_NONE && pn >= rack->pn_round_end)
        rack->pn_round_end = PL_RACK_PN_NONE;
}

void pl_rack_on_spurious(pl_rack *rack, uint64_t pn_next) {
    assert(rack != NULL);
    assert(pn_next != PL_RACK_PN_NONE);
    rack->spurious_losses++;
    /* A late packet means the window was too small for this path; several late packets
     * of one round are one finding, so the window grows at most once a round trip. */
    if (rack->pn_round_end != PL_RACK_PN_NONE) return;
    if (rack->reo_wnd_mult < PL_RACK_REO_WND_MULT_MOST) rack->reo_wnd_mult++;
    rack->reo_wnd_persist = PL_RACK_REO_WND_PERSIST;
    rack->pn_round_end = pn_next;
}

void pl_rack_on_recovery_end(pl_rack *rack) {
    assert(rack != NULL);
    /* A grown window is kept for 16 recoveries that saw no late packet, then forgotten:
     * reordering on a path comes and goes, and a large window delays every real repair. */
    if (rack->reo_wnd_persist == 0) return;
    rack->reo_wnd_persist--;
    if (rack->reo_wnd_persist == 0) rack->reo_wnd_mult = 1;
}

uint64_t pl_rack_reo_wnd_ns(const pl_rack *rack, const pl_rtt *rtt, int in_recovery) {
    assert(rack != NULL && rtt != NULL);
    assert(rack->reo_wnd_mult >= 1 && rack->reo_wnd_mult <= PL_RACK_REO_WND_MULT_MOST);
    /* With no reordering ever seen, a hole during recovery is a loss: repair at once. */
    if (!rack->reordering_seen && in_recovery) return 0;
    uint64_t wnd_ns = rack->reo_wnd_mult * (rtt->rtt_ns_min / PL_RACK_REO_WND_MIN_RTT_DIVISOR);
    /* Never wait longer than a round trip for a packet that a later one has overtaken. */
    if (wnd_ns > rtt->rtt_ns_smoothed) wnd_ns = rtt->rtt_ns_smoothed;
    return wnd_ns;
}

uint64_t pl_rack_lost_at_ns(const pl_rack *rack, uint64_t pn, uint64_t sent_ns, uint64_t reo_wnd_ns) {
    assert(rack != NULL);
    assert(reo_wnd_ns <= PL_RTT_NS_MOST);
    if (rack->pn == PL_RACK_PN_NONE || pn >= rack->pn) return UINT64_MAX;
    assert(sent_ns <= rack->xmit_ns);
    return sent_ns + rack->rtt_ns + reo_wnd_ns;
}

int pl_rack_lost_by_time(const pl_rack *rack, uint64_t pn, uint64_t sent_ns, uint64_t reo_wnd_ns,
                         uint64_t now_ns) {
    return now_ns >= pl_rack_lost_at_ns(rack, pn, sent_ns, reo_wnd_ns);
}

int pl_rack_lost_by_count(const pl_rack *rack, uint64_t pn, uint64_t pn_acked_largest) {
    assert(rack != NULL);
    if (rack->reordering_seen) return 0; /* see the top of this file */
    if (pn_acked_largest == PL_RACK_PN_NONE || pn_acked_largest < pn) return 0;
    return pn_acked_largest - pn >= PL_RACK_PACKET_THRESHOLD;
}
