/* gcm_portable.c: the portable GCM path — AES from mbedTLS's block function, GHASH from a
 * 4-bit table.  Used where the CPU lacks AES-NI or PCLMULQDQ; it must give the same bytes
 * as the fast path (tests/unit/test_crypto.c checks both against mbedTLS's own GCM).
 *
 * Field elements are held as two big-endian 64-bit halves, hi = block bytes 0..7, as the
 * GCM spec writes them: the most significant bit of byte 0 is the coefficient of x^0, so
 * multiplying by x is a right shift, and the bit shifted out at the bottom (x^128) comes
 * back as x^128 = x^7 + x^2 + x + 1, i.e. XOR of 0xE1 into the top byte.
 *
 * The table lookups index on secret-dependent data (as mbedTLS's own GCM does); this path
 * is the fallback, not the one this protocol's machines run. */
#include <assert.h>
#include <string.h>

#include <mbedtls/platform_util.h>

#include "gcm.h"

/* x^128 reduced: the top byte of a big-endian element, 1 + x + x^2 + x^7. */
#define PL_GHASH_R 0xE100u

/* Multiplying by x^4 shifts 4 bits out at the bottom: the coefficients of x^124..x^127.
 * Bit b of that nibble (b = 0 is x^127) becomes x^(3-b) * x^128, whose reduction is
 * R shifted right by 3-b.  This table holds the XOR of those for each nibble, as the top
 * 16 bits of the high half. */
#define PL_GHASH_REDUCE4(n) \
    ((uint16_t)((((n) & 1u) ? (PL_GHASH_R >> 3) : 0u) ^ (((n) & 2u) ? (PL_GHASH_R >> 2) : 0u) ^ \
                (((n) & 4u) ? (PL_GHASH_R >> 1) : 0u) ^ (((n) & 8u) ? PL_GHASH_R : 0u)))

static const uint16_t ghash_reduce4[PL_GCM_NIBBLES] = {
    PL_GHASH_REDUCE4(0u),  PL_GHASH_REDUCE4(1u),  PL_GHASH_REDUCE4(2u),  PL_GHASH_REDUCE4(3u),
    PL_GHASH_REDUCE4(4u),  PL_GHASH_REDUCE4(5u),  PL_GHASH_REDUCE4(6u),  PL_GHASH_REDUCE4(7u),
    PL_GHASH_REDUCE4(8u),  PL_GHASH_REDUCE4(9u),  PL_GHASH_REDUCE4(10u), PL_GHASH_REDUCE4(11u),
    PL_GHASH_REDUCE4(12u), PL_GHASH_REDUCE4(13u), PL_GHASH_REDUCE4(14u), PL_GHASH_REDUCE4(15u),
};

static uint64_t load_be64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = (v << 8) | p[i];
    return v;
}

static void store_be64(uint8_t *p, uint64_t v) {
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

static void aes_block(const pl_gcm_portable *p, const uint8_t in[16], uint8_t out[16]) {
    /* The function only reads the context; mbedTLS's prototype just lacks the const. */
    int rc = mbedtls_aes_crypt_ecb((mbedtls_aes_context *)&p->aes, MBEDTLS_AES_ENCRYPT, in, out);
    assert(rc == 0);
    (void)rc;
}

void pl_gcm_portable_init(pl_gcm_portable *p, const uint8_t key[16]) {
    assert(p != NULL && key != NULL);
    mbedtls_aes_init(&p->aes);
    int rc = mbedtls_aes_setkey_enc(&p->aes, key, 128);
    assert(rc == 0);
    (void)rc;
    uint8_t h[PL_GCM_BLOCK_BYTES] = {0};
    aes_block(p, h, h); /* H = AES_K(0^128) */
    uint64_t hi = load_be64(h), lo = load_be64(h + 8);
    mbedtls_platform_zeroize(h, sizeof h);
    /* A nibble's most significant bit is the lowest power of x: entry 8 is H itself,
     * 4 is H*x, 2 is H*x^2, 1 is H*x^3; the rest are XORs of those. */
    p->h_table_hi[0] = 0;
    p->h_table_lo[0] = 0;
    for (unsigned bit = 8; bit >= 1; bit >>= 1) {
        p->h_table_hi[bit] = hi;
        p->h_table_lo[bit] = lo;
        const uint64_t carry = lo & 1u;
        lo = (lo >> 1) | (hi << 63);
        hi = (hi >> 1) ^ ((0u - carry) & ((uint64_t)(PL_GHASH_R >> 8) << 56));
    }
    for (unsigned n = 2; n < PL_GCM_NIBBLES; n <<= 1) {
        for (unsigned j = 1; j < n; j++) {
            p->h_table_hi[n + j] = p->h_table_hi[n] ^ p->h_table_hi[j];
            p->h_table_lo[n + j] = p->h_table_lo[n] ^ p->h_table_lo[j];
        }
    }
}

/* y = y * H, Horner's rule over the 32 nibbles from the highest power of x down. */
static void ghash_mul(const pl_gcm_portable *p, uint8_t y[16]) {
    uint64_t hi = 0, lo = 0;
    for (int i = 15; i >= 0; i--) {
        const unsigned nibbles[2] = {y[i] & 0x0fu, y[i] >> 4}; /* low nibble: higher powers */
        for (int k = 0; k < 2; k++) {
            const unsigned out = (unsigned)(lo & 0x0fu);
            lo = (lo >> 4) | (hi << 60);
            hi = (hi >> 4) ^ ((uint64_t)ghash_reduce4[out] << 48);
            hi ^= p->h_table_hi[nibbles[k]];
            lo ^= p->h_table_lo[nibbles[k]];
        }
    }
    store_be64(y, hi);
    store_be64(y + 8, lo);
}

/* Absorbs data into y, the last partial block padded with zeros. */
static void ghash_update(const pl_gcm_portable *p, uint8_t y[16], const uint8_t *data, size_t len) {
    while (len > 0) {
        const size_t take = len < PL_GCM_BLOCK_BYTES ? len : PL_GCM_BLOCK_BYTES;
        for (size_t i = 0; i < take; i++) y[i] ^= data[i];
        ghash_mul(p, y);
        data += take;
        len -= take;
    }
}

/* The counter block of a 96-bit nonce: nonce || u32 counter. */
static void counter_block(uint8_t block[16], const uint8_t nonce[12], uint32_t counter) {
    memcpy(block, nonce, PURE_LINK_NONCE_BYTES);
    block[12] = (uint8_t)(counter >> 24);
    block[13] = (uint8_t)(counter >> 16);
    block[14] = (uint8_t)(counter >> 8);
    block[15] = (uint8_t)counter;
}

void pl_gcm_portable_tag(const pl_gcm_portable *p, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                         const uint8_t *in, size_t len, uint8_t tag[16]) {
    uint8_t y[PL_GCM_BLOCK_BYTES] = {0};
    ghash_update(p, y, aad, aad_len);
    ghash_update(p, y, in, len);
    uint8_t lengths[PL_GCM_BLOCK_BYTES];
    store_be64(lengths, (uint64_t)aad_len * 8u);
    store_be64(lengths + 8, (uint64_t)len * 8u);
    ghash_update(p, y, lengths, sizeof lengths);
    uint8_t j0[PL_GCM_BLOCK_BYTES];
    counter_block(j0, nonce, 1u); /* the tag is masked with the keystream block of J0 */
    aes_block(p, j0, j0);
    for (size_t i = 0; i < PL_GCM_BLOCK_BYTES; i++) tag[i] = y[i] ^ j0[i];
    mbedtls_platform_zeroize(j0, sizeof j0);
}

void pl_gcm_portable_ctr(const pl_gcm_portable *p, const uint8_t nonce[12], const uint8_t *in, size_t len,
                         uint8_t *out) {
    uint32_t counter = 2u; /* 1 is J0, kept for the tag */
    uint8_t block[PL_GCM_BLOCK_BYTES];
    while (len > 0) {
        const size_t take = len < PL_GCM_BLOCK_BYTES ? len : PL_GCM_BLOCK_BYTES;
        counter_block(block, nonce, counter++);
        aes_block(p, block, block);
        for (size_t i = 0; i < take; i++) out[i] = in[i] ^ block[i];
        in += take;
        out += take;
        len -= take;
    }
    mbedtls_platform_zeroize(block, sizeof block);
}
