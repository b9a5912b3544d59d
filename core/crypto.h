/* crypto.h: the core's internal crypto — HMAC/HKDF-SHA256, the key schedule of
 * spec/crypto.md, and the allocation-free AES-128-GCM behind pure_link_crypto.
 *
 * Nothing here allocates, reads a clock or keeps global state: every context lives in
 * memory the caller passes in.  Secrets that pass through stack buffers are wiped. */
#ifndef PL_CRYPTO_H
#define PL_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#include "pure_link.h"

/* ---- Sizes. ---- */
#define PL_HASH_BYTES        32u              /* SHA-256 output, HKDF PRK, epoch secret */
#define PL_HMAC_BLOCK_BYTES  64u              /* SHA-256 block: HMAC pads keys to this */
#define PL_HKDF_EXPAND_MOST  (255u * PL_HASH_BYTES) /* RFC 5869: at most 255 blocks */
#define PL_SECRET_BYTES      32u              /* epoch secrets E(n) */
#define PL_GCM_BLOCK_BYTES   16u

_Static_assert(PL_SECRET_BYTES == PL_HASH_BYTES, "an epoch secret is one HKDF-Extract output");
_Static_assert(PURE_LINK_KEY_BYTES == 32u, "X25519 keys are 32 bytes");
_Static_assert(PURE_LINK_TAG_BYTES == PL_GCM_BLOCK_BYTES, "the GCM tag is one full block");

/* ---- AEAD limits (spec/crypto.md section 10). ---- */
#define PL_AEAD_SEALS_MOST        (UINT64_C(1) << 23) /* packets sealed under one key, at most */
#define PL_AEAD_FAILED_OPENS_MOST (UINT64_C(1) << 52) /* failed opens under one key before it is retired */

/* ---- Key-derivation strings (spec/crypto.md "Strings").  They name the version: a new
 * wire version changes them, so two versions never open each other's packets. ---- */
#define PL_LABEL_SALT0  "pure-link 1"         /* salt of E(0) */
#define PL_LABEL_DATA   "pure-link 1 data"    /* prefix of the data-key info */
#define PL_LABEL_REPLY  "pure-link 1 reply"   /* prefix of the reply-key info */
#define PL_LABEL_LEN(s) (sizeof(s) - 1u)      /* the strings go in without their NUL */

_Static_assert(PL_LABEL_LEN(PL_LABEL_SALT0) == 11u, "spec/crypto.md: salt0 is 11 bytes");
_Static_assert(PL_LABEL_LEN(PL_LABEL_DATA) == 16u, "spec/crypto.md: data label is 16 bytes");
_Static_assert(PL_LABEL_LEN(PL_LABEL_REPLY) == 17u, "spec/crypto.md: reply label is 17 bytes");
_Static_assert(PURE_LINK_VERSION == 1u, "a new version must change the labels above too");

/* ---- HMAC-SHA256 (RFC 2104) and HKDF-SHA256 (RFC 5869). ---- */
void pl_hmac_sha256(uint8_t out[32], const uint8_t *key, size_t key_len, const uint8_t *msg, size_t msg_len);
/* salt_len 0 means the RFC's default salt of 32 zero bytes (HMAC gives the same result). */
void pl_hkdf_extract(uint8_t prk[32], const uint8_t *salt, size_t salt_len, const uint8_t *ikm, size_t ikm_len);
/* out_len <= PL_HKDF_EXPAND_MOST. */
void pl_hkdf_expand(uint8_t *out, size_t out_len, const uint8_t prk[32], const uint8_t *info, size_t info_len);

/* ---- The key schedule (spec/crypto.md). ---- */
/* FNV-1a-32 of a static public key: the key id of the sender packet header (a hint only). */
uint32_t pl_key_id(const uint8_t pub[32]);
/* E(0) = HKDF-Extract(salt0, S); S is the static X25519 output and must not be all zero. */
void pl_epoch0_secret(uint8_t e0[32], const uint8_t static_shared[32]);
/* E(n) = HKDF-Extract(E(n-1), DH(n) || offer_pub || accept_pub || u32 n), n = epoch >= 1;
 * dh must not be all zero.  next may alias prev (the chain overwrites itself). */
void pl_epoch_next(uint8_t next[32], const uint8_t prev[32], const uint8_t dh[32], const uint8_t offer_pub[32],
                   const uint8_t accept_pub[32], uint32_t epoch);

typedef struct pl_packet_key {
    uint8_t key[PURE_LINK_AEAD_KEY_BYTES];
    uint8_t iv[PURE_LINK_NONCE_BYTES];
} pl_packet_key;

#define PL_PACKET_KEY_BYTES (PURE_LINK_AEAD_KEY_BYTES + PURE_LINK_NONCE_BYTES) /* 28: one HKDF block */
_Static_assert(PL_PACKET_KEY_BYTES <= PL_HASH_BYTES, "a packet key costs one HKDF-Expand block");

/* Sender -> receiver packets of `run` in `epoch`. */
void pl_data_key(pl_packet_key *k, const uint8_t e[32], const uint8_t sender_pub[32],
                 const uint8_t receiver_pub[32], uint64_t run, uint32_t epoch);
/* Receiver -> sender packets: the receiver's `reply_run` answering the sender's `run`. */
void pl_reply_key(pl_packet_key *k, const uint8_t e[32], const uint8_t receiver_pub[32],
                  const uint8_t sender_pub[32], uint64_t run, uint64_t reply_run, uint32_t epoch);
/* nonce = iv XOR (0x00000000 || u64 pn), big-endian. */
void pl_nonce(uint8_t nonce[12], const uint8_t iv[12], uint64_t pn);

/* ---- X25519 over libsodium (both refuse an all-zero result: spec/crypto.md). ---- */
/* out = X25519(scalar, point); 0, or -1 with out zeroed when the result is all zero. */
int pl_x25519(uint8_t out[32], const uint8_t scalar[32], const uint8_t point[32]);
void pl_x25519_base(uint8_t pub[32], const uint8_t secret[32]);

/* ---- AES-128-GCM with 96-bit nonces, in a caller context of PURE_LINK_AEAD_CTX_BYTES
 * bytes aligned to 16.  Two paths give identical bytes: AES-NI + PCLMULQDQ when the CPU
 * has them, else mbedTLS's AES block function with a table GHASH.  A context holds a
 * pointer into itself (mbedTLS's round keys): never copy an initialised context — run
 * init again in the new place. ---- */
#define PL_GCM_CTX_ALIGN 16u
enum { PL_GCM_PATH_FAST = 1, PL_GCM_PATH_PORTABLE = 2 };

/* Picks the fast path when this CPU has it. */
void pl_gcm_init(void *ctx, const uint8_t key[16]);
/* Forces a path (for tests and benchmarks).  init_fast returns -1 without AES-NI/PCLMUL. */
void pl_gcm_init_portable(void *ctx, const uint8_t key[16]);
int pl_gcm_init_fast(void *ctx, const uint8_t key[16]);
/* PL_GCM_PATH_* of an initialised context. */
int pl_gcm_path(const void *ctx);
int pl_gcm_fast_supported(void);
/* The pure_link_crypto AEAD operations: out gets len + 16 bytes (seal) or len - 16 (open);
 * in == out allowed.  open returns -1, writing nothing, when the tag does not verify. */
void pl_gcm_seal(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len, const uint8_t *in,
                 size_t len, uint8_t *out);
int pl_gcm_open(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len, const uint8_t *in,
                size_t len, uint8_t *out);

/* ---- Small helpers. ---- */
/* 1 when all n bytes are zero; runs in time that depends only on n. */
int pl_is_zero(const uint8_t *p, size_t n);
/* 0 when equal; runs in time that depends only on n. */
int pl_ct_compare(const uint8_t *a, const uint8_t *b, size_t n);

#endif
