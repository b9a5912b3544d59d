/* store_commit.c: group commit.  Appends go to the files at once; a batch closes over
 * every file written since the last batch closed, its descriptors are fdatasync'ed (here
 * or by the driver, off its thread), and only when all of them returned 0 does the core
 * hear that the batch's records are stored and its memo writes written.  Records that
 * arrive while a batch's fdatasync calls run wait for the next batch: one fdatasync per
 * file covers all of them. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "store_internal.h"

void st_dirty_add(pl_store *s, st_stream *st) {
    if (st->dirty) return;
    if (s->dirty_len == s->dirty_cap) return;  /* sized to every stream at creation */
    st->dirty = 1;
    s->dirty[s->dirty_len++] = st;
}

int pl_store_pending(const pl_store *s) { return s->dirty_len > 0 || s->memo.next_len > 0; }

/* Moves one dirty stream into the batch: its appended frames and its waiting index. */
static void batch_take(pl_store *s, st_stream *st, int *fds, size_t *n) {
    st->dirty = 0;
    st->in_batch = 1;
    s->batch[s->batch_len++] = st;
    if (st->runs_next_len > 0) {
        fds[(*n)++] = st->fd;
        st->end_batch = st->end_appended;
        st->last_batch = st->last_appended;
        st->frames_batch = st->frames_appended;
        for (size_t i = 0; i < st->runs_next_len; i++) {
            st_run *r = &st->runs[st->runs_next[i]];
            r->mark_batch = r->mark_appended;
            r->in_next = 0;
            st->runs_batch[st->runs_batch_len++] = st->runs_next[i];
        }
        st->runs_next_len = 0;
    }
    if (st->index_tmp_fd >= 0) {
        fds[(*n)++] = st->index_tmp_fd;
        st->index_in_batch = 1;
    }
}

int pl_store_commit_begin(pl_store *s, int *fds, size_t fds_most) {
    if (s->batch_open) return -EALREADY;
    if (s->failed && s->dirty_len == 0 && s->memo.next_len == 0) return s->failed;
    if (fds_most > PL_STORE_BATCH_FDS_MOST) fds_most = PL_STORE_BATCH_FDS_MOST;
    size_t n = 0, kept = 0;
    if (s->memo.next_len > 0 && n < fds_most && st_memo_batch_close(&s->memo)) fds[n++] = s->memo.fd;
    for (size_t i = 0; i < s->dirty_len; i++) {
        st_stream *st = s->dirty[i];
        size_t need = (st->runs_next_len > 0) + (st->index_tmp_fd >= 0);
        if (kept == 0 && n + need <= fds_most) batch_take(s, st, fds, &n);
        else s->dirty[kept++] = st;  /* no room: first in the next batch */
    }
    s->dirty_len = kept;
    s->batch_fds = n;
    s->batch_open = n > 0;
    return (int)n;
}

static void batch_fail(pl_store *s, int result, const char *failed_path, char *err, size_t err_len) {
    const char *first = failed_path ? failed_path : s->memo.in_batch ? s->memo.path
                                                    : s->batch_len ? s->batch[0]->path : "store";
    for (size_t i = 0; i < s->batch_len; i++) {
        st_stream *st = s->batch[i];
        st_stream_cut_to_durable(st);  /* best effort: a reopen must not find them either */
        st->runs_batch_len = 0;
        st->in_batch = st->index_in_batch = 0;
    }
    s->memo.batch_len = 0;
    s->memo.in_batch = 0;
    /* Nothing appended since is claimed either: the store is done until it is reopened. */
    for (size_t i = 0; i < s->dirty_len; i++) {
        st_stream *st = s->dirty[i];
        for (size_t k = 0; k < st->runs_next_len; k++) st->runs[st->runs_next[k]].in_next = 0;
        st->runs_next_len = 0;
        st->dirty = 0;
    }
    s->dirty_len = 0;
    s->memo.next_len = 0;
    st_err(err, err_len, result, "%s: fdatasync: %s (batch of %zu files); nothing since the last commit is claimed",
           first, strerror(-result), s->batch_fds);
    st_fail(s, result, err);
}

/* The batch's records are durable: the core hears it, per run on the handle bound to it
 * now (never beyond what that handle has handed over). */
static void stream_durable(pl_store *s, st_stream *st, const st_notify *n) {
    s->stats.bytes_durable += st->end_batch - st->end_durable;
    s->stats.records_durable += st->frames_batch - st->frames_durable;
    st->end_durable = st->end_batch;
    st->last_durable = st->last_batch;
    st->frames_durable = st->frames_batch;
    for (size_t i = 0; i < st->runs_batch_len; i++) {
        st_run *r = &st->runs[st->runs_batch[i]];
        r->mark_durable = r->mark_batch;
        if (r->handle < 0) continue;
        const st_handle *h = &s->handles[r->handle];
        if (h->stream != st || h->run != r->run) continue;
        uint64_t mark = r->mark_durable < h->seen ? r->mark_durable : h->seen;
        n->stored(n->ctx, r->handle, (int64_t)mark);
    }
    st->runs_batch_len = 0;
    st->in_batch = 0;
}

/* The checkpoint of a stream: installs the one this batch made durable, starts the next
 * when enough new bytes are durable.  An index is only a shortcut for recovery, so its
 * failures are not the store's: the old index (or a whole read) still recovers. */
static void stream_checkpoint(pl_store *s, st_stream *st) {
    int dir_fd = st->input->dir_fd;
    if (st->index_in_batch) {
        if (st_index_install(st, dir_fd, NULL, 0) == 0) st->index_end = st->index_tmp_end;
        close(st->index_tmp_fd);
        st->index_tmp_fd = -1;
        st->index_in_batch = 0;
    }
    if (st->index_tmp_fd < 0 && st->end_durable - st->index_end >= PL_STORE_CHECKPOINT_BYTES) {
        int fd = st_index_write_tmp(st, dir_fd, NULL, 0);
        if (fd < 0) return;
        st->index_tmp_fd = fd;
        st->index_tmp_end = st->end_durable;
        st_dirty_add(s, st);
    }
}

int st_commit_end(pl_store *s, int result, const char *failed_path, const st_notify *n, char *err,
                  size_t err_len) {
    if (!s->batch_open) return st_err(err, err_len, -EINVAL, "store: commit_end without an open batch");
    s->batch_open = 0;
    s->stats.commits++;
    s->stats.fdatasyncs += s->batch_fds;
    if (result != 0) {
        batch_fail(s, result < 0 ? result : -EIO, failed_path, err, err_len);
        s->batch_len = 0;
        return s->failed;
    }
    for (size_t i = 0; i < s->memo.batch_len; i++) n->memo_written(n->ctx, s->memo.tokens_batch[i]);
    s->memo.batch_len = 0;
    s->memo.in_batch = 0;
    for (size_t i = 0; i < s->batch_len; i++) {
        stream_durable(s, s->batch[i], n);
        stream_checkpoint(s, s->batch[i]);
    }
    s->batch_len = 0;
    return 0;
}

static const char *fd_path(const pl_store *s, int fd) {
    if (fd == s->memo.fd) return s->memo.path;
    for (size_t i = 0; i < s->batch_len; i++)
        if (s->batch[i]->fd == fd || s->batch[i]->index_tmp_fd == fd) return s->batch[i]->path;
    return NULL;
}

int st_commit(pl_store *s, const st_notify *n, char *err, size_t err_len) {
    int fds[PL_STORE_BATCH_FDS_MOST];
    int count = pl_store_commit_begin(s, fds, PL_STORE_BATCH_FDS_MOST);
    if (count < 0) return st_failed(s, err, err_len);
    if (count == 0) return 0;
    int rc = 0;
    const char *path = NULL;
    for (int i = 0; i < count && rc == 0; i++)
        if (fdatasync(fds[i]) != 0) rc = -errno, path = fd_path(s, fds[i]);
    return st_commit_end(s, rc, path, n, err, err_len);
}
