/* x25519.c: X25519 (RFC 7748) through libsodium, with the all-zero rule of spec/crypto.md.
 *
 * A peer that sends a low-order point forces the shared value to zero, whatever our
 * secret; such a "secret" is known to everyone.  We refuse it here, in one place, so no
 * caller can forget.  libsodium already returns -1 for it, but some of its versions leave
 * the output unwritten then, so the output is cleared and checked again here. */
#include <assert.h>
#include <string.h>

#include <sodium.h>

#include "crypto.h"

int pl_x25519(uint8_t out[32], const uint8_t scalar[32], const uint8_t point[32]) {
    assert(out != NULL && scalar != NULL && point != NULL);
    _Static_assert(crypto_scalarmult_BYTES == PURE_LINK_KEY_BYTES, "X25519 output size");
    _Static_assert(crypto_scalarmult_SCALARBYTES == PURE_LINK_KEY_BYTES, "X25519 scalar size");
    if (crypto_scalarmult(out, scalar, point) != 0 || pl_is_zero(out, PURE_LINK_KEY_BYTES)) {
        memset(out, 0, PURE_LINK_KEY_BYTES);
        return -1;
    }
    return 0;
}

void pl_x25519_base(uint8_t pub[32], const uint8_t secret[32]) {
    assert(pub != NULL && secret != NULL);
    /* A clamped scalar is a multiple of 8 between 2^254 and 2^255, so never a multiple of
     * the base point's prime order l (8l > 2^255): the result is never zero. */
    int rc = crypto_scalarmult_base(pub, secret);
    assert(rc == 0);
    (void)rc;
}
