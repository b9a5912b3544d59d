/* pl_driver.h: the event loop that drives one pure-link endpoint over an I/O backend
 * (pl_io.h), with the receiver's durable store (pl_store.h) when there is one.
 *
 * Each turn: take every waiting datagram into the endpoint; finish a group commit whose
 * fdatasync returned; let the host queue records; run the core's timers; start the next
 * group commit on the backend's sync thread (when the commit gap since the last start has
 * passed); pull and send every datagram due; then wait for a datagram, the socket's room,
 * the sync, the watched descriptor, a signal, or the earliest of the core's deadline, the
 * host's next wake-up and the next commit's start, but for no less than the timer slack.  Events go first to the
 * store (which answers STREAM_OPEN, appends RECORDs, writes the memo), then to the host.
 *
 * Ownership: the caller owns the endpoint, the backend, the store and everything the host
 * callbacks touch; the driver keeps only the pointers of its config, for as long as
 * pl_driver_run runs.  Threads: one, except the backend's sync thread. */
#ifndef PL_DRIVER_H
#define PL_DRIVER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "pl_io.h"
#include "pure_link.h"

#define PL_DRIVER_RECV_ROUNDS_MOST 8u /* receive batches per turn before sending again */
#define PL_DRIVER_COMMIT_ALL_ROUNDS_MOST 3u /* batches of pl_driver_commit_all: a new file's
                                               bytes, then its name, then a checkpoint's */
/* Group commit is paced: a batch starts no sooner than this after the one before it started.
 * A sync in flight already collects the next batch, but a disk whose fdatasync returns in a
 * quarter of a millisecond would otherwise take one per record or two of a 50 Mbit/s stream
 * (4,000 a second, each a journal commit and a device flush: on a virtual machine about
 * 200 us of CPU apiece); paced, at most 100 a second.  A record's STORED waits at most this
 * long for its batch to start, and not at all when no batch started within it (records
 * 20 ms apart, as the paced rows send them, never wait).  Its hand-over to the host does
 * not wait for the commit at all. */
#define PL_DRIVER_COMMIT_GAP_NS 10000000ull
/* A timed wake-up comes no sooner than this after the turn before it (what the network
 * or the watched descriptor brings still wakes the loop at once).  A paced sender's next
 * datagram is due a few hundred microseconds on at 50 Mbit/s: it then wakes once for two
 * or three, which its pacer's credit lets go together (a burst of up to 1 ms of the rate,
 * core/pacer.h), instead of once for each.  Deadlines this close come late by less than
 * this, far less than any timer of the protocol cares for (the least: ACK delay, PTO). */
#define PL_DRIVER_TIMER_SLACK_NS 500000ull

typedef struct pl_driver_host {
    void *ctx;
    /* Each event, after the store (if any) handled it.  For STREAM_OPEN, `refused` is 1
     * when the store refused the stream (its names stay valid: the driver copied them).
     * Without a store the host answers events itself.  Returns 0 to go on; any other
     * value stops the loop and pl_driver_run returns it. */
    int (*event)(void *ctx, pure_link *pl, const pure_link_event *ev, int refused, uint64_t now_ns);
    /* Once per turn, before datagrams are pulled: the place to queue records.  `watched`
     * is 1 when the backend's watched descriptor is readable.  Returns 0 to go on, or a
     * value that stops the loop (as above).  May be NULL. */
    int (*turn)(void *ctx, pure_link *pl, int watched, uint64_t now_ns);
    /* Each datagram received (sent = 0) or handed to the backend (sent = 1), for traces.
     * May be NULL. */
    void (*datagram)(void *ctx, int sent, const pure_link_addr *peer, size_t len, uint64_t now_ns);
    /* The host's next wake-up (CLOCK_MONOTONIC ns; UINT64_MAX: none), read every turn:
     * progress lines, its own deadline; 0 when it has records to queue and room for them
     * (the loop then only looks at the network and comes back).  May be NULL. */
    uint64_t (*wake_ns)(void *ctx);
    /* Each path hint the backend read from the kernel (pl_io.h: ICMP port or host
     * unreachable, packet too big), after the endpoint was given it: for the host's own
     * messages.  May be NULL. */
    void (*hint)(void *ctx, const pl_io_hint *hint, uint64_t now_ns);
    /* Each datagram the endpoint dropped for a key it does not know or because it did not
     * open (`why`: pure_link_last_drop), with its bytes (valid for the call).  May be NULL. */
    void (*dropped)(void *ctx, const pure_link_addr *from, const uint8_t *data, size_t len, uint32_t why,
                    uint64_t now_ns);
    /* The time every turn takes and every wait's deadline is in (ns).  NULL: pl_now_ns
     * (CLOCK_MONOTONIC), as every backend of pl_io.h waits by; a test's own backend may
     * run the loop in virtual time with it. */
    uint64_t (*clock_ns)(void *ctx);
} pl_driver_host;

/* The receiver's durable side, as the driver sees it (pl_driver_store_of() wraps the
 * store of pl_store.h; a host may bring its own).  The halves of a group commit are
 * pl_store.h's: begin names the descriptors to sync (the last *dirs of them directories,
 * to fsync; the others fdatasync), which run off the loop thread in the backend, and end
 * tells the endpoint what became durable. */
typedef struct pl_driver_store {
    void *ctx;
    /* Handles one event; *refused = 1 when it refused a STREAM_OPEN.  0 or -errno + err. */
    int (*event)(void *ctx, pure_link *pl, const pure_link_event *ev, uint64_t now_ns, int *refused, char *err,
                 size_t err_len);
    int (*pending)(void *ctx);
    int (*commit_begin)(void *ctx, int *fds, size_t fds_most, size_t *dirs);
    int (*commit_end)(void *ctx, pure_link *pl, int result, uint64_t now_ns, char *err, size_t err_len);
} pl_driver_store;

struct pl_store;
/* The store of pl_store.h as a driver store (its ctx is s). */
pl_driver_store pl_driver_store_of(struct pl_store *s);

typedef struct pl_driver_config {
    pure_link *pl;
    pl_io *io;
    const pl_driver_store *store;   /* NULL: the host answers receiver events itself */
    pl_driver_host host;
    volatile sig_atomic_t *stop;    /* non-zero (from a signal handler) ends the loop */
    uint64_t commit_gap_ns;         /* 0: PL_DRIVER_COMMIT_GAP_NS; 1 (ns): in effect none */
    uint64_t timer_slack_ns;        /* 0: PL_DRIVER_TIMER_SLACK_NS; 1 (ns): in effect none */
} pl_driver_config;

typedef struct pl_driver_stats {
    uint64_t turns, commits;
    uint64_t commits_paced;   /* batches that waited for the commit gap before they started */
    uint64_t commit_wait_ns_most, commit_wait_ns_total;  /* from a batch's start to its end */
} pl_driver_stats;

/* Runs until the host stops it (returns its value, > 0), *stop is set (returns 0), or the
 * endpoint, the backend or the store fails (returns a negative errno or pure_link_error,
 * with one line in err).  An input of the store that cannot store (pl_store.h "A failing
 * input") does not stop it: the store refuses that input's streams and the loop goes on.  The caller then reads statistics and closes what it opened;
 * records appended but not committed are not durable (call pl_driver_commit_all first). */
int pl_driver_run(const pl_driver_config *config, pl_driver_stats *stats, char *err, size_t err_len);

/* Commits what is still pending, on this thread (up to PL_DRIVER_COMMIT_ALL_ROUNDS_MOST
 * batches: a new stream's file needs two before its records are claimed), and sends what
 * the endpoint then has to say (STORED) once: for a clean shutdown after pl_driver_run
 * returned (which first waits for the commit in flight).  Returns 0 or a negative errno
 * with one line in err. */
int pl_driver_commit_all(const pl_driver_config *config, char *err, size_t err_len);

#endif
