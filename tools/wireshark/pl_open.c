/* Opening a captured packet (spec/keylog.md "Opening a captured packet"):
 *   1. the epoch nearest the last epoch opened in the run (both directions; 0 at first),
 *      the packet number nearest the largest opened in its space (the run's sender
 *      packets, or the run's replies of one reply run);
 *   2. the data or reply key of crypto.md §7 from every logged secret of (run, epoch);
 *   3. nonce = iv XOR pn (crypto.md §8), AES-128-GCM with the header as associated data.
 * A reader that meets replays or a capture that starts mid-run cannot place every packet
 * by that rule, so when it fails this reader also tries the run's other logged epochs
 * with the same field and the packet numbers a few windows away; the AEAD decides, and
 * the tree says which packets needed it ("by_rule" false).  Runs only on the first pass,
 * in capture order; the result is kept with the frame. */
#include "pl_dissect.h"

#include <string.h>
#include <gcrypt.h>

#define PL_FALLBACK_WINDOWS 64        /* packet-number windows tried each side */
#define PL_KEY_AES_BYTES    16        /* crypto.md §7 */
#define PL_IV_BYTES         12
#define PL_EXPAND_BYTES     28

static const char data_label[] = "pure-link 1 data";     /* crypto.md §5 */
static const char reply_label[] = "pure-link 1 reply";

typedef struct space_key {
    guint64 run;
    guint64 reply_run;
    gboolean reply;
} space_key;

typedef struct space {
    gboolean any;
    guint64  largest;
} space;

static wmem_map_t *run_epochs;        /* run -> last epoch opened (guint32 *) */
static wmem_map_t *spaces;            /* space_key -> space */
static wmem_map_t *sent;              /* sent_key -> frame number (guint32 *) */

typedef struct sent_key {
    guint64 run;
    guint8  tag[PL_LOST_TAG_BYTES];
} sent_key;

static guint space_hash(gconstpointer k)
{
    const space_key *s = k;
    guint64 v = s->run ^ (s->reply_run * G_GUINT64_CONSTANT(0x9e3779b97f4a7c15)) ^ s->reply;
    return g_int64_hash(&v);
}

static gboolean space_equal(gconstpointer a, gconstpointer b)
{
    const space_key *x = a, *y = b;
    return x->run == y->run && x->reply_run == y->reply_run && x->reply == y->reply;
}

static guint sent_hash(gconstpointer k)
{
    return wmem_strong_hash(k, sizeof(sent_key));
}

static gboolean sent_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(sent_key)) == 0;
}

void pl_open_init(void)
{
    sent = wmem_map_new(wmem_file_scope(), sent_hash, sent_equal);
    run_epochs = wmem_map_new(wmem_file_scope(), g_int64_hash, g_int64_equal);
    spaces = wmem_map_new(wmem_file_scope(), space_hash, space_equal);
}

static void put_u32(guint8 *p, guint32 v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (guint8)(v >> (24 - 8 * i));
}

static void put_u64(guint8 *p, guint64 v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (guint8)(v >> (56 - 8 * i));
}

/* The info string of crypto.md §7 for this packet's direction; returns its length. */
static size_t build_info(const pl_secret *s, const pl_header *h, guint32 epoch, guint8 *info)
{
    const char *label = h->reply ? reply_label : data_label;
    size_t n = strlen(label);
    memcpy(info, label, n);
    memcpy(info + n, h->reply ? s->receiver_public : s->sender_public, PL_KEY_BYTES);
    memcpy(info + n + PL_KEY_BYTES, h->reply ? s->sender_public : s->receiver_public,
           PL_KEY_BYTES);
    n += 2 * PL_KEY_BYTES;
    put_u64(info + n, h->run);
    n += 8;
    if (h->reply) {
        put_u64(info + n, h->reply_run);
        n += 8;
    }
    put_u32(info + n, epoch);
    return n + 4;
}

/* key || iv = HKDF-Expand(E(n), info, 28) = T(1) cut to 28 B (crypto.md §2, §7). */
static gboolean derive(const pl_secret *s, const pl_header *h, guint8 *key, guint8 *iv)
{
    guint8 msg[128];
    size_t n = build_info(s, h, s->epoch, msg);
    msg[n++] = 0x01;
    guint8 t1[32];
    gcry_md_hd_t md;
    if (gcry_md_open(&md, GCRY_MD_SHA256, GCRY_MD_FLAG_HMAC) != 0)
        return FALSE;
    gboolean ok = gcry_md_setkey(md, s->secret, PL_KEY_BYTES) == 0;
    if (ok) {
        gcry_md_write(md, msg, n);
        memcpy(t1, gcry_md_read(md, GCRY_MD_SHA256), sizeof t1);
        memcpy(key, t1, PL_KEY_AES_BYTES);
        memcpy(iv, t1 + PL_KEY_AES_BYTES, PL_IV_BYTES);
    }
    gcry_md_close(md);
    memset(t1, 0, sizeof t1);
    return ok;
}

/* AES-128-GCM open of the whole datagram `d` (header, ciphertext, tag) into `out`. */
static gboolean aead_open(const guint8 *key, const guint8 *nonce, const guint8 *d,
                          guint len, guint header_bytes, guint8 *out)
{
    gcry_cipher_hd_t c;
    if (gcry_cipher_open(&c, GCRY_CIPHER_AES128, GCRY_CIPHER_MODE_GCM, 0) != 0)
        return FALSE;
    guint body = len - header_bytes - PL_TAG_BYTES;
    gboolean ok = gcry_cipher_setkey(c, key, PL_KEY_AES_BYTES) == 0 &&
                  gcry_cipher_setiv(c, nonce, PL_IV_BYTES) == 0 &&
                  gcry_cipher_authenticate(c, d, header_bytes) == 0 &&
                  gcry_cipher_decrypt(c, out, body, d + header_bytes, body) == 0 &&
                  gcry_cipher_checktag(c, d + len - PL_TAG_BYTES, PL_TAG_BYTES) == 0;
    gcry_cipher_close(c);
    return ok;
}

static gboolean try_secret(const pl_secret *s, const pl_header *h, guint64 pn,
                           const guint8 *d, guint len, guint8 *out)
{
    guint8 key[PL_KEY_AES_BYTES], nonce[PL_IV_BYTES];
    if (!derive(s, h, key, nonce))
        return FALSE;
    for (int i = 0; i < 8; i++)
        nonce[4 + i] ^= (guint8)(pn >> (56 - 8 * i));
    gboolean ok = aead_open(key, nonce, d, len, h->header_bytes, out);
    memset(key, 0, sizeof key);
    return ok;
}

/* Secrets that can have sealed this packet: its run, an epoch with its field, and for
 * sender packets a sender key whose id the header carries.  `any_run`: E(0) of another
 * run of the same two keys too, since E(0) is the pair's, not the run's (crypto.md §6). */
static gboolean secret_fits(const pl_secret *s, const pl_header *h, gboolean any_run)
{
    return (s->run == h->run || (any_run && s->epoch == 0)) &&
           pl_epoch_field(s->epoch) == h->epoch_field && (h->reply || s->key_id == h->key_id);
}

/* Tries every fitting secret of `epoch` at number `pn`; when `any_epoch`, of any epoch of
 * the run and E(0) of any run of the pair (the fallback). */
static const pl_secret *try_all(const pl_header *h, guint32 epoch, gboolean any_epoch,
                                guint64 pn, const guint8 *d, guint len, guint8 *out)
{
    for (guint i = 0; i < pl_keylog_count(); i++) {
        const pl_secret *s = pl_keylog_get(i);
        if (secret_fits(s, h, any_epoch) && (any_epoch || s->epoch == epoch) &&
            try_secret(s, h, pn, d, len, out))
            return s;
    }
    return NULL;
}

/* The fallback: packet numbers k windows either side of the rule's, nearest first. */
static const pl_secret *try_fallback(const pl_header *h, guint64 pn, const guint8 *d,
                                     guint len, guint8 *out, guint64 *pn_out)
{
    guint64 win = G_GUINT64_CONSTANT(1) << (8 * h->pn_bytes);
    const pl_secret *s = try_all(h, 0, TRUE, pn, d, len, out);
    for (guint64 k = 1; !s && k <= PL_FALLBACK_WINDOWS; k++) {
        if (pn >= k * win && (s = try_all(h, 0, TRUE, pn - k * win, d, len, out)))
            *pn_out = pn - k * win;
        else if (pn + k * win <= pl_varint_most() &&
                 (s = try_all(h, 0, TRUE, pn + k * win, d, len, out)))
            *pn_out = pn + k * win;
    }
    return s;
}

/* The value under `key` in `map`, made (zeroed) on first use. */
static void *value_of(wmem_map_t *map, const void *key, size_t key_bytes, size_t value_bytes)
{
    void *v = wmem_map_lookup(map, key);
    if (!v) {
        v = wmem_alloc0(wmem_file_scope(), value_bytes);
        wmem_map_insert(map, wmem_memdup(wmem_file_scope(), key, key_bytes), v);
    }
    return v;
}

static sent_key sent_key_of(guint64 run, const guint8 *tag)
{
    sent_key k;
    memset(&k, 0, sizeof k);          /* the padding too: the hash reads every byte */
    k.run = run;
    memcpy(k.tag, tag, PL_LOST_TAG_BYTES);
    return k;
}

/* First pass only; the first packet with that tag keeps it (a replay names the same one). */
void pl_sent_note(guint64 run, const guint8 *tag, guint32 frame)
{
    sent_key k = sent_key_of(run, tag);
    guint32 *f = value_of(sent, &k, sizeof k, sizeof(guint32));
    if (*f == 0)
        *f = frame;
}

guint32 pl_sent_find(guint64 run, const guint8 *tag)
{
    sent_key k = sent_key_of(run, tag);
    guint32 *f = wmem_map_lookup(sent, &k);
    return f ? *f : 0;
}

static space *space_of(const pl_header *h)
{
    space_key k;
    memset(&k, 0, sizeof k);          /* the padding too: the hash reads fields only */
    k.run = h->run;
    k.reply_run = h->reply ? h->reply_run : 0;
    k.reply = h->reply;
    return value_of(spaces, &k, sizeof k, sizeof(space));
}

static guint32 *epoch_of(guint64 run)
{
    return value_of(run_epochs, &run, sizeof run, sizeof(guint32));
}

/* What the open moved: the run's last epoch, its space's largest number. */
static void remember(const pl_header *h, const pl_opened *o)
{
    *epoch_of(h->run) = o->epoch;
    space *sp = space_of(h);
    if (!sp->any || o->pn > sp->largest)
        sp->largest = o->pn;
    sp->any = TRUE;
}

static const pl_secret *search(const pl_header *h, const guint8 *d, guint len,
                               guint8 *out, pl_opened *o)
{
    space *sp = space_of(h);
    guint32 epoch = pl_epoch_recover(h->epoch_field, *epoch_of(h->run));
    guint64 pn = pl_pn_recover(h->pn_truncated, h->pn_bytes, sp->any ? sp->largest + 1 : 0);
    o->epoch = epoch;
    o->pn = pn;
    const pl_secret *s = try_all(h, epoch, FALSE, pn, d, len, out);
    o->by_rule = s != NULL;
    if (!s)
        s = try_fallback(h, pn, d, len, out, &o->pn);
    if (s)
        o->epoch = s->epoch;
    return s;
}

pl_opened *pl_open_packet(tvbuff_t *tvb, const pl_header *h, const char *keylog_path)
{
    guint len = tvb_reported_length(tvb);
    pl_opened *o = wmem_new0(wmem_file_scope(), pl_opened);
    if (len != tvb_captured_length(tvb) || len > PL_DATAGRAM_MOST)
        return o;
    if (!pl_keylog_has_run(h->run))
        pl_keylog_load(keylog_path);          /* the log may have grown since */
    const guint8 *d = tvb_get_ptr(tvb, 0, len);
    guint8 *out = wmem_alloc(wmem_file_scope(), len);
    const pl_secret *s = search(h, d, len, out, o);
    if (!s)
        return o;
    o->opened = TRUE;
    o->line = s->line;
    o->plain = out;
    o->plain_bytes = len - h->header_bytes - PL_TAG_BYTES;
    remember(h, o);
    return o;
}
