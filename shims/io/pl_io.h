/* pl_io.h: the I/O backend under a driver (pl_driver.h): one UDP socket, batched receive
 * and send, a wait until a deadline, and fdatasync off the loop thread.
 *
 * A backend is a table of operations over its own state, so that the driver's loop does
 * not know which kernel interface carries the datagrams.  pl_io_posix_open() builds the
 * POSIX one: epoll, recvmmsg/sendmmsg, UDP GSO (UDP_SEGMENT) on send and UDP GRO on receive
 * where the kernel has them (falling back to one datagram per message when it does not),
 * and a pool of sync threads for fdatasync.  pl_io_uring_open() builds one over io_uring
 * (pl_uring.h), where the fdatasync calls are operations of the ring.
 *
 * Ownership: the backend owns its socket, its buffers and its thread; pl_dgram pointers it
 * hands out stay valid until the next call of the same operation.  Threads: every
 * operation is called from the loop thread only. */
#ifndef PL_IO_H
#define PL_IO_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "pure_link.h"

#define PL_IO_RECV_MESSAGES_MOST 32u  /* messages per recvmmsg (each up to 64 KiB with GRO) */
#define PL_IO_DGRAMS_MOST 2048u       /* datagrams one receive batch hands out (after GRO split) */
#define PL_IO_SEND_MOST 256u          /* datagrams one send batch holds */
#define PL_IO_GSO_SEGMENTS_MOST 44u   /* datagrams per GSO send: 44 full ones fit 64 KiB */
#define PL_IO_SYNC_FDS_MOST 1024u     /* descriptors one asynchronous fdatasync covers */

/* One received datagram: its source and bytes (valid until the next recv). */
typedef struct pl_dgram {
    pure_link_addr from;
    const uint8_t *data;
    size_t len;
} pl_dgram;

/* What the kernel told about a path, from its error queue (pl_udp_errqueue): about a
 * datagram this socket sent to `to`. */
enum {
    PL_IO_HINT_TOO_BIG = 1,          /* ICMP fragmentation needed / packet too big, or this
                                        host's own interface refused the size (local) */
    PL_IO_HINT_PORT_UNREACHABLE = 2, /* ICMP port unreachable: nothing listens on that port */
    PL_IO_HINT_HOST_UNREACHABLE = 3  /* ICMP net, host or address unreachable, or prohibited */
};
#define PL_IO_HINTS_MOST 64u   /* hints one call hands out (the rest wait in the kernel) */
typedef struct pl_io_hint {
    uint32_t kind;             /* PL_IO_HINT_* */
    uint32_t mtu;              /* TOO_BIG: the MTU the report named (0: none) */
    uint32_t datagram_bytes;   /* TOO_BIG: the UDP payload that MTU carries to `to` (the MTU
                                  less 28 B for IPv4, 48 B for IPv6); 0 when unknown */
    int local;                 /* 1: this host refused it (no ICMP crossed the network) */
    pure_link_addr to;         /* the datagram's destination (pl_udp_errqueue leaves len 0
                                  where the kernel did not say: a local refusal over IPv4) */
    pure_link_addr from;       /* who reported it (the ICMP's source); len 0 when local or unknown */
} pl_io_hint;

/* What wait() saw (bits of its return value). */
enum {
    PL_IO_READABLE = 1,   /* datagrams may be waiting: call recv */
    PL_IO_WRITABLE = 2,   /* the socket has room again: call flush */
    PL_IO_SYNCED = 4,     /* the asynchronous fdatasync finished: call sync_result */
    PL_IO_WATCHED = 8,    /* the watched descriptor is readable (or at end) */
    PL_IO_INTERRUPTED = 16 /* a signal arrived while waiting */
};

typedef struct pl_io pl_io;

typedef struct pl_io_ops {
    const char *name;
    /* Takes every datagram waiting now (never blocks): *out points at the batch.  Returns
     * the count (0: nothing waiting) or a negative errno; the caller then feeds each one to
     * pure_link_receive and calls recv again until it returns 0. */
    int (*recv)(pl_io *io, const pl_dgram **out);
    /* A buffer of PURE_LINK_DATAGRAM_MOST bytes for the next datagram to send and its
     * destination, or NULL when the batch is full (call flush first).  The caller pulls
     * into it and then calls push with the length it got (0 gives the slot back). */
    uint8_t *(*slot)(pl_io *io, pure_link_addr **to);
    void (*push)(pl_io *io, size_t len);
    /* Sends the batch.  Returns 0 when it is all gone, -EAGAIN when the socket is full (the
     * rest stays queued: wait with want_write, then flush again), or another negative errno
     * (datagrams that the kernel refused for good are dropped and counted). */
    int (*flush)(pl_io *io);
    /* Blocks until one of the PL_IO_* conditions or until deadline_ns (CLOCK_MONOTONIC,
     * UINT64_MAX: no deadline); returns the bits seen (0 at the deadline). */
    int (*wait)(pl_io *io, uint64_t deadline_ns, int want_write);
    /* Watches one more descriptor for reading (e.g. the records on stdin); -1 stops.
     * Returns 0, or -EPERM when the descriptor cannot be waited on (a regular file: it is
     * always ready, read it without waiting). */
    int (*watch)(pl_io *io, int fd);
    /* Starts the syncs of n descriptors (n <= PL_IO_SYNC_FDS_MOST) off this thread, one
     * batch at a time: fdatasync on the first n - dirs, fsync on the last dirs (directories:
     * fdatasync need not write a new name in them).  The calls of one batch may run at once,
     * in any order.  When wait reports PL_IO_SYNCED, every one of them has returned:
     * sync_result returns 1 and sets *result (0, or the first negative errno); before
     * that it returns 0. */
    int (*sync_start)(pl_io *io, const int *fds, size_t n, size_t dirs);
    int (*sync_result)(pl_io *io, int *result);
    /* What the kernel reported about paths since the last call (its error queue, read
     * when the socket flagged an error or a send or receive failed with one; never
     * blocks): *out points at them, valid until the next call.  Returns the count. */
    int (*hints)(pl_io *io, const pl_io_hint **out);
    /* The socket's local address (for a log line: "listening on ..."). */
    int (*local)(pl_io *io, pure_link_addr *out);
    void (*close)(pl_io *io);
} pl_io_ops;

/* Counters every backend keeps. */
typedef struct pl_io_stats {
    uint64_t recv_calls, send_calls, wait_calls;
    uint64_t datagrams_in, datagrams_out, bytes_in, bytes_out;
    uint64_t gro_batches, gso_batches;   /* messages that carried several datagrams */
    uint64_t send_full, send_dropped, recv_truncated;
    uint64_t syncs;
    /* Paths: datagrams a send refused as larger than the device's MTU (each also dropped);
     * datagrams sent again and receives made again after a failure (a GSO train refused
     * whole goes again one by one; an error an ICMP message left on the socket fails the
     * next call once, whatever its own datagrams); messages read from the error queue, and
     * the hints they gave. */
    uint64_t send_too_big, retries, errqueue_messages, hints_too_big, hints_unreachable;
    uint64_t datagram_bytes_most;        /* the largest datagram handed to a send */
} pl_io_stats;

struct pl_io {
    const pl_io_ops *ops;
    pl_io_stats stats;
    int gso, gro;          /* 1 while the backend uses them */
};

typedef struct pl_io_options {
    pure_link_addr bind;         /* local address (pl_addr_parse); port 0 picks one */
    int gso, gro;                /* 1: use when the kernel has it; 0: never */
    const sigset_t *wait_mask;   /* signals unblocked while waiting (NULL: leave the mask) */
    int sndbuf_bytes, rcvbuf_bytes; /* socket buffers asked for (0: 4 MiB) */
} pl_io_options;

/* Opens the POSIX backend into *out.  Returns 0, or a negative errno with one line in err
 * (e.g. "bind 127.0.0.1:4433: Address already in use"); the caller closes it with
 * (*out)->ops->close(*out). */
int pl_io_posix_open(pl_io **out, const pl_io_options *options, char *err, size_t err_len);
/* Opens the io_uring backend (shims/io/pl_uring.h under it) the same way; where the kernel or
 * a container refuses io_uring, or lacks what it needs, it fails with one line saying so
 * (e.g. "io_uring: refused: /proc/sys/kernel/io_uring_disabled is 2 (EPERM)"). */
int pl_io_uring_open(pl_io **out, const pl_io_options *options, char *err, size_t err_len);
/* Opens the backend named by kind: "posix", "uring", or "auto" (io_uring, and POSIX where
 * io_uring cannot be had).  Returns as those do; -EINVAL with one line for another name. */
int pl_io_open(const char *kind, pl_io **out, const pl_io_options *options, char *err, size_t err_len);

/* The socket under every backend: UDP, non-blocking, bound to options->bind ([::] takes
 * IPv4 too), 4 MiB buffers asked for, UDP_GRO on when options->gro and the kernel has it
 * (*gro says).  Returns 0 with the descriptor in *fd (the caller closes it), or a negative
 * errno with one line in err. */
int pl_udp_open(const pl_io_options *options, int *fd, int *gro, char *err, size_t err_len);
/* The socket's local address into *out: 0 or a negative errno. */
int pl_udp_local(int fd, pure_link_addr *out);

/* ---- paths (io_path.c) ---- */
/* What pl_udp_open sets on every socket: DF on every datagram with the size left to the
 * endpoint (IP_MTU_DISCOVER = IP_PMTUDISC_PROBE, IPV6_MTU_DISCOVER = IPV6_PMTUDISC_PROBE),
 * and ICMP errors queued for reading (IP_RECVERR, IPV6_RECVERR).  0 or a negative errno. */
int pl_udp_path_options(int fd, int family);
/* Reads the socket's error queue until it is empty or `most` hints are out; counts into
 * stats.  A hint whose destination the kernel did not name gets `refused_to` (the last
 * datagram a send refused as too big; len 0: none, and the hint is left out).  Returns the
 * hints written. */
int pl_udp_errqueue(int fd, pl_io_hint *out, size_t most, const pure_link_addr *refused_to, pl_io_stats *stats);
/* 1 when a send or receive that failed with errno e failed because of an error an ICMP
 * message (or a local refusal) left on the socket: the caller reads the error queue and
 * makes the call again, since that error was not about the call's own datagrams. */
int pl_udp_error_is_path(int e);

/* ---- addresses: a pure_link_addr holds a struct sockaddr_in or sockaddr_in6 ---- */

/* Parses "HOST:PORT", "[V6]:PORT" or ":PORT" (any address, IPv6 with IPv4 mapped) by
 * getaddrinfo (numeric or a name).  Returns 0, or -1 with a line in err. */
int pl_addr_parse(const char *text, pure_link_addr *out, char *err, size_t err_len);
/* Stores a kernel address (AF_INET, AF_INET6) canonically: every byte the kernel may
 * leave unset is zero, so that one address always gives the same bytes.  0, or -1. */
struct sockaddr;
int pl_addr_from_sockaddr(const struct sockaddr *sa, pure_link_addr *out);
/* Writes "a.b.c.d:port" or "[v6]:port" into buf (at least 64 bytes). */
const char *pl_addr_format(const pure_link_addr *a, char *buf, size_t len);
/* The host alone: "a.b.c.d" or "v6" (at least 64 bytes). */
const char *pl_addr_format_host(const pure_link_addr *a, char *buf, size_t len);
/* The port of an address (host order). */
unsigned pl_addr_port(const pure_link_addr *a);

/* CLOCK_MONOTONIC in nanoseconds: the time every core call takes. */
uint64_t pl_now_ns(void);

#endif
