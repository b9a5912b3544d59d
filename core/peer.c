/* peer.c: a wired peer — its E(0), the sources it may send as — and a run slot made fresh
 * for one of its runs (a packet that builds the run, or a memo slot restored); the indexes
 * that find a peer by its key id and a run slot by (peer, run) for every datagram. */
#include "internal.h"

/* ---- The indexes (map.c).  Their keys are keyed hashes of what the datagram names (the key
 * id is FNV-1a of a public key, which anyone can grind; the run id is the sender's choice),
 * so no remote can aim lookups or wirings at one crowded stretch of a table.  A key may
 * meet another by chance: every hit is checked against the peer or slot it names. ---- */

static uint64_t peer_key(const pure_link *pl, uint32_t key_id) {
    uint64_t w = key_id;
    return pl_map_key_of(pl, &w, 1);
}

static uint64_t run_key(const pure_link *pl, int peer, uint64_t run) {
    uint64_t w[2] = {run, (uint64_t)(uint32_t)peer};
    return pl_map_key_of(pl, w, 2);
}

/* The wired peer of a key id (at most one: wiring refuses a second), or NULL.  The last one
 * found stays the answer for its key id until a peer is unwired (pl_peer_index_del). */
pl_peer *pl_peer_find(pure_link *pl, uint32_t key_id) {
    if (pl->peer_last != 0 && pl->peers[pl->peer_last - 1].key_id == key_id) return &pl->peers[pl->peer_last - 1];
    uint64_t key = peer_key(pl, key_id);
    uint32_t at = 0;
    for (uint32_t i; (i = pl_map_next(&pl->peer_index, key, &at)) != PL_MAP_NONE;)
        if (pl->peers[i].in_use && pl->peers[i].key_id == key_id) {
            pl->peer_last = i + 1;
            return &pl->peers[i];
        }
    return NULL;
}

/* Indexes a peer being wired: 0, or -1 when its key has no room within the probe bound. */
int pl_peer_index_add(pure_link *pl, pl_peer *p) {
    uint64_t key = peer_key(pl, p->key_id);
    if (!pl_map_room(&pl->peer_index, key)) return -1;
    pl_map_put(&pl->peer_index, key, (uint32_t)(p - pl->peers));
    return 0;
}

/* The slot of (peer, run): of several (a memo may restore one run twice), the lowest. */
pl_run *pl_run_find(const pure_link *pl, int peer, uint64_t run) {
    uint64_t key = run_key(pl, peer, run);
    uint32_t at = 0, found = PL_MAP_NONE;
    for (uint32_t i; (i = pl_map_next(&pl->run_index, key, &at)) != PL_MAP_NONE;) {
        const pl_run *r = &pl->runs[i];
        if (r->in_use && r->peer == peer && r->run == run && i < found) found = i;
    }
    return found == PL_MAP_NONE ? NULL : &pl->runs[found];
}

/* pl_run_find for a datagram: the slot found last stays the answer for its (peer, run)
 * until a slot is reset (pl_run_reset forgets it), the only change to the index. */
pl_run *pl_run_find_last(pure_link *pl, int peer, uint64_t run) {
    if (pl->run_last != 0) {
        pl_run *r = &pl->runs[pl->run_last - 1];
        if (r->in_use && r->peer == peer && r->run == run) return r;
    }
    pl_run *r = pl_run_find(pl, peer, run);
    pl->run_last = r != NULL ? (uint32_t)r->handle + 1 : 0;
    return r;
}

/* May a slot take (peer, run)?  Only if the index has room for it within the bound. */
int pl_run_index_room(const pure_link *pl, int peer, uint64_t run) {
    return pl_map_room(&pl->run_index, run_key(pl, peer, run));
}

/* E(0) of a peer, computed when first needed: a receiver restored from its memo opens
 * its peers' current epochs without any X25519 at all.  NULL if the static X25519 output
 * is all zero (a low-order key): such a peer can never use epoch 0. */
const uint8_t *pl_peer_e0(pure_link *pl, pl_peer *p) {
    if (!p->e0_ready) {
        uint8_t shared[32];
        pl->stats.x25519_ops++;
        int bad = pl->crypto->x25519(shared, pl->static_secret, p->public_key);
        if (!bad) pl_epoch0_secret(p->e0, shared);
        memset(shared, 0, sizeof shared);
        if (bad) return NULL;
        p->e0_ready = 1;
    }
    return p->e0;
}

/* Is `source` among the peer's allowed sources ('\n'-separated, "*" for any)? */
int pl_peer_allows(const pl_peer *p, const char *source) {
    size_t n = strlen(source);
    for (const char *at = p->sources; *at;) {
        const char *end = strchr(at, '\n');
        size_t len = end ? (size_t)(end - at) : strlen(at);
        if ((len == 1 && at[0] == '*') || (len == n && memcmp(at, source, n) == 0)) return 1;
        if (!end) break;
        at = end + 1;
    }
    return 0;
}

/* The first run slot never used, cleared (init leaves slots beyond runs_used as the caller's
 * memory had them: a receiver of 40,000 slots touches only the pages of those it uses), or
 * NULL when every slot has been used. */
pl_run *pl_run_fresh(pure_link *pl) {
    if (pl->runs_used == pl->config.runs_most) return NULL;
    pl_run *r = &pl->runs[pl->runs_used];
    memset(r, 0, sizeof *r);
    r->handle = (int)pl->runs_used++;
    return r;
}

/* Ends the slot's run, if any: its blocks go back to the pool, its timers off the heap, its
 * keys are wiped and the index forgets it; the slot is left free (in_use 0). */
void pl_run_clear(pure_link *pl, pl_run *r) {
    pl_run_mem_release(pl, r);
    for (int t = 0; t < PL_RT_COUNT; t++) pl_run_timer_set(pl, r, (pl_run_timer)t, PL_NONE);  /* off the heap */
    if (r->index_key != 0) pl_map_del(&pl->run_index, r->index_key, (uint32_t)r->handle);
    pl->run_last = 0;
    pl_run_have_clear(pl, r);
    for (uint32_t i = 0; i < PL_EPOCH_KEYS; i++) pl_keys_wipe(pl, &r->keys[i]);
    int handle = r->handle;
    if (r->in_use) {  /* the slot's earlier run lets it go */
        pl_run_unheard(pl, r);
        if (--pl->peers[r->peer].runs == 0) pl->peers_running--;
    }
    uint32_t list_next[PL_RUN_LISTS];
    uint8_t listed[PL_RUN_LISTS];
    memcpy(list_next, r->list_next, sizeof list_next), memcpy(listed, r->listed, sizeof listed);
    memset(r, 0, sizeof *r);
    r->handle = handle;
    memcpy(r->list_next, list_next, sizeof list_next), memcpy(r->listed, listed, sizeof listed);  /* the lists keep their links */
}

/* Takes a peer out of the key-id index: its datagrams then find no peer. */
void pl_peer_index_del(pure_link *pl, pl_peer *p) {
    pl_map_del(&pl->peer_index, peer_key(pl, p->key_id), (uint32_t)(p - pl->peers));
    pl->peer_last = 0;
}

/* The caller checked the index's room for (peer, run) (pl_run_index_room). */
void pl_run_reset(pure_link *pl, pl_run *r, int peer, uint64_t run, const pure_link_addr *from, uint64_t now_ns) {
    pl_run_clear(pl, r);  /* the slot's earlier run gives its blocks back */
    int handle = r->handle;
    if ((uint32_t)handle + 1 > pl->runs_used) pl->runs_used = (uint32_t)handle + 1;
    r->in_use = 1;
    r->peer = peer;
    if (pl->peers[peer].runs++ == 0) pl->peers_running++;
    r->run = run;
    pl_run_heard(pl, r, now_ns);
    r->largest_pn = PL_NONE;
    pl_random(pl, &r->reply_run, sizeof r->reply_run);  /* per build: see run_build */
    r->addr = *from;
    r->challenge_pending = 1;
    pl_random(pl, r->challenge_token, 16);
    pl_rangeset_init(&r->acks, r->ack_store, PL_ACK_RECV_RANGES_MOST);
    pl_run_have_clear(pl, r);
    for (int t = 0; t < PL_RT_COUNT; t++) r->timers[t] = PL_NONE;
    r->deadline_ns = PL_NONE;
    r->index_key = run_key(pl, peer, run);
    pl_map_put(&pl->run_index, r->index_key, (uint32_t)handle);
}
