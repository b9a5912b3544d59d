/* test_driver.c: the driver's loop (shims/driver/driver.c) in virtual time.  A backend of
 * its own advances a virtual clock to each wait's deadline and ends each sync a fixed
 * latency after it started; a store of its own takes records the host appends on a
 * schedule; the endpoint is a real one with nothing to do.  Counted, not timed: how many
 * group commits a stream at a given rate takes (the commit gap), how long a record waits
 * for its batch, and how often the loop wakes for deadlines close by (the timer slack). */
#define _GNU_SOURCE
#include <errno.h>
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "pl_driver.h"
#include "pl_io.h"
#include "pure_link.h"

#define START_NS 1000000000ull
#define RECORDS_MOST 20000u

typedef struct vclock_io {
    pl_io io;                 /* first: the pl_io the driver sees */
    uint64_t now_ns, sync_latency_ns, sync_done_ns;
    int syncing;
    uint64_t syncs, waits;
    uint8_t buf[PURE_LINK_DATAGRAM_MOST];
    pure_link_addr to;
} vclock_io;

typedef struct vstore {
    uint64_t interval_ns, count;      /* record k is appended at START_NS + k * interval_ns */
    uint64_t appended, taken, durable;
    uint64_t wait_ns_most, wait_ns_least;  /* from a record's append to its commit's end */
    uint64_t wake_every_ns;           /* > 0: the host asks to wake this often, no records */
    uint64_t wake_until_ns, host_turns;
    vclock_io *io;
} vstore;

/* ---- the backend: a virtual clock ---- */

static int v_recv(pl_io *io, const pl_dgram **out) { (void)io, (void)out; return 0; }
static uint8_t *v_slot(pl_io *io, pure_link_addr **to) {
    vclock_io *v = (vclock_io *)io;
    *to = &v->to;
    return v->buf;
}
static void v_push(pl_io *io, size_t len) { (void)io, (void)len; }
static int v_flush(pl_io *io) { (void)io; return 0; }
static int v_wait(pl_io *io, uint64_t deadline_ns, int want_write) {
    vclock_io *v = (vclock_io *)io;
    (void)want_write;
    v->waits++;
    uint64_t next = deadline_ns;
    if (v->syncing && v->sync_done_ns < next) next = v->sync_done_ns;
    if (next == UINT64_MAX) return -EDEADLK;   /* nothing would ever wake it */
    if (next > v->now_ns) v->now_ns = next;
    return v->syncing && v->now_ns >= v->sync_done_ns ? PL_IO_SYNCED : 0;
}
static int v_watch(pl_io *io, int fd) { (void)io, (void)fd; return -EPERM; }
static int v_sync_start(pl_io *io, const int *fds, size_t n, size_t dirs) {
    vclock_io *v = (vclock_io *)io;
    (void)fds, (void)n, (void)dirs;
    CHECK(!v->syncing);
    v->syncing = 1;
    v->syncs++;
    v->sync_done_ns = v->now_ns + v->sync_latency_ns;
    return 0;
}
static int v_sync_result(pl_io *io, int *result) {
    vclock_io *v = (vclock_io *)io;
    if (!v->syncing || v->now_ns < v->sync_done_ns) return 0;
    v->syncing = 0;
    *result = 0;
    return 1;
}
static int v_local(pl_io *io, pure_link_addr *out) { (void)io; memset(out, 0, sizeof *out); return 0; }
static void v_close(pl_io *io) { (void)io; }

static const pl_io_ops vclock_ops = {.name = "vclock", .recv = v_recv, .slot = v_slot, .push = v_push,
                                     .flush = v_flush, .wait = v_wait, .watch = v_watch,
                                     .sync_start = v_sync_start, .sync_result = v_sync_result,
                                     .local = v_local, .close = v_close};

/* ---- the store: records appended on a schedule, durable when their commit ends ---- */

static int s_event(void *ctx, pure_link *pl, const pure_link_event *ev, uint64_t now_ns, int *refused, char *err,
                   size_t err_len) {
    (void)ctx, (void)pl, (void)ev, (void)now_ns, (void)refused, (void)err, (void)err_len;
    return 0;
}
static int s_pending(void *ctx) { vstore *s = ctx; return s->appended > s->taken; }
static int s_commit_begin(void *ctx, int *fds, size_t fds_most, size_t *dirs) {
    vstore *s = ctx;
    CHECK(fds_most >= 1);
    s->taken = s->appended;
    fds[0] = 3;  /* never used: the backend syncs nothing */
    *dirs = 0;
    return 1;
}
static int s_commit_end(void *ctx, pure_link *pl, int result, uint64_t now_ns, char *err, size_t err_len) {
    vstore *s = ctx;
    (void)pl, (void)err, (void)err_len;
    CHECK(result == 0);
    for (uint64_t k = s->durable; k < s->taken; k++) {
        uint64_t wait_ns = now_ns - (START_NS + k * s->interval_ns);
        if (wait_ns > s->wait_ns_most) s->wait_ns_most = wait_ns;
        if (wait_ns < s->wait_ns_least) s->wait_ns_least = wait_ns;
    }
    s->durable = s->taken;
    return 0;
}

static uint64_t h_clock(void *ctx) { return ((vstore *)ctx)->io->now_ns; }
static int h_turn(void *ctx, pure_link *pl, int watched, uint64_t now_ns) {
    vstore *s = ctx;
    (void)pl, (void)watched;
    s->host_turns++;
    if (s->wake_every_ns) return now_ns >= s->wake_until_ns ? 1 : 0;
    while (s->appended < s->count && START_NS + s->appended * s->interval_ns <= now_ns) s->appended++;
    return s->durable == s->count ? 1 : 0;
}
static uint64_t h_wake(void *ctx) {
    vstore *s = ctx;
    if (s->wake_every_ns) {
        uint64_t now = s->io->now_ns;
        return now - now % s->wake_every_ns + s->wake_every_ns;
    }
    return s->appended < s->count ? START_NS + s->appended * s->interval_ns : UINT64_MAX;
}

/* Runs the loop over a receiving endpoint with nothing to do until the host stops it. */
static void run(vstore *s, vclock_io *v, uint64_t commit_gap_ns, uint64_t timer_slack_ns, pl_driver_stats *st) {
    CHECK(sodium_init() >= 0);
    pure_link_config cfg = {.senders_most = PURE_LINK_NONE, .peers_most = 1, .runs_most = 4};
    pure_link_config_default(&cfg);
    memset(cfg.static_secret, 1, 32);
    size_t size = pure_link_size(&cfg);
    void *mem = aligned_alloc(PURE_LINK_ALIGN, (size + PURE_LINK_ALIGN - 1) / PURE_LINK_ALIGN * PURE_LINK_ALIGN);
    uint8_t seed[32] = {7};
    pure_link *pl = mem ? pure_link_init(mem, size, &cfg, seed, START_NS) : NULL;
    CHECK(pl != NULL);
    v->io.ops = &vclock_ops;
    v->now_ns = START_NS;
    s->io = v;
    s->wait_ns_least = UINT64_MAX;
    pl_driver_store ds = {.ctx = s, .event = s_event, .pending = s_pending, .commit_begin = s_commit_begin,
                          .commit_end = s_commit_end};
    pl_driver_config dc = {.pl = pl, .io = &v->io, .store = &ds, .commit_gap_ns = commit_gap_ns,
                           .timer_slack_ns = timer_slack_ns,
                           .host = {.ctx = s, .turn = h_turn, .wake_ns = h_wake, .clock_ns = h_clock}};
    char err[256];
    int r = pl_driver_run(&dc, st, err, sizeof err);
    if (r != 1) fprintf(stderr, "  pl_driver_run: %d %s\n", r, err);
    free(mem);
    CHECK(r == 1);
}

/* 1 KiB records at 50 Mbit/s for a second, on a disk whose fdatasync takes 250 us: without
 * the gap the loop commits as often as the disk returns (thousands a second); with it, at
 * most one batch starts per gap, and no record waits much longer than the gap and one sync. */
static void commits_paced_at_full_rate(void) {
    const uint64_t latency_ns = 250000, interval_ns = 1024ull * 8 * 1000000000ull / 50000000ull;
    vstore s = {.interval_ns = interval_ns, .count = 1000000000ull / interval_ns};
    vclock_io v = {.sync_latency_ns = latency_ns};
    pl_driver_stats st;
    run(&s, &v, 0, 0, &st);
    CHECK_EQ_U(s.durable, s.count);
    CHECK_EQ_U(st.commits, v.syncs);
    fprintf(stderr, "  %llu records, %llu commits (%llu waited for the gap), wait %.2f..%.2f ms\n",
            (unsigned long long)s.count, (unsigned long long)v.syncs, (unsigned long long)st.commits_paced,
            (double)s.wait_ns_least / 1e6, (double)s.wait_ns_most / 1e6);
    CHECK(v.syncs <= 1000000000ull / PL_DRIVER_COMMIT_GAP_NS + 2);
    CHECK(v.syncs >= 1000000000ull / PL_DRIVER_COMMIT_GAP_NS - 2);  /* and no fewer: nothing waits longer */
    CHECK(st.commits_paced >= v.syncs - 2);
    /* A batch starts up to a slack after its gap; here records come by timer, so are
     * appended up to a slack late too (from the network they would come at once). */
    CHECK(s.wait_ns_most <= PL_DRIVER_COMMIT_GAP_NS + 2 * PL_DRIVER_TIMER_SLACK_NS + latency_ns);

    /* The same stream with no gap: a commit per record or two. */
    vstore s1 = {.interval_ns = interval_ns, .count = s.count};
    vclock_io v1 = {.sync_latency_ns = latency_ns};
    run(&s1, &v1, 1, 1, &st);
    CHECK_EQ_U(s1.durable, s1.count);
    CHECK(v1.syncs >= s1.count / 2);
    CHECK_EQ_U(st.commits_paced, 0);
}

/* 50 records a second (the paced rows): each record's batch starts when it is appended,
 * so it is durable one sync later, as without the gap. */
static void paced_records_never_wait(void) {
    const uint64_t latency_ns = 250000;
    vstore s = {.interval_ns = 20000000, .count = 100};
    vclock_io v = {.sync_latency_ns = latency_ns};
    pl_driver_stats st;
    run(&s, &v, 0, 0, &st);
    CHECK_EQ_U(s.durable, s.count);
    CHECK_EQ_U(v.syncs, s.count);
    CHECK_EQ_U(st.commits_paced, 0);
    CHECK_EQ_U(s.wait_ns_least, latency_ns);
    CHECK_EQ_U(s.wait_ns_most, latency_ns);
}

/* A host that asks to wake every 100 us for 100 ms: with the slack the loop wakes once per
 * slack (200 times), not 1,000; deadlines farther than the slack are kept to the ns. */
static void timer_slack_bounds_wakeups(void) {
    const uint64_t span_ns = 100000000;
    vstore s = {.wake_every_ns = 100000, .wake_until_ns = START_NS + span_ns};
    vclock_io v = {0};
    pl_driver_stats st;
    run(&s, &v, 0, 0, &st);
    fprintf(stderr, "  %llu turns in %.0f ms, waking every 100 us asked\n", (unsigned long long)st.turns,
            (double)span_ns / 1e6);
    CHECK(st.turns <= span_ns / PL_DRIVER_TIMER_SLACK_NS + 2);
    CHECK(st.turns >= span_ns / PL_DRIVER_TIMER_SLACK_NS - 2);
    CHECK(v.now_ns - START_NS - span_ns < PL_DRIVER_TIMER_SLACK_NS);

    vstore f = {.wake_every_ns = 2000000, .wake_until_ns = START_NS + span_ns};
    vclock_io fv = {0};
    run(&f, &fv, 0, 0, &st);
    CHECK_EQ_U(fv.now_ns, START_NS + span_ns);   /* woken at each 2 ms deadline exactly */
    CHECK(st.turns <= span_ns / 2000000 + 2);

    vstore n = {.wake_every_ns = 100000, .wake_until_ns = START_NS + span_ns};
    vclock_io nv = {0};
    run(&n, &nv, 1, 1, &st);   /* no slack: every deadline */
    CHECK(st.turns >= span_ns / 100000);
}

#define TESTS TEST_CASE(commits_paced_at_full_rate), TEST_CASE(paced_records_never_wait), \
              TEST_CASE(timer_slack_bounds_wakeups)
TEST_MAIN(TESTS)
