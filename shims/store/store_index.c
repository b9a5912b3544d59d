/* store_index.c: a stream's checkpoint index <name>.pli — the durable (run -> mark, offset)
 * table and the file offset it covers — so that a recovery reads only the frames after it.
 *
 * The record file is the truth; the index only saves reading it.  It is written whole to
 * <name>.pli.tmp, made durable, then renamed over the old one: after a crash either index
 * is there, each valid and each describing durable frames only (it is written after their
 * fdatasync).  An index that does not agree with its file (the file is shorter, or its
 * last frame is not where the index says) is ignored and the whole file is read. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_internal.h"

static const uint8_t index_magic[8] = {'P', 'L', 'I', 'N', 'D', 'E', 'X', '1'};

_Static_assert(PL_STORE_INDEX_BYTES_MOST == ST_INDEX_HEAD_BYTES + PL_STORE_RUNS_KEPT * ST_INDEX_ENTRY_BYTES + 4,
               "pl_store.h's bound of an index is its layout's");

static void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static uint64_t get64(const uint8_t *p) { uint64_t v = 0; for (int i = 7; i >= 0; i--) v = v << 8 | p[i]; return v; }

static size_t durable_runs(const st_stream *st) {
    size_t n = 0;
    for (size_t i = 0; i < st->runs_len; i++) n += st->runs[i].mark_durable > 0;
    return n;
}

int st_index_write_tmp(const st_stream *st, int dir_fd, char *err, size_t err_len) {
    char tmp[ST_FILE_NAME_MOST];
    st_file_name(tmp, st->id.key, st->id.source, ".pli.tmp");
    size_t n = durable_runs(st), bytes = ST_INDEX_HEAD_BYTES + n * ST_INDEX_ENTRY_BYTES + 4;
    uint8_t *b = calloc(1, bytes);
    if (b == NULL) return st_err(err, err_len, -ENOMEM, "%s: out of memory for its index", st->path);
    memcpy(b, index_magic, 8);
    put64(b + 8, n);
    put64(b + 16, st->end_durable);
    put64(b + 24, st->end_durable > ST_HEADER_BYTES ? st->last_durable : 0);
    uint8_t *e = b + ST_INDEX_HEAD_BYTES;
    for (size_t i = 0; i < st->runs_len; i++) {
        const st_run *r = &st->runs[i];
        if (r->mark_durable == 0) continue;
        put64(e, r->run);
        put64(e + 8, r->mark_durable);
        put64(e + 16, r->end_off < st->end_durable ? r->end_off : st->end_durable);
        e += ST_INDEX_ENTRY_BYTES;
    }
    uint32_t c = st_crc32c(0, b, bytes - 4);
    for (int i = 0; i < 4; i++) e[i] = (uint8_t)(c >> (8 * i));
    int fd = openat(dir_fd, tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    int rc = fd < 0 ? -errno : st_write_all(fd, b, bytes, 0);
    free(b);
    if (rc != 0) {
        if (fd >= 0) close(fd);
        unlinkat(dir_fd, tmp, 0);
        return st_err(err, err_len, rc, "%s: write its index %s: %s", st->path, tmp, strerror(-rc));
    }
    return fd;
}

int st_index_install(const st_stream *st, int dir_fd, char *err, size_t err_len) {
    char tmp[ST_FILE_NAME_MOST], name[ST_FILE_NAME_MOST];
    st_file_name(tmp, st->id.key, st->id.source, ".pli.tmp");
    st_file_name(name, st->id.key, st->id.source, ".pli");
    if (renameat(dir_fd, tmp, dir_fd, name) != 0)
        return st_err(err, err_len, -errno, "%s: install its index: %s", st->path, strerror(errno));
    return 0;
}

int st_index_checkpoint_now(st_stream *st, int dir_fd, char *err, size_t err_len) {
    int fd = st_index_write_tmp(st, dir_fd, err, err_len);
    if (fd < 0) return fd;
    int rc = fdatasync(fd) != 0 ? -errno : 0;
    close(fd);
    if (rc != 0) return st_err(err, err_len, rc, "%s: fdatasync its index: %s", st->path, strerror(-rc));
    if ((rc = st_index_install(st, dir_fd, err, err_len)) != 0) return rc;
    st->index_end = st->end_durable;
    return 0;
}

/* The frame that ends at `end` is `bytes` long and whole. */
static int last_frame_ok(const st_stream *st, uint64_t end, uint64_t bytes) {
    if (bytes < ST_FRAME_BYTES || bytes > ST_FRAME_BYTES + (uint64_t)PURE_LINK_RECORD_MOST ||
        end < ST_HEADER_BYTES + bytes)
        return 0;
    uint8_t *b = malloc((size_t)bytes);
    st_frame f;
    int ok = b != NULL && st_read_all(st->fd, b, (size_t)bytes, end - bytes) == 0 &&
             st_frame_check(b, (size_t)bytes, &f) == bytes;
    free(b);
    return ok;
}

int pl_store_index_read(const uint8_t *b, size_t bytes, pl_store_index_head *h, const char **why) {
    *why = "";
    if (bytes < ST_INDEX_HEAD_BYTES + 4 || memcmp(b, index_magic, 8) != 0) return *why = "not an index (magic)", -1;
    h->runs = get64(b + 8), h->end = get64(b + 16), h->last_bytes = get64(b + 24);
    if (h->runs > PL_STORE_RUNS_KEPT) return *why = "more runs than a stream keeps", -1;
    if (bytes != ST_INDEX_HEAD_BYTES + h->runs * ST_INDEX_ENTRY_BYTES + 4) return *why = "its size is not its runs'", -1;
    uint32_t c = (uint32_t)b[bytes - 4] | (uint32_t)b[bytes - 3] << 8 | (uint32_t)b[bytes - 2] << 16 |
                 (uint32_t)b[bytes - 1] << 24;
    if (c != st_crc32c(0, b, bytes - 4)) return *why = "CRC32C", -1;
    if (h->end < ST_HEADER_BYTES) return *why = "it ends inside the record file's header", -1;
    return 0;
}

static uint64_t index_parse(st_stream *st, const uint8_t *b, size_t bytes, uint64_t file_bytes) {
    pl_store_index_head h;
    const char *why;
    if (pl_store_index_read(b, bytes, &h, &why) != 0 || h.end > file_bytes) return 0;
    uint64_t n = h.runs, end = h.end, last = h.last_bytes;
    if (end > ST_HEADER_BYTES && !last_frame_ok(st, end, last)) return 0;
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *e = b + ST_INDEX_HEAD_BYTES + i * ST_INDEX_ENTRY_BYTES;
        st_run *r = st_run_add(st, get64(e), NULL, 0);
        if (r == NULL) return 0;
        r->mark_appended = get64(e + 8);
        r->end_off = get64(e + 16);
    }
    st->last_appended = last;
    return end;
}

uint64_t st_index_load(st_stream *st, int dir_fd, uint64_t file_bytes) {
    char name[ST_FILE_NAME_MOST];
    st_file_name(name, st->id.key, st->id.source, ".pli");
    int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ST_HEADER_BYTES;
    off_t size = lseek(fd, 0, SEEK_END);
    size_t most = PL_STORE_INDEX_BYTES_MOST;
    uint64_t end = 0;
    uint8_t *b = size > 0 && (size_t)size <= most ? malloc((size_t)size) : NULL;
    if (b != NULL && st_read_all(fd, b, (size_t)size, 0) == 0) end = index_parse(st, b, (size_t)size, file_bytes);
    free(b);
    close(fd);
    if (end == 0) {
        st->runs_len = 0;  /* not trusted: read the whole file */
        st->last_appended = 0;
        return ST_HEADER_BYTES;
    }
    return end;
}
