/* aead_null.c: the null cipher table, for fuzzing and tests behind the AEAD.
 *
 * Seal copies the plaintext and appends a 16-byte checksum of key, nonce, lengths, aad
 * and plaintext; open recomputes it.  It hides nothing, but a packet whose bytes were
 * changed, or that was sealed under another key or nonce, still fails to open, so the
 * protocol's drop paths behave as with the real cipher.  Each checksum lane is a chain
 * of bijections of its state (XOR a 64-bit word, multiply by an odd constant), and every
 * input word goes into one lane, so changing any single input word — any bit — always
 * changes the tag.  X25519 stays real: both sides must still agree on secrets. */
#include <assert.h>
#include <string.h>

#include "crypto.h"

#define PL_NULL_CTX_MAGIC 0x4e554c4cu /* "NULL" */
#define PL_NULL_LANE_A_BASIS 0xcbf29ce484222325ull /* FNV-1a-64 */
#define PL_NULL_LANE_A_PRIME 0x00000100000001b3ull
#define PL_NULL_LANE_B_BASIS 0x6a09e667f3bcc908ull /* any other start and odd multiplier */
#define PL_NULL_LANE_B_PRIME 0x9e3779b97f4a7c15ull

typedef struct pl_null_ctx {
    uint32_t magic;
    uint8_t key[PURE_LINK_AEAD_KEY_BYTES];
} pl_null_ctx;

_Static_assert(sizeof(pl_null_ctx) <= PURE_LINK_AEAD_CTX_BYTES, "the null context fits the AEAD context");

/* Two lanes take alternate 64-bit words, so their multiply chains run side by side. */
typedef struct checksum {
    uint64_t lane[2];
} checksum;

/* n <= 8 bytes as a little-endian integer on every host. */
static uint64_t load_le64(const uint8_t *p, size_t n) {
    assert(n <= 8);
    uint8_t b[8] = {0};
    memcpy(b, p, n);
    uint64_t w;
    memcpy(&w, b, sizeof w);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* Bytes as little-endian words on every host, the last word zero-padded (the lengths,
 * absorbed first, make the padding unambiguous).  Word i goes to lane i mod 2. */
static void checksum_add(checksum *c, const uint8_t *p, size_t n) {
    uint64_t a = c->lane[0], b = c->lane[1];
    for (; n >= 16; p += 16, n -= 16) {
        a = (a ^ load_le64(p, 8)) * PL_NULL_LANE_A_PRIME;
        b = (b ^ load_le64(p + 8, 8)) * PL_NULL_LANE_B_PRIME;
    }
    if (n > 0) a = (a ^ load_le64(p, n < 8 ? n : 8)) * PL_NULL_LANE_A_PRIME;
    if (n > 8) b = (b ^ load_le64(p + 8, n - 8)) * PL_NULL_LANE_B_PRIME;
    c->lane[0] = a;
    c->lane[1] = b;
}

static void checksum_add_u64(checksum *c, uint64_t v) {
    c->lane[0] = (c->lane[0] ^ v) * PL_NULL_LANE_A_PRIME;
    c->lane[1] = (c->lane[1] ^ v) * PL_NULL_LANE_B_PRIME;
}

static void null_tag(const pl_null_ctx *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                     const uint8_t *text, size_t len, uint8_t tag[16]) {
    checksum c = {{PL_NULL_LANE_A_BASIS, PL_NULL_LANE_B_BASIS}};
    checksum_add(&c, ctx->key, sizeof ctx->key);
    checksum_add(&c, nonce, PURE_LINK_NONCE_BYTES);
    checksum_add_u64(&c, aad_len); /* lengths first: moving a byte from aad to text changes the tag */
    checksum_add_u64(&c, len);
    checksum_add(&c, aad, aad_len);
    checksum_add(&c, text, len);
    for (int i = 0; i < 8; i++) {
        tag[i] = (uint8_t)(c.lane[0] >> (56 - 8 * i));
        tag[8 + i] = (uint8_t)(c.lane[1] >> (56 - 8 * i));
    }
}

static const pl_null_ctx *null_check(const void *ctx) {
    assert(ctx != NULL);
    const pl_null_ctx *c = ctx;
    assert(c->magic == PL_NULL_CTX_MAGIC);
    return c;
}

static void null_init(void *ctx, const uint8_t key[16]) {
    assert(ctx != NULL && key != NULL);
    pl_null_ctx *c = ctx;
    c->magic = PL_NULL_CTX_MAGIC;
    memcpy(c->key, key, sizeof c->key);
}

static void null_seal(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                      const uint8_t *in, size_t len, uint8_t *out) {
    const pl_null_ctx *c = null_check(ctx);
    assert(nonce != NULL && out != NULL && (aad != NULL || aad_len == 0) && (in != NULL || len == 0));
    if (len > 0) memmove(out, in, len);
    null_tag(c, nonce, aad, aad_len, out, len, out + len);
}

static int null_open(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                     const uint8_t *in, size_t len, uint8_t *out) {
    const pl_null_ctx *c = null_check(ctx);
    assert(nonce != NULL && in != NULL && (aad != NULL || aad_len == 0));
    if (len < PURE_LINK_TAG_BYTES) return -1;
    const size_t text_len = len - PURE_LINK_TAG_BYTES;
    uint8_t tag[PURE_LINK_TAG_BYTES];
    null_tag(c, nonce, aad, aad_len, in, text_len, tag);
    if (pl_ct_compare(tag, in + text_len, sizeof tag) != 0) return -1;
    assert(out != NULL || text_len == 0);
    if (text_len > 0) memmove(out, in, text_len);
    return 0;
}

static const pure_link_crypto crypto_null = {
    .name = "null",
    .x25519 = pl_x25519,
    .x25519_base = pl_x25519_base,
    .aead_init = null_init,
    .aead_seal = null_seal,
    .aead_open = null_open,
};

PURE_LINK_API const pure_link_crypto *pure_link_crypto_null(void) {
    return &crypto_null;
}
