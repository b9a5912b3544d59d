/* loss.c: a sender's loss detection (RFC 9002 §6 with RFC 8985's adaptive reordering
 * window) and its loss timer, which both what it sends (send.c) and what replies tell it
 * (reply.c) drive. */
#include "internal.h"

/* congestion 0: the packet was not lost to the path (a LOST honoured, below), so neither the
 * congestion controller nor the rate sample hears of it (its episode stays 0). */
static void declare_lost(pl_sender *s, pl_sent *e, uint64_t now_ns, int congestion) {
    assert(e->state == PL_SENT_FLIGHT);
    e->state = PL_SENT_LOST;
    s->bytes_in_flight -= e->bytes;
    s->eliciting_in_flight--;
    s->offers_in_flight -= e->has_offer;
    s->responses_in_flight -= e->has_response;
    pl_pmtu_on_lost(s, e, now_ns);
    /* A lost copy needs no resend of its own: its original's fate decides.  A size probe's
     * record bytes go again at once, like any lost packet's. */
    if (e->len > 0 && !e->is_copy) pl_rangeset_add_cover(&s->resend, e->off, e->off + e->len);
    if (e->size_probe) return;  /* a size that did not pass: no congestion, not a lost packet */
    s->stats.packets_lost++;
    if (e->trial && s->trial_pn == e->pn) {
        /* A lost trial is tried again at once: the wait was for the receiver's answer. */
        s->trial_pn = PL_NONE;
        s->trial_due = s->refused;
    }
    if (!congestion) return;
    e->episode = pl_cc_on_lost(&s->cc, e->bytes, e->sent_ns, now_ns);
    s->rs.newly_lost_bytes += e->bytes;
}

/* A PTO probe finds the ring of sent packets full: the packet whose slot it takes was sent
 * a whole ring ago and is still unacknowledged, so it counts as lost (otherwise the probes
 * could never leave, and with nothing acknowledged nothing else would free it). */
void pl_sender_free_slot(pl_sender *s, uint64_t now_ns) {
    pl_sent *e = &s->sent[s->pn_next % s->sent_most];
    if (e->state == PL_SENT_FLIGHT) declare_lost(s, e, now_ns, 1);
}

/* Every packet still in flight is declared lost: during a refusal at the PTO (no probe
 * goes, spec/protocol.md §4.1, so nothing else would ever show it; a lost trial is then
 * sent again at once), and at a LOST honoured (the receiver cannot open any of them: left
 * in flight they filled the window, and the first packet of epoch 0 waited for a PTO that
 * had backed off through the receiver's outage).  congestion 0 (the LOST): they were lost
 * to the receiver's restart, not to the path, so the congestion controller does not hear
 * of them (spec/protocol.md §7). */
void pl_sender_flight_lost(pl_sender *s, uint64_t now_ns, int congestion) {
    for (uint64_t pn = s->pn_oldest; pn < s->pn_next; pn++) {
        pl_sent *e = &s->sent[pn % s->sent_most];
        if (e->pn == pn && e->state == PL_SENT_FLIGHT) declare_lost(s, e, now_ns, congestion);
    }
    assert(s->eliciting_in_flight == 0 && s->bytes_in_flight == 0);
}

void pl_sender_detect_losses(pure_link *pl, pl_sender *s, uint64_t now_ns) {
    (void)pl;
    s->loss_time_ns = PL_NONE;
    if (s->largest_acked == PL_NONE) return;
    uint64_t reo_ns = pl_rack_reo_wnd_ns(&s->rack, &s->rtt, pl_cc_recovering(&s->cc));
    for (uint64_t pn = s->pn_oldest; pn < s->largest_acked; pn++) {
        pl_sent *e = &s->sent[pn % s->sent_most];
        if (e->pn != pn || e->state != PL_SENT_FLIGHT) continue;
        uint64_t lost_at = pl_rack_lost_at_ns(&s->rack, pn, e->sent_ns, reo_ns);
        if (pl_rack_lost_by_count(&s->rack, pn, s->largest_acked) || lost_at <= now_ns) {
            declare_lost(s, e, now_ns, 1);
        } else if (lost_at != UINT64_MAX && lost_at < s->loss_time_ns) {
            s->loss_time_ns = lost_at;
        }
    }
}

/* After a PTO, the oldest packet in flight with bytes not yet stored is sent again in the
 * probes (a packet whose bytes were all stored since — a copy, say — would make the probe a
 * PING that can never draw the LOST or ACK the sender is waiting for). */
void pl_sender_requeue_oldest(pl_sender *s) {
    for (uint64_t pn = s->pn_oldest; pn < s->pn_next; pn++) {
        pl_sent *e = &s->sent[pn % s->sent_most];
        if (e->pn == pn && e->state == PL_SENT_FLIGHT && e->len > 0 && e->off + e->len > s->stored_off) {
            uint64_t lo = e->off > s->stored_off ? e->off : s->stored_off;
            pl_rangeset_add_cover(&s->resend, lo, e->off + e->len);
            return;
        }
    }
}

/* Earliest time the loss timer needs to run: a RACK time threshold if a packet waits on
 * one, otherwise the PTO after the last ack-eliciting packet. */
void pl_sender_arm_loss_timer(pl_sender *s, uint64_t now_ns) {
    (void)now_ns;
    if (s->loss_time_ns != PL_NONE) {
        s->timers[PL_ST_LOSS] = s->loss_time_ns;
        return;
    }
    uint32_t backoff = s->pto_count;
    if (s->eliciting_in_flight == 0) {
        /* Nothing in flight, but bytes acknowledged and not stored: the STORED that covers
         * them may have been lost, and no reply would come to say it again.  A PING after
         * the PTO asks for it (every reply carries STORED), backed off while STORED does not
         * move (a slow host), not 1 s later by the resend rule (spec/protocol.md §4.2). */
        if (s->refused || s->acked_end <= s->stored_off) {
            s->timers[PL_ST_LOSS] = PL_NONE;
            return;
        }
        backoff = s->stored_asks;
    }
    /* Backed off, but never past PL_PTO_NS_MOST: a path that comes back after an outage is
     * found by the next probe, so that wait is what the outage costs beyond itself. */
    uint64_t base_ns = pl_rtt_pto_ns(&s->rtt, PL_ACK_DELAY_NS_PEER);
    uint64_t pto = base_ns << (backoff < 6 ? backoff : 6);
    if (pto > PL_PTO_NS_MOST) pto = base_ns > PL_PTO_NS_MOST ? base_ns : PL_PTO_NS_MOST;
    s->timers[PL_ST_LOSS] = s->last_send_ns + pto;
}
