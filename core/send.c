/* send.c: what a sender puts into its next datagram, when it may send it, and its timers
 * (loss detection, PTO, pacing, the 1 s resend rule, refusal waits, new epochs). */
#include "internal.h"

/* What the next packet will carry. */
typedef struct plan {
    uint8_t offer, response, stream, ping;
    uint64_t off, len;     /* record-stream range; len 0: none */
    uint8_t trial, copy;
    uint32_t size_probe;   /* a probe of this datagram size (pmtu.c): PING, PADDING, and record
                              bytes if it carries them, to that size */
    uint64_t limit;        /* the credit's end when planned (pl_sender_credit_off) */
} plan;


/* Chooses the record bytes: lost ranges first (oldest first), then new bytes, both within
 * the credit.  Returns 0 when there is nothing to send. */
static int pick_records(pl_sender *s, uint64_t room, plan *p) {
    uint64_t limit = p->limit;
    pl_rangeset_remove_below(&s->resend, s->stored_off);
    if (s->resend.count > 0 && s->resend.r[0].lo < limit) {
        uint64_t lo = s->resend.r[0].lo, hi = s->resend.r[0].hi;
        if (hi > limit) hi = limit;
        p->off = lo;
        p->len = hi - lo < room ? hi - lo : room;
        return 1;
    }
    if (s->next_off < limit) {
        p->off = s->next_off;
        p->len = limit - s->next_off < room ? limit - s->next_off : room;
        return 1;
    }
    return 0;
}

static size_t header_bytes(unsigned pn_len) { return PL_HEADER_SENDER_FIXED + pn_len; }

static void stream_frame(const pl_sender *s, pl_frame *f) {
    memset(f, 0, sizeof *f);
    f->type = PL_FRAME_STREAM;
    f->stream.base_record = s->records_stored;
    f->stream.base_offset = s->stored_off;
    f->stream.shape = s->wiring.shape;
    f->stream.source = (const uint8_t *)s->source;
    f->stream.source_len = s->source_len;
    f->stream.input = (const uint8_t *)s->input;
    f->stream.input_len = s->input_len;
}

/* Bytes of the STREAM frame (apart: its pl_frame stays off the stack of every packet's plan). */
static size_t stream_frame_bytes(const pl_sender *s) {
    pl_frame f;
    stream_frame(s, &f);
    return pl_frame_size(&f);
}

/* Frame bytes of the control part of a plan. */
static size_t control_bytes(const pl_sender *s, const plan *p) {
    size_t n = 0;
    if (p->offer) n += PL_FRAME_OFFER_BYTES;
    if (p->response) n += PL_FRAME_TOKEN_BYTES;
    if (p->stream) n += stream_frame_bytes(s);
    n += p->ping;
    return n;
}

static void copy_pop(pl_sender *s) {
    assert(s->copies_count > 0);
    memmove(&s->copies[0], &s->copies[1], (s->copies_count - 1) * sizeof s->copies[0]);
    s->copies_count--;
}

/* A copy that is due, of a packet still unacknowledged, takes the place of new bytes (it
 * leaves the queue only when sent: see record_sent). */
static int pick_copy(pl_sender *s, uint64_t now_ns, uint64_t room, plan *p) {
    while (s->copies_count > 0 && s->copies[0].due_ns <= now_ns) {
        const struct pl_copy *c = &s->copies[0];
        const pl_sent *e = &s->sent[c->pn % s->sent_most];
        if (e->pn != c->pn || e->state != PL_SENT_FLIGHT || c->off < s->stored_off) {
            copy_pop(s);  /* acknowledged, lost or stored already: not needed */
            continue;
        }
        p->off = c->off;
        p->len = c->len < room ? c->len : room;
        p->copy = 1;
        return 1;
    }
    return 0;
}

/* Copies are for a sender with room to spare: when it cannot send now (window full,
 * refused, nothing planned), the due ones are dropped rather than left to wake it. */
static void copies_drop_due(pl_sender *s, uint64_t now_ns) {
    while (s->copies_count > 0 && s->copies[0].due_ns <= now_ns) copy_pop(s);
}

/* Record bytes the sender may send now (below limit, the credit's end). */
static int has_records(const pl_sender *s, uint64_t limit) {
    return s->next_off < limit || (s->resend.count > 0 && s->resend.r[0].lo < limit);
}

/* A size probe goes in place of a packet of record bytes, when the sender has some to send
 * (a path is probed while it is used) and epoch 0 is over (its one packet in flight is the
 * OFFER's).  Returns 0: none due; 1: a probe of PING and PADDING alone, planned, whose loss
 * costs nothing but itself; 2: a probe that carries what a packet would (the search's first,
 * pl_pmtu_probe_carries), to be planned as one of p->size_probe bytes. */
static int plan_size_probe(pl_sender *s, uint64_t now_ns, plan *p) {
    if (s->epoch == 0 || s->refused || !has_records(s, p->limit)) return 0;
    uint32_t size = pl_pmtu_probe_due(&s->pmtu, now_ns);
    if (size == 0) return 0;
    p->ping = 1;
    p->size_probe = size;
    if (pl_pmtu_probe_carries(&s->pmtu)) return 2;
    uint64_t limit = p->limit;
    memset(p, 0, sizeof *p);
    p->limit = limit;
    p->ping = 1;
    p->size_probe = size;
    return 1;
}

/* Bytes of a full packet: the size found (pmtu.c, never below the base), but the base for
 * the loss timer's probes, which must come through a black hole to show it. */
static size_t datagram_bytes(const pl_sender *s, int probe) {
    return probe ? PL_DATAGRAM_BASE : s->pmtu.bytes;
}

/* Decides whether a datagram is due now and what it carries.  Returns 0 if none. */
static int plan_next(pl_sender *s, uint64_t now_ns, unsigned pn_len, int probe, plan *p) {
    memset(p, 0, sizeof *p);
    p->limit = pl_sender_credit_off(s);
    p->offer = s->offer_epoch != 0 && (s->offers_in_flight == 0 || probe);
    p->response = s->response_pending && s->responses_in_flight == 0;
    size_t room_all = datagram_bytes(s, probe) - header_bytes(pn_len) - PURE_LINK_TAG_BYTES;
    if (s->refused) {
        if (!s->trial_due) return 0;
        p->trial = 1;
        p->stream = 1;
        size_t room = room_all - control_bytes(s, p) - PL_FRAME_RECORDS_HEAD;
        p->off = s->stored_off;
        p->len = s->end_off - s->stored_off < room ? s->end_off - s->stored_off : room;
        return p->len > 0 || p->offer || p->response || s->resuming;  /* resuming: STREAM alone */
    }
    /* The AEAD limit (spec: a new epoch before 2^23 packets under one key) is a hard stop:
     * past the point where a new epoch is offered (config.epoch_packets <= 2^22) only the
     * OFFER may go, and at the limit nothing, until ACCEPT brings a new key. */
    if (s->epoch_packets >= PL_EPOCH_PACKETS_LIMIT) return 0;
    if (s->epoch_packets >= PL_EPOCH_PACKETS_LIMIT - PL_EPOCH_PACKETS_RESERVE) {
        if (!p->offer) return 0;
        return 1;
    }
    /* Epoch 0 carries one packet at a time, each with the OFFER: the rest waits for ACCEPT and goes
     * under the epoch-1 key, which has forward secrecy (spec/protocol.md "Epoch 0"). */
    if (s->epoch == 0 && s->offers_in_flight > 0 && !probe) return 0;
    if (!probe && pl_pmtu_searching(&s->pmtu, now_ns)) {
        int size_probe = plan_size_probe(s, now_ns, p);
        if (size_probe == 1) return 1;
        if (size_probe == 2) room_all += p->size_probe - s->pmtu.bytes;  /* its size, not a full packet's */
    }
    p->stream = !s->stream_known;
    size_t control = control_bytes(s, p);
    uint64_t room = room_all - control - PL_FRAME_RECORDS_HEAD;
    int records = pick_copy(s, now_ns, room, p) || pick_records(s, room, p);
    int ask = s->resuming && p->stream;  /* a STREAM without record bytes asks where to resume */
    if (!records && !ask) p->stream = 0;
    if (!records && !ask && !p->offer && !p->response) {
        if (!probe && !s->live_proof_due) return 0;
        p->ping = 1;
    }
    return 1;
}

static void encode_frames(const pl_sender *s, const plan *p, uint8_t *buf, size_t *at, size_t cap) {
    pl_frame f;
    if (p->offer) {
        memset(&f, 0, sizeof f);
        f.type = PL_FRAME_OFFER;
        f.offer.epoch = s->offer_epoch;
        memcpy(f.offer.public_key, s->offer_public, 32);
        *at += pl_frame_encode(buf + *at, cap - *at, &f);
    }
    if (p->response) {
        memset(&f, 0, sizeof f);
        f.type = PL_FRAME_RESPONSE;
        memcpy(f.response.token, s->response_token, 16);
        *at += pl_frame_encode(buf + *at, cap - *at, &f);
    }
    if (p->stream) {
        stream_frame(s, &f);
        *at += pl_frame_encode(buf + *at, cap - *at, &f);
    }
    if (p->ping) {
        memset(&f, 0, sizeof f);
        f.type = PL_FRAME_PING;
        *at += pl_frame_encode(buf + *at, cap - *at, &f);
        if (p->size_probe) {
            /* PADDING (zero bytes) up to the probed size, tag included, but for the record
             * bytes that follow (RECORDS runs to the end of the packet). */
            size_t end = p->size_probe - PURE_LINK_TAG_BYTES - (p->len > 0 ? PL_FRAME_RECORDS_HEAD + p->len : 0);
            assert(end >= *at && end <= cap);
            memset(buf + *at, 0, end - *at);
            *at = end;
        }
    }
}

/* Record bytes go last, in one RECORDS frame running to the end of the packet; the bytes
 * are copied from the queue straight into place. */
static void encode_records(const pure_link *pl, const pl_sender *s, const plan *p, uint8_t *buf, size_t *at) {
    if (p->len == 0) return;
    buf[(*at)++] = PL_FRAME_RECORDS;
    uint32_t off32 = (uint32_t)p->off;
    buf[(*at)++] = (uint8_t)(off32 >> 24);
    buf[(*at)++] = (uint8_t)(off32 >> 16);
    buf[(*at)++] = (uint8_t)(off32 >> 8);
    buf[(*at)++] = (uint8_t)off32;
    pl_queue_get(pl, s, p->off, buf + *at, (size_t)p->len);
    *at += (size_t)p->len;
}

/* A packet of record bytes sent by an app-limited sender (it had nothing more to send: a
 * low-rate, latency-bound stream, or the tail of a transfer) gets a copy a quarter RTT
 * later, if the window has room then: a loss costs a quarter RTT instead of a round trip
 * and a detection delay.  The copy is dropped if the packet is acknowledged first. */
static void copy_later(const pure_link *pl, pl_sender *s, const pl_sent *e, uint64_t now_ns) {
    if (pl->config.copies != 1 || e->len == 0 || e->is_copy || e->trial || !e->app_limited || s->refused) return;
    if (s->epoch == 0) return;  /* epoch 0 has one packet in flight until ACCEPT (spec/protocol.md §3) */
    if (s->copies_count == PL_COPIES_MOST) return;
    uint64_t gap = s->rtt.rtt_ns_smoothed / 4;
    gap = gap < PL_COPY_GAP_NS_LEAST ? PL_COPY_GAP_NS_LEAST : gap > PL_COPY_GAP_NS_MOST ? PL_COPY_GAP_NS_MOST : gap;
    s->copies[s->copies_count++] = (struct pl_copy){e->pn, e->off, e->len, now_ns + gap};
}

/* e: the packet's entry in the ring of sent packets. */
static void record_sent(pure_link *pl, pl_sender *s, pl_sent *e, const plan *p, uint64_t pn, size_t bytes,
                        uint64_t now_ns) {
    assert(e->state != PL_SENT_FLIGHT);
    memset(e, 0, sizeof *e);
    e->pn = pn;
    e->sent_ns = now_ns;
    e->off = p->off;
    e->len = p->len;
    e->bytes = (uint32_t)bytes;
    e->state = PL_SENT_FLIGHT;
    e->has_stream = p->stream;
    e->has_offer = p->offer;
    e->has_response = p->response;
    e->response_turn = s->response_turn;
    e->trial = p->trial;
    e->is_copy = p->copy;
    if (s->bytes_in_flight == 0) s->first_sent_ns = s->delivered_ns = now_ns;  /* a new flight */
    e->delivered = s->delivered;
    e->delivered_ns = s->delivered_ns;
    e->first_sent_ns = s->first_sent_ns;
    e->tx_in_flight = s->bytes_in_flight + bytes;
    e->rate_app_limited = s->app_limited_mark != 0;
    /* App-limited: after this packet the sender has nothing more it may send. */
    e->app_limited = s->resend.count == 0 && p->off + p->len >= p->limit;
    s->offers_in_flight += p->offer;
    s->responses_in_flight += p->response;
    s->bytes_in_flight += bytes;
    s->eliciting_in_flight++;
    s->last_send_ns = now_ns;
    s->stats.packets_sent++;
    s->stats.bytes_sent += bytes;
    if (p->copy) {
        copy_pop(s);
        s->stats.packets_copied++;
    } else if (p->len > 0) {
        int resent = p->off < s->next_off;
        if (resent) {
            s->stats.packets_retransmitted++;
            pl_rangeset_remove(&s->resend, p->off, p->off + p->len);
        } else {
            s->next_off = p->off + p->len;
            /* Records whose first byte left in this packet count as sent. */
            while (s->records_started < s->records_end &&
                   s->record_start[s->records_started % s->records_most] < s->next_off) {
                s->records_started++;
                s->stats.records_sent++;
            }
        }
    }
    if (p->trial) {
        s->trial_pn = pn;
        s->trial_due = 0;
    }
    if (p->size_probe) {
        e->size_probe = 1;
        pl_pmtu_probe_sent(s, pn);
    }
    s->epoch_packets++;
    pl_sender_epoch_due(pl, s, now_ns);  /* the packet count, not only the clock */
    copy_later(pl, s, e, now_ns);
    pl_cc_on_sent(&s->cc, bytes, now_ns);
    pl_pacer_on_sent(&s->pacer, bytes, now_ns);
}

/* The window is full for the next packet, but for a size probe in flight?  A probe takes no
 * room from the packets after it (spec/protocol.md §5.1): it stays in bytes_in_flight for
 * everything else (the controller, the rate samples, the loss timer) and is taken out only
 * here, where the window would hold a packet back. */
static int window_full(const pl_sender *s, uint64_t cwnd) {
    uint64_t in_flight = s->bytes_in_flight;
    const pl_sent *e = &s->sent[s->pmtu.sent_pn % s->sent_most];
    if (s->pmtu.sent_pn != PL_NONE && e->pn == s->pmtu.sent_pn && e->state == PL_SENT_FLIGHT) in_flight -= e->bytes;
    return in_flight + PURE_LINK_DATAGRAM_MOST > cwnd;
}

/* May a datagram go now, and with what?  1: yes, *p planned; 0: held by pacing (its wait
 * becomes a deadline); -1: not now (no slot, nothing to send, window full). */
static int ready(pl_sender *s, const pl_sent *slot, uint64_t now_ns, int probe, unsigned pn_len, plan *p) {
    if (probe) pl_sender_free_slot(s, now_ns);  /* a probe always finds a slot */
    if (slot->state == PL_SENT_FLIGHT) return -1;  /* the next number's slot holds a packet in flight */
    if (!plan_next(s, now_ns, pn_len, probe, p)) {
        /* Nothing to send with room in the window: rate samples until this flight is
         * delivered say less than the path can do. */
        if (!s->refused && s->bytes_in_flight < pl_cc_cwnd(&s->cc)) {
            uint64_t mark = s->delivered + s->bytes_in_flight;
            s->app_limited_mark = mark > 0 ? mark : 1;
        }
        return -1;
    }
    if (probe || p->trial) return 1;  /* probes and trials go past window and pacing */
    uint64_t cwnd = pl_cc_cwnd(&s->cc);
    if (s->bytes_in_flight + PURE_LINK_DATAGRAM_MOST > cwnd && window_full(s, cwnd)) return -1;
    uint64_t at_ns = pl_pacer_next_send_ns(&s->pacer, now_ns, PURE_LINK_DATAGRAM_MOST);
    if (at_ns > now_ns) {
        s->pace_wait_ns = at_ns;
        return 0;
    }
    return 1;
}

int pl_sender_pull(pure_link *pl, pl_sender *s, uint8_t *buf, size_t cap, pure_link_addr *to, uint64_t now_ns) {
    pl_sender_run_move(pl, s, now_ns);
    if (s->pn_next >= PL_RUN_PACKETS_MOST) return 0;  /* spec: a run sends fewer than 2^32 packets */
    int probe = s->probes_due > 0;
    s->pace_wait_ns = PL_NONE;
    uint64_t pn = s->pn_next;
    /* A probe carries the whole low 32 bits: the receiver may have restarted (from its
     * memo, or after LOST) and then decodes packet numbers with nothing to go by. */
    unsigned pn_len = probe ? PL_PN_LEN_MOST : pl_pn_len_for(pn, s->pn_anchor);
    pl_sent *e = &s->sent[pn % s->sent_most];
    plan p;
    int go = ready(s, e, now_ns, probe, pn_len, &p);
    if (go <= 0) {
        if (go < 0) copies_drop_due(s, now_ns);  /* only pacing keeps a due copy waiting */
        return 0;
    }

    pl_header h;
    memset(&h, 0, sizeof h);
    h.reply = 0;
    h.pn_len = (uint8_t)pn_len;
    h.epoch_field = s->epoch_field;
    h.key_id = pl->static_key_id;
    h.run = s->run;
    h.pn_truncated = pl_pn_truncate(pn, pn_len);
    size_t at = pl_header_encode(buf, cap, &h);
    assert(at == header_bytes(pn_len));
    size_t head = at;
    encode_frames(s, &p, buf, &at, cap - PURE_LINK_TAG_BYTES);
    encode_records(pl, s, &p, buf, &at);
    assert(at + PURE_LINK_TAG_BYTES <= PURE_LINK_DATAGRAM_MOST);

    pl_epoch_keys *k = PL_SENDER_KEYS(s);
    uint8_t nonce[12];
    pl_nonce(nonce, k->data_iv, pn);
    pl->crypto->aead_seal(pl_keys_ctx(pl, k)->data, nonce, buf, head, buf + head, at - head, buf + head);
    size_t bytes = at + PURE_LINK_TAG_BYTES;
    s->pn_next++;
    if (probe) s->probes_due--;
    if (s->epoch > 0) s->live_proof_due = 0;  /* any packet of epoch >= 1 is the proof */
    record_sent(pl, s, e, &p, pn, bytes, now_ns);
    memcpy(e->tag, buf + at, PL_LOST_TAG_BYTES);  /* what a LOST must echo */
    pl_sender_arm_loss_timer(s, now_ns);
    *to = s->wiring.receiver_addr;
    return (int)bytes;
}

/* ---- Timers ---- */

static void on_loss_timer(pure_link *pl, pl_sender *s, uint64_t now_ns) {
    if (s->loss_time_ns != PL_NONE && s->loss_time_ns <= now_ns) {
        pl_sender_detect_losses(pl, s, now_ns);
    } else if (s->eliciting_in_flight > 0 && !s->refused) {
        /* PTO: two probes that may exceed the window; they carry the oldest unacknowledged
         * bytes again if there are any (plan picks lost ranges first), else a PING.  The
         * second goes PL_PROBE_GAP_NS after the first, unless an answer came by then: sent
         * together, the two drew one reply (one ACK for both, one LOST per 5 ms), and when
         * that reply was lost the next chance was a PTO doubled through an outage
         * (spec/protocol.md §5). */
        s->pto_count++;
        s->probes_due = 1;
        s->timers[PL_ST_PROBE] = now_ns + PL_PROBE_GAP_NS;
        pl_sender_requeue_oldest(s);
    } else if (s->eliciting_in_flight > 0) {
        pl_sender_flight_lost(s, now_ns, 1);
    } else if (!s->refused && s->acked_end > s->stored_off) {
        /* Everything acknowledged, not everything stored, no reply since the PTO: a PING
         * (or bytes, if any may go) asks for STORED again (spec/protocol.md §4.2). */
        s->stored_asks++;
        s->probes_due = 1;
    }
    pl_sender_arm_loss_timer(s, now_ns);
}

void pl_sender_tick(pure_link *pl, pl_sender *s, uint64_t now_ns) {
    if (s->timers[PL_ST_LOSS] <= now_ns) on_loss_timer(pl, s, now_ns);
    if (s->timers[PL_ST_REFUSE] <= now_ns) {
        s->timers[PL_ST_REFUSE] = PL_NONE;
        if (s->refused) s->trial_due = 1;
    }
    if (s->timers[PL_ST_PROBE] <= now_ns) {
        s->timers[PL_ST_PROBE] = PL_NONE;
        /* An answer since the first probe reset pto_count: no second one is needed. */
        if (s->pto_count > 0 && s->eliciting_in_flight > 0 && !s->refused) {
            s->probes_due++;
            pl_sender_requeue_oldest(s);
        }
    }
    if (s->timers[PL_ST_OLD_EPOCH] <= now_ns) {
        s->timers[PL_ST_OLD_EPOCH] = PL_NONE;
        pl_keys_wipe(pl, &s->keys[s->key_cur ^ 1]);  /* E(n-1) goes with its keys */
    }
    if (!s->refused && s->acked_end > s->stored_off &&
        now_ns >= s->stored_progress_ns + PL_RESEND_UNSTORED_NS) {
        /* Seed rule: records heard as received but not stored within 1 s are resent.  The
         * last record heard of is spared while bytes above the stored mark, new or resent,
         * are still being acknowledged: a long record on a slow path is not sent again from
         * its start every second (it would never get through, nor would its resend after an
         * outage: 16 MiB at 20 Mbit/s take 7 s); once its bytes stop arriving it is. */
        uint64_t hi = s->acked_end, k = pl_sender_record_at(s, hi - 1);
        if (now_ns < s->acked_progress_ns + PL_RESEND_UNSTORED_NS) hi = s->record_start[k % s->records_most];
        pl_sender_resend_heard(s, hi);
        s->stored_progress_ns = now_ns;
    }
    pl_sender_epoch_due(pl, s, now_ns);
    pl_sender_check_closed(pl, s);
}
