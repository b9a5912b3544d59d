/* sim_rng.c: xoshiro256** streams seeded by splitmix64; see sim_rng.h. */
#include "sim_rng.h"

#include <assert.h>
#include <string.h>

uint64_t sim_splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t sim_fnv1a64(uint64_t hash, const void *bytes, size_t len) {
    const uint8_t *p = bytes;
    for (size_t i = 0; i < len; i++) {
        hash ^= p[i];
        hash *= SIM_FNV64_PRIME;
    }
    return hash;
}

void sim_rng_seed(sim_rng *rng, uint64_t seed) {
    uint64_t state = seed;
    for (int i = 0; i < 4; i++) rng->s[i] = sim_splitmix64(&state);
    /* splitmix64 is a bijection of a counter, so four outputs are never all zero,
     * the one state xoshiro cannot leave. */
    assert((rng->s[0] | rng->s[1] | rng->s[2] | rng->s[3]) != 0);
}

void sim_rng_derive(sim_rng *rng, uint64_t run_seed, const char *label) {
    assert(label != NULL);
    /* Mix the seed first so that seed and label cannot cancel each other by XOR. */
    uint64_t state = run_seed;
    uint64_t mixed = sim_splitmix64(&state);
    uint64_t h = sim_fnv1a64(SIM_FNV64_BASIS, label, strlen(label));
    sim_rng_seed(rng, mixed ^ h);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t sim_rng_next(sim_rng *rng) {
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t sim_rng_below(sim_rng *rng, uint64_t bound) {
    assert(bound > 0);
    /* Rejection on the top of the range keeps every value equally likely. */
    uint64_t limit = UINT64_MAX - (UINT64_MAX % bound);
    for (;;) {
        uint64_t x = sim_rng_next(rng);
        if (x < limit) return x % bound;
    }
}

uint64_t sim_rng_upto(sim_rng *rng, uint64_t most) {
    if (most == UINT64_MAX) return sim_rng_next(rng);
    return sim_rng_below(rng, most + 1);
}

int sim_rng_chance(sim_rng *rng, uint32_t ppb) {
    assert(ppb <= SIM_PPB_ONE);
    if (ppb == 0) return 0; /* no draw: a zero probability leaves the stream untouched */
    return sim_rng_below(rng, SIM_PPB_ONE) < ppb;
}

void sim_rng_fill(sim_rng *rng, uint8_t *out, size_t len) {
    while (len > 0) {
        uint64_t x = sim_rng_next(rng);
        size_t n = len < 8 ? len : 8;
        for (size_t i = 0; i < n; i++) out[i] = (uint8_t)(x >> (8 * i));
        out += n;
        len -= n;
    }
}
