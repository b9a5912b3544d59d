/* memo.c: the receiver's persistent epoch secrets (spec/memo.md).
 *
 * A restarted receiver that loads its memo opens its peers' current epochs at once: no
 * LOST, no X25519.  The core never touches a file: it hands the host slot images with
 * their offsets (MEMO_WRITE events) and waits to hear that each is durable.
 *
 * Every slot is stored twice.  An update writes the copy that does not hold the newest
 * state, waits until it is durable, then overwrites the other copy with the same bytes —
 * so a torn or lost write always leaves one whole copy of either the old or the new state,
 * and once an update is complete no copy holds the superseded secret.  Each copy carries a
 * sequence number and a keyed checksum over the file's generation, so the copy with the
 * highest valid sequence wins and slots of an older file never pass as current. */
#include "internal.h"

static const uint8_t memo_tag[4] = {'P', 'L', 'M', '3'};

static void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (56 - 8 * i)); }
static void put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (24 - 8 * i)); }
static uint64_t get64(const uint8_t *p) { uint64_t v = 0; for (int i = 0; i < 8; i++) v = v << 8 | p[i]; return v; }
static uint32_t get32(const uint8_t *p) { uint32_t v = 0; for (int i = 0; i < 4; i++) v = v << 8 | p[i]; return v; }

size_t pl_memo_slots(const pure_link_config *c) { return PURE_LINK_MEMO_SIDE_SLOTS + c->peers_most; }

/* The memo's bytes for a resolved config: a header and two copies of each slot. */
size_t pl_memo_bytes(const pure_link_config *c) { return PL_MEMO_HEADER_BYTES + pl_memo_slots(c) * 2 * PL_MEMO_SLOT_BYTES; }

static uint64_t slot_offset(size_t slot, unsigned copy) {
    return PL_MEMO_HEADER_BYTES + ((uint64_t)slot * 2 + copy) * PL_MEMO_SLOT_BYTES;
}

static void checksum(const pure_link *pl, const uint8_t *bytes, size_t len, uint8_t out[16]) {
    uint8_t full[32];
    pl_hmac_sha256(full, pl->memo_generation, sizeof pl->memo_generation, bytes, len);
    memcpy(out, full, 16);
}

/* ---- Slot images ---- */

static void slot_image(const pure_link *pl, uint8_t img[PL_MEMO_SLOT_BYTES], uint64_t seq, const pl_run *r) {
    memset(img, 0, PL_MEMO_SLOT_BYTES);
    put64(img + PL_MEMO_SEQ, seq);
    if (r != NULL) {
        const pl_epoch_keys *k = &r->keys[r->epoch_newest % PL_EPOCH_KEYS];
        img[PL_MEMO_STATE] = 1;
        put32(img + PL_MEMO_EPOCH, r->epoch_newest);
        memcpy(img + PL_MEMO_PEER, pl->peers[r->peer].public_key, 32);
        put64(img + PL_MEMO_RUN, r->run);
        memcpy(img + PL_MEMO_SECRET, k->secret, 32);
        memcpy(img + PL_MEMO_OFFER, r->offer_public, 32);
        memcpy(img + PL_MEMO_ACCEPT, r->accept_public, 32);
        put64(img + PL_MEMO_PN, r->largest_pn == PL_NONE ? 0 : r->largest_pn);
    }
    checksum(pl, img, PL_MEMO_SUM, img + PL_MEMO_SUM);
}

static int slot_valid(const pure_link *pl, const uint8_t *img) {
    uint8_t sum[16];
    checksum(pl, img, PL_MEMO_SUM, sum);
    return get64(img + PL_MEMO_SEQ) != 0 && memcmp(sum, img + PL_MEMO_SUM, 16) == 0;
}

/* ---- Writes ---- */

static pl_memo_write *write_new(pure_link *pl) {
    for (uint32_t i = 0; i < PL_MEMO_WRITES_MOST; i++)
        if (!pl->memo_writes[i].busy) {
            pl_memo_write *w = &pl->memo_writes[i];
            memset(w, 0, sizeof *w);
            w->busy = 1;
            w->token = pl->memo_token_next++;
            pl->memo_unemitted++;
            return w;
        }
    return NULL;
}

static uint32_t writes_free(const pure_link *pl) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < PL_MEMO_WRITES_MOST; i++) n += !pl->memo_writes[i].busy;
    return n;
}

/* Can a new epoch be recorded now?  (Header, the slot, and an erased side slot.) */
int pl_memo_room(const pure_link *pl) {
    return !pl->config.memo_enabled || writes_free(pl) >= PL_MEMO_WRITES_PER_EPOCH;
}

/* Queues the two-step update of one slot (nothing if the queue is full: returns 0). */
static uint64_t slot_write(pure_link *pl, size_t slot, const pl_run *r) {
    pl_memo_write *w = write_new(pl);
    if (w == NULL) return 0;
    pl_memo_mirror *m = &pl->memo_mirror[slot];
    m->seq++;
    m->full = r != NULL;
    m->peer = r ? r->peer : -1;
    m->run = r ? r->run : 0;
    w->slot = (uint32_t)slot;
    w->run_at = r ? (uint32_t)r->handle + 1 : 0;  /* r's ACCEPT waits on it: memo_written goes to r */
    w->copy = (uint8_t)(m->seq % 2);
    w->step = 1;
    slot_image(pl, w->image, m->seq, r);
    w->offset = slot_offset(slot, w->copy);
    w->len = PL_MEMO_SLOT_BYTES;
    return w->token;
}

static void header_write(pure_link *pl) {
    pl_memo_write *w = write_new(pl);
    assert(w != NULL);  /* the header goes first, into an empty queue */
    memset(w->image, 0, PL_MEMO_HEADER_BYTES);
    memcpy(w->image, memo_tag, 4);
    put32(w->image + 4, PL_MEMO_LAYOUT);
    put32(w->image + 8, pl->config.peers_most);
    put32(w->image + 12, PURE_LINK_MEMO_SIDE_SLOTS);
    put32(w->image + 16, PL_MEMO_SLOT_BYTES);
    memcpy(w->image + 24, pl->memo_generation, 8);
    checksum(pl, w->image, PL_MEMO_HEADER_BYTES - 16, w->image + PL_MEMO_HEADER_BYTES - 16);
    w->offset = 0;
    w->len = PL_MEMO_HEADER_BYTES;
    w->step = 2;  /* a single write */
    pl->memo_header_due = 0;
}

static uint64_t hash_run(const uint8_t key[32], uint64_t run) {
    uint64_t h = 0xcbf29ce484222325ull;  /* FNV-1a 64 over the peer key and the run */
    for (int i = 0; i < 32; i++) h = (h ^ key[i]) * 0x100000001b3ull;
    for (int i = 0; i < 8; i++) h = (h ^ (uint8_t)(run >> (56 - 8 * i))) * 0x100000001b3ull;
    return h;
}

static int run_alive(const pure_link *pl, int peer, uint64_t run) {
    const pl_run *r = pl_run_find(pl, peer, run);
    return r != NULL && pl->now_ns - r->last_heard_ns < pl->config.idle_ns;
}

/* A run reached a new epoch: record it, in the peer slot if that is free or holds a run
 * that is no longer sending, else in one of its two side slots (the one that has it, an
 * empty one, the first).  The ACCEPT waits for the first write to be durable. */
void pl_memo_on_epoch(pure_link *pl, pl_run *r) {
    if (!pl->config.memo_enabled) return;
    assert(writes_free(pl) >= PL_MEMO_WRITES_PER_EPOCH);  /* on_offer checked pl_memo_room() */
    if (pl->memo_header_due) header_write(pl);
    const pl_peer *p = &pl->peers[r->peer];
    size_t peer_slot = PURE_LINK_MEMO_SIDE_SLOTS + (size_t)r->peer;
    pl_memo_mirror *pm = &pl->memo_mirror[peer_slot];
    uint64_t h = hash_run(p->public_key, r->run);
    size_t c[2] = {(size_t)(h % PURE_LINK_MEMO_SIDE_SLOTS), (size_t)((h >> 32) % PURE_LINK_MEMO_SIDE_SLOTS)};
    int side_has[2];
    for (int i = 0; i < 2; i++)
        side_has[i] = pl->memo_mirror[c[i]].full && pl->memo_mirror[c[i]].peer == r->peer &&
                      pl->memo_mirror[c[i]].run == r->run;
    if (!pm->full || (pm->peer == r->peer && pm->run == r->run) || !run_alive(pl, pm->peer, pm->run)) {
        r->memo_token = slot_write(pl, peer_slot, r);
        for (int i = 0; i < 2; i++)
            if (side_has[i]) slot_write(pl, c[i], NULL);  /* moved to the peer slot: erase */
        return;
    }
    size_t pick = c[0];
    if (side_has[0]) pick = c[0];
    else if (side_has[1]) pick = c[1];
    else if (!pl->memo_mirror[c[0]].full) pick = c[0];
    else if (!pl->memo_mirror[c[1]].full) pick = c[1];
    r->memo_token = slot_write(pl, pick, r);
}

/* The first packet of epoch n >= 1 this build of the run opened (counted in largest_pn).
 * An epoch >= 1 key exists only after our own ACCEPT, so the run is proven live, and its
 * sender, having heard the ACCEPT of n, seals nothing more in an older epoch: every packet
 * of those is numbered below this one.  The memo records this number with E(n)
 * (spec/memo.md), so that after a restart a replay of them — the OFFER of n repeated in
 * epoch n - 1 after the packet the memo was first written at, by a PTO probe or while the
 * ACCEPT was on its way — is older than the restored epoch and cannot take the run back. */
void pl_memo_epoch_proven(pure_link *pl, pl_run *r, uint32_t epoch, uint64_t now_ns) {
    assert(epoch >= 1 && epoch == r->epoch_newest && epoch >= r->epoch);
    r->fresh = 1;
    if (epoch > r->epoch) {
        r->epoch = epoch;
        r->accept_pending = 0;
        pl_run_timer_set(pl, r, PL_RT_OLD_EPOCH, now_ns + PL_OLD_EPOCH_NS);
    }
    if (pl_memo_room(pl)) pl_memo_on_epoch(pl, r);  /* no room: the number of the OFFER stays */
}

void pl_memo_emit(pure_link *pl) {
    if (pl->memo_unemitted == 0) return;
    for (uint32_t i = 0; i < PL_MEMO_WRITES_MOST; i++) {
        pl_memo_write *w = &pl->memo_writes[i];
        if (!w->busy || w->emitted) continue;
        if (pl_events_room(pl) == 0) { pl->deliver_blocked = 1; return; }
        pure_link_event *ev = pl_event_push(pl, PURE_LINK_EVENT_MEMO_WRITE);
        ev->offset = w->offset;
        ev->token = w->token;
        ev->data = w->image;
        ev->len = w->len;
        w->emitted = 1;
        pl->memo_unemitted--;
    }
}

int pure_link_memo_written(pure_link *pl, uint64_t token, uint64_t now_ns) {
    assert(pl != NULL && pl->magic == PL_MAGIC);
    assert(now_ns >= pl->now_ns);
    pl->now_ns = now_ns;
    for (uint32_t i = 0; i < PL_MEMO_WRITES_MOST; i++) {
        pl_memo_write *w = &pl->memo_writes[i];
        if (!w->busy || !w->emitted || w->token != token) continue;
        /* Only the run the write is for may wait on it, not every slot: its ACCEPT may go. */
        pl_run *r = w->run_at != 0 ? &pl->runs[w->run_at - 1] : NULL;
        if (r != NULL && r->in_use && r->memo_token == token) {
            r->memo_token = 0;
            pl_run_ready(pl, r);
        }
        if (w->step == 1) {
            /* Now the other copy, so no copy keeps the superseded secret. */
            w->step = 2;
            w->copy ^= 1;
            w->offset = slot_offset(w->slot, w->copy);
            w->token = pl->memo_token_next++;
            w->emitted = 0;
            pl->memo_unemitted++;
        } else {
            w->busy = 0;
        }
        pl_memo_emit(pl);
        return 0;
    }
    return PURE_LINK_ERR_NOT_FOUND;
}

/* ---- Load ---- */

static pl_peer *peer_by_key(pure_link *pl, const uint8_t key[32]) {
    pl_peer *p = pl_peer_find(pl, pl_key_id(key));  /* one wired key per key id */
    return p != NULL && memcmp(p->public_key, key, 32) == 0 ? p : NULL;
}

static void restore_slot(pure_link *pl, size_t slot, const uint8_t *img) {
    pl_memo_mirror *m = &pl->memo_mirror[slot];
    m->seq = get64(img + PL_MEMO_SEQ);
    if (img[PL_MEMO_STATE] != 1) return;
    pl_peer *p = peer_by_key(pl, img + PL_MEMO_PEER);
    if (p == NULL) return;  /* no longer wired: its secret is not used */
    int peer = (int)(p - pl->peers);
    uint64_t run = get64(img + PL_MEMO_RUN);
    uint32_t epoch = get32(img + PL_MEMO_EPOCH);
    if (epoch == 0 || !pl_run_index_room(pl, peer, run)) return;
    pl_run *r = pl_run_free_take(pl);  /* a slot an unwiring let go, else one never used */
    if (r == NULL && (r = pl_run_fresh(pl)) == NULL) return;
    pure_link_addr none = {.len = 1};
    pl_run_reset(pl, r, peer, run, &none, pl->now_ns);
    pl_epoch_keys_set(pl, &r->keys[epoch % PL_EPOCH_KEYS], epoch, img + PL_MEMO_SECRET, p->public_key,
                      pl->static_public, run, r->reply_run, 1);
    r->epoch = r->epoch_newest = r->restored_epoch = epoch;
    /* Packet numbers decode against the one recorded with the epoch (so 4-byte numbers
     * decode at any age of the run), and nothing older than its window is accepted. */
    r->largest_pn = get64(img + PL_MEMO_PN);
    /* Not proven live until one of its packets opens: the sender may never have heard the
     * ACCEPT of this epoch (the receiver died between the memo write and the ACCEPT), and
     * then what it cannot open draws LOST (spec/memo.md "Loading"). */
    r->fresh = 0;
    r->accept_epoch = epoch;
    memcpy(r->offer_public, img + PL_MEMO_OFFER, 32);
    memcpy(r->accept_public, img + PL_MEMO_ACCEPT, 32);
    m->full = 1;
    m->peer = peer;
    m->run = run;
    pl->stats.memo_runs_restored++;
}

int pure_link_memo_load(pure_link *pl, const uint8_t *memo, size_t len, uint64_t now_ns) {
    assert(pl != NULL && pl->magic == PL_MAGIC && (memo != NULL || len == 0));
    assert(now_ns >= pl->now_ns);
    pl->now_ns = now_ns;
    if (!pl->config.memo_enabled) return PURE_LINK_ERR_INVALID;
    if (len != pl_memo_bytes(&pl->config) || memcmp(memo, memo_tag, 4) != 0 ||
        get32(memo + 4) != PL_MEMO_LAYOUT || get32(memo + 8) != pl->config.peers_most ||
        get32(memo + 12) != PURE_LINK_MEMO_SIDE_SLOTS || get32(memo + 16) != PL_MEMO_SLOT_BYTES)
        return PURE_LINK_ERR_MEMO;
    uint8_t generation[8];
    memcpy(generation, pl->memo_generation, 8);
    memcpy(pl->memo_generation, memo + 24, 8);
    uint8_t sum[16];
    checksum(pl, memo, PL_MEMO_HEADER_BYTES - 16, sum);
    if (memcmp(sum, memo + PL_MEMO_HEADER_BYTES - 16, 16) != 0) {
        memcpy(pl->memo_generation, generation, 8);
        return PURE_LINK_ERR_MEMO;
    }
    pl->memo_header_due = 0;
    for (size_t slot = 0; slot < pl_memo_slots(&pl->config); slot++) {
        const uint8_t *a = memo + slot_offset(slot, 0), *b = memo + slot_offset(slot, 1);
        int va = slot_valid(pl, a), vb = slot_valid(pl, b);
        const uint8_t *best = NULL;
        if (va && vb) best = get64(a + PL_MEMO_SEQ) >= get64(b + PL_MEMO_SEQ) ? a : b;
        else if (va) best = a;
        else if (vb) best = b;
        if (best != NULL) restore_slot(pl, slot, best);
    }
    return 0;
}
