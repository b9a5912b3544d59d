/* map.c: open-addressing tables of 64-bit keys to 32-bit values in the caller's memory (the
 * receive pool's blocks, the wired peers by key id, the run slots by peer and run), and the
 * keyed hash that turns a key a remote chose into one it cannot aim at a crowded slot.
 * A service below both halves (it calls nothing). */
#include "internal.h"

static uint64_t rotl(uint64_t x, unsigned b) { return (x << b) | (x >> (64 - b)); }

static inline void sip_round(uint64_t v[4]) {
    v[0] += v[1], v[1] = rotl(v[1], 13), v[1] ^= v[0], v[0] = rotl(v[0], 32);
    v[2] += v[3], v[3] = rotl(v[3], 16), v[3] ^= v[2];
    v[0] += v[3], v[3] = rotl(v[3], 21), v[3] ^= v[0];
    v[2] += v[1], v[1] = rotl(v[1], 17), v[1] ^= v[2], v[2] = rotl(v[2], 32);
}

static inline void sip_absorb(uint64_t v[4], uint64_t m, unsigned rounds) {
    v[3] ^= m;
    for (unsigned i = 0; i < rounds; i++) sip_round(v);
    v[0] ^= m;
}

/* SipHash-c-d of `words` 64-bit words read as 8 * words little-endian bytes; inline, so
 * that the index keys' fixed rounds unroll. */
static inline uint64_t siphash(const uint64_t key[2], const uint64_t *words, size_t count, unsigned c_rounds,
                               unsigned d_rounds) {
    assert(key != NULL && (words != NULL || count == 0) && count < 32);  /* length fits its byte */
    uint64_t v[4] = {key[0] ^ UINT64_C(0x736f6d6570736575), key[1] ^ UINT64_C(0x646f72616e646f6d),
                     key[0] ^ UINT64_C(0x6c7967656e657261), key[1] ^ UINT64_C(0x7465646279746573)};
    for (size_t i = 0; i < count; i++) sip_absorb(v, words[i], c_rounds);
    sip_absorb(v, (uint64_t)(8 * count) << 56, c_rounds);
    v[2] ^= 0xff;
    for (unsigned i = 0; i < d_rounds; i++) sip_round(v);
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}

uint64_t pl_siphash(const uint64_t key[2], const uint64_t *words, size_t count, unsigned c_rounds,
                    unsigned d_rounds) {
    return siphash(key, words, count, c_rounds, d_rounds);
}

/* A table key from one or two words a remote may choose: SipHash-1-3 under the endpoint's
 * secret map key, never 0 (0 marks an empty slot).  Two inputs meet on one key by chance
 * alone.  (Each count its own call, so that the rounds unroll.) */
uint64_t pl_map_key_of(const pure_link *pl, const uint64_t *words, size_t count) {
    assert(count == 1 || count == 2);
    uint64_t k = count == 1 ? siphash(pl->map_secret, words, 1, 1, 3) : siphash(pl->map_secret, words, 2, 1, 3);
    return k != 0 ? k : 1;
}

size_t pl_map_slots(uint32_t entries_most, uint32_t slots_per_entry) {
    size_t n = 1;
    while (n < (size_t)slots_per_entry * entries_most) n *= 2;
    return n;
}

void pl_map_init(pl_map *m, uint64_t *keys, uint32_t *values, size_t slots, uint32_t probes_most) {
    assert(slots > 0 && (slots & (slots - 1)) == 0 && slots <= UINT32_MAX && probes_most >= 1);
    m->keys = keys, m->values = values;
    m->mask = (uint32_t)(slots - 1);
    m->probes_most = probes_most < slots ? probes_most : (uint32_t)slots;
    memset(keys, 0, slots * sizeof keys[0]);
}

static uint32_t home(const pl_map *m, uint64_t key) { return pl_map_home(m, key); }

/* The first value under key at or after *at probes from its home (the map's values under
 * one key, in turn); PL_MAP_NONE when there is no more.  Start with *at = 0. */
uint32_t pl_map_next(const pl_map *m, uint64_t key, uint32_t *at) {
    assert(key != 0);
    uint32_t h = home(m, key);
    for (; *at < m->probes_most; (*at)++) {
        uint32_t i = (h + *at) & m->mask;
        if (m->keys[i] == 0) break;
        if (m->keys[i] == key) {
            (*at)++;
            return m->values[i];
        }
    }
    return PL_MAP_NONE;
}

/* Is there an empty slot within the probe bound of key's home? */
int pl_map_room(const pl_map *m, uint64_t key) {
    uint32_t h = home(m, key);
    for (uint32_t k = 0; k < m->probes_most; k++)
        if (m->keys[(h + k) & m->mask] == 0) return 1;
    return 0;
}

/* Puts key -> value in the first empty slot within the bound; the caller checked the room
 * (pl_map_room) or sized the map so that it never runs out. */
void pl_map_put(pl_map *m, uint64_t key, uint32_t value) {
    assert(key != 0 && value != PL_MAP_NONE);
    uint32_t h = home(m, key);
    for (uint32_t k = 0; k < m->probes_most; k++) {
        uint32_t i = (h + k) & m->mask;
        if (m->keys[i] == 0) {
            m->keys[i] = key, m->values[i] = value;
            return;
        }
    }
    assert(0 && "map put without room");
}

/* Removes key -> value, if there, and shifts later entries of its probe chain back (no
 * tombstones).  An entry only ever moves nearer its home, so the probe bound still holds. */
void pl_map_del(pl_map *m, uint64_t key, uint32_t value) {
    uint32_t h = home(m, key), i = UINT32_MAX;
    for (uint32_t k = 0; k < m->probes_most && i == UINT32_MAX; k++) {
        uint32_t at = (h + k) & m->mask;
        if (m->keys[at] == 0) return;
        if (m->keys[at] == key && m->values[at] == value) i = at;
    }
    if (i == UINT32_MAX) return;
    m->keys[i] = 0;
    for (uint32_t j = (i + 1) & m->mask; m->keys[j] != 0; j = (j + 1) & m->mask) {
        uint32_t hj = home(m, m->keys[j]);
        /* Entry j may move to the hole at i if its home is not in (i, j] (cyclically). */
        int stays = i <= j ? (hj > i && hj <= j) : (hj > i || hj <= j);
        if (stays) continue;
        m->keys[i] = m->keys[j], m->values[i] = m->values[j];
        m->keys[j] = 0;
        i = j;
    }
}
