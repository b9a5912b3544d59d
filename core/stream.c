/* stream.c: what an authentic sender packet does to its run — address, epoch, OFFER,
 * STREAM binding through the host, reassembly of the record stream, in-order delivery,
 * the host's stored mark (the credit granted from the pool is pool.c). */
#include "internal.h"


/* A run moves to a new address only on an authentic, fresh, highest-numbered packet; the
 * new address is unvalidated until it answers a CHALLENGE. */
static void on_address(pure_link *pl, pl_run *r, const pure_link_addr *from, size_t len, int highest) {
    if (!pl_addr_equal(from, &r->addr)) {
        if (!highest) return;  /* an old packet from elsewhere: no move, no bytes counted */
        r->addr = *from;
        pl->stats.address_moves++;
        r->validated = 0;
        r->unvalidated_in = 0;
        r->unvalidated_out = 0;
        r->challenge_pending = 1;
        pl_random(pl, r->challenge_token, 16);
    }
    if (!r->validated) r->unvalidated_in += len;
}

/* ---- OFFER (spec/crypto.md "Epoch chain") ---- */

static int offer_rate_ok(pl_peer *p, uint64_t now_ns) {
    /* GCRA: each X25519 moves the peer's theoretical time on by 1/PL_OFFERS_PER_S s; a
     * burst of PL_OFFERS_PER_S is allowed ahead of it. */
    uint64_t cost = PL_NS_PER_S / PL_OFFERS_PER_S, tolerance = (PL_OFFERS_PER_S - 1) * cost;
    if (p->offer_tat_ns > now_ns + tolerance) return 0;
    p->offer_tat_ns = (p->offer_tat_ns > now_ns ? p->offer_tat_ns : now_ns) + cost;
    return 1;
}

static void on_offer(pure_link *pl, pl_run *r, const pl_frame *f, uint32_t packet_epoch, uint64_t now_ns) {
    uint32_t epoch = f->offer.epoch;
    const uint8_t *their = f->offer.public_key;
    if (epoch == r->epoch_newest && epoch > 0 && memcmp(their, r->offer_public, 32) == 0) {
        /* Our ACCEPT was lost (the sender still seals in the epoch before): send it again,
         * no new work.  A late copy of the OFFER after the switch needs nothing. */
        if (r->epoch + 1 == epoch) r->accept_pending = 1;
        return;
    }
    /* Only the next epoch, offered under the current one: an old OFFER replayed can never
     * roll the run back.  Until the run is proven live (an epoch >= 1 packet opened) an
     * epoch-1 ACCEPT is only a proposal: a new epoch-1 OFFER (after LOST) replaces it. */
    uint32_t newest = r->fresh ? r->epoch_newest : 0;
    if (epoch != newest + 1 || epoch != packet_epoch + 1) return;
    pl_peer *p = &pl->peers[r->peer];
    if (!pl_memo_room(pl)) return;  /* the sender offers again; by then writes have drained */
    if (!offer_rate_ok(p, now_ns)) return;
    uint8_t eph[32], eph_pub[32], dh[32], next[32];
    pl_random(pl, eph, 32);
    pl->crypto->x25519_base(eph_pub, eph);
    pl->stats.x25519_ops++;
    int bad = pl->crypto->x25519(dh, eph, their);
    memset(eph, 0, 32);
    if (bad) return;  /* all-zero: the offer is refused */
    const pl_epoch_keys *cur = &r->keys[packet_epoch % PL_EPOCH_KEYS];
    pl_epoch_next(next, cur->secret, dh, their, eph_pub, epoch);
    pl_epoch_keys_set(pl, &r->keys[epoch % PL_EPOCH_KEYS], epoch, next, p->public_key, pl->static_public,
                      r->run, r->reply_run, 1);
    memset(dh, 0, 32);
    memset(next, 0, 32);
    r->epoch_newest = epoch;
    memcpy(r->offer_public, their, 32);
    memcpy(r->accept_public, eph_pub, 32);
    r->accept_epoch = epoch;
    r->accept_pending = 1;
    r->epoch_event_due = 1;
    pl_memo_on_epoch(pl, r);
}

/* ---- STREAM ---- */

static void refuse(pure_link *pl, pl_run *r, uint32_t reason) {
    pl_run_mem_release(pl, r);  /* a refused stream holds no record bytes */
    r->stream_state = PL_STREAM_REFUSED;
    r->refused_reason = reason;
    r->refused_notice_pending = 1;
    pl_run_timer_set(pl, r, PL_RT_HOST, PL_NONE);
    pl_run_have_clear(pl, r);
}

/* The reason of a host's refusal (stream_answer's negative answers), 0 for none of them. */
static uint32_t refusal_reason(int answer) {
    return answer == -PURE_LINK_OTHER_SHAPE    ? PL_REFUSED_OTHER_SHAPE
           : answer == -PURE_LINK_CANNOT_STORE ? PL_REFUSED_CANNOT_STORE
           : answer == -PURE_LINK_CUT_OFF      ? PL_REFUSED_CUT_OFF
           : answer == -1                      ? PL_REFUSED_NO_INPUT : 0;
}

/* The sender holds records only from base_record on: everything before it was STORED (by
 * this receiver or an earlier life of it), so delivery may move up to it — never back. */
static void rebase(pure_link *pl, pl_run *r, uint64_t base_record, uint64_t base_off) {
    if (base_record <= r->deliver_record || base_off <= r->deliver_off) return;
    r->deliver_record = base_record;
    r->deliver_off = base_off;
    r->head_stop = 0;
    if (r->stored_record < base_record) {
        uint64_t from = r->stored_off;
        r->stored_record = base_record;
        r->stored_off = base_off;
        pl_run_mem_stored(pl, r, from);
    }
    pl_rangeset_remove_below(&r->have, base_off);
    pl_run_have_fit(pl, r);
    pl_run_ticket_done(pl, r);
}

/* `alone`: the packet carries no record bytes, which asks where to resume (§4.3). */
static void on_stream(pure_link *pl, pl_run *r, const pl_frame *f, int alone, uint64_t now_ns) {
    if (r->stream_state == PL_STREAM_ACCEPTED || r->stream_state == PL_STREAM_ASKING) {
        rebase(pl, r, f->stream.base_record, f->stream.base_offset);
        return;
    }
    /* NONE, or REFUSED (every trial asks again: the input may have appeared). */
    pl_run_mem_release(pl, r);
    memcpy(r->source, f->stream.source, f->stream.source_len);
    r->source[f->stream.source_len] = 0;
    memcpy(r->input, f->stream.input, f->stream.input_len);
    r->input[f->stream.input_len] = 0;
    r->shape = f->stream.shape;
    r->base_record = f->stream.base_record;
    r->deliver_record = r->stored_record = f->stream.base_record;
    r->deliver_off = r->stored_off = f->stream.base_offset;
    r->head_stop = 0;
    r->delivered_bytes = r->delivered_records = 0;
    r->stream_unknown_flag = 0;
    r->resume_asked = (uint8_t)alone;
    pl_run_have_clear(pl, r);
    if (!pl_peer_allows(&pl->peers[r->peer], r->source)) {
        refuse(pl, r, 3);
        r->refused_event_due = 1; /* the host was not asked: tell it, for its log */
        return;
    }
    r->stream_state = PL_STREAM_ASKING;
    r->open_event_due = 1;
    pl_run_timer_set(pl, r, PL_RT_HOST, now_ns + PL_HOST_ANSWER_NS_MOST);
}

/* A stored mark that moved: its STORED rides on the run's next ACK, and the ack delay is
 * armed so that it goes alone only when no ACK is due within it.  It goes at once (with the
 * ACK) when it moved PL_STORED_AT_ONCE records or more past the last STORED sent, and in
 * the run's first PL_STORED_QUICK packets (spec/protocol.md §5, "ack policy"). */
static void stored_due(pure_link *pl, pl_run *r) {
    r->stored_pending = 1;
    if (r->stored_record - r->stored_told >= PL_STORED_AT_ONCE || r->largest_pn < PL_STORED_QUICK) r->ack_pending = 1;
    if (r->timers[PL_RT_ACK] == PL_NONE) pl_run_timer_set(pl, r, PL_RT_ACK, pl->now_ns + pl->config.ack_delay_us * 1000ull);
}

/* A run that asked where to resume starts at the host's mark m: record m at stream offset m,
 * as its sender takes it from the STORED that answers (it holds no record before it). */
static void resume_from(pure_link *pl, pl_run *r, uint64_t m) {
    pl_run_mem_release(pl, r);
    pl_run_have_clear(pl, r);
    r->base_record = r->deliver_record = r->stored_record = m;
    r->deliver_off = r->stored_off = m;
    r->head_stop = 0;
    r->stored_pending = 1;
}

int pure_link_stream_answer(pure_link *pl, int stream, int answer, int64_t stored_mark, uint64_t now_ns) {
    assert(pl != NULL && pl->magic == PL_MAGIC);
    assert(stream >= 0 && (uint32_t)stream < pl->config.runs_most);
    assert(now_ns >= pl->now_ns);
    pl->now_ns = now_ns;
    pl_stage_release(pl);
    if ((uint32_t)stream >= pl->runs_used) return PURE_LINK_ERR_NOT_FOUND;  /* never used */
    pl_run *r = &pl->runs[stream];
    if (!r->in_use || r->stream_state != PL_STREAM_ASKING) return PURE_LINK_ERR_NOT_FOUND;
    pl_run_timer_set(pl, r, PL_RT_HOST, PL_NONE);
    r->ack_pending = 1;  /* the ACK held for this answer goes now */
    if (answer != 0) {
        refuse(pl, r, refusal_reason(answer) ? refusal_reason(answer) : PL_REFUSED_NO_INPUT);
    } else {
        if (stored_mark < 0) return PURE_LINK_ERR_INVALID;
        if (r->resume_asked) {
            if ((uint64_t)stored_mark > PL_RECORD_NUMBER_MOST) return PURE_LINK_ERR_INVALID;
            resume_from(pl, r, (uint64_t)stored_mark);
        }
        r->stream_state = PL_STREAM_ACCEPTED;
        r->host_mark = (uint64_t)stored_mark;
        pl_receiver_deliver(pl, r);
    }
    pl_run_ready(pl, r);  /* the held ACK, a REFUSED or a STORED may go now */
    return 0;
}

/* Refused after accepting (protocol.md §4.1): what was handed over and not stored is
 * forgotten, so delivery starts again from the stored mark when a later STREAM is
 * accepted; the mark itself never moves back. */
int pure_link_stream_refuse(pure_link *pl, int stream, int answer, uint64_t now_ns) {
    assert(pl != NULL && pl->magic == PL_MAGIC);
    assert(stream >= 0 && (uint32_t)stream < pl->config.runs_most);
    assert(now_ns >= pl->now_ns);
    uint32_t reason = refusal_reason(answer);
    if (reason == 0) return PURE_LINK_ERR_INVALID;
    if ((uint32_t)stream >= pl->runs_used || !pl->runs[stream].in_use) return PURE_LINK_ERR_NOT_FOUND;
    pl_run *r = &pl->runs[stream];
    if (r->stream_state == PL_STREAM_ASKING) return pure_link_stream_answer(pl, stream, answer, 0, now_ns);
    if (r->stream_state == PL_STREAM_REFUSED) return 0;
    if (r->stream_state != PL_STREAM_ACCEPTED) return PURE_LINK_ERR_NOT_FOUND;
    pl->now_ns = now_ns;
    pl_stage_release(pl);
    pl_events_drop_records(pl, stream);  /* their bytes go back below */
    uint64_t mark = r->stored_record;
    refuse(pl, r, reason);
    r->deliver_record = r->stored_record;
    r->deliver_off = r->stored_off;
    /* No STORED goes beside the REFUSED (replies carry STORED only for an accepted stream):
     * STORED progress would lift the sender's refusal. */
    assert(r->stored_record == mark && r->deliver_record == mark);
    pl_run_ready(pl, r);    /* its REFUSED goes in the next reply */
    return 0;
}

/* ---- Record bytes ---- */

/* The receiver holds stream bytes [stored_off, stored_off + window) in pool blocks.  Returns
 * 0 when it had to leave bytes out for want of room (memory, or the table of holes): the
 * packet is then not acknowledged, so the sender's loss recovery sends them again at once
 * instead of waiting for the 1 s resend rule. */
static int on_records(pure_link *pl, pl_run *r, const pl_frame *f) {
    /* RECORDS and RECORD have the same fields. */
    const pl_frame_data *rec = f->type == PL_FRAME_RECORDS ? &f->records : &f->record;
    if (r->stream_state == PL_STREAM_NONE) { r->stream_unknown_flag = 1; return 1; }
    if (r->stream_state == PL_STREAM_REFUSED) { r->refused_notice_pending = 1; return 1; }
    if (r->broken) return 1;  /* nothing more can be handed over: its bytes are not kept */
    pl_run_mem_trim(pl, r);
    uint64_t off = pl_offset_decode(r->deliver_off, rec->offset32);
    uint64_t lo = off, hi = off + rec->len;
    uint64_t window_hi = r->stored_off + pl_run_window(pl, r);
    int whole = hi <= window_hi;
    if (lo < r->deliver_off) lo = r->deliver_off;
    if (hi > window_hi) hi = window_hi;  /* beyond memory: not accepted, the sender resends */
    if (lo >= hi) return whole;
    if (lo < r->head_start) r->head_stop = 0;  /* the prefix read may be written again */
    if ((pl_run_mem_write(pl, r, lo, rec->data + (lo - off), (size_t)(hi - lo)) != 0 &&
         pl_run_mem_write_lower(pl, r, lo, rec->data + (lo - off), (size_t)(hi - lo)) != 0) ||
        pl_run_have_add(pl, r, lo, hi) != 0) {
        pl->stats.dropped_no_room++;
        return 0;
    }
    if (!whole) pl->stats.dropped_no_room++;
    return whole;
}

/* Reads up to 8 bytes at stream offset off (fewer at the contiguous end). */
/* Up to 8 bytes at off (below end), for a record prefix: in place when they lie in one
 * block, else copied into buf.  *n_out: how many. */
static const uint8_t *ring_peek(const pure_link *pl, const pl_run *r, uint64_t off, uint64_t end, uint8_t buf[8],
                                size_t *n_out) {
    size_t n = end - off < 8 ? (size_t)(end - off) : 8, got;
    const uint8_t *p = pl_run_mem_at(pl, r, off, n, &got);
    *n_out = n;
    if (got == n) return p;
    pl_run_mem_read(pl, r, off, buf, n);
    return buf;
}

/* Points the RECORD event at the record's bytes: one or two pieces in the pool's blocks,
 * or a copy in the hand-over ring.  0, or -1 when the ring has no room now. */
static int record_bytes(pure_link *pl, const pl_run *r, uint64_t start, size_t len, pure_link_event *ev,
                        uint64_t *stage_end) {
    *stage_end = 0;
    ev->data = pl->pool.store.bytes, ev->len = 0, ev->data2 = NULL, ev->len2 = 0;
    if (len == 0) return 0;
    ev->data = pl_run_mem_at(pl, r, start, len, &ev->len);
    if (ev->len == len) return 0;
    ev->data2 = pl_run_mem_at(pl, r, start + ev->len, len - ev->len, &ev->len2);
    if (ev->len + ev->len2 == len) return 0;
    ev->data = pl_stage_record(pl, r, start, len, stage_end);
    ev->len = len, ev->data2 = NULL, ev->len2 = 0;
    return ev->data == NULL ? -1 : 0;
}

/* The stored mark moves to record n: the bytes of the records before it go back. */
static void stored_to(pure_link *pl, pl_run *r, uint64_t n) {
    assert(n > r->stored_record && n <= r->deliver_record);
    uint64_t from = r->stored_off, off = from;
    /* Every record delivered is stored: they end where delivery stands, and their prefixes
     * need not be read again (the host that keeps up stores this way). */
    uint64_t k = r->stored_record;
    if (n == r->deliver_record) off = r->deliver_off, k = n;
    for (; k < n; k++) {
        uint8_t buf[8];
        size_t got;
        uint64_t len;
        const uint8_t *head = ring_peek(pl, r, off, r->deliver_off, buf, &got);
        int pl_len = pl_record_prefix_get(head, got, &len);
        assert(pl_len > 0);  /* delivered records: their prefixes parsed once already */
        off += (uint64_t)pl_len + len;
    }
    r->stored_record = n;
    r->stored_off = off;
    stored_due(pl, r);
    pl_run_mem_stored(pl, r, from);
}

/* The run's stream can go no further (protocol.md §4): nothing more is handed over and
 * its bytes are given back. */
static void stream_break(pure_link *pl, pl_run *r) {
    r->broken = 1;
    pl->stats.dropped_malformed++;
    pl_run_mem_broken(pl, r);
}

/* Reads the prefix of the record at r->deliver_off (received bytes up to end) into
 * r->head_start and r->head_stop: 0, or -1 when delivery stops there (the prefix is not all
 * here yet, or the stream broke). */
static int head_read(pure_link *pl, pl_run *r, uint64_t end) {
    uint8_t buf[8];
    size_t got;
    const uint8_t *head = ring_peek(pl, r, r->deliver_off, end, buf, &got);
    uint64_t len;
    int pl_len = pl_record_prefix_get(head, got, &len);
    if (pl_len == PL_WIRE_TRUNCATED) return -1;           /* prefix not all here yet */
    if (pl_len < 0) {
        stream_break(pl, r);
        return -1;
    }
    uint64_t start = r->deliver_off + (uint64_t)pl_len, stop = start + len;
    if (r->deliver_record > PL_RECORD_NUMBER_MOST || stop > PL_STREAM_OFFSET_MOST) {
        stream_break(pl, r);                              /* past what a run's stream holds */
        return -1;
    }
    r->head_start = start, r->head_stop = stop;
    return 0;
}

/* Hands complete records to the host, in order, while the event queue has room. */
void pl_receiver_deliver(pure_link *pl, pl_run *r) {
    if (r->stream_state != PL_STREAM_ACCEPTED || !r->fresh || r->broken) return;
    while (r->have.count > 0 && r->have.r[0].lo <= r->deliver_off) {
        uint64_t end = r->have.r[0].hi;
        if (r->head_stop == 0 && head_read(pl, r, end) != 0) break;
        uint64_t start = r->head_start, stop = r->head_stop, len = stop - start;
        if (stop > end) {                                 /* record not all here yet */
            if (stop - r->stored_off > pl_run_window(pl, r) && stop - r->stored_off <= pl->config.stream_buffer_bytes)
                pl_run_ticket_ask(pl, r, stop);           /* longer than the run's share */
            break;
        }
        if (r->deliver_record >= r->host_mark) {
            if (pl_events_room(pl) == 0) { pl_run_hold(pl, r); break; }
            if (r->deliver_record - r->stored_record >= pl->config.unstored_records_most) {
                r->deliver_capped = 1;
                break;
            }
            pure_link_event tmp;
            uint64_t stage_end;
            if (record_bytes(pl, r, start, (size_t)len, &tmp, &stage_end) != 0) { pl_run_hold(pl, r); break; }
            pure_link_event *ev = pl_event_push(pl, PURE_LINK_EVENT_RECORD);
            pl->event_stage_end[(pl->ev_head + pl->ev_count - 1) % PL_EVENTS_MOST] = stage_end;
            ev->stream = r->handle, ev->peer = r->peer, ev->run = r->run;
            ev->record = (int64_t)r->deliver_record;
            ev->data = tmp.data, ev->len = tmp.len, ev->data2 = tmp.data2, ev->len2 = tmp.len2;
            pl->stats.records_delivered++;
        } else if (r->stored_record == r->deliver_record) {
            uint64_t from = r->stored_off;                /* the host had it already */
            r->stored_record++;
            r->stored_off = stop;
            stored_due(pl, r);
            pl_run_mem_stored(pl, r, from);
        }
        r->delivered_bytes += stop - r->deliver_off;
        r->delivered_records++;
        r->deliver_off = stop;
        r->deliver_record++;
        r->head_stop = 0;
        pl_rangeset_remove_below(&r->have, r->deliver_off);
        if (r->have_table != 0) pl_run_have_fit(pl, r);             /* at every record: a call */
        if (r->ticket_state != PL_TICKET_NONE) pl_run_ticket_done(pl, r);  /* only when they can act */
    }
}

int pure_link_stored(pure_link *pl, int stream, int64_t record, uint64_t now_ns) {
    assert(pl != NULL && pl->magic == PL_MAGIC);
    assert(stream >= 0 && (uint32_t)stream < pl->config.runs_most);
    assert(now_ns >= pl->now_ns);
    pl->now_ns = now_ns;
    pl_stage_release(pl);
    if ((uint32_t)stream >= pl->runs_used) return PURE_LINK_ERR_NOT_FOUND;  /* never used */
    pl_run *r = &pl->runs[stream];
    if (!r->in_use || r->stream_state != PL_STREAM_ACCEPTED) return PURE_LINK_ERR_NOT_FOUND;
    if (record < 0 || (uint64_t)record > r->deliver_record) return PURE_LINK_ERR_INVALID;
    uint64_t n = (uint64_t)record;
    if (n <= r->stored_record) return 0;
    pl->stats.records_stored += n - r->stored_record;
    stored_to(pl, r, n);
    if (r->deliver_capped) {  /* room in the unstored ring lets more through; nothing else stops
                                 delivery that a STORED moves on */
        r->deliver_capped = 0;
        pl_receiver_deliver(pl, r);
    }
    pl_run_ready(pl, r);         /* its STORED is due */
    return 0;
}

/* ---- One authentic packet ---- */

/* Does the packet carry record bytes?  Asked only for a STREAM frame (the rare one). */
static int has_records(const pl_frame *frames, int count) {
    for (int i = 0; i < count; i++)
        if (frames[i].type == PL_FRAME_RECORDS || frames[i].type == PL_FRAME_RECORD) return 1;
    return 0;
}

void pl_run_on_packet(pure_link *pl, pl_run *r, const pure_link_addr *from, const pl_frame *frames, int count,
                      size_t datagram_len, uint64_t pn, uint32_t epoch, uint64_t now_ns) {
    int highest = r->largest_pn == PL_NONE || pn > r->largest_pn;
    int in_order = r->largest_pn == PL_NONE || pn == r->largest_pn + 1;
    pl_replay_mark(r->window, &r->largest_pn, pn);
    pl_run_heard(pl, r, now_ns);
    on_address(pl, r, from, datagram_len, highest);
    /* A new epoch, or the first epoch >= 1 packet of a run not yet proven live (fresh is 0
     * or 1: one product and one compare per packet, the price of the old two tests). */
    if (epoch > r->epoch * r->fresh) pl_memo_epoch_proven(pl, r, epoch, now_ns);
    int accepted = 1;
    for (int i = 0; i < count; i++) {
        const pl_frame *f = &frames[i];
        switch (f->type) {
        case PL_FRAME_OFFER: on_offer(pl, r, f, epoch, now_ns); break;
        case PL_FRAME_STREAM: on_stream(pl, r, f, !has_records(frames, count), now_ns); break;
        case PL_FRAME_RECORDS:
        case PL_FRAME_RECORD: accepted &= on_records(pl, r, f); break;
        case PL_FRAME_RESPONSE:
            if (!r->validated && pl_addr_equal(from, &r->addr) && memcmp(f->response.token, r->challenge_token, 16) == 0) {
                r->validated = 1;
                r->challenge_pending = 0;
                pl->stats.addresses_validated++;
            }
            break;
        default: break;  /* PING, PADDING: only ask for an ACK */
        }
    }
    if (!accepted) {
        /* Not acknowledged: as if lost (the replay window still holds it, and its bytes
         * come again under a new number). */
        pl_receiver_deliver(pl, r);
        pl_run_emit(pl, r);
        return;
    }
    pl_rangeset_add_pn(&r->acks, pn);
    if (highest) r->largest_recv_ns = now_ns;
    r->eliciting_unacked++;
    if (!in_order || r->eliciting_unacked >= PL_ACK_EVERY) r->ack_pending = 1;
    else if (r->timers[PL_RT_ACK] == PL_NONE)
        pl_run_timer_set(pl, r, PL_RT_ACK, now_ns + pl->config.ack_delay_us * 1000ull);
    pl_receiver_deliver(pl, r);
    pl_run_emit(pl, r);
}
