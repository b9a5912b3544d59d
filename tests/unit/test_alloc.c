/* test_alloc.c: the core's crypto never allocates.
 *
 * This program defines malloc, calloc, realloc, free and the aligned allocators itself,
 * so every call to them — from the core, from libsodium or libmbedcrypto (shared
 * libraries bind to the executable's definitions first) — lands here.  They count while
 * a window is open and forward to glibc's own allocator (__libc_malloc and friends, which
 * unlike dlsym(RTLD_NEXT) cannot recurse into us).  The window covers seal, open, every
 * derivation, X25519 and AEAD re-inits; any count above zero fails.  interposer_counts
 * shows the counting works, including for calls made inside a shared library. */
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <mbedtls/gcm.h>
#include <sodium.h>

#include "crypto.h"

#include "harness.h"

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t size);

static volatile int alloc_counting;
static volatile unsigned long alloc_calls;

static void count(void) {
    if (alloc_counting) alloc_calls++;
}

void *malloc(size_t size) {
    count();
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size) {
    count();
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size) {
    count();
    return __libc_realloc(p, size);
}

void free(void *p) {
    count();
    __libc_free(p);
}

void *memalign(size_t align, size_t size) {
    count();
    return __libc_memalign(align, size);
}

void *aligned_alloc(size_t align, size_t size) {
    count();
    return __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size) {
    count();
    void *p = __libc_memalign(align, size);
    if (p == NULL) return ENOMEM;
    *out = p;
    return 0;
}

static void window_open(void) {
    alloc_calls = 0;
    alloc_counting = 1;
}

static unsigned long window_close(void) {
    alloc_counting = 0;
    return alloc_calls;
}

/* A call the optimiser cannot see through, so a deliberate malloc really happens. */
static void *(*volatile malloc_indirect)(size_t) = malloc;
static void (*volatile free_indirect)(void *) = free;

static void interposer_counts(void) {
    window_open();
    void *p = malloc_indirect(64);
    free_indirect(p);
    CHECK_EQ_U(window_close(), 2);
    /* mbedTLS 2.28's GCM key setup calls calloc inside libmbedcrypto.so: counted too. */
    mbedtls_gcm_context gcm;
    const uint8_t key[16] = {1};
    mbedtls_gcm_init(&gcm);
    window_open();
    int rc = mbedtls_gcm_setkey(&gcm, MBEDTLS_CIPHER_ID_AES, key, 128);
    mbedtls_gcm_free(&gcm);
    const unsigned long n = window_close();
    CHECK(rc == 0);
    CHECK(n > 0);
}

typedef struct aead_ctx {
    _Alignas(16) uint8_t b[PURE_LINK_AEAD_CTX_BYTES];
} aead_ctx;

/* Seal and open a full datagram, a forged one, and in place, through one table. */
static void aead_work(const pure_link_crypto *t, void *ctx, const uint8_t key[16]) {
    static uint8_t text[1420], sealed[1436], opened[1420];
    uint8_t nonce[12] = {0}, header[16] = {0x01, 0x10};
    memset(text, 0x5a, sizeof text);
    t->aead_init(ctx, key);
    for (int pn = 0; pn < 4; pn++) {
        nonce[11] = (uint8_t)pn;
        t->aead_seal(ctx, nonce, header, sizeof header, text, sizeof text, sealed);
        CHECK(t->aead_open(ctx, nonce, header, sizeof header, sealed, sizeof sealed, opened) == 0);
        sealed[100] ^= 1;
        CHECK(t->aead_open(ctx, nonce, header, sizeof header, sealed, sizeof sealed, opened) == -1);
        sealed[100] ^= 1;
        t->aead_seal(ctx, nonce, header, sizeof header, sealed, 100, sealed);
        CHECK(t->aead_open(ctx, nonce, header, sizeof header, sealed, 116, sealed) == 0);
    }
}

static void aead_no_alloc(void) {
    if (sodium_init() < 0) CHECK(0); /* the host's set-up, outside the window */
    aead_ctx ctx;
    uint8_t key[16] = {7};
    window_open();
    for (int change = 0; change < 3; change++) { /* key changes re-init the same context */
        key[0] = (uint8_t)change;
        aead_work(pure_link_crypto_default(), ctx.b, key);
        aead_work(pure_link_crypto_null(), ctx.b, key);
        pl_gcm_init_portable(ctx.b, key);
        pl_gcm_seal(ctx.b, key, key, 16, key, 16, (uint8_t[32]){0});
        if (pl_gcm_init_fast(ctx.b, key) == 0) pl_gcm_seal(ctx.b, key, key, 16, key, 16, (uint8_t[32]){0});
    }
    CHECK_EQ_U(window_close(), 0);
}

static void derive_no_alloc(void) {
    uint8_t long_key[200], msg[300], out[PL_HKDF_EXPAND_MOST], prk[32], e[32], dh[32], nonce[12];
    uint8_t pub_a[32], pub_b[32];
    memset(long_key, 3, sizeof long_key);
    memset(msg, 4, sizeof msg);
    memset(dh, 5, sizeof dh);
    memset(pub_a, 6, sizeof pub_a);
    memset(pub_b, 8, sizeof pub_b);
    pl_packet_key k;
    window_open();
    pl_hmac_sha256(prk, long_key, sizeof long_key, msg, sizeof msg); /* key longer than a block */
    pl_hkdf_extract(prk, NULL, 0, msg, sizeof msg);
    pl_hkdf_expand(out, sizeof out, prk, msg, sizeof msg);
    pl_epoch0_secret(e, dh);
    pl_epoch_next(e, e, dh, pub_a, pub_b, 1);
    pl_data_key(&k, e, pub_a, pub_b, 1, 1);
    pl_reply_key(&k, e, pub_b, pub_a, 1, 2, 1);
    pl_nonce(nonce, k.iv, 12345);
    volatile uint32_t id = pl_key_id(pub_a);
    (void)id;
    CHECK_EQ_U(window_close(), 0);
}

static void x25519_no_alloc(void) {
    if (sodium_init() < 0) CHECK(0);
    uint8_t a[32] = {1}, b[32] = {2}, pa[32], pb[32], s1[32], s2[32], zero_point[32] = {0};
    window_open();
    const pure_link_crypto *t = pure_link_crypto_default();
    t->x25519_base(pa, a);
    t->x25519_base(pb, b);
    const int r1 = t->x25519(s1, a, pb);
    const int r2 = t->x25519(s2, b, pa);
    const int r3 = t->x25519(s1, a, zero_point); /* refused: all-zero output */
    const unsigned long n = window_close();
    CHECK(r1 == 0 && r2 == 0 && r3 == -1);
    CHECK_EQ_U(n, 0);
}

TEST_MAIN(TEST_CASE(interposer_counts), TEST_CASE(aead_no_alloc), TEST_CASE(derive_no_alloc),
          TEST_CASE(x25519_no_alloc))
