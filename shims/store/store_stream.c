/* store_stream.c: one stream's record file — created whole or not at all, recovered to its
 * last whole frame, appended to one frame at a time — and the table of its runs. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "store_internal.h"

int st_err(char *err, size_t err_len, int code, const char *fmt, ...) {
    if (err != NULL && err_len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap);
        va_end(ap);
    }
    return code;
}

static char *path_join(const char *dir, const char *name) {
    size_t n = strlen(dir) + 1 + strlen(name) + 1;
    char *p = malloc(n);
    if (p != NULL) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

int st_write_all(int fd, const void *buf, size_t len, uint64_t off) {
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = pwrite(fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -errno;
        p += n, len -= (size_t)n, off += (uint64_t)n;
    }
    return 0;
}

int st_read_all(int fd, void *buf, size_t len, uint64_t off) {
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = pread(fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -errno;
        if (n == 0) return -EIO;  /* the file is shorter than fstat said */
        p += n, len -= (size_t)n, off += (uint64_t)n;
    }
    return 0;
}

/* ---- Runs ---- */

st_run *st_run_find(st_stream *st, uint64_t run) {
    for (size_t i = 0; i < st->runs_len; i++)
        if (st->runs[i].run == run) return &st->runs[i];
    return NULL;
}

/* The least recent run that nothing refers to: no handle, no pending append. */
static st_run *run_to_forget(st_stream *st) {
    st_run *old = NULL;
    for (size_t i = 0; i < st->runs_len; i++) {
        st_run *r = &st->runs[i];
        if (r->handle >= 0 || r->in_next || r->mark_batch != r->mark_durable) continue;
        if (r->asked && !r->cut) continue;  /* the owner, or a run that may take over */
        if (old == NULL || r->end_off < old->end_off) old = r;
    }
    return old;
}

st_run *st_run_add(st_stream *st, uint64_t run, char *err, size_t err_len) {
    st_run *r;
    if (st->runs_len == PL_STORE_RUNS_KEPT) {
        r = run_to_forget(st);
        if (r == NULL) {
            st_err(err, err_len, -ENOSPC, "%s: all %u runs kept are in use", st->path, PL_STORE_RUNS_KEPT);
            return NULL;
        }
    } else {
        if (st->runs_len == st->runs_cap) {
            size_t cap = st->runs_cap ? st->runs_cap * 2 : 4;
            st_run *runs = realloc(st->runs, cap * sizeof *runs);
            uint32_t *a = realloc(st->runs_next, cap * sizeof *a);
            if (a != NULL) st->runs_next = a;
            uint32_t *b = realloc(st->runs_batch, cap * sizeof *b);
            if (b != NULL) st->runs_batch = b;
            if (runs == NULL || a == NULL || b == NULL) {
                if (runs != NULL) st->runs = runs;
                st_err(err, err_len, -ENOMEM, "%s: out of memory for its runs", st->path);
                return NULL;
            }
            st->runs = runs;
            st->runs_cap = cap;
        }
        r = &st->runs[st->runs_len++];
    }
    memset(r, 0, sizeof *r);
    r->run = run;
    r->handle = -1;
    return r;
}

uint64_t st_stream_place(const st_stream *st) {
    const st_run *last = NULL;
    for (size_t i = 0; i < st->runs_len; i++)
        if (st->runs[i].mark_durable > 0 && (last == NULL || st->runs[i].end_off > last->end_off)) last = &st->runs[i];
    return last ? last->mark_durable : 0;
}

/* ---- Create ---- */

int st_stream_create(st_stream *st, int dir_fd, const char *dir, char *err, size_t err_len) {
    char name[ST_FILE_NAME_MOST], tmp[ST_FILE_NAME_MOST];
    st_file_name(name, st->id.key, st->id.source, ".plr");
    st_file_name(tmp, st->id.key, st->id.source, ".plr.tmp");
    st->path = path_join(dir, name);
    if (st->path == NULL) return st_err(err, err_len, -ENOMEM, "%s: out of memory", dir);
    uint8_t h[ST_HEADER_BYTES];
    st_header_encode(h, &st->id);
    /* The header goes under a temporary name; the commit that makes it durable renames
     * it into place (st_stream_rename): a record file always has a whole header.  No
     * sync here: this runs on the caller's (network) thread. */
    int fd = openat(dir_fd, tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (fd < 0) return st_err(err, err_len, -errno, "%s/%s: create: %s", dir, tmp, strerror(errno));
    int rc = st_write_all(fd, h, sizeof h, 0);
    if (rc != 0) {
        close(fd);
        unlinkat(dir_fd, tmp, 0);
        return st_err(err, err_len, rc, "%s: create: %s", st->path, strerror(-rc));
    }
    st->fd = fd;
    st->name = ST_NAME_TMP;
    st->end_appended = st->end_batch = st->end_durable = st->end_written = ST_HEADER_BYTES;
    st->index_end = ST_HEADER_BYTES;
    st->index_tmp_fd = -1;
    return 0;
}

int st_stream_rename(st_stream *st, int dir_fd, char *err, size_t err_len) {
    char name[ST_FILE_NAME_MOST], tmp[ST_FILE_NAME_MOST];
    st_file_name(name, st->id.key, st->id.source, ".plr");
    st_file_name(tmp, st->id.key, st->id.source, ".plr.tmp");
    if (renameat2(dir_fd, tmp, dir_fd, name, RENAME_NOREPLACE) != 0)
        return st_err(err, err_len, -errno, "%s: rename into place: %s", st->path, strerror(errno));
    st->name = ST_NAME_RENAMED;
    return 0;
}

/* ---- Recover ---- */

static void apply_frame(st_stream *st, const st_frame *f, uint64_t end, char *err, size_t err_len, int *rc) {
    st_run *r = st_run_find(st, f->run);
    if (r == NULL) r = st_run_add(st, f->run, err, err_len);
    if (r == NULL) { *rc = -ENOMEM; return; }
    if (f->record >= r->mark_appended) r->mark_appended = f->record + 1;
    r->end_off = end;
    st->last_appended = ST_FRAME_BYTES + (uint64_t)f->len;
}

/* The size a frame header claims, 0 if it is no frame header. */
static size_t frame_claims(const uint8_t *p, size_t avail) {
    if (avail < ST_FRAME_BYTES || p[0] != 'P' || p[1] != 'L' || p[2] != 'F' || p[3] != '1') return 0;
    uint32_t len = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
    return len > PURE_LINK_RECORD_MOST ? 0 : ST_FRAME_BYTES + (size_t)len;
}

/* Reads whole frames from `from` on; returns the end of the last whole, valid one. */
static int scan(st_stream *st, uint64_t from, uint64_t size, uint64_t *good, char *err, size_t err_len) {
    size_t cap = 1u << 20;
    uint8_t *buf = malloc(cap);
    if (buf == NULL) return st_err(err, err_len, -ENOMEM, "%s: out of memory", st->path);
    uint64_t pos = from;
    int rc = 0;
    while (rc == 0 && pos < size) {
        size_t want = size - pos < cap ? (size_t)(size - pos) : cap;
        if ((rc = st_read_all(st->fd, buf, want, pos)) != 0) {
            st_err(err, err_len, rc, "%s: read: %s", st->path, strerror(-rc));
            break;
        }
        size_t at = 0, need = 0;
        st_frame f;
        for (size_t n; rc == 0 && (n = st_frame_check(buf + at, want - at, &f)) > 0; at += n)
            apply_frame(st, &f, pos + at + n, err, err_len, &rc);
        if (rc != 0) break;
        pos += at;
        if (at == want) continue;  /* ended on a frame boundary: read on */
        /* A frame header cut by the end of this read (fewer than its bytes here) is read
         * again whole from its start, as long as the file holds that much. */
        if (want - at < ST_FRAME_BYTES && at > 0 && pos + ST_FRAME_BYTES <= size) continue;
        need = frame_claims(buf + at, want - at);
        if (need <= want - at || pos + need > size) break;  /* torn here */
        if (need > cap) {  /* a whole frame that did not fit: read again from it */
            uint8_t *bigger = realloc(buf, need);
            if (bigger == NULL) { rc = st_err(err, err_len, -ENOMEM, "%s: out of memory", st->path); break; }
            buf = bigger, cap = need;
        }
    }
    free(buf);
    *good = pos;
    return rc;
}

static int header_check(st_stream *st, const char *name, uint64_t size, char *err, size_t err_len) {
    uint8_t h[ST_HEADER_BYTES];
    char want[ST_FILE_NAME_MOST];
    if (size < ST_HEADER_BYTES) return st_err(err, err_len, -EINVAL, "%s: not a record file (too short)", st->path);
    int rc = st_read_all(st->fd, h, sizeof h, 0);
    if (rc != 0) return st_err(err, err_len, rc, "%s: read: %s", st->path, strerror(-rc));
    if (st_header_decode(h, &st->id) != 0)
        return st_err(err, err_len, -EINVAL, "%s: not a record file (bad header)", st->path);
    st_file_name(want, st->id.key, st->id.source, ".plr");
    if (strcmp(want, name) != 0)
        return st_err(err, err_len, -EINVAL, "%s: its header names another stream (%s)", st->path, want);
    return 0;
}

int st_stream_recover(st_stream *st, int dir_fd, const char *dir, const char *name, uint64_t *bytes_cut,
                      char *err, size_t err_len) {
    st->index_tmp_fd = -1;
    st->path = path_join(dir, name);
    if (st->path == NULL) return st_err(err, err_len, -ENOMEM, "%s: out of memory", dir);
    st->fd = openat(dir_fd, name, O_RDWR | O_CLOEXEC);
    if (st->fd < 0) return st_err(err, err_len, -errno, "%s: open: %s", st->path, strerror(errno));
    struct stat sb;
    if (fstat(st->fd, &sb) != 0) return st_err(err, err_len, -errno, "%s: stat: %s", st->path, strerror(errno));
    uint64_t size = (uint64_t)sb.st_size, good = 0;
    int rc = header_check(st, name, size, err, err_len);
    if (rc != 0) return rc;
    st->index_end = st_index_load(st, dir_fd, size);
    if ((rc = scan(st, st->index_end, size, &good, err, err_len)) != 0) return rc;
    if (good < size) {
        /* The torn tail was never acknowledged (an fdatasync covers whole frames only). */
        if (ftruncate(st->fd, (off_t)good) != 0)
            return st_err(err, err_len, -errno, "%s: cut a torn tail: %s", st->path, strerror(errno));
        *bytes_cut += size - good;
    }
    /* Frames a crash left in the page cache become durable here, before any is claimed. */
    if (fdatasync(st->fd) != 0) return st_err(err, err_len, -errno, "%s: fdatasync: %s", st->path, strerror(errno));
    for (size_t i = 0; i < st->runs_len; i++) {
        st_run *r = &st->runs[i];
        r->mark_batch = r->mark_durable = r->mark_written = r->mark_appended;
        r->handle = -1;
    }
    st->end_appended = st->end_batch = st->end_durable = st->end_written = good;
    st->last_batch = st->last_durable = st->last_written = st->last_appended;
    if (good - st->index_end >= PL_STORE_CHECKPOINT_BYTES) return st_index_checkpoint_now(st, dir_fd, err, err_len);
    return 0;
}

void st_stream_free(st_stream *st) {
    if (st == NULL) return;
    if (st->fd >= 0) close(st->fd);
    if (st->index_tmp_fd >= 0) close(st->index_tmp_fd);
    free(st->path);
    free(st->runs);
    free(st->runs_next);
    free(st->runs_batch);
    free(st->wbuf);
    free(st);
}

/* ---- Append ---- */

/* The file's written state after `good` bytes of the buffer went whole to it (a failed
 * write): each whole frame's run is written up to its record. */
static void written_through(st_stream *st, size_t good) {
    st_frame f;
    for (size_t at = 0, n; at < good; at += n) {
        n = st_frame_check(st->wbuf + at, good - at, &f);
        if (n == 0) break;  /* never: the buffer holds only frames it made */
        st_run *r = st_run_find(st, f.run);
        if (r != NULL) r->mark_written = f.record + 1;
        st->end_written += n;
        st->last_written = n;
        st->frames_written++;
    }
}

/* The file's state and the appended one made equal, after a write: forward (what was
 * appended is written) or back (what was appended and not written is forgotten, the store
 * fails: nothing of it was or will be claimed).  The runs appended to since the batch
 * closed are the only ones whose marks can differ. */
static void written_meets_appended(st_stream *st, int forward) {
    for (size_t i = 0; i < st->runs_next_len; i++) {
        st_run *r = &st->runs[st->runs_next[i]];
        if (forward) r->mark_written = r->mark_appended;
        else r->mark_appended = r->mark_written;
    }
    uint64_t *w[3] = {&st->end_written, &st->last_written, &st->frames_written};
    uint64_t *ap[3] = {&st->end_appended, &st->last_appended, &st->frames_appended};
    for (int i = 0; i < 3; i++) {
        if (forward) *w[i] = *ap[i];
        else *ap[i] = *w[i];
    }
    st->wbuf_len = 0;
}

int st_stream_flush(st_stream *st, char *err, size_t err_len) {
    size_t done = 0;
    int rc = 0;
    while (done < st->wbuf_len) {
        ssize_t n = pwrite(st->fd, st->wbuf + done, st->wbuf_len - done, (off_t)(st->end_written + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { rc = n < 0 ? -errno : -EIO; break; }
        done += (size_t)n;
    }
    if (rc == 0) {
        written_meets_appended(st, 1);
        return 0;
    }
    /* The whole frames the kernel took stay; a part of one is cut (it was never claimed). */
    written_through(st, done);
    int cut = ftruncate(st->fd, (off_t)st->end_written);
    written_meets_appended(st, 0);
    return st_err(err, err_len, rc, "%s: write: %s%s", st->path, strerror(-rc),
                  cut != 0 ? " (and the partial frame could not be cut)" : "");
}

/* Room for `total` more bytes in the buffer (growing it, or writing it out first); 0 when
 * there is room, 1 when the frame should go to the file directly, or -errno. */
static int wbuf_room(st_stream *st, size_t total, char *err, size_t err_len) {
    if (total > ST_WBUF_FRAME_MOST) return 1;
    if (st->wbuf_len + total <= st->wbuf_cap) return 0;
    if (st->wbuf_cap < ST_WBUF_BYTES_MOST) {
        size_t cap = st->wbuf_cap ? st->wbuf_cap : ST_WBUF_BYTES_LEAST;
        while (cap < st->wbuf_len + total && cap < ST_WBUF_BYTES_MOST) cap *= 2;
        uint8_t *b = realloc(st->wbuf, cap);
        if (b != NULL) {
            st->wbuf = b, st->wbuf_cap = cap;
            if (st->wbuf_len + total <= cap) return 0;
        }
    }
    int rc = st_stream_flush(st, err, err_len);
    if (rc != 0) return rc;
    return total <= st->wbuf_cap ? 0 : 1;  /* no buffer (out of memory): write it directly */
}

/* A frame too large for the buffer: written at once (the buffer is empty), in one pwritev
 * of its header and its two pieces. */
static int write_direct(st_stream *st, const uint8_t head[ST_FRAME_BYTES], const uint8_t *data, size_t len,
                        const uint8_t *data2, size_t len2, char *err, size_t err_len) {
    uint64_t total = ST_FRAME_BYTES + (uint64_t)len + len2, off = st->end_written;
    struct iovec iov[3] = {{(void *)head, ST_FRAME_BYTES}, {(void *)data, len}, {(void *)data2, len2}};
    int n_iov = len2 ? 3 : 2, rc = 0;
    uint64_t done = 0;
    while (done < total) {
        ssize_t n = pwritev(st->fd, iov, n_iov, (off_t)(off + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) { rc = -errno; break; }
        if (n == 0) { rc = -EIO; break; }
        done += (uint64_t)n;
        for (size_t k = (size_t)n; k > 0 || (n_iov > 1 && iov[0].iov_len == 0);) {  /* skip what went */
            if (iov[0].iov_len == 0) {
                memmove(iov, iov + 1, (size_t)--n_iov * sizeof *iov);
                continue;
            }
            size_t step = k < iov[0].iov_len ? k : iov[0].iov_len;
            iov[0].iov_base = (uint8_t *)iov[0].iov_base + step, iov[0].iov_len -= step, k -= step;
        }
    }
    if (rc != 0) {
        /* Nothing half-written stays: the file ends where it did before this frame. */
        int cut = ftruncate(st->fd, (off_t)off);
        return st_err(err, err_len, rc, "%s: write: %s%s", st->path, strerror(-rc),
                      cut != 0 ? " (and the partial frame could not be cut)" : "");
    }
    st->end_written = off + total;
    st->last_written = total;
    st->frames_written++;
    return 0;
}

int st_stream_append(st_stream *st, st_run *r, uint64_t record, const uint8_t *data, size_t len,
                     const uint8_t *data2, size_t len2, uint64_t file_bytes_most, char *err, size_t err_len) {
    uint64_t total = ST_FRAME_BYTES + (uint64_t)len + len2, off = st->end_appended;
    if (off + total > file_bytes_most)
        return st_err(err, err_len, -EFBIG, "%s: a record of %zu B would take the file past its bound of %llu B",
                      st->path, len + len2, (unsigned long long)file_bytes_most);
    int rc = wbuf_room(st, (size_t)total, err, err_len);
    if (rc < 0) return rc;
    if (rc == 0) {
        uint8_t *p = st->wbuf + st->wbuf_len;
        st_frame_encode(p, r->run, record, data, len, data2, len2);
        if (len) memcpy(p + ST_FRAME_BYTES, data, len);
        if (len2) memcpy(p + ST_FRAME_BYTES + len, data2, len2);
        st->wbuf_len += (size_t)total;
    } else {
        if (st->wbuf_len > 0 && (rc = st_stream_flush(st, err, err_len)) != 0) return rc;
        uint8_t head[ST_FRAME_BYTES];
        st_frame_encode(head, r->run, record, data, len, data2, len2);
        if ((rc = write_direct(st, head, data, len, data2, len2, err, err_len)) != 0) return rc;
        r->mark_written = record + 1;
    }
    st->end_appended = off + total;
    st->last_appended = total;
    st->frames_appended++;
    r->mark_appended = record + 1;
    r->end_off = st->end_appended;
    return 0;
}

int st_stream_cut_to_durable(st_stream *st) {
    for (size_t i = 0; i < st->runs_len; i++) {
        st_run *r = &st->runs[i];
        r->mark_appended = r->mark_batch = r->mark_written = r->mark_durable;
    }
    st->end_appended = st->end_batch = st->end_written = st->end_durable;
    st->last_appended = st->last_batch = st->last_written = st->last_durable;
    st->frames_appended = st->frames_batch = st->frames_written = st->frames_durable;
    st->wbuf_len = 0;
    st->hold_mark = st->hold_end = 0;  /* the owner goes on from its durable mark */
    return ftruncate(st->fd, (off_t)st->end_durable) != 0 ? -errno : 0;
}
