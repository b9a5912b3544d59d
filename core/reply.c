/* reply.c: a sender reads the receiver's replies — ACK (loss detection, congestion
 * control), STORED (frees records, credit), ACCEPT (next epoch), CHALLENGE, LOST, REFUSED. */
#include "internal.h"

/* ---- ACK (loss detection itself is loss.c) ---- */

/* Moves pn_oldest past entries that no longer matter (acknowledged, or lost long ago:
 * a late ACK of those can no longer undo anything). */
static void advance_oldest(pl_sender *s, uint64_t now_ns) {
    uint64_t keep_lost_ns = 4 * (s->rtt.rtt_ns_smoothed ? s->rtt.rtt_ns_smoothed : PL_RTT_NS_INITIAL);
    while (s->pn_oldest < s->pn_next) {
        pl_sent *e = &s->sent[s->pn_oldest % s->sent_most];
        if (e->pn != s->pn_oldest || e->state == PL_SENT_FLIGHT) break;
        if (e->state == PL_SENT_LOST && now_ns < e->sent_ns + keep_lost_ns) break;
        e->state = PL_SENT_FREE;
        s->pn_oldest++;
    }
}

/* Delivery rate: the newest packet this ACK delivers (by its delivered count) defines
 * the sample's interval. */
static void rate_on_delivered(pl_sender *s, const pl_sent *e, uint64_t now_ns) {
    s->delivered += e->bytes;
    s->delivered_ns = now_ns;
    s->rs.newly_acked_bytes += e->bytes;
    uint64_t send_elapsed = e->sent_ns - e->first_sent_ns, ack_elapsed = now_ns - e->delivered_ns;
    uint64_t interval_ns = send_elapsed > ack_elapsed ? send_elapsed : ack_elapsed;
    /* Every packet delivered is also a sample of its own, as if acknowledged alone now, so
     * the best of an ACK does not depend on how many packets the receiver covers with one
     * ACK (pl_rate_sample). */
    uint64_t delivered = s->delivered - e->delivered;
    if (delivered > s->rs.delivered_best_bytes) s->rs.delivered_best_bytes = delivered;
    if (interval_ns > 0 && interval_ns >= s->rtt.rtt_ns_min) {
        uint64_t rate = delivered * PL_NS_PER_S / interval_ns;
        if (rate > s->rs.delivery_rate_best_bytes_per_s) s->rs.delivery_rate_best_bytes_per_s = rate;
    }
    if (s->rs_have && e->delivered < s->rs.prior_delivered_bytes) return;
    s->rs_have = 1;
    s->rs.prior_delivered_bytes = e->delivered;
    s->rs.is_app_limited = e->rate_app_limited;
    s->rs.tx_in_flight_bytes = e->tx_in_flight;
    s->rs.interval_ns = interval_ns;
    s->rs.rtt_ns = now_ns - e->sent_ns;
    s->first_sent_ns = e->sent_ns;
}

static void rate_sample_finish(pl_sender *s, uint64_t now_ns) {
    pl_rate_sample *rs = &s->rs;
    rs->delivered_total_bytes = s->delivered;
    rs->bytes_in_flight = s->bytes_in_flight;
    if (s->rs_have) {
        rs->delivered_bytes = s->delivered - rs->prior_delivered_bytes;
        /* An interval shorter than the min RTT says more about ACK bunching than the path. */
        if (rs->interval_ns > 0 && rs->interval_ns >= s->rtt.rtt_ns_min)
            rs->delivery_rate_bytes_per_s = rs->delivered_bytes * PL_NS_PER_S / rs->interval_ns;
    }
    if (s->app_limited_mark && s->delivered > s->app_limited_mark) s->app_limited_mark = 0;
    pl_cc_on_rate_sample(&s->cc, rs, &s->rtt, now_ns);
}

/* The receiver lost the run's stream (a restart), or a new build of the run may hold a
 * binding it did not get from us: bind it again from the stored mark and send again every
 * byte it had not stored. */
static void stream_lost(pl_sender *s) {
    s->stream_known = 0;
    /* The packets sent so far reached the build that lost the stream, or the new one before
     * it was bound: whatever ACK covers them later, none delivered a byte (they all go again
     * below) or bound the stream.  The flagged ACK of one may be lost, and the receiver,
     * bound again, covers it in its next ACKs without the flag (spec/protocol.md §4.1). */
    for (uint64_t pn = s->pn_oldest; pn < s->pn_next; pn++) {
        pl_sent *e = &s->sent[pn % s->sent_most];
        if (e->pn == pn && (e->state == PL_SENT_FLIGHT || e->state == PL_SENT_LOST)) e->len = 0, e->has_stream = 0;
    }
    pl_rangeset_add_cover(&s->resend, s->stored_off, s->next_off);
    s->acked_end = s->stored_off;
}

/* What an ACK newly acknowledged, as far as REFUSED is concerned (spec/protocol.md §4.1). */
enum { ACKED_TRIAL = 1, ACKED_BINDING = 2 };

static void on_acked(pure_link *pl, pl_sender *s, pl_sent *e, int stream_unknown, uint64_t now_ns,
                     uint64_t largest_before, int *acked) {
    (void)pl;
    if (e->state == PL_SENT_FLIGHT || e->state == PL_SENT_LOST) rate_on_delivered(s, e, now_ns);
    if (e->state == PL_SENT_FLIGHT || e->state == PL_SENT_LOST) {
        pl_rack_on_acked(&s->rack, e->pn, e->sent_ns, now_ns, largest_before);
        pl_pmtu_on_acked(s, e, now_ns);
    }
    if (e->state == PL_SENT_FLIGHT) {
        s->bytes_in_flight -= e->bytes;
        s->eliciting_in_flight--;
        s->offers_in_flight -= e->has_offer;
        s->responses_in_flight -= e->has_response;
        if (pl_cc_on_acked(&s->cc, e->bytes, e->sent_ns, now_ns, &s->rtt, s->bytes_in_flight + e->bytes,
                           e->app_limited))
            pl_rack_on_recovery_end(&s->rack);
    } else if (e->state == PL_SENT_LOST) {
        /* It was not lost after all: tell the congestion controller (the undo rule) and
         * widen the reordering window; its bytes need no resend.  Only a loss that counted
         * in a congestion episode has anything to undo: a size probe's (its size passed,
         * above) and one of the flight a LOST ended (loss.c) never did, and keep episode 0. */
        if (e->episode != 0) {
            s->stats.spurious_losses++;
            pl_cc_on_spurious(&s->cc, e->episode, now_ns);
            pl_rack_on_spurious(&s->rack, s->pn_next);
        }
    } else {
        return;
    }
    if (e->has_stream || e->len > 0) *acked |= ACKED_BINDING;  /* a packet a refusal answers */
    /* A RESPONSE of an older token proves nothing for a CHALLENGE heard since (a new
     * address, or the receiver's new token): that one still needs its own. */
    if (e->has_response && e->response_turn == s->response_turn) s->response_pending = 0;
    if (e->has_stream && !stream_unknown) s->stream_known = 1;
    if (e->len > 0 && stream_unknown) {
        /* The receiver had no binding when this packet came: it dropped the record bytes and
         * acknowledged the packet alone (spec/protocol.md §4), so they must go again.  Taken
         * as received, they sat below acked_end, and the hole they left waited for the 1 s
         * resend rule while the receiver held everything after it. */
        uint64_t lo = e->off > s->stored_off ? e->off : s->stored_off;
        if (e->off + e->len > lo) pl_rangeset_add_cover(&s->resend, lo, e->off + e->len);
    } else if (e->len > 0) {
        /* Its bytes arrived: whatever else carried them (a copy, a lost original) need not
         * go again. */
        if (s->resend.count > 0) pl_rangeset_remove(&s->resend, e->off, e->off + e->len);
    }
    uint64_t end = e->off + e->len;
    if (e->len > 0 && !stream_unknown && end > s->stored_off) {
        /* Bytes above the stored mark arrived: the resend rule waits while they do, resent
         * ones below acked_end too (send.c, pl_sender_tick). */
        s->acked_progress_ns = now_ns;
        if (end > s->acked_end) {
            if (s->acked_end <= s->stored_off) s->stored_progress_ns = now_ns;
            s->acked_end = end;
        }
    }
    if (e->trial && e->pn == s->trial_pn) *acked |= ACKED_TRIAL;
    e->state = PL_SENT_ACKED;
}

static void on_ack(pure_link *pl, pl_sender *s, const pl_frame *f, uint64_t now_ns, int *acked) {
    uint64_t largest = f->ack.ranges[0].largest;
    if (largest >= s->pn_next) return;  /* acknowledges what was never sent: ignore */
    memset(&s->rs, 0, sizeof s->rs);
    s->rs_have = 0;
    int stream_unknown = (f->ack.flags & PL_ACK_FLAG_STREAM_UNKNOWN) != 0;
    /* The first ACK after a silence as long as a receiver's stopped-run rule (spec/protocol.md
     * §4.2): what it acknowledges past the stored mark, now or before, may have been given
     * back, so it goes again at once, not a second later by the resend rule. */
    int silent = s->ack_heard_ns != 0 && now_ns - s->ack_heard_ns >= PL_RUN_STOPPED_NS;
    s->ack_heard_ns = now_ns;
    uint64_t prev_largest = s->largest_acked;
    int newly_largest = 0;
    for (uint32_t i = 0; i <= f->ack.range_count; i++) {
        uint64_t lo = f->ack.ranges[i].smallest, hi = f->ack.ranges[i].largest;
        if (lo < s->pn_oldest) lo = s->pn_oldest;
        for (uint64_t pn = lo; pn <= hi && hi >= s->pn_oldest; pn++) {
            pl_sent *e = &s->sent[pn % s->sent_most];
            if (e->pn != pn) continue;
            if (pn == largest && e->state == PL_SENT_FLIGHT) {
                newly_largest = 1;
                uint64_t delay_ns = f->ack.ack_delay_us * 1000ull;
                pl_rtt_on_sample(&s->rtt, now_ns - e->sent_ns, delay_ns, PL_ACK_DELAY_NS_PEER);
            }
            on_acked(pl, s, e, stream_unknown, now_ns, prev_largest, acked);
        }
    }
    if (silent) pl_sender_resend_heard(s, s->acked_end);
    if (s->largest_acked == PL_NONE || largest > s->largest_acked) s->largest_acked = largest;
    if (s->pn_anchor == PL_NONE || largest > s->pn_anchor) s->pn_anchor = largest;
    if (newly_largest) s->pto_count = 0;
    if (stream_unknown && s->stream_known) stream_lost(s);
    pl_sender_detect_losses(pl, s, now_ns);
    pl_pmtu_ack_done(s, now_ns);
    if (s->rs.newly_acked_bytes > 0) rate_sample_finish(s, now_ns);
    advance_oldest(s, now_ns);
    pl_pacer_set_rate(&s->pacer, pl_sender_pacing_rate(s), now_ns);
}

/* The answer to a sender that asked where to resume (spec/protocol.md §4.3): the host holds
 * the source's records before n, so the run's stream starts there — record n at offset n
 * (any offset of at least n is valid; the receiver takes the same one). */
static void resume_at(pure_link *pl, pl_sender *s, uint64_t n, uint64_t credit, uint64_t now_ns) {
    assert(s->records_end == 0 && s->end_off == 0 && s->blocks_held == 0);  /* nothing was queued */
    s->resuming = 0;
    s->credit = credit;
    s->records_stored = s->records_end = s->records_started = n;
    s->stored_off = s->end_off = s->next_off = s->acked_end = n;
    s->stored_progress_ns = now_ns;
    s->stored_event_due = 1;
    if (s->refused) pl_sender_release(pl, s);
}

static void on_stored(pure_link *pl, pl_sender *s, const pl_frame *f, uint64_t now_ns) {
    uint64_t n = f->stored.stored;
    if (s->resuming) {
        resume_at(pl, s, n, f->stored.credit, now_ns);
        return;
    }
    /* Replies may be reordered: a count below the one heard is an older view, and its credit
     * was for that count (spec/protocol.md "heard number"); a count never queued is junk. */
    if (n < s->records_stored || n > s->records_end) return;
    s->credit = f->stored.credit;
    if (n == s->records_stored) return;
    s->stored_asks = 0;
    s->stats.records_stored += n - s->records_stored;
    s->records_stored = n;
    s->stored_off = n == s->records_end ? s->end_off : s->record_start[n % s->records_most];
    pl_queue_stored(pl, s);
    if (s->next_off < s->stored_off) s->next_off = s->stored_off;
    if (s->acked_end < s->stored_off) s->acked_end = s->stored_off;
    pl_rangeset_remove_below(&s->resend, s->stored_off);
    s->stored_progress_ns = now_ns;
    s->stored_event_due = 1;
    if (s->refused) pl_sender_release(pl, s);
}

/* ---- Refusal (spec/protocol.md "REFUSED") ---- */

static void on_refused(pure_link *pl, pl_sender *s, uint32_t reason, uint64_t now_ns) {
    if (!s->refused) {
        s->refused = 1;
        s->refused_reason = reason;
        s->refuse_wait_ns = PL_REFUSE_WAIT_NS_FIRST;
        s->stats.link_refused++;
        s->refused_event_due = 1;  /* one log line per refusal episode */
        /* Whatever is in flight is abandoned: it will go again with the trial. */
        pl_rangeset_init(&s->resend, s->resend_store, PL_RESEND_RANGES_MOST);
        s->next_off = s->stored_off;
        s->acked_end = s->stored_off;
    } else {
        s->refuse_wait_ns = s->refuse_wait_ns * 2 > PL_REFUSE_WAIT_NS_MOST ? PL_REFUSE_WAIT_NS_MOST
                                                                         : s->refuse_wait_ns * 2;
        s->stats.link_refused++;
    }
    s->stream_known = 0;
    s->trial_pn = PL_NONE;
    s->trial_due = 0;
    s->copies_count = 0;
    /* A refused sender sends no probe (the trial is its only packet): one a PTO made due
     * before the REFUSED was read would never go, and would hold the deadline at now until
     * the trial. */
    s->probes_due = 0;
    s->timers[PL_ST_REFUSE] = now_ns + s->refuse_wait_ns;
}

void pl_sender_release(pure_link *pl, pl_sender *s) {
    (void)pl;
    s->refused = 0;
    s->trial_pn = PL_NONE;
    s->trial_due = 0;
    s->timers[PL_ST_REFUSE] = PL_NONE;
    s->released_event_due = 1;
}

/* ---- Opening a reply ---- */

/* Opens a reply under a key derived aside: the reply key of (secret, epoch) for the
 * header's reply run.  0 if authentic (*pk holds the key), -1 if not. */
static int open_reply_aside(pure_link *pl, const pl_sender *s, const uint8_t secret[32], uint32_t epoch,
                            const pl_header *h, size_t hl, const uint8_t *data, uint8_t *pkt, size_t len, uint64_t pn,
                            pl_packet_key *pk) {
    _Alignas(16) uint8_t ctx[PURE_LINK_AEAD_CTX_BYTES];
    uint8_t iv[12], nonce[12];
    pl_reply_key(pk, secret, s->wiring.receiver_public, pl->static_public, s->run, h->reply_run, epoch);
    pl_aead_key(pl, ctx, iv, pk);
    pl_nonce(nonce, iv, pn);
    return pl->crypto->aead_open(ctx, nonce, data, hl, data + hl, len - hl, pkt + hl) == 0 ? 0 : -1;
}

/* open_reply's *opened for a reply opened under E(0) aside: only a LOST is taken from it. */
#define OPENED_E0 (-2)

/* Opens a reply into pkt with the reply key of the header's epoch (the AEAD writes only
 * an authentic plaintext, so a failed try leaves nothing behind).  A reply run not seen
 * before (a new build of the run at the receiver, or a LOST) is tried under a key derived
 * aside: at most one key derivation per key slot.  *adopt is then the key slot whose
 * reply run it proved (-1: none), and *pk its key, for the caller to adopt once it knows
 * the reply is not a LOST.  *opened is the key slot it opened under (-1: none of them).
 * Once epoch 1 is confirmed, an epoch-0 reply of another reply run than ours opens only
 * under E(0) aside (*opened OPENED_E0), as does any epoch-0 reply while we hold no epoch-0
 * key (we seal in epoch 2 or later): the caller takes a LOST from it and nothing else
 * (spec/protocol.md §7, §4.1).  Returns the payload length, or -1. */
static int open_reply(pure_link *pl, pl_sender *s, const pl_header *h, size_t hl, const uint8_t *data, uint8_t *pkt,
                      size_t len, uint64_t pn, int *adopt, int *opened, pl_packet_key *pk) {
    *adopt = -1;
    *opened = -1;
    int tried = 0;
    for (int i = 0; i < 2; i++) {
        pl_epoch_keys *k = &s->keys[i];
        if (!k->valid || pl_epoch_field(k->epoch) != h->epoch_field) continue;
        tried = 1;
        if (k->reply_run == h->reply_run && k->reply_valid) {
            uint8_t nonce[12];
            pl_nonce(nonce, k->reply_iv, pn);
            if (pl->crypto->aead_open(pl_keys_ctx(pl, k)->reply, nonce, data, hl, data + hl, len - hl, pkt + hl) != 0)
                continue;
            *opened = i;
            return (int)(len - hl - PURE_LINK_TAG_BYTES);
        }
        if (k->epoch == 0 && s->epoch >= 1) continue;  /* no new reply run in epoch 0 any more */
        if (open_reply_aside(pl, s, k->secret, k->epoch, h, hl, data, pkt, len, pn, pk) == 0) {
            *adopt = *opened = i;
            return (int)(len - hl - PURE_LINK_TAG_BYTES);
        }
    }
    if (h->epoch_field == 0 && (!tried || s->epoch >= 1) &&
        open_reply_aside(pl, s, s->static_e0, 0, h, hl, data, pkt, len, pn, pk) == 0) {
        *opened = OPENED_E0;
        return (int)(len - hl - PURE_LINK_TAG_BYTES);
    }
    return -1;
}

/* Has the sender left this reply run (a build of the run the receiver has replaced)?
 * Its replies are replays or late: none is processed again (spec/protocol.md §2). */
static int reply_run_left(const pl_sender *s, uint64_t reply_run) {
    uint32_t held = s->reply_runs_left_count < PL_REPLY_RUNS_LEFT ? s->reply_runs_left_count : PL_REPLY_RUNS_LEFT;
    for (uint32_t i = 0; i < held; i++)
        if (s->reply_runs_left[i] == reply_run) return 1;
    return 0;
}

/* A reply of a new reply run authenticated: the window starts again for it, and the one it
 * replaces is left for good.  A new build of the run at the receiver (a restart, a LOST)
 * may have bound its stream from a replayed STREAM, below our stored mark, and then says
 * the stream is known: bind it again from the stored mark, which only moves it forward
 * (spec/protocol.md §4.1). */
static void reply_run_enter(pl_sender *s, uint64_t reply_run) {
    if (s->reply_run_known) {
        s->reply_runs_left[s->reply_runs_left_count++ % PL_REPLY_RUNS_LEFT] = s->reply_run;
        if (s->stream_known) stream_lost(s);  /* not again while binding (after LOST) */
    }
    s->reply_run = reply_run;
    s->reply_run_known = 1;
    s->largest_reply_pn = PL_NONE;
    memset(s->reply_window, 0, sizeof s->reply_window);
}

/* A reply whose header the endpoint decoded (h, hl bytes) and checked with its length;
 * replies may come from anywhere: only authentication counts. */
int pl_sender_on_reply(pure_link *pl, pl_sender *s, const pl_header *h, size_t hl, const uint8_t *data,
                       size_t len, uint64_t now_ns) {
    uint8_t pkt[PURE_LINK_DATAGRAM_MOST];  /* plaintext; the datagram is not copied first */
    assert(h->reply && hl > 0 && len <= sizeof pkt && len >= hl + PURE_LINK_TAG_BYTES + 1);
    /* Reply packet numbers count per reply run: a new build of the run at the receiver
     * starts again at 0 and gets a window of its own. */
    int same_run = s->reply_run_known && h->reply_run == s->reply_run;
    uint64_t largest = same_run ? s->largest_reply_pn : PL_NONE;
    uint64_t pn = pl_pn_decode(largest, h->pn_truncated, h->pn_len);
    if ((same_run && !pl_replay_check(s->reply_window, largest, pn)) || (!same_run && reply_run_left(s, h->reply_run))) {
        pl->stats.dropped_replay++;
        return 0;
    }
    int adopt, opened;
    pl_packet_key pk;
    int n = open_reply(pl, s, h, hl, data, pkt, len, pn, &adopt, &opened, &pk);
    pl_frame frames[PL_FRAMES_MOST];
    int count = n < 0 ? 0 : pl_payload_decode(frames, PL_FRAMES_MOST, pkt + hl, (size_t)n, 1);
    if (n >= 0 && count > 0 && frames[0].type == PL_FRAME_LOST) {
        /* A notice with a reply run of its own: it opens no reply window and moves none
         * (it proves itself by what it echoes, spec/protocol.md §7). */
        memset(&pk, 0, sizeof pk);
        pl->stats.packets_opened++;
        pl_sender_on_lost(pl, s, &frames[0], now_ns);
        pl_sender_emit(pl, s);
        pl_sender_arm_loss_timer(s, now_ns);
        return 0;
    }
    if (n >= 0 && opened == OPENED_E0) {
        /* Not a LOST: an epoch-0 reply of a build we left or never knew, replayed. */
        memset(&pk, 0, sizeof pk);
        pl->stats.dropped_stale_epoch++;
        return 0;
    }
    if (adopt >= 0 && count > 0) {
        pl_epoch_keys *k = &s->keys[adopt];
        memcpy(k->reply_key, pk.key, sizeof k->reply_key);
        memcpy(k->reply_iv, pk.iv, sizeof k->reply_iv);
        k->reply_run = h->reply_run;
        k->reply_valid = 1;
        k->replies = 0;          /* a new reply run: the receiver's count starts again too */
        pl_keys_derived(pl, k);  /* its entry expands the new reply key at its next use */
    }
    memset(&pk, 0, sizeof pk);
    if (n < 0) { pl->stats.dropped_auth++; return 0; }
    if (count <= 0) { pl->stats.dropped_malformed++; return 0; }
    pl->stats.packets_opened++;
    if (!same_run) reply_run_enter(s, h->reply_run);
    pl_replay_mark(s->reply_window, &s->largest_reply_pn, pn);
    if (opened >= 0) s->keys[opened].replies++;  /* a lower bound of what the receiver sealed */
    s->stats.packets_received++;
    s->stats.bytes_received += len;

    int acked = 0, refused = 0;
    uint32_t reason = 0;
    for (int i = 0; i < count; i++) {
        const pl_frame *f = &frames[i];
        switch (f->type) {
        case PL_FRAME_ACK: on_ack(pl, s, f, now_ns, &acked); break;
        case PL_FRAME_STORED: on_stored(pl, s, f, now_ns); break;
        case PL_FRAME_ACCEPT: pl_sender_on_accept(pl, s, f, now_ns); break;
        case PL_FRAME_CHALLENGE:
            if (memcmp(s->response_token, f->challenge.token, 16) != 0) s->response_turn++;
            memcpy(s->response_token, f->challenge.token, 16);
            s->response_pending = 1;
            s->stats.challenges_received++;
            break;
        case PL_FRAME_REFUSED: refused = 1, reason = f->refused.reason; break;
        default: break;  /* PADDING */
        }
    }
    /* One turn of a refusal: the first REFUSED, in a reply that newly acknowledges a packet
     * with STREAM or record bytes (the packet it answers), then the answer to each trial
     * packet.  Further REFUSED notices for packets of the same flight, and an old REFUSED
     * replayed (it acknowledges nothing new), change nothing. */
    if (refused && ((!s->refused && (acked & ACKED_BINDING)) || (acked & ACKED_TRIAL))) on_refused(pl, s, reason, now_ns);
    else if (!refused && s->refused && (acked & ACKED_TRIAL)) pl_sender_release(pl, s);
    pl_sender_epoch_due(pl, s, now_ns);  /* the replies opened under the key count too */
    pl_sender_emit(pl, s);
    pl_sender_arm_loss_timer(s, now_ns);
    return 0;
}
