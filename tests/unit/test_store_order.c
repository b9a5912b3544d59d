/* test_store_order.c: the store reports a record stored only after the syncs its
 * durability needs have returned — through the store's own commit, and through the driver
 * with the POSIX backend (a pool of sync threads) and the io_uring one (the kernel's
 * workers), over real UDP on loopback, real files and real fdatasync.
 *
 * The build links this program with --wrap for pwrite, pwritev, fdatasync, fsync,
 * renameat2, pure_link_stored, liburing's submit calls and the io_uring driver's
 * pl_uring_sync_done (Makefile).  Each wrapper calls the real function and writes down what
 * it saw, per file (by inode): the highest record number whose frame was written; the state
 * each sync saw when it began, which counts once the sync returned 0; each rename into
 * place; and each directory fsync, which makes durable every rename done before it began.
 * Over io_uring a sync is an IORING_OP_FSYNC that the submit calls hand to the kernel: the
 * wrapper reads it off the submission queue (its descriptor, and the file's state then),
 * and it counts once the batch ended with 0 and the ring had reaped a completion for each
 * one submitted.  Every pure_link_stored(stream, mark) is then checked: the file's name must
 * be durable, and a sync that began after record mark - 1 was written must have returned.
 * Nothing is replaced: every call does what it would do without the wrapper. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <ftw.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "harness.h"
#include "pl_uring.h"
#include "posix_pair.h"
#include "store_internal.h"
#include "tmp_dirs.h"

/* ---- What the wrappers saw ---- */
#define FILES_MOST 16u        /* files one case writes (one stream, its index, the memo) */
#define URING_SYNC_MOST PL_URING_SYNC_FDS_MOST

typedef struct seen_file {
    dev_t dev;
    ino_t ino;
    int header;               /* the record file header was written */
    uint64_t appended;        /* 1 + the highest record number whose frame was written */
    int synced_header;        /* as the last sync that returned 0 saw them when it began */
    uint64_t synced;
    uint64_t rename;          /* which rename named it (0: none yet) */
} seen_file;

typedef struct order_log {
    pthread_mutex_t mu;
    seen_file files[FILES_MOST];
    size_t files_len;
    uint64_t renames;         /* renames into place so far */
    uint64_t renames_durable; /* renames before the start of a directory fsync that returned 0 */
    uint64_t claims, claim_mark_most, syncs, dir_syncs;
    uint64_t violations;
    /* A held sync (posix_driver_slow_sync): the first fdatasync of the record file waits,
     * before it calls the real one, until frames of HOLD_RECORDS more records were written
     * to the file (or HOLD_MOST_NS passed), as a disk that slow would hold it. */
    int hold_armed, holding, hold_reached;
    const seen_file *held;
    uint64_t hold_from, hold_claims, hold_overlaps;
    char first_violation[256];
    /* the io_uring syncs submitted since the last batch ended: what each descriptor's file
     * held when its IORING_OP_FSYNC went to the kernel; and the ring's count of reaped sync
     * completions when the first of them did */
    struct { seen_file *f; int header, dir; uint64_t appended, renames; } uring[URING_SYNC_MOST];
    size_t uring_len;
    uint64_t uring_reaped_before;
} order_log;

static order_log lg = {.mu = PTHREAD_MUTEX_INITIALIZER};
static pl_uring *uring_watched;  /* the receiver's ring once a batch ended on it (a new ring
                                    counts from 0): its count of reaped sync completions */

static void log_reset(void) {
    pthread_mutex_lock(&lg.mu);
    memset(lg.files, 0, sizeof lg.files);
    lg.files_len = lg.uring_len = 0;
    uring_watched = NULL;
    lg.renames = lg.renames_durable = lg.claims = lg.claim_mark_most = lg.syncs = lg.dir_syncs = lg.violations = 0;
    lg.hold_armed = lg.holding = lg.hold_reached = 0;
    lg.held = NULL;
    lg.hold_from = lg.hold_claims = lg.hold_overlaps = 0;
    lg.first_violation[0] = 0;
    pthread_mutex_unlock(&lg.mu);
}

static void violation(const char *what, uint64_t a, uint64_t b) {
    if (lg.violations++ == 0)
        snprintf(lg.first_violation, sizeof lg.first_violation, "%s (%llu, %llu)", what, (unsigned long long)a,
                 (unsigned long long)b);
}

/* The entry of a file (under the lock); NULL when the table is full (a violation). */
static seen_file *file_of(const struct stat *sb) {
    for (size_t i = 0; i < lg.files_len; i++)
        if (lg.files[i].dev == sb->st_dev && lg.files[i].ino == sb->st_ino) return &lg.files[i];
    if (lg.files_len == FILES_MOST) {
        violation("more files than the log holds", lg.files_len, FILES_MOST);
        return NULL;
    }
    seen_file *f = &lg.files[lg.files_len++];
    memset(f, 0, sizeof *f);
    f->dev = sb->st_dev, f->ino = sb->st_ino;
    return f;
}

static seen_file *file_of_fd(int fd) {
    struct stat sb;
    return fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? file_of(&sb) : NULL;
}

/* A sync that returned 0 makes what it saw at its start durable. */
static void sync_returned(seen_file *f, int header, uint64_t appended, int dir, uint64_t renames) {
    lg.syncs++;
    if (dir) {
        lg.dir_syncs++;
        if (renames > lg.renames_durable) lg.renames_durable = renames;
    } else if (f != NULL) {
        f->synced_header |= header;
        if (appended > f->synced) f->synced = appended;
    }
}

/* The claim check: the stream's file is the one record file this case writes frames to. */
static void check_claim(int64_t mark) {
    pthread_mutex_lock(&lg.mu);
    lg.claims++;
    if (lg.holding) lg.hold_claims++;
    if ((uint64_t)mark < lg.claim_mark_most) violation("a claim below an earlier one", (uint64_t)mark, lg.claim_mark_most);
    if ((uint64_t)mark > lg.claim_mark_most) lg.claim_mark_most = (uint64_t)mark;
    const seen_file *f = NULL;
    for (size_t i = 0; i < lg.files_len; i++)
        if (lg.files[i].header) f = &lg.files[i];
    if (mark > 0 && f == NULL) violation("a claim with no record file written", (uint64_t)mark, 0);
    else if (mark > 0 && (f->rename == 0 || f->rename > lg.renames_durable))
        violation("a claim before its file's name was durable", f->rename, lg.renames_durable);
    else if (mark > 0 && (uint64_t)mark > f->synced)
        violation("a claim beyond what a returned fdatasync covered", (uint64_t)mark, f->synced);
    pthread_mutex_unlock(&lg.mu);
}

/* ---- The wrappers ---- */
ssize_t __real_pwrite(int fd, const void *buf, size_t n, off_t off);
ssize_t __real_pwritev(int fd, const struct iovec *iov, int cnt, off_t off);
int __real_fdatasync(int fd);
int __real_fsync(int fd);
int __real_renameat2(int olddir, const char *old, int newdir, const char *new_name, unsigned flags);
int __real_pure_link_stored(pure_link *pl, int stream, int64_t record, uint64_t now_ns);
int __real_pl_uring_sync_done(pl_uring *u, int *result);
ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off);
ssize_t __wrap_pwritev(int fd, const struct iovec *iov, int cnt, off_t off);
int __wrap_fdatasync(int fd);
int __wrap_fsync(int fd);
int __wrap_renameat2(int olddir, const char *old, int newdir, const char *new_name, unsigned flags);
int __wrap_pure_link_stored(pure_link *pl, int stream, int64_t record, uint64_t now_ns);
int __wrap_pl_uring_sync_done(pl_uring *u, int *result);

/* 1 + the highest record number among the whole frames of the first `len` bytes at p, 0
 * if none (p starts at a frame or holds none). */
static uint64_t frames_end(const uint8_t *p, size_t len) {
    uint64_t end = 0;
    for (size_t at = 0; at + ST_FRAME_BYTES <= len && memcmp(p + at, "PLF1", 4) == 0;) {
        uint64_t n = 0, record = 0;
        for (int i = 3; i >= 0; i--) n = n << 8 | p[at + 4 + i];
        for (int i = 7; i >= 0; i--) record = record << 8 | p[at + 16 + i];
        if (at + ST_FRAME_BYTES + n > len) break;
        if (record + 1 > end) end = record + 1;
        at += ST_FRAME_BYTES + (size_t)n;
    }
    return end;
}

/* A record file's header, or a write buffer of frames (only those that went whole count). */
ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off) {
    ssize_t r = __real_pwrite(fd, buf, n, off);
    if (r == (ssize_t)n && off == 0 && n >= 8 && memcmp(buf, "PLRECS1\n", 8) == 0) {
        pthread_mutex_lock(&lg.mu);
        seen_file *f = file_of_fd(fd);
        if (f) f->header = 1;
        pthread_mutex_unlock(&lg.mu);
    } else if (r > 0) {
        uint64_t end = frames_end(buf, (size_t)r);
        pthread_mutex_lock(&lg.mu);
        seen_file *f = end ? file_of_fd(fd) : NULL;
        if (f && end > f->appended) f->appended = end;
        pthread_mutex_unlock(&lg.mu);
    }
    return r;
}

/* A frame too large for the write buffer: its header first (tag PLF1, length, run,
 * record), in one call (a short write would be finished by later calls; this test counts a
 * frame only when it went whole). */
ssize_t __wrap_pwritev(int fd, const struct iovec *iov, int cnt, off_t off) {
    size_t total = 0;
    for (int i = 0; i < cnt; i++) total += iov[i].iov_len;
    ssize_t r = __real_pwritev(fd, iov, cnt, off);
    const uint8_t *h = cnt > 0 ? iov[0].iov_base : NULL;
    if (r == (ssize_t)total && h && iov[0].iov_len >= ST_FRAME_BYTES && memcmp(h, "PLF1", 4) == 0) {
        uint64_t record = 0;
        for (int i = 7; i >= 0; i--) record = record << 8 | h[16 + i];
        pthread_mutex_lock(&lg.mu);
        seen_file *f = file_of_fd(fd);
        if (f && record + 1 > f->appended) f->appended = record + 1;
        pthread_mutex_unlock(&lg.mu);
    }
    return r;
}

#define HOLD_RECORDS 500u
#define HOLD_MOST_NS 10000000000ull  /* 10 s */

/* The held sync waits (under no lock) until the file's frames reach `until`; 1 if they did. */
static int hold(const seen_file *f, uint64_t until) {
    uint64_t end = pl_now_ns() + HOLD_MOST_NS;
    for (;;) {
        pthread_mutex_lock(&lg.mu);
        int grown = f->appended >= until;
        pthread_mutex_unlock(&lg.mu);
        if (grown) return 1;
        if (pl_now_ns() > end) return 0;
        usleep(1000);
    }
}

static int synced(int fd, int (*real)(int)) {
    struct stat sb;
    int dir = fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode);
    pthread_mutex_lock(&lg.mu);
    seen_file *f = dir ? NULL : file_of_fd(fd);
    int held = f && f->header && lg.hold_armed;
    if (f && lg.holding && f == lg.held) lg.hold_overlaps++;  /* a second batch began */
    if (held) lg.hold_armed = 0, lg.holding = 1, lg.held = f, lg.hold_from = f->appended;
    int header = f ? f->header : 0;
    uint64_t appended = f ? f->appended : 0, renames = lg.renames;
    pthread_mutex_unlock(&lg.mu);
    if (held) {
        int reached = hold(f, appended + HOLD_RECORDS);
        pthread_mutex_lock(&lg.mu);
        lg.hold_reached = reached;
        lg.holding = 0;
        pthread_mutex_unlock(&lg.mu);
    }
    int r = real(fd);
    if (r == 0) {
        pthread_mutex_lock(&lg.mu);
        sync_returned(f, header, appended, dir, renames);
        pthread_mutex_unlock(&lg.mu);
    }
    return r;
}
int __wrap_fdatasync(int fd) { return synced(fd, __real_fdatasync); }
int __wrap_fsync(int fd) { return synced(fd, __real_fsync); }

int __wrap_renameat2(int olddir, const char *old, int newdir, const char *new_name, unsigned flags) {
    struct stat sb;
    int ours = strstr(old, ".plr.tmp") != NULL && fstatat(olddir, old, &sb, 0) == 0;
    int r = __real_renameat2(olddir, old, newdir, new_name, flags);
    if (r == 0 && ours) {
        pthread_mutex_lock(&lg.mu);
        seen_file *f = file_of(&sb);
        if (f && !f->synced_header) violation("renamed into place before its header was durable", f->header, 0);
        if (f) f->rename = ++lg.renames;
        pthread_mutex_unlock(&lg.mu);
    }
    return r;
}

int __wrap_pure_link_stored(pure_link *pl, int stream, int64_t record, uint64_t now_ns) {
    check_claim(record);
    return __real_pure_link_stored(pl, stream, record, now_ns);
}

/* io_uring: each IORING_OP_FSYNC read off the submission queue as it goes to the kernel,
 * with what its descriptor held then; they count once the batch ended with 0 and the ring
 * reaped a completion for every one of them. */
int __real_io_uring_submit(struct io_uring *ring);
int __real_io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr);
int __real_io_uring_submit_and_get_events(struct io_uring *ring);
int __real_io_uring_submit_and_wait_timeout(struct io_uring *ring, struct io_uring_cqe **cqe, unsigned wait_nr,
                                            struct __kernel_timespec *ts, sigset_t *sigmask);
int __wrap_io_uring_submit(struct io_uring *ring);
int __wrap_io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr);
int __wrap_io_uring_submit_and_get_events(struct io_uring *ring);
int __wrap_io_uring_submit_and_wait_timeout(struct io_uring *ring, struct io_uring_cqe **cqe, unsigned wait_nr,
                                            struct __kernel_timespec *ts, sigset_t *sigmask);

static uint64_t uring_reaped(void) {
    pl_uring_stats st;
    if (uring_watched == NULL) return 0;
    pl_uring_stats_get(uring_watched, &st);
    return st.fdatasyncs;
}

static void uring_submitting(struct io_uring *ring) {
    pthread_mutex_lock(&lg.mu);
    for (unsigned i = ring->sq.sqe_head; i != ring->sq.sqe_tail; i++) {
        const struct io_uring_sqe *sqe = &ring->sq.sqes[i & ring->sq.ring_mask];
        if (sqe->opcode != IORING_OP_FSYNC) continue;
        if (lg.uring_len == URING_SYNC_MOST) {
            violation("more syncs submitted than a batch holds", lg.uring_len, URING_SYNC_MOST);
            break;
        }
        struct stat sb;
        int dir = fstat(sqe->fd, &sb) == 0 && S_ISDIR(sb.st_mode);
        seen_file *f = dir ? NULL : file_of_fd(sqe->fd);
        if (dir && (sqe->fsync_flags & IORING_FSYNC_DATASYNC)) continue;  /* a rename needs the full fsync */
        if (lg.uring_len == 0) lg.uring_reaped_before = uring_reaped();
        lg.uring[lg.uring_len].f = f;
        lg.uring[lg.uring_len].dir = dir;
        lg.uring[lg.uring_len].header = f ? f->header : 0;
        lg.uring[lg.uring_len].appended = f ? f->appended : 0;
        lg.uring[lg.uring_len++].renames = lg.renames;
    }
    pthread_mutex_unlock(&lg.mu);
}

int __wrap_io_uring_submit(struct io_uring *ring) {
    uring_submitting(ring);
    return __real_io_uring_submit(ring);
}
int __wrap_io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr) {
    uring_submitting(ring);
    return __real_io_uring_submit_and_wait(ring, wait_nr);
}
int __wrap_io_uring_submit_and_get_events(struct io_uring *ring) {
    uring_submitting(ring);
    return __real_io_uring_submit_and_get_events(ring);
}
int __wrap_io_uring_submit_and_wait_timeout(struct io_uring *ring, struct io_uring_cqe **cqe, unsigned wait_nr,
                                            struct __kernel_timespec *ts, sigset_t *sigmask) {
    uring_submitting(ring);
    return __real_io_uring_submit_and_wait_timeout(ring, cqe, wait_nr, ts, sigmask);
}

int __wrap_pl_uring_sync_done(pl_uring *u, int *result) {
    int done = __real_pl_uring_sync_done(u, result);
    if (done) {
        pthread_mutex_lock(&lg.mu);
        uring_watched = u;
        uint64_t reaped = uring_reaped() - lg.uring_reaped_before;
        if (*result == 0 && reaped == lg.uring_len)
            for (size_t i = 0; i < lg.uring_len; i++)
                sync_returned(lg.uring[i].f, lg.uring[i].header, lg.uring[i].appended, lg.uring[i].dir, lg.uring[i].renames);
        lg.uring_len = 0;
        pthread_mutex_unlock(&lg.mu);
    }
    return done;
}

static char err[512];
static pl_store *open_store(const char *dir) {
    pl_store_input in = {"in", 7, dir};
    pl_store_config c = {&in, 1, NULL, 0, 0, NULL, NULL};
    pl_store *s = NULL;
    int rc = pl_store_open(&s, &c, err, sizeof err);
    if (rc != 0) fprintf(stderr, "  open: %s\n", err);
    CHECK(rc == 0);
    return s;
}

/* ---- The store's own commit; and the check itself, which sees a claim made too early ---- */
static void stored_to_check(void *ctx, int stream, int64_t record) { (void)ctx, (void)stream, check_claim(record); }
static void memo_ignored(void *ctx, uint64_t token) { (void)ctx, (void)token; }

static void store_commit_claims_after_its_syncs(void) {
    log_reset();
    pl_store *s = open_store(tmp_dir(NULL));
    uint8_t key[32];
    memset(key, 0x42, 32);
    CHECK(pl_store_peer(s, 0, key) == 0);
    int answer;
    int64_t mark;
    CHECK(st_open_stream(s, 0, 0, 9, "src", "in", 7, &answer, &mark, err, sizeof err) == 0 && answer == 0);
    st_notify n = {stored_to_check, memo_ignored, NULL, NULL};
    uint8_t rec[100] = {1};
    for (int64_t k = 0; k < 3; k++) CHECK(st_record(s, 0, 9, k, rec, sizeof rec, NULL, 0, &n, err, sizeof err) == 0);
    check_claim(3);  /* as a store that claimed at append would: the check must see it */
    CHECK_EQ_U(lg.violations, 1);
    CHECK(strstr(lg.first_violation, "name was durable") != NULL);
    uint64_t k = 3;
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 1 + round % 4; i++, k++)
            CHECK(st_record(s, 0, 9, (int64_t)k, rec, sizeof rec, NULL, 0, &n, err, sizeof err) == 0);
        CHECK(st_commit(s, &n, err, sizeof err) == 0);
    }
    CHECK_EQ_U(lg.violations, 1);  /* none more */
    CHECK_EQ_U(lg.claim_mark_most, k);
    CHECK(lg.renames == 1 && lg.renames_durable == 1 && lg.dir_syncs >= 1);
    /* Once named, a claim beyond the last returned fdatasync is caught too. */
    CHECK(st_record(s, 0, 9, (int64_t)k, rec, sizeof rec, NULL, 0, &n, err, sizeof err) == 0);
    check_claim((int64_t)k + 1);
    CHECK_EQ_U(lg.violations, 2);
    pl_store_close(s);
}

/* ---- Through the driver: a sender and a receiver that stores, over loopback ---- */
static void driver_claims_after_syncs(int (*io_open)(pl_io **, const pl_io_options *, char *, size_t)) {
    log_reset();
    const char *dir = tmp_dir(NULL);  /* on the disk: the syncs are real ones */
    pl_store *s = open_store(dir);
    /* The sender holds its last 1,500 records back until it has heard STORED: the first
     * claim is then one of several whatever the load (all 3,000 in one paced commit left one). */
    pp_options o = {.recv_bind = "127.0.0.1:0", .send_bind = "127.0.0.1:0", .count = 3000, .check = 1,
                    .io_open = io_open, .store = s, .hold_after = 1500};
    pp_result r;
    CHECK(pp_transfer(&o, &r) == 0 || r.open_error != 0);
    if (r.open_error != 0 && io_open != NULL) {
        pl_store_close(s);
        SKIP(r.why);  /* io_uring refused here: the POSIX case stands alone */
    }
    if (!r.ok) fprintf(stderr, "  %s\n", r.why);
    CHECK(r.ok);
    CHECK(r.records == o.count && r.duplicates == 0 && r.bad == 0);
    pthread_mutex_lock(&lg.mu);
    uint64_t violations = lg.violations, claims = lg.claims, most = lg.claim_mark_most, dir_syncs = lg.dir_syncs;
    pthread_mutex_unlock(&lg.mu);
    if (violations) fprintf(stderr, "  %s\n", lg.first_violation);
    CHECK_EQ_U(violations, 0);
    CHECK_EQ_U(most, (uint64_t)o.count);  /* the check ran on the claim of the last record */
    CHECK(claims >= 2 && dir_syncs >= 1);
    pl_store_stats st;
    pl_store_stats_get(s, &st);
    CHECK(st.commits >= 2 && st.records_durable == (uint64_t)o.count);
    pl_store_close(s);
    s = open_store(dir);  /* what it claimed is there */
    CHECK_EQ_U(s->inputs[0].streams_len, 1);
    CHECK_EQ_U(s->inputs[0].streams[0]->runs_len, 1);
    CHECK_EQ_U(s->inputs[0].streams[0]->runs[0].mark_durable, (uint64_t)o.count);
    pl_store_close(s);
}

static void posix_driver_claims_after_syncs(void) { driver_claims_after_syncs(NULL); }

/* The hand-over to the sync threads holds one batch: while its sync runs, however long, the
 * loop goes on receiving and writing, starts no second batch, claims nothing more; once it
 * returns, the next batch covers everything that arrived meanwhile, and every record is
 * stored once, in order.  The first fdatasync of the record file is held until frames of
 * HOLD_RECORDS more records were written (the sender may send 1,500 before its first
 * STORED), as a disk that slow would hold it. */
static void posix_driver_slow_sync(void) {
    log_reset();
    const char *dir = tmp_dir(NULL);
    pl_store *s = open_store(dir);
    pp_options o = {.recv_bind = "127.0.0.1:0", .send_bind = "127.0.0.1:0", .count = 3000, .check = 1,
                    .store = s, .hold_after = 1500};
    pthread_mutex_lock(&lg.mu);
    lg.hold_armed = 1;
    pthread_mutex_unlock(&lg.mu);
    pp_result r;
    CHECK(pp_transfer(&o, &r) == 0);
    if (!r.ok) fprintf(stderr, "  %s\n", r.why);
    CHECK(r.ok);
    CHECK(r.records == o.count && r.duplicates == 0 && r.bad == 0);
    pthread_mutex_lock(&lg.mu);
    uint64_t violations = lg.violations, most = lg.claim_mark_most, from = lg.hold_from;
    uint64_t claims = lg.hold_claims, overlaps = lg.hold_overlaps;
    int armed = lg.hold_armed, reached = lg.hold_reached;
    pthread_mutex_unlock(&lg.mu);
    if (violations) fprintf(stderr, "  %s\n", lg.first_violation);
    fprintf(stderr, "  held the sync of records below %llu until %u more were written: %s\n",
            (unsigned long long)from, HOLD_RECORDS, reached ? "yes" : "no");
    CHECK(!armed && reached);         /* the loop wrote on while the sync was held */
    CHECK_EQ_U(overlaps, 0);          /* and began no second batch */
    CHECK_EQ_U(claims, 0);            /* nor claimed anything */
    CHECK_EQ_U(violations, 0);        /* every claim after its syncs, none going back */
    CHECK_EQ_U(most, (uint64_t)o.count);
    pl_store_stats st;
    pl_store_stats_get(s, &st);
    CHECK(st.records_durable == (uint64_t)o.count);
    pl_store_close(s);
    s = open_store(dir);
    CHECK_EQ_U(s->inputs[0].streams[0]->runs[0].mark_durable, (uint64_t)o.count);
    pl_store_close(s);
}
static void uring_driver_claims_after_syncs(void) { driver_claims_after_syncs(pl_io_uring_open); }

TEST_MAIN(TEST_CASE(store_commit_claims_after_its_syncs), TEST_CASE(posix_driver_claims_after_syncs),
          TEST_CASE(posix_driver_slow_sync),
          TEST_CASE(uring_driver_claims_after_syncs))
