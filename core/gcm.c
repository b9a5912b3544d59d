/* gcm.c: AES-128-GCM (NIST SP 800-38D) with 96-bit nonces and 16-byte tags — the
 * context in caller memory and the choice between the two paths.
 *
 * Why our own GCM: Debian's mbedTLS 2.28 allocates in mbedtls_gcm_setkey, and the core
 * may not allocate.  Both paths are checked against mbedtls_gcm_crypt_and_tag by
 * tests/unit/test_crypto.c.
 *
 * Seal encrypts, then authenticates the ciphertext.  Open authenticates first and
 * decrypts only a packet whose tag verified: a forged packet costs one GHASH pass and
 * never leaves unauthenticated plaintext in the caller's buffer. */
#include <assert.h>
#include <string.h>

#include <mbedtls/platform_util.h>

#include "gcm.h"

int pl_gcm_fast_supported(void) {
#if defined(__x86_64__) && defined(__GNUC__)
    /* The core is built without -maes: ask the CPU.  cpu_init is idempotent and makes the
     * answer right even when we run before libgcc's constructor. */
    __builtin_cpu_init();
    return __builtin_cpu_supports("aes") && __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#else
    return 0;
#endif
}

static pl_gcm_ctx *ctx_begin(void *ctx) {
    assert(ctx != NULL);
    assert(((uintptr_t)ctx & (PL_GCM_CTX_ALIGN - 1u)) == 0);
    pl_gcm_ctx *c = ctx;
    /* A re-init (key change) must not leave anything of the old key behind. */
    mbedtls_platform_zeroize(c, sizeof *c);
    c->magic = PL_GCM_CTX_MAGIC;
    c->self = c;
    return c;
}

static const pl_gcm_ctx *ctx_check(const void *ctx) {
    assert(ctx != NULL);
    const pl_gcm_ctx *c = ctx;
    assert(c->magic == PL_GCM_CTX_MAGIC);
    assert(c->self == c); /* an initialised context was copied: init it in place instead */
    assert(c->path == PL_GCM_PATH_FAST || c->path == PL_GCM_PATH_PORTABLE);
    return c;
}

void pl_gcm_init_portable(void *ctx, const uint8_t key[16]) {
    assert(key != NULL);
    pl_gcm_ctx *c = ctx_begin(ctx);
    c->path = PL_GCM_PATH_PORTABLE;
    pl_gcm_portable_init(&c->u.portable, key);
}

int pl_gcm_init_fast(void *ctx, const uint8_t key[16]) {
    assert(key != NULL);
    if (!pl_gcm_fast_supported()) return -1;
    pl_gcm_ctx *c = ctx_begin(ctx);
    c->path = PL_GCM_PATH_FAST;
    pl_gcm_fast_init(&c->u.fast, key);
    return 0;
}

void pl_gcm_init(void *ctx, const uint8_t key[16]) {
    if (pl_gcm_init_fast(ctx, key) != 0) pl_gcm_init_portable(ctx, key);
}

int pl_gcm_path(const void *ctx) {
    return (int)ctx_check(ctx)->path;
}

void pl_gcm_seal(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len, const uint8_t *in,
                 size_t len, uint8_t *out) {
    const pl_gcm_ctx *c = ctx_check(ctx);
    assert(nonce != NULL && out != NULL);
    assert(aad != NULL || aad_len == 0);
    assert(in != NULL || len == 0);
    /* in == out is allowed; any other overlap is not. */
    assert(in == out || len == 0 || in + len <= out || out + len + PURE_LINK_TAG_BYTES <= in);
    if (c->path == PL_GCM_PATH_FAST) {
        pl_gcm_fast_seal(&c->u.fast, nonce, aad, aad_len, in, len, out, out + len);
    } else {
        pl_gcm_portable_ctr(&c->u.portable, nonce, in, len, out);
        pl_gcm_portable_tag(&c->u.portable, nonce, aad, aad_len, out, len, out + len);
    }
}

int pl_gcm_open(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len, const uint8_t *in,
                size_t len, uint8_t *out) {
    const pl_gcm_ctx *c = ctx_check(ctx);
    assert(nonce != NULL && in != NULL);
    assert(aad != NULL || aad_len == 0);
    if (len < PURE_LINK_TAG_BYTES) return -1;
    const size_t text_len = len - PURE_LINK_TAG_BYTES;
    assert(out != NULL || text_len == 0);
    assert(in == out || text_len == 0 || in + len <= out || out + text_len <= in);
    uint8_t tag[PURE_LINK_TAG_BYTES];
    if (c->path == PL_GCM_PATH_FAST) {
        pl_gcm_fast_tag(&c->u.fast, nonce, aad, aad_len, in, text_len, tag);
    } else {
        pl_gcm_portable_tag(&c->u.portable, nonce, aad, aad_len, in, text_len, tag);
    }
    const int bad = pl_ct_compare(tag, in + text_len, sizeof tag);
    mbedtls_platform_zeroize(tag, sizeof tag);
    if (bad) return -1;
    if (c->path == PL_GCM_PATH_FAST) {
        pl_gcm_fast_ctr(&c->u.fast, nonce, in, text_len, out);
    } else {
        pl_gcm_portable_ctr(&c->u.portable, nonce, in, text_len, out);
    }
    return 0;
}
