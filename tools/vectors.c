/* tools/vectors.c: writes spec/vectors/keys.txt, the key-schedule vectors of
 * spec/crypto.md, from fixed inputs.
 *
 *   build/vectors [PATH]     (stdout without PATH)
 *
 * tests/unit/test_crypto.c (keys_vectors_file) recomputes every line of the file from
 * its input lines, so the file and the code cannot drift apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"

typedef struct fixed_inputs {
    uint8_t sender_static_secret[32];
    uint8_t receiver_static_secret[32];
    uint64_t run, reply_run;
    uint8_t sender_ephemeral_secret[2][32];   /* OFFERs of epochs 1 and 2 */
    uint8_t receiver_ephemeral_secret[2][32]; /* ACCEPTs of epochs 1 and 2 */
} fixed_inputs;

/* Packet numbers whose nonces the file shows: small, one byte, 32-bit, above 32 bits. */
static const uint64_t vector_pns[] = {0u, 1u, 255u, 4294967296u, 72623859790382856u};

static void fill_pattern(uint8_t out[32], uint8_t first) {
    for (int i = 0; i < 32; i++) out[i] = (uint8_t)(first + i);
}

static void put_hex(FILE *f, const char *name, const uint8_t *p, size_t n) {
    fprintf(f, "%s = ", name);
    for (size_t i = 0; i < n; i++) fprintf(f, "%02x", p[i]);
    fputc('\n', f);
}

static void put_u64_line(FILE *f, const char *name, uint64_t v) {
    uint8_t b[8];
    for (int i = 7; i >= 0; i--, v >>= 8) b[i] = (uint8_t)v;
    put_hex(f, name, b, sizeof b);
}

static void put_packet_key(FILE *f, const char *prefix, const pl_packet_key *k) {
    char name[64];
    snprintf(name, sizeof name, "%s_key", prefix);
    put_hex(f, name, k->key, sizeof k->key);
    snprintf(name, sizeof name, "%s_iv", prefix);
    put_hex(f, name, k->iv, sizeof k->iv);
}

static void put_nonces(FILE *f, const char *prefix, const pl_packet_key *k) {
    for (size_t i = 0; i < sizeof vector_pns / sizeof vector_pns[0]; i++) {
        char name[96];
        uint8_t nonce[12];
        pl_nonce(nonce, k->iv, vector_pns[i]);
        snprintf(name, sizeof name, "%s_nonce_pn_%llu", prefix, (unsigned long long)vector_pns[i]);
        put_hex(f, name, nonce, sizeof nonce);
    }
}

/* Appends n bytes, or an integer big-endian, to a byte string being built. */
typedef struct bytes {
    uint8_t b[128];
    size_t n;
} bytes;

static void add(bytes *s, const void *p, size_t n) {
    memcpy(s->b + s->n, p, n);
    s->n += n;
}

static void add_uint(bytes *s, uint64_t v, size_t width) {
    for (size_t i = 0; i < width; i++) s->b[s->n + i] = (uint8_t)(v >> (8 * (width - 1 - i)));
    s->n += width;
}

/* Data and reply keys, and their nonces, of one epoch.  The info strings are built here
 * from the spec's text and must give the same keys as the core's pl_data_key/pl_reply_key. */
static int put_epoch_keys(FILE *f, const fixed_inputs *in, const uint8_t e[32], uint32_t epoch,
                          const uint8_t sender_pub[32], const uint8_t receiver_pub[32]) {
    char name[64];
    pl_packet_key k;
    uint8_t okm[28];
    bytes info = {.n = 0};
    fprintf(f, "\n# Epoch %u: data key (sender -> receiver) and reply key (receiver -> sender);\n"
               "# key || iv = HKDF-Expand(E(%u), info, 28).\n", epoch, epoch);
    add(&info, "pure-link 1 data", 16);
    add(&info, sender_pub, 32);
    add(&info, receiver_pub, 32);
    add_uint(&info, in->run, 8);
    add_uint(&info, epoch, 4);
    snprintf(name, sizeof name, "epoch%u_data_info", epoch);
    put_hex(f, name, info.b, info.n);
    pl_data_key(&k, e, sender_pub, receiver_pub, in->run, epoch);
    pl_hkdf_expand(okm, sizeof okm, e, info.b, info.n);
    if (memcmp(okm, k.key, 16) != 0 || memcmp(okm + 16, k.iv, 12) != 0) return -1;
    snprintf(name, sizeof name, "epoch%u_data", epoch);
    put_packet_key(f, name, &k);
    put_nonces(f, name, &k);

    info.n = 0;
    add(&info, "pure-link 1 reply", 17);
    add(&info, receiver_pub, 32);
    add(&info, sender_pub, 32);
    add_uint(&info, in->run, 8);
    add_uint(&info, in->reply_run, 8);
    add_uint(&info, epoch, 4);
    snprintf(name, sizeof name, "epoch%u_reply_info", epoch);
    put_hex(f, name, info.b, info.n);
    pl_reply_key(&k, e, receiver_pub, sender_pub, in->run, in->reply_run, epoch);
    pl_hkdf_expand(okm, sizeof okm, e, info.b, info.n);
    if (memcmp(okm, k.key, 16) != 0 || memcmp(okm + 16, k.iv, 12) != 0) return -1;
    snprintf(name, sizeof name, "epoch%u_reply", epoch);
    put_packet_key(f, name, &k);
    put_nonces(f, name, &k);
    return 0;
}

static int write_vectors(FILE *f, const fixed_inputs *in) {
    uint8_t sender_pub[32], receiver_pub[32], s[32], s_check[32], e[32];
    pl_x25519_base(sender_pub, in->sender_static_secret);
    pl_x25519_base(receiver_pub, in->receiver_static_secret);
    if (pl_x25519(s, in->sender_static_secret, receiver_pub) != 0) return -1;
    if (pl_x25519(s_check, in->receiver_static_secret, sender_pub) != 0 || memcmp(s, s_check, 32) != 0) return -1;
    const uint32_t key_id = pl_key_id(sender_pub);
    const uint8_t key_id_be[4] = {(uint8_t)(key_id >> 24), (uint8_t)(key_id >> 16), (uint8_t)(key_id >> 8),
                                  (uint8_t)key_id};

    fprintf(f, "# spec/vectors/keys.txt: key-schedule vectors for spec/crypto.md (wire version 1).\n"
               "# Written by build/vectors (tools/vectors.c); tests/unit/test_crypto.c recomputes\n"
               "# every line.  Lines are \"name = hex\"; integers are shown big-endian, exactly as\n"
               "# they enter a derivation.  X25519 keys are RFC 7748 byte strings.\n"
               "\n# Inputs.\n");
    put_hex(f, "sender_static_secret", in->sender_static_secret, 32);
    put_hex(f, "receiver_static_secret", in->receiver_static_secret, 32);
    put_u64_line(f, "run", in->run);
    put_u64_line(f, "reply_run", in->reply_run);
    for (int n = 0; n < 2; n++) {
        char name[64];
        snprintf(name, sizeof name, "epoch%d_sender_ephemeral_secret", n + 1);
        put_hex(f, name, in->sender_ephemeral_secret[n], 32);
        snprintf(name, sizeof name, "epoch%d_receiver_ephemeral_secret", n + 1);
        put_hex(f, name, in->receiver_ephemeral_secret[n], 32);
    }

    fprintf(f, "\n# Static keys: publics, key id = FNV-1a-32(sender public), S = X25519 output.\n");
    put_hex(f, "sender_static_public", sender_pub, 32);
    put_hex(f, "receiver_static_public", receiver_pub, 32);
    put_hex(f, "sender_key_id", key_id_be, sizeof key_id_be);
    put_hex(f, "static_shared", s, 32);
    pl_epoch0_secret(e, s);
    fprintf(f, "# E(0) = HKDF-Extract(salt = \"pure-link 1\", IKM = S)\n");
    put_hex(f, "epoch0_secret", e, 32);
    if (put_epoch_keys(f, in, e, 0, sender_pub, receiver_pub) != 0) return -1;

    for (uint32_t epoch = 1; epoch <= 2; epoch++) {
        uint8_t offer_pub[32], accept_pub[32], dh[32], dh_check[32];
        const uint8_t *offer_secret = in->sender_ephemeral_secret[epoch - 1];
        const uint8_t *accept_secret = in->receiver_ephemeral_secret[epoch - 1];
        pl_x25519_base(offer_pub, offer_secret);
        pl_x25519_base(accept_pub, accept_secret);
        if (pl_x25519(dh, offer_secret, accept_pub) != 0) return -1;
        if (pl_x25519(dh_check, accept_secret, offer_pub) != 0 || memcmp(dh, dh_check, 32) != 0) return -1;
        char name[64];
        fprintf(f, "\n# Epoch %u: E(%u) = HKDF-Extract(salt = E(%u), IKM = DH || offer public || accept public"
                   " || u32 %u)\n", epoch, epoch, epoch - 1, epoch);
        snprintf(name, sizeof name, "epoch%u_offer_public", epoch);
        put_hex(f, name, offer_pub, 32);
        snprintf(name, sizeof name, "epoch%u_accept_public", epoch);
        put_hex(f, name, accept_pub, 32);
        snprintf(name, sizeof name, "epoch%u_dh", epoch);
        put_hex(f, name, dh, 32);
        bytes ikm = {.n = 0};
        add(&ikm, dh, 32);
        add(&ikm, offer_pub, 32);
        add(&ikm, accept_pub, 32);
        add_uint(&ikm, epoch, 4);
        snprintf(name, sizeof name, "epoch%u_ikm", epoch);
        put_hex(f, name, ikm.b, ikm.n);
        uint8_t e_check[32];
        pl_hkdf_extract(e_check, e, 32, ikm.b, ikm.n);
        pl_epoch_next(e, e, dh, offer_pub, accept_pub, epoch);
        if (memcmp(e, e_check, 32) != 0) return -1;
        snprintf(name, sizeof name, "epoch%u_secret", epoch);
        put_hex(f, name, e, 32);
        if (put_epoch_keys(f, in, e, epoch, sender_pub, receiver_pub) != 0) return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    fixed_inputs in;
    fill_pattern(in.sender_static_secret, 0x00);
    fill_pattern(in.receiver_static_secret, 0x20);
    fill_pattern(in.sender_ephemeral_secret[0], 0x40);
    fill_pattern(in.receiver_ephemeral_secret[0], 0x60);
    fill_pattern(in.sender_ephemeral_secret[1], 0x80);
    fill_pattern(in.receiver_ephemeral_secret[1], 0xa0);
    in.run = 0x0123456789abcdefull;
    in.reply_run = 0xfedcba9876543210ull;

    FILE *f = stdout;
    if (argc > 1 && (f = fopen(argv[1], "w")) == NULL) {
        perror(argv[1]);
        return 1;
    }
    if (write_vectors(f, &in) != 0) {
        fprintf(stderr, "vectors: an X25519 result was all zero, or two derivations disagreed\n");
        return 1;
    }
    if (f != stdout && fclose(f) != 0) {
        perror(argv[1]);
        return 1;
    }
    return 0;
}
