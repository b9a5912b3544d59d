/* test_crypto.c: the core's crypto against published vectors and against mbedTLS.
 *
 * HKDF: RFC 5869 A.1-A.3; HMAC: RFC 4231 cases 1 and 6; X25519: RFC 7748 5.2 and 6.1;
 * AES-128-GCM: the GCM spec's test cases 1-4 (the 128-bit-key cases with 96-bit IVs;
 * 5 and 6 use other IV lengths, which pure-link never does), both paths; a differential
 * test against mbedtls_gcm_crypt_and_tag / mbedtls_gcm_auth_decrypt; tamper and in-place
 * cases; the null cipher; and spec/vectors/keys.txt recomputed line by line. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/gcm.h>

#include "crypto.h"

#include "harness.h"

#define DIFF_CASES 10000       /* random cases per path in the differential test */
#define DIFF_AAD_MOST 64
#define DIFF_TEXT_MOST 1500
#define HEX_MOST 256           /* bytes in one hex value of a test */
#define VECTORS_PATH "spec/vectors/keys.txt"

/* ---- Helpers. ---- */

static size_t unhex(uint8_t *out, size_t cap, const char *hex) {
    size_t n = strlen(hex);
    if (n % 2 != 0 || n / 2 > cap) {
        fprintf(stderr, "  bad hex constant: %s\n", hex);
        abort();
    }
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) abort();
        out[i] = (uint8_t)v;
    }
    return n / 2;
}

/* A splitmix64 stream: reproducible "random" cases. */
static uint64_t rng_state = 0x5eed5eed12345678ull;

static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void rng_fill(uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)rng_next();
}

static size_t rng_below(size_t n) {
    return (size_t)(rng_next() % n);
}

typedef struct aead_ctx {
    _Alignas(16) uint8_t b[PURE_LINK_AEAD_CTX_BYTES];
} aead_ctx;

/* Inits ctx on the given path; returns 0 when the path cannot run here. */
static int init_path(aead_ctx *ctx, int path, const uint8_t key[16]) {
    if (path == PL_GCM_PATH_FAST) return pl_gcm_init_fast(ctx->b, key) == 0;
    pl_gcm_init_portable(ctx->b, key);
    return 1;
}

/* ---- HMAC and HKDF. ---- */

static void hmac_rfc4231(void) {
    uint8_t key[131], out[32], want[32];
    memset(key, 0x0b, 20);
    pl_hmac_sha256(out, key, 20, (const uint8_t *)"Hi There", 8);
    unhex(want, sizeof want, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    CHECK_MEM(out, want, 32);
    /* A key longer than the 64-byte block is hashed first. */
    memset(key, 0xaa, sizeof key);
    const char *msg = "Test Using Larger Than Block-Size Key - Hash Key First";
    pl_hmac_sha256(out, key, sizeof key, (const uint8_t *)msg, strlen(msg));
    unhex(want, sizeof want, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    CHECK_MEM(out, want, 32);
}

typedef struct hkdf_case {
    const char *ikm, *salt, *info, *prk, *okm;
} hkdf_case;

static void hkdf_rfc5869(void) {
    static const hkdf_case cases[] = {
        {"0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "000102030405060708090a0b0c", "f0f1f2f3f4f5f6f7f8f9",
         "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
         "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"},
        {"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
         "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
         "404142434445464748494a4b4c4d4e4f",
         "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
         "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
         "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf",
         "b0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecf"
         "d0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeef"
         "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
         "06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244",
         "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c"
         "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71"
         "cc30c58179ec3e87c14c01d5c1f3434f1d87"},
        {"0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "", "",
         "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
         "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint8_t ikm[HEX_MOST], salt[HEX_MOST], info[HEX_MOST], prk_want[32], okm_want[HEX_MOST];
        uint8_t prk[32], okm[HEX_MOST];
        const size_t ikm_len = unhex(ikm, sizeof ikm, cases[c].ikm);
        const size_t salt_len = unhex(salt, sizeof salt, cases[c].salt);
        const size_t info_len = unhex(info, sizeof info, cases[c].info);
        unhex(prk_want, sizeof prk_want, cases[c].prk);
        const size_t okm_len = unhex(okm_want, sizeof okm_want, cases[c].okm);
        pl_hkdf_extract(prk, salt_len ? salt : NULL, salt_len, ikm, ikm_len);
        CHECK_MEM(prk, prk_want, 32);
        pl_hkdf_expand(okm, okm_len, prk, info_len ? info : NULL, info_len);
        CHECK_MEM(okm, okm_want, okm_len);
    }
}

/* Every output length up to the RFC's limit is a prefix of the longest output, and the
 * blocks chain as T(i) = HMAC(PRK, T(i-1) || info || i). */
static void hkdf_expand_lengths(void) {
    static uint8_t longest[PL_HKDF_EXPAND_MOST], shorter[PL_HKDF_EXPAND_MOST];
    uint8_t prk[32], info[5] = {1, 2, 3, 4, 5};
    rng_fill(prk, sizeof prk);
    pl_hkdf_expand(longest, sizeof longest, prk, info, sizeof info);
    static const size_t lengths[] = {0, 1, 28, 31, 32, 33, 64, 65, 1000, PL_HKDF_EXPAND_MOST - 1};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        memset(shorter, 0xee, sizeof shorter);
        pl_hkdf_expand(shorter, lengths[i], prk, info, sizeof info);
        CHECK_MEM(shorter, longest, lengths[i]);
        if (lengths[i] < sizeof shorter) CHECK_EQ_U(shorter[lengths[i]], 0xee);
    }
    uint8_t msg[32 + sizeof info + 1], t[32];
    memcpy(msg, longest + 253 * 32, 32); /* T(255) = HMAC(PRK, T(254) || info || 255) */
    memcpy(msg + 32, info, sizeof info);
    msg[sizeof msg - 1] = 255;
    pl_hmac_sha256(t, prk, sizeof prk, msg, sizeof msg);
    CHECK_MEM(t, longest + 254 * 32, 32);
}

/* ---- X25519. ---- */

static void x25519_rfc7748(void) {
    static const char *const single[][3] = {
        {"a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
         "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
         "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"},
        {"4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
         "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
         "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957"},
    };
    for (size_t i = 0; i < 2; i++) {
        uint8_t scalar[32], u[32], want[32], out[32];
        unhex(scalar, 32, single[i][0]);
        unhex(u, 32, single[i][1]);
        unhex(want, 32, single[i][2]);
        CHECK(pl_x25519(out, scalar, u) == 0);
        CHECK_MEM(out, want, 32);
    }
    /* 6.1: Alice and Bob. */
    uint8_t a_sec[32], b_sec[32], a_pub_want[32], b_pub_want[32], k_want[32];
    uint8_t a_pub[32], b_pub[32], k_a[32], k_b[32];
    unhex(a_sec, 32, "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
    unhex(a_pub_want, 32, "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
    unhex(b_sec, 32, "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
    unhex(b_pub_want, 32, "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f");
    unhex(k_want, 32, "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742");
    const pure_link_crypto *t = pure_link_crypto_default();
    t->x25519_base(a_pub, a_sec);
    t->x25519_base(b_pub, b_sec);
    CHECK_MEM(a_pub, a_pub_want, 32);
    CHECK_MEM(b_pub, b_pub_want, 32);
    CHECK(t->x25519(k_a, a_sec, b_pub) == 0);
    CHECK(t->x25519(k_b, b_sec, a_pub) == 0);
    CHECK_MEM(k_a, k_want, 32);
    CHECK_MEM(k_b, k_want, 32);
}

/* Low-order points give an all-zero result whatever the scalar: refused, output zeroed. */
static void x25519_refuses_zero(void) {
    static const char *const low_order[] = {
        "0000000000000000000000000000000000000000000000000000000000000000", /* u = 0 */
        "0100000000000000000000000000000000000000000000000000000000000000", /* u = 1 */
        "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800", /* order 8 */
        "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157", /* order 8 */
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", /* u = p - 1 */
    };
    uint8_t scalar[32];
    rng_fill(scalar, sizeof scalar);
    for (size_t i = 0; i < sizeof low_order / sizeof low_order[0]; i++) {
        uint8_t point[32], out[32];
        unhex(point, 32, low_order[i]);
        memset(out, 0x55, sizeof out);
        CHECK(pl_x25519(out, scalar, point) == -1);
        CHECK(pl_is_zero(out, 32));
        memset(out, 0x55, sizeof out);
        CHECK(pure_link_crypto_default()->x25519(out, scalar, point) == -1);
        CHECK(pure_link_crypto_null()->x25519(out, scalar, point) == -1);
        CHECK(pl_is_zero(out, 32));
    }
}

/* ---- AES-128-GCM. ---- */

typedef struct gcm_case {
    const char *key, *iv, *text, *aad, *cipher, *tag;
} gcm_case;

/* The GCM spec's (McGrew and Viega) test cases 1-4. */
static const gcm_case gcm_cases[] = {
    {"00000000000000000000000000000000", "000000000000000000000000", "", "", "",
     "58e2fccefa7e3061367f1d57a4e7455a"},
    {"00000000000000000000000000000000", "000000000000000000000000", "00000000000000000000000000000000", "",
     "0388dace60b6a392f328c2b971b2fe78", "ab6e47d42cec13bdf53a67b21257bddf"},
    {"feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525"
     "b16aedf5aa0de657ba637b391aafd255",
     "",
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa05"
     "1ba30b396a0aac973d58e091473f5985",
     "4d5c2af327cd64a62cf35abd2ba6fab4"},
    {"feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525"
     "b16aedf5aa0de657ba637b39",
     "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa05"
     "1ba30b396a0aac973d58e091",
     "5bc94fbc3221a5db94fae95ae7121a47"},
};

static void gcm_vectors_on(int path) {
    for (size_t c = 0; c < sizeof gcm_cases / sizeof gcm_cases[0]; c++) {
        const gcm_case *g = &gcm_cases[c];
        uint8_t key[16], iv[12], text[HEX_MOST], aad[HEX_MOST], want[HEX_MOST], sealed[HEX_MOST], opened[HEX_MOST];
        unhex(key, sizeof key, g->key);
        unhex(iv, sizeof iv, g->iv);
        const size_t len = unhex(text, sizeof text, g->text);
        const size_t aad_len = unhex(aad, sizeof aad, g->aad);
        CHECK_EQ_U(unhex(want, sizeof want, g->cipher), len);
        unhex(want + len, 16, g->tag);
        aead_ctx ctx;
        CHECK(init_path(&ctx, path, key));
        CHECK_EQ_U(pl_gcm_path(ctx.b), path);
        pl_gcm_seal(ctx.b, iv, aad, aad_len, text, len, sealed);
        CHECK_MEM(sealed, want, len + 16);
        CHECK(pl_gcm_open(ctx.b, iv, aad, aad_len, sealed, len + 16, opened) == 0);
        CHECK_MEM(opened, text, len);
    }
}

static void gcm_vectors_fast(void) {
    if (!pl_gcm_fast_supported()) SKIP("this CPU has no AES-NI/PCLMULQDQ: the fast path is not tested");
    gcm_vectors_on(PL_GCM_PATH_FAST);
}

static void gcm_vectors_portable(void) {
    gcm_vectors_on(PL_GCM_PATH_PORTABLE);
}

/* Random key, nonce, aad (0..64 B) and text (0..1500 B): our seal equals mbedTLS's, each
 * side opens the other's, both paths. */
static void gcm_differential_on(int path) {
    static uint8_t text[DIFF_TEXT_MOST], ours[DIFF_TEXT_MOST + 16], theirs[DIFF_TEXT_MOST + 16];
    static uint8_t opened[DIFF_TEXT_MOST];
    for (int i = 0; i < DIFF_CASES; i++) {
        uint8_t key[16], nonce[12], aad[DIFF_AAD_MOST];
        rng_fill(key, sizeof key);
        rng_fill(nonce, sizeof nonce);
        const size_t aad_len = rng_below(DIFF_AAD_MOST + 1);
        size_t len = rng_below(DIFF_TEXT_MOST + 1);
        if (i % 2) { /* half the cases sit on a block boundary or one byte off it */
            len = rng_below(DIFF_TEXT_MOST / 16 + 1) * 16 + rng_below(3);
            len = len > 0 ? len - 1 : 0;
        }
        rng_fill(aad, aad_len);
        rng_fill(text, len);

        aead_ctx ctx;
        CHECK(init_path(&ctx, path, key));
        pl_gcm_seal(ctx.b, nonce, aad, aad_len, text, len, ours);

        mbedtls_gcm_context gcm;
        mbedtls_gcm_init(&gcm);
        CHECK(mbedtls_gcm_setkey(&gcm, MBEDTLS_CIPHER_ID_AES, key, 128) == 0);
        CHECK(mbedtls_gcm_crypt_and_tag(&gcm, MBEDTLS_GCM_ENCRYPT, len, nonce, 12, aad, aad_len, text, theirs, 16,
                                        theirs + len) == 0);
        if (memcmp(ours, theirs, len + 16) != 0) {
            fprintf(stderr, "  case %d: aad %zu B, text %zu B differ\n", i, aad_len, len);
            CHECK(0);
        }
        CHECK(mbedtls_gcm_auth_decrypt(&gcm, len, nonce, 12, aad, aad_len, ours + len, 16, ours, opened) == 0);
        CHECK_MEM(opened, text, len);
        mbedtls_gcm_free(&gcm);
        CHECK(pl_gcm_open(ctx.b, nonce, aad, aad_len, theirs, len + 16, opened) == 0);
        CHECK_MEM(opened, text, len);
    }
}

static void gcm_differential_fast(void) {
    if (!pl_gcm_fast_supported()) return;
    gcm_differential_on(PL_GCM_PATH_FAST);
}

static void gcm_differential_portable(void) {
    gcm_differential_on(PL_GCM_PATH_PORTABLE);
}

/* Open refuses every single flipped bit of aad, ciphertext and tag, and writes nothing. */
static void gcm_tamper_on(int path) {
    enum { AAD = 16, TEXT = 150 };
    uint8_t key[16], nonce[12], aad[AAD], text[TEXT], sealed[TEXT + 16], out[TEXT];
    rng_fill(key, sizeof key);
    rng_fill(nonce, sizeof nonce);
    rng_fill(aad, sizeof aad);
    rng_fill(text, sizeof text);
    aead_ctx ctx;
    CHECK(init_path(&ctx, path, key));
    pl_gcm_seal(ctx.b, nonce, aad, sizeof aad, text, sizeof text, sealed);
    for (size_t bit = 0; bit < 8 * sizeof sealed; bit++) {
        sealed[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        memset(out, 0xa5, sizeof out);
        CHECK(pl_gcm_open(ctx.b, nonce, aad, sizeof aad, sealed, sizeof sealed, out) == -1);
        for (size_t i = 0; i < sizeof out; i++) CHECK_EQ_U(out[i], 0xa5);
        sealed[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    for (size_t bit = 0; bit < 8 * sizeof aad; bit++) {
        aad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        CHECK(pl_gcm_open(ctx.b, nonce, aad, sizeof aad, sealed, sizeof sealed, out) == -1);
        aad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    nonce[11] ^= 1;
    CHECK(pl_gcm_open(ctx.b, nonce, aad, sizeof aad, sealed, sizeof sealed, out) == -1);
    nonce[11] ^= 1;
    CHECK(pl_gcm_open(ctx.b, nonce, aad, sizeof aad, sealed, sizeof sealed - 1, out) == -1); /* truncated */
    CHECK(pl_gcm_open(ctx.b, nonce, aad, sizeof aad, sealed, 15, out) == -1);               /* shorter than a tag */
    CHECK(pl_gcm_open(ctx.b, nonce, aad, sizeof aad, sealed, sizeof sealed, out) == 0);     /* untouched: opens */
    CHECK_MEM(out, text, sizeof text);
}

static void gcm_tamper_fast(void) {
    if (!pl_gcm_fast_supported()) return;
    gcm_tamper_on(PL_GCM_PATH_FAST);
}

static void gcm_tamper_portable(void) {
    gcm_tamper_on(PL_GCM_PATH_PORTABLE);
}

/* Seal and open with in == out give the same bytes as with separate buffers. */
static void gcm_in_place(void) {
    static const size_t lengths[] = {0, 1, 15, 16, 17, 127, 128, 129, 1420};
    for (int path = PL_GCM_PATH_FAST; path <= PL_GCM_PATH_PORTABLE; path++) {
        uint8_t key[16], nonce[12], aad[16];
        rng_fill(key, sizeof key);
        rng_fill(nonce, sizeof nonce);
        rng_fill(aad, sizeof aad);
        aead_ctx ctx;
        if (!init_path(&ctx, path, key)) continue;
        for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
            uint8_t text[1420], separate[1420 + 16], buf[1420 + 16];
            const size_t len = lengths[i];
            rng_fill(text, len);
            pl_gcm_seal(ctx.b, nonce, aad, sizeof aad, text, len, separate);
            memcpy(buf, text, len);
            pl_gcm_seal(ctx.b, nonce, aad, sizeof aad, buf, len, buf);
            CHECK_MEM(buf, separate, len + 16);
            CHECK(pl_gcm_open(ctx.b, nonce, aad, sizeof aad, buf, len + 16, buf) == 0);
            CHECK_MEM(buf, text, len);
        }
    }
}

/* The two paths give the same bytes, the default picks the fast one when it can, a
 * context re-initialised with a new key equals a fresh one, and the default table is
 * this GCM. */
static void gcm_paths_agree(void) {
    uint8_t key1[16], key2[16], nonce[12], aad[16], text[1420], a[1436], b[1436], c[1436];
    rng_fill(key1, sizeof key1);
    rng_fill(key2, sizeof key2);
    rng_fill(nonce, sizeof nonce);
    rng_fill(aad, sizeof aad);
    rng_fill(text, sizeof text);
    aead_ctx fast, portable, reused;
    pl_gcm_init_portable(portable.b, key2);
    pl_gcm_seal(portable.b, nonce, aad, sizeof aad, text, sizeof text, a);
    pl_gcm_init(reused.b, key1);
    CHECK_EQ_U(pl_gcm_path(reused.b), pl_gcm_fast_supported() ? PL_GCM_PATH_FAST : PL_GCM_PATH_PORTABLE);
    pl_gcm_init(reused.b, key2);
    pl_gcm_seal(reused.b, nonce, aad, sizeof aad, text, sizeof text, b);
    CHECK_MEM(a, b, sizeof a);
    if (init_path(&fast, PL_GCM_PATH_FAST, key2)) {
        pl_gcm_seal(fast.b, nonce, aad, sizeof aad, text, sizeof text, c);
        CHECK_MEM(a, c, sizeof a);
    }
    const pure_link_crypto *t = pure_link_crypto_default();
    CHECK(t->name != NULL);
    t->aead_init(reused.b, key2);
    t->aead_seal(reused.b, nonce, aad, sizeof aad, text, sizeof text, c);
    CHECK_MEM(a, c, sizeof a);
    CHECK(t->aead_open(reused.b, nonce, aad, sizeof aad, c, sizeof c, b) == 0);
    CHECK_MEM(b, text, sizeof text);
}

/* ---- The null cipher. ---- */

static void null_cipher(void) {
    const pure_link_crypto *t = pure_link_crypto_null();
    CHECK(t->name != NULL && strcmp(t->name, "null") == 0);
    uint8_t key[16], other_key[16], nonce[12], aad[16], text[100], sealed[116], out[100];
    rng_fill(key, sizeof key);
    memcpy(other_key, key, sizeof key);
    other_key[0] ^= 1;
    rng_fill(nonce, sizeof nonce);
    rng_fill(aad, sizeof aad);
    rng_fill(text, sizeof text);
    aead_ctx ctx, other;
    t->aead_init(ctx.b, key);
    t->aead_init(other.b, other_key);
    t->aead_seal(ctx.b, nonce, aad, sizeof aad, text, sizeof text, sealed);
    CHECK_MEM(sealed, text, sizeof text); /* it hides nothing */
    CHECK(t->aead_open(ctx.b, nonce, aad, sizeof aad, sealed, sizeof sealed, out) == 0);
    CHECK_MEM(out, text, sizeof text);
    CHECK(t->aead_open(other.b, nonce, aad, sizeof aad, sealed, sizeof sealed, out) == -1);
    for (size_t bit = 0; bit < 8 * sizeof sealed; bit++) {
        sealed[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        CHECK(t->aead_open(ctx.b, nonce, aad, sizeof aad, sealed, sizeof sealed, out) == -1);
        sealed[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    for (size_t bit = 0; bit < 8 * sizeof aad; bit++) {
        aad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        CHECK(t->aead_open(ctx.b, nonce, aad, sizeof aad, sealed, sizeof sealed, out) == -1);
        aad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    nonce[0] ^= 1;
    CHECK(t->aead_open(ctx.b, nonce, aad, sizeof aad, sealed, sizeof sealed, out) == -1);
    nonce[0] ^= 1;
    /* Moving the aad/text boundary changes the tag. */
    CHECK(t->aead_open(ctx.b, nonce, aad, sizeof aad - 1, sealed, sizeof sealed, out) == -1);
    /* In place. */
    t->aead_seal(ctx.b, nonce, aad, sizeof aad, sealed, sizeof text, sealed);
    CHECK(t->aead_open(ctx.b, nonce, aad, sizeof aad, sealed, sizeof sealed, sealed) == 0);
    CHECK_MEM(sealed, text, sizeof text);
}

/* ---- Key schedule. ---- */

static void key_id_fnv1a(void) {
    /* Values from an independent FNV-1a-32 (Python): over 32 zero bytes and 0x00..0x1f. */
    uint8_t pub[32] = {0};
    CHECK_EQ_U(pl_key_id(pub), 0x0b2ae445u);
    for (int i = 0; i < 32; i++) pub[i] = (uint8_t)i;
    CHECK_EQ_U(pl_key_id(pub), 0x0913ad65u);
}

static void nonce_xor(void) {
    uint8_t iv[12], nonce[12];
    for (int i = 0; i < 12; i++) iv[i] = (uint8_t)(0xf0 + i);
    pl_nonce(nonce, iv, 0);
    CHECK_MEM(nonce, iv, 12);
    pl_nonce(nonce, iv, 0x0102030405060708ull);
    static const uint8_t want[12] = {0xf0, 0xf1, 0xf2, 0xf3, 0xf4 ^ 1, 0xf5 ^ 2, 0xf6 ^ 3, 0xf7 ^ 4,
                                     0xf8 ^ 5, 0xf9 ^ 6, 0xfa ^ 7, 0xfb ^ 8};
    CHECK_MEM(nonce, want, 12);
}

/* The chain may overwrite itself in place; every input changes the result. */
static void epoch_chain(void) {
    uint8_t prev[32], dh[32], offer[32], accept[32], separate[32], in_place[32], other[32];
    rng_fill(prev, sizeof prev);
    rng_fill(dh, sizeof dh);
    rng_fill(offer, sizeof offer);
    rng_fill(accept, sizeof accept);
    pl_epoch_next(separate, prev, dh, offer, accept, 1);
    memcpy(in_place, prev, 32);
    pl_epoch_next(in_place, in_place, dh, offer, accept, 1);
    CHECK_MEM(separate, in_place, 32);
    pl_epoch_next(other, prev, dh, accept, offer, 1); /* the two publics in the other order */
    CHECK(memcmp(other, separate, 32) != 0);
    pl_epoch_next(other, prev, dh, offer, accept, 2);
    CHECK(memcmp(other, separate, 32) != 0);
    /* Data and reply keys, runs and epochs all give different keys. */
    pl_packet_key k[6];
    pl_data_key(&k[0], separate, offer, accept, 7, 1);
    pl_data_key(&k[1], separate, accept, offer, 7, 1);
    pl_data_key(&k[2], separate, offer, accept, 8, 1);
    pl_data_key(&k[3], separate, offer, accept, 7, 2);
    pl_reply_key(&k[4], separate, accept, offer, 7, 9, 1);
    pl_reply_key(&k[5], separate, accept, offer, 7, 10, 1);
    for (int i = 0; i < 6; i++)
        for (int j = i + 1; j < 6; j++) CHECK(memcmp(&k[i], &k[j], sizeof k[i]) != 0);
}

/* ---- spec/vectors/keys.txt, every line recomputed. ---- */

#define VEC_LINES_MOST 128
#define VEC_NAME_MOST 64
#define VEC_VALUE_MOST 128

typedef struct vec_line {
    char name[VEC_NAME_MOST];
    uint8_t value[VEC_VALUE_MOST];
    size_t len;
    int checked;
} vec_line;

typedef struct vec_file {
    vec_line line[VEC_LINES_MOST];
    size_t n;
} vec_file;

static vec_line *vec_find(vec_file *f, const char *name) {
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->line[i].name, name) == 0) return &f->line[i];
    fprintf(stderr, "  %s: no line named %s\n", VECTORS_PATH, name);
    return NULL;
}

/* The value of an input line, which must have exactly len bytes. */
static const uint8_t *vec_input(vec_file *f, const char *name, size_t len) {
    vec_line *l = vec_find(f, name);
    CHECK(l != NULL);
    CHECK_EQ_U(l->len, len);
    l->checked = 1;
    return l->value;
}

static void vec_expect(vec_file *f, const char *name, const uint8_t *value, size_t len) {
    vec_line *l = vec_find(f, name);
    CHECK(l != NULL);
    if (l->len != len || memcmp(l->value, value, len) != 0) {
        fprintf(stderr, "  %s: %s differs from the code's value\n", VECTORS_PATH, name);
        CHECK(0);
    }
    l->checked = 1;
}

static uint64_t be_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = (v << 8) | p[i];
    return v;
}

static void vec_load(vec_file *f) {
    FILE *fp = fopen(VECTORS_PATH, "r");
    if (fp == NULL) fprintf(stderr, "  cannot open %s (run from the repository root)\n", VECTORS_PATH);
    CHECK(fp != NULL);
    char buf[512];
    f->n = 0;
    while (fgets(buf, sizeof buf, fp) != NULL) {
        if (buf[0] == '#' || buf[0] == '\n') continue;
        char name[VEC_NAME_MOST], hex[2 * VEC_VALUE_MOST + 2];
        if (sscanf(buf, "%63s = %257s", name, hex) != 2 || strlen(hex) % 2 != 0) {
            fclose(fp);
            fprintf(stderr, "  bad line: %s", buf);
            CHECK(0);
        }
        if (f->n == VEC_LINES_MOST) fclose(fp);
        CHECK(f->n < VEC_LINES_MOST);
        vec_line *l = &f->line[f->n++];
        snprintf(l->name, sizeof l->name, "%s", name);
        l->len = unhex(l->value, sizeof l->value, hex);
        l->checked = 0;
    }
    fclose(fp);
}

/* Every line named <prefix>_nonce_pn_<decimal> is the nonce of that packet number. */
static void vec_check_nonces(vec_file *f, const char *prefix, const pl_packet_key *k) {
    char head[VEC_NAME_MOST];
    snprintf(head, sizeof head, "%s_nonce_pn_", prefix);
    int found = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (strncmp(f->line[i].name, head, strlen(head)) != 0) continue;
        const uint64_t pn = strtoull(f->line[i].name + strlen(head), NULL, 10);
        uint8_t nonce[12];
        pl_nonce(nonce, k->iv, pn);
        vec_expect(f, f->line[i].name, nonce, sizeof nonce);
        found++;
    }
    CHECK(found >= 3);
}

static void vec_check_epoch_keys(vec_file *f, const uint8_t e[32], uint32_t epoch, const uint8_t s_pub[32],
                                 const uint8_t r_pub[32], uint64_t run, uint64_t reply_run) {
    char name[VEC_NAME_MOST];
    pl_packet_key k;
    uint8_t okm[28];
    pl_data_key(&k, e, s_pub, r_pub, run, epoch);
    snprintf(name, sizeof name, "epoch%u_data_info", epoch);
    const vec_line *info = vec_find(f, name);
    CHECK(info != NULL);
    pl_hkdf_expand(okm, sizeof okm, e, info->value, info->len);
    CHECK_MEM(okm, k.key, 16); /* the published info string is the one the code uses */
    CHECK_MEM(okm + 16, k.iv, 12);
    vec_expect(f, name, info->value, info->len);
    snprintf(name, sizeof name, "epoch%u_data_key", epoch);
    vec_expect(f, name, k.key, sizeof k.key);
    snprintf(name, sizeof name, "epoch%u_data_iv", epoch);
    vec_expect(f, name, k.iv, sizeof k.iv);
    snprintf(name, sizeof name, "epoch%u_data", epoch);
    vec_check_nonces(f, name, &k);

    pl_reply_key(&k, e, r_pub, s_pub, run, reply_run, epoch);
    snprintf(name, sizeof name, "epoch%u_reply_info", epoch);
    info = vec_find(f, name);
    CHECK(info != NULL);
    pl_hkdf_expand(okm, sizeof okm, e, info->value, info->len);
    CHECK_MEM(okm, k.key, 16);
    CHECK_MEM(okm + 16, k.iv, 12);
    vec_expect(f, name, info->value, info->len);
    snprintf(name, sizeof name, "epoch%u_reply_key", epoch);
    vec_expect(f, name, k.key, sizeof k.key);
    snprintf(name, sizeof name, "epoch%u_reply_iv", epoch);
    vec_expect(f, name, k.iv, sizeof k.iv);
    snprintf(name, sizeof name, "epoch%u_reply", epoch);
    vec_check_nonces(f, name, &k);
}

static void keys_vectors_file(void) {
    static vec_file f;
    vec_load(&f);
    const uint8_t *s_sec = vec_input(&f, "sender_static_secret", 32);
    const uint8_t *r_sec = vec_input(&f, "receiver_static_secret", 32);
    const uint64_t run = be_u64(vec_input(&f, "run", 8));
    const uint64_t reply_run = be_u64(vec_input(&f, "reply_run", 8));
    uint8_t s_pub[32], r_pub[32], s[32], s2[32], e[32];
    pl_x25519_base(s_pub, s_sec);
    pl_x25519_base(r_pub, r_sec);
    vec_expect(&f, "sender_static_public", s_pub, 32);
    vec_expect(&f, "receiver_static_public", r_pub, 32);
    const uint32_t id = pl_key_id(s_pub);
    const uint8_t id_be[4] = {(uint8_t)(id >> 24), (uint8_t)(id >> 16), (uint8_t)(id >> 8), (uint8_t)id};
    vec_expect(&f, "sender_key_id", id_be, 4);
    CHECK(pl_x25519(s, s_sec, r_pub) == 0);
    CHECK(pl_x25519(s2, r_sec, s_pub) == 0);
    CHECK_MEM(s, s2, 32);
    vec_expect(&f, "static_shared", s, 32);
    pl_epoch0_secret(e, s);
    vec_expect(&f, "epoch0_secret", e, 32);
    vec_check_epoch_keys(&f, e, 0, s_pub, r_pub, run, reply_run);

    uint32_t epoch = 1;
    for (;; epoch++) {
        char name[VEC_NAME_MOST];
        snprintf(name, sizeof name, "epoch%u_sender_ephemeral_secret", epoch);
        int more = 0;
        for (size_t i = 0; i < f.n; i++) more |= strcmp(f.line[i].name, name) == 0;
        if (!more) break;
        const uint8_t *o_sec = vec_input(&f, name, 32);
        snprintf(name, sizeof name, "epoch%u_receiver_ephemeral_secret", epoch);
        const uint8_t *a_sec = vec_input(&f, name, 32);
        uint8_t o_pub[32], a_pub[32], dh[32], dh2[32], ikm[100];
        pl_x25519_base(o_pub, o_sec);
        pl_x25519_base(a_pub, a_sec);
        CHECK(pl_x25519(dh, o_sec, a_pub) == 0);
        CHECK(pl_x25519(dh2, a_sec, o_pub) == 0);
        CHECK_MEM(dh, dh2, 32);
        snprintf(name, sizeof name, "epoch%u_offer_public", epoch);
        vec_expect(&f, name, o_pub, 32);
        snprintf(name, sizeof name, "epoch%u_accept_public", epoch);
        vec_expect(&f, name, a_pub, 32);
        snprintf(name, sizeof name, "epoch%u_dh", epoch);
        vec_expect(&f, name, dh, 32);
        memcpy(ikm, dh, 32);
        memcpy(ikm + 32, o_pub, 32);
        memcpy(ikm + 64, a_pub, 32);
        for (int i = 0; i < 4; i++) ikm[96 + i] = (uint8_t)(epoch >> (24 - 8 * i));
        snprintf(name, sizeof name, "epoch%u_ikm", epoch);
        vec_expect(&f, name, ikm, sizeof ikm);
        uint8_t e_spec[32];
        pl_hkdf_extract(e_spec, e, 32, ikm, sizeof ikm);
        pl_epoch_next(e, e, dh, o_pub, a_pub, epoch);
        CHECK_MEM(e, e_spec, 32);
        snprintf(name, sizeof name, "epoch%u_secret", epoch);
        vec_expect(&f, name, e, 32);
        vec_check_epoch_keys(&f, e, epoch, s_pub, r_pub, run, reply_run);
    }
    CHECK(epoch >= 2); /* at least E(1) is in the file */
    for (size_t i = 0; i < f.n; i++) {
        if (!f.line[i].checked) fprintf(stderr, "  %s: line %s is not recomputed\n", VECTORS_PATH, f.line[i].name);
        CHECK(f.line[i].checked);
    }
}

TEST_MAIN(TEST_CASE(hmac_rfc4231), TEST_CASE(hkdf_rfc5869), TEST_CASE(hkdf_expand_lengths),
          TEST_CASE(x25519_rfc7748), TEST_CASE(x25519_refuses_zero), TEST_CASE(gcm_vectors_fast),
          TEST_CASE(gcm_vectors_portable), TEST_CASE(gcm_differential_fast), TEST_CASE(gcm_differential_portable),
          TEST_CASE(gcm_tamper_fast), TEST_CASE(gcm_tamper_portable), TEST_CASE(gcm_in_place),
          TEST_CASE(gcm_paths_agree), TEST_CASE(null_cipher), TEST_CASE(key_id_fnv1a), TEST_CASE(nonce_xor),
          TEST_CASE(epoch_chain), TEST_CASE(keys_vectors_file))
