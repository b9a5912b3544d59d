/* epoch.c: the epoch chain (spec/crypto.md).  A sender offers a fresh X25519 key in
 * OFFER; the receiver answers with its own in ACCEPT; both derive E(n+1) from E(n) and the
 * new shared secret, and the sender seals everything after in the new epoch.  LOST sends
 * a sender back to epoch 0 of the same run (its packet numbers go on, so no nonce repeats). */
#include "internal.h"


/* Wipes both of a sender's key sets, and the two cache entries that only they use. */
void pl_sender_keys_wipe(pure_link *pl, pl_sender *s) {
    for (uint32_t i = 0; i < 2; i++) {
        uint32_t e = (uint32_t)s->handle * 2 + i;
        assert(e < pl->keys.pinned);
        memset(&pl->keys.ctx[e], 0, sizeof pl->keys.ctx[e]);
        pl->keys.build[e] = 0;
        memset(&s->keys[i], 0, sizeof s->keys[i]);
        s->keys[i].pin = e + 1;
    }
}

/* The sender moves to `epoch` with secret E: the old current keys become the previous
 * ones (replies sealed in them may still arrive), older ones are wiped. */
void pl_sender_set_epoch(pure_link *pl, pl_sender *s, uint32_t epoch, const uint8_t secret[32]) {
    const pl_epoch_keys *cur = PL_SENDER_KEYS(s);
    uint64_t reply_run = cur->reply_run;
    int reply_known = cur->valid && cur->reply_valid;
    /* The current keys stay, as the previous ones, for replies sealed in them that are still
     * on the way; like the receiver's, they are wiped PL_OLD_EPOCH_NS after the switch. */
    s->timers[PL_ST_OLD_EPOCH] = cur->valid ? pl->now_ns + PL_OLD_EPOCH_NS : PL_NONE;
    if (cur->valid) s->key_cur ^= 1;
    pl_epoch_keys_set(pl, PL_SENDER_KEYS(s), epoch, secret, pl->static_public, s->wiring.receiver_public, s->run,
                      reply_run, reply_known);
    s->epoch = epoch;
    s->epoch_field = pl_epoch_field(epoch);
    s->epoch_started_ns = pl->now_ns;
    s->epoch_packets = 0;
    s->epoch_first_pn = s->pn_next;
    s->epoch_ns_most = pl->config.epoch_ns;
    s->stats.epochs++;
    s->epoch_event_due = 1;
    pl_sender_emit(pl, s);  /* at once: a later epoch would replace the flag */
}

/* Starts offering `epoch` with a fresh ephemeral key. */
void pl_sender_offer_new(pure_link *pl, pl_sender *s, uint32_t epoch) {
    pl_random(pl, s->offer_secret, 32);
    pl->crypto->x25519_base(s->offer_public, s->offer_secret);
    s->offer_epoch = epoch;
}

/* Offers the next epoch when one is due (spec/protocol.md §3, crypto.md §10): after
 * epoch_ns in the epoch, after epoch_packets packets sealed under its data key, or after
 * as many replies opened under its reply key, at most PL_EPOCH_REPLIES_OFFER.  The
 * receiver seals the replies and holds to their limit; it has no way to ask for a new
 * epoch, so the sender counts what it can see of them: a host that reports each of many
 * small records stored draws several replies per packet, and the reply key would reach
 * the limit first.  Epoch 0 offers from its first packet (run.c). */
void pl_sender_epoch_due(pure_link *pl, pl_sender *s, uint64_t now_ns) {
    if (s->epoch == 0 || s->offer_epoch != 0) return;
    uint64_t replies_most = pl->config.epoch_packets < PL_EPOCH_REPLIES_OFFER ? pl->config.epoch_packets
                                                                              : PL_EPOCH_REPLIES_OFFER;
    if (now_ns >= s->epoch_started_ns + pl->config.epoch_ns || s->epoch_packets >= pl->config.epoch_packets ||
        PL_SENDER_KEYS(s)->replies >= replies_most)
        pl_sender_offer_new(pl, s, s->epoch + 1);
}

void pl_sender_on_accept(pure_link *pl, pl_sender *s, const pl_frame *f, uint64_t now_ns) {
    (void)now_ns;
    uint32_t epoch = f->accept.epoch;
    const uint8_t *their = f->accept.public_key;
    if (s->offer_epoch == 0 || epoch != s->offer_epoch || memcmp(f->accept.echo, s->offer_public, 4) != 0) return;
    if (epoch != s->epoch + 1) return;
    uint8_t dh[32], next[32];
    s->stats.x25519_ops++;
    if (pl->crypto->x25519(dh, s->offer_secret, their) != 0) return;  /* all-zero: refuse */
    pl_epoch_next(next, PL_SENDER_KEYS(s)->secret, dh, s->offer_public, their, epoch);
    pl_sender_set_epoch(pl, s, epoch, next);
    /* Forward secrecy: the ephemeral secret and the shared value go now. */
    memset(s->offer_secret, 0, 32);
    memset(dh, 0, 32);
    memset(next, 0, 32);
    s->offer_epoch = 0;
    /* Records that went in epoch 0 wait at the receiver until a packet of epoch >= 1 proves
     * the run live (spec/protocol.md §4.2): with nothing more to send, that proof would
     * come only with the 1 s resend. */
    if (epoch == 1 && s->end_off > s->stored_off) s->live_proof_due = 1;
}

/* Does a LOST name a packet we sealed in the epoch we seal in now, and that no ACK has
 * covered — by its number and the first bytes of its tag, which only we and whoever saw
 * that packet know?  Then a LOST drawn by a forged packet (its tag is not ours), one
 * replayed after we started over (its packet is of an epoch we left), or a late copy,
 * changes nothing. */
static int lost_names_ours(const pl_sender *s, const pl_frame *f) {
    if (s->epoch == 0 || s->pn_next == 0 || f->lost.epoch != pl_epoch_field(s->epoch)) return 0;
    uint64_t pn = pl_pn_decode(s->pn_next - 1, f->lost.pn_truncated, f->lost.pn_len);
    if (pn >= s->pn_next || pn < s->epoch_first_pn || pn < s->pn_oldest) return 0;
    const pl_sent *e = &s->sent[pn % s->sent_most];
    if (e->pn != pn || (e->state != PL_SENT_FLIGHT && e->state != PL_SENT_LOST)) return 0;
    return memcmp(e->tag, f->lost.tag, PL_LOST_TAG_BYTES) == 0;
}

/* A LOST for our run that names none of our packets: someone else's datagram with our run
 * id drew it, now or (a replay) earlier.  The receiver answers one in many of the datagrams
 * that name a run when there are many (spec/protocol.md §7): while we wait on a reply (a
 * PTO has fired), a probe goes at once, at most one per PL_LOST_GAP_NS, so that our own
 * packets are among those it picks from as often as it answers.  A replayed LOST costs a
 * probe at most. */
static void probe_on_stray_lost(pl_sender *s, uint64_t now_ns) {
    if (s->epoch == 0 || s->pto_count == 0 || s->refused || s->eliciting_in_flight == 0) return;
    if (s->stray_lost_ns != 0 && now_ns < s->stray_lost_ns + PL_LOST_GAP_NS) return;
    s->stray_lost_ns = now_ns;
    if (s->probes_due == 0) s->probes_due = 1;
    pl_sender_requeue_oldest(s);  /* record bytes: a PING is too small to draw a LOST */
}

/* LOST: the receiver cannot open our epoch (it restarted without a memo, or forgot the
 * run): start over from epoch 0 of the same run, if the LOST names one of our packets. */
void pl_sender_on_lost(pure_link *pl, pl_sender *s, const pl_frame *f, uint64_t now_ns) {
    s->stats.lost_notices_received++;
    if (!lost_names_ours(s, f)) {
        probe_on_stray_lost(s, now_ns);
        return;
    }
    pl_sender_keys_wipe(pl, s);
    pl_sender_set_epoch(pl, s, 0, s->static_e0);
    pl_sender_offer_new(pl, s, 1);
    /* The receiver has no packet number of ours to decode against: long numbers until it
     * acknowledges one.  Its stream state went too: bind again, resend unstored bytes. */
    s->pn_anchor = PL_NONE;
    s->stream_known = 0;
    /* Nothing in flight can be opened any more, and the receiver is there: epoch 0's first
     * packet goes now, not after the PTO that backed off while it was away. */
    pl_sender_flight_lost(s, now_ns, 0);
    s->pto_count = 0;
    pl_rangeset_add_cover(&s->resend, s->stored_off, s->next_off);
    s->acked_end = s->stored_off;
}
