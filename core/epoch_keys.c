/* epoch_keys.c: an epoch's packet keys as one side holds them (pl_epoch_keys), set up from
 * the epoch secret once; their AEAD contexts are expanded in the key cache (keycache.c). */
#include "internal.h"

void pl_aead_key(const pure_link *pl, void *ctx, uint8_t iv[12], const pl_packet_key *k) {
    pl->crypto->aead_init(ctx, k->key);
    memcpy(iv, k->iv, 12);
}

/* Derives a side's packet keys of one epoch into k (reply keys only when the reply run is
 * known: a sender learns it from the first authentic reply). */
void pl_epoch_keys_set(pure_link *pl, pl_epoch_keys *k, uint32_t epoch, const uint8_t secret[32],
                       const uint8_t sender_pub[32], const uint8_t receiver_pub[32], uint64_t run,
                       uint64_t reply_run, int reply_known) {
    pl_packet_key pk;
    pl_keys_wipe(pl, k);
    k->valid = 1;
    k->epoch = epoch;
    memcpy(k->secret, secret, 32);
    pl_data_key(&pk, secret, sender_pub, receiver_pub, run, epoch);
    memcpy(k->data_key, pk.key, sizeof k->data_key);
    memcpy(k->data_iv, pk.iv, sizeof k->data_iv);
    if (reply_known) {
        pl_reply_key(&pk, secret, receiver_pub, sender_pub, run, reply_run, epoch);
        memcpy(k->reply_key, pk.key, sizeof k->reply_key);
        memcpy(k->reply_iv, pk.iv, sizeof k->reply_iv);
        k->reply_run = reply_run;
        k->reply_valid = 1;
    }
    memset(&pk, 0, sizeof pk);
    pl_keys_derived(pl, k);
    (void)pl_keys_ctx(pl, k);  /* expanded now: the epoch's first packet follows */
}
