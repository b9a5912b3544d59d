/* pl_uring.h: a UDP socket and fdatasync driven through one io_uring (liburing).
 *
 * One ring serves one UDP socket and the store's descriptors:
 *   - receive: one multishot recvmsg fills buffers of a provided-buffer ring; the kernel
 *     picks a free buffer per datagram, so no receive is submitted per datagram.  With UDP
 *     GRO a buffer may hold many datagrams of one sender, handed out one by one;
 *   - send: datagrams are written straight into send slots, then one submit carries the
 *     whole batch; consecutive datagrams to one destination go as one sendmsg with UDP GSO
 *     (UDP_SEGMENT) where the kernel has it;
 *   - wait: one io_uring_enter sleeps until a datagram arrives, an fdatasync batch ends or
 *     the deadline (CLOCK_MONOTONIC nanoseconds, pure_link_deadline()) passes;
 *   - fdatasync: IORING_OP_FSYNC with IORING_FSYNC_DATASYNC (plain fsync for a directory)
 *     runs in the kernel's workers, so a slow disk never holds up the network.
 *
 * Where the kernel or a container refuses io_uring (ENOSYS, EPERM, io_uring_disabled), or
 * lacks what this driver needs (provided-buffer rings: Linux 5.19; multishot recvmsg: 6.0),
 * pl_uring_open fails with one line saying so; a host then falls back to plain sockets.
 *
 * Ownership: the driver allocates its own memory; it does not own the socket or the
 * descriptors it syncs.  Threads: every call from one thread, the one that opened it. */
#ifndef PL_URING_H
#define PL_URING_H

#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>

#include "pure_link.h"

#define PL_URING_DATAGRAM_MOST PURE_LINK_DATAGRAM_MOST /* bytes a datagram may carry, either way */
#define PL_URING_RECV_BUFFERS_MOST 32768u  /* provided buffers (the kernel's buffer-ring limit) */
#define PL_URING_SEND_SLOTS_MOST 4096u     /* datagrams queued or in flight at once */
#define PL_URING_GSO_SEGMENTS_MOST 64u     /* datagrams in one GSO sendmsg (the kernel's limit) */
#define PL_URING_GSO_BYTES_MOST 64000u     /* bytes in one GSO sendmsg (under the 64 KiB IP limit) */
#define PL_URING_SYNC_FDS_MOST 1024u       /* descriptors in one fdatasync batch */

typedef struct pl_uring_config {
    unsigned recv_buffers; /* power of two, 1..PL_URING_RECV_BUFFERS_MOST; 0: 256 (64 with GRO) */
    unsigned send_slots;   /* 1..PL_URING_SEND_SLOTS_MOST; 0: 256 */
    int gso;               /* 1: send with UDP_SEGMENT when the kernel takes it */
    int gro;               /* 1: receive with UDP_GRO when the kernel takes it */
} pl_uring_config;

typedef struct pl_uring pl_uring;

/* One received datagram.  data and from point into the driver's buffers and stay valid
 * until the next pl_uring_recv() or pl_uring_wait(). */
typedef struct pl_uring_dgram {
    const uint8_t *data;
    size_t len;
    const struct sockaddr *from;
    socklen_t from_len;
} pl_uring_dgram;

typedef struct pl_uring_stats {
    uint64_t datagrams_received, datagrams_sent, sendmsgs, gso_sendmsgs;
    uint64_t dropped_too_big;    /* received datagrams over PL_URING_DATAGRAM_MOST */
    uint64_t send_errors;        /* datagrams a sendmsg failed for (the protocol resends) */
    uint64_t send_too_big;       /* of them, refused alone as larger than the device's MTU */
    uint64_t send_retries;       /* datagrams sent again after a failed sendmsg: alone after
                                    their GSO train was refused, or once after an error that
                                    an ICMP message left on the socket */
    uint64_t recv_rearms;        /* multishot receives ended (buffers ran out) and armed again */
    uint64_t gro_buffers;        /* receive buffers that held more than one datagram */
    uint64_t fdatasyncs;
    int gso, gro;                /* 1 when in use */
} pl_uring_stats;

/* Opens a ring for the UDP socket fd (IPv4 or IPv6, bound; it is switched to blocking mode
 * so that a full send buffer parks a send in the kernel instead of failing it).  Returns 0,
 * or a negative errno with one line in err saying what the kernel refused. */
int pl_uring_open(pl_uring **out, int fd, const pl_uring_config *cfg, char *err, size_t err_len);
void pl_uring_close(pl_uring *u);

/* Receive batch: first gives back the buffers of the previous call, then fills out with up
 * to `most` datagrams received by now (it never sleeps).  Returns their count (0: none
 * waiting) or a negative errno. */
int pl_uring_recv(pl_uring *u, pl_uring_dgram *out, size_t most);

/* Send batch: pl_uring_send_slot() gives the buffer for the next datagram
 * (PL_URING_DATAGRAM_MOST bytes; the same one until it is queued), or NULL when every slot
 * is in flight (flush, then wait with want_write).  pl_uring_send_queue() queues that
 * slot's `len` bytes to `to`; -EMSGSIZE above PL_URING_DATAGRAM_MOST, -EINVAL for a bad
 * address or no slot taken.  pl_uring_flush() submits the queued datagrams in one system
 * call; it returns 0, -EAGAIN when no slot is left for more (the sends are in the kernel:
 * wait with want_write), or another negative errno when the ring failed.  A send the
 * kernel refuses is dropped and counted (the protocol resends). */
uint8_t *pl_uring_send_slot(pl_uring *u);
int pl_uring_send_queue(pl_uring *u, size_t len, const struct sockaddr *to, socklen_t to_len);
int pl_uring_flush(pl_uring *u);

/* What pl_uring_wait saw (bits of its return value). */
enum {
    PL_URING_READABLE = 1,    /* datagrams are waiting: call pl_uring_recv */
    PL_URING_WRITABLE = 2,    /* with want_write: a send slot is free again */
    PL_URING_SYNCED = 4,      /* the fdatasync batch ended: call pl_uring_sync_done */
    PL_URING_WATCHED = 8,     /* the watched descriptor is readable (or at its end) */
    PL_URING_INTERRUPTED = 16,/* a signal arrived while waiting */
    PL_URING_ERROR = 32       /* the socket flagged an error (POLLERR, or a send or receive
                                 failed): call pl_uring_error_pending */
};

/* Submits what is queued and sleeps until one of the PL_URING_* conditions or until
 * CLOCK_MONOTONIC reaches deadline_ns (UINT64_MAX: no deadline), with the signal mask
 * `mask` in force while it sleeps (NULL: the thread's own).  Returns at once when one is
 * already true.  Returns the bits (0 at the deadline) or a negative errno (the ring
 * failed).  Datagrams of the last pl_uring_recv are given back first. */
int pl_uring_wait(pl_uring *u, uint64_t deadline_ns, int want_write, const sigset_t *mask);

/* 1 once after the socket flagged an error (its error queue holds ICMP errors or local
 * refusals: read it with recvmsg(MSG_ERRQUEUE)), else 0. */
int pl_uring_error_pending(pl_uring *u);
/* The destination of the last datagram a send refused as too big (EMSGSIZE) into *to
 * (*len: its room in, the address's length out): 0, or -ENOENT when none was. */
int pl_uring_refused_to(const pl_uring *u, struct sockaddr *to, socklen_t *len);

/* Watches one descriptor for reading (e.g. records on stdin), told by PL_URING_WATCHED;
 * -1 stops.  Returns 0, or -EPERM for a regular file or a directory (always readable: read
 * it without waiting). */
int pl_uring_watch(pl_uring *u, int fd);

/* Asynchronous syncs of n descriptors (0..PL_URING_SYNC_FDS_MOST), one batch at a time:
 * fdatasync of the first n - dirs, fsync of the last dirs (directories), all submitted at
 * once (they run in the kernel's workers, in any order).  -EBUSY while one runs, -EINVAL
 * for n over the limit or dirs over n.  pl_uring_sync_done() returns 1 once, when every
 * one of the batch has completed, with *result 0 when each returned 0, else the first
 * negative errno; 0 while it runs or when none was started. */
int pl_uring_sync(pl_uring *u, const int *fds, size_t n, size_t dirs);
int pl_uring_sync_done(pl_uring *u, int *result);

void pl_uring_stats_get(const pl_uring *u, pl_uring_stats *out);

/* CLOCK_MONOTONIC in nanoseconds: the clock deadlines are read on. */
uint64_t pl_uring_now_ns(void);

#endif
