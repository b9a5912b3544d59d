/* store.c: the receiver's store (shims/store/pl_store.h) — its inputs and their directories, the
 * streams in them, the core's stream handles bound to runs, and the events.  The only file
 * of the store that calls the core. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <assert.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_internal.h"

int st_fail(pl_store *s, int rc, const char *line) {
    if (!s->failed) {
        s->failed = rc;
        snprintf(s->failed_line, sizeof s->failed_line, "%s", line ? line : strerror(-rc));
    }
    return s->failed;
}

int st_failed(const pl_store *s, char *err, size_t err_len) {
    if (!s->failed) return 0;
    return st_err(err, err_len, s->failed, "%s", s->failed_line);
}

/* ---- A failing input (pl_store.h) ---- */

static void notice(const pl_store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void notice(const pl_store *s, const char *fmt, ...) {
    if (s->notice == NULL) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    s->notice(s->notice_ctx, line);
}

int st_input_fail(pl_store *s, st_input *in, int rc, const char *line) {
    assert(rc < 0);
    if (rc == -ENOMEM) return st_fail(s, rc, line);
    if (in->failed) return in->failed;
    in->failed = rc;
    in->failed_at_ns = in->failed_since_ns = s->now_ns;
    in->refuse_due = 1;
    snprintf(in->failed_line, sizeof in->failed_line, "%s", line ? line : strerror(-rc));
    s->stats.inputs_failed++;
    /* A resume waiting for the input's streams to be durable is answered no more: its run
     * is refused with the others, and asks again. */
    size_t keep = 0;
    for (size_t i = 0; i < s->resumes_len; i++)
        if (s->resumes[i].stream->input != in) s->resumes[keep++] = s->resumes[i];
    s->resumes_len = keep;
    notice(s, "input %s (%s) cannot store: %s; its streams are refused (REFUSED reason 4) and it is tried again "
              "%llu s after this and at a reload (SIGHUP); the other inputs go on",
           in->name, in->dir, in->failed_line, (unsigned long long)(PL_STORE_INPUT_RETRY_NS / 1000000000ull));
    return rc;
}

void st_refusals(pl_store *s, const st_notify *n) {
    int due = 0;
    for (size_t i = 0; i < s->inputs_len; i++) due |= s->inputs[i].refuse_due;
    if (!due) return;
    for (size_t h = 0; h < s->handles_len; h++) {
        const st_stream *st = s->handles[h].stream;
        if (st != NULL && st->input->refuse_due && n->refuse != NULL)
            n->refuse(n->ctx, (int)h, s->handles[h].run, -PURE_LINK_CANNOT_STORE);
    }
    for (size_t i = 0; i < s->inputs_len; i++) s->inputs[i].refuse_due = 0;
}

/* The stream goes back to what is durable: the file cut there and synced (a sync that
 * failed may have left pages marked clean past it), its write buffer and the marks of
 * what was appended since forgotten. */
static int stream_back_to_durable(st_stream *st) {
    for (size_t i = 0; i < st->runs_next_len; i++) st->runs[st->runs_next[i]].in_next = 0;
    st->runs_next_len = st->runs_batch_len = 0;
    int rc = st_stream_cut_to_durable(st);
    if (rc == 0 && fdatasync(st->fd) != 0) rc = -errno;
    return rc;
}

/* PL_STORE_PROBE_BYTES written and synced under a name no stream file takes, then removed. */
#define ST_PROBE_NAME "pure-link.probe"
static int input_probe(st_input *in) {
    int fd = openat(in->dir_fd, ST_PROBE_NAME, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (fd < 0) return -errno;
    static const uint8_t zero[4096];
    int rc = 0;
    for (size_t done = 0; rc == 0 && done < PL_STORE_PROBE_BYTES; done += sizeof zero)
        rc = st_write_all(fd, zero, sizeof zero, done);
    if (rc == 0 && fdatasync(fd) != 0) rc = -errno;
    close(fd);
    unlinkat(in->dir_fd, ST_PROBE_NAME, 0);
    return rc;
}

int st_input_retry(pl_store *s, st_input *in) {
    if (!in->failed) return 0;
    for (size_t k = 0; k < in->streams_len; k++)
        if (in->streams[k]->in_batch) return -EBUSY;  /* its sync runs: after it ends */
    int rc = 0;
    for (size_t k = 0; k < in->streams_len && rc == 0; k++) rc = stream_back_to_durable(in->streams[k]);
    if (rc == 0) rc = input_probe(in);
    if (rc == 0 && fsync(in->dir_fd) < 0) rc = -errno;  /* the probe's name made durable */
    if (rc != 0) {
        in->failed_at_ns = s->now_ns;  /* silent: the failure's line stands */
        return rc;
    }
    for (size_t k = 0; k < in->streams_len; k++) {
        st_stream *st = in->streams[k];
        if (st->name == ST_NAME_RENAMED) {  /* the directory's fsync above made its name durable */
            st->name = ST_NAME_DURABLE;
            s->names_waiting--;
        }
    }
    notice(s, "input %s (%s) stores again, %.1f s after it failed (%s)", in->name, in->dir,
           (double)(s->now_ns - in->failed_since_ns) / 1e9, in->failed_line);
    in->failed = 0;
    s->stats.inputs_recovered++;
    return 0;
}

int pl_store_input_failed(const pl_store *s, const char *name) {
    for (size_t i = 0; i < s->inputs_len; i++)
        if (strcmp(s->inputs[i].name, name) == 0) return s->inputs[i].failed;
    return 0;
}

/* ---- Open ---- */

static int mkdirs(const char *dir) {
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) return -ENAMETOOLONG;
    for (char *c = p + 1; *c; c++) {
        if (*c != '/') continue;
        *c = 0;
        if (mkdir(p, 0750) != 0 && errno != EEXIST) return -errno;
        *c = '/';
    }
    if (mkdir(p, 0750) != 0 && errno != EEXIST) return -errno;
    return 0;
}

static int has_suffix(const char *name, const char *suffix) {
    size_t n = strlen(name), k = strlen(suffix);
    return n > k && strcmp(name + n - k, suffix) == 0;
}

static int streams_room(pl_store *s, size_t more) {
    size_t want = s->dirty_cap + more;
    st_stream **a = realloc(s->dirty, want * sizeof *a);
    if (a != NULL) s->dirty = a;
    st_stream **b = realloc(s->batch, want * sizeof *b);
    if (b != NULL) s->batch = b;
    if (a == NULL || b == NULL) return -ENOMEM;
    s->dirty_cap = s->batch_cap = want;
    return 0;
}

static int stream_add(pl_store *s, st_input *in, st_stream *st) {
    if (streams_room(s, 1) != 0) return -ENOMEM;
    st->input = in;
    in->streams[in->streams_len++] = st;
    return 0;
}

/* Recovers every record file of an input's directory; leftovers of an interrupted create
 * or checkpoint (*.tmp) are removed first.  Then the directory is fsync'ed. */
static int input_recover(pl_store *s, st_input *in, char *err, size_t err_len) {
    DIR *d = fdopendir(dup(in->dir_fd));
    if (d == NULL) return st_err(err, err_len, -errno, "%s: read directory: %s", in->dir, strerror(errno));
    int rc = 0;
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        rewinddir(d);
        for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
            if (pass == 0 && has_suffix(e->d_name, ".tmp")) unlinkat(in->dir_fd, e->d_name, 0);
            if (pass == 0 || !has_suffix(e->d_name, ".plr")) continue;
            if (in->streams_len == PL_STORE_STREAMS_PER_INPUT_MOST) {
                rc = st_err(err, err_len, -EMFILE, "%s: more than %u stream files", in->dir,
                            PL_STORE_STREAMS_PER_INPUT_MOST);
                break;
            }
            st_stream *st = calloc(1, sizeof *st);
            if (st == NULL) { rc = st_err(err, err_len, -ENOMEM, "%s: out of memory", in->dir); break; }
            st->fd = -1;
            rc = st_stream_recover(st, in->dir_fd, in->dir, e->d_name, &s->stats.bytes_cut, err, err_len);
            if (rc == 0) rc = st_owner_load(st, in->dir_fd, err, err_len);
            if (rc == 0 && (rc = stream_add(s, in, st)) != 0) st_err(err, err_len, rc, "%s: out of memory", in->dir);
            if (rc != 0) st_stream_free(st);
        }
    }
    closedir(d);
    /* A crash may leave a file renamed into place whose name is not yet durable: it is
     * made durable here, before any of its records is claimed in a STREAM_OPEN answer. */
    if (rc == 0 && fsync(in->dir_fd) != 0)
        rc = st_err(err, err_len, -errno, "%s: fsync the directory: %s", in->dir, strerror(errno));
    return rc;
}

/* Two inputs may share neither a name nor a directory (their stream files would mix): the
 * input `in` against those opened before it. */
static int input_distinct(const pl_store *s, const st_input *x, char *err, size_t err_len) {
    for (const st_input *y = s->inputs; y < x; y++) {
        struct stat a, b;
        if (strcmp(x->name, y->name) == 0) return st_err(err, err_len, -EINVAL, "store: input %s is named twice", x->name);
        if (fstat(x->dir_fd, &a) == 0 && fstat(y->dir_fd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
            return st_err(err, err_len, -EINVAL, "store: inputs %s and %s share the directory %s", y->name, x->name,
                          x->dir);
    }
    return 0;
}

static int input_open(pl_store *s, st_input *in, const pl_store_input *cfg, char *err, size_t err_len) {
    in->dir_fd = in->lock_fd = -1;  /* (closed by pl_store_close even when this fails early) */
    size_t len = cfg->name ? strlen(cfg->name) : 0;
    if (len < 1 || len > PURE_LINK_NAME_MOST || strchr(cfg->name, '\n') != NULL)
        return st_err(err, err_len, -EINVAL, "store: input name \"%s\" must be 1..%u bytes without a newline",
                      cfg->name ? cfg->name : "", PURE_LINK_NAME_MOST);
    if (cfg->dir == NULL || cfg->dir[0] == 0)
        return st_err(err, err_len, -EINVAL, "store: input %s has no directory", cfg->name);
    memcpy(in->name, cfg->name, len + 1);
    in->shape = cfg->shape;
    if ((in->dir = strdup(cfg->dir)) == NULL) return st_err(err, err_len, -ENOMEM, "store: out of memory");
    in->streams = calloc(PL_STORE_STREAMS_PER_INPUT_MOST, sizeof *in->streams);
    if (in->streams == NULL) return st_err(err, err_len, -ENOMEM, "store: out of memory");
    int rc = mkdirs(cfg->dir);
    if (rc != 0) return st_err(err, err_len, rc, "%s: create directory: %s", cfg->dir, strerror(-rc));
    in->dir_fd = open(cfg->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (in->dir_fd < 0) return st_err(err, err_len, -errno, "%s: open directory: %s", cfg->dir, strerror(errno));
    if ((rc = input_distinct(s, in, err, err_len)) != 0) return rc;
    /* Before recovery, which cuts what another receiver may be writing. */
    char shown[PATH_MAX];
    snprintf(shown, sizeof shown, "%s/%s", cfg->dir, ST_LOCK_NAME);
    in->lock_fd = st_lock_take(in->dir_fd, ST_LOCK_NAME, shown, "this store directory", err, err_len);
    if (in->lock_fd < 0) return in->lock_fd;
    return input_recover(s, in, err, err_len);
}

int pl_store_open(pl_store **out, const pl_store_config *config, char *err, size_t err_len) {
    *out = NULL;
    if (config == NULL || config->inputs_len < 1 || config->inputs_len > PL_STORE_INPUTS_MOST)
        return st_err(err, err_len, -EINVAL, "store: 1..%u inputs, not %zu", PL_STORE_INPUTS_MOST,
                      config ? config->inputs_len : 0);
    pl_store *s = calloc(1, sizeof *s);
    if (s == NULL) return st_err(err, err_len, -ENOMEM, "store: out of memory");
    s->file_bytes_most = config->file_bytes_most ? config->file_bytes_most : PL_STORE_FILE_BYTES_MOST;
    s->notice = config->notice, s->notice_ctx = config->notice_ctx;
    s->memo.fd = s->memo.lock_fd = -1;
    struct sigaction sa;
    if (sigaction(SIGXFSZ, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL) signal(SIGXFSZ, SIG_IGN);
    struct rlimit files;  /* one descriptor per stream: up to 1,024 per input */
    if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        setrlimit(RLIMIT_NOFILE, &files);
    }
    /* Room for every input there may be, so that pl_store_inputs_set adds in place: streams
     * point at their input. */
    int rc = (s->inputs = calloc(PL_STORE_INPUTS_MOST, sizeof *s->inputs)) == NULL
                 ? st_err(err, err_len, -ENOMEM, "store: out of memory") : 0;
    for (size_t i = 0; rc == 0 && i < config->inputs_len; i++) {
        s->inputs_len = i + 1;
        rc = input_open(s, &s->inputs[i], &config->inputs[i], err, err_len);
    }
    if (rc == 0) rc = st_memo_open(&s->memo, config->memo_path, config->memo_bytes, err, err_len);
    if (rc == 0 && s->dirty_cap == 0) rc = streams_room(s, 1);
    if (rc != 0) {
        pl_store_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

static void input_close(pl_store *s, st_input *in) {
    for (size_t k = 0; k < in->streams_len; k++) {
        st_stream *st = in->streams[k];
        /* Appended frames go to the file (claimed only once the next open made them
         * durable, as frames a crash leaves in the page cache). */
        if (!s->failed && !in->failed && st->wbuf_len > 0) st_stream_flush(st, NULL, 0);
        if (in->failed && !st->in_batch) st_stream_cut_to_durable(st);  /* best effort */
        /* A last checkpoint of what is durable spares the next open a long read; a
         * short one is read faster than its fdatasync would take. */
        if (!s->failed && !s->batch_open && st->end_durable - st->index_end >= PL_STORE_CLOSE_CHECKPOINT_BYTES)
            st_index_checkpoint_now(st, in->dir_fd, NULL, 0);
        st_stream_free(st);
    }
    free(in->streams);
    if (in->dir_fd >= 0) close(in->dir_fd);
    if (in->lock_fd >= 0) close(in->lock_fd);
    free(in->dir);
    memset(in, 0, sizeof *in);
}

void pl_store_close(pl_store *s) {
    if (s == NULL) return;
    for (size_t i = 0; i < s->inputs_len; i++) input_close(s, &s->inputs[i]);
    free(s->inputs);
    st_memo_close(&s->memo);
    free(s->peers);
    free(s->peer_known);
    free(s->handles);
    free(s->resumes);
    free(s->dirty);
    free(s->batch);
    free(s);
}

const uint8_t *pl_store_memo(const pl_store *s, size_t *len) {
    *len = s->memo.loaded ? s->memo.bytes : 0;
    return s->memo.loaded;
}

int pl_store_peer(pl_store *s, int peer, const uint8_t peer_public[32]) {
    if (peer < 0) return -EINVAL;
    if ((size_t)peer >= s->peers_len) {
        size_t n = (size_t)peer + 1;
        uint8_t(*p)[32] = realloc(s->peers, n * sizeof *p);
        if (p != NULL) s->peers = p;
        uint8_t *k = realloc(s->peer_known, n);
        if (k != NULL) s->peer_known = k;
        if (p == NULL || k == NULL) return -ENOMEM;
        memset(s->peer_known + s->peers_len, 0, n - s->peers_len);
        s->peers_len = n;
    }
    memcpy(s->peers[peer], peer_public, 32);
    s->peer_known[peer] = 1;
    return 0;
}

/* ---- Streams and handles ---- */

static st_input *input_any(pl_store *s, const char *name) {
    for (size_t i = 0; i < s->inputs_len; i++)
        if (strcmp(s->inputs[i].name, name) == 0) return &s->inputs[i];
    return NULL;
}

static st_input *input_find(pl_store *s, const char *name) {
    st_input *in = input_any(s, name);
    return in && !in->retired ? in : NULL;
}

/* All or nothing: every check and every new directory first, then the shapes and retirements. */
int pl_store_inputs_set(pl_store *s, const pl_store_input *inputs, size_t len, char *err, size_t err_len) {
    if (len < 1 || len > PL_STORE_INPUTS_MOST) return st_err(err, err_len, -EINVAL, "store: 1..%u inputs, not %zu", PL_STORE_INPUTS_MOST, len);
    size_t added = 0;
    for (size_t i = 0; i < len; i++) {
        const st_input *in = input_any(s, inputs[i].name ? inputs[i].name : "");
        if (in != NULL && strcmp(in->dir, inputs[i].dir) != 0)
            return st_err(err, err_len, -EINVAL, "input %s: its directory cannot change while the receiver runs (it is %s)",
                          in->name, in->dir);
        added += in == NULL;
    }
    if (s->inputs_len + added > PL_STORE_INPUTS_MOST)
        return st_err(err, err_len, -EINVAL, "store: at most %u inputs over the receiver's life, retired ones included",
                      PL_STORE_INPUTS_MOST);
    size_t before = s->inputs_len;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < len; i++) {
        if (input_any(s, inputs[i].name) != NULL) continue;
        s->inputs_len++;
        rc = input_open(s, &s->inputs[s->inputs_len - 1], &inputs[i], err, err_len);   /* distinct, locked */
    }
    if (rc != 0) {
        while (s->inputs_len > before) input_close(s, &s->inputs[--s->inputs_len]);
        return rc;
    }
    for (size_t k = 0; k < s->inputs_len; k++) {
        st_input *in = &s->inputs[k];
        in->retired = 1;
        for (size_t i = 0; i < len; i++)
            if (strcmp(in->name, inputs[i].name) == 0) in->retired = 0, in->shape = inputs[i].shape;
    }
    /* A reload is the operator's word that a failed input may work again: tried now. */
    for (size_t k = 0; k < s->inputs_len; k++)
        if (s->inputs[k].failed && !s->inputs[k].retired) st_input_retry(s, &s->inputs[k]);
    return 0;
}

static st_stream *stream_find(st_input *in, const uint8_t key[32], const char *source) {
    for (size_t i = 0; i < in->streams_len; i++)
        if (memcmp(in->streams[i]->id.key, key, 32) == 0 && strcmp(in->streams[i]->id.source, source) == 0)
            return in->streams[i];
    return NULL;
}

pl_store_refusal pl_store_refusal_last(const pl_store *s) { return s->refusal; }

/* Another key with the same 96-bit prefix and the same source would have the same file
 * name.  Every record file of the directory is a stream of the input (read at open), so
 * the table says it; the file itself is named only at the first commit. */
static int name_taken(const st_input *in, const uint8_t key[32], const char *source) {
    for (size_t i = 0; i < in->streams_len; i++)
        if (memcmp(in->streams[i]->id.key, key, ST_KEY_HEX / 2) == 0 && strcmp(in->streams[i]->id.source, source) == 0)
            return 1;
    return 0;
}

/* A new stream file; *st NULL when the input is full or the name is taken (refused, and
 * s->refusal says which). */
static int stream_new(pl_store *s, st_input *in, const uint8_t key[32], const char *source, st_stream **out,
                      char *err, size_t err_len) {
    *out = NULL;
    if (in->streams_len == PL_STORE_STREAMS_PER_INPUT_MOST) {
        s->refusal = PL_STORE_REFUSAL_INPUT_FULL;
        return 0;
    }
    if (name_taken(in, key, source)) {
        s->refusal = PL_STORE_REFUSAL_NAME_TAKEN;
        return 0;
    }
    st_stream *st = calloc(1, sizeof *st);
    if (st == NULL) return st_err(err, err_len, -ENOMEM, "store: out of memory");
    st->fd = st->index_tmp_fd = -1;
    memcpy(st->id.key, key, 32);
    snprintf(st->id.source, sizeof st->id.source, "%s", source);
    snprintf(st->id.input, sizeof st->id.input, "%s", in->name);
    int rc = st_stream_create(st, in->dir_fd, in->dir, err, err_len);
    if (rc == 0) rc = st_owner_load(st, in->dir_fd, err, err_len);  /* one whose file was never named */
    if (rc == 0 && (rc = stream_add(s, in, st)) != 0) st_err(err, err_len, rc, "store: out of memory");
    if (rc != 0) {
        st_stream_free(st);
        return rc;
    }
    *out = st;
    return 0;
}

static int handle_bind(pl_store *s, int handle, st_stream *st, st_run *r) {
    if ((size_t)handle >= s->handles_len) {
        size_t n = (size_t)handle + 1 > 2 * s->handles_len ? (size_t)handle + 1 : 2 * s->handles_len;
        st_handle *h = realloc(s->handles, n * sizeof *h);
        if (h == NULL) return -ENOMEM;
        memset(h + s->handles_len, 0, (n - s->handles_len) * sizeof *h);
        s->handles = h, s->handles_len = n;
    }
    st_handle *h = &s->handles[handle];
    if (h->stream != NULL) {  /* the core reused the handle: its old run is unbound */
        st_run *old = st_run_find(h->stream, h->run);
        if (old != NULL && old->handle == handle) old->handle = -1;
    }
    if (r->handle >= 0 && r->handle != handle) s->handles[r->handle].stream = NULL;  /* bound again elsewhere */
    r->handle = handle;
    h->stream = st;
    h->run = r->run;
    h->run_idx = (size_t)(r - st->runs);
    h->seen = r->mark_durable;  /* the core hands over nothing below the mark */
    return 0;
}

/* `asking`: the run asks where to resume, so it may take the stream over from its owner. */
static int open_stream(pl_store *s, int handle, int peer, uint64_t run, const char *source, const char *input,
                       uint64_t shape, int asking, int *answer, int64_t *mark, char *err, size_t err_len) {
    *answer = -1, *mark = 0;
    s->refusal = PL_STORE_REFUSAL_NONE;
    int rc = st_failed(s, err, err_len);
    if (rc != 0) return rc;
    size_t source_len = strlen(source);
    if (source_len < 1 || source_len > PURE_LINK_NAME_MOST)
        return st_err(err, err_len, -EINVAL, "store: a source name of %zu B (1..%u)", source_len, PURE_LINK_NAME_MOST);
    st_input *in = input_find(s, input);
    if (in == NULL || in->shape != shape) {
        if (in != NULL) *answer = -PURE_LINK_OTHER_SHAPE;
        s->refusal = in != NULL ? PL_STORE_REFUSAL_SHAPE : PL_STORE_REFUSAL_NO_INPUT;
        s->stats.streams_refused++;
        return 0;
    }
    if (peer < 0 || (size_t)peer >= s->peers_len || !s->peer_known[peer])
        return st_err(err, err_len, -EINVAL, "store: peer %d was not given to pl_store_peer", peer);
    if (in->failed && s->now_ns - in->failed_at_ns >= PL_STORE_INPUT_RETRY_NS) st_input_retry(s, in);
    st_stream *st = in->failed ? NULL : stream_find(in, s->peers[peer], source);
    if (!in->failed && st == NULL && (rc = stream_new(s, in, s->peers[peer], source, &st, err, err_len)) != 0) {
        if (rc == -ENOMEM) return rc;
        st_input_fail(s, in, rc, err);  /* its directory takes no new file */
    }
    if (in->failed) {
        *answer = -PURE_LINK_CANNOT_STORE;
        s->refusal = PL_STORE_REFUSAL_CANNOT_STORE;
        s->stats.streams_refused++;
        return 0;
    }
    if (st == NULL) {  /* the input is full or the name taken: stream_new said which */
        s->stats.streams_refused++;
        return 0;
    }
    st_run *r = st_run_find(st, run);
    if (r == NULL && (r = st_run_add(st, run, err, err_len)) == NULL) return -ENOMEM;
    if (r->cut || (st_run_cut_off(st, r) && !asking)) {
        /* Told at every binding (§4.3): it comes back after a restart of either side. */
        *answer = -PURE_LINK_CUT_OFF;
        s->refusal = PL_STORE_REFUSAL_CUT_OFF;
        s->stats.streams_refused++;
        return 0;
    }
    if (handle_bind(s, handle, st, r) != 0) return st_err(err, err_len, -ENOMEM, "store: out of memory");
    *answer = 0;
    *mark = (int64_t)r->mark_durable;
    return 0;
}

int st_open_stream(pl_store *s, int handle, int peer, uint64_t run, const char *source, const char *input,
                   uint64_t shape, int *answer, int64_t *mark, char *err, size_t err_len) {
    return open_stream(s, handle, peer, run, source, input, shape, 0, answer, mark, err, err_len);
}

/* The owner log could not take an ask: the input fails (its streams are refused). */
static int resume_failed(pl_store *s, st_stream *st, int *answer, int rc, const char *line) {
    st_input_fail(s, st->input, rc, line);
    *answer = -PURE_LINK_CANNOT_STORE;
    s->refusal = PL_STORE_REFUSAL_CANNOT_STORE;
    return s->failed;
}

/* The resuming run r starts at the stream's place: the records before it are held.  The
 * ask is in the owner log, durably, before its answer goes (a cut-off run's is not: it
 * stays cut off).  The mark, or -errno with one line. */
static int64_t resume_at(pl_store *s, st_stream *st, st_run *r, char *err, size_t err_len) {
    uint64_t m = st_stream_place(st);
    if (r->mark_durable > m) m = r->mark_durable;
    if (!r->cut) {
        int rc = st_owner_write(st, st->input->dir_fd, ST_OWNER_ASKED, r->run, m, err, err_len);
        if (rc != 0) return rc;
    }
    if (r->mark_durable < m) r->mark_appended = r->mark_batch = r->mark_written = r->mark_durable = m;
    if (r->handle >= 0) s->handles[r->handle].seen = r->mark_durable;
    return (int64_t)r->mark_durable;
}

int st_open_resume(pl_store *s, int handle, int peer, uint64_t run, const char *source, const char *input,
                   uint64_t shape, int *answer, int64_t *mark, char *err, size_t err_len) {
    int rc = open_stream(s, handle, peer, run, source, input, shape, 1, answer, mark, err, err_len);
    if (rc != 0 || *answer != 0) return rc;
    st_handle *h = &s->handles[handle];
    st_stream *st = h->stream;
    st_run *r = st_run_find(st, run);
    if (st->end_appended == st->end_durable) {
        int64_t m = resume_at(s, st, r, err, err_len);
        if (m < 0) return resume_failed(s, st, answer, (int)m, err);
        *mark = m;
        return 0;
    }
    if (s->resumes_len == s->resumes_cap) {
        size_t n = s->resumes_cap ? 2 * s->resumes_cap : 8;
        struct st_resume *p = realloc(s->resumes, n * sizeof *p);
        if (p == NULL) return st_err(err, err_len, -ENOMEM, "store: out of memory");
        s->resumes = p, s->resumes_cap = n;
    }
    s->resumes[s->resumes_len++] = (struct st_resume){handle, run, st};
    *answer = 1;
    return 0;
}

/* Answers the resuming runs whose streams are now durable; a run the core no longer asks
 * for on that handle (its question timed out, the slot went to another run) is dropped. */
static void resume_answers(pl_store *s, pure_link *pl, const st_notify *n, uint64_t now_ns) {
    size_t keep = 0;
    st_input *failed = NULL;
    int failed_rc = 0;
    char line[sizeof s->failed_line];
    for (size_t i = 0; i < s->resumes_len; i++) {
        struct st_resume q = s->resumes[i];
        st_handle *h = &s->handles[q.handle];
        if (q.stream->end_appended != q.stream->end_durable || q.stream->input == failed) {
            s->resumes[keep++] = q;
            continue;
        }
        pure_link_run_info info;
        st_run *r = h->stream == q.stream && h->run == q.run ? st_run_find(q.stream, q.run) : NULL;
        if (r == NULL || pure_link_run_info_get(pl, q.handle, &info) != 0 || info.run != q.run) continue;
        int64_t m = resume_at(s, q.stream, r, line, sizeof line);
        if (m >= 0) {
            pure_link_stream_answer(pl, q.handle, 0, m, now_ns);
            continue;
        }
        s->resumes[keep++] = q;  /* refused below, with its input's other streams */
        failed = q.stream->input, failed_rc = (int)m;
    }
    s->resumes_len = keep;
    if (failed == NULL) return;
    st_input_fail(s, failed, failed_rc, line);
    st_refusals(s, n);
}

/* The asking run r is proven live: it takes the stream over, durably (the owner log)
 * before it appends or hears anything of it, and every other run is cut off.  Records the
 * others appended since r's answer are held already: r skips them, and hears them stored
 * once they are durable (at once, or when the file is durable to hold_end). */
static int take_over(st_stream *st, st_run *r, char *err, size_t err_len) {
    const st_run *last = NULL;
    for (size_t i = 0; i < st->runs_len; i++)
        if (st->runs[i].mark_appended > 0 && (last == NULL || st->runs[i].end_off > last->end_off)) last = &st->runs[i];
    uint64_t place = last != NULL && last->mark_appended > r->mark_appended ? last->mark_appended : r->mark_appended;
    int rc = st_owner_write(st, st->input->dir_fd, ST_OWNER_OWNS, r->run, place, err, err_len);
    if (rc != 0 || place == r->mark_appended) return rc;
    assert(last != NULL && last != r && place > r->mark_durable);
    r->mark_appended = r->mark_written = place;
    if (st->end_durable >= last->end_off) {
        if (r->mark_batch < place) r->mark_batch = place;
        r->mark_durable = place;
    } else {
        st->hold_mark = place, st->hold_end = last->end_off;
    }
    return 0;
}

/* The runs of st a takeover by r cuts off that were not cut off before: how many, and in
 * *named the one to name (the owner, else the one that appended last). */
static size_t runs_to_cut(const st_stream *st, const st_run *r, const st_run **named) {
    size_t n = 0;
    const st_run *owner = NULL;
    *named = NULL;
    for (size_t i = 0; i < st->runs_len; i++) {
        const st_run *o = &st->runs[i];
        if (o == r || st_run_cut_off(st, o)) continue;
        n++;
        if (st->owned && o->run == st->owner) owner = o;
        if (*named == NULL || o->end_off > (*named)->end_off) *named = o;
    }
    if (owner != NULL) *named = owner;
    return n;
}

/* One line per takeover that cuts another run off: the operator sees why that run's sender
 * stops (exit 8), or two senders on one source. */
static void tell_takeover(pl_store *s, const st_stream *st, const st_run *r, const st_run *named, size_t cut) {
    char key[17];
    st_key_hex(key, st->id.key, 8);
    char more[48] = "";
    if (cut > 1) snprintf(more, sizeof more, " and %zu other earlier run%s", cut - 1, cut > 2 ? "s" : "");
    notice(s, "input %s (%s): run %016llx of peer %s... resumed source '%s' and took it over at record %llu; run %016llx%s "
              "of the source %s cut off: refused (REFUSED reason 5) if it sends again",
           st->input->name, st->input->dir, (unsigned long long)r->run, key, st->id.source,
           (unsigned long long)r->mark_appended, (unsigned long long)named->run, more, cut > 1 ? "are" : "is");
}

/* The runs a takeover cut off that are bound now are refused at once (REFUSED reason 5):
 * one whose records were all handed over before the cut resends only bytes the receiver
 * holds, which reach the store no more, so its next record would never come to tell it. */
static void tell_cut(pl_store *s, st_stream *st, const st_notify *n) {
    for (size_t i = 0; i < st->runs_len && n->refuse != NULL; i++) {
        const st_run *o = &st->runs[i];
        if (!o->cut || o->handle < 0 || (size_t)o->handle >= s->handles_len) continue;
        const st_handle *h = &s->handles[o->handle];
        if (h->stream != st || h->run != o->run) continue;
        s->stats.streams_refused++;
        n->refuse(n->ctx, o->handle, o->run, -PURE_LINK_CUT_OFF);
    }
}

static st_run *handle_run(st_handle *h) {
    st_stream *st = h->stream;
    if (h->run_idx < st->runs_len && st->runs[h->run_idx].run == h->run) return &st->runs[h->run_idx];
    st_run *r = st_run_find(st, h->run);
    if (r != NULL) h->run_idx = (size_t)(r - st->runs);
    return r;
}

int st_record(pl_store *s, int handle, uint64_t run, int64_t record, const uint8_t *data, size_t len,
              const uint8_t *data2, size_t len2, const st_notify *n, char *err, size_t err_len) {
    int rc = st_failed(s, err, err_len);
    if (rc != 0) return rc;
    st_handle *h = handle >= 0 && (size_t)handle < s->handles_len ? &s->handles[handle] : NULL;
    st_run *r = h && h->stream && h->run == run ? handle_run(h) : NULL;
    if (r == NULL || record < 0)
        return st_err(err, err_len, -EINVAL, "store: a record on stream handle %d that no STREAM_OPEN bound", handle);
    st_stream *st = h->stream;
    uint64_t k = (uint64_t)record;
    if (st->input->failed) return st_err(err, err_len, st->input->failed, "%s", st->input->failed_line);
    /* spec/protocol.md §4.3: one run appends to a resumed stream, the last asking run to
     * be proven live; the core hands a run's records over only once it is (§4.2).  A run
     * cut off is told so (REFUSED reason 5), and its records are dropped. */
    if (st_run_cut_off(st, r)) {
        s->stats.streams_refused++;
        if (n->refuse != NULL) n->refuse(n->ctx, handle, run, -PURE_LINK_CUT_OFF);
        return 0;
    }
    if (r->asked && !(st->owned && st->owner == r->run)) {
        const st_run *named;
        size_t cut = runs_to_cut(st, r, &named);
        if ((rc = take_over(st, r, err, err_len)) != 0) {
            rc = st_input_fail(s, st->input, rc, err);
            st_refusals(s, n);
            return rc;
        }
        if (cut > 0) tell_takeover(s, st, r, named, cut);
        tell_cut(s, st, n);
    }
    if (k + 1 > h->seen) h->seen = k + 1;
    if (k < r->mark_appended) {
        /* Held already (the run bound again before its last records were durable). */
        if (k < r->mark_durable) n->stored(n->ctx, handle, (int64_t)(h->seen < r->mark_durable ? h->seen : r->mark_durable));
        return 0;
    }
    if (k > r->mark_appended) s->stats.records_missing += k - r->mark_appended;
    rc = st_stream_append(st, r, k, data, len, data2, len2, s->file_bytes_most, err, err_len);
    if (rc != 0) {
        rc = st_input_fail(s, st->input, rc, err);
        st_dirty_add(s, st);  /* the whole frames it wrote before still commit */
        st_refusals(s, n);
        return rc;
    }
    s->stats.records_appended++;
    if (!r->in_next) {
        r->in_next = 1;
        st->runs_next[st->runs_next_len++] = (uint32_t)(r - st->runs);
    }
    st_dirty_add(s, st);
    return 0;
}

/* ---- Events, commit and the core ---- */

typedef struct core_ctx {
    pure_link *pl;
    uint64_t now_ns;
} core_ctx;

static void core_stored(void *ctx, int stream, int64_t record) {
    core_ctx *c = ctx;
    pure_link_stored(c->pl, stream, record, c->now_ns);
}

static void core_memo_written(void *ctx, uint64_t token) {
    core_ctx *c = ctx;
    pure_link_memo_written(c->pl, token, c->now_ns);
}

static void core_refuse(void *ctx, int stream, uint64_t run, int answer) {
    core_ctx *c = ctx;
    pure_link_run_info info;
    if (pure_link_run_info_get(c->pl, stream, &info) != 0 || info.run != run) return;  /* the slot moved on */
    int rc = pure_link_stream_refuse(c->pl, stream, answer, c->now_ns);
    assert(rc == 0 || rc == PURE_LINK_ERR_NOT_FOUND);  /* a run ended meanwhile is gone */
    (void)rc;
}


int pl_store_event(pl_store *s, pure_link *pl, const pure_link_event *ev, uint64_t now_ns, char *err,
                   size_t err_len) {
    core_ctx c = {pl, now_ns};
    st_notify n = {core_stored, core_memo_written, &c, core_refuse};
    int rc, answer;
    int64_t mark;
    if (now_ns > s->now_ns) s->now_ns = now_ns;
    switch (ev->kind) {
    case PURE_LINK_EVENT_STREAM_OPEN:
        rc = (ev->reason == PURE_LINK_OPEN_RESUME ? st_open_resume : st_open_stream)(
            s, ev->stream, ev->peer, ev->run, ev->source, ev->input, ev->shape, &answer, &mark, err, err_len);
        if (rc == 0 && answer != 1) pure_link_stream_answer(pl, ev->stream, answer, mark, now_ns);
        st_refusals(s, &n);
        return rc;
    case PURE_LINK_EVENT_RECORD:
        rc = st_record(s, ev->stream, ev->run, ev->record, ev->data, ev->len, ev->data2, ev->len2, &n, err, err_len);
        return s->failed ? rc : 0;  /* an input's failure: its line is told, its streams refused */
    case PURE_LINK_EVENT_MEMO_WRITE:
        if ((rc = st_failed(s, err, err_len)) != 0) return rc;
        rc = st_memo_write(&s->memo, ev->offset, ev->token, ev->data, ev->len, err, err_len);
        return rc != 0 ? st_fail(s, rc, err) : 0;
    default:
        return 0;
    }
}

int pl_store_commit_end(pl_store *s, pure_link *pl, int result, uint64_t now_ns, char *err, size_t err_len) {
    core_ctx c = {pl, now_ns};
    st_notify n = {core_stored, core_memo_written, &c, core_refuse};
    if (now_ns > s->now_ns) s->now_ns = now_ns;
    int rc = st_commit_end(s, result, NULL, &n, err, err_len);
    resume_answers(s, pl, &n, now_ns);
    return s->failed ? rc : 0;  /* an input's failure: its line is told, its streams refused */
}

int pl_store_commit(pl_store *s, pure_link *pl, uint64_t now_ns, char *err, size_t err_len) {
    core_ctx c = {pl, now_ns};
    st_notify n = {core_stored, core_memo_written, &c, core_refuse};
    if (now_ns > s->now_ns) s->now_ns = now_ns;
    int rc = st_commit(s, &n, err, err_len);
    resume_answers(s, pl, &n, now_ns);
    return s->failed ? rc : 0;
}

void pl_store_stats_get(const pl_store *s, pl_store_stats *out) {
    *out = s->stats;
    out->inputs_failing = 0;
    for (size_t i = 0; i < s->inputs_len; i++) out->inputs_failing += s->inputs[i].failed != 0;
}
