/* fuzz_sequence.c: libFuzzer target for a receiver in the middle of a transfer, fed a
 * sequence of packets that are valid up to their frames: the harness writes each header
 * as the live sender would (its key id, run, epoch, a packet number) and seals the fuzzed
 * frames with the sender's own keys, so every datagram opens and its frames reach the
 * receiver's state machine, interleaved with the real transfer going on.
 *
 *   build/fuzz_sequence -max_len=8192 tests/fuzz/corpus/sequence
 *
 * Under the null AEAD (the default build) and under AES-128-GCM (FUZZ_AEAD_REAL,
 * build/fuzz_sequence_aead): the harness seals through the endpoint's crypto table, so both
 * open alike.  The input is repeated [u8 op][u16 len][len bytes of frames] (at most
 * FP_STEPS_MOST steps); op bits 0-1 pick
 * the packet number (PN_*), bits 2-7 advance the clock (op >> 2 milliseconds) first; len 0
 * only lets time pass.  After each packet both sides run their timers and the hosts answer
 * every event; the receiver never hands over a record twice (fuzz_pair.h).
 *
 * Checked, so that the target keeps doing what it says: at the snapshot the transfer is under
 * way (some records handed over, not all; bytes in flight), and no datagram the harness seals
 * is dropped for its header, its key or its tag (PN_AHEAD aside: a number that far past the
 * last may decode to another).  Over the corpus a third of them open, a third are replays
 * and a third have frames the receiver cannot read. */
#include "fuzz_pair.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
    PN_NEXT = 0,     /* the sender's next packet number (its own packet then looks replayed) */
    PN_REPLAY = 1,   /* the last one it sent */
    PN_AHEAD = 2,    /* PN_AHEAD_BY past the next */
    PN_PREVIOUS = 3  /* the next, under the previous epoch's keys when it still has them */
};
#define PN_AHEAD_BY 64u

#define SETUP_RECORDS      60     /* queued before the snapshot, sizes up to ... */
#define SETUP_RECORD_BYTES 4000
#define SETUP_ROUNDS       45     /* exchanges 1 ms apart before the snapshot: then 20 of the records
                                     are handed over and 11 KiB are in flight (mid-transfer) */

static const pure_link_crypto *target_crypto(void) {
#ifdef FUZZ_AEAD_REAL
    return pure_link_crypto_default();
#else
    return pure_link_crypto_null();
#endif
}

/* The datagram the sender would have sent with these frames: its header, sealed. */
static size_t seal(uint8_t out[PURE_LINK_DATAGRAM_MOST], pl_sender *s, int mode, const uint8_t *frames,
                   size_t len) {
    pl_epoch_keys *k = PL_SENDER_KEYS(s);
    if (mode == PN_PREVIOUS && s->keys[s->key_cur ^ 1].valid) k = &s->keys[s->key_cur ^ 1];
    uint64_t pn = s->pn_next;
    if (mode == PN_REPLAY && pn > 0) pn--;
    if (mode == PN_AHEAD) pn += PN_AHEAD_BY;
    pl_header h;
    memset(&h, 0, sizeof h);
    /* A number at or below what the receiver acknowledged goes out whole, as a probe would. */
    const int anchored = s->pn_anchor != PL_PN_NONE && pn <= s->pn_anchor;
    h.pn_len = (uint8_t)(anchored ? PL_PN_LEN_MOST : pl_pn_len_for(pn, s->pn_anchor));
    h.epoch_field = pl_epoch_field(k->epoch);
    h.key_id = fp_a.pl->static_key_id;
    h.run = s->run;
    h.pn_truncated = pl_pn_truncate(pn, h.pn_len);
    const size_t head = pl_header_encode(out, PURE_LINK_DATAGRAM_MOST, &h);
    require(head > 0);
    const size_t room = PURE_LINK_DATAGRAM_MOST - head - PURE_LINK_TAG_BYTES;
    if (len > room) len = room;
    memcpy(out + head, frames, len);
    uint8_t nonce[12];
    pl_nonce(nonce, k->data_iv, pn);
    fp_a.pl->crypto->aead_seal(pl_keys_ctx(fp_a.pl, k)->data, nonce, out, head, out + head, len, out + head);
    return head + len + PURE_LINK_TAG_BYTES;
}

/* The receiver's drops that a datagram sealed as the sender would can never earn. */
static uint64_t drops_of_a_forgery(void) {
    pure_link_stats st;
    st.version = PURE_LINK_STATS_VERSION;
    require(pure_link_stats_get(fp_b.pl, -1, &st) == 0);
    return st.dropped_bad_header + st.dropped_unknown_key + st.dropped_auth;
}

static void setup(void) {
    fp_setup(target_crypto(), SETUP_RECORDS, SETUP_RECORD_BYTES, SETUP_ROUNDS, 1000000);
    pure_link_stats st;
    st.version = PURE_LINK_STATS_VERSION;
    require(pure_link_stats_get(fp_a.pl, 0, &st) == 0);
    require(fp_b.next_record[0] > 0 && fp_b.next_record[0] < SETUP_RECORDS && st.bytes_in_flight > 0);
}

/* The script from the snapshot. */
static void run(const uint8_t *data, size_t size) {
    uint64_t now = fp_now_ns;
    pl_sender *s = &fp_a.pl->senders[0];
    for (int step = 0; step < FP_STEPS_MOST && size >= 3; step++) {
        const uint8_t op = data[0];
        size_t len = (size_t)data[1] << 8 | data[2];
        data += 3, size -= 3;
        if (len > size) len = size;
        now += (uint64_t)(op >> 2) * 1000000u;
        if (len > 0 && s->open) {
            uint8_t d[PURE_LINK_DATAGRAM_MOST];
            const size_t n = seal(d, s, op & 3, data, len);
            const uint64_t drops = drops_of_a_forgery();
            pure_link_receive(fp_b.pl, &fp_a.addr, d, n, now);
            require((op & 3) == PN_AHEAD || drops_of_a_forgery() == drops);
        }
        data += len, size -= len;
        fp_step(&fp_b, &fp_a, now);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (fp_a.pl == NULL) setup();
    fp_run(run, data, size);
    return 0;
}
