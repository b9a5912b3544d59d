/* hkdf.c: HMAC-SHA256 (RFC 2104) and HKDF-SHA256 (RFC 5869) over mbedTLS's SHA-256.
 *
 * Why not mbedtls_hkdf or mbedtls_md_hmac: they go through mbedtls_md_setup, which
 * allocates the hash context on the heap.  mbedtls_sha256_context is plain data, so the
 * HMAC below keeps both of its contexts on the stack. */
#include <assert.h>
#include <string.h>

#include <mbedtls/platform_util.h>
#include <mbedtls/sha256.h>
#include <mbedtls/version.h>

#include "crypto.h"

/* mbedTLS 3 dropped the _ret suffix (and made the plain names return int). */
#if MBEDTLS_VERSION_MAJOR >= 3
#define PL_SHA256_STARTS(c) mbedtls_sha256_starts((c), 0)
#define PL_SHA256_UPDATE(c, p, n) mbedtls_sha256_update((c), (p), (n))
#define PL_SHA256_FINISH(c, out) mbedtls_sha256_finish((c), (out))
#else
#define PL_SHA256_STARTS(c) mbedtls_sha256_starts_ret((c), 0)
#define PL_SHA256_UPDATE(c, p, n) mbedtls_sha256_update_ret((c), (p), (n))
#define PL_SHA256_FINISH(c, out) mbedtls_sha256_finish_ret((c), (out))
#endif

#define PL_HMAC_IPAD 0x36u
#define PL_HMAC_OPAD 0x5cu

/* A keyed HMAC: the inner and outer hashes after absorbing the padded key. */
typedef struct pl_hmac {
    mbedtls_sha256_context inner;
    mbedtls_sha256_context outer;
} pl_hmac;

static void sha256_checked(int rc) {
    /* mbedTLS's software SHA-256 fails only for bad arguments. */
    assert(rc == 0);
    (void)rc;
}

static void hmac_start(pl_hmac *h, const uint8_t *key, size_t key_len) {
    uint8_t block[PL_HMAC_BLOCK_BYTES];
    memset(block, 0, sizeof block);
    if (key_len > PL_HMAC_BLOCK_BYTES) {
        /* RFC 2104: a key longer than a block is hashed first. */
        mbedtls_sha256_context c;
        mbedtls_sha256_init(&c);
        sha256_checked(PL_SHA256_STARTS(&c));
        sha256_checked(PL_SHA256_UPDATE(&c, key, key_len));
        sha256_checked(PL_SHA256_FINISH(&c, block));
        mbedtls_sha256_free(&c);
    } else if (key_len > 0) {
        memcpy(block, key, key_len);
    }
    for (size_t i = 0; i < sizeof block; i++) block[i] ^= PL_HMAC_IPAD;
    mbedtls_sha256_init(&h->inner);
    sha256_checked(PL_SHA256_STARTS(&h->inner));
    sha256_checked(PL_SHA256_UPDATE(&h->inner, block, sizeof block));
    for (size_t i = 0; i < sizeof block; i++) block[i] ^= PL_HMAC_IPAD ^ PL_HMAC_OPAD;
    mbedtls_sha256_init(&h->outer);
    sha256_checked(PL_SHA256_STARTS(&h->outer));
    sha256_checked(PL_SHA256_UPDATE(&h->outer, block, sizeof block));
    mbedtls_platform_zeroize(block, sizeof block);
}

static void hmac_update(pl_hmac *h, const uint8_t *msg, size_t len) {
    if (len > 0) sha256_checked(PL_SHA256_UPDATE(&h->inner, msg, len));
}

/* Finishes into out and wipes h. */
static void hmac_finish(pl_hmac *h, uint8_t out[PL_HASH_BYTES]) {
    uint8_t inner_hash[PL_HASH_BYTES];
    sha256_checked(PL_SHA256_FINISH(&h->inner, inner_hash));
    sha256_checked(PL_SHA256_UPDATE(&h->outer, inner_hash, sizeof inner_hash));
    sha256_checked(PL_SHA256_FINISH(&h->outer, out));
    mbedtls_sha256_free(&h->inner);
    mbedtls_sha256_free(&h->outer);
    mbedtls_platform_zeroize(inner_hash, sizeof inner_hash);
}

/* A copy of a keyed HMAC, so expand keys it once for all of its blocks. */
static void hmac_clone(pl_hmac *dst, const pl_hmac *src) {
    mbedtls_sha256_init(&dst->inner);
    mbedtls_sha256_init(&dst->outer);
    mbedtls_sha256_clone(&dst->inner, &src->inner);
    mbedtls_sha256_clone(&dst->outer, &src->outer);
}

void pl_hmac_sha256(uint8_t out[32], const uint8_t *key, size_t key_len, const uint8_t *msg, size_t msg_len) {
    assert(out != NULL);
    assert(key != NULL || key_len == 0);
    assert(msg != NULL || msg_len == 0);
    pl_hmac h;
    hmac_start(&h, key, key_len);
    hmac_update(&h, msg, msg_len);
    hmac_finish(&h, out);
}

void pl_hkdf_extract(uint8_t prk[32], const uint8_t *salt, size_t salt_len, const uint8_t *ikm, size_t ikm_len) {
    /* RFC 5869 2.2: PRK = HMAC(salt, IKM).  An absent salt is HashLen zero bytes, which
     * HMAC pads to the same block as an empty key: no special case needed. */
    pl_hmac_sha256(prk, salt, salt_len, ikm, ikm_len);
}

void pl_hkdf_expand(uint8_t *out, size_t out_len, const uint8_t prk[32], const uint8_t *info, size_t info_len) {
    assert(out != NULL || out_len == 0);
    assert(out_len <= PL_HKDF_EXPAND_MOST);
    assert(prk != NULL);
    assert(info != NULL || info_len == 0);
    pl_hmac keyed;
    hmac_start(&keyed, prk, PL_HASH_BYTES);
    uint8_t t[PL_HASH_BYTES];
    size_t done = 0;
    /* RFC 5869 2.3: T(i) = HMAC(PRK, T(i-1) || info || i), T(0) empty, i = 1..255. */
    for (unsigned i = 1; done < out_len; i++) {
        assert(i <= 255u);
        const uint8_t counter = (uint8_t)i;
        pl_hmac h;
        hmac_clone(&h, &keyed);
        if (i > 1) hmac_update(&h, t, sizeof t);
        hmac_update(&h, info, info_len);
        hmac_update(&h, &counter, 1);
        hmac_finish(&h, t);
        const size_t take = out_len - done < sizeof t ? out_len - done : sizeof t;
        memcpy(out + done, t, take);
        done += take;
    }
    assert(done == out_len);
    mbedtls_sha256_free(&keyed.inner);
    mbedtls_sha256_free(&keyed.outer);
    mbedtls_platform_zeroize(t, sizeof t);
}
