/* store_commit.c: group commit.  Appends wait in each stream's write buffer, which goes
 * to its file in one write when it is full or when a batch closes; a batch closes over
 * every file appended to since the last batch closed, its descriptors are fdatasync'ed (here
 * or by the driver, off its thread), and only when all of them returned 0 does the core
 * hear that the batch's records are stored and its memo writes written.  Records that
 * arrive while a batch's fdatasync calls run wait for the next batch: one fdatasync per
 * file covers all of them.
 *
 * A new stream's file takes two batches: the first fdatasyncs it under its temporary name
 * (header and records), after which it is renamed into place; the second fsyncs the
 * directory (once for every file renamed there) and only then are its records claimed.
 * Directories go last in a batch's descriptors: they take fsync, the files fdatasync. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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

/* Its bytes need an fdatasync when some were appended since the last batch took it (a
 * stream renamed by the last batch comes back with nothing new when none came since). */
static int needs_fdatasync(const st_stream *st) { return st->runs_next_len > 0 && st->end_appended != st->end_batch; }

/* Descriptors a dirty stream adds to the batch. */
static size_t batch_need(const st_stream *st) {
    return (size_t)needs_fdatasync(st) + (st->index_tmp_fd >= 0) +
           (st->name == ST_NAME_RENAMED && !st->input->dir_in_batch);
}

/* Moves one dirty stream into the batch: its appended frames, its waiting index, and the
 * fsync of its directory when its file was renamed since. */
static void batch_take(pl_store *s, st_stream *st, int *fds, size_t *n) {
    st->dirty = 0;
    st->in_batch = 1;
    s->batch[s->batch_len++] = st;
    if (st->name == ST_NAME_RENAMED) {
        st->name_in_batch = 1;
        st->input->dir_in_batch = 1;
    }
    if (st->runs_next_len > 0) {
        if (needs_fdatasync(st)) fds[(*n)++] = st->fd;
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

/* Every dirty stream's write buffer goes to its file, one write each, before the batch
 * takes what the files hold.  A failed write makes its input fail (its streams are refused
 * at st_commit_end, which has the core); the whole frames written before it are still
 * committed. */
static void flush_dirty(pl_store *s) {
    for (size_t i = 0; i < s->dirty_len; i++) {
        st_stream *st = s->dirty[i];
        if (st->wbuf_len == 0) continue;
        char line[sizeof s->failed_line];
        int rc = st_stream_flush(st, line, sizeof line);
        if (rc != 0) {
            st_input_fail(s, st->input, rc, line);
            if (s->failed_unreported == NULL) s->failed_unreported = st->input;
        }
    }
}

/* A batch with nothing to sync never opens, so no commit_end will close it: the streams it
 * took (dirty with nothing new, as after a write at begin that failed before a whole frame
 * went) leave it now.  Left in it, their input could never be tried again (st_input_retry
 * waits for their batch to end).  Nothing was appended since the last batch ended, so
 * their ends are the durable ones and nothing of them waits to be claimed. */
static void batch_drop_empty(pl_store *s) {
    for (size_t i = 0; i < s->batch_len; i++) {
        st_stream *st = s->batch[i];
        assert(st->end_batch == st->end_durable);
        st->runs_batch_len = 0;
        st->in_batch = 0;
    }
    s->batch_len = 0;
}

int pl_store_commit_begin(pl_store *s, int *fds, size_t fds_most, size_t *dirs) {
    *dirs = 0;
    if (s->batch_open) return -EALREADY;
    if (s->failed && s->dirty_len == 0 && s->memo.next_len == 0) return s->failed;
    if (fds_most > PL_STORE_BATCH_FDS_MOST) fds_most = PL_STORE_BATCH_FDS_MOST;
    flush_dirty(s);
    size_t n = 0, kept = 0, d = 0;
    if (s->memo.next_len > 0 && n < fds_most && st_memo_batch_close(&s->memo)) fds[n++] = s->memo.fd;
    for (size_t i = 0; i < s->dirty_len; i++) {
        st_stream *st = s->dirty[i];
        size_t need = batch_need(st), dir = st->name == ST_NAME_RENAMED && !st->input->dir_in_batch;
        if (kept == 0 && n + d + need <= fds_most) {
            batch_take(s, st, fds, &n);
            d += dir;
        } else {
            s->dirty[kept++] = st;  /* no room: first in the next batch */
        }
    }
    s->dirty_len = kept;
    for (size_t i = 0; i < s->inputs_len; i++)
        if (s->inputs[i].dir_in_batch) fds[n++] = s->inputs[i].dir_fd;
    if (n == 0) batch_drop_empty(s);
    s->batch_fds = n;
    s->batch_dirs = *dirs = d;
    s->batch_open = n > 0;
    return (int)n;
}

/* A sync of the batch failed, and the result names no descriptor: every input with a file
 * in it fails (the memo in it: the whole store).  Nothing of the batch is claimed, nor
 * anything appended since to a failed input's streams. */
static void batch_fail(pl_store *s, int result, const char *failed_path, char *err, size_t err_len) {
    const char *first = failed_path ? failed_path : s->memo.in_batch ? s->memo.path
                                                    : s->batch_len ? s->batch[0]->path : "store";
    st_err(err, err_len, result, "%s: fdatasync: %s (batch of %zu files); nothing since the last commit is claimed",
           first, strerror(-result), s->batch_fds);
    int whole = s->memo.in_batch;
    for (size_t i = 0; i < s->inputs_len; i++)
        if (s->inputs[i].dir_in_batch) st_input_fail(s, &s->inputs[i], result, err);
    for (size_t i = 0; i < s->batch_len; i++) {
        st_stream *st = s->batch[i];
        st_input_fail(s, st->input, result, err);
        st_stream_cut_to_durable(st);  /* best effort: a reopen must not find them either */
        st->runs_batch_len = 0;
        st->in_batch = st->index_in_batch = st->name_in_batch = 0;
    }
    for (size_t i = 0; i < s->inputs_len; i++) s->inputs[i].dir_in_batch = 0;
    s->memo.batch_len = 0;
    s->memo.in_batch = 0;
    size_t kept = 0;
    for (size_t i = 0; i < s->dirty_len; i++) {
        st_stream *st = s->dirty[i];
        if (!whole && !st->input->failed) {
            s->dirty[kept++] = st;
            continue;
        }
        for (size_t k = 0; k < st->runs_next_len; k++) st->runs[st->runs_next[k]].in_next = 0;
        st->runs_next_len = 0;
        st->dirty = 0;
    }
    s->dirty_len = kept;
    if (!whole) return;
    /* Nothing appended since is claimed either: the store is done until it is reopened. */
    s->memo.next_len = 0;
    st_fail(s, result, err);
}

/* The durable bytes ST_CACHE_TAIL_BYTES behind the end leave the page cache (see
 * store_internal.h); advice only, so its failure changes nothing. */
static void stream_uncache(st_stream *st) {
    if (st->end_durable < st->end_uncached + ST_CACHE_TAIL_BYTES + ST_UNCACHE_STEP_BYTES) return;
    uint64_t to = (st->end_durable - ST_CACHE_TAIL_BYTES) & ~(uint64_t)(ST_UNCACHE_STEP_BYTES - 1);
    if (to <= st->end_uncached) return;
    (void)posix_fadvise(st->fd, (off_t)st->end_uncached, (off_t)(to - st->end_uncached), POSIX_FADV_DONTNEED);
    st->end_uncached = to;
}

/* Run r's records are durable up to its mark_durable: the core hears it on the handle
 * bound to it now (never beyond what that handle has handed over). */
static void run_durable(pl_store *s, st_stream *st, const st_run *r, const st_notify *n) {
    if (r->handle < 0) return;
    const st_handle *h = &s->handles[r->handle];
    if (h->stream != st || h->run != r->run) return;
    uint64_t mark = r->mark_durable < h->seen ? r->mark_durable : h->seen;
    n->stored(n->ctx, r->handle, (int64_t)mark);
}

/* The owner took the stream over at records others appended (store.c take_over): they
 * are durable now, so they are its. */
static void hold_release(pl_store *s, st_stream *st, const st_notify *n) {
    st_run *r = st->owned ? st_run_find(st, st->owner) : NULL;
    uint64_t mark = st->hold_mark;
    st->hold_mark = st->hold_end = 0;
    if (r == NULL || r->cut || r->mark_durable >= mark) return;
    if (r->mark_batch < mark) r->mark_batch = mark;
    r->mark_durable = mark;
    run_durable(s, st, r, n);
}

/* The batch's records are durable: the core hears it, per run. */
static void stream_durable(pl_store *s, st_stream *st, const st_notify *n) {
    s->stats.bytes_durable += st->end_batch - st->end_durable;
    s->stats.records_durable += st->frames_batch - st->frames_durable;
    s->stats.record_bytes_durable += st->end_batch - st->end_durable - ST_FRAME_BYTES * (st->frames_batch - st->frames_durable);
    st->end_durable = st->end_batch;
    st->last_durable = st->last_batch;
    st->frames_durable = st->frames_batch;
    stream_uncache(st);
    for (size_t i = 0; i < st->runs_batch_len; i++) {
        st_run *r = &st->runs[st->runs_batch[i]];
        r->mark_durable = r->mark_batch;
        run_durable(s, st, r, n);
    }
    st->runs_batch_len = 0;
    if (st->hold_mark > 0 && st->end_durable >= st->hold_end) hold_release(s, st, n);
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

/* A new stream's header and records are durable under the temporary name: it is renamed
 * into place, and its runs go back to wait for the batch that fsyncs the directory.  A
 * failed rename claims nothing of the stream and makes its input fail. */
static int stream_rename(pl_store *s, st_stream *st, char *err, size_t err_len) {
    char line[sizeof s->failed_line];
    int rc = st_stream_rename(st, st->input->dir_fd, line, sizeof line);
    if (rc != 0) {
        if (err != NULL) snprintf(err, err_len, "%s", line);
        st_input_fail(s, st->input, rc, line);
    } else {
        s->names_waiting++;
        for (size_t i = 0; i < st->runs_batch_len; i++) {
            st_run *r = &st->runs[st->runs_batch[i]];
            if (r->in_next) continue;
            r->in_next = 1;
            st->runs_next[st->runs_next_len++] = st->runs_batch[i];
        }
        st_dirty_add(s, st);
    }
    st->runs_batch_len = 0;
    st->in_batch = 0;
    return rc;
}

/* The failed write of a begin is told, its input's streams refused: also when the batch
 * had nothing to sync (and so never opened), or the core would refuse them only at the
 * next STREAM_OPEN. */
static int begin_failure_told(pl_store *s, int rc, const st_notify *n, char *err, size_t err_len) {
    const st_input *in = s->failed_unreported;
    if (rc == 0 && in != NULL && in->failed) rc = st_err(err, err_len, in->failed, "%s", in->failed_line);
    s->failed_unreported = NULL;
    st_refusals(s, n);
    return rc;
}

int st_commit_end(pl_store *s, int result, const char *failed_path, const st_notify *n, char *err,
                  size_t err_len) {
    if (!s->batch_open) {  /* a begin that returned 0 */
        int rc = begin_failure_told(s, 0, n, err, err_len);
        return rc != 0 ? rc : st_err(err, err_len, -EINVAL, "store: commit_end without an open batch");
    }
    s->batch_open = 0;
    s->stats.commits++;
    s->stats.fdatasyncs += s->batch_fds - s->batch_dirs;
    s->stats.dir_fsyncs += s->batch_dirs;
    if (result != 0) {
        result = result < 0 ? result : -EIO;
        batch_fail(s, result, failed_path, err, err_len);
        s->batch_len = 0;
        s->failed_unreported = NULL;
        st_refusals(s, n);
        return result;
    }
    for (size_t i = 0; i < s->memo.batch_len; i++) n->memo_written(n->ctx, s->memo.tokens_batch[i]);
    s->memo.batch_len = 0;
    s->memo.in_batch = 0;
    for (size_t i = 0; i < s->inputs_len; i++) s->inputs[i].dir_in_batch = 0;
    int rc = 0;
    for (size_t i = 0; i < s->batch_len; i++) {
        st_stream *st = s->batch[i];
        if (st->name == ST_NAME_TMP) {
            int r = stream_rename(s, st, rc == 0 ? err : NULL, err_len);
            if (rc == 0) rc = r;
            continue;
        }
        if (st->name_in_batch) {  /* the fsync of its directory returned: its name is durable */
            st->name = ST_NAME_DURABLE;
            st->name_in_batch = 0;
            s->names_waiting--;
        }
        stream_durable(s, st, n);
        stream_checkpoint(s, st);
    }
    s->batch_len = 0;
    rc = begin_failure_told(s, rc, n, err, err_len);
    return rc;  /* a failed rename or write: the rest of the batch is claimed, its input fails */
}

static const char *fd_path(const pl_store *s, int fd) {
    if (fd == s->memo.fd) return s->memo.path;
    for (size_t i = 0; i < s->batch_len; i++)
        if (s->batch[i]->fd == fd || s->batch[i]->index_tmp_fd == fd) return s->batch[i]->path;
    for (size_t i = 0; i < s->inputs_len; i++)
        if (s->inputs[i].dir_fd == fd) return s->inputs[i].dir;
    return NULL;
}

/* One batch on this thread. */
static int commit_once(pl_store *s, const st_notify *n, char *err, size_t err_len) {
    int fds[PL_STORE_BATCH_FDS_MOST];
    size_t dirs;
    int count = pl_store_commit_begin(s, fds, PL_STORE_BATCH_FDS_MOST, &dirs);
    if (count < 0) return st_failed(s, err, err_len);
    if (count == 0) return begin_failure_told(s, 0, n, err, err_len);
    int rc = 0;
    const char *path = NULL;
    for (int i = 0; i < count && rc == 0; i++)
        if ((i < count - (int)dirs ? fdatasync(fds[i]) : fsync(fds[i])) != 0) rc = -errno, path = fd_path(s, fds[i]);
    rc = st_commit_end(s, rc, path, n, err, err_len);
    return rc != 0 ? rc : count;
}

/* A batch, and the one that makes the names of the new files it renamed durable: what
 * was appended before the call is claimed when it returns (as far as one batch holds). */
int st_commit(pl_store *s, const st_notify *n, char *err, size_t err_len) {
    int rc = commit_once(s, n, err, err_len);
    if (rc > 0 && s->names_waiting > 0) rc = commit_once(s, n, err, err_len);
    return rc < 0 ? rc : 0;
}
