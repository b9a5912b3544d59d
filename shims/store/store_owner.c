/* store_owner.c: a resumed stream's owner log <name>.plo (shims/store/STORE.md "Owner log")
 * — which runs asked where to resume and which of them took the source over — so that a
 * run cut off stays cut off across a restart of the receiver (spec/protocol.md §4.3).
 *
 * The log is append-only and short (two entries per resuming run at most), and each entry
 * is made durable before what depends on it: an ask's entry before its answer goes, a
 * takeover's before the new owner appends or is told anything.  Those syncs run on the
 * caller's thread: a resuming run asks once and takes over once. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_internal.h"

static const uint8_t owner_tag[4] = {'P', 'L', 'O', '1'};

static void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static uint64_t get64(const uint8_t *p) { uint64_t v = 0; for (int i = 7; i >= 0; i--) v = v << 8 | p[i]; return v; }
static void put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static void entry_encode(uint8_t out[ST_OWNER_ENTRY_BYTES], uint32_t kind, uint64_t run, uint64_t mark) {
    memcpy(out, owner_tag, 4);
    put32(out + 4, kind);
    put64(out + 8, run);
    put64(out + 16, mark);
    put32(out + 24, st_crc32c(0, out, 24));
}

/* 0 and the fields, or -1 when the bytes are no whole, valid entry (a torn tail). */
static int entry_decode(const uint8_t in[ST_OWNER_ENTRY_BYTES], uint32_t *kind, uint64_t *run, uint64_t *mark) {
    if (memcmp(in, owner_tag, 4) != 0 || get32(in + 24) != st_crc32c(0, in, 24)) return -1;
    *kind = get32(in + 4);
    if (*kind != ST_OWNER_ASKED && *kind != ST_OWNER_OWNS) return -1;
    *run = get64(in + 8);
    *mark = get64(in + 16);
    return 0;
}

/* The run's entry, added when the stream does not know it (NULL: no room). */
static st_run *run_get(st_stream *st, uint64_t run) {
    st_run *r = st_run_find(st, run);
    return r != NULL ? r : st_run_add(st, run, NULL, 0);
}

void st_owner_apply(st_stream *st, uint32_t kind, uint64_t run, uint64_t mark) {
    st_run *r = run_get(st, run);
    if (r == NULL) return;  /* every run slot busy: the run is unknown, so it appends nothing */
    r->asked = 1;
    r->cut = 0;
    if (kind == ST_OWNER_ASKED) {
        /* The answer was durable when it went: records below it are the host's. */
        if (r->mark_appended < mark) r->mark_appended = r->mark_batch = r->mark_written = r->mark_durable = mark;
        return;
    }
    for (size_t i = 0; i < st->runs_len; i++) st->runs[i].cut = &st->runs[i] != r;
    st->owned = 1;
    st->owner = run;
}

int st_owner_load(st_stream *st, int dir_fd, char *err, size_t err_len) {
    char name[ST_FILE_NAME_MOST];
    st_file_name(name, st->id.key, st->id.source, ".plo");
    int fd = openat(dir_fd, name, O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) return 0;
    if (fd < 0) return st_err(err, err_len, -errno, "%s: open its owner log: %s", st->path, strerror(errno));
    struct stat sb;
    int rc = fstat(fd, &sb) != 0 ? -errno : 0;
    size_t size = rc == 0 ? (size_t)sb.st_size : 0, good = 0;
    uint8_t *b = size ? malloc(size) : NULL;
    if (rc == 0 && size && b == NULL) rc = -ENOMEM;
    if (rc == 0 && size) rc = st_read_all(fd, b, size, 0);
    uint32_t kind;
    uint64_t run, mark;
    for (; rc == 0 && good + ST_OWNER_ENTRY_BYTES <= size && entry_decode(b + good, &kind, &run, &mark) == 0;
         good += ST_OWNER_ENTRY_BYTES)
        st_owner_apply(st, kind, run, mark);
    free(b);
    /* A torn entry was never acted on (each is synced before what depends on it). */
    if (rc == 0 && good < size && (ftruncate(fd, (off_t)good) != 0 || fdatasync(fd) != 0)) rc = -errno;
    close(fd);
    if (rc != 0) return st_err(err, err_len, rc, "%s: read its owner log: %s", st->path, strerror(-rc));
    st->owner_bytes = good;
    st->owner_named = 1;
    if (st->owned) {
        /* The owner's records are places in the source's input, after everything its
         * takeover found in the file: it holds the stream's place. */
        st_run *o = st_run_find(st, st->owner);
        uint64_t place = st_stream_place(st);
        if (o != NULL && o->mark_appended < place) o->mark_appended = o->mark_batch = o->mark_written = o->mark_durable = place;
    }
    return 0;
}

int st_owner_write(st_stream *st, int dir_fd, uint32_t kind, uint64_t run, uint64_t mark, char *err, size_t err_len) {
    char name[ST_FILE_NAME_MOST];
    st_file_name(name, st->id.key, st->id.source, ".plo");
    uint8_t e[ST_OWNER_ENTRY_BYTES];
    entry_encode(e, kind, run, mark);
    int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0640);
    int rc = fd < 0 ? -errno : st_write_all(fd, e, sizeof e, st->owner_bytes);
    if (rc == 0 && fdatasync(fd) != 0) rc = -errno;
    if (fd >= 0) close(fd);
    /* A new log's name is durable only once its directory is synced. */
    if (rc == 0 && !st->owner_named && fsync(dir_fd) != 0) rc = -errno;
    if (rc != 0) return st_err(err, err_len, rc, "%s: write its owner log: %s", st->path, strerror(-rc));
    st->owner_named = 1;
    st->owner_bytes += sizeof e;
    st_owner_apply(st, kind, run, mark);
    return 0;
}
