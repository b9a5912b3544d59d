/* gcm.h: the layout of an AES-128-GCM context and the two paths behind pl_gcm_*
 * (crypto.h).  Only the gcm*.c files include this. */
#ifndef PL_GCM_H
#define PL_GCM_H

#include <stddef.h>
#include <stdint.h>

#include <mbedtls/aes.h>

#include "crypto.h"

#define PL_AES128_ROUNDS     10u
#define PL_GCM_FAST_POWERS   8u   /* H^1..H^8: GHASH folds 8 blocks per reduction */
#define PL_GCM_NIBBLES       16u  /* entries of the portable path's 4-bit GHASH table */
#define PL_GCM_CTX_MAGIC     0x47434d31u /* "GCM1": marks an initialised context */

/* The AES-NI/PCLMULQDQ path.  Field elements are stored byte-reversed (so bit 127 of
 * the 128-bit little-endian integer is GCM's x^0 coefficient) and the powers of H are
 * pre-multiplied by x^-1, which saves a shift per multiplication (gcm_clmul.c). */
typedef struct pl_gcm_fast {
    _Alignas(16) uint8_t round_keys[PL_AES128_ROUNDS + 1u][16];
    _Alignas(16) uint8_t h_powers[PL_GCM_FAST_POWERS][16];    /* [i] = H^(i+1) * x^-1 */
    _Alignas(16) uint8_t h_karatsuba[PL_GCM_FAST_POWERS][16]; /* both halves: hi ^ lo of [i] */
} pl_gcm_fast;

/* The portable path: mbedTLS's AES block function (which allocates nothing) and a
 * 4-bit table of multiples of H for GHASH (GCM spec section 4.1, Shoup's method). */
typedef struct pl_gcm_portable {
    mbedtls_aes_context aes;
    uint64_t h_table_hi[PL_GCM_NIBBLES]; /* [n] = n(x) * H, high 64 bits, big-endian */
    uint64_t h_table_lo[PL_GCM_NIBBLES];
} pl_gcm_portable;

typedef struct pl_gcm_ctx {
    uint32_t magic;        /* PL_GCM_CTX_MAGIC once initialised */
    uint32_t path;         /* PL_GCM_PATH_* */
    const void *self;      /* where init ran: mbedTLS's context points into itself */
    union {
        pl_gcm_fast fast;
        pl_gcm_portable portable;
    } u;
} pl_gcm_ctx;

_Static_assert(sizeof(pl_gcm_ctx) <= PURE_LINK_AEAD_CTX_BYTES, "a GCM context fits the caller's AEAD context");
_Static_assert(_Alignof(pl_gcm_ctx) <= PL_GCM_CTX_ALIGN, "the caller's AEAD context is 16-aligned");

/* The fast path (gcm_clmul.c); its functions exist on every platform, and
 * pl_gcm_fast_supported() says whether calling the others is allowed. */
void pl_gcm_fast_init(pl_gcm_fast *f, const uint8_t key[16]);
void pl_gcm_fast_seal(const pl_gcm_fast *f, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                      const uint8_t *in, size_t len, uint8_t *out, uint8_t tag[16]);
/* Computes the tag over aad and the ciphertext in (len bytes, tag excluded). */
void pl_gcm_fast_tag(const pl_gcm_fast *f, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                     const uint8_t *in, size_t len, uint8_t tag[16]);
/* CTR part alone: out = in XOR keystream (used by open once the tag verified). */
void pl_gcm_fast_ctr(const pl_gcm_fast *f, const uint8_t nonce[12], const uint8_t *in, size_t len, uint8_t *out);

/* The portable path (gcm_portable.c). */
void pl_gcm_portable_init(pl_gcm_portable *p, const uint8_t key[16]);
void pl_gcm_portable_tag(const pl_gcm_portable *p, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                         const uint8_t *in, size_t len, uint8_t tag[16]);
void pl_gcm_portable_ctr(const pl_gcm_portable *p, const uint8_t nonce[12], const uint8_t *in, size_t len,
                         uint8_t *out);

#endif
