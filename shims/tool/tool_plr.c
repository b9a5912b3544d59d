/* tool_plr.c: reading the receiver's record files back, for `pure-link cat` and `verify`
 * (tool.h).  The bytes are judged by the store's own code (pl_store_frame_read, the rule
 * the receiver's open applies); this file only reads them, in windows of
 * TOOL_READ_CHUNK_BYTES, and lists a directory's files.  Nothing is written or locked: a
 * reader may run beside the receiver that appends. */
#define _GNU_SOURCE
#include "tool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tool_plr_open(tool_plr *r, const char *path) {
    *r = (tool_plr){.fd = -1};
    r->path = strdup(path);
    if (r->path == NULL) return -ENOMEM;
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (r->fd < 0 || fstat(r->fd, &st) != 0) return -errno;
    if (S_ISDIR(st.st_mode)) return -EISDIR;
    r->dev = st.st_dev, r->ino = st.st_ino;
    uint8_t head[PL_STORE_FILE_HEADER_BYTES];
    ssize_t n = pread(r->fd, head, sizeof head, 0);
    if (n < 0) return -errno;
    if ((size_t)n < sizeof head || pl_store_file_header(head, &r->id) != 0) return 1;
    r->pos = r->buf_off = PL_STORE_FILE_HEADER_BYTES;
    return 0;
}

void tool_plr_close(tool_plr *r) {
    if (r->fd >= 0) close(r->fd);
    free(r->buf);
    free(r->path);
    *r = (tool_plr){.fd = -1};
}

void tool_plr_rest(tool_plr *r) {
    free(r->buf);
    r->buf = NULL, r->buf_len = r->buf_cap = 0, r->buf_off = r->pos;
}

/* Makes the window hold `need` bytes from r->pos, or all the file has from there.  Returns
 * how many it holds from r->pos, or -errno. */
static ssize_t fill(tool_plr *r, size_t need) {
    size_t at = (size_t)(r->pos - r->buf_off);
    if (r->buf_len - at >= need) return (ssize_t)(r->buf_len - at);
    if (at != 0 && r->buf_len != at) memmove(r->buf, r->buf + at, r->buf_len - at); /* no buffer yet: nothing to move */
    r->buf_len -= at;
    r->buf_off = r->pos;
    size_t want = need > TOOL_READ_CHUNK_BYTES ? need : TOOL_READ_CHUNK_BYTES;
    if (want > r->buf_cap) {
        uint8_t *b = realloc(r->buf, want);
        if (b == NULL) return -ENOMEM;
        r->buf = b, r->buf_cap = want;
    }
    while (r->buf_len < want) {
        ssize_t n = pread(r->fd, r->buf + r->buf_len, want - r->buf_len, (off_t)(r->buf_off + r->buf_len));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -errno;
        if (n == 0) break;
        r->buf_len += (size_t)n;
    }
    return (ssize_t)r->buf_len;
}

int tool_plr_next(tool_plr *r, pl_store_frame *f, const uint8_t **data, const char **why) {
    ssize_t have = fill(r, PL_STORE_FRAME_HEADER_BYTES);
    long n = 0;
    if (have >= 0) {
        n = pl_store_frame_read(r->buf + (r->pos - r->buf_off), (size_t)have, f, why);
        if (n == 0 && (size_t)have >= PL_STORE_FRAME_HEADER_BYTES &&
            (have = fill(r, PL_STORE_FRAME_HEADER_BYTES + (size_t)f->len)) >= 0)
            n = pl_store_frame_read(r->buf + (r->pos - r->buf_off), (size_t)have, f, why);
    }
    if (have < 0) return r->err = (int)-have, TOOL_PLR_IO;
    if (n <= 0) {  /* forget the bytes from here: a receiver's open may cut and rewrite them */
        r->buf_len = (size_t)(r->pos - r->buf_off);
        return n == 0 ? 0 : (int)n;
    }
    *data = r->buf + (r->pos - r->buf_off) + PL_STORE_FRAME_HEADER_BYTES;
    r->pos += (uint64_t)n;
    r->index++;
    return 1;
}

/* 1 when a whole, valid frame starts at `off`; 0 when not, -errno. */
static int frame_at(int fd, uint64_t off, uint8_t **buf, size_t *cap) {
    pl_store_frame f;
    const char *why;
    size_t want = PL_STORE_FRAME_HEADER_BYTES;
    for (int pass = 0; pass < 2; pass++) {
        if (want > *cap) {
            uint8_t *b = realloc(*buf, want);
            if (b == NULL) return -ENOMEM;
            *buf = b, *cap = want;
        }
        ssize_t n = pread(fd, *buf, want, (off_t)off);
        if (n < 0) return -errno;
        long got = pl_store_frame_read(*buf, (size_t)n, &f, &why);
        if (got != 0 || (size_t)n < want) return got > 0;
        want = PL_STORE_FRAME_HEADER_BYTES + (size_t)f.len;
    }
    return 0;
}

/* The tail from a bad frame is torn when no whole, valid frame starts anywhere after it:
 * what the receiver was writing when it stopped.  A valid frame after it was written later
 * and may have been acknowledged, so the bad one is damage, not a tail; unless the bad one
 * is whole and valid when read again (a receiver was writing both meanwhile). */
int tool_plr_after(tool_plr *r, uint64_t *next_off) {
    static const uint8_t tag[4] = {'P', 'L', 'F', '1'};  /* a frame's first bytes (STORE.md) */
    uint8_t *win = malloc(TOOL_READ_CHUNK_BYTES), *frame = NULL;
    size_t frame_cap = 0;
    int rc = win == NULL ? -ENOMEM : 0;
    for (uint64_t off = r->pos + 1; rc == 0;) {
        ssize_t n = pread(r->fd, win, TOOL_READ_CHUNK_BYTES, (off_t)off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) rc = -errno;
        if (n <= 0) break;
        for (const uint8_t *p = win, *end = win + n; rc == 0 && (p = memmem(p, (size_t)(end - p), tag, 4)); p++)
            if ((rc = frame_at(r->fd, off + (uint64_t)(p - win), &frame, &frame_cap)) == 1)
                *next_off = off + (uint64_t)(p - win);
        if ((size_t)n < TOOL_READ_CHUNK_BYTES) break;  /* the end of the file */
        off += TOOL_READ_CHUNK_BYTES - (sizeof tag - 1);  /* a tag across the edge is seen next */
    }
    /* A receiver may have finished the frame, and appended the one found, since it was read. */
    if (rc == 1 && frame_at(r->fd, r->pos, &frame, &frame_cap) == 1) rc = 2;
    free(win);
    free(frame);
    return rc;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int tool_plr_list(const char *dir, char ***out, size_t *len) {
    DIR *d = opendir(dir);
    if (d == NULL) return -errno;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l <= 4 || strcmp(e->d_name + l - 4, ".plr") != 0) continue;
        if (n == TOOL_CAT_FILES_MOST) {
            rc = -EMFILE;
            break;
        }
        if (n == cap) {
            char **more = reallocarray(names, cap ? 2 * cap : 64, sizeof *names);
            if (more == NULL) break;
            names = more, cap = cap ? 2 * cap : 64;
        }
        if ((names[n] = malloc(strlen(dir) + l + 2)) == NULL) break;
        sprintf(names[n++], "%s/%s", dir, e->d_name);
    }
    if (e != NULL && rc == 0) rc = -ENOMEM;
    closedir(d);
    if (names) qsort(names, n, sizeof *names, by_name);
    *out = names, *len = n;
    return rc;
}
