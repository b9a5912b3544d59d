/* receiver.c: wiring, run slots, opening a sender's packets, and the runs' timers.  A
 * peer's E(0) and a fresh run slot are peer.c; what the frames do to a run's stream is
 * stream.c; what a run answers is answer.c. */
#include "internal.h"

static int peer_index(const pure_link *pl, const pl_peer *p) { return (int)(p - pl->peers); }

int pure_link_wire_peer(pure_link *pl, const uint8_t peer_public[32], const char *sources, uint64_t now_ns) {
    assert(pl != NULL && pl->magic == PL_MAGIC && peer_public != NULL && sources != NULL);
    assert(now_ns >= pl->now_ns);
    pl->now_ns = now_ns;
    size_t sources_len = pl_strnlen(sources, PL_SOURCES_BYTES);
    if (sources_len == 0 || sources_len >= PL_SOURCES_BYTES) return PURE_LINK_ERR_INVALID;
    uint32_t id = pl_key_id(peer_public);
    /* The key id is only a hint on the wire: two wired keys may not share one. */
    if (pl_peer_find(pl, id) != NULL) return PURE_LINK_ERR_WIRING;
    /* Peers fill [0, peers_used); an unwired one leaves a hole that the next wiring takes. */
    pl_peer *p = NULL;
    for (uint32_t i = 0; pl->peers_unwired > 0 && i < pl->peers_used && p == NULL; i++)
        if (!pl->peers[i].in_use) p = &pl->peers[i];
    if (p == NULL && pl->peers_used == pl->config.peers_most) return PURE_LINK_ERR_FULL;
    if (p == NULL) p = &pl->peers[pl->peers_used];
    memset(p, 0, sizeof *p);
    p->key_id = id;
    if (pl_peer_index_add(pl, p) != 0) return PURE_LINK_ERR_FULL;  /* no index room (map.c) */
    if (p == &pl->peers[pl->peers_used]) pl->peers_used++;
    else pl->peers_unwired--;  /* a hole an unwiring left is taken */
    p->in_use = 1;
    memcpy(p->public_key, peer_public, 32);
    memcpy(p->sources, sources, sources_len);
    return peer_index(pl, p);
}

/* ---- Run slots (spec/protocol.md §8): they belong to the receiver, not to a peer. ---- */

/* Can the host let go of run r's slot?  Not while r's STREAM_OPEN is unanswered (the
 * answer names the handle alone) or an event of r waits to be queued. */
static int slot_host_done(const pl_run *r) {
    return r->stream_state != PL_STREAM_ASKING && !r->open_event_due && !r->epoch_event_due && !r->refused_event_due;
}

/* Nothing of run r is outstanding: every record handed over is stored, no byte is held. */
static int run_settled(const pl_run *r) {
    return r->stored_record == r->deliver_record && r->mem_blocks == 0 && r->have.count == 0 &&
           r->ticket_state == PL_TICKET_NONE;
}

/* May a new run of any peer take r's slot?  Idle; or quiet and cheap to lose: never proven
 * live (a replayed first packet builds such a run), or settled.  A live sender of such a
 * run draws LOST with its next packet and builds it again (§7). */
static int slot_reusable(const pure_link *pl, const pl_run *r, uint64_t now_ns) {
    uint64_t quiet = now_ns - r->last_heard_ns;
    if (!slot_host_done(r)) return 0;
    if (quiet >= pl->config.idle_ns) return 1;
    if (!r->fresh) return quiet >= PL_RUN_UNPROVEN_NS;
    return quiet >= PL_RUN_SETTLED_NS && run_settled(r);
}

/* A peer's fair share of the slots: all of them over the peers that hold one, the asking
 * peer counted. */
static uint32_t slot_share(const pure_link *pl, const pl_peer *asking) {
    uint32_t peers = pl->peers_running + (asking->runs == 0);
    assert(peers >= 1 && peers <= pl->peers_used);
    return pl->config.runs_most / peers;
}

/* May a peer below its share take r's slot, r's peer being above it?  Only once the host
 * has nothing of r left to store, so that no call of the host meets the slot's next run. */
static int slot_preemptable(const pure_link *pl, const pl_run *r, uint32_t share) {
    return pl->peers[r->peer].runs > share && slot_host_done(r) && r->stored_record == r->deliver_record;
}

static pl_run *quieter(pl_run *a, pl_run *b) {
    return b == NULL || (a != NULL && a->last_heard_ns < b->last_heard_ns) ? a : b;
}

/* The longest quiet reusable run quiet for quiet_ns at least (of `peer` alone if capped), or
 * NULL: the heard list from its head, the longest quiet first, so the walk stops at the
 * first such run, or at the first run quiet for less. */
static pl_run *quietest_reusable(pure_link *pl, int peer, int capped, uint64_t quiet_ns, uint64_t now_ns) {
    for (uint32_t at = pl->heard_head; at != 0;) {
        pl_run *r = &pl->runs[at - 1];
        at = r->heard_next;
        assert(r->in_use == 1);
        if (now_ns - r->last_heard_ns < quiet_ns) return NULL;
        if ((!capped || r->peer == peer) && slot_reusable(pl, r, now_ns)) return r;
    }
    return NULL;
}

/* The least quiet time that can make a run's slot reusable (slot_reusable). */
static uint64_t reusable_quiet_least(const pure_link *pl) {
    uint64_t least = pl->config.idle_ns;
    if (PL_RUN_SETTLED_NS < least) least = PL_RUN_SETTLED_NS;
    if (PL_RUN_UNPROVEN_NS < least) least = PL_RUN_UNPROVEN_NS;
    return least;
}

int pure_link_unwire_peer(pure_link *pl, int peer, uint64_t now_ns) {
    assert(pl != NULL && pl->magic == PL_MAGIC);
    assert(now_ns >= pl->now_ns);
    pl->now_ns = now_ns;
    pl_stage_release(pl);
    if (peer < 0 || (uint32_t)peer >= pl->peers_used || !pl->peers[peer].in_use) return PURE_LINK_ERR_NOT_FOUND;
    for (uint32_t i = 0; i < pl->runs_used; i++)
        if (pl->runs[i].in_use && pl->runs[i].peer == peer) {
            pl_run_clear(pl, &pl->runs[i]);
            pl_run_free(pl, &pl->runs[i]);  /* the next new run takes it */
        }
    pl_peer *p = &pl->peers[peer];
    pl_peer_index_del(pl, p);
    memset(p, 0, sizeof *p);   /* E(0) with the rest: nothing of the peer's keys stays */
    pl->peers_unwired++;
    return 0;
}

int pure_link_run_info_get(const pure_link *pl, int stream, pure_link_run_info *out) {
    assert(pl != NULL && pl->magic == PL_MAGIC && out != NULL);
    assert(stream >= 0 && (uint32_t)stream < pl->config.runs_most);
    if ((uint32_t)stream >= pl->runs_used || !pl->runs[stream].in_use) return PURE_LINK_ERR_NOT_FOUND;
    const pl_run *r = &pl->runs[stream];
    *out = (pure_link_run_info){.peer = r->peer, .run = r->run, .epoch = r->epoch, .validated = r->validated,
                                .accepted = r->stream_state == PL_STREAM_ACCEPTED, .addr = r->addr,
                                .last_heard_ns = r->last_heard_ns, .records_delivered = r->deliver_record,
                                .records_stored = r->stored_record, .bytes_delivered = r->deliver_off};
    return 0;
}

/* The slot for a new run of `peer`: an idle one, else a free one, else the longest-quiet
 * reusable one, else (below its share) the longest-quiet preemptable run of a peer above
 * its share.  A peer that holds 64 slots takes only its own.  Idle and reusable runs come
 * from the head of the heard list and a free slot from the free list or the slots never
 * used, so that bringing a run up reads no other run but quiet ones; only preemption, when
 * every slot is taken and none is reusable, looks at every slot. */
static pl_run *run_slot_for(pure_link *pl, int peer, uint64_t now_ns) {
    const pl_peer *p = &pl->peers[peer];
    int capped = p->runs >= PURE_LINK_RUNS_PER_PEER;
    pl_run *r = quietest_reusable(pl, peer, capped, pl->config.idle_ns, now_ns);  /* idle */
    if (r != NULL) return r;
    if (!capped && ((r = pl_run_free_take(pl)) != NULL || (r = pl_run_fresh(pl)) != NULL)) return r;
    r = quietest_reusable(pl, peer, capped, reusable_quiet_least(pl), now_ns);
    uint32_t share = slot_share(pl, p);
    if (r != NULL || capped || p->runs >= share) return r;
    pl_run *preempt = NULL;
    for (uint32_t i = 0; i < pl->runs_used; i++)
        if (pl->runs[i].in_use && slot_preemptable(pl, &pl->runs[i], share)) preempt = quieter(&pl->runs[i], preempt);
    return preempt;
}

/* Opens a sender packet with the run's key of the header's epoch, in place. */
static int open_data(pure_link *pl, pl_run *r, const pl_header *h, size_t hl, const uint8_t *data, uint8_t *pkt,
                     size_t len, uint64_t pn, uint32_t *epoch_out) {
    uint32_t epoch = h->epoch_field == 0 ? 0 : pl_epoch_from_field(h->epoch_field, r->epoch);
    pl_epoch_keys *k = &r->keys[epoch % PL_EPOCH_KEYS];
    if (!k->valid || k->epoch != epoch) {
        if (epoch >= r->epoch) return -1;  /* no such key: counted as not authentic */
        pl->stats.dropped_stale_epoch++;   /* its keys are wiped: late or replayed */
        return -2;
    }
    uint8_t nonce[12];
    pl_nonce(nonce, k->data_iv, pn);
    if (pl->crypto->aead_open(pl_keys_ctx(pl, k)->data, nonce, data, hl, data + hl, len - hl, pkt + hl) != 0) return -1;
    *epoch_out = epoch;
    return (int)(len - hl - PURE_LINK_TAG_BYTES);
}

/* Opens an epoch-0 packet of (peer, h->run) under a key derived on the stack, in place.
 * Nothing of any run changes until it authenticates (spec/protocol.md §8): a forged first
 * packet costs one key derivation and one open, and leaves no trace. */
static int open_epoch0_trial(pure_link *pl, const pl_peer *p, const uint8_t e0[32], const pl_header *h, size_t hl,
                             const uint8_t *data, uint8_t *pkt, size_t len, uint64_t pn) {
    _Alignas(16) uint8_t ctx[PURE_LINK_AEAD_CTX_BYTES];
    uint8_t iv[12], nonce[12];
    pl_packet_key pk;
    pl_data_key(&pk, e0, p->public_key, pl->static_public, h->run, 0);
    pl_aead_key(pl, ctx, iv, &pk);
    memset(&pk, 0, sizeof pk);
    pl_nonce(nonce, iv, pn);
    if (pl->crypto->aead_open(ctx, nonce, data, hl, data + hl, len - hl, pkt + hl) != 0) return -1;
    return (int)(len - hl - PURE_LINK_TAG_BYTES);
}

/* Builds a run from an authentic epoch-0 packet: in slot r, or in the slot the seed's rule
 * gives (r == NULL).  Every build draws its own reply run, so its reply packet numbers,
 * which start at 0, never meet a nonce an earlier build of the same run used. */
static pl_run *run_build(pure_link *pl, pl_peer *p, pl_run *r, const uint8_t e0[32], uint64_t run,
                         const pure_link_addr *from, uint64_t now_ns) {
    int peer = peer_index(pl, p);
    if (r == NULL) r = run_slot_for(pl, peer, now_ns);
    if (r == NULL || !pl_run_index_room(pl, peer, run)) { pl->stats.dropped_no_slot++; return NULL; }
    pl_run_reset(pl, r, peer, run, from, now_ns);
    pl_epoch_keys_set(pl, &r->keys[0], 0, e0, p->public_key, pl->static_public, run, r->reply_run, 1);
    pl->stats.run_key_builds++;
    return r;
}

/* Opens an epoch-0 packet aside into pkt and decodes its frames: their count, or -1
 * (counted).  Then, for a packet of an unknown run, builds the run and processes it. */
static int open_epoch0_decode(pure_link *pl, const pl_peer *p, const uint8_t e0[32], const pl_header *h, size_t hl,
                              const uint8_t *data, uint8_t *pkt, size_t len, uint64_t pn, pl_frame *frames) {
    int n = open_epoch0_trial(pl, p, e0, h, hl, data, pkt, len, pn), count = 0;
    if (n < 0) { pl->stats.dropped_auth++; return -1; }
    if ((count = pl_payload_decode(frames, PL_FRAMES_MOST, pkt + hl, (size_t)n, 0)) <= 0) {
        pl->stats.dropped_malformed++;
        return -1;
    }
    return count;
}

static void on_epoch0_build(pure_link *pl, pl_peer *p, const uint8_t e0[32], const pl_header *h, size_t hl,
                            const uint8_t *data, size_t len, uint64_t pn, const pure_link_addr *from, uint64_t now_ns) {
    uint8_t pkt[PURE_LINK_DATAGRAM_MOST];
    pl_frame frames[PL_FRAMES_MOST];
    int count = open_epoch0_decode(pl, p, e0, h, hl, data, pkt, len, pn, frames);
    if (count <= 0) return;
    pl_run *r = run_build(pl, p, NULL, e0, h->run, from, now_ns);
    if (r == NULL) return;
    pl->stats.packets_opened++;
    pl_run_on_packet(pl, r, from, frames, count, len, pn, 0, now_ns);
}

/* A packet of an unknown run.  Only an epoch-0 packet can start one (later epochs need
 * secrets this receiver does not have: that is LOST's case). */
static void on_unknown_run(pure_link *pl, pl_peer *p, const pl_header *h, size_t hl, const uint8_t *data, size_t len,
                           const pure_link_addr *from, uint64_t now_ns) {
    if (h->epoch_field != 0) {
        pl->stats.dropped_no_run++;
        pl_notice_lost(pl, p, h, data, len, from, now_ns);
        return;
    }
    const uint8_t *e0 = pl_peer_e0(pl, p);
    if (e0 == NULL) { pl->stats.dropped_unknown_key++; return; }
    on_epoch0_build(pl, p, e0, h, hl, data, len, pl_pn_decode(PL_NONE, h->pn_truncated, h->pn_len), from, now_ns);
}

static const pl_frame *frame_find(const pl_frame *frames, int count, uint8_t type) {
    for (int i = 0; i < count; i++)
        if (frames[i].type == type) return &frames[i];
    return NULL;
}

/* An epoch-0 packet for a run restored from the memo that no packet has proven live: the
 * sender never heard the ACCEPT of the restored epoch, or heard our LOST, and seals in
 * epoch 0.  Only a packet newer than anything the run recorded (a replay is older) counts,
 * and only once it authenticates.  If it repeats the OFFER of the restored epoch 1, the
 * run takes epoch 0 and repeats its ACCEPT (the memo keeps the ACCEPT's key for that);
 * otherwise (a new OFFER, after LOST) it is built again in its slot. */
static void on_restored_epoch0(pure_link *pl, pl_peer *p, pl_run *r, const pl_header *h, size_t hl, const uint8_t *data,
                               size_t len, uint64_t pn, const pure_link_addr *from, uint64_t now_ns) {
    if (r->largest_pn != PL_NONE && pn <= r->largest_pn) { pl->stats.dropped_replay++; return; }
    const uint8_t *e0 = pl_peer_e0(pl, p);
    if (e0 == NULL) { pl->stats.dropped_unknown_key++; return; }
    uint8_t pkt[PURE_LINK_DATAGRAM_MOST];
    pl_frame frames[PL_FRAMES_MOST];
    int count = open_epoch0_decode(pl, p, e0, h, hl, data, pkt, len, pn, frames);
    if (count <= 0) return;
    const pl_frame *offer = frame_find(frames, count, PL_FRAME_OFFER);
    if (r->restored_epoch == 1 && offer != NULL && offer->offer.epoch == 1 &&
        memcmp(offer->offer.public_key, r->offer_public, 32) == 0) {
        /* The same run goes on: its epoch-0 keys, not a new build. */
        pl_epoch_keys_set(pl, &r->keys[0], 0, e0, p->public_key, pl->static_public, r->run, r->reply_run, 1);
        r->epoch = 0;
    } else if ((r = run_build(pl, p, r, e0, h->run, from, now_ns)) == NULL) {
        return;
    }
    pl->stats.packets_opened++;
    pl_run_on_packet(pl, r, from, frames, count, len, pn, 0, now_ns);
}

/* Should a packet that a run could not open draw LOST?  A run never proven live cannot
 * know the sender's epochs >= 1 (its slot came from a replayed first packet): yes.  A run
 * restored in epoch m >= 2: only for a packet of epoch m - 1 newer than anything it
 * recorded (the sender never heard the ACCEPT of m; older or other epochs are replays). */
static int lost_due(const pl_run *r, const pl_header *h, uint64_t pn) {
    if (r->fresh || h->epoch_field == 0) return 0;
    if (r->restored_epoch == 0) return 1;
    return r->restored_epoch >= 2 && h->epoch_field == pl_epoch_field(r->restored_epoch - 1) &&
           (r->largest_pn == PL_NONE || pn > r->largest_pn);
}

/* A sender packet whose header the endpoint decoded (h, hl bytes) and checked with its
 * length (spec/wire.md §9, steps 1 and 2). */
int pl_receiver_on_packet(pure_link *pl, const pure_link_addr *from, const pl_header *h, size_t hl,
                          const uint8_t *data, size_t len, uint64_t now_ns) {
    /* The AEAD reads the caller's datagram and writes the plaintext here, so the datagram
     * is not copied first. */
    uint8_t pkt[PURE_LINK_DATAGRAM_MOST];
    assert(!h->reply && hl > 0 && len <= sizeof pkt && len >= hl + PURE_LINK_TAG_BYTES + 1);
    pl_peer *p = pl_peer_find(pl, h->key_id);
    if (p == NULL) { pl->stats.dropped_unknown_key++; return 0; }
    pl_run *r = pl_run_find_last(pl, peer_index(pl, p), h->run);
    if (r == NULL) {
        on_unknown_run(pl, p, h, hl, data, len, from, now_ns);
        return 0;
    }
    uint64_t pn = pl_pn_decode(r->largest_pn, h->pn_truncated, h->pn_len);
    if (h->epoch_field == 0 && r->restored_epoch != 0 && !r->fresh && !(r->keys[0].valid && r->keys[0].epoch == 0)) {
        on_restored_epoch0(pl, p, r, h, hl, data, len, pn, from, now_ns);
        return 0;
    }
    uint32_t epoch = 0;
    int n = -1, count = 0;
    pl_frame frames[PL_FRAMES_MOST];
    if (!pl_replay_check(r->window, r->largest_pn, pn) ||
        (r->largest_pn != PL_NONE && pn + PL_PN_AGE_MOST <= r->largest_pn)) {
        pl->stats.dropped_replay++;
        return 0;
    }
    n = open_data(pl, r, h, hl, data, pkt, len, pn, &epoch);
    if (n < 0) {
        if (n == -1) pl->stats.dropped_auth++;
        if (lost_due(r, h, pn)) pl_notice_lost(pl, p, h, data, len, from, now_ns);
        return 0;
    }
    if ((count = pl_payload_decode(frames, PL_FRAMES_MOST, pkt + hl, (size_t)n, 0)) <= 0) {
        pl->stats.dropped_malformed++;
        return 0;
    }
    pl->stats.packets_opened++;
    pl_run_on_packet(pl, r, from, frames, count, len, pn, epoch, now_ns);
    return 0;
}

/* ---- Timers ---- */
void pl_run_tick(pure_link *pl, pl_run *r, uint64_t now_ns) {
    if (r->in_use != 1) return;
    if (r->timers[PL_RT_ACK] <= now_ns) {
        pl_run_timer_set(pl, r, PL_RT_ACK, PL_NONE);
        r->ack_pending = 1;
    }
    if (r->timers[PL_RT_HOST] <= now_ns) {
        /* The host did not answer STREAM_OPEN in time: as if the input did not exist. */
        pl_run_timer_set(pl, r, PL_RT_HOST, PL_NONE);
        if (r->stream_state == PL_STREAM_ASKING) {
            r->stream_state = PL_STREAM_REFUSED;
            r->refused_reason = 1;
            r->refused_notice_pending = 1;
            r->ack_pending = 1;
        }
    }
    if (r->timers[PL_RT_OLD_EPOCH] <= now_ns) {
        /* An epoch's secret lives only until the next one has taken over. */
        pl_run_timer_set(pl, r, PL_RT_OLD_EPOCH, PL_NONE);
        for (uint32_t i = 0; i < PL_EPOCH_KEYS; i++)
            if (r->keys[i].valid && r->keys[i].epoch < r->epoch) pl_keys_wipe(pl, &r->keys[i]);
    }
    if (r->timers[PL_RT_STOPPED] <= now_ns) {
        pl_run_timer_set(pl, r, PL_RT_STOPPED, PL_NONE);
        pl_run_mem_stopped(pl, r, now_ns);
    }
    pl_receiver_deliver(pl, r);
    pl_run_emit(pl, r);
}
