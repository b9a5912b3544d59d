/* crypto_table.c: the default crypto table — X25519 from libsodium, the core's own
 * AES-128-GCM (gcm.c).  A const table: the core keeps no mutable globals. */
#include "crypto.h"

static const pure_link_crypto crypto_default = {
    .name = "x25519-libsodium+aes128gcm",
    .x25519 = pl_x25519,
    .x25519_base = pl_x25519_base,
    .aead_init = pl_gcm_init,
    .aead_seal = pl_gcm_seal,
    .aead_open = pl_gcm_open,
};

PURE_LINK_API const pure_link_crypto *pure_link_crypto_default(void) {
    return &crypto_default;
}
