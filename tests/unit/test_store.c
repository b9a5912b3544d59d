/* test_store.c: the receiver's store (shims/store/pl_store.h) on real files with real fdatasync —
 * append, commit, reopen; a torn tail cut at every byte of the last frame; kill -9 of a
 * child mid-append and mid-commit; a full disk, a file-size limit, a failed fdatasync;
 * the limits at their edges; the memo through a real endpoint; and two endpoints over the
 * in-memory network whose receiver stores through the store, crashes and restarts.
 *
 * Durability tests run in a directory under $TMPDIR (or /tmp), on the disk.  Tests that only
 * count (thousands of files or runs) run on tmpfs (/dev/shm), where fdatasync costs nothing,
 * so that they stay fast; they say so. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "link_loop.h"
#include "store_internal.h"
#include "tmp_dirs.h"

#define MS 1000000ull
#define S 1000000000ull

/* ---- Temporary directories (tmp_dirs.h), removed at exit ---- */
static const char *shm_dir(void) { return tmp_dir(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : NULL); }

/* ---- Records: sizes and bytes follow from (run, record), so a reader can check them ---- */
static size_t rec_len(uint64_t run, uint64_t record) { return (size_t)((record * 37 + run * 11) % 1500); }
static void rec_fill(uint8_t *b, size_t len, uint64_t run, uint64_t record) {
    uint64_t x = run * 0x9e3779b97f4a7c15ull ^ record;
    for (size_t i = 0; i < len; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        b[i] = (uint8_t)(x >> 56);
    }
}

/* ---- What the store acknowledges (what the core would hear) ---- */
typedef struct acks {
    int64_t stored[64];  /* per handle: the last mark told */
    uint64_t stored_calls, memo_calls, memo_last;
    uint64_t refused[64];  /* per handle: refusals (its input cannot store, or cut off) */
    int refused_answer[64];  /* per handle: the last refusal's answer */
    int pipe_fd;         /* a child reports acknowledgements to its parent here (-1: none) */
} acks;
static void ack_stored(void *ctx, int stream, int64_t record) {
    acks *a = ctx;
    CHECK(stream >= 0 && stream < 64);
    CHECK(record >= a->stored[stream]);  /* marks never go back */
    a->stored[stream] = record;
    a->stored_calls++;
    if (a->pipe_fd >= 0) {
        int64_t m[2] = {stream, record};
        if (write(a->pipe_fd, m, sizeof m) != sizeof m) _exit(3);
    }
}
static void ack_memo(void *ctx, uint64_t token) {
    acks *a = ctx;
    a->memo_calls++;
    a->memo_last = token;
}
static void ack_refuse(void *ctx, int stream, uint64_t run, int answer) {
    acks *a = ctx;
    CHECK(stream >= 0 && stream < 64);
    (void)run;
    a->refused[stream]++;
    a->refused_answer[stream] = answer;
}
static st_notify notify_of(acks *a) {
    memset(a, 0, sizeof *a);
    a->pipe_fd = -1;
    return (st_notify){ack_stored, ack_memo, a, ack_refuse};
}

/* ---- A store of one input "in" (shape 7) in dir/in, peer 0 = key {k, k, ...} ---- */
static char err[512];
static pl_store *open_store(const char *dir, uint64_t file_bytes_most) {
    static char path[300];
    snprintf(path, sizeof path, "%s/in", dir);
    pl_store_input in = {"in", 7, path};
    pl_store_config c = {&in, 1, NULL, 0, file_bytes_most, NULL, NULL};
    pl_store *s = NULL;
    int rc = pl_store_open(&s, &c, err, sizeof err);
    if (rc != 0) fprintf(stderr, "  open: %s\n", err);
    CHECK(rc == 0);
    uint8_t key[32];
    memset(key, 0x42, 32);
    CHECK(pl_store_peer(s, 0, key) == 0);
    return s;
}
/* STREAM_OPEN of (source, run) on handle: the store's answer (0 accepts). */
static int bind_answer(pl_store *s, int handle, const char *source, uint64_t run) {
    int answer;
    int64_t mark;
    int rc = st_open_stream(s, handle, 0, run, source, "in", 7, &answer, &mark, err, sizeof err);
    CHECK(rc == 0);
    return answer;
}
/* Binds handle to (source, run) and returns the durable mark. */
static int64_t bind(pl_store *s, int handle, const char *source, uint64_t run) {
    int answer;
    int64_t mark;
    int rc = st_open_stream(s, handle, 0, run, source, "in", 7, &answer, &mark, err, sizeof err);
    if (rc != 0) fprintf(stderr, "  bind: %s\n", err);
    CHECK(rc == 0 && answer == 0);
    return mark;
}
static int put(pl_store *s, int handle, uint64_t run, uint64_t record, const st_notify *n) {
    uint8_t b[1600];
    size_t len = rec_len(run, record);
    rec_fill(b, len, run, record);
    /* Split in two pieces as the core does when a record wraps around its ring. */
    return st_record(s, handle, run, (int64_t)record, b, len / 3, b + len / 3, len - len / 3, n, err, sizeof err);
}
static int commit(pl_store *s, const st_notify *n) { return st_commit(s, n, err, sizeof err); }

/* ---- Reading a record file back: every run's records in order, each once, bytes right ---- */
typedef struct seen_runs { uint64_t run[8]; uint64_t next[8]; int len; uint64_t frames, end; } seen_runs;
static void read_back(const char *path, seen_runs *out) {
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    struct stat sb;
    CHECK(fstat(fd, &sb) == 0);
    uint8_t *b = malloc((size_t)sb.st_size + 1);
    CHECK(st_read_all(fd, b, (size_t)sb.st_size, 0) == 0);
    close(fd);
    st_header h;
    CHECK(st_header_decode(b, &h) == 0);
    uint64_t at = ST_HEADER_BYTES;
    uint8_t want[1600];
    st_frame f;
    for (size_t n; (n = st_frame_check(b + at, (size_t)sb.st_size - at, &f)) > 0; at += n) {
        int k = 0;
        while (k < out->len && out->run[k] != f.run) k++;
        if (k == out->len) { CHECK(k < 8); out->run[k] = f.run, out->next[k] = 0, out->len++; }
        CHECK_EQ_U(f.record, out->next[k]);  /* exactly once, in order */
        CHECK_EQ_U(f.len, rec_len(f.run, f.record));
        rec_fill(want, f.len, f.run, f.record);
        CHECK_MEM(b + at + ST_FRAME_BYTES, want, f.len);
        out->next[k]++;
        out->frames++;
    }
    CHECK_EQ_U(at, (uint64_t)sb.st_size);  /* nothing after the last whole frame */
    out->end = at;
    free(b);
}
static uint64_t seen_next(const seen_runs *r, uint64_t run) {
    for (int k = 0; k < r->len; k++)
        if (r->run[k] == run) return r->next[k];
    return 0;
}
static void stream_path(char *out, size_t n, const char *dir, const char *source, const char *suffix) {
    uint8_t key[32];
    char name[ST_FILE_NAME_MOST];
    memset(key, 0x42, 32);
    st_file_name(name, key, source, suffix);
    snprintf(out, n, "%s/in/%s", dir, name);
}
/* Reads back the stream file of `source` (key 0x42..) in dir/in. */
static seen_runs read_stream(const char *dir, const char *source) {
    char path[600];
    seen_runs r;
    stream_path(path, sizeof path, dir, source, ".plr");
    read_back(path, &r);
    return r;
}
static uint64_t file_size(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

/* ---- CRC32C: the check value, the three-lane path equal to the tables at every length
 * around its block edges, and chaining ---- */
static void crc32c_paths_agree(void) {
    CHECK_EQ_U(st_crc32c(0, "123456789", 9), 0xe3069283u);  /* the CRC-32C check value */
    CHECK_EQ_U(st_crc32c_portable(0, "123456789", 9), 0xe3069283u);
    size_t most = 3 * 8192 * 2 + 3 * 256 + 64;
    uint8_t *b = malloc(most + 8);
    rec_fill(b, most + 8, 1, 2);
    size_t edges[] = {0, 1, 7, 8, 9, 3 * 256 - 1, 3 * 256, 3 * 256 + 1, 3 * 8192 - 1, 3 * 8192, 3 * 8192 + 9, most};
    for (size_t e = 0; e < sizeof edges / sizeof edges[0]; e++)
        for (size_t off = 0; off < 8; off++) {
            size_t len = edges[e];
            uint32_t c = st_crc32c(0, b + off, len);
            CHECK_EQ_U(c, st_crc32c_portable(0, b + off, len));
            size_t cut = len / 3;
            CHECK_EQ_U(st_crc32c(st_crc32c(0, b + off, cut), b + off + cut, len - cut), c);
        }
    free(b);
}

/* ---- Append, commit, reopen ---- */
static void append_commit_reopen(void) {
    const char *dir = tmp_dir(NULL);
    acks a;
    st_notify n = notify_of(&a);
    pl_store *s = open_store(dir, 0);
    CHECK(bind(s, 3, "src", 1001) == 0);  /* a new run */
    for (uint64_t k = 0; k < 100; k++) CHECK(put(s, 3, 1001, k, &n) == 0);
    CHECK(pl_store_pending(s) == 1);
    CHECK_EQ_U(a.stored_calls, 0);  /* appended is not stored */
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[3], 100);
    CHECK(pl_store_pending(s) == 0);
    for (uint64_t k = 100; k < 150; k++) CHECK(put(s, 3, 1001, k, &n) == 0);
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[3], 150);
    pl_store_stats st;
    pl_store_stats_get(s, &st);
    CHECK_EQ_U(st.records_appended, 150);
    CHECK_EQ_U(st.records_durable, 150);
    /* The new file's bytes, then its name (the directory's fsync: nothing new in the file
     * to fdatasync again), then the second commit. */
    CHECK_EQ_U(st.commits, 3);
    CHECK_EQ_U(st.fdatasyncs, 2);
    CHECK_EQ_U(st.dir_fsyncs, 1);
    pl_store_close(s);

    s = open_store(dir, 0);
    CHECK_EQ_U(bind(s, 0, "src", 1001), 150);  /* the durable mark of that run */
    CHECK_EQ_U(bind(s, 1, "src", 2002), 0);    /* another run of the stream: new */
    CHECK_EQ_U(bind(s, 2, "other", 1001), 0);  /* the same run id on another stream */
    for (uint64_t k = 150; k < 160; k++) CHECK(put(s, 0, 1001, k, &n) == 0);
    for (uint64_t k = 0; k < 5; k++) CHECK(put(s, 1, 2002, k, &n) == 0);
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[0], 160);
    CHECK_EQ_U(a.stored[1], 5);
    pl_store_close(s);

    seen_runs r = read_stream(dir, "src");
    CHECK_EQ_U(seen_next(&r, 1001), 160);
    CHECK_EQ_U(seen_next(&r, 2002), 5);
    CHECK_EQ_U(r.frames, 165);
}

/* ---- A torn tail, at every byte offset of the last frame: cut, and the mark is right ---- */
static void copy_file(const char *from, const char *to, uint64_t len) {
    int a = open(from, O_RDONLY), b = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0640);
    CHECK(a >= 0 && b >= 0);
    uint8_t *buf = malloc(len + 1);
    CHECK(st_read_all(a, buf, len, 0) == 0);
    CHECK(st_write_all(b, buf, len, 0) == 0);
    free(buf);
    close(a), close(b);
}

/* (On tmpfs: some 4,800 reopens; what is tested is the reading, not the disk.) */
static void torn_tail_every_offset(void) {
    const char *dir = shm_dir();
    acks a;
    st_notify n = notify_of(&a);
    char path[600], idx[600], good[600], good_idx[600];
    stream_path(path, sizeof path, dir, "t", ".plr");
    stream_path(idx, sizeof idx, dir, "t", ".pli");
    snprintf(good, sizeof good, "%s/good.plr", dir);
    snprintf(good_idx, sizeof good_idx, "%s/good.pli", dir);
    /* 9 records and a checkpoint of them, then the 10th: the index does not cover it. */
    pl_store *s = open_store(dir, 0);
    bind(s, 0, "t", 77);
    for (uint64_t k = 0; k < 9; k++) CHECK(put(s, 0, 77, k, &n) == 0);
    CHECK(commit(s, &n) == 0);
    CHECK(st_index_checkpoint_now(s->inputs[0].streams[0], s->inputs[0].dir_fd, err, sizeof err) == 0);
    pl_store_close(s);
    CHECK(file_size(idx) > 0);
    copy_file(idx, good_idx, file_size(idx));
    uint64_t last_at = file_size(path);
    s = open_store(dir, 0);
    CHECK_EQ_U(bind(s, 0, "t", 77), 9);
    CHECK(put(s, 0, 77, 9, &n) == 0);
    CHECK(commit(s, &n) == 0);
    pl_store_close(s);
    uint64_t whole = file_size(path), frame = whole - last_at;
    CHECK_EQ_U(frame, ST_FRAME_BYTES + rec_len(77, 9));
    copy_file(path, good, whole);
    for (int with_index = 0; with_index < 2; with_index++)
        for (uint64_t cut = 0; cut < frame; cut++)
            for (int garbage = 0; garbage < 2; garbage++) {
                /* Either the file ends inside the frame, or it is whole but byte `cut` is wrong. */
                copy_file(good, path, garbage ? whole : last_at + cut);
                if (garbage) {
                    int fd = open(path, O_RDWR);
                    uint8_t x = 0;
                    CHECK(pread(fd, &x, 1, (off_t)(last_at + cut)) == 1);
                    x ^= 0x5a;
                    CHECK(pwrite(fd, &x, 1, (off_t)(last_at + cut)) == 1);
                    close(fd);
                }
                if (with_index) copy_file(good_idx, idx, file_size(good_idx));
                else unlink(idx);
                s = open_store(dir, 0);
                pl_store_stats st;
                pl_store_stats_get(s, &st);
                CHECK_EQ_U(st.bytes_cut, garbage ? frame : cut);
                CHECK_EQ_U(bind(s, 0, "t", 77), 9);
                CHECK_EQ_U(file_size(path), last_at);  /* nothing half-written remains */
                pl_store_close(s);
            }
    seen_runs r;
    read_back(path, &r);
    CHECK_EQ_U(seen_next(&r, 77), 9);
}

/* ---- A failed fdatasync: nothing of its batch (or after it) is claimed, ever ---- */
static void fsync_failure_never_claimed(void) {
    const char *dir = tmp_dir(NULL);
    acks a;
    st_notify n = notify_of(&a);
    pl_store *s = open_store(dir, 0);
    bind(s, 0, "f", 5);
    for (uint64_t k = 0; k < 10; k++) CHECK(put(s, 0, 5, k, &n) == 0);
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[0], 10);
    for (uint64_t k = 10; k < 15; k++) CHECK(put(s, 0, 5, k, &n) == 0);
    int fds[8];
    size_t dirs;
    CHECK(pl_store_commit_begin(s, fds, 8, &dirs) == 1);
    CHECK(pl_store_commit_begin(s, fds, 8, &dirs) == -EALREADY);  /* one batch at a time */
    for (uint64_t k = 15; k < 17; k++) CHECK(put(s, 0, 5, k, &n) == 0);  /* the next batch */
    /* The driver's fdatasync failed: the pages may now be clean and lost. */
    CHECK(st_commit_end(s, -EIO, NULL, &n, err, sizeof err) == -EIO);
    CHECK(strstr(err, "fdatasync") != NULL && strstr(err, "/in/") != NULL);
    CHECK(strstr(err, strerror(EIO)) != NULL);
    CHECK_EQ_U(a.stored[0], 10);
    /* Not retried: the input failed (the store goes on), nothing is pending, no append to
     * it succeeds until a try brings it back. */
    CHECK(pl_store_pending(s) == 0);
    CHECK(commit(s, &n) == 0);
    CHECK(put(s, 0, 5, 17, &n) == -EIO);
    CHECK(pl_store_input_failed(s, "in") == -EIO);
    CHECK(strstr(err, "fdatasync") != NULL);
    CHECK_EQ_U(a.stored[0], 10);
    pl_store_close(s);
    /* A reopen finds only the durable ten. */
    s = open_store(dir, 0);
    CHECK_EQ_U(bind(s, 0, "f", 5), 10);
    pl_store_close(s);
    seen_runs r = read_stream(dir, "f");
    CHECK_EQ_U(r.frames, 10);
}

/* ---- One input fails, the other goes on; the failed one comes back after its interval,
 * and at a reload ---- */
typedef struct lines { int count; char last[512], all[2048]; } lines;
static void line_kept(void *ctx, const char *line) {
    lines *l = ctx;
    l->count++;
    snprintf(l->last, sizeof l->last, "%s", line);
    strncat(l->all, line, sizeof l->all - strlen(l->all) - 1);
}

static void one_input_fails_the_other_goes_on(void) {
    const char *dir = tmp_dir(NULL);
    acks a;
    st_notify n = notify_of(&a);
    char in_dir[300], other_dir[300];
    snprintf(in_dir, sizeof in_dir, "%s/in", dir);
    snprintf(other_dir, sizeof other_dir, "%s/other", dir);
    pl_store_input in[2] = {{"in", 7, in_dir}, {"other", 7, other_dir}};
    lines l = {0};
    pl_store_config c = {in, 2, NULL, 0, 0, line_kept, &l};
    pl_store *s = NULL;
    CHECK(pl_store_open(&s, &c, err, sizeof err) == 0);
    uint8_t key[32];
    memset(key, 0x42, 32);
    CHECK(pl_store_peer(s, 0, key) == 0);
    int answer;
    int64_t mark;
    CHECK_EQ_U(bind(s, 0, "a", 5), 0);
    CHECK(st_open_stream(s, 1, 0, 6, "b", "other", 7, &answer, &mark, err, sizeof err) == 0 && answer == 0);
    for (uint64_t k = 0; k < 10; k++) CHECK(put(s, 0, 5, k, &n) == 0 && put(s, 1, 6, k, &n) == 0);
    CHECK(commit(s, &n) == 0);
    CHECK(a.stored[0] == 10 && a.stored[1] == 10);
    /* A batch of "in" alone fails its sync: "in" fails, in one line. */
    for (uint64_t k = 10; k < 15; k++) CHECK(put(s, 0, 5, k, &n) == 0);
    int fds[8];
    size_t dirs;
    CHECK(pl_store_commit_begin(s, fds, 8, &dirs) == 1);
    for (uint64_t k = 10; k < 15; k++) CHECK(put(s, 1, 6, k, &n) == 0);  /* the next batch */
    CHECK(st_commit_end(s, -EIO, NULL, &n, err, sizeof err) == -EIO);
    CHECK_EQ_U(l.count, 1);
    CHECK(strstr(l.last, "input in (") != NULL && strstr(l.last, in_dir) != NULL && strstr(l.last, strerror(EIO)) != NULL);
    CHECK_EQ_U(a.refused[0], 1);  /* its stream is refused */
    CHECK_EQ_U(a.refused[1], 0);
    CHECK(pl_store_input_failed(s, "in") == -EIO && pl_store_input_failed(s, "other") == 0);
    /* "other" goes on. */
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[1], 15);
    for (uint64_t k = 15; k < 100; k++) CHECK(put(s, 1, 6, k, &n) == 0);
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[1], 100);
    /* "in" takes no record and no stream, and is not tried before its interval. */
    CHECK(put(s, 0, 5, 15, &n) == -EIO);
    CHECK(st_open_stream(s, 2, 0, 9, "c", "in", 7, &answer, &mark, err, sizeof err) == 0);
    CHECK(answer == -PURE_LINK_CANNOT_STORE);
    s->now_ns = PL_STORE_INPUT_RETRY_NS - 1;
    CHECK(st_open_stream(s, 0, 0, 5, "a", "in", 7, &answer, &mark, err, sizeof err) == 0);
    CHECK(answer == -PURE_LINK_CANNOT_STORE);
    CHECK_EQ_U(a.stored[0], 10);  /* nothing claimed beyond the durable */
    pl_store_stats st;
    pl_store_stats_get(s, &st);
    CHECK(st.inputs_failed == 1 && st.inputs_failing == 1 && st.inputs_recovered == 0);
    /* After it, the run binds again at its durable mark, and the resent records go once. */
    s->now_ns = PL_STORE_INPUT_RETRY_NS;
    CHECK(st_open_stream(s, 0, 0, 5, "a", "in", 7, &answer, &mark, err, sizeof err) == 0);
    CHECK(answer == 0 && mark == 10);
    CHECK_EQ_U(l.count, 2);
    CHECK(strstr(l.last, "input in (") != NULL && strstr(l.last, "stores again") != NULL);
    for (uint64_t k = 10; k < 20; k++) CHECK(put(s, 0, 5, k, &n) == 0);
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[0], 20);
    pl_store_stats_get(s, &st);
    CHECK(st.inputs_failed == 1 && st.inputs_failing == 0 && st.inputs_recovered == 1);
    /* Failed again: a reload tries it at once, before its interval. */
    for (uint64_t k = 20; k < 25; k++) CHECK(put(s, 0, 5, k, &n) == 0);
    CHECK(pl_store_commit_begin(s, fds, 8, &dirs) == 1);
    CHECK(st_commit_end(s, -EIO, NULL, &n, err, sizeof err) == -EIO);
    CHECK(pl_store_input_failed(s, "in") == -EIO);
    CHECK_EQ_U(l.count, 3);
    CHECK(pl_store_inputs_set(s, in, 2, err, sizeof err) == 0);
    CHECK(pl_store_input_failed(s, "in") == 0);
    CHECK_EQ_U(l.count, 4);
    CHECK(strstr(l.last, "stores again") != NULL);
    CHECK(st_open_stream(s, 0, 0, 5, "a", "in", 7, &answer, &mark, err, sizeof err) == 0);
    CHECK(answer == 0 && mark == 20);
    pl_store_stats_get(s, &st);
    CHECK(st.inputs_failed == 2 && st.inputs_failing == 0 && st.inputs_recovered == 2);
    pl_store_close(s);
    seen_runs r = read_stream(dir, "a");
    CHECK_EQ_U(r.frames, 20);
    CHECK_EQ_U(seen_next(&r, 5), 20);
    char name[ST_FILE_NAME_MOST], path[600];
    st_file_name(name, key, "b", ".plr");
    snprintf(path, sizeof path, "%s/%s", other_dir, name);
    read_back(path, &r);
    CHECK_EQ_U(r.frames, 100);
    CHECK_EQ_U(seen_next(&r, 6), 100);
}

/* ---- A run bound again on another handle before its records were durable ---- */
static void rebind_on_other_handle(void) {
    const char *dir = tmp_dir(NULL);
    acks a;
    st_notify n = notify_of(&a);
    pl_store *s = open_store(dir, 0);
    CHECK_EQ_U(bind(s, 0, "r", 9), 0);
    for (uint64_t k = 0; k < 10; k++) CHECK(put(s, 0, 9, k, &n) == 0);
    CHECK(commit(s, &n) == 0);
    for (uint64_t k = 10; k < 15; k++) CHECK(put(s, 0, 9, k, &n) == 0);
    /* The core forgot the idle slot; the run binds on handle 1: only the durable mark. */
    CHECK_EQ_U(bind(s, 1, "r", 9), 10);
    /* Handle 0 is reused for another stream's run; the old run's records may not come on it. */
    CHECK_EQ_U(bind(s, 0, "other", 4), 0);
    CHECK(put(s, 0, 9, 15, &n) == -EINVAL);
    CHECK(strstr(err, "handle 0") != NULL);
    /* Committed before the core hands records 10.. over again on handle 1: nothing beyond
     * what handle 1 handed over is reported on it. */
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[1], 10);  /* the mark it was bound with: nothing new for the core */
    CHECK_EQ_U(a.stored[0], 10);  /* nothing more on the handle the run left */
    uint64_t before = file_size(s->inputs[0].streams[0]->path);
    for (uint64_t k = 10; k < 15; k++) CHECK(put(s, 1, 9, k, &n) == 0);  /* held already: skipped */
    CHECK_EQ_U(file_size(s->inputs[0].streams[0]->path), before);
    CHECK_EQ_U(a.stored[1], 15);  /* durable already: reported at once */
    CHECK(put(s, 1, 9, 15, &n) == 0);
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[1], 16);
    pl_store_close(s);
    seen_runs r = read_stream(dir, "r");
    CHECK_EQ_U(seen_next(&r, 9), 16);
    CHECK_EQ_U(r.frames, 16);
}

/* ---- A new stream's file: written under a temporary name with no sync on the caller's
 * thread, renamed into place by the batch that made its bytes durable, its records claimed
 * by the next batch, which fsyncs the directory ---- */
/* A store with source's run bound on handle 0, and the two names of its file. */
static pl_store *open_new_stream(const char *dir, const char *source, uint64_t run, char path[600], char tmp[600]) {
    stream_path(path, 600, dir, source, ".plr");
    stream_path(tmp, 600, dir, source, ".plr.tmp");
    pl_store *s = open_store(dir, 0);
    CHECK_EQ_U(bind(s, 0, source, run), 0);
    return s;
}

static void new_file_named_after_its_bytes(void) {
    const char *dir = tmp_dir(NULL);
    acks a;
    st_notify n = notify_of(&a);
    char path[600], tmp[600];
    pl_store *s = open_new_stream(dir, "new", 3, path, tmp);
    CHECK(access(tmp, F_OK) == 0 && access(path, F_OK) != 0);
    CHECK(pl_store_pending(s) == 0);  /* nothing to make durable before a record */
    for (uint64_t k = 0; k < 5; k++) CHECK(put(s, 0, 3, k, &n) == 0);
    st_stream *st = s->inputs[0].streams[0];
    int fds[8];
    size_t dirs;
    CHECK(pl_store_commit_begin(s, fds, 8, &dirs) == 1 && dirs == 0);  /* its bytes only */
    CHECK_EQ_U(fds[0], st->fd);
    CHECK(put(s, 0, 3, 5, &n) == 0);  /* for the next batch */
    CHECK(fdatasync(fds[0]) == 0);
    CHECK(st_commit_end(s, 0, NULL, &n, err, sizeof err) == 0);
    CHECK(access(path, F_OK) == 0 && access(tmp, F_OK) != 0);  /* renamed into place */
    CHECK_EQ_U(a.stored_calls, 0);                             /* its name is not durable yet */
    CHECK_EQ_U(st_run_find(st, 3)->mark_durable, 0);           /* what a STREAM_OPEN would get */
    CHECK(pl_store_pending(s) == 1);
    CHECK(pl_store_commit_begin(s, fds, 8, &dirs) == 2 && dirs == 1);  /* record 5, the directory */
    CHECK(fds[0] == st->fd && fds[1] == s->inputs[0].dir_fd);
    CHECK(fdatasync(fds[0]) == 0 && fsync(fds[1]) == 0);
    CHECK(st_commit_end(s, 0, NULL, &n, err, sizeof err) == 0);
    CHECK(a.stored[0] == 6 && a.stored_calls == 1);
    CHECK_EQ_U(bind(s, 1, "new", 3), 6);
    pl_store_stats ss;
    pl_store_stats_get(s, &ss);
    CHECK(ss.commits == 2 && ss.fdatasyncs == 2 && ss.dir_fsyncs == 1 && ss.records_durable == 6);
    pl_store_close(s);
    s = open_store(dir, 0);
    CHECK_EQ_U(bind(s, 0, "new", 3), 6);
    pl_store_close(s);
}

/* A crash before the first batch ended leaves only the temporary file (removed at open:
 * none of it was claimed); one after the rename and before the directory's fsync leaves
 * the file in place, which the open makes durable (the directory's fsync) and claims. */
static void new_file_crash_before_and_after_rename(void) {
    const char *dir = tmp_dir(NULL);
    acks a;
    st_notify n = notify_of(&a);
    char path[600], tmp[600];
    pl_store *s = open_new_stream(dir, "c", 1, path, tmp);
    for (uint64_t k = 0; k < 3; k++) CHECK(put(s, 0, 1, k, &n) == 0);
    pl_store_close(s);  /* no commit */
    s = open_store(dir, 0);
    CHECK(access(tmp, F_OK) != 0 && access(path, F_OK) != 0);
    CHECK_EQ_U(s->inputs[0].streams_len, 0);
    CHECK_EQ_U(bind(s, 0, "c", 1), 0);
    for (uint64_t k = 0; k < 3; k++) CHECK(put(s, 0, 1, k, &n) == 0);
    int fds[8];
    size_t dirs;
    CHECK(pl_store_commit_begin(s, fds, 8, &dirs) == 1);
    CHECK(fdatasync(fds[0]) == 0);
    CHECK(st_commit_end(s, 0, NULL, &n, err, sizeof err) == 0);
    CHECK(access(path, F_OK) == 0 && a.stored_calls == 0);
    pl_store_close(s);  /* dies before the directory's fsync */
    s = open_store(dir, 0);
    CHECK_EQ_U(bind(s, 0, "c", 1), 3);
    pl_store_close(s);
}

/* The name taken when the batch would rename the file (only another process could take
 * it): nothing of the stream is claimed, the store fails, the other file stays. */
static void new_file_rename_refused(void) {
    const char *dir = tmp_dir(NULL);
    acks a;
    st_notify n = notify_of(&a);
    char path[600];
    stream_path(path, sizeof path, dir, "r", ".plr");
    pl_store *s = open_store(dir, 0);
    bind(s, 0, "r", 1);
    CHECK(put(s, 0, 1, 0, &n) == 0);
    int fds[8];
    size_t dirs;
    CHECK(pl_store_commit_begin(s, fds, 8, &dirs) == 1);
    int other = open(path, O_WRONLY | O_CREAT | O_EXCL, 0640);
    CHECK(other >= 0 && write(other, "x", 1) == 1);
    close(other);
    CHECK(st_commit_end(s, 0, NULL, &n, err, sizeof err) == -EEXIST);
    CHECK(strstr(err, "rename") != NULL && strstr(err, "/in/") != NULL);
    CHECK_EQ_U(a.stored_calls, 0);
    CHECK(put(s, 0, 1, 1, &n) == -EEXIST);  /* sticky: the input failed */
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored_calls, 0);
    pl_store_close(s);
    CHECK_EQ_U(file_size(path), 1);
}

/* Two keys with the same first 96 bits and one source would share a file name: the
 * second is refused at once (no file is named before the first commit). */
static void same_file_name_refused(void) {
    const char *dir = tmp_dir(NULL);
    pl_store *s = open_store(dir, 0);
    uint8_t key2[32];
    memset(key2, 0x42, 32);
    key2[ST_KEY_HEX / 2] = 0x43;  /* the first byte the name does not show */
    CHECK(pl_store_peer(s, 1, key2) == 0);
    CHECK_EQ_U(bind(s, 0, "p", 1), 0);
    int answer;
    int64_t mark;
    CHECK(st_open_stream(s, 1, 1, 2, "p", "in", 7, &answer, &mark, err, sizeof err) == 0);
    CHECK(answer == -1);
    CHECK(pl_store_refusal_last(s) == PL_STORE_REFUSAL_NAME_TAKEN);
    CHECK(st_open_stream(s, 1, 1, 2, "q", "in", 7, &answer, &mark, err, sizeof err) == 0);
    CHECK(answer == 0);  /* another source: another name */
    CHECK(pl_store_refusal_last(s) == PL_STORE_REFUSAL_NONE);
    key2[ST_KEY_HEX / 2 - 1] ^= 1;  /* a key whose name differs */
    CHECK(pl_store_peer(s, 2, key2) == 0);
    CHECK(st_open_stream(s, 2, 2, 3, "p", "in", 7, &answer, &mark, err, sizeof err) == 0);
    CHECK(answer == 0);
    pl_store_stats st;
    pl_store_stats_get(s, &st);
    CHECK_EQ_U(st.streams_refused, 1);
    CHECK_EQ_U(s->inputs[0].streams_len, 3);
    pl_store_close(s);
}

/* ---- Refusals: no such input, another shape; counted, no file ---- */
static void refusals_counted(void) {
    const char *dir = tmp_dir(NULL);
    pl_store *s = open_store(dir, 0);
    int answer;
    int64_t mark;
    CHECK(st_open_stream(s, 0, 0, 1, "x", "nope", 7, &answer, &mark, err, sizeof err) == 0);
    CHECK(answer == -1);
    CHECK(pl_store_refusal_last(s) == PL_STORE_REFUSAL_NO_INPUT);
    CHECK(st_open_stream(s, 0, 0, 1, "x", "in", 8, &answer, &mark, err, sizeof err) == 0);
    CHECK(answer == -PURE_LINK_OTHER_SHAPE);
    CHECK(pl_store_refusal_last(s) == PL_STORE_REFUSAL_SHAPE);
    pl_store_stats st;
    pl_store_stats_get(s, &st);
    CHECK_EQ_U(st.streams_refused, 2);
    CHECK_EQ_U(s->inputs[0].streams_len, 0);
    /* A peer the driver did not name is a driver bug, said in one line. */
    CHECK(st_open_stream(s, 0, 5, 1, "x", "in", 7, &answer, &mark, err, sizeof err) == -EINVAL);
    CHECK(strstr(err, "pl_store_peer") != NULL);
    pl_store_close(s);
}

/* ---- kill -9 of a child mid-append and mid-commit ---- */
/* The child: three runs on two streams, resumed from their durable marks, records in a
 * random order of runs, a commit every few records; every acknowledgement goes to the pipe
 * the moment the core would hear it.  It never returns. */
static void child_acked(void *ctx, int stream, int64_t record) {
    int fd = *(int *)ctx;
    int64_t m[2] = {stream, record};
    if (write(fd, m, sizeof m) != sizeof m) _exit(3);
}
static void child_memo(void *ctx, uint64_t token) { (void)ctx, (void)token; }
static const uint64_t kill_runs[3] = {11, 12, 13};
static const char *const kill_sources[3] = {"a", "a", "b"};
static void child_store(const char *dir, int fd, uint64_t seed) {
    char path[300];
    snprintf(path, sizeof path, "%s/in", dir);
    pl_store_input in = {"in", 7, path};
    pl_store_config c = {&in, 1, NULL, 0, 0, NULL, NULL};
    pl_store *s;
    uint8_t key[32];
    memset(key, 0x42, 32);
    if (pl_store_open(&s, &c, err, sizeof err) != 0 || pl_store_peer(s, 0, key) != 0) _exit(2);
    st_notify n = {child_acked, child_memo, &fd, NULL};
    uint64_t next[3];
    for (int i = 0; i < 3; i++) {
        int answer;
        int64_t mark;
        if (st_open_stream(s, i, 0, kill_runs[i], kill_sources[i], "in", 7, &answer, &mark, err, sizeof err) != 0) _exit(2);
        next[i] = (uint64_t)mark;
    }
    for (uint64_t x = seed;;) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int i = (int)((x >> 33) % 3);
        if (put(s, i, kill_runs[i], next[i]++, &n) != 0) _exit(2);
        if ((x >> 40) % 8 == 0 && commit(s, &n) != 0) _exit(2);
    }
}

static void kill9_mid_append_and_commit(void) {
    const char *dir = tmp_dir(NULL);
    int64_t acked[3] = {0, 0, 0};
    uint64_t x = 12345;
    for (int life = 0; life < 6; life++) {
        int p[2];
        CHECK(pipe(p) == 0);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            close(p[0]);
            child_store(dir, p[1], x + (uint64_t)life);
        }
        close(p[1]);
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int want = 3 + (int)((x >> 33) % 40), got = 0;
        int64_t m[2];
        while (got < want && read(p[0], m, sizeof m) == sizeof m) {
            CHECK(m[0] >= 0 && m[0] < 3 && m[1] >= acked[m[0]]);
            acked[m[0]] = m[1], got++;
        }
        if ((x >> 20) % 2) usleep((useconds_t)((x >> 24) % 3000));  /* somewhere in the next batch */
        kill(pid, SIGKILL);
        int status;
        CHECK(waitpid(pid, &status, 0) == pid);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);  /* not a failure of its own */
        while (read(p[0], m, sizeof m) == sizeof m) acked[m[0]] = m[1];  /* acknowledged before it died */
        close(p[0]);
        CHECK(got == want);
        /* Every acknowledged record is there exactly once; the marks say how many are. */
        acks a;
        st_notify n = notify_of(&a);
        (void)n;
        pl_store *s = open_store(dir, 0);
        int64_t mark[3];
        for (int i = 0; i < 3; i++) {
            mark[i] = bind(s, i, kill_sources[i], kill_runs[i]);
            CHECK(mark[i] >= acked[i]);
        }
        pl_store_close(s);
        seen_runs ra = read_stream(dir, "a"), rb = read_stream(dir, "b");
        CHECK_EQ_U(seen_next(&ra, 11), mark[0]);
        CHECK_EQ_U(seen_next(&ra, 12), mark[1]);
        CHECK_EQ_U(seen_next(&rb, 13), mark[2]);
    }
    CHECK(acked[0] > 0 && acked[1] > 0 && acked[2] > 0);
}

/* ---- A full disk (a 256 KiB tmpfs), and a file-size limit (RLIMIT_FSIZE) ---- */
static void fill_until_error(pl_store *s, const char *source, uint64_t run, int want_errno, const char *dir) {
    acks a;
    st_notify n = notify_of(&a);
    CHECK_EQ_U(bind(s, 0, source, run), 0);
    /* Frames wait in the stream's write buffer: the write that fails is the one of a full
     * buffer (in put) or of the batch's begin (in commit). */
    uint64_t k = 0;
    int rc = 0;
    for (; k < 100000; k++) {
        if ((rc = put(s, 0, run, k, &n)) != 0) break;
        if (k % 50 == 49 && (rc = commit(s, &n)) != 0) break;
    }
    CHECK(rc == -want_errno);
    CHECK(strstr(err, strerror(want_errno)) != NULL && strstr(err, "/in/") != NULL);  /* the cause, the path */
    CHECK(put(s, 0, run, k + 1, &n) == -want_errno);  /* sticky: the caller must stop */
    rc = commit(s, &n);  /* what was written whole before is made durable (here or in the failing commit) */
    CHECK(rc == 0 || rc == -want_errno);
    CHECK(a.stored[0] > 0 && (uint64_t)a.stored[0] <= k);
    seen_runs r = read_stream(dir, source);  /* whole frames only, nothing half-written, and each claimed */
    CHECK_EQ_U(seen_next(&r, run), a.stored[0]);
    pl_store_close(s);
}

static void efbig_rlimit_fsize(void) {
    const char *dir = tmp_dir(NULL);
    pl_store *s = open_store(dir, 0);  /* (it ignores SIGXFSZ, so the limit is an error) */
    struct rlimit old, lim;
    CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
    lim.rlim_cur = 64 * 1024, lim.rlim_max = old.rlim_max;
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    fill_until_error(s, "big", 3, EFBIG, dir);
    CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
    /* The frames of the failed write that went whole stay: the file ends within a frame of
     * the limit. */
    char path[600];
    stream_path(path, sizeof path, dir, "big", ".plr");
    CHECK(file_size(path) > lim.rlim_cur - (ST_FRAME_BYTES + 1500));
    s = open_store(dir, 0);
    int64_t mark = bind(s, 0, "big", 3);
    CHECK(mark > 10);
    pl_store_close(s);
}

/* A write at a batch's begin fails before a whole frame went, on a receiver with nothing
 * else to sync: the batch has no descriptor, and the failed input must still be tried
 * again after its interval (no stream of it may be left waiting for that batch). */
static void failed_write_alone_is_retried(void) {
    const char *dir = tmp_dir(NULL);
    acks a;
    st_notify n = notify_of(&a);
    pl_store *s = open_store(dir, 0);  /* (it ignores SIGXFSZ, so the limit is an error) */
    CHECK_EQ_U(bind(s, 0, "idle", 5), 0);
    for (uint64_t k = 0; k < 10; k++) CHECK(put(s, 0, 5, k, &n) == 0);
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[0], 10);
    char path[600];
    stream_path(path, sizeof path, dir, "idle", ".plr");
    struct rlimit old, lim;
    CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
    lim.rlim_cur = file_size(path), lim.rlim_max = old.rlim_max;  /* not one byte more */
    CHECK(put(s, 0, 5, 10, &n) == 0);  /* in the write buffer */
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    CHECK(commit(s, &n) == -EFBIG);  /* the write fails whole: nothing to sync */
    CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
    CHECK(strstr(err, strerror(EFBIG)) != NULL && strstr(err, "/in/") != NULL);
    CHECK_EQ_U(a.refused[0], 1);  /* its run is refused at once, not at the next STREAM_OPEN */
    CHECK(pl_store_input_failed(s, "in") == -EFBIG);
    CHECK(pl_store_pending(s) == 0);
    CHECK_EQ_U(a.stored[0], 10);
    /* Idle: the sender's retry after the interval binds the run again at its durable mark. */
    int answer;
    int64_t mark;
    s->now_ns = PL_STORE_INPUT_RETRY_NS;
    CHECK(st_open_stream(s, 0, 0, 5, "idle", "in", 7, &answer, &mark, err, sizeof err) == 0);
    CHECK(answer == 0 && mark == 10);
    CHECK(pl_store_input_failed(s, "in") == 0);
    for (uint64_t k = 10; k < 20; k++) CHECK(put(s, 0, 5, k, &n) == 0);
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[0], 20);
    pl_store_close(s);
    seen_runs r = read_stream(dir, "idle");
    CHECK_EQ_U(r.frames, 20);
    CHECK_EQ_U(seen_next(&r, 5), 20);
}

static void enospc_small_tmpfs(void) {
    const char *dir = tmp_dir(NULL);
    if (mount("tmpfs", dir, "tmpfs", 0, "size=256k") != 0) {
        /* Containers without CAP_SYS_ADMIN: the same paths run in efbig_rlimit_fsize. */
        char why[160];
        snprintf(why, sizeof why, "mount of a small tmpfs not permitted (%s): a full disk is covered by "
                 "efbig_rlimit_fsize only", strerror(errno));
        SKIP(why);
    }
    pl_store *s = open_store(dir, 0);
    fill_until_error(s, "full", 4, ENOSPC, dir);
    s = open_store(dir, 0);  /* reopens on the full disk, with the mark of what is whole */
    int64_t mark = bind(s, 0, "full", 4);
    CHECK(mark > 100);
    pl_store_close(s);
    CHECK(umount(dir) == 0);
}

/* ---- The store's own bound of a file, at its edge ---- */
static void file_bound_edge(void) {
    const char *dir = tmp_dir(NULL);
    acks a;
    st_notify n = notify_of(&a);
    uint64_t bound = ST_HEADER_BYTES;
    for (uint64_t k = 0; k < 3; k++) bound += ST_FRAME_BYTES + rec_len(8, k);
    pl_store *s = open_store(dir, bound);
    bind(s, 0, "edge", 8);
    for (uint64_t k = 0; k < 3; k++) CHECK(put(s, 0, 8, k, &n) == 0);  /* exactly at the bound */
    CHECK(put(s, 0, 8, 3, &n) == -EFBIG);                              /* one frame past it */
    CHECK(strstr(err, "bound") != NULL);
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[0], 3);
    char path[600];
    stream_path(path, sizeof path, dir, "edge", ".plr");
    CHECK_EQ_U(file_size(path), bound);
    pl_store_close(s);
    s = open_store(dir, bound - 1);  /* one byte less: the third no longer fits */
    CHECK_EQ_U(bind(s, 0, "edge", 8), 3);
    CHECK(put(s, 0, 8, 3, &n) == -EFBIG);
    pl_store_close(s);
}

/* ---- Two endpoints over the in-memory network; the receiver stores through the store ---- */
#define COMMIT_NS (1 * MS)  /* a commit at most every millisecond of virtual time */
typedef struct e2e {
    pl_store *store;
    const char *dir;
    int recv;
    uint64_t last_commit_ns, want;
    int want_refusal;      /* done only once the store (since its last open) refused a stream */
    uint8_t *shadow_memo;  /* every MEMO_WRITE, applied as the store applies it */
    int failed;
} e2e;

static void e2e_service(ll_net *n, e2e *e) {
    ll_node *d = &n->node[e->recv];
    pure_link_event ev;
    for (int round = 0; round < 2; round++) {
        while (pure_link_event_next(d->pl, &ev)) {
            if (ev.kind == PURE_LINK_EVENT_MEMO_WRITE) memcpy(e->shadow_memo + ev.offset, ev.data, ev.len);
            if (pl_store_event(e->store, d->pl, &ev, n->now_ns, err, sizeof err) != 0) {
                fprintf(stderr, "  event: %s\n", err);
                e->failed = 1;
            }
        }
        if (round == 0 && pl_store_pending(e->store) && n->now_ns - e->last_commit_ns >= COMMIT_NS) {
            if (pl_store_commit(e->store, d->pl, n->now_ns, err, sizeof err) != 0) {
                fprintf(stderr, "  commit: %s\n", err);
                e->failed = 1;
            }
            e->last_commit_ns = n->now_ns;
        }
    }
    ll_service(n, e->recv);  /* its datagrams (its events are ours: hold_events) */
}

static int e2e_done(ll_net *n, void *arg) {
    e2e *e = arg;
    e2e_service(n, e);
    if (e->failed) return 1;
    pl_store_stats ss;
    pl_store_stats_get(e->store, &ss);
    return n->node[0].stored_seen[0] >= (int64_t)e->want && (!e->want_refusal || ss.streams_refused >= 1);
}

static void e2e_open(ll_net *n, e2e *e) {
    char path[300];
    snprintf(path, sizeof path, "%s/in", e->dir);
    pl_store_input in = {"in", 7, path};
    char memo[300];
    snprintf(memo, sizeof memo, "%s/memo", e->dir);
    ll_node *d = &n->node[e->recv];
    pl_store_config c = {&in, 1, memo, d->memo_bytes, 0, NULL, NULL};
    CHECK(pl_store_open(&e->store, &c, err, sizeof err) == 0);
    for (int k = 0; k < d->wired_count; k++) CHECK(pl_store_peer(e->store, k, d->wired[k]) == 0);
}

static void e2e_setup(ll_net *n, e2e *e, uint64_t seed) {
    memset(e, 0, sizeof *e);
    ll_init(n, seed, 5 * MS);
    int a = ll_node_add(n, NULL);
    pure_link_config rc;
    memset(&rc, 0, sizeof rc);
    rc.memo_enabled = 1;
    e->recv = ll_node_add(n, &rc);
    n->node[e->recv].hold_events = 1;
    e->shadow_memo = calloc(1, n->node[e->recv].memo_bytes);
    e->dir = tmp_dir(NULL);
    CHECK(ll_wire(n, e->recv, a, "src\nbad") >= 0);
    e2e_open(n, e);
}

static void send_all(ll_net *n, int sender, uint64_t count) {
    uint64_t run = pure_link_sender_run(n->node[0].pl, sender);
    uint8_t b[1600];
    for (uint64_t k = 0; k < count; k++) {
        size_t len = rec_len(run, k);
        rec_fill(b, len, run, k);
        CHECK(pure_link_send(n->node[0].pl, sender, b, len, n->now_ns) == (int64_t)k);
    }
}

/* The receiver dies (endpoint memory gone, no commit); `power` also loses what was not
 * durable and tears the tail.  It restarts from the memo and the store. */
static void e2e_crash(ll_net *n, e2e *e, int power) {
    ll_node *d = &n->node[e->recv];
    uint64_t durable[4];
    char paths[4][600];
    size_t streams = e->store->inputs[0].streams_len;
    CHECK(streams <= 4);
    for (size_t i = 0; i < streams; i++) {
        durable[i] = e->store->inputs[0].streams[i]->end_durable;
        snprintf(paths[i], sizeof paths[i], "%s", e->store->inputs[0].streams[i]->path);
    }
    pl_store_close(e->store);
    for (size_t i = 0; power && i < streams; i++) {
        uint64_t size = file_size(paths[i]);
        CHECK(truncate(paths[i], (off_t)(durable[i] + 5 < size ? durable[i] + 5 : size)) == 0);
    }
    e2e_open(n, e);
    size_t len;
    const uint8_t *memo = pl_store_memo(e->store, &len);
    CHECK(memo != NULL && len == d->memo_bytes);
    CHECK_MEM(memo, e->shadow_memo, len);  /* the memo file is every write, in place */
    memcpy(d->memo, memo, len);
    CHECK(ll_restart(n, e->recv) == 0);   /* loads the memo */
}

static void e2e_crash_restart(int power) {
    ll_net n;
    e2e e;
    e2e_setup(&n, &e, 7 + (uint64_t)power);
    int s = ll_link(&n, 0, e.recv, "src", "in", 7);
    int bad = ll_link(&n, 0, e.recv, "bad", "nope", 7);  /* no such input: refused */
    CHECK(s == 0 && bad == 1);
    uint64_t total = 3000;
    send_all(&n, s, total);
    CHECK(pure_link_send(n.node[0].pl, bad, "x", 1, n.now_ns) == 0);
    e.want = total / 2;
    ll_run(&n, 20 * S, e2e_done, &e);
    CHECK(!e.failed && n.node[0].stored_seen[0] >= (int64_t)total / 2 && n.node[0].stored_seen[0] < (int64_t)total);
    CHECK(pl_store_pending(e.store));  /* records wait for a commit: the crash loses them */
    e2e_crash(&n, &e, power);
    /* The refused stream's next trial must meet the restarted store too: the transfer
     * alone may end first (it resumes within a few round trips of the restart). */
    e.want = total;
    e.want_refusal = 1;
    ll_run(&n, 60 * S, e2e_done, &e);
    CHECK(!e.failed);
    CHECK_EQ_U(n.node[0].stored_seen[0], total);
    pure_link_stats st;
    st.version = PURE_LINK_STATS_VERSION;
    CHECK(pure_link_stats_get(n.node[e.recv].pl, -1, &st) == 0);
    CHECK_EQ_U(st.lost_notices_sent, 0);  /* the memo was kept: no LOST */
    CHECK(st.memo_runs_restored >= 1);
    CHECK(n.node[0].refused_events >= 1);
    pl_store_stats ss;
    pl_store_stats_get(e.store, &ss);
    CHECK(ss.streams_refused >= 1);
    CHECK(ss.fdatasyncs < ss.records_durable);  /* group commit: fewer syncs than records */
    uint64_t run = pure_link_sender_run(n.node[0].pl, s);
    CHECK(pl_store_commit(e.store, n.node[e.recv].pl, n.now_ns, err, sizeof err) == 0);
    pl_store_close(e.store);
    char path[600], name[ST_FILE_NAME_MOST];
    seen_runs r;
    st_file_name(name, n.node[0].pub, "src", ".plr");  /* the file of the sender's key */
    snprintf(path, sizeof path, "%s/in/%s", e.dir, name);
    read_back(path, &r);  /* each record once, in order, its bytes */
    CHECK_EQ_U(seen_next(&r, run), total);
    CHECK_EQ_U(r.frames, total);
    free(e.shadow_memo);
    ll_free(&n);
}
static void e2e_receiver_crash_restart(void) { e2e_crash_restart(0); }
static void e2e_receiver_power_loss_restart(void) { e2e_crash_restart(1); }

/* ---- The memo file round trip through a real endpoint ---- */
static void memo_round_trip_endpoint(void) {
    ll_net n;
    e2e e;
    e2e_setup(&n, &e, 3);
    size_t len;
    CHECK(pl_store_memo(e.store, &len) == NULL && len == 0);  /* none yet */
    int s = ll_link(&n, 0, e.recv, "src", "in", 7);
    send_all(&n, s, 10);
    e.want = 10;
    ll_run(&n, 10 * S, e2e_done, &e);
    CHECK(!e.failed && n.node[0].stored_seen[0] == 10);
    pl_store_stats ss;
    pl_store_stats_get(e.store, &ss);
    CHECK(ss.commits >= 1);
    pl_store_close(e.store);
    e2e_open(&n, &e);
    const uint8_t *memo = pl_store_memo(e.store, &len);
    CHECK(memo != NULL && len == n.node[e.recv].memo_bytes);
    CHECK_MEM(memo, e.shadow_memo, len);
    /* A fresh endpoint of the same key loads it. */
    memcpy(n.node[e.recv].memo, memo, len);
    CHECK(ll_restart(&n, e.recv) == 0);
    pl_store_close(e.store);
    free(e.shadow_memo);
    ll_free(&n);
}

/* ---- Limits at their edges (on tmpfs: they count files and runs, not the disk) ---- */
static int open_inputs(const char *dir, size_t count, const char *name0, const char *dir0, pl_store **out) {
    static pl_store_input in[PL_STORE_INPUTS_MOST + 1];
    static char names[PL_STORE_INPUTS_MOST + 1][16], dirs[PL_STORE_INPUTS_MOST + 1][300];
    for (size_t i = 0; i < count; i++) {
        snprintf(names[i], sizeof names[i], "i%zu", i);
        snprintf(dirs[i], sizeof dirs[i], "%s/d/%zu", dir, i);  /* (parents made as needed) */
        in[i] = (pl_store_input){names[i], 1, dirs[i]};
    }
    if (name0) in[0].name = name0;
    if (dir0) in[0].dir = dir0;
    pl_store_config c = {in, count, NULL, 0, 0, NULL, NULL};
    int rc = pl_store_open(out, &c, err, sizeof err);
    if (rc == 0) pl_store_close(*out);
    return rc;
}

static void limits_inputs_and_names(void) {
    const char *dir = shm_dir();
    pl_store *s;
    CHECK(open_inputs(dir, PL_STORE_INPUTS_MOST, NULL, NULL, &s) == 0);
    CHECK(open_inputs(dir, PL_STORE_INPUTS_MOST + 1, NULL, NULL, &s) == -EINVAL);
    CHECK(strstr(err, "1..256 inputs") != NULL);
    CHECK(open_inputs(dir, 0, NULL, NULL, &s) == -EINVAL);
    char name[PURE_LINK_NAME_MOST + 2];
    memset(name, 'n', sizeof name - 1);
    name[PURE_LINK_NAME_MOST] = 0;
    CHECK(open_inputs(dir, 2, name, NULL, &s) == 0);        /* 64 B */
    name[PURE_LINK_NAME_MOST] = 'n', name[PURE_LINK_NAME_MOST + 1] = 0;
    CHECK(open_inputs(dir, 2, name, NULL, &s) == -EINVAL);  /* 65 B */
    CHECK(strstr(err, "1..64 bytes") != NULL);
    CHECK(open_inputs(dir, 2, "", NULL, &s) == -EINVAL);
    CHECK(open_inputs(dir, 2, "a\nb", NULL, &s) == -EINVAL);
    CHECK(open_inputs(dir, 2, "i1", NULL, &s) == -EINVAL);  /* named twice */
    CHECK(strstr(err, "named twice") != NULL);
    char other[300];
    snprintf(other, sizeof other, "%s/d/1/", dir);
    CHECK(open_inputs(dir, 2, NULL, other, &s) == -EINVAL);  /* the same directory, spelt otherwise */
    CHECK(strstr(err, "share the directory") != NULL);
    CHECK(open_inputs(dir, 1, NULL, "/proc/no/such", &s) < 0);
    CHECK(strstr(err, "/proc/no/such") != NULL);

    /* Sources: 64 bytes that all need escaping make the longest file name; 65 are refused. */
    acks a;
    st_notify n = notify_of(&a);
    char src[PURE_LINK_NAME_MOST + 2];
    memset(src, 0xff, sizeof src - 1);
    src[PURE_LINK_NAME_MOST] = 0;
    s = open_store(dir, 0);
    CHECK_EQ_U(bind(s, 0, src, 1), 0);
    CHECK(put(s, 0, 1, 0, &n) == 0);
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(strlen(strrchr(s->inputs[0].streams[0]->path, '/') + 1), ST_KEY_HEX + 1 + 3 * 64 + 4);
    int answer;
    int64_t mark;
    src[PURE_LINK_NAME_MOST] = 'x', src[PURE_LINK_NAME_MOST + 1] = 0;
    CHECK(st_open_stream(s, 1, 0, 1, src, "in", 7, &answer, &mark, err, sizeof err) == -EINVAL);
    src[PURE_LINK_NAME_MOST] = 0;
    pl_store_close(s);
    s = open_store(dir, 0);
    CHECK_EQ_U(bind(s, 0, src, 1), 1);  /* recovered under its escaped name */
    pl_store_close(s);
}

static void limits_streams_per_input(void) {
    const char *dir = shm_dir();
    acks a;
    st_notify n = notify_of(&a);
    pl_store *s = open_store(dir, 0);
    char src[16];
    int answer;
    int64_t mark;
    for (unsigned i = 0; i < PL_STORE_STREAMS_PER_INPUT_MOST; i++) {
        snprintf(src, sizeof src, "s%u", i);
        CHECK_EQ_U(bind(s, 0, src, 1), 0);
        CHECK(put(s, 0, 1, 0, &n) == 0);
    }
    CHECK(commit(s, &n) == 0);
    CHECK(st_open_stream(s, 0, 0, 1, "one-more", "in", 7, &answer, &mark, err, sizeof err) == 0);
    CHECK(answer == -1);  /* refused: the input is full */
    CHECK(pl_store_refusal_last(s) == PL_STORE_REFUSAL_INPUT_FULL);
    pl_store_stats st;
    pl_store_stats_get(s, &st);
    CHECK_EQ_U(st.streams_refused, 1);
    CHECK_EQ_U(st.fdatasyncs, PL_STORE_STREAMS_PER_INPUT_MOST);  /* one per dirty file */
    pl_store_close(s);
    s = open_store(dir, 0);
    CHECK_EQ_U(s->inputs[0].streams_len, PL_STORE_STREAMS_PER_INPUT_MOST);
    CHECK_EQ_U(bind(s, 0, "s1023", 1), 1);
    CHECK(st_open_stream(s, 0, 0, 1, "one-more", "in", 7, &answer, &mark, err, sizeof err) == 0 && answer == -1);
    pl_store_close(s);
}

static void limits_runs_kept(void) {
    const char *dir = shm_dir();
    acks a;
    st_notify n = notify_of(&a);
    pl_store *s = open_store(dir, 0);
    for (uint64_t run = 1; run <= PL_STORE_RUNS_KEPT + 1; run++) {
        CHECK_EQ_U(bind(s, 0, "runs", run), 0);
        CHECK(put(s, 0, run, 0, &n) == 0);
        if (run % 64 == 0) CHECK(commit(s, &n) == 0);
    }
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(s->inputs[0].streams[0]->runs_len, PL_STORE_RUNS_KEPT);
    CHECK_EQ_U(bind(s, 1, "runs", 2), 1);  /* kept */
    CHECK_EQ_U(bind(s, 1, "runs", PL_STORE_RUNS_KEPT + 1), 1);
    pl_store_close(s);
    for (int with_index = 1; with_index >= 0; with_index--) {
        char idx[600];
        stream_path(idx, sizeof idx, dir, "runs", ".pli");
        if (!with_index) CHECK(unlink(idx) == 0);  /* the whole file read: the same runs kept */
        s = open_store(dir, 0);
        CHECK_EQ_U(s->inputs[0].streams[0]->runs_len, PL_STORE_RUNS_KEPT);
        CHECK_EQ_U(bind(s, 1, "runs", 2), 1);
        CHECK_EQ_U(bind(s, 1, "runs", PL_STORE_RUNS_KEPT + 1), 1);
        CHECK_EQ_U(bind(s, 1, "runs", 1), 0);  /* the least recent was forgotten */
        pl_store_close(s);
    }
}

/* ---- The checkpoint index: written past 64 MiB, installed by the next batch, trusted only
 * when it agrees with its file (on tmpfs: 70 MiB of records) ---- */
static void index_checkpoint(void) {
    const char *dir = shm_dir();
    acks a;
    st_notify n = notify_of(&a);
    pl_store *s = open_store(dir, 0);
    bind(s, 0, "big", 1);
    size_t len = 64 * 1024;
    uint8_t *b = malloc(len);
    uint64_t k = 0, bytes = 0;
    for (; bytes < PL_STORE_CHECKPOINT_BYTES; k++, bytes += ST_FRAME_BYTES + len) {
        memset(b, (int)k, len);
        CHECK(st_record(s, 0, 1, (int64_t)k, b, len, NULL, 0, &n, err, sizeof err) == 0);
    }
    char idx[600], tmp[600], path[600];
    stream_path(idx, sizeof idx, dir, "big", ".pli");
    stream_path(tmp, sizeof tmp, dir, "big", ".pli.tmp");
    stream_path(path, sizeof path, dir, "big", ".plr");
    CHECK(commit(s, &n) == 0);
    CHECK(access(idx, F_OK) != 0 && access(tmp, F_OK) == 0);  /* written, not yet durable */
    CHECK(pl_store_pending(s) == 1);
    int fds[4];
    size_t dirs;
    CHECK(pl_store_commit_begin(s, fds, 4, &dirs) == 1);            /* only the index's fdatasync */
    CHECK(st_commit_end(s, 0, NULL, &n, err, sizeof err) == 0);
    CHECK(access(idx, F_OK) == 0 && access(tmp, F_OK) != 0);  /* installed */
    CHECK_EQ_U(s->inputs[0].streams[0]->index_end, file_size(path));
    for (uint64_t j = k; j < k + 3; j++) CHECK(st_record(s, 0, 1, (int64_t)j, b, 10, NULL, 0, &n, err, sizeof err) == 0);
    CHECK(commit(s, &n) == 0);
    free(b);
    /* Crash: no close, so the index covers k records and the file k + 3. */
    st_stream *st = s->inputs[0].streams[0];
    st->end_durable = st->index_end;  /* (keeps close from writing a newer index) */
    pl_store_close(s);
    s = open_store(dir, 0);
    CHECK_EQ_U(bind(s, 0, "big", 1), k + 3);  /* the index, then the frames after it */
    pl_store_close(s);
    /* An index that says more than its file has is not trusted. */
    uint64_t size = file_size(path);
    CHECK(truncate(path, (off_t)(size - 10)) == 0);
    s = open_store(dir, 0);
    CHECK_EQ_U(bind(s, 0, "big", 1), k + 2);
    pl_store_stats ss;
    pl_store_stats_get(s, &ss);
    CHECK_EQ_U(ss.bytes_cut, ST_FRAME_BYTES);
    pl_store_close(s);
}

/* ---- A whole read of a file: frames that end exactly where a read of 1 MiB ends, that
 * straddle one, and one larger than the reader's buffer (on tmpfs: 20 MiB) ---- */
static void whole_read_across_buffer_edges(void) {
    const char *dir = shm_dir();
    acks a;
    st_notify n = notify_of(&a);
    pl_store *s = open_store(dir, 0);
    bind(s, 0, "edges", 1);
    const size_t mib = 1u << 20;
    size_t lens[5] = {mib - ST_HEADER_BYTES - ST_FRAME_BYTES,  /* ends at exactly 1 MiB */
                      mib / 2, mib, PURE_LINK_RECORD_MOST, 3};  /* straddles 2 MiB; bigger than a read */
    uint8_t *b = malloc(PURE_LINK_RECORD_MOST);
    for (int k = 0; k < 5; k++) {
        memset(b, k + 1, lens[k]);
        CHECK(st_record(s, 0, 1, k, b, lens[k], NULL, 0, &n, err, sizeof err) == 0);
    }
    free(b);
    CHECK(commit(s, &n) == 0);
    st_stream *st = s->inputs[0].streams[0];
    st->end_durable = st->index_end;  /* (no index at close: the next open reads it all) */
    pl_store_close(s);
    char idx[600];
    stream_path(idx, sizeof idx, dir, "edges", ".pli");
    CHECK(access(idx, F_OK) != 0);
    s = open_store(dir, 0);
    CHECK_EQ_U(bind(s, 0, "edges", 1), 5);
    pl_store_stats ss;
    pl_store_stats_get(s, &ss);
    CHECK_EQ_U(ss.bytes_cut, 0);
    pl_store_close(s);
}

/* ---- Durable bytes leave the page cache behind a tail of ST_CACHE_TAIL_BYTES: a store
 * written at full rate holds a few MiB of cache, not its whole file (on a disk's file
 * system; tmpfs keeps its pages whatever it is told) ---- */
static uint64_t resident_bytes(const char *path, uint64_t from, uint64_t to) {
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    long page = sysconf(_SC_PAGESIZE);
    void *m = mmap(NULL, (size_t)to, PROT_READ, MAP_SHARED, fd, 0);
    CHECK(m != MAP_FAILED);
    size_t pages = ((size_t)to + (size_t)page - 1) / (size_t)page;
    unsigned char *v = malloc(pages);
    CHECK(v != NULL && mincore(m, (size_t)to, v) == 0);
    uint64_t n = 0;
    for (size_t i = (size_t)(from / (uint64_t)page); i < pages; i++) n += (v[i] & 1) ? (uint64_t)page : 0;
    free(v);
    munmap(m, (size_t)to);
    close(fd);
    return n;
}

static void durable_bytes_leave_the_cache(void) {
    const char *dir = tmp_dir(NULL);
    acks a;
    st_notify n = notify_of(&a);
    pl_store *s = open_store(dir, 0);
    bind(s, 0, "cache", 1);
    const size_t rec = 1u << 20;
    uint8_t *b = malloc(rec);
    CHECK(b != NULL);
    for (uint64_t k = 0; k < 24; k++) {
        memset(b, (int)k + 1, rec);
        CHECK(st_record(s, 0, 1, (int64_t)k, b, rec, NULL, 0, &n, err, sizeof err) == 0);
        if (k % 4 == 3) CHECK(commit(s, &n) == 0);
    }
    free(b);
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[0], 24);
    char path[600];
    stream_path(path, sizeof path, dir, "cache", ".plr");
    uint64_t end = file_size(path), kept = ST_CACHE_TAIL_BYTES + ST_UNCACHE_STEP_BYTES;
    CHECK(end > 24 * rec);
    struct statfs fs;
    CHECK(statfs(path, &fs) == 0);
    if (fs.f_type != 0x01021994 /* TMPFS_MAGIC */) {
        CHECK_EQ_U(resident_bytes(path, 0, end - kept), 0);
        CHECK(resident_bytes(path, 0, end) <= kept);
    }
    pl_store_close(s);
    s = open_store(dir, 0);  /* every record still reads back from the disk */
    CHECK_EQ_U(bind(s, 0, "cache", 1), 24);
    pl_store_stats ss;
    pl_store_stats_get(s, &ss);
    CHECK_EQ_U(ss.bytes_cut, 0);
    pl_store_close(s);
}

/* A frame header split by the end of a 1 MiB read (fewer than its 28 bytes before it) is
 * not a torn tail: the read goes on from it.  It was taken for one, and a kill -9 of the
 * receiver then cut every durable record after the first 1 MiB of a stream file. */
static void frame_header_across_a_read_edge(void) {
    const char *dir = shm_dir();
    acks a;
    st_notify n = notify_of(&a);
    for (size_t short_by = 1; short_by < ST_FRAME_BYTES; short_by += 13) {
        pl_store *s = open_store(dir, 0);
        char source[32];
        snprintf(source, sizeof source, "edge%zu", short_by);
        bind(s, 0, source, 1);
        const size_t mib = 1u << 20;
        size_t lens[3] = {mib - ST_FRAME_BYTES - short_by, 100, 7};  /* reads start after the header */
        uint8_t *b = malloc(mib);
        for (int k = 0; k < 3; k++) {
            memset(b, k + 1, lens[k]);
            CHECK(st_record(s, 0, 1, k, b, lens[k], NULL, 0, &n, err, sizeof err) == 0);
        }
        free(b);
        CHECK(commit(s, &n) == 0);
        st_stream *st = s->inputs[0].streams[s->inputs[0].streams_len - 1];
        st->end_durable = st->index_end;  /* (no index at close: the next open reads it all) */
        pl_store_close(s);
        s = open_store(dir, 0);
        CHECK_EQ_U(bind(s, 0, source, 1), 3);
        pl_store_stats ss;
        pl_store_stats_get(s, &ss);
        CHECK_EQ_U(ss.bytes_cut, 0);
        pl_store_close(s);
    }
}

/* ---- pl_store_frame_read, what cat and verify read with: a frame cut anywhere is "not yet
 * whole" (0, with its length once the header is there), a wrong tag or length is BAD_HEAD,
 * any byte of the record or the CRC-covered header changed is BAD_CRC; st_frame_check
 * (the recovery's) agrees with it at every cut. ---- */
static void frame_read_outcomes(void) {
    uint8_t rec[40], b[ST_FRAME_BYTES + sizeof rec];
    for (size_t i = 0; i < sizeof rec; i++) rec[i] = (uint8_t)(i * 7);
    st_frame_encode(b, 0x1122334455667788ull, 9, rec, 10, rec + 10, sizeof rec - 10);
    memcpy(b + ST_FRAME_BYTES, rec, sizeof rec);
    pl_store_frame f;
    const char *why;
    CHECK_EQ_U(pl_store_frame_read(b, sizeof b, &f, &why), sizeof b);
    CHECK(f.len == sizeof rec && f.run == 0x1122334455667788ull && f.record == 9);
    for (size_t avail = 0; avail < sizeof b; avail++) {
        f.len = 0;
        CHECK(pl_store_frame_read(b, avail, &f, &why) == 0 && st_frame_check(b, avail, &f) == 0);
        CHECK(avail < ST_FRAME_BYTES || f.len == sizeof rec);
    }
    for (size_t at = 0; at < sizeof b; at++) {
        b[at] ^= 0x40;
        /* the tag, or a length over 16 MiB; a longer length that the bytes end before; the rest */
        long want = at < 4 || at == 7 ? PL_STORE_FRAME_BAD_HEAD : at < 7 ? 0 : PL_STORE_FRAME_BAD_CRC;
        CHECK_EQ_U(pl_store_frame_read(b, sizeof b, &f, &why) + 2, want + 2);
        CHECK(st_frame_check(b, sizeof b, &f) == 0);
        b[at] ^= 0x40;
    }
    b[7] = 0x01;  /* 16 MiB + a little: over the limit */
    CHECK(pl_store_frame_read(b, sizeof b, &f, &why) == PL_STORE_FRAME_BAD_HEAD && strstr(why, "16 MiB"));
}

/* ---- A batch of at most fds_most descriptors (the rest first in the next), and records a
 * sender says were stored that the store does not hold ---- */
static void batch_bound_and_missing(void) {
    const char *dir = tmp_dir(NULL);
    acks a;
    st_notify n = notify_of(&a);
    pl_store *s = open_store(dir, 0);
    const char *src[3] = {"x", "y", "z"};
    for (int i = 0; i < 3; i++) {
        bind(s, i, src[i], 1);
        CHECK(put(s, i, 1, 0, &n) == 0);
    }
    CHECK(commit(s, &n) == 0);  /* the three files named */
    CHECK(a.stored[0] == 1 && a.stored[1] == 1 && a.stored[2] == 1);
    for (int i = 0; i < 3; i++) CHECK(put(s, i, 1, 1, &n) == 0);
    int fds[PL_STORE_BATCH_FDS_MOST];
    size_t dirs;
    CHECK(pl_store_commit_begin(s, fds, 2, &dirs) == 2);  /* two of three files */
    CHECK(dirs == 0 && pl_store_pending(s) == 1);
    CHECK(st_commit_end(s, 0, NULL, &n, err, sizeof err) == 0);
    CHECK(a.stored[0] == 2 && a.stored[1] == 2 && a.stored[2] == 1);
    CHECK(put(s, 0, 1, 2, &n) == 0);
    CHECK(pl_store_commit_begin(s, fds, 1, &dirs) == 1);  /* the one left over goes first */
    CHECK_EQ_U(fds[0], s->inputs[0].streams[2]->fd);
    CHECK(st_commit_end(s, 0, NULL, &n, err, sizeof err) == 0);
    CHECK(a.stored[2] == 2 && a.stored[0] == 2);
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[0], 3);
    /* A run whose sender starts at record 5 (its first five stored by a life of this store
     * whose files are gone): stored from 5 on, the five counted as missing. */
    CHECK_EQ_U(bind(s, 3, "x", 2), 0);
    CHECK(put(s, 3, 2, 5, &n) == 0);
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[3], 6);
    pl_store_stats st;
    pl_store_stats_get(s, &st);
    CHECK_EQ_U(st.records_missing, 5);
    pl_store_close(s);
    s = open_store(dir, 0);
    CHECK_EQ_U(bind(s, 0, "x", 2), 6);
    pl_store_close(s);
}

/* ---- Resuming (spec/protocol.md §4.3): one run appends to a resumed stream, the last
 * asking run to be proven live (its first record: the core hands none over before), and
 * the owner log keeps that across a restart ---- */
/* Run `run` asks where to resume `source` on handle; the stream is durable: answered at once. */
static int64_t ask(pl_store *s, int handle, const char *source, uint64_t run) {
    int answer;
    int64_t mark;
    int rc = st_open_resume(s, handle, 0, run, source, "in", 7, &answer, &mark, err, sizeof err);
    if (rc != 0) fprintf(stderr, "  ask: %s\n", err);
    CHECK(rc == 0 && answer == 0);
    return mark;
}
/* A resumed stream's file holds one sequence: record k of whichever run, k = 0, 1, ...
 * each once, in order.  Returns how many. */
static uint64_t read_sequence(const char *dir, const char *source) {
    char path[600];
    stream_path(path, sizeof path, dir, source, ".plr");
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    uint64_t size = file_size(path), at = ST_HEADER_BYTES, next = 0;
    uint8_t *b = malloc(size);
    CHECK(st_read_all(fd, b, size, 0) == 0);
    close(fd);
    st_frame f;
    for (size_t n; (n = st_frame_check(b + at, size - at, &f)) > 0; at += n, next++) CHECK_EQ_U(f.record, next);
    CHECK_EQ_U(at, size);
    free(b);
    return next;
}
static void puts_from(pl_store *s, int handle, uint64_t run, uint64_t from, uint64_t to, const st_notify *n) {
    for (uint64_t k = from; k < to; k++) CHECK(put(s, handle, run, k, n) == 0);
}
/* A store in dir where run 1 asked on handle 0 and stored records 0..count-1 of "g". */
static pl_store *resumed_by_run_1(const char *dir, uint64_t count, const st_notify *n) {
    pl_store *s = open_store(dir, 0);
    CHECK_EQ_U(ask(s, 0, "g", 1), 0);
    puts_from(s, 0, 1, 0, count, n);
    CHECK(commit(s, n) == 0);
    return s;
}

/* A run cut off stays cut off when the receiver starts again: a sender paused (SIGSTOP)
 * while a newer one took its source over appends nothing when it goes on after a restart.
 * It is told so (REFUSED reason 5): at once when the takeover finds it bound, at each
 * record it brings after, and at every binding after a restart. */
static void resume_cut_outlives_restart(void) {
    const char *dir = tmp_dir(NULL);
    acks a;
    st_notify n = notify_of(&a);
    pl_store *s = resumed_by_run_1(dir, 300, &n);
    CHECK_EQ_U(ask(s, 1, "g", 2), 300);
    CHECK_EQ_U(a.refused[0], 0);       /* an ask cuts nothing off */
    puts_from(s, 1, 2, 300, 301, &n);  /* run 2 is proven: it takes over */
    CHECK_EQ_U(a.refused[0], 1);       /* run 1, bound on handle 0, is told at once */
    CHECK_EQ_U(a.refused_answer[0], -PURE_LINK_CUT_OFF);
    CHECK_EQ_U(a.refused[1], 0);
    puts_from(s, 1, 2, 301, 500, &n);
    puts_from(s, 0, 1, 300, 400, &n);  /* cut off: nothing, and each record is told */
    CHECK_EQ_U(a.refused[0], 101);
    CHECK_EQ_U(a.refused_answer[0], -PURE_LINK_CUT_OFF);
    CHECK_EQ_U(a.refused[1], 0);
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[0], 300);
    CHECK_EQ_U(a.stored[1], 500);
    pl_store_close(s);
    CHECK_EQ_U(read_sequence(dir, "g"), 500);

    s = open_store(dir, 0);
    /* The paused sender goes on: still cut off, refused when it binds again. */
    CHECK_EQ_U(bind_answer(s, 0, "g", 1), -PURE_LINK_CUT_OFF);
    CHECK_EQ_U(bind(s, 1, "g", 2), 500);
    puts_from(s, 1, 2, 500, 700, &n);
    /* A run that never asked appends nothing either: refused too. */
    CHECK_EQ_U(bind_answer(s, 2, "g", 3), -PURE_LINK_CUT_OFF);
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[1], 700);
    CHECK_EQ_U(a.refused[1], 0);
    pl_store_stats ss;
    pl_store_stats_get(s, &ss);
    CHECK_EQ_U(ss.streams_refused, 2);
    pl_store_close(s);
    CHECK_EQ_U(read_sequence(dir, "g"), 700);
}

/* An ask alone cuts nothing off: a replayed first packet of an earlier run (the receiver
 * lost it, and builds it again) is answered but never proven, and the live run goes on.
 * A run that asked before a restart may still take over after it. */
static void resume_ask_alone_cuts_nothing(void) {
    const char *dir = tmp_dir(NULL);
    acks a;
    st_notify n = notify_of(&a);
    pl_store *s = resumed_by_run_1(dir, 200, &n);
    CHECK_EQ_U(ask(s, 1, "g", 7), 200);  /* the replay */
    puts_from(s, 0, 1, 200, 400, &n);
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[0], 400);
    pl_store_close(s);
    CHECK_EQ_U(read_sequence(dir, "g"), 400);

    /* Run 9 asks and is answered; the receiver stops before its first record. */
    s = open_store(dir, 0);
    CHECK_EQ_U(bind(s, 0, "g", 1), 400);
    CHECK_EQ_U(ask(s, 2, "g", 9), 400);
    pl_store_close(s);
    s = open_store(dir, 0);
    CHECK_EQ_U(bind(s, 2, "g", 9), 400);  /* it binds again with record bytes */
    CHECK_EQ_U(bind(s, 0, "g", 1), 400);
    puts_from(s, 0, 1, 400, 450, &n);     /* run 1 still appends ... */
    puts_from(s, 2, 9, 400, 500, &n);     /* ... until run 9 takes over, at 450 */
    puts_from(s, 0, 1, 450, 460, &n);
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[0], 450);
    CHECK_EQ_U(a.stored[2], 500);
    /* Run 11 takes over at records of run 9 that are durable already: stored at once. */
    CHECK_EQ_U(ask(s, 3, "g", 11), 500);
    puts_from(s, 2, 9, 500, 520, &n);
    CHECK(commit(s, &n) == 0);
    puts_from(s, 3, 11, 500, 520, &n);
    CHECK_EQ_U(a.stored[3], 520);
    puts_from(s, 3, 11, 520, 530, &n);
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[3], 530);
    pl_store_close(s);
    CHECK_EQ_U(read_sequence(dir, "g"), 530);
}

/* ---- Power lost at each sync of the owner log ---- */
enum { CUT_BEFORE_ASK, CUT_AFTER_ASK, CUT_BEFORE_TAKEOVER, CUT_AFTER_TAKEOVER };
/* The power goes: the record file keeps what was synced (and 5 torn bytes), the owner log
 * its first plo_bytes (and 5 torn bytes of an entry written but not synced). */
static void power_cut(pl_store *s, const char *dir, uint64_t plo_bytes) {
    CHECK_EQ_U(s->inputs[0].streams_len, 1);
    uint64_t durable = s->inputs[0].streams[0]->end_durable;
    pl_store_close(s);
    char path[600];
    const char *suffix[2] = {".plr", ".plo"};
    uint64_t keep[2] = {durable + 5, plo_bytes + 5};
    for (int i = 0; i < 2; i++) {
        stream_path(path, sizeof path, dir, "g", suffix[i]);
        uint64_t size = file_size(path);
        CHECK(truncate(path, (off_t)(keep[i] < size ? keep[i] : size)) == 0);
    }
}

/* Run 2 resumes the source run 1 owns, and the power goes just before or just after the
 * owner log's sync of its ask or of its takeover.  After the restart no record is in the
 * file twice, none acknowledged is lost, and once the takeover was synced run 1 stays cut
 * off; before it, run 1 still owns the source until run 2 asks and takes over again. */
static void owner_log_power_cut(int cut) {
    const char *dir = tmp_dir(NULL);
    acks a;
    st_notify n = notify_of(&a);
    pl_store *s = resumed_by_run_1(dir, 300, &n);
    char plo[600];
    stream_path(plo, sizeof plo, dir, "g", ".plo");
    uint64_t synced = file_size(plo);
    CHECK_EQ_U(synced, 2 * ST_OWNER_ENTRY_BYTES);  /* run 1 asked and took over */
    CHECK_EQ_U(ask(s, 1, "g", 2), 300);
    CHECK_EQ_U(file_size(plo), synced + ST_OWNER_ENTRY_BYTES);
    if (cut != CUT_BEFORE_ASK) synced = file_size(plo);
    if (cut >= CUT_BEFORE_TAKEOVER) {
        puts_from(s, 1, 2, 300, 310, &n);  /* its first record takes over: not committed */
        puts_from(s, 0, 1, 300, 305, &n);  /* cut off */
        CHECK_EQ_U(file_size(plo), synced + ST_OWNER_ENTRY_BYTES);
        if (cut == CUT_AFTER_TAKEOVER) synced = file_size(plo);
    }
    CHECK(a.stored[0] == 300 && a.stored[1] == 0);
    power_cut(s, dir, synced);

    s = open_store(dir, 0);
    uint64_t end = 300;
    if (cut != CUT_AFTER_TAKEOVER) {
        CHECK_EQ_U(bind(s, 0, "g", 1), 300);  /* nothing acknowledged lost */
        puts_from(s, 0, 1, 300, 350, &n);  /* run 1 owns the source still */
        CHECK(commit(s, &n) == 0);
        CHECK_EQ_U(a.stored[0], 350);
        CHECK_EQ_U(ask(s, 1, "g", 2), 350);  /* run 2 asks again */
        end = 350;
        a.refused[0] = 0;
        puts_from(s, 1, 2, end, 400, &n);
        CHECK(a.refused[0] == 1 && a.refused_answer[0] == -PURE_LINK_CUT_OFF);  /* told at the takeover */
        puts_from(s, 0, 1, end, 420, &n);  /* cut off */
    } else {
        /* The takeover was durable: run 1 is refused (its 300 are in the file, below). */
        CHECK_EQ_U(bind_answer(s, 0, "g", 1), -PURE_LINK_CUT_OFF);
        CHECK_EQ_U(bind(s, 1, "g", 2), 300);
        puts_from(s, 1, 2, end, 400, &n);
    }
    CHECK(commit(s, &n) == 0);
    CHECK_EQ_U(a.stored[0], end);
    CHECK_EQ_U(a.stored[1], 400);
    pl_store_close(s);
    CHECK_EQ_U(read_sequence(dir, "g"), 400);  /* each record once, in order */

    /* And after one more restart, run 1 is still cut off. */
    s = open_store(dir, 0);
    CHECK_EQ_U(bind_answer(s, 0, "g", 1), -PURE_LINK_CUT_OFF);
    CHECK(commit(s, &n) == 0);
    pl_store_close(s);
    CHECK_EQ_U(read_sequence(dir, "g"), 400);
}
static void owner_log_cut_before_ask_sync(void) { owner_log_power_cut(CUT_BEFORE_ASK); }
static void owner_log_cut_after_ask_sync(void) { owner_log_power_cut(CUT_AFTER_ASK); }
static void owner_log_cut_before_takeover_sync(void) { owner_log_power_cut(CUT_BEFORE_TAKEOVER); }
static void owner_log_cut_after_takeover_sync(void) { owner_log_power_cut(CUT_AFTER_TAKEOVER); }

TEST_MAIN(TEST_CASE(crc32c_paths_agree), TEST_CASE(frame_header_across_a_read_edge), TEST_CASE(frame_read_outcomes), TEST_CASE(append_commit_reopen), TEST_CASE(torn_tail_every_offset), TEST_CASE(fsync_failure_never_claimed),
          TEST_CASE(one_input_fails_the_other_goes_on),
          TEST_CASE(rebind_on_other_handle), TEST_CASE(new_file_named_after_its_bytes),
          TEST_CASE(new_file_crash_before_and_after_rename), TEST_CASE(new_file_rename_refused),
          TEST_CASE(same_file_name_refused), TEST_CASE(refusals_counted), TEST_CASE(kill9_mid_append_and_commit),
          TEST_CASE(efbig_rlimit_fsize), TEST_CASE(failed_write_alone_is_retried), TEST_CASE(enospc_small_tmpfs), TEST_CASE(file_bound_edge),
          TEST_CASE(e2e_receiver_crash_restart), TEST_CASE(e2e_receiver_power_loss_restart),
          TEST_CASE(memo_round_trip_endpoint), TEST_CASE(limits_inputs_and_names), TEST_CASE(limits_streams_per_input),
          TEST_CASE(limits_runs_kept), TEST_CASE(index_checkpoint), TEST_CASE(whole_read_across_buffer_edges),
          TEST_CASE(batch_bound_and_missing), TEST_CASE(durable_bytes_leave_the_cache),
          TEST_CASE(resume_cut_outlives_restart), TEST_CASE(resume_ask_alone_cuts_nothing),
          TEST_CASE(owner_log_cut_before_ask_sync), TEST_CASE(owner_log_cut_after_ask_sync),
          TEST_CASE(owner_log_cut_before_takeover_sync), TEST_CASE(owner_log_cut_after_takeover_sync))
