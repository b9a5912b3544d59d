/* keys.c: the key schedule of spec/crypto.md — key id, epoch chain, packet keys, nonces.
 *
 * Every input that tells two keys apart goes into the derivation: who sends, who receives,
 * which run (and, for replies, which reply run), which epoch.  That is what makes every
 * (key, nonce) pair unique even though packet numbers start at 0 in every run. */
#include <assert.h>
#include <string.h>

#include <mbedtls/platform_util.h>

#include "crypto.h"

#define PL_FNV32_OFFSET_BASIS 0x811c9dc5u
#define PL_FNV32_PRIME        0x01000193u

/* IKM of E(n), n >= 1: DH(n) || offer_pub || accept_pub || u32 n. */
#define PL_EPOCH_IKM_BYTES (PL_HASH_BYTES + 2u * PURE_LINK_KEY_BYTES + 4u)
/* Info of a data key: label || sender_pub || receiver_pub || u64 run || u32 epoch. */
#define PL_DATA_INFO_BYTES (PL_LABEL_LEN(PL_LABEL_DATA) + 2u * PURE_LINK_KEY_BYTES + 8u + 4u)
/* Info of a reply key: label || receiver_pub || sender_pub || u64 run || u64 reply_run || u32 epoch. */
#define PL_REPLY_INFO_BYTES (PL_LABEL_LEN(PL_LABEL_REPLY) + 2u * PURE_LINK_KEY_BYTES + 8u + 8u + 4u)

_Static_assert(PL_EPOCH_IKM_BYTES == 100u, "spec/crypto.md: the epoch IKM is 100 bytes");
_Static_assert(PL_DATA_INFO_BYTES == 92u, "spec/crypto.md: the data info is 92 bytes");
_Static_assert(PL_REPLY_INFO_BYTES == 101u, "spec/crypto.md: the reply info is 101 bytes");

static uint8_t *put_bytes(uint8_t *p, const void *src, size_t n) {
    memcpy(p, src, n);
    return p + n;
}

static uint8_t *put_u32(uint8_t *p, uint32_t v) {
    for (int i = 3; i >= 0; i--) *p++ = (uint8_t)(v >> (8 * i));
    return p;
}

static uint8_t *put_u64(uint8_t *p, uint64_t v) {
    for (int i = 7; i >= 0; i--) *p++ = (uint8_t)(v >> (8 * i));
    return p;
}

uint32_t pl_key_id(const uint8_t pub[32]) {
    assert(pub != NULL);
    uint32_t h = PL_FNV32_OFFSET_BASIS;
    for (size_t i = 0; i < PURE_LINK_KEY_BYTES; i++) {
        h ^= pub[i];
        h *= PL_FNV32_PRIME;
    }
    return h;
}

void pl_epoch0_secret(uint8_t e0[32], const uint8_t static_shared[32]) {
    assert(e0 != NULL && static_shared != NULL);
    /* The caller refuses an all-zero S (pl_x25519 returned -1); reaching here with one is a bug. */
    assert(!pl_is_zero(static_shared, PL_HASH_BYTES));
    pl_hkdf_extract(e0, (const uint8_t *)PL_LABEL_SALT0, PL_LABEL_LEN(PL_LABEL_SALT0), static_shared,
                    PL_HASH_BYTES);
}

void pl_epoch_next(uint8_t next[32], const uint8_t prev[32], const uint8_t dh[32], const uint8_t offer_pub[32],
                   const uint8_t accept_pub[32], uint32_t epoch) {
    assert(next != NULL && prev != NULL && dh != NULL && offer_pub != NULL && accept_pub != NULL);
    assert(epoch >= 1);
    assert(!pl_is_zero(dh, PL_HASH_BYTES));
    uint8_t ikm[PL_EPOCH_IKM_BYTES];
    uint8_t *p = ikm;
    p = put_bytes(p, dh, PL_HASH_BYTES);
    p = put_bytes(p, offer_pub, PURE_LINK_KEY_BYTES);
    p = put_bytes(p, accept_pub, PURE_LINK_KEY_BYTES);
    p = put_u32(p, epoch);
    assert(p == ikm + sizeof ikm);
    /* HMAC keys its hashes with the salt before it reads the IKM, so next may alias prev. */
    pl_hkdf_extract(next, prev, PL_SECRET_BYTES, ikm, sizeof ikm);
    mbedtls_platform_zeroize(ikm, sizeof ikm);
}

static void packet_key_expand(pl_packet_key *k, const uint8_t e[32], const uint8_t *info, size_t info_len) {
    uint8_t okm[PL_PACKET_KEY_BYTES];
    pl_hkdf_expand(okm, sizeof okm, e, info, info_len);
    memcpy(k->key, okm, sizeof k->key);
    memcpy(k->iv, okm + sizeof k->key, sizeof k->iv);
    mbedtls_platform_zeroize(okm, sizeof okm);
}

void pl_data_key(pl_packet_key *k, const uint8_t e[32], const uint8_t sender_pub[32],
                 const uint8_t receiver_pub[32], uint64_t run, uint32_t epoch) {
    assert(k != NULL && e != NULL && sender_pub != NULL && receiver_pub != NULL);
    uint8_t info[PL_DATA_INFO_BYTES];
    uint8_t *p = info;
    p = put_bytes(p, PL_LABEL_DATA, PL_LABEL_LEN(PL_LABEL_DATA));
    p = put_bytes(p, sender_pub, PURE_LINK_KEY_BYTES);
    p = put_bytes(p, receiver_pub, PURE_LINK_KEY_BYTES);
    p = put_u64(p, run);
    p = put_u32(p, epoch);
    assert(p == info + sizeof info);
    packet_key_expand(k, e, info, sizeof info);
}

void pl_reply_key(pl_packet_key *k, const uint8_t e[32], const uint8_t receiver_pub[32],
                  const uint8_t sender_pub[32], uint64_t run, uint64_t reply_run, uint32_t epoch) {
    assert(k != NULL && e != NULL && sender_pub != NULL && receiver_pub != NULL);
    uint8_t info[PL_REPLY_INFO_BYTES];
    uint8_t *p = info;
    p = put_bytes(p, PL_LABEL_REPLY, PL_LABEL_LEN(PL_LABEL_REPLY));
    p = put_bytes(p, receiver_pub, PURE_LINK_KEY_BYTES);
    p = put_bytes(p, sender_pub, PURE_LINK_KEY_BYTES);
    p = put_u64(p, run);
    p = put_u64(p, reply_run);
    p = put_u32(p, epoch);
    assert(p == info + sizeof info);
    packet_key_expand(k, e, info, sizeof info);
}

void pl_nonce(uint8_t nonce[12], const uint8_t iv[12], uint64_t pn) {
    assert(nonce != NULL && iv != NULL);
    /* Per packet on both sides: the first 4 bytes are the iv's, the last 8 take the pn
     * (big-endian), XORed as one 64-bit word. */
    /* Written out, the eight stores merge into one (a loop of byte stores that the word
     * load then reads could not be forwarded, and stalled every packet). */
    const uint8_t be[8] = {(uint8_t)(pn >> 56), (uint8_t)(pn >> 48), (uint8_t)(pn >> 40), (uint8_t)(pn >> 32),
                           (uint8_t)(pn >> 24), (uint8_t)(pn >> 16), (uint8_t)(pn >> 8),  (uint8_t)pn};
    uint64_t x, y;
    memcpy(&x, iv + 4, 8);
    memcpy(&y, be, 8);
    x ^= y;
    memcpy(nonce, iv, 4);
    memcpy(nonce + 4, &x, 8);
}
