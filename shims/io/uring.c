/* uring.c: the io_uring driver of one UDP socket and of fdatasync (pl_uring.h).
 *
 * Every operation's user_data carries its kind in the top byte and an index below, so one
 * pass over the completion queue dispatches receives, sends and fdatasyncs. */
#define _GNU_SOURCE
#include "pl_uring.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define URING_SQ_ENTRIES 256u
#define URING_BGID 7u                   /* our provided-buffer group */
#define URING_GRO_PAYLOAD_MOST 65535u   /* bytes one GRO buffer may receive */
#define URING_RECV_BUFFERS_DEFAULT 256u
#define URING_RECV_BUFFERS_GRO_DEFAULT 64u
#define URING_RECV_BUFFERS_FIRST 8u     /* buffers in the kernel's ring at first (see recv_refill) */
#define URING_SEND_SLOTS_DEFAULT 256u
#define URING_SLOT_BYTES 1536u          /* PL_URING_DATAGRAM_MOST rounded up to cache lines */

enum { OP_RECV = 1, OP_SEND = 2, OP_SYNC = 3, OP_WATCH = 4, OP_CANCEL = 5, OP_ERRPOLL = 6 };
#define UD(kind, index) (((uint64_t)(kind) << 56) | (uint64_t)(index))
#define UD_KIND(ud) ((unsigned)((ud) >> 56))
#define UD_INDEX(ud) ((unsigned)((ud) & 0xffffffu))

typedef struct recv_done {   /* one filled buffer, handed out segment by segment */
    uint16_t bid;
    uint32_t payload_len, segment_bytes, offset;
} recv_done;

typedef struct send_op {     /* one sendmsg: one datagram, or a GSO train of them */
    struct msghdr msg;
    struct iovec iov[PL_URING_GSO_SEGMENTS_MOST];
    uint16_t slots[PL_URING_GSO_SEGMENTS_MOST];
    uint8_t single[PL_URING_GSO_SEGMENTS_MOST];   /* each datagram's queued.single */
    union { char buf[CMSG_SPACE(sizeof(uint16_t))]; struct cmsghdr align; } ctl;
    struct sockaddr_in6 to;
    unsigned count;
} send_op;

typedef struct queued {      /* a datagram waiting for the next flush */
    uint16_t slot, len;
    uint8_t single;          /* 1: in no GSO train (its train was refused); 2: and sent again
                                once already after a failure */
    socklen_t to_len;
    struct sockaddr_in6 to;
} queued;

struct pl_uring {
    struct io_uring ring;
    int fd, ring_open, gso, gro;
    /* receive */
    struct io_uring_buf_ring *br;
    uint8_t *recv_mem;
    size_t br_bytes, recv_mem_bytes, buf_bytes;
    unsigned recv_buffers, bufs_in_kernel, bufs_target, spare_len;
    uint16_t *spare;   /* buffers not in the kernel's ring, the last given back on top */
    struct msghdr recv_msg;
    int recv_armed, recv_seen, recv_unsupported;
    recv_done *rq;
    unsigned rq_release, rq_head, rq_tail; /* held [release, head), waiting [head, tail) */
    /* send */
    uint8_t *send_mem;
    unsigned send_slots, free_slots_len, free_ops_len, q_len, sends_in_flight;
    uint16_t *free_slots, *free_ops;
    int slot_taken;
    queued *q;
    send_op *ops;
    /* the socket's error flag (POLLERR: an ICMP error or a local refusal is queued) */
    int errpoll_armed, error_pending;
    struct sockaddr_in6 refused_to;   /* where the last datagram refused as too big went */
    socklen_t refused_to_len;
    /* the watched descriptor */
    int watched, watch_armed, watch_ready;
    unsigned watch_generation;
    /* fdatasync */
    unsigned sync_pending;
    int sync_result, sync_ended;
    pl_uring_stats st;
};

uint64_t pl_uring_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An SQE, submitting what is queued when the submission queue is full. */
static struct io_uring_sqe *uring_sqe(pl_uring *u) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    if (!sqe && io_uring_submit(&u->ring) >= 0) sqe = io_uring_get_sqe(&u->ring);
    return sqe;
}

/* ---- receive ---- */

static uint8_t *recv_buf(const pl_uring *u, unsigned bid) { return u->recv_mem + (size_t)bid * u->buf_bytes; }

static void recv_give_back(pl_uring *u, unsigned bid) { u->spare[u->spare_len++] = (uint16_t)bid; }

/* Tops the kernel's ring up to bufs_target buffers, the warmest first.  The ring is a queue:
 * a buffer given to it is filled only after all those before it, so the fewer it holds the
 * fewer distinct buffers (and cache lines) the datagrams pass through.  The target starts
 * small and doubles each time the kernel runs out (ENOBUFS), up to every buffer. */
static void recv_refill(pl_uring *u) {
    int mask = io_uring_buf_ring_mask(u->recv_buffers), added = 0;
    while (u->bufs_in_kernel < u->bufs_target && u->spare_len > 0) {
        unsigned bid = u->spare[--u->spare_len];
        io_uring_buf_ring_add(u->br, recv_buf(u, bid), (unsigned)u->buf_bytes, (unsigned short)bid, mask, added++);
        u->bufs_in_kernel++;
    }
    if (added) io_uring_buf_ring_advance(u->br, added);
}

/* Arms the multishot receive when it is not armed and the kernel has a buffer to fill;
 * with none, the caller holds them all and arming waits for pl_uring_recv to return some. */
static int recv_arm(pl_uring *u) {
    recv_refill(u);
    if (u->recv_armed || u->bufs_in_kernel == 0) return 0;
    struct io_uring_sqe *sqe = uring_sqe(u);
    if (!sqe) return -EBUSY;
    io_uring_prep_recvmsg_multishot(sqe, u->fd, &u->recv_msg, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = URING_BGID;
    io_uring_sqe_set_data64(sqe, UD(OP_RECV, 0));
    u->recv_armed = 1;
    return 0;
}

/* The segment size of a GRO buffer (UDP_GRO control message), else the whole payload. */
static uint32_t recv_segment_bytes(struct io_uring_recvmsg_out *o, struct msghdr *msg, uint32_t payload) {
    for (struct cmsghdr *c = io_uring_recvmsg_cmsg_firsthdr(o, msg); c; c = io_uring_recvmsg_cmsg_nexthdr(o, msg, c))
        if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
            int seg;
            memcpy(&seg, CMSG_DATA(c), sizeof seg);
            if (seg > 0) return (uint32_t)seg;
        }
    return payload;
}

static void recv_complete(pl_uring *u, const struct io_uring_cqe *cqe) {
    if (!(cqe->flags & IORING_CQE_F_MORE)) {
        u->recv_armed = 0;
        if (cqe->res == -ENOBUFS) {
            u->st.recv_rearms++;
            u->bufs_target = u->bufs_target * 2 < u->recv_buffers ? u->bufs_target * 2 : u->recv_buffers;
        }
        if (cqe->res == -EINVAL && !u->recv_seen) u->recv_unsupported = 1;
        /* An ICMP error left on the socket ends the receive (it is armed again): the error
         * queue says what it was. */
        if (cqe->res < 0 && cqe->res != -ENOBUFS && cqe->res != -ECANCELED && cqe->res != -EINVAL)
            u->error_pending = 1;
    }
    if (!(cqe->flags & IORING_CQE_F_BUFFER)) return;
    unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
    u->bufs_in_kernel--;
    u->recv_seen = 1;
    uint8_t *buf = recv_buf(u, bid);
    struct io_uring_recvmsg_out *o = io_uring_recvmsg_validate(buf, cqe->res, &u->recv_msg);
    if (!o || (o->flags & MSG_TRUNC)) {   /* over the buffer: not a datagram of ours */
        u->st.dropped_too_big++;
        recv_give_back(u, bid);
        return;
    }
    uint32_t payload = io_uring_recvmsg_payload_length(o, cqe->res, &u->recv_msg);
    uint32_t seg = recv_segment_bytes(o, &u->recv_msg, payload);
    if (payload == 0 || seg > PL_URING_DATAGRAM_MOST) {
        u->st.dropped_too_big += payload ? (payload + seg - 1) / seg : 0;
        recv_give_back(u, bid);
        return;
    }
    if (seg < payload) u->st.gro_buffers++;
    recv_done *d = &u->rq[u->rq_tail++ & (u->recv_buffers - 1)];
    *d = (recv_done){ .bid = (uint16_t)bid, .payload_len = payload, .segment_bytes = seg, .offset = 0 };
}

/* Gives back the buffers handed out by the last pl_uring_recv and fully read. */
static void recv_release(pl_uring *u) {
    for (; u->rq_release != u->rq_head; u->rq_release++)
        recv_give_back(u, u->rq[u->rq_release & (u->recv_buffers - 1)].bid);
}

/* ---- send ---- */

/* Queues a slot of a failed send again, alone; returns 1, or 0 when it goes no more. */
static int send_again(pl_uring *u, const send_op *op, unsigned i, int res) {
    /* A train refused whole: a segment over the device's MTU (EINVAL) or a device that
     * cannot segment (EIO): each datagram goes alone, and one too big then fails alone. */
    int train = op->count > 1 && (res == -EINVAL || res == -EIO || res == -EOPNOTSUPP || res == -EMSGSIZE);
    /* A single datagram that failed with another error than its size: an ICMP error about
     * an earlier datagram fails the next send once, whatever that one is. */
    int once = op->count == 1 && op->single[0] < 2 && res != -EMSGSIZE && res != -EINVAL;
    if (!train && !once) return 0;
    queued *e = &u->q[u->q_len++];
    *e = (queued){ .slot = op->slots[i], .len = (uint16_t)op->iov[i].iov_len, .single = train ? 1 : 2,
                   .to_len = op->msg.msg_namelen, .to = op->to };
    return 1;
}

static void send_complete(pl_uring *u, const struct io_uring_cqe *cqe) {
    send_op *op = &u->ops[UD_INDEX(cqe->user_data)];
    unsigned kept = 0;
    if (cqe->res < 0) {
        /* A device that cannot segment refuses GSO with EIO: later trains go one by one. */
        if (cqe->res == -EIO && op->count > 1) u->gso = 0;
        if (cqe->res == -EMSGSIZE && op->count == 1) {
            u->st.send_too_big++;
            u->refused_to = op->to, u->refused_to_len = op->msg.msg_namelen;
        }
        if (cqe->res != -EINVAL && cqe->res != -EIO) u->error_pending = 1;   /* the error queue may say more */
        for (unsigned i = 0; i < op->count; i++) {
            unsigned again = (unsigned)send_again(u, op, i, cqe->res);
            if (!again) u->free_slots[u->free_slots_len++] = op->slots[i];
            kept += again;
        }
        u->st.send_errors += op->count - kept;
        u->st.send_retries += kept;
    } else {
        u->st.datagrams_sent += op->count;
        for (unsigned i = 0; i < op->count; i++) u->free_slots[u->free_slots_len++] = op->slots[i];
    }
    u->free_ops[u->free_ops_len++] = (uint16_t)(op - u->ops);
    u->sends_in_flight--;
}

static void errpoll_complete(pl_uring *u, const struct io_uring_cqe *cqe) {
    if (!(cqe->flags & IORING_CQE_F_MORE)) u->errpoll_armed = 0;
    if (cqe->res > 0 && (cqe->res & POLLERR)) u->error_pending = 1;
}

static void sync_complete(pl_uring *u, const struct io_uring_cqe *cqe) {
    u->st.fdatasyncs++;
    if (cqe->res < 0 && u->sync_result == 0) u->sync_result = cqe->res;
    if (--u->sync_pending == 0) u->sync_ended = 1;
}

static void watch_complete(pl_uring *u, const struct io_uring_cqe *cqe) {
    if (UD_INDEX(cqe->user_data) != u->watch_generation) return;   /* of a descriptor no longer watched */
    u->watch_armed = 0;
    u->watch_ready = cqe->res != -ECANCELED;   /* readable, at its end, or failing: the caller reads */
}

/* Dispatches every completion already posted. */
static void uring_reap(pl_uring *u) {
    struct io_uring_cqe *cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&u->ring, head, cqe) {
        switch (UD_KIND(cqe->user_data)) {
        case OP_RECV: recv_complete(u, cqe); break;
        case OP_SEND: send_complete(u, cqe); break;
        case OP_SYNC: sync_complete(u, cqe); break;
        case OP_WATCH: watch_complete(u, cqe); break;
        case OP_ERRPOLL: errpoll_complete(u, cqe); break;
        default: break;
        }
        seen++;
    }
    io_uring_cq_advance(&u->ring, seen);
}

/* A submit that failed only for now (a signal, a full completion queue) is no failure. */
static int submit_result(int r) { return r < 0 && r != -EINTR && r != -EBUSY && r != -EAGAIN ? r : 0; }

/* Whether a pass must enter the kernel: entries to submit, completions waiting as task
 * work, or completions that overflowed the completion queue. */
static int uring_must_enter(const pl_uring *u) {
    return io_uring_sq_ready(&u->ring) ||
           (IO_URING_READ_ONCE(*u->ring.sq.kflags) & (IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW));
}

/* Submits queued SQEs and dispatches what completed, in one system call at most. */
static int uring_poll(pl_uring *u) {
    int r = uring_must_enter(u) ? io_uring_submit_and_get_events(&u->ring) : 0;
    uring_reap(u);
    return submit_result(r);
}

uint8_t *pl_uring_send_slot(pl_uring *u) {
    if (u->slot_taken < 0 && u->free_slots_len == 0) {   /* every slot in flight: see if one came back */
        if (pl_uring_flush(u) < 0 || uring_poll(u) < 0) return NULL;
        if (u->free_slots_len == 0) return NULL;
    }
    if (u->slot_taken < 0) u->slot_taken = u->free_slots[--u->free_slots_len];
    return u->send_mem + (size_t)u->slot_taken * URING_SLOT_BYTES;
}

int pl_uring_send_queue(pl_uring *u, size_t len, const struct sockaddr *to, socklen_t to_len) {
    if (u->slot_taken < 0 || !to || to_len == 0 || to_len > sizeof(struct sockaddr_in6)) return -EINVAL;
    if (len > PL_URING_DATAGRAM_MOST) return -EMSGSIZE;
    queued *e = &u->q[u->q_len++];
    e->slot = (uint16_t)u->slot_taken;
    e->len = (uint16_t)len;
    e->single = 0;
    e->to_len = to_len;
    memset(&e->to, 0, sizeof e->to);
    memcpy(&e->to, to, to_len);
    u->slot_taken = -1;
    return 0;
}

/* How many queued datagrams from `first` one GSO sendmsg carries: the same destination,
 * the same length but for a shorter last one, within the kernel's segment and byte bounds. */
static unsigned send_train(const pl_uring *u, unsigned first) {
    const queued *a = &u->q[first];
    unsigned n = 1;
    size_t bytes = a->len;
    if (!u->gso || a->len == 0 || a->single) return 1;
    while (first + n < u->q_len && n < PL_URING_GSO_SEGMENTS_MOST) {
        const queued *b = &u->q[first + n];
        if (b->len == 0 || b->single || b->len > a->len || bytes + b->len > PL_URING_GSO_BYTES_MOST) break;
        if (b->to_len != a->to_len || memcmp(&b->to, &a->to, a->to_len) != 0) break;
        bytes += b->len;
        n++;
        if (b->len < a->len) break;     /* only the last segment may be short */
    }
    return n;
}

static void send_prep(pl_uring *u, send_op *op, unsigned first, unsigned n, struct io_uring_sqe *sqe) {
    const queued *a = &u->q[first];
    memset(&op->msg, 0, sizeof op->msg);
    for (unsigned i = 0; i < n; i++) {
        op->slots[i] = u->q[first + i].slot;
        op->single[i] = u->q[first + i].single;
        op->iov[i] = (struct iovec){ u->send_mem + (size_t)op->slots[i] * URING_SLOT_BYTES, u->q[first + i].len };
    }
    op->count = n;
    op->to = a->to;
    op->msg.msg_name = &op->to;
    op->msg.msg_namelen = a->to_len;
    op->msg.msg_iov = op->iov;
    op->msg.msg_iovlen = n;
    if (n > 1) {
        op->msg.msg_control = op->ctl.buf;
        op->msg.msg_controllen = sizeof op->ctl.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&op->msg);
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
        uint16_t seg = a->len;
        memcpy(CMSG_DATA(c), &seg, sizeof seg);
        u->st.gso_sendmsgs++;
    }
    io_uring_prep_sendmsg(sqe, u->fd, &op->msg, 0);
    io_uring_sqe_set_data64(sqe, UD(OP_SEND, op - u->ops));
    u->st.sendmsgs++;
    u->sends_in_flight++;
}

/* Turns the queued datagrams into sendmsg operations; the next submit carries them. */
static int send_build(pl_uring *u) {
    for (unsigned i = 0; i < u->q_len;) {
        unsigned n = send_train(u, i);
        struct io_uring_sqe *sqe = uring_sqe(u);
        if (!sqe) return -EBUSY;
        send_prep(u, &u->ops[u->free_ops[--u->free_ops_len]], i, n, sqe);
        i += n;
    }
    u->q_len = 0;
    return 0;
}

int pl_uring_flush(pl_uring *u) {
    int r = send_build(u);
    if (r == 0) r = submit_result(io_uring_submit(&u->ring));
    return r == 0 && u->free_slots_len == 0 && u->slot_taken < 0 ? -EAGAIN : r;
}

/* ---- wait ---- */

/* Polls the watched descriptor once; its completion says it is readable (or at its end). */
static int watch_arm(pl_uring *u) {
    if (u->watched < 0 || u->watch_armed || u->watch_ready) return 0;
    struct io_uring_sqe *sqe = uring_sqe(u);
    if (!sqe) return -EBUSY;
    io_uring_prep_poll_add(sqe, u->watched, POLLIN);
    io_uring_sqe_set_data64(sqe, UD(OP_WATCH, u->watch_generation));
    u->watch_armed = 1;
    return 0;
}

int pl_uring_watch(pl_uring *u, int fd) {
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) != 0) return -errno;
    if (fd >= 0 && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) return -EPERM;   /* always ready */
    if (u->watch_armed) {
        struct io_uring_sqe *sqe = uring_sqe(u);
        if (!sqe) return -EBUSY;
        io_uring_prep_poll_remove(sqe, UD(OP_WATCH, u->watch_generation));
        io_uring_sqe_set_data64(sqe, UD(OP_CANCEL, 0));
    }
    u->watch_generation = (u->watch_generation + 1) & 0xffffffu;   /* a late completion is stale */
    u->watched = fd;
    u->watch_armed = u->watch_ready = 0;
    return 0;
}

/* What is ready now, as PL_URING_* bits; the watched descriptor's readiness is told once. */
static int uring_ready(pl_uring *u, int want_write) {
    int bits = (u->rq_head != u->rq_tail ? PL_URING_READABLE : 0) | (u->sync_ended ? PL_URING_SYNCED : 0) |
               (u->error_pending ? PL_URING_ERROR : 0) |
               (want_write && u->free_slots_len > 0 ? PL_URING_WRITABLE : 0) | (u->watch_ready ? PL_URING_WATCHED : 0);
    u->watch_ready = 0;
    return bits;
}

/* Polls the socket for POLLERR (multishot): an error queued by the kernel. */
static int errpoll_arm(pl_uring *u) {
    if (u->errpoll_armed) return 0;
    struct io_uring_sqe *sqe = uring_sqe(u);
    if (!sqe) return -EBUSY;
    io_uring_prep_poll_multishot(sqe, u->fd, POLLERR);
    io_uring_sqe_set_data64(sqe, UD(OP_ERRPOLL, 0));
    u->errpoll_armed = 1;
    return 0;
}

static int wait_arm(pl_uring *u) {
    int r = recv_arm(u);
    if (r == 0) r = errpoll_arm(u);
    return r < 0 ? r : watch_arm(u);
}

int pl_uring_refused_to(const pl_uring *u, struct sockaddr *to, socklen_t *len) {
    if (u->refused_to_len == 0 || *len < u->refused_to_len) return -ENOENT;
    memcpy(to, &u->refused_to, u->refused_to_len);
    *len = u->refused_to_len;
    return 0;
}

int pl_uring_error_pending(pl_uring *u) {
    int e = u->error_pending;
    u->error_pending = 0;
    return e;
}

/* One pass without sleeping (one system call at most: submit and collect), then sleeps in
 * one io_uring_enter, with the caller's signal mask, until a completion or the deadline,
 * as long as nothing is ready.  A send completion is news only when want_write. */
int pl_uring_wait(pl_uring *u, uint64_t deadline_ns, int want_write, const sigset_t *mask) {
    recv_release(u);
    int r = send_build(u), bits = 0;
    if (r == 0) r = wait_arm(u);
    if (r == 0) r = uring_poll(u);
    while (r == 0 && !(bits = uring_ready(u, want_write))) {
        if ((r = wait_arm(u)) < 0) break;   /* the receive may have ended in the last pass */
        uint64_t now_ns = pl_uring_now_ns();
        if (now_ns >= deadline_ns) break;
        struct __kernel_timespec ts = { .tv_sec = (long long)((deadline_ns - now_ns) / 1000000000u),
                                        .tv_nsec = (long long)((deadline_ns - now_ns) % 1000000000u) };
        struct io_uring_cqe *cqe;
        r = io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1, deadline_ns == UINT64_MAX ? NULL : &ts,
                                             (sigset_t *)mask);
        uring_reap(u);
        if (r == -EINTR) return uring_ready(u, want_write) | PL_URING_INTERRUPTED;
        if (r == -ETIME) return uring_ready(u, want_write);   /* the deadline */
        r = submit_result(r);
    }
    return r < 0 ? r : bits;
}

int pl_uring_recv(pl_uring *u, pl_uring_dgram *out, size_t most) {
    recv_release(u);
    /* Completions since the last call, with those still waiting as task work when nothing
     * else is there, so that a batch is every datagram there is now. */
    uring_reap(u);
    if (u->rq_head == u->rq_tail) {
        int r = uring_poll(u);
        if (r < 0) return r;
    }
    size_t n = 0;
    while (n < most && u->rq_head != u->rq_tail) {
        recv_done *d = &u->rq[u->rq_head & (u->recv_buffers - 1)];
        struct io_uring_recvmsg_out *o = (struct io_uring_recvmsg_out *)recv_buf(u, d->bid);
        const uint8_t *payload = io_uring_recvmsg_payload(o, &u->recv_msg);
        uint32_t len = d->payload_len - d->offset < d->segment_bytes ? d->payload_len - d->offset : d->segment_bytes;
        out[n].data = payload + d->offset;
        out[n].len = len;
        out[n].from = io_uring_recvmsg_name(o);
        out[n].from_len = o->namelen < u->recv_msg.msg_namelen ? o->namelen : u->recv_msg.msg_namelen;
        n++;
        d->offset += len;
        if (d->offset >= d->payload_len) u->rq_head++;
    }
    u->st.datagrams_received += n;
    int r = recv_arm(u);
    return r < 0 ? r : (int)n;
}

/* ---- fdatasync ---- */

int pl_uring_sync(pl_uring *u, const int *fds, size_t n, size_t dirs) {
    if (u->sync_pending || u->sync_ended) return -EBUSY;
    if (n > PL_URING_SYNC_FDS_MOST || dirs > n) return -EINVAL;
    u->sync_result = 0;
    if (n == 0) { u->sync_ended = 1; return 0; }
    for (size_t i = 0; i < n; i++) {
        struct io_uring_sqe *sqe = uring_sqe(u);
        if (!sqe) return -EBUSY;   /* cannot happen once submitted: the queue has room */
        io_uring_prep_fsync(sqe, fds[i], i < n - dirs ? IORING_FSYNC_DATASYNC : 0);
        io_uring_sqe_set_data64(sqe, UD(OP_SYNC, i));
        u->sync_pending++;
    }
    return submit_result(io_uring_submit(&u->ring));
}

int pl_uring_sync_done(pl_uring *u, int *result) {
    if (!u->sync_ended) return 0;
    u->sync_ended = 0;
    *result = u->sync_result;
    return 1;
}

void pl_uring_stats_get(const pl_uring *u, pl_uring_stats *out) {
    *out = u->st;
    out->gso = u->gso;
    out->gro = u->gro;
}

/* ---- open and close ---- */

/* The one line for a ring the kernel would not set up. */
static void open_refused(int r, char *err, size_t err_len) {
    int disabled = -1;
    FILE *f = fopen("/proc/sys/kernel/io_uring_disabled", "r");
    if (f) {
        if (fscanf(f, "%d", &disabled) != 1) disabled = -1;
        fclose(f);
    }
    if (r == -ENOSYS)
        snprintf(err, err_len, "io_uring: not available: the kernel has no io_uring_setup (ENOSYS)");
    else if (r == -EPERM && disabled > 0)
        snprintf(err, err_len, "io_uring: refused: /proc/sys/kernel/io_uring_disabled is %d (EPERM)", disabled);
    else if (r == -EPERM)
        snprintf(err, err_len, "io_uring: refused by the kernel or a container's seccomp policy (EPERM)");
    else
        snprintf(err, err_len, "io_uring: cannot set up a ring: %s", strerror(-r));
}

/* Completions of this ring run as task work when the thread next enters the kernel
 * (COOP_TASKRUN: no interrupt per completion), flagged in the submission ring (TASKRUN_FLAG)
 * so that a pass enters only when there is something to collect.  Not SINGLE_ISSUER nor
 * DEFER_TASKRUN: a host may open the ring on one thread and run its loop on another.  A
 * kernel older than 5.19 gets the plain ring. */
static int open_ring(pl_uring *u, unsigned cq_entries) {
    struct io_uring_params p = { .flags = IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN |
                                          IORING_SETUP_TASKRUN_FLAG,
                                 .cq_entries = cq_entries };
    int r = io_uring_queue_init_params(URING_SQ_ENTRIES, &u->ring, &p);
    if (r == -EINVAL) {
        p = (struct io_uring_params){ .flags = IORING_SETUP_CQSIZE, .cq_entries = cq_entries };
        r = io_uring_queue_init_params(URING_SQ_ENTRIES, &u->ring, &p);
    }
    u->ring_open = r == 0;
    return r;
}

static void *map_zeroed(size_t bytes) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static int open_memory(pl_uring *u) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    u->br_bytes = (u->recv_buffers * sizeof(struct io_uring_buf) + page - 1) / page * page;
    u->recv_mem_bytes = (u->recv_buffers * u->buf_bytes + page - 1) / page * page;
    u->br = map_zeroed(u->br_bytes);
    u->recv_mem = map_zeroed(u->recv_mem_bytes);
    u->send_mem = map_zeroed((size_t)u->send_slots * URING_SLOT_BYTES);
    u->rq = calloc(u->recv_buffers, sizeof *u->rq);
    u->spare = calloc(u->recv_buffers, sizeof *u->spare);
    u->free_slots = calloc(u->send_slots, sizeof *u->free_slots);
    u->free_ops = calloc(u->send_slots, sizeof *u->free_ops);
    u->q = calloc(u->send_slots, sizeof *u->q);
    u->ops = calloc(u->send_slots, sizeof *u->ops);
    if (!u->br || !u->recv_mem || !u->send_mem || !u->rq || !u->spare || !u->free_slots || !u->free_ops || !u->q || !u->ops)
        return -ENOMEM;
    for (unsigned i = 0; i < u->send_slots; i++) {
        u->free_slots[i] = (uint16_t)(u->send_slots - 1 - i);
        u->free_ops[i] = (uint16_t)(u->send_slots - 1 - i);
    }
    u->free_slots_len = u->free_ops_len = u->send_slots;
    return 0;
}

/* Registers the provided-buffer ring and hands the kernel every buffer. */
static int open_buffers(pl_uring *u, char *err, size_t err_len) {
    struct io_uring_buf_reg reg = { .ring_addr = (uint64_t)(uintptr_t)u->br, .ring_entries = u->recv_buffers,
                                    .bgid = URING_BGID };
    int r = io_uring_register_buf_ring(&u->ring, &reg, 0);
    if (r < 0) {
        snprintf(err, err_len, "io_uring: the kernel has no provided-buffer rings (Linux 5.19 or later): %s",
                 strerror(-r));
        return r;
    }
    io_uring_buf_ring_init(u->br);
    for (unsigned bid = u->recv_buffers; bid-- > 0;) recv_give_back(u, bid);
    u->bufs_target = u->recv_buffers < URING_RECV_BUFFERS_FIRST ? u->recv_buffers : URING_RECV_BUFFERS_FIRST;
    recv_refill(u);
    return 0;
}

/* GSO and GRO where the kernel takes them; a socket in blocking mode (see pl_uring.h). */
static int open_socket(pl_uring *u, const pl_uring_config *cfg) {
    int zero = 0, one = 1;
    u->gso = cfg->gso && setsockopt(u->fd, SOL_UDP, UDP_SEGMENT, &zero, sizeof zero) == 0;
    u->gro = cfg->gro && setsockopt(u->fd, SOL_UDP, UDP_GRO, &one, sizeof one) == 0;
    int fl = fcntl(u->fd, F_GETFL);
    if (fl < 0 || fcntl(u->fd, F_SETFL, fl & ~O_NONBLOCK) < 0) return -errno;
    return 0;
}

static int open_check_config(const pl_uring_config *cfg, char *err, size_t err_len) {
    unsigned rb = cfg->recv_buffers;
    if ((rb & (rb - 1)) != 0 || rb > PL_URING_RECV_BUFFERS_MOST) {
        snprintf(err, err_len, "io_uring: receive buffers must be a power of two up to %u, not %u",
                 PL_URING_RECV_BUFFERS_MOST, rb);
        return -EINVAL;
    }
    if (cfg->send_slots > PL_URING_SEND_SLOTS_MOST) {
        snprintf(err, err_len, "io_uring: send slots must be at most %u, not %u", PL_URING_SEND_SLOTS_MOST,
                 cfg->send_slots);
        return -EINVAL;
    }
    return 0;
}

/* Arms the receive once and sees whether the kernel took a multishot recvmsg. */
static int open_arm(pl_uring *u, char *err, size_t err_len) {
    int r = recv_arm(u);
    if (r == 0) r = uring_poll(u);
    if (r == 0 && u->recv_unsupported) r = -EINVAL;
    if (r < 0)
        snprintf(err, err_len, "io_uring: the kernel has no multishot recvmsg (Linux 6.0 or later): %s",
                 strerror(-r));
    return r;
}

static int open_steps(pl_uring *u, const pl_uring_config *cfg, char *err, size_t err_len) {
    int r = open_socket(u, cfg);
    if (r < 0) {
        snprintf(err, err_len, "io_uring: cannot set up the socket: %s", strerror(-r));
        return r;
    }
    u->recv_buffers = cfg->recv_buffers ? cfg->recv_buffers
                    : u->gro ? URING_RECV_BUFFERS_GRO_DEFAULT : URING_RECV_BUFFERS_DEFAULT;
    u->send_slots = cfg->send_slots ? cfg->send_slots : URING_SEND_SLOTS_DEFAULT;
    /* The kernel writes the control message right after the name: a name room of a multiple
     * of 8 bytes keeps that cmsghdr aligned. */
    u->recv_msg.msg_namelen = (sizeof(struct sockaddr_in6) + 7) / 8 * 8;
    u->recv_msg.msg_controllen = u->gro ? CMSG_SPACE(sizeof(int)) : 0;
    u->buf_bytes = sizeof(struct io_uring_recvmsg_out) + u->recv_msg.msg_namelen + u->recv_msg.msg_controllen +
                   (u->gro ? URING_GRO_PAYLOAD_MOST : PL_URING_DATAGRAM_MOST);
    u->buf_bytes = (u->buf_bytes + 63) / 64 * 64;
    if ((r = open_memory(u)) < 0) {
        snprintf(err, err_len, "io_uring: out of memory for %u buffers", u->recv_buffers);
        return r;
    }
    /* Each buffer, each send and each fdatasync can have one completion waiting. */
    r = open_ring(u, u->recv_buffers + u->send_slots + PL_URING_SYNC_FDS_MOST + URING_SQ_ENTRIES);
    if (r < 0) {
        open_refused(r, err, err_len);
        return r;
    }
    u->st.gso = u->gso;
    if ((r = open_buffers(u, err, err_len)) < 0) return r;
    return open_arm(u, err, err_len);
}

int pl_uring_open(pl_uring **out, int fd, const pl_uring_config *cfg, char *err, size_t err_len) {
    static const pl_uring_config defaults = { 0, 0, 1, 1 };
    *out = NULL;
    if (!cfg) cfg = &defaults;
    int r = open_check_config(cfg, err, err_len);
    if (r < 0) return r;
    pl_uring *u = calloc(1, sizeof *u);
    if (!u) {
        snprintf(err, err_len, "io_uring: out of memory");
        return -ENOMEM;
    }
    u->fd = fd;
    u->slot_taken = -1;
    u->watched = -1;
    if ((r = open_steps(u, cfg, err, err_len)) < 0) {
        pl_uring_close(u);
        return r;
    }
    *out = u;
    return 0;
}

/* Cancels the receive and waits out sends and fdatasyncs before the memory they use goes:
 * the kernel writes into receive buffers and reads send slots until their completion. */
static void close_drain(pl_uring *u) {
    struct io_uring_sqe *sqe = uring_sqe(u);
    if (sqe) {
        io_uring_prep_cancel64(sqe, UD(OP_RECV, 0), 0);
        io_uring_sqe_set_data64(sqe, UD(OP_CANCEL, 0));
    }
    if (u->errpoll_armed && (sqe = uring_sqe(u)) != NULL) {
        io_uring_prep_poll_remove(sqe, UD(OP_ERRPOLL, 0));
        io_uring_sqe_set_data64(sqe, UD(OP_CANCEL, 0));
    }
    int r = send_build(u);
    if (r == 0) r = pl_uring_watch(u, -1);
    while (r == 0 && (u->recv_armed || u->errpoll_armed || u->sends_in_flight || u->sync_pending)) {
        r = submit_result(io_uring_submit_and_wait(&u->ring, 1));
        uring_reap(u);
    }
}

void pl_uring_close(pl_uring *u) {
    if (!u) return;
    if (u->ring_open) {
        close_drain(u);
        io_uring_queue_exit(&u->ring);
    }
    if (u->br) munmap(u->br, u->br_bytes);
    if (u->recv_mem) munmap(u->recv_mem, u->recv_mem_bytes);
    if (u->send_mem) munmap(u->send_mem, (size_t)u->send_slots * URING_SLOT_BYTES);
    free(u->rq);
    free(u->spare);
    free(u->free_slots);
    free(u->free_ops);
    free(u->q);
    free(u->ops);
    free(u);
}
