/* io_uring.c: the io_uring backend of pl_io.h, over the driver of pl_uring.h.
 *
 * The same socket as the POSIX backend (pl_udp_open), then one ring for it: datagrams
 * arrive by a multishot receive into provided buffers, batches leave in one submit, the
 * wait is one io_uring_enter with the deadline as its timeout, and fdatasync runs as
 * IORING_OP_FSYNC in the kernel's workers instead of on a thread of ours. */
#define _GNU_SOURCE
#include "pl_io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pl_uring.h"

typedef struct uring_io {
    pl_io io;                       /* first: the pl_io the caller sees */
    int fd;
    pl_uring *u;
    const sigset_t *wait_mask;
    pure_link_addr to;              /* the destination of the slot handed out */
    pl_uring_dgram raw[PL_IO_DGRAMS_MOST];
    pl_dgram dgrams[PL_IO_DGRAMS_MOST];
    pl_io_hint hints[PL_IO_HINTS_MOST];
    int more_hints;                 /* the last read of the error queue stopped full */
} uring_io;

/* The driver's counters, as pl_io_stats names them. */
static void stats_sync(uring_io *p) {
    pl_uring_stats st;
    pl_uring_stats_get(p->u, &st);
    p->io.stats.gro_batches = st.gro_buffers;
    p->io.stats.gso_batches = st.gso_sendmsgs;
    p->io.stats.send_dropped = st.send_errors;
    p->io.stats.recv_truncated = st.dropped_too_big;
    p->io.stats.send_too_big = st.send_too_big;
    p->io.stats.retries = st.send_retries;
    p->io.gso = st.gso;
}

static int io_recv(pl_io *io, const pl_dgram **out) {
    uring_io *p = (uring_io *)io;
    int n = pl_uring_recv(p->u, p->raw, PL_IO_DGRAMS_MOST);
    io->stats.recv_calls++;
    if (n < 0) return n;
    int count = 0;
    const struct sockaddr *converted = NULL;
    for (int i = 0; i < n; i++) {
        pl_dgram *d = &p->dgrams[count];
        /* The datagrams of one GRO buffer share their source: convert it once. */
        if (count > 0 && p->raw[i].from == converted) d->from = p->dgrams[count - 1].from;
        else if (pl_addr_from_sockaddr(p->raw[i].from, &d->from) != 0) continue;
        converted = p->raw[i].from;
        d->data = p->raw[i].data;
        d->len = p->raw[i].len;
        io->stats.bytes_in += d->len;
        count++;
    }
    io->stats.datagrams_in += (uint64_t)count;
    stats_sync(p);
    *out = p->dgrams;
    return count;
}

static uint8_t *io_slot(pl_io *io, pure_link_addr **to) {
    uring_io *p = (uring_io *)io;
    uint8_t *buf = pl_uring_send_slot(p->u);
    *to = &p->to;
    return buf;
}

static void io_push(pl_io *io, size_t len) {
    uring_io *p = (uring_io *)io;
    if (len == 0) return;   /* the slot stays ours: the next io_slot hands it out again */
    if (pl_uring_send_queue(p->u, len, (const struct sockaddr *)p->to.bytes, p->to.len) != 0) {
        io->stats.send_dropped++;
        return;
    }
    io->stats.datagrams_out++;
    io->stats.bytes_out += len;
    if (len > io->stats.datagram_bytes_most) io->stats.datagram_bytes_most = len;
}

static int io_flush(pl_io *io) {
    uring_io *p = (uring_io *)io;
    int r = pl_uring_flush(p->u);
    io->stats.send_calls++;
    if (r == -EAGAIN) io->stats.send_full++;
    stats_sync(p);
    return r;
}

static int io_wait(pl_io *io, uint64_t deadline_ns, int want_write) {
    uring_io *p = (uring_io *)io;
    io->stats.wait_calls++;
    int bits = pl_uring_wait(p->u, deadline_ns, want_write, p->wait_mask);
    if (bits < 0) return bits;
    return (bits & PL_URING_READABLE ? PL_IO_READABLE : 0) | (bits & PL_URING_WRITABLE ? PL_IO_WRITABLE : 0) |
           (bits & PL_URING_SYNCED ? PL_IO_SYNCED : 0) | (bits & PL_URING_WATCHED ? PL_IO_WATCHED : 0) |
           (bits & PL_URING_ERROR ? PL_IO_READABLE : 0) |
           (bits & PL_URING_INTERRUPTED ? PL_IO_INTERRUPTED : 0);
}

static int io_watch(pl_io *io, int fd) { return pl_uring_watch(((uring_io *)io)->u, fd); }

static int io_sync_start(pl_io *io, const int *fds, size_t n, size_t dirs) {
    int r = pl_uring_sync(((uring_io *)io)->u, fds, n, dirs);
    if (r == 0) io->stats.syncs++;
    return r;
}

static int io_sync_result(pl_io *io, int *result) { return pl_uring_sync_done(((uring_io *)io)->u, result); }

/* The error queue is read with a plain recvmsg when the ring saw the socket's error flag. */
static int io_hints(pl_io *io, const pl_io_hint **out) {
    uring_io *p = (uring_io *)io;
    *out = p->hints;
    if (!pl_uring_error_pending(p->u) && !p->more_hints) return 0;
    pure_link_addr refused_to = {0};
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (pl_uring_refused_to(p->u, (struct sockaddr *)&ss, &len) == 0) pl_addr_from_sockaddr((struct sockaddr *)&ss, &refused_to);
    int n = pl_udp_errqueue(p->fd, p->hints, PL_IO_HINTS_MOST, &refused_to, &io->stats);
    p->more_hints = n == (int)PL_IO_HINTS_MOST;
    return n;
}

static int io_local(pl_io *io, pure_link_addr *out) { return pl_udp_local(((uring_io *)io)->fd, out); }

static void io_close(pl_io *io) {
    uring_io *p = (uring_io *)io;
    if (p == NULL) return;
    pl_uring_close(p->u);   /* first: it waits out what the kernel still does with the socket */
    if (p->fd >= 0) close(p->fd);
    free(p);
}

static const pl_io_ops uring_ops = {
    .name = "uring",
    .recv = io_recv,
    .slot = io_slot,
    .push = io_push,
    .flush = io_flush,
    .wait = io_wait,
    .watch = io_watch,
    .sync_start = io_sync_start,
    .sync_result = io_sync_result,
    .hints = io_hints,
    .local = io_local,
    .close = io_close,
};

int pl_io_uring_open(pl_io **out, const pl_io_options *o, char *err, size_t err_len) {
    uring_io *p = calloc(1, sizeof *p);
    if (p == NULL) {
        snprintf(err, err_len, "out of memory");
        return -ENOMEM;
    }
    p->io.ops = &uring_ops;
    p->wait_mask = o->wait_mask;
    int gro = 0;
    int r = pl_udp_open(o, &p->fd, &gro, err, err_len);
    if (r != 0) {
        free(p);
        return r;
    }
    pl_uring_config cfg = { .gso = o->gso != 0, .gro = gro };
    r = pl_uring_open(&p->u, p->fd, &cfg, err, err_len);
    if (r != 0) {
        close(p->fd);
        free(p);
        return r;
    }
    pl_uring_stats st;
    pl_uring_stats_get(p->u, &st);
    p->io.gso = st.gso;
    p->io.gro = st.gro;
    *out = &p->io;
    return 0;
}
