/* answer.c: what a receiver sends — each run's replies (ACCEPT, CHALLENGE, REFUSED, ACK,
 * STORED) within the amplification limit, LOST notices, the run's events (its timers are receiver.c). */
#include "internal.h"

/* ---- Events ---- */
void pl_run_emit(pure_link *pl, pl_run *r) {
    if ((r->open_event_due || r->epoch_event_due) && pl_events_room(pl) < 2) pl->deliver_blocked = 1;
    if (r->refused_event_due && pl_events_room(pl) == 0) pl->deliver_blocked = 1;
    if (r->refused_event_due && pl_events_room(pl) > 0) {
        pure_link_event *ev = pl_event_push(pl, PURE_LINK_EVENT_STREAM_REFUSED);
        ev->stream = r->handle, ev->peer = r->peer, ev->run = r->run, ev->reason = r->refused_reason;
        ev->source = r->source, ev->input = r->input, ev->shape = r->shape;
        r->refused_event_due = 0;
    }
    if (r->open_event_due && pl_events_room(pl) > 0) {
        pure_link_event *ev = pl_event_push(pl, PURE_LINK_EVENT_STREAM_OPEN);
        ev->stream = r->handle, ev->peer = r->peer, ev->run = r->run;
        ev->source = r->source, ev->input = r->input, ev->shape = r->shape;
        ev->record = (int64_t)r->base_record;
        r->open_event_due = 0;
    }
    if (r->epoch_event_due && pl_events_room(pl) > 0) {
        const pl_epoch_keys *k = &r->keys[r->epoch_newest % PL_EPOCH_KEYS];
        pure_link_event *ev = pl_event_push(pl, PURE_LINK_EVENT_EPOCH);
        ev->stream = r->handle, ev->peer = r->peer, ev->run = r->run, ev->epoch = k->epoch;
        ev->token = r->reply_run;
        memcpy(ev->secret, k->secret, 32);
        memcpy(ev->sender_public, pl->peers[r->peer].public_key, 32);
        memcpy(ev->receiver_public, pl->static_public, 32);
        r->epoch_event_due = 0;
        pl->stats.epochs++;
    }
    pl_memo_emit(pl);
}

/* ---- Replies ---- */

/* An ACCEPT goes only while the sender still seals in the epoch before the accepted one,
 * and only once the memo holds the new epoch. */
static int accept_due(const pl_run *r) {
    return r->accept_pending && r->memo_token == 0 && r->accept_epoch == r->epoch + 1;
}

static int reply_due(const pl_run *r) {
    int ack = r->ack_pending && r->stream_state != PL_STREAM_ASKING && r->acks.count > 0;
    int accept = accept_due(r);
    return ack || accept || r->refused_notice_pending || (r->stored_pending && r->stream_state == PL_STREAM_ACCEPTED);
}

static size_t put_frame(uint8_t *buf, size_t at, size_t cap, const pl_frame *f) {
    size_t n = pl_frame_encode(buf + at, cap - at, f);
    assert(n > 0);  /* the reply's budget was checked against the frame sizes */
    return at + n;
}

static size_t put_ack(const pure_link *pl, const pl_run *r, uint8_t *buf, size_t at, size_t cap, uint64_t now_ns) {
    pl_frame f;
    memset(&f, 0, sizeof f);
    f.type = PL_FRAME_ACK;
    f.ack.ack_delay_us = (now_ns - r->largest_recv_ns) / 1000;
    f.ack.flags = r->stream_unknown_flag ? PL_ACK_FLAG_STREAM_UNKNOWN : 0;
    /* Newest range first (ranges[0].largest is the largest pn received). */
    uint32_t pairs = 0;
    for (uint32_t i = r->acks.count; i-- > 0 && pairs < PL_ACK_PAIRS_MOST;) {
        f.ack.ranges[pairs].smallest = r->acks.r[i].lo;
        f.ack.ranges[pairs].largest = r->acks.r[i].hi - 1;
        pairs++;
    }
    /* The largest acknowledged may trail the largest received: a packet whose bytes were
     * left out for want of room is received but not acknowledged. */
    assert(pairs >= 1 && f.ack.ranges[0].largest <= r->largest_pn);
    f.ack.range_count = (uint8_t)(pairs - 1);
    (void)pl;
    unsigned written;
    size_t n = pl_ack_encode_fit(buf + at, cap - at, &f, &written);  /* older ranges drop off */
    assert(n > 0);
    return at + n;
}

static void reply_seal_header(pure_link *pl, pl_run *r, uint8_t *buf, size_t *head, uint64_t pn) {
    pl_header h;
    memset(&h, 0, sizeof h);
    h.reply = 1;
    h.pn_len = 4;  /* replies are few: the full low 32 bits spare the peer any guessing */
    h.epoch_field = pl_epoch_field(r->epoch);
    h.run = r->run;
    h.reply_run = r->reply_run;
    h.pn_truncated = pl_pn_truncate(pn, 4);
    *head = pl_header_encode(buf, PURE_LINK_DATAGRAM_MOST, &h);
    assert(*head > 0);
}

/* The smallest reply that carries an ACCEPT: header (4-byte packet number), frame, tag. */
#define REPLY_ACCEPT_BYTES (PL_HEADER_MOST + PL_FRAME_ACCEPT_BYTES + PURE_LINK_TAG_BYTES)

/* The AEAD limit on a reply key (spec/crypto.md §10): the last PL_EPOCH_PACKETS_RESERVE
 * replies under a key go only with the ACCEPT of the next epoch, the one reply that must be
 * sealed under this key for it to be replaced; at the limit none goes until a packet of the
 * next epoch arrives.  What else is due rides in the ACCEPT's reply: it costs no seal. */
static int reply_key_allows(const pl_run *r, const pl_epoch_keys *k, size_t limit) {
    if (k->replies < PL_EPOCH_PACKETS_LIMIT - PL_EPOCH_PACKETS_RESERVE) return 1;
    return k->replies < PL_EPOCH_PACKETS_LIMIT && accept_due(r) && limit >= REPLY_ACCEPT_BYTES;
}

int pl_run_pull(pure_link *pl, pl_run *r, uint8_t *buf, size_t cap, pure_link_addr *to, uint64_t now_ns) {
    (void)cap;
    if (r->in_use != 1 || !reply_due(r)) return 0;
    size_t limit = PURE_LINK_DATAGRAM_MOST;
    if (!r->validated) {
        /* Amplification: at most 3x the bytes received from this address. */
        uint64_t budget = PURE_LINK_AMPLIFICATION * r->unvalidated_in;
        uint64_t left = budget > r->unvalidated_out ? budget - r->unvalidated_out : 0;
        if (left < PL_REPLY_BYTES_LEAST) { pl->stats.dropped_amplification++; return 0; }
        if (left < limit) limit = (size_t)left;
    }
    pl_epoch_keys *k = &r->keys[r->epoch % PL_EPOCH_KEYS];
    assert(k->valid && k->epoch == r->epoch && k->replies <= PL_EPOCH_PACKETS_LIMIT);
    if (!reply_key_allows(r, k, limit)) { pl->stats.replies_held_key_limit++; return 0; }
    int reserve = k->replies >= PL_EPOCH_PACKETS_LIMIT - PL_EPOCH_PACKETS_RESERVE;
    uint64_t pn = r->reply_pn_next++;
    size_t head, at;
    reply_seal_header(pl, r, buf, &head, pn);
    at = head;
    size_t cap_frames = limit - PURE_LINK_TAG_BYTES;
    pl_frame f;
    if (accept_due(r)) {
        memset(&f, 0, sizeof f);
        f.type = PL_FRAME_ACCEPT;
        f.accept.epoch = r->accept_epoch;
        memcpy(f.accept.echo, r->offer_public, 4);
        memcpy(f.accept.public_key, r->accept_public, 32);
        if (pl_frame_size(&f) <= cap_frames - at) at = put_frame(buf, at, cap_frames, &f);
        r->accept_pending = 0;  /* sent again if the sender repeats its OFFER */
    }
    assert(!reserve || at > head);  /* a reply of the reserve carries its ACCEPT */
    if (!r->validated) {
        memset(&f, 0, sizeof f);
        f.type = PL_FRAME_CHALLENGE;
        memcpy(f.challenge.token, r->challenge_token, 16);
        if (pl_frame_size(&f) <= cap_frames - at) at = put_frame(buf, at, cap_frames, &f);
    }
    if (r->refused_notice_pending) {
        memset(&f, 0, sizeof f);
        f.type = PL_FRAME_REFUSED;
        f.refused.reason = (uint8_t)r->refused_reason;
        if (pl_frame_size(&f) <= cap_frames - at) {
            at = put_frame(buf, at, cap_frames, &f);
            r->refused_notice_pending = 0;
            pl->stats.listener_refused++;
        }
    }
    if (r->stream_state == PL_STREAM_ACCEPTED) {
        memset(&f, 0, sizeof f);
        f.type = PL_FRAME_STORED;
        f.stored.stored = r->stored_record;
        f.stored.credit = pl_run_credit(pl, r);
        if (pl_frame_size(&f) <= cap_frames - at) {
            at = put_frame(buf, at, cap_frames, &f);
            r->stored_pending = 0;
        }
    }
    if (r->acks.count > 0 && r->stream_state != PL_STREAM_ASKING && cap_frames - at >= PL_ACK_BYTES_LEAST) {
        at = put_ack(pl, r, buf, at, cap_frames, now_ns);
        r->ack_pending = 0;
        r->eliciting_unacked = 0;
        pl_run_timer_set(pl, r, PL_RT_ACK, PL_NONE);
    }
    uint8_t nonce[12];
    pl_nonce(nonce, k->reply_iv, pn);
    pl->crypto->aead_seal(pl_keys_ctx(pl, k)->reply, nonce, buf, head, buf + head, at - head, buf + head);
    k->replies++;
    assert(k->replies <= PL_EPOCH_PACKETS_LIMIT);
    size_t bytes = at + PURE_LINK_TAG_BYTES;
    if (!r->validated) r->unvalidated_out += bytes;
    *to = r->addr;
    return (int)bytes;
}

/* ---- LOST (spec/protocol.md "LOST") ---- */

/* The LOST allowance: one per PL_LOST_GAP_NS per (peer, run, address), in a table of the
 * latest PL_LOST_RUNS_MOST.  Junk of other runs (or from other addresses) only pushes
 * entries out, and an entry that is not there allows a LOST: it cannot spend the
 * allowance of the run it does not name.  Returns 1 (and takes it) if LOST may go. */
static int lost_allowed(pure_link *pl, int peer, uint64_t run, const pure_link_addr *to, uint64_t now_ns) {
    pl_lost_sent *oldest = &pl->lost_sent[0];
    for (uint32_t i = 0; i < PL_LOST_RUNS_MOST; i++) {
        pl_lost_sent *e = &pl->lost_sent[i];
        if (e->used && e->peer == peer && e->run == run && pl_addr_equal(&e->to, to)) {
            if (now_ns - e->at_ns < PL_LOST_GAP_NS) return 0;
            e->at_ns = now_ns;
            return 1;
        }
        if (!e->used || (oldest->used && e->at_ns < oldest->at_ns)) oldest = e;
    }
    *oldest = (pl_lost_sent){.used = 1, .peer = peer, .run = run, .to = *to, .at_ns = now_ns};
    return 1;
}

/* A wired peer's packet names an epoch of a run this receiver does not know (it restarted
 * without a memo, or forgot the run).  The notice is sealed under epoch 0 with a fresh
 * reply run, so its (key, nonce) is new even at packet number 0; it is smaller than its
 * trigger, it echoes the trigger's packet number and first tag bytes (so that the sender
 * honours only a LOST about a packet it sent), and it obeys the per-run allowance. */
void pl_notice_lost(pure_link *pl, pl_peer *p, const pl_header *h, const uint8_t *data, size_t len,
                    const pure_link_addr *from, uint64_t now_ns) {
    if (len < PL_LOST_TRIGGER_LEAST) return;
    if (pl->lost_count == PL_LOST_QUEUE_MOST) return;
    int peer = (int)(p - pl->peers);
    if (!lost_allowed(pl, peer, h->run, from, now_ns)) return;
    pl_lost_notice *n = &pl->lost_queue[pl->lost_count++];
    n->peer = peer;
    n->run = h->run;
    n->epoch_field = h->epoch_field;
    n->pn_truncated = (uint32_t)h->pn_truncated;
    n->pn_len = (uint8_t)h->pn_len;
    memcpy(n->tag, data + len - PURE_LINK_TAG_BYTES, PL_LOST_TAG_BYTES);
    n->to = *from;
}

int pl_lost_pull(pure_link *pl, uint8_t *buf, pure_link_addr *to) {
    if (pl->lost_count == 0) return 0;
    pl_lost_notice n = pl->lost_queue[--pl->lost_count];
    pl_peer *p = &pl->peers[n.peer];
    const uint8_t *e0 = pl_peer_e0(pl, p);
    if (e0 == NULL) return 0;
    uint64_t reply_run;
    pl_random(pl, &reply_run, sizeof reply_run);
    pl_header h;
    memset(&h, 0, sizeof h);
    h.reply = 1;
    h.pn_len = 1;
    h.epoch_field = 0;
    h.run = n.run;
    h.reply_run = reply_run;
    h.pn_truncated = 0;
    size_t head = pl_header_encode(buf, PURE_LINK_DATAGRAM_MOST, &h);
    pl_frame f;
    memset(&f, 0, sizeof f);
    f.type = PL_FRAME_LOST;
    f.lost.epoch = n.epoch_field;
    f.lost.pn_truncated = n.pn_truncated;
    f.lost.pn_len = n.pn_len;
    memcpy(f.lost.tag, n.tag, PL_LOST_TAG_BYTES);
    size_t at = head + pl_frame_encode(buf + head, PURE_LINK_DATAGRAM_MOST - head, &f);
    pl_packet_key pk;
    _Alignas(16) uint8_t ctx[PURE_LINK_AEAD_CTX_BYTES];
    uint8_t iv[12], nonce[12];
    pl_reply_key(&pk, e0, pl->static_public, p->public_key, n.run, reply_run, 0);
    pl_aead_key(pl, ctx, iv, &pk);
    pl_nonce(nonce, iv, 0);
    pl->crypto->aead_seal(ctx, nonce, buf, head, buf + head, at - head, buf + head);
    pl->stats.lost_notices_sent++;
    *to = n.to;
    return (int)(at + PURE_LINK_TAG_BYTES);
}
