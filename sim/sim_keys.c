/* sim_keys.c: the nonce oracle; see sim_keys.h. */
#include "sim_keys.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define SIM_KEYS_CAPACITY_FIRST 1024u /* slots of each table at the first insert (a power of two) */

/* The wrappers' way to their oracle: a crypto table's functions take no user pointer.
 * The simulator runs one world at a time (sim_keys.h). */
static sim_keys *active;

void sim_keys_activate(sim_keys *k) { active = k; }
sim_keys *sim_keys_active(void) { return active; }

static uint64_t mix64(uint64_t x) {
    /* splitmix64's finaliser: every input bit reaches every output bit. */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The pair's fingerprint: two independent 64-bit mixes of its 28 bytes, never all zero. */
static sim_keys_pair pair_fingerprint(const uint8_t key[16], const uint8_t nonce[12]) {
    uint64_t a, b, c;
    uint32_t d;
    memcpy(&a, key, 8);
    memcpy(&b, key + 8, 8);
    memcpy(&c, nonce, 8);
    memcpy(&d, nonce + 8, 4);
    sim_keys_pair p;
    p.fp[0] = mix64(a ^ mix64(b ^ mix64(c ^ mix64(d))));
    p.fp[1] = mix64(b ^ mix64(c ^ mix64(d ^ mix64(a ^ 0x6a09e667f3bcc909ull))));
    if ((p.fp[0] | p.fp[1]) == 0) p.fp[1] = 1;
    return p;
}

/* ---- context address -> key ---- */

static sim_keys_ctx *ctx_slot(sim_keys_ctx *t, size_t cap, uintptr_t at) {
    size_t i = (size_t)mix64((uint64_t)at) & (cap - 1);
    while (t[i].at != 0 && t[i].at != at) i = (i + 1) & (cap - 1);
    return &t[i];
}

static int ctx_grow(sim_keys *k) {
    if ((k->ctx_count + 1) * 2 <= k->ctx_capacity) return 0;
    size_t cap = k->ctx_capacity ? k->ctx_capacity * 2 : SIM_KEYS_CAPACITY_FIRST;
    sim_keys_ctx *t = calloc(cap, sizeof *t);
    if (t == NULL) return -1;
    for (size_t i = 0; i < k->ctx_capacity; i++)
        if (k->ctxs[i].at != 0) *ctx_slot(t, cap, k->ctxs[i].at) = k->ctxs[i];
    free(k->ctxs);
    k->ctxs = t;
    k->ctx_capacity = cap;
    return 0;
}

static const sim_keys_ctx *ctx_find(const sim_keys *k, const void *ctx) {
    if (k->ctx_capacity == 0) return NULL;
    const sim_keys_ctx *e = ctx_slot(k->ctxs, k->ctx_capacity, (uintptr_t)ctx);
    return e->at != 0 ? e : NULL;
}

static uint32_t node_of(const sim_keys *k, const void *ctx) {
    uintptr_t at = (uintptr_t)ctx;
    for (uint32_t i = 0; i < SIM_KEYS_NODES_MOST; i++)
        if (k->node_len[i] && at >= k->node_base[i] && at - k->node_base[i] < k->node_len[i]) return i;
    return SIM_KEYS_NO_NODE;
}

/* ---- (key, nonce) pairs ---- */

static int pair_empty(const sim_keys_pair *p) { return (p->fp[0] | p->fp[1]) == 0; }

static int pair_grow(sim_keys *k) {
    if ((k->pair_count + 1) * 2 <= k->pair_capacity) return 0;
    size_t cap = k->pair_capacity ? k->pair_capacity * 2 : SIM_KEYS_CAPACITY_FIRST;
    sim_keys_pair *t = calloc(cap, sizeof *t);
    if (t == NULL) return -1;
    for (size_t i = 0; i < k->pair_capacity; i++) {
        const sim_keys_pair *p = &k->pairs[i];
        if (pair_empty(p)) continue;
        size_t j = (size_t)p->fp[0] & (cap - 1);
        while (!pair_empty(&t[j])) j = (j + 1) & (cap - 1);
        t[j] = *p;
    }
    free(k->pairs);
    k->pairs = t;
    k->pair_capacity = cap;
    return 0;
}

/* Records the pair (its table has room: pair_grow); returns 1 if it was sealed before. */
static int pair_seen(sim_keys *k, const sim_keys_pair *f) {
    size_t mask = k->pair_capacity - 1;
    size_t i = (size_t)f->fp[0] & mask;
    for (; !pair_empty(&k->pairs[i]); i = (i + 1) & mask)
        if (k->pairs[i].fp[0] == f->fp[0] && k->pairs[i].fp[1] == f->fp[1]) return 1;
    k->pairs[i] = *f;
    k->pair_count++;
    return 0;
}

/* ---- the wrapped table ---- */

static int wrap_x25519(uint8_t out[32], const uint8_t scalar[32], const uint8_t point[32]) {
    assert(active != NULL);
    return active->base->x25519(out, scalar, point);
}

static void wrap_x25519_base(uint8_t pub[32], const uint8_t secret[32]) {
    assert(active != NULL);
    active->base->x25519_base(pub, secret);
}

static void wrap_aead_init(void *ctx, const uint8_t key[16]) {
    sim_keys *k = active;
    assert(k != NULL);
    k->base->aead_init(ctx, key);
    if (ctx_grow(k) != 0) {
        k->out_of_memory = 1;
        return;
    }
    sim_keys_ctx *e = ctx_slot(k->ctxs, k->ctx_capacity, (uintptr_t)ctx);
    if (e->at == 0) k->ctx_count++;
    e->at = (uintptr_t)ctx;
    e->node = node_of(k, ctx);
    memcpy(e->key, key, 16);
}

static void wrap_aead_seal(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                           const uint8_t *in, size_t len, uint8_t *out) {
    sim_keys *k = active;
    assert(k != NULL);
    const sim_keys_ctx *e = ctx_find(k, ctx);
    sim_keys_pair f;
    int record = e != NULL && pair_grow(k) == 0;
    if (record) {
        /* The table is larger than the caches: ask for the slot now, look after sealing. */
        f = pair_fingerprint(e->key, nonce);
        __builtin_prefetch(&k->pairs[(size_t)f.fp[0] & (k->pair_capacity - 1)]);
    }
    k->base->aead_seal(ctx, nonce, aad, aad_len, in, len, out);
    k->seals++;
    if (e == NULL) {
        k->unknown_ctx++;
        return;
    }
    if (e->node != SIM_KEYS_NO_NODE) k->node_seals[e->node]++;
    if (!record) {
        k->out_of_memory = 1;
    } else if (pair_seen(k, &f)) {
        k->reuses++;
        if (e->node != SIM_KEYS_NO_NODE) k->node_reuses[e->node]++;
    }
}

static int wrap_aead_open(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                          const uint8_t *in, size_t len, uint8_t *out) {
    assert(active != NULL);
    return active->base->aead_open(ctx, nonce, aad, aad_len, in, len, out);
}

void sim_keys_init(sim_keys *k, const pure_link_crypto *base) {
    memset(k, 0, sizeof *k);
    k->base = base ? base : pure_link_crypto_default();
    k->table.name = "sim-nonce-oracle";
    k->table.x25519 = wrap_x25519;
    k->table.x25519_base = wrap_x25519_base;
    k->table.aead_init = wrap_aead_init;
    k->table.aead_seal = wrap_aead_seal;
    k->table.aead_open = wrap_aead_open;
}

void sim_keys_free(sim_keys *k) {
    if (active == k) active = NULL;
    free(k->ctxs);
    free(k->pairs);
    k->ctxs = NULL;
    k->pairs = NULL;
    k->ctx_count = k->ctx_capacity = k->pair_count = k->pair_capacity = 0;
}

void sim_keys_node_memory(sim_keys *k, uint32_t node, const void *base, size_t len) {
    assert(node < SIM_KEYS_NODES_MOST);
    k->node_base[node] = (uintptr_t)base;
    k->node_len[node] = base ? len : 0;
}
