/* gcm_clmul.c: the fast GCM path — AES-NI for the block cipher, PCLMULQDQ for GHASH.
 *
 * The core is compiled without -maes, so every function here carries a target attribute
 * and gcm.c calls in only after pl_gcm_fast_supported() said yes.
 *
 * GHASH representation.  A block is loaded and byte-reversed, so the 128-bit integer's
 * bit 127 is GCM's x^0 coefficient and bit 0 its x^127 ("reflected").  The carry-less
 * product of two reflected elements is the reflected product shifted by one bit, i.e. it
 * stands for the product times x.  Storing H^k pre-multiplied by x^-1 cancels that, so no
 * shift is needed per multiplication.  In reflected form x^-1 is a left shift by one, the
 * bit leaving at the top coming back as x^-1 = x^127 + x^6 + x + 1, the constant
 * 0xC2000000000000000000000000000001.
 *
 * Reduction of the 256-bit product: its low 128 bits hold x^128..x^255.  Folding them
 * in two 64-bit steps, each a carry-less multiply by 0xC200000000000000 (the upper half
 * of the reflected modulus), leaves the reduced element in the high 128 bits.
 *
 * Throughput: 8 blocks per step — 8 AES blocks in flight, 8 GHASH products summed
 * before one reduction (Karatsuba: 3 multiplies per block, the hi ^ lo of each H power
 * precomputed). */
#include <assert.h>
#include <string.h>

#include "gcm.h"

#define PL_GCM_LANES 8u /* blocks per step */
_Static_assert(PL_GCM_LANES == PL_GCM_FAST_POWERS, "one H power per lane");

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#define PL_CLMUL __attribute__((target("aes,pclmul,sse4.1")))

/* An unreduced 256-bit product in Karatsuba parts. */
typedef struct wide {
    __m128i lo, mid, hi;
} wide;

PL_CLMUL static inline __m128i byte_reverse(__m128i x) {
    return _mm_shuffle_epi8(x, _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

PL_CLMUL static inline __m128i load_block(const uint8_t *p) {
    return byte_reverse(_mm_loadu_si128((const __m128i *)(const void *)p));
}

/* w += x * h, with hk = (h.hi ^ h.lo) in both halves. */
PL_CLMUL static inline void wide_add_product(wide *w, __m128i x, __m128i h, __m128i hk) {
    w->lo = _mm_xor_si128(w->lo, _mm_clmulepi64_si128(x, h, 0x00));
    w->hi = _mm_xor_si128(w->hi, _mm_clmulepi64_si128(x, h, 0x11));
    const __m128i xk = _mm_xor_si128(x, _mm_shuffle_epi32(x, 0x4e));
    w->mid = _mm_xor_si128(w->mid, _mm_clmulepi64_si128(xk, hk, 0x00));
}

PL_CLMUL static inline __m128i wide_reduce(wide w) {
    const __m128i mid = _mm_xor_si128(w.mid, _mm_xor_si128(w.lo, w.hi));
    __m128i lo = _mm_xor_si128(w.lo, _mm_slli_si128(mid, 8));
    const __m128i hi = _mm_xor_si128(w.hi, _mm_srli_si128(mid, 8));
    const __m128i fold = _mm_set_epi64x(0, (long long)0xC200000000000000ull);
    lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), _mm_clmulepi64_si128(lo, fold, 0x00));
    lo = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), _mm_clmulepi64_si128(lo, fold, 0x00));
    return _mm_xor_si128(hi, lo);
}

PL_CLMUL static inline __m128i karatsuba_key(__m128i h) {
    return _mm_xor_si128(h, _mm_shuffle_epi32(h, 0x4e));
}

PL_CLMUL static inline __m128i h_power(const pl_gcm_fast *f, size_t i) {
    return _mm_load_si128((const __m128i *)(const void *)f->h_powers[i]);
}

PL_CLMUL static inline __m128i h_karatsuba(const pl_gcm_fast *f, size_t i) {
    return _mm_load_si128((const __m128i *)(const void *)f->h_karatsuba[i]);
}

/* y = (y ^ b[0]) * H^n ^ b[1] * H^(n-1) ^ ... ^ b[n-1] * H, n = 1..8, one reduction. */
PL_CLMUL static inline __m128i ghash_fold(const pl_gcm_fast *f, __m128i y, const __m128i *b, size_t n) {
    assert(n >= 1 && n <= PL_GCM_LANES);
    wide w = {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128()};
    wide_add_product(&w, _mm_xor_si128(y, b[0]), h_power(f, n - 1), h_karatsuba(f, n - 1));
    for (size_t i = 1; i < n; i++) wide_add_product(&w, b[i], h_power(f, n - 1 - i), h_karatsuba(f, n - 1 - i));
    return wide_reduce(w);
}

/* Absorbs len bytes (byte order as on the wire), the last partial block zero-padded. */
PL_CLMUL static __m128i ghash_bytes(const pl_gcm_fast *f, __m128i y, const uint8_t *data, size_t len) {
    __m128i b[PL_GCM_LANES];
    while (len >= PL_GCM_LANES * PL_GCM_BLOCK_BYTES) {
#pragma GCC unroll 8
        for (size_t i = 0; i < PL_GCM_LANES; i++) b[i] = load_block(data + i * PL_GCM_BLOCK_BYTES);
        y = ghash_fold(f, y, b, PL_GCM_LANES);
        data += PL_GCM_LANES * PL_GCM_BLOCK_BYTES;
        len -= PL_GCM_LANES * PL_GCM_BLOCK_BYTES;
    }
    if (len == 0) return y;
    size_t n = 0;
    for (; len >= PL_GCM_BLOCK_BYTES; n++, data += PL_GCM_BLOCK_BYTES, len -= PL_GCM_BLOCK_BYTES)
        b[n] = load_block(data);
    if (len > 0) {
        uint8_t last[PL_GCM_BLOCK_BYTES] = {0};
        memcpy(last, data, len);
        b[n++] = load_block(last);
    }
    return ghash_fold(f, y, b, n);
}

/* The closing GHASH block: the bit lengths of aad and text (reflected, they are plain
 * 64-bit integers in the two halves). */
PL_CLMUL static inline __m128i ghash_lengths(const pl_gcm_fast *f, __m128i y, size_t aad_len, size_t len) {
    const __m128i b = _mm_set_epi64x((long long)((uint64_t)aad_len * 8u), (long long)((uint64_t)len * 8u));
    return ghash_fold(f, y, &b, 1);
}

typedef struct round_keys {
    __m128i k[PL_AES128_ROUNDS + 1u];
} round_keys;

PL_CLMUL static inline void load_round_keys(const pl_gcm_fast *f, round_keys *rk) {
    for (size_t i = 0; i <= PL_AES128_ROUNDS; i++)
        rk->k[i] = _mm_load_si128((const __m128i *)(const void *)f->round_keys[i]);
}

PL_CLMUL static inline __m128i aes_block(const round_keys *rk, __m128i b) {
    b = _mm_xor_si128(b, rk->k[0]);
    for (size_t r = 1; r < PL_AES128_ROUNDS; r++) b = _mm_aesenc_si128(b, rk->k[r]);
    return _mm_aesenclast_si128(b, rk->k[PL_AES128_ROUNDS]);
}

/* The keystream of counters ctr .. ctr+7 (nonce || u32 counter, big-endian). */
PL_CLMUL static inline void aes_ctr8(const round_keys *rk, __m128i base, uint32_t ctr, __m128i ks[PL_GCM_LANES]) {
#pragma GCC unroll 8
    for (size_t i = 0; i < PL_GCM_LANES; i++)
        ks[i] = _mm_xor_si128(_mm_insert_epi32(base, (int)__builtin_bswap32(ctr + (uint32_t)i), 3), rk->k[0]);
    for (size_t r = 1; r < PL_AES128_ROUNDS; r++) {
#pragma GCC unroll 8
        for (size_t i = 0; i < PL_GCM_LANES; i++) ks[i] = _mm_aesenc_si128(ks[i], rk->k[r]);
    }
#pragma GCC unroll 8
    for (size_t i = 0; i < PL_GCM_LANES; i++) ks[i] = _mm_aesenclast_si128(ks[i], rk->k[PL_AES128_ROUNDS]);
}

PL_CLMUL static inline __m128i nonce_base(const uint8_t nonce[12]) {
    uint8_t b[PL_GCM_BLOCK_BYTES] = {0};
    memcpy(b, nonce, PURE_LINK_NONCE_BYTES);
    return _mm_loadu_si128((const __m128i *)(const void *)b);
}

/* out = in XOR keystream for the final len < 128 bytes, from counter ctr on. */
PL_CLMUL static void ctr_tail(const round_keys *rk, __m128i base, uint32_t ctr, const uint8_t *in, size_t len,
                              uint8_t *out) {
    assert(len < PL_GCM_LANES * PL_GCM_BLOCK_BYTES);
    if (len == 0) return;
    __m128i ks[PL_GCM_LANES];
    aes_ctr8(rk, base, ctr, ks);
    uint8_t stream[PL_GCM_LANES * PL_GCM_BLOCK_BYTES];
    memcpy(stream, ks, sizeof stream);
    for (size_t i = 0; i < len; i++) out[i] = in[i] ^ stream[i];
}

PL_CLMUL static __m128i tag_mask(const round_keys *rk, __m128i base) {
    return aes_block(rk, _mm_insert_epi32(base, (int)__builtin_bswap32(1u), 3)); /* E_K(J0) */
}

PL_CLMUL static void store_tag(__m128i y, __m128i mask, uint8_t tag[16]) {
    _mm_storeu_si128((__m128i *)(void *)tag, _mm_xor_si128(byte_reverse(y), mask));
}

/* ---- Key setup. ---- */

PL_CLMUL static inline __m128i key_step(__m128i key, __m128i assist) {
    /* Each word of the next round key is the XOR of all earlier words of this one, plus
     * SubWord(RotWord(last word)) ^ rcon, which aeskeygenassist puts in word 3. */
    assist = _mm_shuffle_epi32(assist, 0xff);
    key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
    key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
    key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
    return _mm_xor_si128(key, assist);
}

#define PL_KEY_STEP(k, i, rcon) ((k)[i] = key_step((k)[(i) - 1], _mm_aeskeygenassist_si128((k)[(i) - 1], (rcon))))

PL_CLMUL static void expand_key(const uint8_t key[16], round_keys *rk) {
    rk->k[0] = _mm_loadu_si128((const __m128i *)(const void *)key);
    PL_KEY_STEP(rk->k, 1, 0x01);
    PL_KEY_STEP(rk->k, 2, 0x02);
    PL_KEY_STEP(rk->k, 3, 0x04);
    PL_KEY_STEP(rk->k, 4, 0x08);
    PL_KEY_STEP(rk->k, 5, 0x10);
    PL_KEY_STEP(rk->k, 6, 0x20);
    PL_KEY_STEP(rk->k, 7, 0x40);
    PL_KEY_STEP(rk->k, 8, 0x80);
    PL_KEY_STEP(rk->k, 9, 0x1b);
    PL_KEY_STEP(rk->k, 10, 0x36);
}

/* H * x^-1 in reflected form: a left shift by one, the carry folded back. */
PL_CLMUL static __m128i times_x_inverse(__m128i h) {
    const uint64_t top = (uint64_t)_mm_extract_epi64(h, 1) >> 63;
    const uint64_t mask = 0u - top;
    const __m128i shifted = _mm_or_si128(_mm_slli_epi64(h, 1), _mm_slli_si128(_mm_srli_epi64(h, 63), 8));
    const __m128i fold = _mm_set_epi64x((long long)(mask & 0xC200000000000000ull), (long long)(mask & 1u));
    return _mm_xor_si128(shifted, fold);
}

PL_CLMUL void pl_gcm_fast_init(pl_gcm_fast *f, const uint8_t key[16]) {
    assert(f != NULL && key != NULL);
    round_keys rk;
    expand_key(key, &rk);
    for (size_t i = 0; i <= PL_AES128_ROUNDS; i++)
        _mm_store_si128((__m128i *)(void *)f->round_keys[i], rk.k[i]);
    const __m128i h1 = times_x_inverse(byte_reverse(aes_block(&rk, _mm_setzero_si128())));
    const __m128i h1k = karatsuba_key(h1);
    __m128i h = h1;
    for (size_t i = 0; i < PL_GCM_FAST_POWERS; i++) {
        if (i > 0) {
            /* (H^i x^-1) * (H x^-1) with the product's extra x: H^(i+1) x^-1. */
            wide w = {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128()};
            wide_add_product(&w, h, h1, h1k);
            h = wide_reduce(w);
        }
        _mm_store_si128((__m128i *)(void *)f->h_powers[i], h);
        _mm_store_si128((__m128i *)(void *)f->h_karatsuba[i], karatsuba_key(h));
    }
    /* rk on the stack is a copy of what the context keeps anyway: nothing to wipe. */
}

/* ---- Seal, tag, CTR. ---- */

PL_CLMUL void pl_gcm_fast_seal(const pl_gcm_fast *f, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                               const uint8_t *in, size_t len, uint8_t *out, uint8_t tag[16]) {
    round_keys rk;
    load_round_keys(f, &rk);
    const __m128i base = nonce_base(nonce);
    __m128i y = ghash_bytes(f, _mm_setzero_si128(), aad, aad_len);
    uint32_t ctr = 2u; /* counter 1 (J0) masks the tag */
    const size_t total = len;
    /* One pass: encrypt 8 blocks, hash those 8 ciphertext blocks from registers. */
    while (len >= PL_GCM_LANES * PL_GCM_BLOCK_BYTES) {
        __m128i ks[PL_GCM_LANES], c[PL_GCM_LANES];
        aes_ctr8(&rk, base, ctr, ks);
#pragma GCC unroll 8
        for (size_t i = 0; i < PL_GCM_LANES; i++) {
            const __m128i p = _mm_loadu_si128((const __m128i *)(const void *)(in + i * PL_GCM_BLOCK_BYTES));
            const __m128i x = _mm_xor_si128(p, ks[i]);
            _mm_storeu_si128((__m128i *)(void *)(out + i * PL_GCM_BLOCK_BYTES), x);
            c[i] = byte_reverse(x);
        }
        y = ghash_fold(f, y, c, PL_GCM_LANES);
        ctr += PL_GCM_LANES;
        in += PL_GCM_LANES * PL_GCM_BLOCK_BYTES;
        out += PL_GCM_LANES * PL_GCM_BLOCK_BYTES;
        len -= PL_GCM_LANES * PL_GCM_BLOCK_BYTES;
    }
    ctr_tail(&rk, base, ctr, in, len, out);
    y = ghash_bytes(f, y, out, len);
    y = ghash_lengths(f, y, aad_len, total);
    store_tag(y, tag_mask(&rk, base), tag);
}

PL_CLMUL void pl_gcm_fast_tag(const pl_gcm_fast *f, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                              const uint8_t *in, size_t len, uint8_t tag[16]) {
    round_keys rk;
    load_round_keys(f, &rk);
    __m128i y = ghash_bytes(f, _mm_setzero_si128(), aad, aad_len);
    y = ghash_bytes(f, y, in, len);
    y = ghash_lengths(f, y, aad_len, len);
    store_tag(y, tag_mask(&rk, nonce_base(nonce)), tag);
}

PL_CLMUL void pl_gcm_fast_ctr(const pl_gcm_fast *f, const uint8_t nonce[12], const uint8_t *in, size_t len,
                              uint8_t *out) {
    round_keys rk;
    load_round_keys(f, &rk);
    const __m128i base = nonce_base(nonce);
    uint32_t ctr = 2u;
    while (len >= PL_GCM_LANES * PL_GCM_BLOCK_BYTES) {
        __m128i ks[PL_GCM_LANES];
        aes_ctr8(&rk, base, ctr, ks);
#pragma GCC unroll 8
        for (size_t i = 0; i < PL_GCM_LANES; i++) {
            const __m128i p = _mm_loadu_si128((const __m128i *)(const void *)(in + i * PL_GCM_BLOCK_BYTES));
            _mm_storeu_si128((__m128i *)(void *)(out + i * PL_GCM_BLOCK_BYTES), _mm_xor_si128(p, ks[i]));
        }
        ctr += PL_GCM_LANES;
        in += PL_GCM_LANES * PL_GCM_BLOCK_BYTES;
        out += PL_GCM_LANES * PL_GCM_BLOCK_BYTES;
        len -= PL_GCM_LANES * PL_GCM_BLOCK_BYTES;
    }
    ctr_tail(&rk, base, ctr, in, len, out);
}

#else /* no AES-NI/PCLMULQDQ path on this platform: pl_gcm_fast_supported() returns 0 */

void pl_gcm_fast_init(pl_gcm_fast *f, const uint8_t key[16]) {
    (void)f;
    (void)key;
    assert(0 && "no fast GCM path on this platform");
}

void pl_gcm_fast_seal(const pl_gcm_fast *f, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                      const uint8_t *in, size_t len, uint8_t *out, uint8_t tag[16]) {
    (void)f, (void)nonce, (void)aad, (void)aad_len, (void)in, (void)len, (void)out, (void)tag;
    assert(0 && "no fast GCM path on this platform");
}

void pl_gcm_fast_tag(const pl_gcm_fast *f, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                     const uint8_t *in, size_t len, uint8_t tag[16]) {
    (void)f, (void)nonce, (void)aad, (void)aad_len, (void)in, (void)len, (void)tag;
    assert(0 && "no fast GCM path on this platform");
}

void pl_gcm_fast_ctr(const pl_gcm_fast *f, const uint8_t nonce[12], const uint8_t *in, size_t len, uint8_t *out) {
    (void)f, (void)nonce, (void)in, (void)len, (void)out;
    assert(0 && "no fast GCM path on this platform");
}

#endif
