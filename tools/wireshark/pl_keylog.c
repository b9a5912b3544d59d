/* The key log (spec/keylog.md): one PURE_LINK_EPOCH line per (run, epoch).  The file is
 * read again whenever its size or time changes, so a log that grows during a live
 * capture is picked up.  Equal lines (both ends log an epoch) are kept once; lines of
 * other types, comments and lines that do not parse are skipped. */
#include "pl_dissect.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define PL_KEYLOG_LINE_MOST 512            /* a valid line has 233 B */
#define PL_KEYLOG_WORD      "PURE_LINK_EPOCH"

static GArray *secrets;                    /* of pl_secret */
static char   *loaded_path;
static off_t   loaded_size;
static time_t  loaded_mtime;

/* FNV-1a-32 (crypto.md §4). */
static guint32 fnv1a32(const guint8 *bytes, size_t n)
{
    guint32 h = 0x811c9dc5u;
    for (size_t i = 0; i < n; i++) {
        h ^= bytes[i];
        h *= 0x01000193u;
    }
    return h;
}

/* Exactly 2n lowercase hex digits into n bytes; returns the end or NULL. */
static const char *read_hex(const char *p, guint8 *out, size_t n)
{
    for (size_t i = 0; i < 2 * n; i++) {
        int d = g_ascii_xdigit_value(p[i]);
        if (d < 0 || g_ascii_isupper(p[i]))
            return NULL;
        if (i % 2 == 0)
            out[i / 2] = (guint8)(d << 4);
        else
            out[i / 2] |= (guint8)d;
    }
    return p + 2 * n;
}

static const char *read_space(const char *p)
{
    return p && *p == ' ' ? p + 1 : NULL;
}

/* One line (without its newline) into `s`; FALSE when it is not a valid epoch line. */
static gboolean parse_line(const char *p, pl_secret *s)
{
    guint8 run[8];
    if (strncmp(p, PL_KEYLOG_WORD " ", sizeof PL_KEYLOG_WORD) != 0)
        return FALSE;
    p += sizeof PL_KEYLOG_WORD;
    p = read_space(read_hex(p, s->sender_public, PL_KEY_BYTES));
    p = p ? read_space(read_hex(p, s->receiver_public, PL_KEY_BYTES)) : NULL;
    p = p ? read_space(read_hex(p, run, sizeof run)) : NULL;
    if (!p || !g_ascii_isdigit(*p))
        return FALSE;
    char *end;
    guint64 epoch = g_ascii_strtoull(p, &end, 10);
    if (epoch > G_MAXUINT32 || (p = read_space(end)) == NULL)
        return FALSE;
    p = read_hex(p, s->secret, PL_KEY_BYTES);
    if (!p || *p != '\0')
        return FALSE;
    s->run = 0;
    for (size_t i = 0; i < sizeof run; i++)
        s->run = s->run << 8 | run[i];
    s->epoch = (guint32)epoch;
    s->key_id = fnv1a32(s->sender_public, PL_KEY_BYTES);
    return TRUE;
}

static gboolean already_have(const pl_secret *s)
{
    for (guint i = 0; i < secrets->len; i++) {
        const pl_secret *o = &g_array_index(secrets, pl_secret, i);
        if (o->run == s->run && o->epoch == s->epoch &&
            memcmp(o->secret, s->secret, PL_KEY_BYTES) == 0 &&
            memcmp(o->sender_public, s->sender_public, PL_KEY_BYTES) == 0 &&
            memcmp(o->receiver_public, s->receiver_public, PL_KEY_BYTES) == 0)
            return TRUE;
    }
    return FALSE;
}

static void read_file(FILE *f)
{
    char line[PL_KEYLOG_LINE_MOST];
    guint number = 0;
    while (fgets(line, sizeof line, f)) {
        number++;
        line[strcspn(line, "\r\n")] = '\0';
        pl_secret s;
        memset(&s, 0, sizeof s);
        s.line = number;
        if (parse_line(line, &s) && !already_have(&s))
            g_array_append_val(secrets, s);
    }
}

void pl_keylog_load(const char *path)
{
    struct stat st;
    if (!path || !*path || stat(path, &st) != 0) {
        pl_keylog_free();
        return;
    }
    if (secrets && g_strcmp0(path, loaded_path) == 0 && st.st_size == loaded_size &&
        st.st_mtime == loaded_mtime)
        return;
    pl_keylog_free();
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    secrets = g_array_new(FALSE, TRUE, sizeof(pl_secret));
    read_file(f);
    fclose(f);
    loaded_path = g_strdup(path);
    loaded_size = st.st_size;
    loaded_mtime = st.st_mtime;
}

void pl_keylog_free(void)
{
    if (secrets) {
        memset(secrets->data, 0, secrets->len * sizeof(pl_secret));   /* secrets: wipe */
        g_array_free(secrets, TRUE);
    }
    secrets = NULL;
    g_free(loaded_path);
    loaded_path = NULL;
}

guint pl_keylog_count(void)
{
    return secrets ? secrets->len : 0;
}

const pl_secret *pl_keylog_get(guint i)
{
    return &g_array_index(secrets, pl_secret, i);
}

gboolean pl_keylog_has_run(guint64 run)
{
    for (guint i = 0; i < pl_keylog_count(); i++)
        if (pl_keylog_get(i)->run == run)
            return TRUE;
    return FALSE;
}
