/* bench_crypto.c: nanoseconds per crypto operation of the core, beside mbedTLS and
 * libsodium measured in the same run.
 *
 * A full datagram is PURE_LINK_DATAGRAM_MOST = 1,452 B: a 16 B header (the AEAD's
 * associated data), 1,420 B of frames, the 16 B tag.  Each figure is the best of
 * BENCH_ROUNDS rounds (the machine is shared; the minimum is the least disturbed). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <mbedtls/gcm.h>
#include <sodium.h>

#include "crypto.h"

#define BENCH_ROUNDS 7
#define HEADER_BYTES 16u
#define TEXT_BYTES (PURE_LINK_DATAGRAM_MOST - HEADER_BYTES - PURE_LINK_TAG_BYTES)

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct bench_state {
    _Alignas(16) uint8_t ctx[PURE_LINK_AEAD_CTX_BYTES];
    uint8_t key[16], nonce[12], header[HEADER_BYTES];
    uint8_t text[TEXT_BYTES], sealed[TEXT_BYTES + 16], opened[TEXT_BYTES];
    uint8_t secret[32], point[32], out[32];
    mbedtls_gcm_context gcm;
    crypto_aead_aes256gcm_state sodium_state;
    const pure_link_crypto *table;
    volatile int sink;
} bench_state;

typedef void (*bench_fn)(bench_state *s);

static double measure(bench_state *s, bench_fn fn, int iterations) {
    double best = 1e30;
    for (int r = 0; r < BENCH_ROUNDS; r++) {
        const uint64_t t0 = now_ns();
        for (int i = 0; i < iterations; i++) fn(s);
        const double ns = (double)(now_ns() - t0) / iterations;
        if (ns < best) best = ns;
    }
    return best;
}

static void our_seal(bench_state *s) {
    s->nonce[11]++;
    pl_gcm_seal(s->ctx, s->nonce, s->header, sizeof s->header, s->text, sizeof s->text, s->sealed);
}

static void our_open(bench_state *s) {
    s->sink += pl_gcm_open(s->ctx, s->nonce, s->header, sizeof s->header, s->sealed, sizeof s->sealed, s->opened);
}

static void table_seal(bench_state *s) {
    s->nonce[11]++;
    s->table->aead_seal(s->ctx, s->nonce, s->header, sizeof s->header, s->text, sizeof s->text, s->sealed);
}

static void table_open(bench_state *s) {
    s->sink += s->table->aead_open(s->ctx, s->nonce, s->header, sizeof s->header, s->sealed, sizeof s->sealed,
                                   s->opened);
}

static void mbed_seal(bench_state *s) {
    s->nonce[11]++;
    s->sink += mbedtls_gcm_crypt_and_tag(&s->gcm, MBEDTLS_GCM_ENCRYPT, sizeof s->text, s->nonce, 12, s->header,
                                         sizeof s->header, s->text, s->sealed, 16, s->sealed + sizeof s->text);
}

static void mbed_open(bench_state *s) {
    s->sink += mbedtls_gcm_auth_decrypt(&s->gcm, sizeof s->text, s->nonce, 12, s->header, sizeof s->header,
                                        s->sealed + sizeof s->text, 16, s->sealed, s->opened);
}

static void sodium_seal(bench_state *s) {
    unsigned long long n;
    s->nonce[11]++;
    crypto_aead_aes256gcm_encrypt_afternm(s->sealed, &n, s->text, sizeof s->text, s->header, sizeof s->header, NULL,
                                          s->nonce, &s->sodium_state);
}

static void sodium_open(bench_state *s) {
    unsigned long long n;
    s->sink += crypto_aead_aes256gcm_decrypt_afternm(s->opened, &n, NULL, s->sealed, sizeof s->sealed, s->header,
                                                     sizeof s->header, s->nonce, &s->sodium_state);
}

static void data_key(bench_state *s) {
    pl_packet_key k;
    pl_data_key(&k, s->secret, s->point, s->out, 42, 1);
    s->sink += k.key[0];
}

static void epoch_next(bench_state *s) {
    pl_epoch_next(s->secret, s->secret, s->point, s->out, s->out, 1);
}

static void x25519(bench_state *s) {
    s->sink += pl_x25519(s->out, s->secret, s->point);
}

static void x25519_base(bench_state *s) {
    pl_x25519_base(s->out, s->secret);
}

static void init_fast(bench_state *s) {
    s->key[0]++;
    s->sink += pl_gcm_init_fast(s->ctx, s->key);
}

static void init_portable(bench_state *s) {
    s->key[0]++;
    pl_gcm_init_portable(s->ctx, s->key);
}

static void row(const char *what, double ns) {
    printf("%-44s %10.1f ns\n", what, ns);
}

/* Seal and open timed on the same sealed packet (open must succeed: checked). */
static void aead_rows(bench_state *s, const char *name, bench_fn seal, bench_fn open, int n, double out[2]) {
    char label[96];
    seal(s);
    s->sink = 0;
    open(s);
    if (s->sink != 0 || memcmp(s->opened, s->text, sizeof s->text) != 0) {
        printf("%s: open of its own packet failed\n", name);
        return;
    }
    out[0] = measure(s, seal, n);
    seal(s);
    out[1] = measure(s, open, n);
    snprintf(label, sizeof label, "%s seal", name);
    row(label, out[0]);
    snprintf(label, sizeof label, "%s open", name);
    row(label, out[1]);
}

int main(void) {
    static bench_state s;
    if (sodium_init() < 0) return 1;
    randombytes_buf(&s, offsetof(bench_state, gcm)); /* random key, nonce, text, secrets */
    const int n = 20000;
    printf("pure-link crypto, %u B datagram: %u B header as AAD + %u B sealed text + %u B tag; best of %d\n\n",
           PURE_LINK_DATAGRAM_MOST, HEADER_BYTES, (unsigned)TEXT_BYTES, PURE_LINK_TAG_BYTES, BENCH_ROUNDS);
    double fast[2] = {0, 0}, portable[2] = {0, 0}, mbed[2] = {0, 0}, sodium[2] = {0, 0}, null[2] = {0, 0};

    if (pl_gcm_init_fast(s.ctx, s.key) == 0) aead_rows(&s, "AES-128-GCM fast (AES-NI+PCLMUL)", our_seal, our_open, n, fast);
    else printf("AES-128-GCM fast path: not supported by this CPU\n");
    pl_gcm_init_portable(s.ctx, s.key);
    aead_rows(&s, "AES-128-GCM portable (mbedTLS AES)", our_seal, our_open, n / 4, portable);
    s.table = pure_link_crypto_null();
    s.table->aead_init(s.ctx, s.key);
    aead_rows(&s, "null cipher (checksum)", table_seal, table_open, n / 4, null);

    mbedtls_gcm_init(&s.gcm);
    if (mbedtls_gcm_setkey(&s.gcm, MBEDTLS_CIPHER_ID_AES, s.key, 128) == 0)
        aead_rows(&s, "mbedtls_gcm_crypt_and_tag AES-128", mbed_seal, mbed_open, n / 4, mbed);
    mbedtls_gcm_free(&s.gcm);
    if (crypto_aead_aes256gcm_is_available()) {
        uint8_t key256[32];
        randombytes_buf(key256, sizeof key256);
        crypto_aead_aes256gcm_beforenm(&s.sodium_state, key256);
        aead_rows(&s, "libsodium crypto_aead_aes256gcm AES-256", sodium_seal, sodium_open, n, sodium);
    } else {
        printf("libsodium AES-256-GCM: not available on this CPU\n");
    }

    printf("\n");
    row("AEAD init, fast path (key change)", measure(&s, init_fast, n));
    row("AEAD init, portable path (key change)", measure(&s, init_portable, n / 4));
    row("packet key: HKDF-Expand (pl_data_key)", measure(&s, data_key, n / 10));
    row("epoch step: HKDF-Extract (pl_epoch_next)", measure(&s, epoch_next, n / 10));
    s.point[31] &= 0x7f;
    crypto_scalarmult_base(s.point, s.point); /* a valid peer public */
    row("X25519 (pl_x25519)", measure(&s, x25519, n / 50));
    row("X25519 base (pl_x25519_base)", measure(&s, x25519_base, n / 50));

    if (fast[0] > 0 && mbed[0] > 0)
        printf("\nratio mbedTLS / fast: seal %.1fx, open %.1fx; portable / fast: seal %.1fx, open %.1fx\n",
               mbed[0] / fast[0], mbed[1] / fast[1], portable[0] / fast[0], portable[1] / fast[1]);
    if (fast[0] > 0 && sodium[0] > 0)
        printf("ratio libsodium AES-256 / fast: seal %.2fx, open %.2fx\n", sodium[0] / fast[0], sodium[1] / fast[1]);
    printf("goal: seal or open of a full datagram <= 1000 ns\n");
    return 0;
}
