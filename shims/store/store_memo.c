/* store_memo.c: the memo file — pure_link_memo_size() bytes, written in place at the
 * offsets the core names (MEMO_WRITE), made durable by the commit batch before the core
 * hears pure_link_memo_written().  The core's own layout (two copies of every slot, each
 * checksummed) makes a torn or lost write safe; the file only has to exist at its size. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_internal.h"

static int dir_sync(const char *path) {
    char *dir = strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;
    if (dir == NULL) return -ENOMEM;
    const char *d = slash == NULL ? "." : slash == dir ? "/" : (*slash = 0, dir);
    int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;
    if (fd < 0 || fsync(fd) != 0) rc = -errno;
    if (fd >= 0) close(fd);
    free(dir);
    return rc;
}

static int all_zero(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i]) return 0;
    return 1;
}

/* Opens or creates the memo file at its size.  A file of another size is a memo of another
 * configuration, which the core could not load: it is cleared to the new size. */
int st_memo_open(st_memo *m, const char *path, size_t bytes, char *err, size_t err_len) {
    memset(m, 0, sizeof *m);
    m->fd = m->lock_fd = -1;
    if (path == NULL || bytes == 0) return 0;
    if ((m->path = strdup(path)) == NULL) return st_err(err, err_len, -ENOMEM, "%s: out of memory", path);
    /* Before the memo is read or resized: another receiver may be writing it. */
    char lock[PATH_MAX];
    if (snprintf(lock, sizeof lock, "%s%s", path, ST_LOCK_SUFFIX) >= (int)sizeof lock)
        return st_err(err, err_len, -ENAMETOOLONG, "%s: the path is too long", path);
    m->lock_fd = st_lock_take(AT_FDCWD, lock, lock, "this memo", err, err_len);
    if (m->lock_fd < 0) return m->lock_fd;
    m->bytes = bytes;
    int created = access(path, F_OK) != 0;
    m->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);  /* it holds epoch secrets */
    if (m->fd < 0) return st_err(err, err_len, -errno, "%s: open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(m->fd, &sb) != 0) return st_err(err, err_len, -errno, "%s: stat: %s", path, strerror(errno));
    int rc = 0;
    if ((uint64_t)sb.st_size == bytes) {
        if ((m->loaded = malloc(bytes)) == NULL) return st_err(err, err_len, -ENOMEM, "%s: out of memory", path);
        if ((rc = st_read_all(m->fd, m->loaded, bytes, 0)) != 0)
            return st_err(err, err_len, rc, "%s: read: %s", path, strerror(-rc));
        if (all_zero(m->loaded, bytes)) free(m->loaded), m->loaded = NULL;
        return 0;
    }
    if (ftruncate(m->fd, 0) != 0 || ftruncate(m->fd, (off_t)bytes) != 0 || fdatasync(m->fd) != 0)
        return st_err(err, err_len, -errno, "%s: size it to %zu B: %s", path, bytes, strerror(errno));
    if (created && (rc = dir_sync(path)) != 0)
        return st_err(err, err_len, rc, "%s: fsync its directory: %s", path, strerror(-rc));
    return 0;
}

static int token_push(uint64_t **a, size_t *len, size_t *cap, uint64_t token) {
    if (*len == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        uint64_t *b = realloc(*a, c * sizeof *b);
        if (b == NULL) return -ENOMEM;
        *a = b, *cap = c;
    }
    (*a)[(*len)++] = token;
    return 0;
}

int st_memo_write(st_memo *m, uint64_t offset, uint64_t token, const uint8_t *data, size_t len, char *err,
                  size_t err_len) {
    if (m->fd < 0) return st_err(err, err_len, -EINVAL, "store: a MEMO_WRITE, but the store keeps no memo file");
    if (offset > m->bytes || len > m->bytes - offset)
        return st_err(err, err_len, -EINVAL, "%s: a memo write at %llu + %zu B is past its %zu B", m->path,
                      (unsigned long long)offset, len, m->bytes);
    int rc = st_write_all(m->fd, data, len, offset);
    if (rc != 0) return st_err(err, err_len, rc, "%s: write: %s", m->path, strerror(-rc));
    if (token_push(&m->tokens_next, &m->next_len, &m->next_cap, token) != 0)
        return st_err(err, err_len, -ENOMEM, "%s: out of memory", m->path);
    return 0;
}

/* Moves the waiting tokens into the batch (which must be empty). */
int st_memo_batch_close(st_memo *m) {
    uint64_t *t = m->tokens_batch;
    size_t c = m->batch_cap;
    m->tokens_batch = m->tokens_next, m->batch_cap = m->next_cap, m->batch_len = m->next_len;
    m->tokens_next = t, m->next_cap = c, m->next_len = 0;
    m->in_batch = m->batch_len > 0;
    return m->in_batch;
}

void st_memo_close(st_memo *m) {
    if (m->fd >= 0) close(m->fd);
    if (m->lock_fd >= 0) close(m->lock_fd);
    free(m->path);
    free(m->loaded);
    free(m->tokens_next);
    free(m->tokens_batch);
    memset(m, 0, sizeof *m);
    m->fd = m->lock_fd = -1;
}
