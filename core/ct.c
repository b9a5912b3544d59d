/* ct.c: byte comparisons whose running time depends only on the length, for tags and
 * secrets (an early exit would tell an attacker how many leading bytes matched). */
#include <assert.h>

#include "crypto.h"

int pl_is_zero(const uint8_t *p, size_t n) {
    assert(p != NULL || n == 0);
    uint8_t acc = 0;
    for (size_t i = 0; i < n; i++) acc |= p[i];
    /* acc - 1 borrows into bit 8 only when acc == 0. */
    return (int)((((unsigned)acc) - 1u) >> 8 & 1u);
}

int pl_ct_compare(const uint8_t *a, const uint8_t *b, size_t n) {
    assert((a != NULL && b != NULL) || n == 0);
    uint8_t acc = 0;
    for (size_t i = 0; i < n; i++) acc |= (uint8_t)(a[i] ^ b[i]);
    return acc != 0;
}
