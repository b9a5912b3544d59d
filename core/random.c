/* random.c: the core's only randomness, a service of the halves: ChaCha20 keyed by the
 * caller's seed, one block per draw (no clock, no system source). */
#include "internal.h"

#include <sodium.h>

void pl_random(pure_link *pl, void *out, size_t len) {
    uint8_t nonce[12] = {0};
    uint8_t block[64];
    uint8_t *o = out;
    while (len > 0) {
        uint64_t n = pl->rng_counter++;
        for (int i = 0; i < 8; i++) nonce[4 + i] = (uint8_t)(n >> (8 * i));
        crypto_stream_chacha20_ietf(block, sizeof block, nonce, pl->rng_key);
        size_t take = len < sizeof block ? len : sizeof block;
        memcpy(o, block, take);
        o += take;
        len -= take;
    }
    sodium_memzero(block, sizeof block);
}

/* Bytes (up to one block) from the seed under a nonce of their own `domain` (>= 1; the draws
 * above use domain 0), which leaves the draws as they would be without them. */
void pl_random_aside(const pure_link *pl, uint8_t domain, void *out, size_t len) {
    assert(domain >= 1 && len <= 64);
    uint8_t nonce[12] = {domain};
    uint8_t block[64];
    crypto_stream_chacha20_ietf(block, sizeof block, nonce, pl->rng_key);
    memcpy(out, block, len);
    sodium_memzero(block, sizeof block);
}
