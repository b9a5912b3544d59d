/* fuzz_endpoint.c: libFuzzer target for the whole endpoint, behind a cipher that opens
 * everything, so that fuzzed bytes reach the frame parser and both state machines.
 *
 *   make fuzz                      (builds build/fuzz_* and runs each FUZZ_SECONDS)
 *   build/fuzz_endpoint -max_len=8192 -runs=10000000 tests/fuzz/corpus/endpoint
 *
 * The input is a script: repeated [u8 op][u16 len][len bytes], at most FP_STEPS_MOST steps.  op bit 0 picks the
 * endpoint that receives the datagram (the receiver, or the sender's reply path), bits 1-7
 * advance the clock (op >> 1 milliseconds) before it; after every datagram both endpoints
 * run their timers, the hosts answer every event, and every datagram they pull is fed to the
 * other side.  Every input starts from the same pair: a sender with records queued that has
 * sent its first flight (fuzz_pair.h restores it from a snapshot).  Properties beyond "no
 * crash, no assertion": the receiver never hands over a record twice, and never pulls a
 * datagram larger than PURE_LINK_DATAGRAM_MOST.
 *
 * Built with FUZZ_AEAD_REAL (build/fuzz_endpoint_aead), the pair runs the real AES-128-GCM
 * and X25519: fuzzed bytes then mostly die at the tag, which is the path an attacker has. */
#include "fuzz_pair.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef FUZZ_AEAD_REAL
static void open_all_init(void *ctx, const uint8_t key[16]) { memcpy(ctx, key, 16); }
static void open_all_seal(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                          const uint8_t *in, size_t len, uint8_t *out) {
    (void)ctx, (void)nonce, (void)aad, (void)aad_len;
    memmove(out, in, len);
    memset(out + len, 0, 16);
}
static int open_all_open(const void *ctx, const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                         const uint8_t *in, size_t len, uint8_t *out) {
    (void)ctx, (void)nonce, (void)aad, (void)aad_len;
    if (len < 16) return -1;
    memmove(out, in, len - 16);
    return 0;
}

/* A stand-in for X25519 with the same algebra where it matters (DH(a, B) == DH(b, A) for
 * B = base(b), A = base(a)) and a fraction of the cost: the fuzzer explores the state
 * machines, not the curve.  Public = secret XOR a constant; shared = XOR of both secrets'
 * images, which is symmetric. */
static const uint8_t fake_base_mask[32] = {0x5a, 0x17, 0xc3, 0x88, 0x21, 0x9e, 0x44, 0x0b};
static void fake_x25519_base(uint8_t pub[32], const uint8_t secret[32]) {
    for (int i = 0; i < 32; i++) pub[i] = (uint8_t)(secret[i] ^ fake_base_mask[i]);
}
static int fake_x25519(uint8_t out[32], const uint8_t scalar[32], const uint8_t point[32]) {
    uint8_t any = 0;
    for (int i = 0; i < 32; i++) {
        out[i] = (uint8_t)(scalar[i] ^ point[i] ^ fake_base_mask[i]); /* = a ^ b: symmetric */
        any |= out[i];
    }
    return any ? 0 : -1;
}
#endif

static const pure_link_crypto *target_crypto(void) {
#ifdef FUZZ_AEAD_REAL
    return pure_link_crypto_default();
#else
    static pure_link_crypto table;
    table = *pure_link_crypto_null();
    table.name = "open-all";
    table.aead_init = open_all_init, table.aead_seal = open_all_seal, table.aead_open = open_all_open;
    table.x25519 = fake_x25519, table.x25519_base = fake_x25519_base;
    return &table;
#endif
}

/* The script from the snapshot. */
static void run(const uint8_t *data, size_t size) {
    uint64_t now = fp_now_ns;
    for (int step = 0; step < FP_STEPS_MOST && size >= 3; step++) {
        uint8_t op = data[0];
        size_t len = (size_t)data[1] << 8 | data[2];
        data += 3, size -= 3;
        if (len > size) len = size;
        now += (uint64_t)(op >> 1) * 1000000u;
        fp_side *to = (op & 1) ? &fp_a : &fp_b, *from = (op & 1) ? &fp_b : &fp_a;
        pure_link_receive(to->pl, &from->addr, data, len, now);
        data += len, size -= len;
        fp_step(to, from, now);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (fp_a.pl == NULL) fp_setup(target_crypto(), 20, 300, 0, 0);
    fp_run(run, data, size);
    return 0;
}
