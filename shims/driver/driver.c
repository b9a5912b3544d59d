/* driver.c: the event loop of pl_driver.h. */
#define _GNU_SOURCE
#include "pl_driver.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct loop {
    const pl_driver_config *c;
    pl_driver_stats *stats;
    char *err;
    size_t err_len;
    int want_write, syncing, watched;
    int readable;   /* the last wait saw datagrams (or a receive left some): receive first */
    int commit_waits;  /* records wait for the commit gap (counted once a batch) */
    uint64_t sync_started_ns;
    uint64_t commit_next_ns;  /* the next batch starts no sooner (the commit gap) */
    uint64_t commit_gap_ns, timer_slack_ns;
} loop;

static uint64_t clock_of(const pl_driver_config *c) {
    return c->host.clock_ns ? c->host.clock_ns(c->host.ctx) : pl_now_ns();
}
static uint64_t loop_now(const loop *l) { return clock_of(l->c); }

static int core_error(loop *l, const char *what, int r) {
    snprintf(l->err, l->err_len, "%s: %s", what, pure_link_strerror(r));
    return r < 0 ? r : -EIO;
}

/* Hands every queued event to the store, then to the host. */
static int drain_events(loop *l, uint64_t now) {
    const pl_driver_config *c = l->c;
    pure_link_event ev;
    while (pure_link_event_next(c->pl, &ev)) {
        if (ev.kind == PURE_LINK_EVENT_FATAL) return core_error(l, "endpoint failed", ev.code);
        int refused = 0;
        char source[PURE_LINK_NAME_MOST + 1], input[PURE_LINK_NAME_MOST + 1];
        if (c->store) {
            if (ev.kind == PURE_LINK_EVENT_STREAM_OPEN) {
                /* The store's answer is a core call: the names would not outlive it. */
                snprintf(source, sizeof source, "%s", ev.source ? ev.source : "");
                snprintf(input, sizeof input, "%s", ev.input ? ev.input : "");
                ev.source = source, ev.input = input;
            }
            int r = c->store->event(c->store->ctx, c->pl, &ev, now, &refused, l->err, l->err_len);
            if (r != 0) return r < 0 ? r : -EIO;
        }
        if (c->host.event) {
            int r = c->host.event(c->host.ctx, c->pl, &ev, refused, now);
            if (r != 0) return r;
        }
    }
    return 0;
}

/* The endpoint's kinds of path hints for the backend's: too big, or unreachable (port or
 * host alike: the endpoint counts them and never stops a run on an unauthenticated ICMP). */
static void core_hint(pure_link *pl, const pl_io_hint *h, uint64_t now) {
    uint32_t kind = h->kind == PL_IO_HINT_TOO_BIG ? PURE_LINK_HINT_TOO_BIG : PURE_LINK_HINT_UNREACHABLE;
    pure_link_path_hint(pl, &h->to, kind, kind == PURE_LINK_HINT_TOO_BIG ? h->datagram_bytes : 0, now);
}

/* What the kernel told about paths since the last look: to the endpoint, then the host. */
static void take_hints(loop *l, uint64_t now) {
    const pl_driver_config *c = l->c;
    const pl_io_hint *h;
    int n = c->io->ops->hints ? c->io->ops->hints(c->io, &h) : 0;   /* a host's own backend may have none */
    for (int i = 0; i < n; i++) {
        core_hint(c->pl, &h[i], now);
        if (c->host.hint) c->host.hint(c->host.ctx, &h[i], now);
    }
}

static int receive_all(loop *l, uint64_t now, int *more) {
    const pl_driver_config *c = l->c;
    *more = 0;
    for (unsigned round = 0; round < PL_DRIVER_RECV_ROUNDS_MOST; round++) {
        const pl_dgram *d;
        int n = c->io->ops->recv(c->io, &d);
        if (n < 0) {
            snprintf(l->err, l->err_len, "receive: %s", strerror(-n));
            return n;
        }
        if (n == 0) return 0;
        for (int i = 0; i < n; i++) {
            if (c->host.datagram) c->host.datagram(c->host.ctx, 0, &d[i].from, d[i].len, now);
            int r = pure_link_receive(c->pl, &d[i].from, d[i].data, d[i].len, now);
            if (r != 0) return core_error(l, "receive", r);
            uint32_t why = c->host.dropped ? pure_link_last_drop(c->pl) : 0;
            if (why) c->host.dropped(c->host.ctx, &d[i].from, d[i].data, d[i].len, why, now);
        }
        int r = drain_events(l, now);
        if (r != 0) return r;
    }
    *more = 1; /* the socket may hold more: come back without waiting */
    return 0;
}

/* Group commit: the sync thread runs the fdatasync calls while the loop goes on. */
static int commit_step(loop *l, uint64_t now) {
    const pl_driver_config *c = l->c;
    if (c->store == NULL) return 0;
    if (l->syncing) {
        int result;
        if (!c->io->ops->sync_result(c->io, &result)) return 0;
        l->syncing = 0;
        uint64_t waited = now - l->sync_started_ns;
        if (waited > l->stats->commit_wait_ns_most) l->stats->commit_wait_ns_most = waited;
        l->stats->commit_wait_ns_total += waited;
        int r = c->store->commit_end(c->store->ctx, c->pl, result, now, l->err, l->err_len);
        if (r != 0) return r < 0 ? r : -EIO;
        l->stats->commits++;
        r = drain_events(l, now);
        if (r != 0) return r;
    }
    if (!c->store->pending(c->store->ctx)) return 0;
    if (now < l->commit_next_ns) {
        /* Paced: wake_at comes back for them at commit_next_ns. */
        if (!l->commit_waits) l->stats->commits_paced++;
        l->commit_waits = 1;
        return 0;
    }
    l->commit_waits = 0;
    l->commit_next_ns = now + l->commit_gap_ns;
    int fds[PL_IO_SYNC_FDS_MOST];
    size_t dirs = 0;
    int n = c->store->commit_begin(c->store->ctx, fds, PL_IO_SYNC_FDS_MOST, &dirs);
    if (n < 0) {
        snprintf(l->err, l->err_len, "commit: %s", strerror(-n));
        return n;
    }
    if (n == 0) return c->store->commit_end(c->store->ctx, c->pl, 0, now, l->err, l->err_len);
    int r = c->io->ops->sync_start(c->io, fds, (size_t)n, dirs);
    if (r != 0) {
        snprintf(l->err, l->err_len, "fdatasync: %s", strerror(-r));
        return r;
    }
    l->syncing = 1;
    l->sync_started_ns = now;
    return 0;
}

/* Pulls every datagram due into the backend's batch and sends it. */
static int send_all(loop *l, uint64_t now) {
    const pl_driver_config *c = l->c;
    pl_io *io = c->io;
    if (l->want_write) return 0;
    for (;;) {
        pure_link_addr *to;
        uint8_t *buf = io->ops->slot(io, &to);
        int len = 0;
        if (buf != NULL) {
            len = pure_link_pull(c->pl, buf, PURE_LINK_DATAGRAM_MOST, to, now);
            if (len < 0) return core_error(l, "pull", len);
            io->ops->push(io, (size_t)len);
            if (len > 0 && c->host.datagram) c->host.datagram(c->host.ctx, 1, to, (size_t)len, now);
            if (len > 0) continue;
        }
        int r = io->ops->flush(io);
        if (r == -EAGAIN) {
            l->want_write = 1;
            return 0;
        }
        /* Other send errors drop datagrams; the protocol resends what matters. */
        if (buf != NULL) return 0;
    }
}

/* When the loop wakes by itself: the earliest of the endpoint's deadline, the host's
 * wake-up and a paced commit's start, but no sooner than the timer slack after now (a
 * deadline already due, or the host's 0, still comes back at once). */
static uint64_t wake_at(const loop *l, uint64_t now) {
    const pl_driver_config *c = l->c;
    uint64_t at = pure_link_deadline(c->pl);
    if (c->host.wake_ns) {
        uint64_t h = c->host.wake_ns(c->host.ctx);
        if (h < at) at = h;
    }
    if (l->commit_waits && !l->syncing && l->commit_next_ns < at) at = l->commit_next_ns;
    if (at > now && at - now < l->timer_slack_ns) at = now + l->timer_slack_ns;
    return at;
}

static int turn(loop *l, uint64_t now, int *more) {
    const pl_driver_config *c = l->c;
    l->stats->turns++;
    /* A receive the last wait said would find nothing is a system call per wake-up for
     * nothing (most of a paced sender's wake-ups); what comes meanwhile wakes the next wait. */
    int r = l->readable ? receive_all(l, now, more) : 0;
    take_hints(l, now);
    if (r == 0) r = commit_step(l, now);
    if (r == 0 && c->host.turn) r = c->host.turn(c->host.ctx, c->pl, l->watched, now);
    if (r == 0) r = drain_events(l, now);
    if (r == 0 && pure_link_deadline(c->pl) <= now) {
        int t = pure_link_tick(c->pl, now);
        r = t != 0 ? core_error(l, "tick", t) : drain_events(l, now);
    }
    if (r == 0) r = commit_step(l, now);
    if (r == 0) r = send_all(l, now);
    if (r == 0) take_hints(l, now);   /* a send refused as too big: the endpoint's next pull knows */
    return r;
}

/* At a stop: the commit in flight ends before the caller closes the store. */
static int finish_sync(loop *l) {
    while (l->syncing) {
        int bits = l->c->io->ops->wait(l->c->io, UINT64_MAX, 0);
        if (bits < 0) return bits;
        int r = commit_step(l, loop_now(l));
        if (r != 0) return r;
    }
    return 0;
}

/* At a stop: what the endpoint already counted as sent leaves, if the socket takes it
 * within SHUTDOWN_FLUSH_NS. */
#define SHUTDOWN_FLUSH_NS 100000000ull
static void flush_out(const pl_driver_config *c) {
    pl_io *io = c->io;
    uint64_t until = clock_of(c) + SHUTDOWN_FLUSH_NS;
    while (io->ops->flush(io) == -EAGAIN && clock_of(c) < until)
        if (io->ops->wait(io, until, 1) < 0) break;
}

int pl_driver_run(const pl_driver_config *c, pl_driver_stats *stats, char *err, size_t err_len) {
    pl_driver_stats local;
    loop l = {.c = c, .stats = stats ? stats : &local, .err = err, .err_len = err_len, .readable = 1,
              .commit_gap_ns = c->commit_gap_ns ? c->commit_gap_ns : PL_DRIVER_COMMIT_GAP_NS,
              .timer_slack_ns = c->timer_slack_ns ? c->timer_slack_ns : PL_DRIVER_TIMER_SLACK_NS};
    memset(l.stats, 0, sizeof *l.stats);
    err[0] = 0;
    for (;;) {
        if (c->stop && *c->stop) break;
        int more = 0;
        uint64_t now = loop_now(&l);
        int r = turn(&l, now, &more);
        if (r != 0) {
            if (r > 0) finish_sync(&l);
            return r;
        }
        int bits = c->io->ops->wait(c->io, more ? 0 : wake_at(&l, now), l.want_write);
        if (bits < 0) {
            snprintf(err, err_len, "wait: %s", strerror(-bits));
            return bits;
        }
        if (bits & PL_IO_WRITABLE) l.want_write = 0;
        l.watched = (bits & PL_IO_WATCHED) != 0;
        l.readable = more || (bits & (PL_IO_READABLE | PL_IO_INTERRUPTED)) != 0;
    }
    int r = finish_sync(&l);
    if (r != 0 && err[0] == 0) snprintf(err, err_len, "commit: %s", strerror(-r));
    flush_out(c);
    return r;
}

/* One batch, synced on this thread. */
static int commit_here(const pl_driver_config *c, uint64_t now, char *err, size_t err_len) {
    int fds[PL_IO_SYNC_FDS_MOST];
    size_t dirs = 0;
    int n = c->store->commit_begin(c->store->ctx, fds, PL_IO_SYNC_FDS_MOST, &dirs);
    int result = 0;
    for (int i = 0; i < n; i++)
        if ((i < n - (int)dirs ? fdatasync(fds[i]) : fsync(fds[i])) != 0 && result == 0) result = -errno;
    return c->store->commit_end(c->store->ctx, c->pl, n < 0 ? n : result, now, err, err_len);
}

int pl_driver_commit_all(const pl_driver_config *c, char *err, size_t err_len) {
    if (c->store == NULL || !c->store->pending(c->store->ctx)) return 0;
    uint64_t now = clock_of(c);
    for (unsigned round = 0; round < PL_DRIVER_COMMIT_ALL_ROUNDS_MOST && c->store->pending(c->store->ctx); round++) {
        int r = commit_here(c, now, err, err_len);
        if (r != 0) return r;
    }
    /* Tell the senders what is now stored, once; they would learn it on their next packet. */
    pure_link_addr *to;
    uint8_t *buf;
    int len;
    while ((buf = c->io->ops->slot(c->io, &to)) != NULL &&
           (len = pure_link_pull(c->pl, buf, PURE_LINK_DATAGRAM_MOST, to, now)) > 0)
        c->io->ops->push(c->io, (size_t)len);
    flush_out(c);
    return 0;
}
