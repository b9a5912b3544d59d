/* bench_store.c: what durability costs the receiver's store on this machine's disk.
 *
 * Records are appended as fast as one thread can; a second thread runs each batch's
 * fdatasync calls (as a driver's sync thread or io_uring would), so records that arrive
 * while one commit runs all go into the next: group commit.  Printed: records/s, MB/s,
 * fdatasyncs per 10,000 records; then the same records with one fdatasync each (the cost
 * group commit saves), and the time to reopen the file with and without its index.
 * Figures only, no assertions.  Runs in $TMPDIR (or /tmp). */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "store_internal.h"

static char err[512];

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- The sync thread: one batch at a time ---- */
typedef struct syncer {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int fds[PL_STORE_BATCH_FDS_MOST];
    size_t dirs;  /* the last dirs of fds are directories: fsync */
    int count, busy, done, result, quit;
} syncer;

static void *sync_main(void *arg) {
    syncer *y = arg;
    pthread_mutex_lock(&y->mu);
    for (;;) {
        while (!y->busy && !y->quit) pthread_cond_wait(&y->cv, &y->mu);
        if (y->quit) break;
        int count = y->count, files = count - (int)y->dirs, rc = 0;
        pthread_mutex_unlock(&y->mu);
        for (int i = 0; i < count && rc == 0; i++)
            if ((i < files ? fdatasync(y->fds[i]) : fsync(y->fds[i])) != 0) rc = -errno;
        pthread_mutex_lock(&y->mu);
        y->result = rc, y->busy = 0, y->done = 1;
    }
    pthread_mutex_unlock(&y->mu);
    return NULL;
}

static void stored(void *ctx, int stream, int64_t record) { (void)stream, *(int64_t *)ctx = record; }
static void memo_written(void *ctx, uint64_t token) { (void)ctx, (void)token; }

static pl_store *open_one(const char *dir) {
    pl_store_input in = {"in", 1, dir};
    pl_store_config c = {&in, 1, NULL, 0, 0, NULL, NULL};
    pl_store *s;
    if (pl_store_open(&s, &c, err, sizeof err) != 0) { fprintf(stderr, "bench_store: %s\n", err); exit(1); }
    uint8_t key[32] = {1};
    pl_store_peer(s, 0, key);
    int answer;
    int64_t mark;
    if (st_open_stream(s, 0, 0, 7, "bench", "in", 1, &answer, &mark, err, sizeof err) != 0) exit(1);
    return s;
}

/* Appends `count` records of `len` bytes with group commit; returns fdatasyncs. */
static void group_commit(const char *dir, size_t len, uint64_t count) {
    pl_store *s = open_one(dir);
    uint8_t *rec = calloc(1, len);
    int64_t mark = 0;
    st_notify n = {stored, memo_written, &mark, NULL};
    syncer y = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    pthread_t t;
    pthread_create(&t, NULL, sync_main, &y);
    int open_batch = 0;
    double t0 = now_s();
    for (uint64_t k = 0; (int64_t)count > mark;) {
        if (k < count) {
            rec[0] = (uint8_t)k;
            if (st_record(s, 0, 7, (int64_t)k++, rec, len, NULL, 0, &n, err, sizeof err) != 0) break;
        }
        pthread_mutex_lock(&y.mu);
        if (y.done) {
            y.done = 0, open_batch = 0;
            if (st_commit_end(s, y.result, NULL, &n, err, sizeof err) != 0) { pthread_mutex_unlock(&y.mu); break; }
        }
        if (!open_batch && pl_store_pending(s)) {
            y.count = pl_store_commit_begin(s, y.fds, PL_STORE_BATCH_FDS_MOST, &y.dirs);
            if (y.count > 0) y.busy = 1, open_batch = 1, pthread_cond_signal(&y.cv);
        }
        int wait = k == count && open_batch;
        pthread_mutex_unlock(&y.mu);
        if (wait) usleep(50);  /* all appended: wait for the last batch */
    }
    double dt = now_s() - t0;
    pthread_mutex_lock(&y.mu);
    y.quit = 1;
    pthread_cond_signal(&y.cv);
    pthread_mutex_unlock(&y.mu);
    pthread_join(t, NULL);
    pl_store_stats st;
    pl_store_stats_get(s, &st);
    printf("store group commit, %5zu B records: %llu records in %.2f s = %.0f records/s, %.0f MB/s; "
           "%llu fdatasyncs = %.1f per 10,000 records (%.0f records per commit)\n",
           len, (unsigned long long)st.records_durable, dt, (double)st.records_durable / dt,
           (double)st.bytes_durable / dt / 1e6, (unsigned long long)st.fdatasyncs,
           (double)st.fdatasyncs * 10000.0 / (double)st.records_durable,
           (double)st.records_durable / (double)(st.commits ? st.commits : 1));
    pl_store_close(s);
    free(rec);
}

static void one_sync_per_record(const char *dir, size_t len, uint64_t count) {
    pl_store *s = open_one(dir);
    uint8_t *rec = calloc(1, len);
    int64_t mark = 0;
    st_notify n = {stored, memo_written, &mark, NULL};
    int64_t base = (int64_t)s->inputs[0].streams[0]->runs[0].mark_durable;
    double t0 = now_s();
    for (uint64_t k = 0; k < count; k++) {
        if (st_record(s, 0, 7, base + (int64_t)k, rec, len, NULL, 0, &n, err, sizeof err) != 0) break;
        if (st_commit(s, &n, err, sizeof err) != 0) break;
    }
    double dt = now_s() - t0;
    printf("store one fdatasync per record, %5zu B: %llu records in %.2f s = %.0f records/s\n", len,
           (unsigned long long)count, dt, (double)count / dt);
    pl_store_close(s);
    free(rec);
}

static void reopen_times(const char *dir) {
    char idx[600], name[ST_FILE_NAME_MOST];
    uint8_t key[32] = {1};
    st_file_name(name, key, "bench", ".pli");
    snprintf(idx, sizeof idx, "%s/%s", dir, name);
    for (int with_index = 1; with_index >= 0; with_index--) {
        if (!with_index) unlink(idx);
        double t0 = now_s();
        pl_store *s = open_one(dir);
        double dt = now_s() - t0;
        st_stream *st = s->inputs[0].streams[0];
        printf("store reopen of a %.0f MB file: %.1f ms %s\n", (double)st->end_durable / 1e6, dt * 1e3,
               with_index ? "with its index" : "reading it whole (no index)");
        if (!with_index) st->end_durable = st->index_end;  /* leave no index behind */
        pl_store_close(s);
    }
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

int main(void) {
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[300];
    snprintf(dir, sizeof dir, "%s/pl_bench_store_XXXXXX", base);
    if (mkdtemp(dir) == NULL) { perror("mkdtemp"); return 1; }
    struct statfs fs;
    statfs(dir, &fs);
    printf("store: in %s (file system magic 0x%lx%s)\n", dir, (unsigned long)fs.f_type,
           fs.f_type == 0x01021994 ? ", tmpfs: fdatasync costs nothing" : "");
    char d1[320], d2[320];
    snprintf(d1, sizeof d1, "%s/a", dir);
    snprintf(d2, sizeof d2, "%s/b", dir);
    group_commit(d1, 1024, 100000);
    group_commit(d2, 16384, 10000);
    one_sync_per_record(d1, 1024, 200);
    reopen_times(d1);
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}
