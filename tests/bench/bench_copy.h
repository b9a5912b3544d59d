/* bench_copy.h: what the core benchmarks share: a monotonic clock and a cipher that only
 * copies (its tag is zeros), so that the figures are the core's own work, not AES-GCM's. */
#ifndef BENCH_COPY_H
#define BENCH_COPY_H

#include <stdint.h>
#include <string.h>
#include <time.h>

#include "pure_link.h"

static uint64_t clock_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void copy_init(void *ctx, const uint8_t key[16]) { memcpy(ctx, key, 16); }
static void copy_seal(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len, const uint8_t *in,
                      size_t len, uint8_t *out) {
    (void)ctx, (void)nonce, (void)aad, (void)aad_len;
    memmove(out, in, len);
    memset(out + len, 0, 16);
}
static int copy_open(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len, const uint8_t *in,
                     size_t len, uint8_t *out) {
    (void)ctx, (void)nonce, (void)aad, (void)aad_len;
    memmove(out, in, len - 16);
    return 0;
}

/* The null table with the copy in place of its cipher, named `copy`. */
static pure_link_crypto copy_crypto(void) {
    pure_link_crypto c = *pure_link_crypto_null();
    c.name = "copy";
    c.aead_init = copy_init, c.aead_seal = copy_seal, c.aead_open = copy_open;
    return c;
}
#endif
