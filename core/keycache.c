/* keycache.c: the expanded AEAD keys (AES round keys and GHASH tables, 1.5 KiB an epoch)
 * of every sender and run slot, in one bounded cache.
 *
 * A run slot keeps its epochs' secrets and 16-byte packet keys (spec/crypto.md) but not
 * their expansion: a receiver with tens of thousands of run slots has only some of them
 * active at once, and 4.5 KiB of contexts per slot was most of its fixed memory.  Each
 * derivation of keys gets a number (`build`); an entry holds the contexts of one build.
 * A lookup whose entry holds another build takes an entry in CLOCK order (one not used
 * since the hand last passed) and expands the two keys into it again: two AES key
 * expansions, never an HKDF or an X25519, because the packet keys stay in the slot.
 * Senders are few and seal every packet: each of a sender's two key sets has an entry of
 * its own that nothing else takes. */
#include "internal.h"

/* Entries for a config: two per sender, and for the run slots PL_KEY_CACHE_RUNS_LEAST
 * (at most two per slot: a run uses two epochs' keys at once around an epoch change) or
 * one per PL_KEY_CACHE_SLOTS_PER_ENTRY slots when that is more. */
uint32_t pl_key_cache_entries(const pure_link_config *c) {
    uint32_t runs = c->runs_most, share = runs / PL_KEY_CACHE_SLOTS_PER_ENTRY;
    uint32_t for_runs = share > PL_KEY_CACHE_RUNS_LEAST ? share : PL_KEY_CACHE_RUNS_LEAST;
    if (for_runs > 2 * runs) for_runs = 2 * runs;
    return 2 * c->senders_most + for_runs;
}

/* k's key material changed (a new epoch, or reply keys learnt): contexts of the old
 * material, wherever they are, no longer count. */
void pl_keys_derived(pure_link *pl, pl_epoch_keys *k) {
    k->build = ++pl->keys.builds;
}

static uint32_t victim(pl_key_cache *c) {
    uint32_t span = c->entries - c->pinned;
    assert(span > 0);  /* there are run entries whenever there are run slots */
    for (;;) {  /* at most two turns: the first clears every used mark */
        uint32_t e = c->pinned + c->hand;
        c->hand = c->hand + 1 == span ? 0 : c->hand + 1;
        if (!c->used[e]) return e;
        c->used[e] = 0;
    }
}

/* The contexts of k (pl_keys_ctx), expanded again into an entry if none holds them. */
const pl_key_ctx *pl_keys_ctx_fill(pure_link *pl, pl_epoch_keys *k) {
    pl_key_cache *c = &pl->keys;
    assert(k->valid && k->build != 0);
    uint32_t e = k->pin != 0 ? k->pin - 1 : k->entry;
    if (!pl_keys_holds(c, e, k)) {
        /* A run's keys take back the entry they had if it is free (a new epoch in place of
         * an old one), else the CLOCK's. */
        if (k->pin == 0 && !(e >= c->pinned && e < c->entries && c->build[e] == 0)) e = victim(c);
        assert(e < c->entries && (k->pin != 0) == (e < c->pinned));
        pl->crypto->aead_init(c->ctx[e].data, k->data_key);
        if (k->reply_valid) pl->crypto->aead_init(c->ctx[e].reply, k->reply_key);
        c->build[e] = k->build;
        k->entry = e;
        c->expansions++;
    }
    c->used[e] = 1;
    return &c->ctx[e];
}

/* Forgets k and wipes its contexts (an epoch's keys live only as long as it is used).  k
 * keeps its entry number: new keys in its place take the entry back. */
void pl_keys_wipe(pure_link *pl, pl_epoch_keys *k) {
    pl_key_cache *c = &pl->keys;
    uint32_t e = k->pin != 0 ? k->pin - 1 : k->entry, pin = k->pin, entry = k->entry;
    if (pl_keys_holds(c, e, k)) {
        memset(&c->ctx[e], 0, sizeof c->ctx[e]);
        c->build[e] = 0;
        c->used[e] = 0;
    }
    memset(k, 0, sizeof *k);
    k->pin = pin, k->entry = entry;
}
