/* sim_keys.h: the nonce oracle.  BRIEF §3 property 1: a (key, nonce) pair never seals two
 * plaintexts — across restarts of either side and both directions.  The simulator hands
 * every endpoint a crypto table that wraps the real one (pure_link_crypto_default() or
 * _null()): aead_init notes the key under the context's address, aead_seal looks the key
 * up and counts a (key, nonce) pair sealed a second time.  Nothing the endpoint sees
 * changes: the wrapped calls do exactly what the real table does.
 *
 * A crypto table's functions get no user pointer, so the wrappers find their oracle
 * through one process-wide pointer (sim_keys_activate).  One world runs at a time; the
 * world activates its oracle when it starts running.
 *
 * Contexts are found by address: the core never copies a context (the default GCM
 * context records where it was initialised and checks it), so the address names it
 * until the next aead_init there.  A context is attributed to the node whose endpoint
 * memory holds it (sim_keys_node_memory). */
#ifndef SIM_KEYS_H
#define SIM_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "pure_link.h"

#define SIM_KEYS_NODES_MOST 1024u /* nodes a seal can be attributed to (SIM_NODES_MOST) */
#define SIM_KEYS_NO_NODE UINT32_MAX

typedef struct sim_keys_ctx {    /* one context address and the key last set there */
    uintptr_t at;                /* 0: empty slot */
    uint32_t node;
    uint8_t key[PURE_LINK_AEAD_KEY_BYTES];
} sim_keys_ctx;

/* One (key, nonce) sealed so far, as a 128-bit fingerprint (0 marks an empty slot): half
 * the memory of the 28 bytes themselves.  Two different pairs among n share a fingerprint
 * with probability about n^2 / 2^129 — never, for any run this simulator can make. */
typedef struct sim_keys_pair {
    uint64_t fp[2];
} sim_keys_pair;

typedef struct sim_keys {
    pure_link_crypto table;       /* what the endpoints get */
    const pure_link_crypto *base; /* what it wraps */
    sim_keys_ctx *ctxs;           /* open addressing on the context address */
    size_t ctx_count, ctx_capacity;
    sim_keys_pair *pairs;         /* open addressing on (key, nonce) */
    size_t pair_count, pair_capacity;
    uintptr_t node_base[SIM_KEYS_NODES_MOST];
    size_t node_len[SIM_KEYS_NODES_MOST];
    /* Figures. */
    uint64_t seals;               /* aead_seal calls */
    uint64_t reuses;              /* seals of a (key, nonce) sealed before */
    uint64_t unknown_ctx;         /* seals with a context no aead_init set up (should be 0) */
    uint64_t node_seals[SIM_KEYS_NODES_MOST];
    uint64_t node_reuses[SIM_KEYS_NODES_MOST];
    int out_of_memory;            /* a pair could not be recorded */
} sim_keys;

/* Sets up an oracle wrapping base (NULL: pure_link_crypto_default()). */
void sim_keys_init(sim_keys *k, const pure_link_crypto *base);
void sim_keys_free(sim_keys *k);
/* The oracle the wrapped table reports to (NULL: none; the wrappers then only pass through). */
void sim_keys_activate(sim_keys *k);
sim_keys *sim_keys_active(void);
/* Node `node`'s endpoint lives in [base, base + len) from now on (len 0: it is gone). */
void sim_keys_node_memory(sim_keys *k, uint32_t node, const void *base, size_t len);

#endif
