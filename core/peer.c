/* peer.c: a wired peer — its E(0), the sources it may send as — and a run slot made fresh
 * for one of its runs (a packet that builds the run, or a memo slot restored). */
#include "internal.h"

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

void pl_run_reset(pure_link *pl, pl_run *r, int peer, uint64_t run, const pure_link_addr *from, uint64_t now_ns) {
    pl_run_mem_release(pl, r);  /* the slot's earlier run gives its blocks back */
    pl_run_have_clear(pl, r);
    for (uint32_t i = 0; i < PL_EPOCH_KEYS; i++) pl_keys_wipe(pl, &r->keys[i]);
    int handle = r->handle;
    memset(r, 0, sizeof *r);
    r->handle = handle;
    if ((uint32_t)handle + 1 > pl->runs_used) pl->runs_used = (uint32_t)handle + 1;
    r->in_use = 1;
    r->peer = peer;
    r->run = run;
    r->last_heard_ns = now_ns;
    r->largest_pn = PL_NONE;
    pl_random(pl, &r->reply_run, sizeof r->reply_run);  /* per build: see run_build */
    r->addr = *from;
    r->challenge_pending = 1;
    pl_random(pl, r->challenge_token, 16);
    pl_rangeset_init(&r->acks, r->ack_store, PL_ACK_RECV_RANGES_MOST);
    pl_run_have_clear(pl, r);
    for (int t = 0; t < PL_RT_COUNT; t++) r->timers[t] = PL_NONE;
}
