/* store_format.c: the bytes of a record file (shims/store/STORE.md): CRC32C, the file header,
 * the record frame, and the file name of a stream.  Integers are little-endian. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "store_internal.h"

/* ---- CRC32C (Castagnoli, reflected 0x82f63b78).  Where the CPU has SSE4.2, three
 * independent runs of its crc32 instruction over three parts of a block, joined by
 * "append n zero bytes" operators (the crc is linear), keep its pipeline full: about three
 * times one run's speed.  Else slicing-by-8 tables.  Tables are built once. ---- */

#define CRC_POLY 0x82f63b78u
#define CRC_LONG 8192u  /* bytes of each of three parts, large blocks */
#define CRC_SHORT 256u  /* ... small blocks */

static uint32_t crc_table[8][256];
static uint32_t crc_long[4][256], crc_short[4][256];  /* the zero operators as byte tables */
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;
static int crc_hw;

/* 32x32 matrices over GF(2), one column a word. */
static uint32_t gf2_apply(const uint32_t m[32], uint32_t v) {
    uint32_t r = 0;
    for (int i = 0; v; i++, v >>= 1)
        if (v & 1) r ^= m[i];
    return r;
}
static void gf2_mul(uint32_t out[32], const uint32_t a[32], const uint32_t b[32]) {
    uint32_t t[32];
    for (int i = 0; i < 32; i++) t[i] = gf2_apply(a, b[i]);
    memcpy(out, t, sizeof t);
}

/* The tables of "run n zero bytes through the register". */
static void crc_zeros(uint32_t tab[4][256], size_t n) {
    uint32_t base[32], op[32];
    base[0] = CRC_POLY;  /* one zero bit */
    for (int i = 1; i < 32; i++) base[i] = 1u << (i - 1);
    for (int k = 0; k < 3; k++) gf2_mul(base, base, base);  /* one zero byte */
    for (int i = 0; i < 32; i++) op[i] = 1u << i;
    for (; n; n >>= 1, gf2_mul(base, base, base))
        if (n & 1) gf2_mul(op, base, op);
    for (int k = 0; k < 4; k++)
        for (uint32_t b = 0; b < 256; b++) tab[k][b] = gf2_apply(op, b << (8 * k));
}

static uint32_t crc_shift(const uint32_t tab[4][256], uint32_t c) {
    return tab[0][c & 0xff] ^ tab[1][(c >> 8) & 0xff] ^ tab[2][(c >> 16) & 0xff] ^ tab[3][c >> 24];
}

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ CRC_POLY : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++) crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
    crc_zeros(crc_long, CRC_LONG);
    crc_zeros(crc_short, CRC_SHORT);
#if defined(__x86_64__)
    __builtin_cpu_init();
    crc_hw = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t crc_soft(uint32_t c, const uint8_t *p, size_t len) {
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= c;  /* little-endian machines: the low word takes the running crc */
        c = crc_table[7][w & 0xff] ^ crc_table[6][(w >> 8) & 0xff] ^ crc_table[5][(w >> 16) & 0xff] ^
            crc_table[4][(w >> 24) & 0xff] ^ crc_table[3][(w >> 32) & 0xff] ^ crc_table[2][(w >> 40) & 0xff] ^
            crc_table[1][(w >> 48) & 0xff] ^ crc_table[0][w >> 56];
        p += 8, len -= 8;
    }
    while (len--) c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xff];
    return c;
}

#if defined(__x86_64__)
static uint64_t load64(const uint8_t *p) {
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

/* Three runs over [p, p + part), [p + part, ...), [p + 2 part, ...), joined. */
__attribute__((target("sse4.2"))) static uint64_t crc_three(uint64_t c0, const uint8_t *p, size_t part,
                                                             const uint32_t tab[4][256]) {
    uint64_t c1 = 0, c2 = 0;
    for (const uint8_t *end = p + part; p < end; p += 8) {
        c0 = __builtin_ia32_crc32di(c0, load64(p));
        c1 = __builtin_ia32_crc32di(c1, load64(p + part));
        c2 = __builtin_ia32_crc32di(c2, load64(p + 2 * part));
    }
    c0 = crc_shift(tab, (uint32_t)c0) ^ c1;
    return crc_shift(tab, (uint32_t)c0) ^ c2;
}

__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t c, const uint8_t *p, size_t len) {
    uint64_t c64 = c;
    for (; len >= 3 * CRC_LONG; p += 3 * CRC_LONG, len -= 3 * CRC_LONG) c64 = crc_three(c64, p, CRC_LONG, crc_long);
    for (; len >= 3 * CRC_SHORT; p += 3 * CRC_SHORT, len -= 3 * CRC_SHORT)
        c64 = crc_three(c64, p, CRC_SHORT, crc_short);
    for (; len >= 8; p += 8, len -= 8) c64 = __builtin_ia32_crc32di(c64, load64(p));
    c = (uint32_t)c64;
    while (len--) c = __builtin_ia32_crc32qi(c, *p++);
    return c;
}
#endif

uint32_t st_crc32c(uint32_t crc, const void *data, size_t len) {
    pthread_once(&crc_once, crc_init);
#if defined(__x86_64__)
    if (crc_hw) return ~crc_sse42(~crc, data, len);
#endif
    return ~crc_soft(~crc, data, len);
}

uint32_t st_crc32c_portable(uint32_t crc, const void *data, size_t len) {
    pthread_once(&crc_once, crc_init);
    return ~crc_soft(~crc, data, len);
}

static void put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static uint32_t get32(const uint8_t *p) { uint32_t v = 0; for (int i = 3; i >= 0; i--) v = v << 8 | p[i]; return v; }
static uint64_t get64(const uint8_t *p) { uint64_t v = 0; for (int i = 7; i >= 0; i--) v = v << 8 | p[i]; return v; }

/* ---- File header: 192 B ---- */
static const uint8_t header_magic[8] = {'P', 'L', 'R', 'E', 'C', 'S', '1', '\n'};
enum { H_BYTES = 8, H_FLAGS = 12, H_KEY = 16, H_SOURCE = 48, H_INPUT = 113, H_CRC = 188 };

static void name_put(uint8_t *p, const char *name) {
    size_t n = strlen(name);
    p[0] = (uint8_t)n;
    memcpy(p + 1, name, n);
}

static int name_get(const uint8_t *p, char out[PURE_LINK_NAME_MOST + 1]) {
    size_t n = p[0];
    if (n < 1 || n > PURE_LINK_NAME_MOST || memchr(p + 1, 0, n) != NULL) return -1;
    memcpy(out, p + 1, n);
    out[n] = 0;
    return 0;
}

void st_header_encode(uint8_t out[ST_HEADER_BYTES], const st_header *h) {
    memset(out, 0, ST_HEADER_BYTES);
    memcpy(out, header_magic, 8);
    put32(out + H_BYTES, ST_HEADER_BYTES);
    put32(out + H_FLAGS, 0);
    memcpy(out + H_KEY, h->key, 32);
    name_put(out + H_SOURCE, h->source);
    name_put(out + H_INPUT, h->input);
    put32(out + H_CRC, st_crc32c(0, out, H_CRC));
}

int st_header_decode(const uint8_t in[ST_HEADER_BYTES], st_header *h) {
    if (memcmp(in, header_magic, 8) != 0 || get32(in + H_BYTES) != ST_HEADER_BYTES) return -1;
    if (get32(in + H_CRC) != st_crc32c(0, in, H_CRC)) return -1;
    memcpy(h->key, in + H_KEY, 32);
    if (name_get(in + H_SOURCE, h->source) != 0 || name_get(in + H_INPUT, h->input) != 0) return -1;
    return 0;
}

/* ---- Record frame: tag "PLF1", len u32, run u64, record u64, crc u32, then the bytes.
 * The crc covers the first 24 B of the header and the record bytes. ---- */
#define FRAME_TAG 0x31464c50u /* "PLF1" */

void st_frame_encode(uint8_t out[ST_FRAME_BYTES], uint64_t run, uint64_t record, const uint8_t *data,
                     size_t len, const uint8_t *data2, size_t len2) {
    put32(out, FRAME_TAG);
    put32(out + 4, (uint32_t)(len + len2));
    put64(out + 8, run);
    put64(out + 16, record);
    uint32_t c = st_crc32c(0, out, 24);
    c = st_crc32c(c, data, len);
    c = st_crc32c(c, data2, len2);
    put32(out + 24, c);
}

long pl_store_frame_read(const uint8_t *in, size_t avail, pl_store_frame *f, const char **why) {
    uint8_t tag[4];
    put32(tag, FRAME_TAG);
    if (memcmp(in, tag, avail < 4 ? avail : 4) != 0) return *why = "no frame tag", PL_STORE_FRAME_BAD_HEAD;
    if (avail < ST_FRAME_BYTES) return *why = "the file ends inside its header", 0;
    uint32_t len = get32(in + 4);
    if (len > PURE_LINK_RECORD_MOST) return *why = "its length is over 16 MiB", PL_STORE_FRAME_BAD_HEAD;
    f->len = len;
    f->run = get64(in + 8);
    f->record = get64(in + 16);
    if (avail - ST_FRAME_BYTES < len) return *why = "the file ends inside its record", 0;
    uint32_t c = st_crc32c(st_crc32c(0, in, 24), in + ST_FRAME_BYTES, len);
    if (c != get32(in + 24)) return *why = "CRC32C mismatch", PL_STORE_FRAME_BAD_CRC;
    *why = "";
    return (long)(ST_FRAME_BYTES + len);
}

size_t st_frame_check(const uint8_t *in, size_t avail, st_frame *f) {
    const char *why;
    long n = pl_store_frame_read(in, avail, f, &why);
    return n > 0 ? (size_t)n : 0;
}

int pl_store_file_header(const uint8_t in[PL_STORE_FILE_HEADER_BYTES], pl_store_file_id *id) {
    st_header h;
    if (st_header_decode(in, &h) != 0) return -1;
    memcpy(id->key, h.key, sizeof id->key);
    memcpy(id->source, h.source, sizeof id->source);
    memcpy(id->input, h.input, sizeof id->input);
    return 0;
}

/* ---- File names: names are bytes but 0x00 and 0x0a; keep the portable ones, escape the
 * rest (and '%') as %XX, so that any source is one file name of at most 221 + suffix B. */
void st_key_hex(char *out, const uint8_t *key, size_t bytes) {
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < bytes; i++) out[2 * i] = hex[key[i] >> 4], out[2 * i + 1] = hex[key[i] & 15];
    out[2 * bytes] = 0;
}

void st_file_name(char out[ST_FILE_NAME_MOST], const uint8_t key[32], const char *source, const char *suffix) {
    char *p = out;
    st_key_hex(p, key, ST_KEY_HEX / 2);
    p += ST_KEY_HEX;
    *p++ = '_';
    for (const unsigned char *c = (const unsigned char *)source; *c; c++) {
        int keep = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' ||
                   *c == '_' || *c == '.';
        if (keep) *p++ = (char)*c;
        else *p++ = '%', *p++ = "0123456789ABCDEF"[*c >> 4], *p++ = "0123456789ABCDEF"[*c & 15];
    }
    snprintf(p, (size_t)(out + ST_FILE_NAME_MOST - p), "%s", suffix);
}
