/* test_vectors.c: spec/vectors/packets.txt — every packet opens under the epoch-0 keys of
 * the fixed inputs, seals again to the same bytes, and carries the frame it is named for;
 * spec/vectors/numbers.txt — every packet's epoch and number are recovered from its header
 * against the reader's state the file gives, and it opens under that epoch's key;
 * spec/vectors/refused.txt — one reply per REFUSED reason opens, seals again and decodes. */
#include "harness.h"
#include "crypto.h"
#include "wire.h"

#define LINES_MOST 128
typedef struct line { char name[64]; uint8_t v[PURE_LINK_DATAGRAM_MOST]; size_t n; } line;
static line lines[LINES_MOST];
static size_t nlines;

static int unhex(const char *s, uint8_t *out, size_t most) {
    size_t n = 0;
    for (; s[0] && s[1] && s[0] != '\n'; s += 2) {
        unsigned b;
        if (n == most || sscanf(s, "%2x", &b) != 1) return -1;
        out[n++] = (uint8_t)b;
    }
    return (int)n;
}

static void load(const char *path) {
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char buf[4096];
    nlines = 0;
    while (fgets(buf, sizeof buf, f)) {
        if (buf[0] == '#' || buf[0] == '\n') continue;
        char *eq = strstr(buf, " = ");
        CHECK(eq != NULL && nlines < LINES_MOST);
        line *l = &lines[nlines++];
        *eq = 0;
        snprintf(l->name, sizeof l->name, "%.63s", buf);
        int n = unhex(eq + 3, l->v, sizeof l->v);
        CHECK(n >= 0);
        l->n = (size_t)n;
    }
    fclose(f);
}

static const line *find(const char *type, const char *field) {
    char name[64];
    snprintf(name, sizeof name, "%s_%s", type, field);
    for (size_t i = 0; i < nlines; i++)
        if (strcmp(lines[i].name, name) == 0) return &lines[i];
    return NULL;
}

static const line *get(const char *type, const char *field) {
    const line *l = find(type, field);
    if (l == NULL) fprintf(stderr, "  missing %s_%s\n", type, field);
    CHECK(l != NULL);
    return l;
}

static uint64_t be_value(const line *l) {
    uint64_t v = 0;
    for (size_t i = 0; i < l->n; i++) v = v << 8 | l->v[i];
    return v;
}

/* The shared inputs of both files: the static key pairs and E(0). */
static void inputs(uint8_t s_pub[32], uint8_t r_pub[32], uint8_t e0[32]) {
    uint8_t s_sec[32], r_sec[32], shared[32];
    for (int i = 0; i < 32; i++) s_sec[i] = (uint8_t)i, r_sec[i] = (uint8_t)(0x20 + i);
    pl_x25519_base(s_pub, s_sec), pl_x25519_base(r_pub, r_sec);
    CHECK(pl_x25519(shared, r_sec, s_pub) == 0);  /* the receiver's side of S */
    pl_epoch0_secret(e0, shared);
}

/* Opens sealed (header hd) with key at pn into plaintext pt, and seals pt back to it. */
static void open_and_seal_again(const pl_packet_key *key, uint64_t pn, const line *hd, const line *pt,
                                const line *sealed) {
    _Alignas(16) uint8_t ctx[PURE_LINK_AEAD_CTX_BYTES];
    pl_gcm_init(ctx, key->key);
    CHECK(sealed->n == hd->n + pt->n + PURE_LINK_TAG_BYTES);
    CHECK_MEM(sealed->v, hd->v, hd->n);
    uint8_t nonce[12], out[PURE_LINK_DATAGRAM_MOST];
    pl_nonce(nonce, key->iv, pn);
    CHECK(pl_gcm_open(ctx, nonce, hd->v, hd->n, sealed->v + hd->n, sealed->n - hd->n, out) == 0);
    CHECK_MEM(out, pt->v, pt->n);
    pl_gcm_seal(ctx, nonce, hd->v, hd->n, pt->v, pt->n, out);
    CHECK_MEM(out, sealed->v + hd->n, sealed->n - hd->n);
}

static void one_sealed_packet_per_frame_type(void) {
    load("spec/vectors/packets.txt");
    static const char *names[PL_FRAME_TYPES] = {"padding", "stream", "records", "record", "offer", "response",
                                                "ping", "challenge", "accept", "ack", "stored", "lost", "refused"};
    uint8_t s_pub[32], r_pub[32], e0[32];
    inputs(s_pub, r_pub, e0);
    pl_packet_key data, reply;
    pl_data_key(&data, e0, s_pub, r_pub, 0x0123456789abcdefull, 0);
    pl_reply_key(&reply, e0, r_pub, s_pub, 0x0123456789abcdefull, 0xfedcba9876543210ull, 0);
    for (uint8_t t = 0; t < PL_FRAME_TYPES; t++) {
        const line *hd = get(names[t], "header");
        const line *pt = get(names[t], "plaintext"), *sealed = get(names[t], "sealed");
        uint64_t pn = be_value(get(names[t], "pn"));
        pl_header h;
        CHECK(pl_header_decode(&h, hd->v, hd->n) == (int)hd->n);
        CHECK(h.run == 0x0123456789abcdefull);
        CHECK(pl_pn_decode(PL_PN_NONE, h.pn_truncated, h.pn_len) == pn);
        if (h.reply) CHECK(h.reply_run == 0xfedcba9876543210ull);
        else CHECK(h.key_id == pl_key_id(s_pub));
        /* The payload holds exactly the frame it is named for. */
        pl_frame f;
        CHECK(pl_payload_check(pt->v, pt->n, h.reply) == 1);
        CHECK(pl_frame_decode(&f, pt->v, pt->n, h.reply) == (int)pt->n);
        CHECK(f.type == t);
        open_and_seal_again(h.reply ? &reply : &data, pn, hd, pt, sealed);
    }
}

/* numbers.txt: the reader's state recovers each packet's epoch and number; the packet
 * opens under the key of that epoch (check_vectors.py ties E(1) and E(2) to keys.txt). */
static void numbers_recovered_and_opened(void) {
    static const char *names[] = {"pn1_epoch1", "pn3_epoch2", "pn4_from_none_epoch1", "pn4_past_2e32_epoch2",
                                  "reply_pn4_epoch16", "reply_pn2_epoch2"};
    static const unsigned lengths[] = {1, 3, 4, 4, 4, 2};
    load("spec/vectors/numbers.txt");
    uint8_t s_pub[32], r_pub[32], e0[32];
    inputs(s_pub, r_pub, e0);
    int reply_seen = 0, high_pn_seen = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const line *hd = get(names[i], "header"), *secret = get(names[i], "secret");
        const line *pt = get(names[i], "plaintext"), *sealed = get(names[i], "sealed");
        const line *largest = find(names[i], "largest");
        uint32_t epoch = (uint32_t)be_value(get(names[i], "epoch"));
        uint32_t expected = (uint32_t)be_value(get(names[i], "expected_epoch"));
        uint64_t pn = be_value(get(names[i], "pn"));
        pl_header h;
        CHECK(pl_header_decode(&h, hd->v, hd->n) == (int)hd->n);
        CHECK_EQ_U(h.pn_len, lengths[i]);
        CHECK(h.epoch_field != 0);
        CHECK_EQ_U(pl_epoch_from_field(h.epoch_field, expected), epoch);
        CHECK_EQ_U(pl_pn_decode(largest ? be_value(largest) : PL_PN_NONE, h.pn_truncated, h.pn_len), pn);
        CHECK(pl_payload_check(pt->v, pt->n, h.reply) == 1);
        CHECK(secret->n == 32);
        pl_packet_key key;
        if (h.reply) pl_reply_key(&key, secret->v, r_pub, s_pub, h.run, h.reply_run, epoch);
        else pl_data_key(&key, secret->v, s_pub, r_pub, h.run, epoch);
        open_and_seal_again(&key, pn, hd, pt, sealed);
        reply_seen |= h.reply;
        high_pn_seen |= pn >> 32 != 0;
    }
    CHECK(reply_seen && high_pn_seen);
}

/* refused.txt: one reply per REFUSED reason 1..5, each opened, sealed again and decoded to
 * its reason; one past the last is out of range. */
static void one_sealed_reply_per_refused_reason(void) {
    load("spec/vectors/refused.txt");
    uint8_t s_pub[32], r_pub[32], e0[32];
    inputs(s_pub, r_pub, e0);
    pl_packet_key reply;
    pl_reply_key(&reply, e0, r_pub, s_pub, 0x0123456789abcdefull, 0xfedcba9876543210ull, 0);
    CHECK_EQ_U(PL_REFUSED_MOST, PL_REFUSED_CUT_OFF);
    for (unsigned reason = PL_REFUSED_LEAST; reason <= PL_REFUSED_MOST; reason++) {
        char name[16];
        snprintf(name, sizeof name, "refused%u", reason);
        const line *hd = get(name, "header"), *pt = get(name, "plaintext"), *sealed = get(name, "sealed");
        uint64_t pn = be_value(get(name, "pn"));
        CHECK_EQ_U(pn, 0x20u + reason);
        pl_frame f;
        CHECK(pl_payload_check(pt->v, pt->n, 1) == 1);
        CHECK(pl_frame_decode(&f, pt->v, pt->n, 1) == (int)pt->n);
        CHECK(f.type == PL_FRAME_REFUSED && f.refused.reason == reason);
        open_and_seal_again(&reply, pn, hd, pt, sealed);
    }
    const uint8_t past[2] = {PL_FRAME_REFUSED, PL_REFUSED_MOST + 1};
    CHECK(pl_payload_check(past, 2, 1) != 1);
}

TEST_MAIN(TEST_CASE(one_sealed_packet_per_frame_type), TEST_CASE(numbers_recovered_and_opened),
          TEST_CASE(one_sealed_reply_per_refused_reason))
