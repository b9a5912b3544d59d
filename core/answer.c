/* answer.c: what a receiver sends — each run's replies (ACCEPT, CHALLENGE, REFUSED, ACK,
 * STORED) within the amplification limit, LOST notices, the run's events (its timers are receiver.c). */
#include "internal.h"

/* ---- Events ---- */
static int reply_due(const pl_run *r);

void pl_run_emit(pure_link *pl, pl_run *r) {
    if (reply_due(r)) pl_run_ready(pl, r);  /* pull finds it on the ready list */
    if ((r->open_event_due || r->epoch_event_due) && pl_events_room(pl) < 2) pl_run_hold(pl, r);
    if (r->refused_event_due && pl_events_room(pl) == 0) pl_run_hold(pl, r);
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
        ev->reason = r->resume_asked ? PURE_LINK_OPEN_RESUME : 0;
        r->open_event_due = 0;
    }
    if (r->epoch_event_due && pl_events_room(pl) > 0) {
        const pl_epoch_keys *k = &r->keys[r->epoch_newest % PL_EPOCH_KEYS];
        pure_link_event *ev = pl_event_push_epoch(pl, k->secret, pl->peers[r->peer].public_key, pl->static_public);
        ev->stream = r->handle, ev->peer = r->peer, ev->run = r->run, ev->epoch = k->epoch;
        ev->token = r->reply_run;
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
    return ack || accept || r->refused_notice_pending ||
           (r->stored_pending && r->ack_pending && r->stream_state == PL_STREAM_ACCEPTED);
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
    /* A reply never needs more than the base size (PL_REPLY_MOST), which every path back
     * carries (spec/protocol.md §5.1): no search on the way back. */
    size_t limit = PL_DATAGRAM_BASE;
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
            r->stored_told = r->stored_record;
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
    if (reply_due(r)) pl_run_ready(pl, r);  /* more than one reply held: its next turn */
    *to = r->addr;
    return (int)bytes;
}

/* ---- LOST (spec/protocol.md "LOST") ---- */

/* A LOST datagram: reply header with a 1-byte packet number, the LOST frame, the tag. */
#define LOST_DATAGRAM_BYTES (PL_HEADER_REPLY_FIXED + 1u + PL_FRAME_LOST_BYTES + PURE_LINK_TAG_BYTES)
_Static_assert(LOST_DATAGRAM_BYTES < PL_LOST_TRIGGER_LEAST, "a LOST is smaller than its trigger");
_Static_assert(PL_LOST_BYTES_BURST >= LOST_DATAGRAM_BYTES && PL_LOST_BYTES_PER_S >= PL_LOST_BYTES_BURST,
               "the endpoint's budget holds a LOST, and its burst is at most a second of it");

/* An allowance as a GCRA: one use costs cost_ns of time, up to burst_ns ahead of now.  One
 * word per allowance, no refill loop. */
static int allows(uint64_t due_ns, uint64_t now_ns, uint64_t cost_ns, uint64_t burst_ns) {
    uint64_t from = due_ns > now_ns ? due_ns : now_ns;
    return from + cost_ns <= now_ns + burst_ns;
}

static void spend(uint64_t *due_ns, uint64_t now_ns, uint64_t cost_ns) {
    *due_ns = (*due_ns > now_ns ? *due_ns : now_ns) + cost_ns;
}

/* The endpoint's LOST byte budget: the time one LOST datagram costs, and the burst. */
#define LOST_COST_NS  ((uint64_t)LOST_DATAGRAM_BYTES * PL_NS_PER_S / PL_LOST_BYTES_PER_S)
#define LOST_BURST_NS ((uint64_t)PL_LOST_BYTES_BURST * PL_NS_PER_S / PL_LOST_BYTES_PER_S)

/* The entry of (peer, run, address) in the table of the latest PL_LOST_RUNS_MOST; a triple
 * not there takes the place of the one whose trigger is oldest, with a fresh allowance. */
static pl_lost_sent *lost_flow(pure_link *pl, int peer, uint64_t run, const pure_link_addr *to, uint64_t now_ns) {
    pl_lost_sent *oldest = &pl->lost_sent[0];
    for (uint32_t i = 0; i < PL_LOST_RUNS_MOST; i++) {
        pl_lost_sent *e = &pl->lost_sent[i];
        if (e->used && e->peer == peer && e->run == run && pl_addr_equal(&e->to, to)) return e;
        if (!e->used || (oldest->used && e->seen_ns < oldest->seen_ns)) oldest = e;
    }
    *oldest = (pl_lost_sent){.used = 1, .peer = peer, .run = run, .to = *to, .window_ns = now_ns};
    return oldest;
}

static pl_lost_addr *lost_addr(pure_link *pl, const pure_link_addr *to) {
    pl_lost_addr *oldest = &pl->lost_addrs[0];
    for (uint32_t i = 0; i < PL_LOST_ADDRS_MOST; i++) {
        pl_lost_addr *a = &pl->lost_addrs[i];
        if (a->used && pl_addr_equal(&a->to, to)) return a;
        if (!a->used || (oldest->used && a->seen_ns < oldest->seen_ns)) oldest = a;
    }
    *oldest = (pl_lost_addr){.used = 1, .to = *to};
    return oldest;
}

/* Is this trigger the one its (peer, run, address) answers?  Each trigger is picked with
 * probability 1/n, n the triggers of the triple in this window or the one before, whichever
 * is more: about one a window is picked, and every trigger, the sender's own among junk that
 * copies its header, has the same chance (spec/protocol.md §7, "which trigger"). */
static int flow_picks(pure_link *pl, pl_lost_sent *e, uint64_t now_ns) {
    if (now_ns - e->window_ns >= PL_LOST_GAP_NS) {
        e->count_before = now_ns - e->window_ns < 2 * PL_LOST_GAP_NS ? e->count : 0;
        e->window_ns = now_ns;
        e->count = 0;
    }
    if (e->count < UINT32_MAX) e->count++;
    uint32_t n = e->count > e->count_before ? e->count : e->count_before, x = 0;
    if (n > 1) pl_random(pl, &x, sizeof x);
    return x % n == 0;
}

/* A full queue: the notice takes the place of one of the address with the most notices
 * queued, if that address has more than the notice's own would then have (a flood from one
 * address displaces only its own notices); else it is dropped. */
static void lost_queue_full(pure_link *pl, const pl_lost_notice *n) {
    uint32_t most = 0, at = 0, own = 0;
    for (uint32_t i = 0; i < PL_LOST_QUEUE_MOST; i++) {
        uint32_t c = 0;
        for (uint32_t j = 0; j < PL_LOST_QUEUE_MOST; j++) c += pl_addr_equal(&pl->lost_queue[i].to, &pl->lost_queue[j].to);
        if (c > most) most = c, at = i;
        own += pl_addr_equal(&pl->lost_queue[i].to, &n->to);
    }
    if (most > own + 1) pl->lost_queue[at] = *n;
}

static void lost_enqueue(pure_link *pl, const pl_lost_notice *n) {
    for (uint32_t i = 0; i < pl->lost_count; i++) {
        pl_lost_notice *q = &pl->lost_queue[i];
        if (q->peer == n->peer && q->run == n->run && pl_addr_equal(&q->to, &n->to)) {
            *q = *n;  /* one notice per (peer, run, address) waits: the newest trigger's */
            return;
        }
    }
    if (pl->lost_count < PL_LOST_QUEUE_MOST) pl->lost_queue[pl->lost_count++] = *n;
    else lost_queue_full(pl, n);
    assert(pl->lost_count <= PL_LOST_QUEUE_MOST);
}

/* A wired peer's packet names an epoch of a run this receiver does not know (it restarted
 * without a memo, or forgot the run).  The notice is sealed under epoch 0 with a fresh
 * reply run, so its (key, nonce) is new even at packet number 0; it is smaller than its
 * trigger, it echoes the trigger's packet number and first tag bytes (so that the sender
 * honours only a LOST about a packet it sent), and it goes only within three allowances:
 * the trigger's (peer, run, address), its address, and the endpoint's LOST bytes. */
void pl_notice_lost(pure_link *pl, pl_peer *p, const pl_header *h, const uint8_t *data, size_t len,
                    const pure_link_addr *from, uint64_t now_ns) {
    if (len < PL_LOST_TRIGGER_LEAST) return;
    int peer = (int)(p - pl->peers);
    pl_lost_sent *e = lost_flow(pl, peer, h->run, from, now_ns);
    e->seen_ns = now_ns;
    if (!flow_picks(pl, e, now_ns) || !allows(e->due_ns, now_ns, PL_LOST_GAP_NS, PL_LOST_GAP_NS)) return;
    pl_lost_addr *a = lost_addr(pl, from);
    a->seen_ns = now_ns;
    if (!allows(a->due_ns, now_ns, PL_LOST_ADDR_GAP_NS, PL_LOST_ADDR_BURST * PL_LOST_ADDR_GAP_NS)) return;
    if (!allows(pl->lost_bytes_due_ns, now_ns, LOST_COST_NS, LOST_BURST_NS)) return;
    spend(&e->due_ns, now_ns, PL_LOST_GAP_NS);
    spend(&a->due_ns, now_ns, PL_LOST_ADDR_GAP_NS);
    spend(&pl->lost_bytes_due_ns, now_ns, LOST_COST_NS);
    pl_lost_notice n = {.peer = peer, .run = h->run, .epoch_field = h->epoch_field,
                        .pn_truncated = (uint32_t)h->pn_truncated, .pn_len = (uint8_t)h->pn_len, .to = *from};
    memcpy(n.tag, data + len - PURE_LINK_TAG_BYTES, PL_LOST_TAG_BYTES);
    lost_enqueue(pl, &n);
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
    assert(at + PURE_LINK_TAG_BYTES == LOST_DATAGRAM_BYTES);
    return (int)(at + PURE_LINK_TAG_BYTES);
}
