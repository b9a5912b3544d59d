/* test_uring.c: the io_uring driver (shims/io/pl_uring.h) over real loopback sockets and real
 * files: batches arrive whole, GSO trains and GRO buffers split into the datagrams sent,
 * the size limit and every configuration limit at its edge, the deadline, fdatasync
 * batches and their errors, and a refused io_uring (a seccomp filter) in one line, with
 * the backend chosen by name falling back to POSIX.  The end-to-end cases of both
 * backends are in test_posix.c. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "pl_io.h"
#include "pl_uring.h"

#define RECV_WITHIN_NS (10ull * 1000000000u) /* a bound that ends a broken case, never a figure */

typedef struct sock {
    int fd;
    struct sockaddr_storage addr;
    socklen_t addr_len;
} sock;

static sock sock_open(int family) {
    sock s = { .fd = socket(family, SOCK_DGRAM, 0) };
    CHECK(s.fd >= 0);
    if (family == AF_INET) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        CHECK(bind(s.fd, (struct sockaddr *)&a, sizeof a) == 0);
    } else {
        struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
        CHECK(bind(s.fd, (struct sockaddr *)&a, sizeof a) == 0);
    }
    int big = 8 << 20;   /* room for a whole batch: loopback drops only on a full queue */
    if (setsockopt(s.fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big) != 0)
        setsockopt(s.fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    s.addr_len = sizeof s.addr;
    CHECK(getsockname(s.fd, (struct sockaddr *)&s.addr, &s.addr_len) == 0);
    return s;
}

/* Where the kernel or a container refuses io_uring (a deployment pure-link supports: the
 * host falls back to POSIX, tested below) a case that needs a ring has nothing to test:
 * it is skipped (SKIP), and says why. */
static int uring_refused_here(int r) {
    return r == -EPERM || r == -ENOSYS;
}

static pl_uring *uring_on(const sock *s, unsigned recv_buffers, unsigned send_slots, int gso, int gro) {
    pl_uring_config cfg = { .recv_buffers = recv_buffers, .send_slots = send_slots, .gso = gso, .gro = gro };
    pl_uring *u = NULL;
    char err[256] = "";
    int r = pl_uring_open(&u, s->fd, &cfg, err, sizeof err);
    if (uring_refused_here(r)) SKIP(err);
    if (r != 0) fprintf(stderr, "  %s\n", err);
    CHECK(r == 0 && u);
    return u;
}

/* Closes a driver (when there is one) and the socket under it. */
static void drop(pl_uring *u, const sock *s) {
    pl_uring_close(u);
    close(s->fd);
}

/* Datagram i: its length and bytes follow from i alone, so the receiver checks both.  With
 * fixed_len set every datagram has that length (GSO trains form only of equal lengths). */
static size_t fixed_len;
static size_t dgram_len(unsigned i, size_t len_most) { return fixed_len ? fixed_len : 8 + (i * 37u) % (len_most - 7); }
static void dgram_fill(uint8_t *p, unsigned i, size_t len) {
    memcpy(p, &i, sizeof i);
    for (size_t k = sizeof i; k < len; k++) p[k] = (uint8_t)(i * 131u + k);
}
static int dgram_ok(const uint8_t *p, size_t len, size_t len_most, unsigned *index) {
    if (len < sizeof *index) return 0;
    memcpy(index, p, sizeof *index);
    if (len != dgram_len(*index, len_most)) return 0;
    for (size_t k = sizeof *index; k < len; k++)
        if (p[k] != (uint8_t)(*index * 131u + k)) return 0;
    return 1;
}

/* Receives until `want` datagrams came or the bound passed; checks each and marks seen[]. */
static unsigned recv_count(pl_uring *u, unsigned want, size_t len_most, uint8_t *seen, unsigned seen_len) {
    pl_uring_dgram d[64];
    unsigned got = 0;
    uint64_t end_ns = pl_uring_now_ns() + RECV_WITHIN_NS;
    while (got < want && pl_uring_now_ns() < end_ns) {
        CHECK(pl_uring_wait(u, pl_uring_now_ns() + 100000000u, 0, NULL) >= 0);
        int n = pl_uring_recv(u, d, 64);
        CHECK(n >= 0);
        for (int i = 0; i < n; i++, got++) {
            unsigned index;
            CHECK(dgram_ok(d[i].data, d[i].len, len_most, &index));
            if (seen) {
                CHECK(index < seen_len && !seen[index]);
                seen[index] = 1;
            }
        }
    }
    return got;
}

/* The next send slot; when all are in flight, waits (want_write) until one comes back. */
static uint8_t *slot_of(pl_uring *u) {
    uint8_t *slot;
    uint64_t end_ns = pl_uring_now_ns() + RECV_WITHIN_NS;
    while (!(slot = pl_uring_send_slot(u)) && pl_uring_now_ns() < end_ns) {
        int r = pl_uring_flush(u);
        CHECK(r == 0 || r == -EAGAIN);
        CHECK(pl_uring_wait(u, end_ns, 1, NULL) >= 0);
    }
    CHECK(slot);
    return slot;
}

static void send_batch(pl_uring *u, const sock *to, unsigned first, unsigned n, size_t len_most) {
    for (unsigned i = first; i < first + n; i++) {
        uint8_t *slot = slot_of(u);
        size_t len = dgram_len(i, len_most);
        dgram_fill(slot, i, len);
        CHECK(pl_uring_send_queue(u, len, (const struct sockaddr *)&to->addr, to->addr_len) == 0);
    }
    int r = pl_uring_flush(u);
    CHECK(r == 0 || r == -EAGAIN);
}

static void batches_arrive_whole(int family, int gso, int gro) {
    enum { TOTAL = 2000, BATCH = 100 };
    static uint8_t seen[TOTAL];
    memset(seen, 0, sizeof seen);
    sock a = sock_open(family), b = sock_open(family);
    pl_uring *ua = uring_on(&a, 0, 0, gso, 0), *ub = uring_on(&b, 0, 0, 0, gro);
    for (unsigned first = 0; first < TOTAL; first += BATCH) {
        send_batch(ua, &b, first, BATCH, PL_URING_DATAGRAM_MOST);
        CHECK_EQ_U(recv_count(ub, BATCH, PL_URING_DATAGRAM_MOST, seen, TOTAL), BATCH);
    }
    pl_uring_stats st, sa;
    pl_uring_stats_get(ub, &st);
    pl_uring_stats_get(ua, &sa);
    CHECK_EQ_U(st.datagrams_received, TOTAL);
    CHECK(sa.gso == gso && st.gro == gro);   /* this kernel has both; a fallback would show here */
    if (gso) CHECK(sa.gso_sendmsgs > 0 && sa.sendmsgs < TOTAL);
    if (gro) CHECK(st.gro_buffers > 0);
    drop(ua, &a);
    drop(ub, &b);
}

static void ipv4_batches_arrive_whole_each_once(void) { batches_arrive_whole(AF_INET, 0, 0); }
static void ipv6_batches_arrive_whole_each_once(void) { batches_arrive_whole(AF_INET6, 0, 0); }
static void gso_and_gro_batches_arrive_whole_each_once(void) {
    fixed_len = PL_URING_DATAGRAM_MOST;
    batches_arrive_whole(AF_INET, 1, 1);
    fixed_len = 0;
}

/* The sender's address comes with each datagram: a reply can go back to it. */
static void from_names_the_sender(void) {
    sock a = sock_open(AF_INET6), b = sock_open(AF_INET6);
    pl_uring *ub = uring_on(&b, 0, 0, 0, 0);
    uint8_t p[64];
    dgram_fill(p, 5, dgram_len(5, sizeof p));
    CHECK(sendto(a.fd, p, dgram_len(5, sizeof p), 0, (struct sockaddr *)&b.addr, b.addr_len) > 0);
    CHECK(pl_uring_wait(ub, pl_uring_now_ns() + RECV_WITHIN_NS, 0, NULL) == PL_URING_READABLE);
    pl_uring_dgram d[4];
    CHECK(pl_uring_recv(ub, d, 4) == 1);
    CHECK(d[0].from_len == a.addr_len);
    CHECK_MEM(d[0].from, &a.addr, a.addr_len);
    drop(NULL, &a);
    drop(ub, &b);
}

/* One sendmsg carries a train to one destination; a plain socket receives its datagrams
 * one by one with the lengths sent (the last one shorter). */
static void gso_train_is_one_sendmsg_and_arrives_as_datagrams(void) {
    sock a = sock_open(AF_INET), b = sock_open(AF_INET);
    pl_uring *ua = uring_on(&a, 0, 0, 1, 0);
    pl_uring_stats st;
    pl_uring_stats_get(ua, &st);
    if (!st.gso) { fprintf(stderr, "  (no UDP GSO in this kernel: nothing to test)\n"); return; }
    for (unsigned i = 0; i < 11; i++) {
        uint8_t *slot = pl_uring_send_slot(ua);
        size_t len = i < 10 ? 1200 : 300;
        memset(slot, (int)i, len);
        CHECK(pl_uring_send_queue(ua, len, (struct sockaddr *)&b.addr, b.addr_len) == 0);
    }
    CHECK(pl_uring_flush(ua) == 0);
    CHECK(pl_uring_wait(ua, 0, 0, NULL) >= 0);
    pl_uring_stats_get(ua, &st);
    CHECK_EQ_U(st.sendmsgs, 1);
    CHECK_EQ_U(st.gso_sendmsgs, 1);
    for (unsigned i = 0; i < 11; i++) {
        uint8_t p[2048];
        ssize_t n = recv(b.fd, p, sizeof p, 0);
        CHECK_EQ_U(n, i < 10 ? 1200 : 300);
        CHECK(p[0] == i && p[n - 1] == i);
    }
    drop(ua, &a);
    drop(NULL, &b);
}

/* A train ends at the segment limit, at a change of destination and after a short one. */
static void gso_trains_split_where_they_must(void) {
    sock a = sock_open(AF_INET), b = sock_open(AF_INET), c = sock_open(AF_INET);
    pl_uring *ua = uring_on(&a, 0, 0, 1, 0);
    pl_uring_stats st;
    pl_uring_stats_get(ua, &st);
    if (!st.gso) return;
    const sock *to[] = { &b, &b, &c, &b };
    size_t lens[] = { 500, 400, 500, 500 };   /* 500 then a short 400: one train */
    for (unsigned i = 0; i < 4; i++) {
        memset(pl_uring_send_slot(ua), 1, lens[i]);
        CHECK(pl_uring_send_queue(ua, lens[i], (struct sockaddr *)&to[i]->addr, to[i]->addr_len) == 0);
    }
    for (unsigned i = 0; i < PL_URING_GSO_SEGMENTS_MOST + 1; i++) {   /* 65 of 100 B to c */
        memset(pl_uring_send_slot(ua), 2, 100);
        CHECK(pl_uring_send_queue(ua, 100, (struct sockaddr *)&c.addr, c.addr_len) == 0);
    }
    CHECK(pl_uring_flush(ua) == 0);
    CHECK(pl_uring_wait(ua, 0, 0, NULL) >= 0);
    pl_uring_stats_get(ua, &st);
    /* [b 500, b 400] [c 500] [b 500] [c 100 x 64] [c 100] */
    CHECK_EQ_U(st.sendmsgs, 5);
    CHECK_EQ_U(st.gso_sendmsgs, 2);
    drop(ua, &a);
    drop(NULL, &b);
    drop(NULL, &c);
}

/* PL_URING_DATAGRAM_MOST passes both ways; one byte more is refused on send and dropped
 * (and counted) on receive. */
static void datagram_limit_at_its_edge(void) {
    sock a = sock_open(AF_INET), b = sock_open(AF_INET);
    pl_uring *ua = uring_on(&a, 0, 0, 0, 0), *ub = uring_on(&b, 0, 0, 0, 0);
    CHECK(pl_uring_send_slot(ua));
    CHECK(pl_uring_send_queue(ua, PL_URING_DATAGRAM_MOST + 1, (struct sockaddr *)&b.addr, b.addr_len) == -EMSGSIZE);
    CHECK(pl_uring_send_queue(ua, PL_URING_DATAGRAM_MOST, (struct sockaddr *)&b.addr, b.addr_len) == 0);
    CHECK(pl_uring_flush(ua) == 0);
    static uint8_t big[PL_URING_DATAGRAM_MOST + 1];
    CHECK(sendto(a.fd, big, sizeof big, 0, (struct sockaddr *)&b.addr, b.addr_len) == (ssize_t)sizeof big);
    CHECK(sendto(a.fd, big, 1, 0, (struct sockaddr *)&b.addr, b.addr_len) == 1);   /* a marker after it */
    pl_uring_dgram d[4];
    size_t lens[2] = { 0, 0 };
    unsigned got = 0;
    uint64_t end_ns = pl_uring_now_ns() + RECV_WITHIN_NS;
    while (got < 2 && pl_uring_now_ns() < end_ns) {
        CHECK(pl_uring_wait(ub, pl_uring_now_ns() + 100000000u, 0, NULL) >= 0);
        int n = pl_uring_recv(ub, d, 4);
        for (int i = 0; i < n && got < 2; i++) lens[got++] = d[i].len;
    }
    CHECK(got == 2 && lens[0] == PL_URING_DATAGRAM_MOST && lens[1] == 1);
    pl_uring_stats st;
    pl_uring_stats_get(ub, &st);
    CHECK_EQ_U(st.dropped_too_big, 1);
    drop(ua, &a);
    drop(ub, &b);
}

/* Four buffers for 64 waiting datagrams: the multishot receive runs dry, is armed again,
 * and every datagram still comes. */
static void receive_survives_running_out_of_buffers(void) {
    sock a = sock_open(AF_INET), b = sock_open(AF_INET);
    pl_uring *ub = uring_on(&b, 4, 0, 0, 0);
    for (unsigned i = 0; i < 64; i++) {
        uint8_t p[PL_URING_DATAGRAM_MOST];
        size_t len = dgram_len(i, sizeof p);
        dgram_fill(p, i, len);
        CHECK(sendto(a.fd, p, len, 0, (struct sockaddr *)&b.addr, b.addr_len) == (ssize_t)len);
    }
    uint8_t seen[64] = { 0 };
    CHECK_EQ_U(recv_count(ub, 64, PL_URING_DATAGRAM_MOST, seen, 64), 64);
    pl_uring_stats st;
    pl_uring_stats_get(ub, &st);
    CHECK(st.recv_rearms >= 1);
    drop(NULL, &a);
    drop(ub, &b);
}

static int temp_file(const char *text) {
    char path[] = "/tmp/pl_uring_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    return fd;
}

/* One send slot: once it is in flight there is none (flush says -EAGAIN) until the send
 * completes, which a wait with want_write reports. */
static void the_last_slot_in_flight_asks_for_a_wait(void) {
    sock a = sock_open(AF_INET), b = sock_open(AF_INET);
    pl_uring *ua = uring_on(&a, 0, 1, 0, 0);
    uint8_t *slot = pl_uring_send_slot(ua);
    CHECK(slot && pl_uring_send_slot(ua) == slot);   /* the same until it is queued */
    memset(slot, 9, 100);
    CHECK(pl_uring_send_queue(ua, 100, (struct sockaddr *)&b.addr, b.addr_len) == 0);
    CHECK(pl_uring_send_queue(ua, 100, (struct sockaddr *)&b.addr, b.addr_len) == -EINVAL);   /* no slot */
    CHECK(pl_uring_flush(ua) == -EAGAIN);
    int bits = 0;
    uint64_t end_ns = pl_uring_now_ns() + RECV_WITHIN_NS;
    while (!(bits & PL_URING_WRITABLE) && pl_uring_now_ns() < end_ns) bits = pl_uring_wait(ua, end_ns, 1, NULL);
    CHECK(bits == PL_URING_WRITABLE);
    CHECK(pl_uring_send_slot(ua) != NULL);
    uint8_t p[200];
    CHECK(recv(b.fd, p, sizeof p, 0) == 100 && p[99] == 9);
    drop(ua, &a);
    drop(NULL, &b);
}

/* A pipe is reported readable once written to, and no more once unwatched; a regular file
 * cannot be watched (it never blocks). */
static void watched_descriptor_is_reported(void) {
    sock s = sock_open(AF_INET);
    pl_uring *u = uring_on(&s, 0, 0, 0, 0);
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(pl_uring_watch(u, p[0]) == 0);
    CHECK(pl_uring_wait(u, pl_uring_now_ns() + 10000000u, 0, NULL) == 0);
    CHECK(write(p[1], "r", 1) == 1);
    CHECK(pl_uring_wait(u, pl_uring_now_ns() + RECV_WITHIN_NS, 0, NULL) == PL_URING_WATCHED);
    char c;
    CHECK(read(p[0], &c, 1) == 1);
    CHECK(pl_uring_wait(u, pl_uring_now_ns() + 10000000u, 0, NULL) == 0);   /* drained: quiet */
    CHECK(pl_uring_watch(u, -1) == 0);
    CHECK(write(p[1], "r", 1) == 1);
    CHECK(pl_uring_wait(u, pl_uring_now_ns() + 10000000u, 0, NULL) == 0);
    int f = temp_file("x");
    CHECK(pl_uring_watch(u, f) == -EPERM);
    close(f);
    close(p[0]);
    close(p[1]);
    drop(u, &s);
}

typedef struct thread_arg {
    pl_uring *u;
    unsigned got;
} thread_arg;

static void *receive_100(void *arg) {
    thread_arg *t = arg;
    t->got = recv_count(t->u, 100, PL_URING_DATAGRAM_MOST, NULL, 0);
    return NULL;
}

/* A host may open the ring on one thread and run its loop on another. */
static void ring_runs_on_another_thread_than_its_opener(void) {
    sock a = sock_open(AF_INET), b = sock_open(AF_INET);
    pl_uring *ua = uring_on(&a, 0, 0, 0, 0), *ub = uring_on(&b, 0, 0, 0, 0);
    thread_arg t = { ub, 0 };
    pthread_t th;
    CHECK(pthread_create(&th, NULL, receive_100, &t) == 0);
    send_batch(ua, &b, 0, 100, PL_URING_DATAGRAM_MOST);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK_EQ_U(t.got, 100);
    drop(ua, &a);
    drop(ub, &b);
}

static void on_alarm(int sig) { (void)sig; }

/* A signal blocked outside the wait and let in by its mask ends the wait, and says so. */
static void signal_in_the_wait_mask_interrupts_it(void) {
    sock s = sock_open(AF_INET);
    pl_uring *u = uring_on(&s, 0, 0, 0, 0);
    struct sigaction sa = { .sa_handler = on_alarm };   /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
    sigset_t block, during;
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    CHECK(sigprocmask(SIG_BLOCK, &block, &during) == 0);
    sigdelset(&during, SIGALRM);
    struct itimerval it = { .it_value = { .tv_usec = 20000 } };
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
    int bits = pl_uring_wait(u, pl_uring_now_ns() + RECV_WITHIN_NS, 0, &during);
    CHECK(bits == PL_URING_INTERRUPTED);
    CHECK(sigprocmask(SIG_UNBLOCK, &block, NULL) == 0);
    drop(u, &s);
}

/* Two send slots for 300 datagrams: a slot is waited for, never reused while in flight. */
static void sends_wait_for_a_free_slot(void) {
    enum { TOTAL = 300 };
    static uint8_t seen[TOTAL];
    memset(seen, 0, sizeof seen);
    sock a = sock_open(AF_INET), b = sock_open(AF_INET);
    pl_uring *ua = uring_on(&a, 0, 2, 0, 0), *ub = uring_on(&b, 0, 0, 0, 0);
    send_batch(ua, &b, 0, TOTAL, PL_URING_DATAGRAM_MOST);
    CHECK_EQ_U(recv_count(ub, TOTAL, PL_URING_DATAGRAM_MOST, seen, TOTAL), TOTAL);
    drop(ua, &a);
    drop(ub, &b);
}

static int open_result(const sock *s, unsigned recv_buffers, unsigned send_slots) {
    pl_uring_config cfg = { .recv_buffers = recv_buffers, .send_slots = send_slots };
    pl_uring *u = NULL;
    char err[256];
    int r = pl_uring_open(&u, s->fd, &cfg, err, sizeof err);
    if (uring_refused_here(r)) SKIP(err);
    if (r == 0) pl_uring_close(u);
    return r;
}

static void config_limits_at_their_edges(void) {
    sock s = sock_open(AF_INET);
    CHECK(open_result(&s, 1, 1) == 0);
    CHECK(open_result(&s, 3, 0) == -EINVAL);
    CHECK(open_result(&s, PL_URING_RECV_BUFFERS_MOST, 0) == 0);
    CHECK(open_result(&s, PL_URING_RECV_BUFFERS_MOST * 2, 0) == -EINVAL);
    CHECK(open_result(&s, 0, PL_URING_SEND_SLOTS_MOST) == 0);
    CHECK(open_result(&s, 0, PL_URING_SEND_SLOTS_MOST + 1) == -EINVAL);
    close(s.fd);
}

/* With nothing to receive the wait lasts until the deadline, never less; a deadline already
 * past returns at once; a datagram already waiting ends even a wait without deadline. */
static void wait_keeps_the_deadline(void) {
    sock a = sock_open(AF_INET), b = sock_open(AF_INET);
    pl_uring *ub = uring_on(&b, 0, 0, 0, 0);
    uint64_t deadline_ns = pl_uring_now_ns() + 20000000u;
    CHECK(pl_uring_wait(ub, deadline_ns, 0, NULL) == 0);
    CHECK(pl_uring_now_ns() >= deadline_ns);
    pl_uring_dgram d[2];
    CHECK(pl_uring_recv(ub, d, 2) == 0);
    CHECK(pl_uring_wait(ub, 0, 0, NULL) == 0);
    CHECK(pl_uring_wait(ub, 0, 1, NULL) == PL_URING_WRITABLE);   /* every slot is free */
    CHECK(sendto(a.fd, "x", 1, 0, (struct sockaddr *)&b.addr, b.addr_len) == 1);
    CHECK(pl_uring_wait(ub, UINT64_MAX, 0, NULL) == PL_URING_READABLE);
    CHECK(pl_uring_recv(ub, d, 2) == 1);
    drop(NULL, &a);
    drop(ub, &b);
}


/* Waits for the fdatasync batch to end and returns its result. */
static int sync_result(pl_uring *u) {
    int result = 1;
    uint64_t end_ns = pl_uring_now_ns() + RECV_WITHIN_NS;
    while (!pl_uring_sync_done(u, &result) && pl_uring_now_ns() < end_ns)
        CHECK(pl_uring_wait(u, pl_uring_now_ns() + 100000000u, 0, NULL) >= 0);
    return result;
}

/* A batch ends once, after every descriptor synced; one batch at a time. */
static void fdatasync_batch_ends_once(void) {
    sock s = sock_open(AF_INET);
    pl_uring *u = uring_on(&s, 0, 0, 0, 0);
    int fds[3] = { temp_file("one"), temp_file("two"), temp_file("three") };
    int result;
    CHECK(pl_uring_sync_done(u, &result) == 0);
    CHECK(pl_uring_sync(u, fds, 3, 0) == 0);
    CHECK(pl_uring_sync(u, fds, 1, 0) == -EBUSY);
    CHECK(sync_result(u) == 0);
    CHECK(pl_uring_sync_done(u, &result) == 0);
    pl_uring_stats st;
    pl_uring_stats_get(u, &st);
    CHECK_EQ_U(st.fdatasyncs, 3);
    CHECK(pl_uring_sync(u, fds, 0, 0) == 0);   /* an empty batch ends at once */
    CHECK(pl_uring_sync_done(u, &result) == 1 && result == 0);
    /* Two files and a directory (its fsync makes a new name in it durable). */
    int both[3] = { fds[0], fds[1], open("/tmp", O_RDONLY | O_DIRECTORY) };
    CHECK(both[2] >= 0);
    CHECK(pl_uring_sync(u, both, 3, 4) == -EINVAL);  /* more directories than descriptors */
    CHECK(pl_uring_sync(u, both, 3, 1) == 0);
    CHECK(sync_result(u) == 0);
    pl_uring_stats_get(u, &st);
    CHECK_EQ_U(st.fdatasyncs, 6);
    close(both[2]);
    pl_uring_close(u);
    for (int i = 0; i < 3; i++) close(fds[i]);
    close(s.fd);
}

/* A descriptor that cannot be synced fails the whole batch with its errno. */
static void fdatasync_error_fails_the_batch(void) {
    sock s = sock_open(AF_INET);
    pl_uring *u = uring_on(&s, 0, 0, 0, 0);
    int fds[2] = { temp_file("good"), 1000000 };
    CHECK(pl_uring_sync(u, fds, 2, 0) == 0);
    CHECK(sync_result(u) == -EBADF);
    pl_uring_close(u);
    close(fds[0]);
    close(s.fd);
}

static void fdatasync_batch_limit_at_its_edge(void) {
    sock s = sock_open(AF_INET);
    pl_uring *u = uring_on(&s, 0, 0, 0, 0);
    static int fds[PL_URING_SYNC_FDS_MOST + 1];
    int fd = temp_file("x");
    for (unsigned i = 0; i <= PL_URING_SYNC_FDS_MOST; i++) fds[i] = fd;
    CHECK(pl_uring_sync(u, fds, PL_URING_SYNC_FDS_MOST + 1, 0) == -EINVAL);
    CHECK(pl_uring_sync(u, fds, PL_URING_SYNC_FDS_MOST, 0) == 0);
    CHECK(sync_result(u) == 0);
    pl_uring_stats st;
    pl_uring_stats_get(u, &st);
    CHECK_EQ_U(st.fdatasyncs, PL_URING_SYNC_FDS_MOST);
    pl_uring_close(u);
    close(fd);
    close(s.fd);
}

/* In a child: io_uring_setup fails with `errno_value` (as a container's seccomp profile
 * makes it), and pl_uring_open says so in one line.  Exit 0 when it did. */
static int refused_child(int errno_value, const char *expect) {
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)errno_value),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { .len = sizeof filter / sizeof filter[0], .filter = filter };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        return 2;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    pl_uring *u = NULL;
    char err[256] = "";
    int r = pl_uring_open(&u, fd, NULL, err, sizeof err);
    fprintf(stderr, "  %s\n", err);
    if (r != -errno_value || u || !strstr(err, expect) || strchr(err, '\n')) return 1;
    /* The backends: "uring" says the same; "auto" goes on over plain sockets. */
    pl_io_options o = { .gso = 1, .gro = 1 };
    pl_io *io = NULL;
    char line[256] = "";
    if (pl_addr_parse("127.0.0.1:0", &o.bind, err, sizeof err) != 0) return 3;
    if (pl_io_open("uring", &io, &o, line, sizeof line) != -errno_value || strcmp(line, err) != 0) return 4;
    if (pl_io_open("auto", &io, &o, line, sizeof line) != 0 || strcmp(io->ops->name, "posix") != 0) return 5;
    io->ops->close(io);
    return 0;
}

static void refused(int errno_value, const char *expect) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) _exit(refused_child(errno_value, expect));
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void refused_by_seccomp_eperm_says_so(void) { refused(EPERM, "refused"); }
static void missing_io_uring_enosys_says_so(void) { refused(ENOSYS, "ENOSYS"); }

/* "auto" takes io_uring where it works, plain sockets elsewhere; a name that is none of the
 * three is one line. */
static void backend_by_name(void) {
    pl_io_options o = { .gso = 1, .gro = 1 };
    pl_io *io = NULL;
    char err[256];
    CHECK(pl_addr_parse("127.0.0.1:0", &o.bind, err, sizeof err) == 0);
    int refused = uring_refused_here(pl_io_uring_open(&io, &o, err, sizeof err));
    if (!refused) io->ops->close(io);
    CHECK(pl_io_open("auto", &io, &o, err, sizeof err) == 0);
    CHECK(strcmp(io->ops->name, refused ? "posix" : "uring") == 0);
    io->ops->close(io);
    CHECK(pl_io_open("posix", &io, &o, err, sizeof err) == 0 && strcmp(io->ops->name, "posix") == 0);
    io->ops->close(io);
    CHECK(pl_io_open("epoll", &io, &o, err, sizeof err) == -EINVAL);
    CHECK(strcmp(err, "--io epoll: not auto, posix or uring") == 0);
}

#define TESTS \
    TEST_CASE(ipv4_batches_arrive_whole_each_once), TEST_CASE(ipv6_batches_arrive_whole_each_once), \
    TEST_CASE(gso_and_gro_batches_arrive_whole_each_once), TEST_CASE(from_names_the_sender), \
    TEST_CASE(gso_train_is_one_sendmsg_and_arrives_as_datagrams), TEST_CASE(gso_trains_split_where_they_must), \
    TEST_CASE(datagram_limit_at_its_edge), TEST_CASE(receive_survives_running_out_of_buffers), \
    TEST_CASE(sends_wait_for_a_free_slot), TEST_CASE(the_last_slot_in_flight_asks_for_a_wait), \
    TEST_CASE(watched_descriptor_is_reported), TEST_CASE(signal_in_the_wait_mask_interrupts_it), \
    TEST_CASE(ring_runs_on_another_thread_than_its_opener), TEST_CASE(config_limits_at_their_edges), \
    TEST_CASE(wait_keeps_the_deadline), TEST_CASE(fdatasync_batch_ends_once), \
    TEST_CASE(fdatasync_error_fails_the_batch), TEST_CASE(fdatasync_batch_limit_at_its_edge), \
    TEST_CASE(refused_by_seccomp_eperm_says_so), TEST_CASE(missing_io_uring_enosys_says_so), \
    TEST_CASE(backend_by_name)
TEST_MAIN(TESTS)
