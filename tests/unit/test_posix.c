/* test_posix.c: the POSIX shim end to end on loopback: a sender and a receiver endpoint,
 * each in its own pl_driver loop and thread over real UDP sockets (pl_io_posix_open); and
 * the same cases over the io_uring backend (pl_io_uring_open), as NAME_uring.
 * The receiving host here keeps records in memory and calls pure_link_stored at once, so
 * that the driver and the backend are tested alone (the store has its own tests and the
 * tool's tests run the whole). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "posix_pair.h"

/* The backend under test: every case runs over POSIX, and again over io_uring as NAME_uring
 * (the same behaviour is asked of both). */
typedef int (*io_open_fn)(pl_io **out, const pl_io_options *options, char *err, size_t err_len);
static io_open_fn io_open = pl_io_posix_open;
#define ALSO_ON_URING(name) \
    static void name##_uring(void) { io_open = pl_io_uring_open; name(); }

/* io_uring refused here (a container's seccomp policy): nothing of it to test. */
static void skip_if_refused(int rc, const char *err) {
    if (io_open == pl_io_uring_open && (rc == -EPERM || rc == -ENOSYS)) SKIP(err);
}

/* Runs a transfer and checks it: every record stored once, bytes as sent, the closed
 * sender's figures still readable, the receiver's epochs counted. */
static void transfer(const char *recv_bind, const char *send_bind, int offload, int64_t count, int64_t move_at,
                     pp_result *r) {
    pp_options o = {.recv_bind = recv_bind, .send_bind = send_bind, .offload = offload, .count = count,
                    .check = 1, .move_at = move_at, .io_open = io_open};
    int rc = pp_transfer(&o, r);
    skip_if_refused(r->open_error, r->why);
    CHECK(rc == 0);
    if (!r->ok) fprintf(stderr, "  %s\n", r->why);
    fprintf(stderr, "  %lld records, %lld duplicates, %lld bad, gso batches %llu, gro batches %llu\n",
            (long long)r->records, (long long)r->duplicates, (long long)r->bad,
            (unsigned long long)r->send_io.gso_batches, (unsigned long long)r->recv_io.gro_batches);
    CHECK(r->ok);
    CHECK_EQ_U(r->records, count);
    CHECK_EQ_U(r->duplicates, 0);
    CHECK_EQ_U(r->bad, 0);
    CHECK_EQ_U(r->moves, move_at ? 1 : 0);
    CHECK_EQ_U(r->send_stats.records_stored, count);
    CHECK(r->recv_stats.epochs >= 1);
    /* The sender receives only after a wait that saw datagrams: per such wake-up, calls
     * that each find some and one that finds none (a paced sender wakes mostly to send);
     * over POSIX not even that one, when the call before found fewer than it asked for. */
    CHECK(r->send_io.recv_calls <= 2 * r->send_io.datagrams_in + 8);
    if (io_open == pl_io_posix_open) CHECK(r->send_io.recv_calls <= r->send_io.datagrams_in + 8);
}

static void ipv4_with_gso_and_gro_exactly_once(void) {
    pp_result r;
    transfer("127.0.0.1:0", "127.0.0.1:0", 1, 20000, 0, &r);
}

static void ipv6_without_offloads_exactly_once(void) {
    pp_result r;
    transfer("[::1]:0", "[::1]:0", 0, 5000, 0, &r);
}

static void ipv4_to_a_dual_stack_receiver(void) {
    pp_result r;
    transfer(":0", "127.0.0.1:0", 1, 2000, 0, &r); /* [::] takes IPv4 as mapped addresses */
}

static void sender_port_changes_mid_transfer(void) {
    pp_result r;
    transfer("127.0.0.1:0", "127.0.0.1:0", 1, 10000, 4000, &r);
    /* The run moved once, and the sender heard a CHALLENGE at each of its two addresses.
     * The first address is validated by its RESPONSE before the records go; the second
     * only if the sender's RESPONSE from there goes out before everything is stored: the
     * transfer does not wait for it (replies to the new address stay within 3x meanwhile,
     * which ACKs of full data packets never reach), and a sender that hears everything
     * stored closes with the RESPONSE still due.  So 1 or 2, never 0 or more than 2. */
    fprintf(stderr, "  moves %llu, validated %llu, challenges heard %llu\n", (unsigned long long)r.recv_stats.address_moves,
            (unsigned long long)r.recv_stats.addresses_validated, (unsigned long long)r.send_stats.challenges_received);
    CHECK_EQ_U(r.recv_stats.address_moves, 1);
    CHECK(r.recv_stats.addresses_validated >= 1 && r.recv_stats.addresses_validated <= 2);
    CHECK(r.send_stats.challenges_received >= 2);
}

static void address_parsing_edges(void) {
    pure_link_addr a;
    char err[256], buf[64];
    CHECK(pl_addr_parse("127.0.0.1:65535", &a, err, sizeof err) == 0);
    CHECK(strcmp(pl_addr_format(&a, buf, sizeof buf), "127.0.0.1:65535") == 0);
    CHECK(pl_addr_parse("127.0.0.1:65536", &a, err, sizeof err) != 0);
    CHECK(strstr(err, "0..65535") != NULL);
    CHECK(pl_addr_parse("[::1]:9", &a, err, sizeof err) == 0);
    CHECK(strcmp(pl_addr_format(&a, buf, sizeof buf), "[::1]:9") == 0);
    CHECK(pl_addr_parse("::1:9", &a, err, sizeof err) != 0);  /* IPv6 needs brackets */
    CHECK(pl_addr_parse("127.0.0.1", &a, err, sizeof err) != 0);
    CHECK(pl_addr_parse("127.0.0.1:", &a, err, sizeof err) != 0);
    CHECK(pl_addr_parse(":4433", &a, err, sizeof err) == 0 && pl_addr_port(&a) == 4433);
}

static void address_in_use_is_one_line(void) {
    pp_node a = {0}, b = {0};
    pp_options po = {.offload = 1, .io_open = io_open};
    int rc = pp_open_io(&a, &po, "127.0.0.1:0");
    skip_if_refused(a.open_rc, a.err);
    CHECK(rc == 0);
    CHECK(strcmp(a.io->ops->name, io_open == pl_io_posix_open ? "posix" : "uring") == 0);
    pure_link_addr at;
    CHECK(a.io->ops->local(a.io, &at) == 0);
    char text[64], err[256];
    pl_addr_format(&at, text, sizeof text);
    pl_io_options o = {.gso = 1, .gro = 1};
    CHECK(pl_addr_parse(text, &o.bind, err, sizeof err) == 0);
    CHECK(io_open(&b.io, &o, err, sizeof err) == -EADDRINUSE);
    fprintf(stderr, "  %s\n", err);
    CHECK(strstr(err, "Address already in use") != NULL && strchr(err, '\n') == NULL);
    a.io->ops->close(a.io);
}

/* Sends one datagram of `len` bytes to `to` through the backend's batch. */
static void send_one(pl_io *io, const pure_link_addr *to, size_t len) {
    pure_link_addr *slot_to;
    uint8_t *buf = io->ops->slot(io, &slot_to);
    CHECK(buf != NULL);
    memset(buf, 0x5a, len);
    *slot_to = *to;
    io->ops->push(io, len);
    io->ops->flush(io);
}

/* A datagram to a closed port on loopback draws an ICMP port unreachable: the backend reads
 * it from the error queue as a hint for that address (the receive does not fail on the
 * error the ICMP left), and the next datagram still goes (a send that the ICMP's error
 * fails once is made again, not dropped). */
static void closed_port_is_a_hint(void) {
    pp_node a = {0};
    pp_options po = {.offload = 1, .io_open = io_open};
    int rc = pp_open_io(&a, &po, "127.0.0.1:0");
    skip_if_refused(a.open_rc, a.err);
    CHECK(rc == 0);
    /* A port that was just free and is closed again. */
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sin;
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sin, sizeof sin) == 0 && getsockname(fd, (struct sockaddr *)&sin, &sl) == 0);
    close(fd);
    pure_link_addr closed;
    CHECK(pl_addr_from_sockaddr((struct sockaddr *)&sin, &closed) == 0);
    pl_io *io = a.io;
    int port_hints = 0;
    uint64_t end_ns = pl_now_ns() + 2 * PP_S;
    for (int sent = 0; pl_now_ns() < end_ns && (sent < 2 || port_hints == 0);) {
        if (sent < 2) send_one(io, &closed, 100), sent++;
        CHECK(io->ops->wait(io, pl_now_ns() + PP_S / 20, 0) >= 0);
        const pl_dgram *d;
        CHECK(io->ops->recv(io, &d) >= 0);
        const pl_io_hint *h;
        int n = io->ops->hints(io, &h);
        for (int i = 0; i < n; i++) {
            CHECK(h[i].kind == PL_IO_HINT_PORT_UNREACHABLE);
            CHECK(h[i].to.len == closed.len && memcmp(h[i].to.bytes, closed.bytes, closed.len) == 0);
            port_hints++;
        }
    }
    fprintf(stderr, "  %d port-unreachable hints; %llu error-queue messages, %llu retries\n", port_hints,
            (unsigned long long)io->stats.errqueue_messages, (unsigned long long)io->stats.retries);
    CHECK(port_hints >= 1);
    CHECK_EQ_U(io->stats.hints_unreachable, (uint64_t)port_hints);
    CHECK_EQ_U(io->stats.send_dropped, 0);
    io->ops->close(io);
}

/* Waits (at most 10 s) for the sync batch to end; returns its result, 1 if it did not. */
static int sync_wait(pl_io *io) {
    int result = 1;
    uint64_t end_ns = pl_now_ns() + 10 * PP_S;
    while (!io->ops->sync_result(io, &result) && pl_now_ns() < end_ns)
        CHECK(io->ops->wait(io, pl_now_ns() + PP_S / 10, 0) >= 0);
    return result;
}

/* A batch of more files than the POSIX backend has sync threads, and a directory: it ends
 * once, with the first error of any call; one batch at a time; the bounds at their edges. */
static void sync_batches(void) {
    pp_node a = {0};
    pp_options po = {.io_open = io_open};
    int rc = pp_open_io(&a, &po, "127.0.0.1:0");
    skip_if_refused(a.open_rc, a.err);
    CHECK(rc == 0);
    pl_io *io = a.io;
    enum { FILES = 40 };
    static int fds[PL_IO_SYNC_FDS_MOST + 1];
    for (int i = 0; i < FILES; i++) {
        char path[] = "/tmp/pl_sync_XXXXXX";
        fds[i] = mkstemp(path);
        CHECK(fds[i] >= 0);
        unlink(path);
        CHECK(write(fds[i], path, sizeof path) == (ssize_t)sizeof path);
    }
    fds[FILES] = open("/tmp", O_RDONLY | O_DIRECTORY);
    CHECK(fds[FILES] >= 0);
    int result;
    CHECK(io->ops->sync_result(io, &result) == 0);  /* none started */
    CHECK(io->ops->sync_start(io, fds, FILES + 1, FILES + 2) == -EINVAL);  /* more directories than all */
    CHECK(io->ops->sync_start(io, fds, FILES + 1, 1) == 0);
    CHECK(io->ops->sync_start(io, fds, 1, 0) == -EBUSY);
    CHECK(sync_wait(io) == 0);
    CHECK(io->ops->sync_result(io, &result) == 0);  /* told once */
    CHECK(io->ops->sync_start(io, fds, 0, 0) == 0);  /* an empty batch ends at once */
    CHECK(sync_wait(io) == 0);
    int bad = fds[FILES / 2];
    fds[FILES / 2] = 1000000;  /* not a descriptor: the whole batch fails with its errno */
    CHECK(io->ops->sync_start(io, fds, FILES, 0) == 0);
    CHECK(sync_wait(io) == -EBADF);
    fds[FILES / 2] = bad;
    for (unsigned i = FILES + 1; i <= PL_IO_SYNC_FDS_MOST; i++) fds[i] = fds[0];
    CHECK(io->ops->sync_start(io, fds, PL_IO_SYNC_FDS_MOST + 1, 0) == -EINVAL);
    CHECK(io->ops->sync_start(io, fds, PL_IO_SYNC_FDS_MOST, 0) == 0);
    CHECK(sync_wait(io) == 0);
    CHECK_EQ_U(io->stats.syncs, 4);
    io->ops->close(io);
    for (int i = 0; i <= FILES; i++) close(fds[i]);
}

ALSO_ON_URING(ipv4_with_gso_and_gro_exactly_once)
ALSO_ON_URING(ipv6_without_offloads_exactly_once)
ALSO_ON_URING(ipv4_to_a_dual_stack_receiver)
ALSO_ON_URING(sender_port_changes_mid_transfer)
ALSO_ON_URING(address_in_use_is_one_line)
ALSO_ON_URING(sync_batches)
ALSO_ON_URING(closed_port_is_a_hint)

TEST_MAIN(TEST_CASE(ipv4_with_gso_and_gro_exactly_once), TEST_CASE(ipv6_without_offloads_exactly_once),
          TEST_CASE(ipv4_to_a_dual_stack_receiver), TEST_CASE(sender_port_changes_mid_transfer),
          TEST_CASE(address_parsing_edges), TEST_CASE(address_in_use_is_one_line),
          TEST_CASE(ipv4_with_gso_and_gro_exactly_once_uring), TEST_CASE(ipv6_without_offloads_exactly_once_uring),
          TEST_CASE(ipv4_to_a_dual_stack_receiver_uring), TEST_CASE(sender_port_changes_mid_transfer_uring),
          TEST_CASE(address_in_use_is_one_line_uring), TEST_CASE(sync_batches), TEST_CASE(sync_batches_uring),
          TEST_CASE(closed_port_is_a_hint), TEST_CASE(closed_port_is_a_hint_uring))
