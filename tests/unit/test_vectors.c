/* test_vectors.c: spec/vectors/packets.txt — every packet opens under the epoch-0 keys of
 * the fixed inputs, seals again to the same bytes, and carries the frame it is named for. */
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

static void load(void) {
    FILE *f = fopen("spec/vectors/packets.txt", "r");
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

static const line *get(const char *type, const char *field) {
    char name[64];
    snprintf(name, sizeof name, "%s_%s", type, field);
    for (size_t i = 0; i < nlines; i++)
        if (strcmp(lines[i].name, name) == 0) return &lines[i];
    fprintf(stderr, "  missing %s\n", name);
    CHECK(0);
    return NULL;
}

static void one_sealed_packet_per_frame_type(void) {
    load();
    static const char *names[PL_FRAME_TYPES] = {"padding", "stream", "records", "record", "offer", "response",
                                                "ping", "challenge", "accept", "ack", "stored", "lost", "refused"};
    uint8_t s_sec[32], r_sec[32], s_pub[32], r_pub[32], shared[32], e0[32];
    for (int i = 0; i < 32; i++) s_sec[i] = (uint8_t)i, r_sec[i] = (uint8_t)(0x20 + i);
    pl_x25519_base(s_pub, s_sec), pl_x25519_base(r_pub, r_sec);
    CHECK(pl_x25519(shared, r_sec, s_pub) == 0);  /* the receiver's side of S */
    pl_epoch0_secret(e0, shared);
    pl_packet_key data, reply;
    pl_data_key(&data, e0, s_pub, r_pub, 0x0123456789abcdefull, 0);
    pl_reply_key(&reply, e0, r_pub, s_pub, 0x0123456789abcdefull, 0xfedcba9876543210ull, 0);
    _Alignas(16) uint8_t dctx[PURE_LINK_AEAD_CTX_BYTES], rctx[PURE_LINK_AEAD_CTX_BYTES];
    pl_gcm_init(dctx, data.key), pl_gcm_init(rctx, reply.key);
    for (uint8_t t = 0; t < PL_FRAME_TYPES; t++) {
        const line *pn_l = get(names[t], "pn"), *hd = get(names[t], "header");
        const line *pt = get(names[t], "plaintext"), *sealed = get(names[t], "sealed");
        uint64_t pn = 0;
        for (size_t i = 0; i < pn_l->n; i++) pn = pn << 8 | pn_l->v[i];
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
        /* Open, and seal again. */
        CHECK(sealed->n == hd->n + pt->n + PURE_LINK_TAG_BYTES);
        CHECK_MEM(sealed->v, hd->v, hd->n);
        uint8_t nonce[12], out[PURE_LINK_DATAGRAM_MOST];
        pl_nonce(nonce, h.reply ? reply.iv : data.iv, pn);
        const void *ctx = h.reply ? rctx : dctx;
        CHECK(pl_gcm_open(ctx, nonce, hd->v, hd->n, sealed->v + hd->n, sealed->n - hd->n, out) == 0);
        CHECK_MEM(out, pt->v, pt->n);
        pl_gcm_seal(ctx, nonce, hd->v, hd->n, pt->v, pt->n, out);
        CHECK_MEM(out, sealed->v + hd->n, sealed->n - hd->n);
    }
}

TEST_MAIN(TEST_CASE(one_sealed_packet_per_frame_type))
