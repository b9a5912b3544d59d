/* test_store_crash.c: a crash model of the disk under the record store and the memo, in
 * the manner of SQLite's crash tests and ALICE: what survives a power loss is only what a
 * sync covered.
 *
 * The build links this program with --wrap for fdatasync and fsync (Makefile); the files
 * are real, and every call does what it would do.  Beside them the test keeps the disk's
 * durable state: a file's bytes as they were when an fdatasync or fsync of it last returned
 * 0 (by inode), and a directory's entries as they were when an fsync of it last returned.
 * A power loss at sync point K keeps only that: every write no sync covered and every
 * directory entry no directory fsync covered is gone (a file never synced is empty).
 *
 * One workload (a stream's records appended and committed round by round, a memo region
 * written in each round) runs in a fresh directory for every K, with the model frozen just
 * before the K-th sync returns (what the process did from then on never reached the disk,
 * and what it claimed before counts), and then:
 *   - power loss at K: the store reopens over the durable state alone;
 *   - kill -9 at K, restart over the files as the page cache holds them, then power loss
 *     right after the restart: the store reopens over what the restart made durable.
 * Each time: every record the store claimed STORED before the crash (and each the restart
 * claimed) is there, none is there twice, and the memo holds no write older than the one
 * claimed written for its region.  PL_CRASH_ROUNDS sets the workload's length (make test
 * runs a short sweep, .ci/run a longer one). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "pl_store.h"
#include "store_internal.h"
#include "tmp_dirs.h"

#define FILES_MOST 64
#define DIRS_MOST 4
#define ENTRIES_MOST 64
#define MEMO_BYTES 1024u
#define MEMO_REGION 64u
#define MEMO_REGIONS (MEMO_BYTES / MEMO_REGION)
#define RUN 9u

/* ---- The model: durable bytes by inode, durable entries by directory ---- */
typedef struct m_file { ino_t ino; uint8_t *data; size_t len; } m_file;
typedef struct m_entry { char name[NAME_MAX + 1]; ino_t ino; int dir; } m_entry;
typedef struct m_dir { ino_t ino; char rel[64]; m_entry e[ENTRIES_MOST]; int n; } m_dir;

static struct {
    int on;                   /* 0: the wrappers only pass calls through */
    int frozen;               /* the crash happened: nothing more reaches the disk */
    int crash_at;             /* freeze when this many syncs have returned (-1: never) */
    int syncs;
    m_file files[FILES_MOST];
    int files_n;
    m_dir dirs[DIRS_MOST];
    int dirs_n;
} md;

/* What the store claimed before the crash. */
static int64_t claimed;
static uint64_t memo_claimed[MEMO_REGIONS];     /* the newest value claimed written, by region */
static uint64_t token_value[256];               /* token -> the value it wrote (region = value % regions) */

static m_file *file_by_ino(ino_t ino) {
    for (int i = 0; i < md.files_n; i++)
        if (md.files[i].ino == ino) return &md.files[i];
    if (md.files_n == FILES_MOST) abort();
    m_file *f = &md.files[md.files_n++];
    memset(f, 0, sizeof *f);
    f->ino = ino;
    return f;
}

static m_dir *dir_by_ino(ino_t ino) {
    for (int i = 0; i < md.dirs_n; i++)
        if (md.dirs[i].ino == ino) return &md.dirs[i];
    return NULL;
}

/* The directory's entries now, as its durable ones. */
static void dir_take(m_dir *d, const char *path) {
    DIR *dp = opendir(path);
    if (dp == NULL) abort();
    d->n = 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (d->n == ENTRIES_MOST) abort();
        struct stat sb;
        if (fstatat(dirfd(dp), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) continue;
        m_entry *m = &d->e[d->n++];
        snprintf(m->name, sizeof m->name, "%s", e->d_name);
        m->ino = sb.st_ino;
        m->dir = S_ISDIR(sb.st_mode);
    }
    closedir(dp);
}

/* A file's bytes now, as its durable ones. */
static void file_take(m_file *f, int fd) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int rfd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (rfd < 0 || fstat(rfd, &sb) != 0) abort();
    free(f->data);
    f->len = (size_t)sb.st_size;
    f->data = malloc(f->len ? f->len : 1);
    if (f->data == NULL || st_read_all(rfd, f->data, f->len, 0) != 0) abort();
    close(rfd);
}

/* A sync of fd returned 0: what it covers is durable.  The crash comes just before the
 * crash_at-th sync returns: that one and all after it never reach the disk, and every
 * claim made before counts. */
static void synced(int fd) {
    if (!md.on || md.frozen) return;
    if (++md.syncs == md.crash_at) {
        md.frozen = 1;
        return;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) return;
    if (S_ISDIR(sb.st_mode)) {
        m_dir *d = dir_by_ino(sb.st_ino);
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        if (d) dir_take(d, path);
    } else if (S_ISREG(sb.st_mode)) {
        file_take(file_by_ino(sb.st_ino), fd);
    }
}

int __real_fdatasync(int fd);
int __real_fsync(int fd);
int __wrap_fdatasync(int fd);
int __wrap_fsync(int fd);
int __wrap_pure_link_stored(pure_link *pl, int stream, int64_t record, uint64_t now_ns);
int __wrap_pure_link_memo_written(pure_link *pl, uint64_t token, uint64_t now_ns);
int __wrap_fdatasync(int fd) {
    int r = __real_fdatasync(fd);
    if (r == 0) synced(fd);
    return r;
}
int __wrap_fsync(int fd) {
    int r = __real_fsync(fd);
    if (r == 0) synced(fd);
    return r;
}

/* Starts the model over `root` (its "in" directory and the memo beside it), which holds
 * durably what it holds now. */
static void model_start(const char *root, int crash_at) {
    for (int i = 0; i < md.files_n; i++) free(md.files[i].data);
    memset(&md, 0, sizeof md);
    md.crash_at = crash_at;
    const char *rel[2] = {"", "in"};
    for (int i = 0; i < 2; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", root, rel[i]);
        struct stat sb;
        if (stat(path, &sb) != 0) abort();
        m_dir *d = &md.dirs[md.dirs_n++];
        d->ino = sb.st_ino;
        snprintf(d->rel, sizeof d->rel, "%s", rel[i]);
        dir_take(d, path);
    }
    md.on = 1;
}

/* The power loss: writes into `dest` the durable state of the tree the model watches. */
static void model_materialize(const char *dest) {
    CHECK(mkdir(dest, 0700) == 0);
    for (int i = 0; i < md.dirs_n; i++) {
        const m_dir *d = &md.dirs[i];
        char dpath[PATH_MAX];
        snprintf(dpath, sizeof dpath, "%s/%s", dest, d->rel);
        if (d->rel[0]) mkdir(dpath, 0700);
        for (int k = 0; k < d->n; k++) {
            if (d->e[k].dir) continue;
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%.*s/%s", PATH_MAX / 2, dpath, d->e[k].name);
            int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            CHECK(fd >= 0);
            const m_file *f = NULL;
            for (int j = 0; j < md.files_n; j++)
                if (md.files[j].ino == d->e[k].ino) f = &md.files[j];
            if (f && f->len) CHECK(st_write_all(fd, f->data, f->len, 0) == 0);
            close(fd);
        }
    }
}

/* ---- The store and its workload ---- */
static char err[512];
static const uint8_t key[32] = {0x42};

static pl_store *open_at(const char *root, int64_t *mark) {
    char in_dir[PATH_MAX], memo[PATH_MAX];
    snprintf(in_dir, sizeof in_dir, "%s/in", root);
    snprintf(memo, sizeof memo, "%s/memo", root);
    pl_store_input in = {"in", 7, in_dir};
    pl_store_config c = {&in, 1, memo, MEMO_BYTES, 0, NULL, NULL};
    pl_store *s = NULL;
    int rc = pl_store_open(&s, &c, err, sizeof err);
    if (rc != 0) fprintf(stderr, "  open %s: %s\n", root, err);
    CHECK(rc == 0);
    CHECK(pl_store_peer(s, 0, key) == 0);
    int answer;
    CHECK(st_open_stream(s, 0, 0, RUN, "src", "in", 7, &answer, mark, err, sizeof err) == 0 && answer == 0);
    return s;
}

/* The store's claims, as the endpoint would hear them (there is no endpoint here: the
 * store is driven through its events, as the driver does). */
int __wrap_pure_link_stored(pure_link *pl, int stream, int64_t record, uint64_t now_ns) {
    (void)pl, (void)stream, (void)now_ns;
    if (!md.frozen && record > claimed) claimed = record;
    return 0;
}

int __wrap_pure_link_memo_written(pure_link *pl, uint64_t token, uint64_t now_ns) {
    (void)pl, (void)now_ns;
    if (md.frozen || token >= 256) return 0;
    uint64_t v = token_value[token];
    if (v > memo_claimed[v % MEMO_REGIONS]) memo_claimed[v % MEMO_REGIONS] = v;
    return 0;
}

static void record_bytes(uint64_t k, uint8_t *b, size_t *len) {
    *len = 1 + (size_t)(k * 37 % 200);
    for (size_t i = 0; i < *len; i++) b[i] = (uint8_t)(k + i);
}

/* Round after round: a few records, a memo region, a commit; until the crash. */
static pl_store *workload(const char *root, int rounds) {
    claimed = 0;
    memset(memo_claimed, 0, sizeof memo_claimed);
    int64_t mark;
    pl_store *s = open_at(root, &mark);
    CHECK_EQ_U(mark, 0);
    uint64_t k = 0, token = 1;
    uint8_t rec[256], region[MEMO_REGION];
    for (int r = 0; r < rounds && !md.frozen; r++) {
        pure_link_event ev = {.kind = PURE_LINK_EVENT_RECORD, .stream = 0, .run = RUN};
        for (int i = 0; i < 1 + r % 3; i++, k++) {
            size_t len;
            record_bytes(k, rec, &len);
            ev.record = (int64_t)k, ev.data = rec, ev.len = len;
            CHECK(pl_store_event(s, NULL, &ev, 0, err, sizeof err) == 0);
        }
        uint64_t value = (uint64_t)r + 1;  /* region value % MEMO_REGIONS, newer = larger */
        for (size_t i = 0; i < MEMO_REGION; i += 8) memcpy(region + i, &value, 8);
        token_value[token] = value;
        pure_link_event mw = {.kind = PURE_LINK_EVENT_MEMO_WRITE, .offset = (value % MEMO_REGIONS) * MEMO_REGION,
                              .token = token++, .data = region, .len = MEMO_REGION};
        CHECK(pl_store_event(s, NULL, &mw, 0, err, sizeof err) == 0);
        CHECK(pl_store_commit(s, NULL, 0, err, sizeof err) == 0);
    }
    return s;
}

/* The records of the stream's file under root/in: each from 0 up once, with its bytes. */
static int64_t records_on_disk(const char *root) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/in", root);
    DIR *dp = opendir(dir);
    CHECK(dp != NULL);
    int64_t next = 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        if (strstr(e->d_name, ".plr") == NULL || strstr(e->d_name, ".tmp") != NULL) continue;
        int fd = openat(dirfd(dp), e->d_name, O_RDONLY | O_CLOEXEC);
        struct stat sb;
        CHECK(fd >= 0 && fstat(fd, &sb) == 0);
        size_t len = (size_t)sb.st_size;
        uint8_t *b = malloc(len + 1);
        CHECK(b != NULL && st_read_all(fd, b, len, 0) == 0);
        close(fd);
        for (size_t at = ST_HEADER_BYTES; at < len;) {
            st_frame f;
            size_t n = st_frame_check(b + at, len - at, &f);
            if (n == 0) break;
            uint8_t want[256];
            size_t want_len;
            record_bytes(f.record, want, &want_len);
            if (f.run == RUN && f.record != (uint64_t)next)
                fprintf(stderr, "  record %llu where %lld was due (twice, or a gap)\n", (unsigned long long)f.record,
                        (long long)next);
            CHECK(f.run == RUN && f.record == (uint64_t)next);
            CHECK(f.len == want_len && memcmp(b + at + ST_FRAME_BYTES, want, want_len) == 0);
            next++;
            at += n;
        }
        free(b);
    }
    closedir(dp);
    return next;
}

static void memo_not_older(const char *root) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/memo", root);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    uint8_t m[MEMO_BYTES] = {0};
    CHECK(fd >= 0);
    struct stat sb;
    CHECK(fstat(fd, &sb) == 0);
    if (sb.st_size >= (off_t)MEMO_BYTES) CHECK(st_read_all(fd, m, MEMO_BYTES, 0) == 0);
    close(fd);
    for (unsigned r = 0; r < MEMO_REGIONS; r++) {
        uint64_t v;
        memcpy(&v, m + r * MEMO_REGION, 8);
        if (v < memo_claimed[r])
            fprintf(stderr, "  memo region %u holds %llu, %llu was claimed\n", r, (unsigned long long)v,
                    (unsigned long long)memo_claimed[r]);
        CHECK(v >= memo_claimed[r]);
    }
}

/* After a power loss: the store over `root` finds every claimed record, each once. */
static void check_after_power_loss(const char *root, int64_t want, const char *when, int k) {
    int on = md.on;
    md.on = 0;
    int64_t mark;
    pl_store *s = open_at(root, &mark);
    pl_store_close(s);
    int64_t on_disk = records_on_disk(root);
    if (mark < want)
        fprintf(stderr, "  %s at sync %d: %lld records claimed, %lld found (%lld in the file)\n", when, k,
                (long long)want, (long long)mark, (long long)on_disk);
    CHECK(mark >= want);
    CHECK(on_disk >= mark);
    memo_not_older(root);
    md.on = on;
}

static int crash_rounds(void) {
    const char *e = getenv("PL_CRASH_ROUNDS");
    return e && atoi(e) > 0 ? atoi(e) : 6;
}

/* The workload in a fresh root (base/<tag><k>) under the model, the crash just before its
 * k-th sync returns (-1: none); fills root and lost (where its power loss goes). */
static void crash_run(const char *base, const char *tag, int k, int rounds, char *root, char *lost) {
    char in_dir[PATH_MAX];
    snprintf(root, PATH_MAX / 2, "%s/%s%d", base, tag, k);
    snprintf(lost, PATH_MAX, "%s-lost", root);
    snprintf(in_dir, sizeof in_dir, "%s/in", root);
    CHECK(mkdir(root, 0700) == 0 && mkdir(in_dir, 0700) == 0);
    model_start(root, k);
    /* At the crash the process dies (kill -9): the files keep what the page cache holds,
     * the disk what the model says; closing the descriptors writes nothing. */
    pl_store_close(workload(root, rounds));
}

/* How many syncs the whole workload makes (the sweep's points). */
static int sync_points(const char *base, int rounds) {
    char root[PATH_MAX], lost[PATH_MAX];
    crash_run(base, "count", -1, rounds, root, lost);
    md.on = 0;
    return md.syncs;
}

static void power_loss_at_every_sync_point(void) {
    const char *base = tmp_dir("/dev/shm");
    int rounds = crash_rounds(), points = sync_points(base, rounds);
    CHECK(points >= 2 * rounds);
    int64_t claimed_most = 0;
    for (int k = 1; k <= points + 1; k++) {
        char root[PATH_MAX], lost[PATH_MAX];
        crash_run(base, "p", k, rounds, root, lost);
        model_materialize(lost);
        check_after_power_loss(lost, claimed, "power loss", k);
        if (claimed > claimed_most) claimed_most = claimed;
        md.on = 0;
    }
    fprintf(stderr, "  %d sync points, %d rounds, up to %lld records claimed: none lost, none twice\n", points, rounds,
            (long long)claimed_most);
    CHECK(claimed_most > 0);
}

static void kill_restart_then_power_loss_at_every_sync_point(void) {
    const char *base = tmp_dir("/dev/shm");
    int rounds = crash_rounds(), points = sync_points(base, rounds);
    int64_t recovered_most = 0;
    for (int k = 1; k <= points + 1; k++) {
        char root[PATH_MAX], lost[PATH_MAX];
        crash_run(base, "k", k, rounds, root, lost);
        int64_t before = claimed;
        md.frozen = 0;
        md.crash_at = -1;
        int64_t mark;
        pl_store *s = open_at(root, &mark);  /* the restart: recovery, watched */
        pl_store_close(s);
        CHECK(mark >= before);
        if (mark > recovered_most) recovered_most = mark;
        model_materialize(lost);  /* and the power fails right after it */
        check_after_power_loss(lost, mark, "kill -9, restart, power loss", k);
        md.on = 0;
    }
    fprintf(stderr, "  %d sync points: what each restart claimed (up to %lld records) survived a power loss\n",
            points, (long long)recovered_most);
    CHECK(recovered_most > 0);
}

TEST_MAIN(TEST_CASE(power_loss_at_every_sync_point), TEST_CASE(kill_restart_then_power_loss_at_every_sync_point))
