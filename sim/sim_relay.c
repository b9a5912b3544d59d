/* sim_relay.c: pure-link-sim relay, the simulator's path model in real time between two real
 * processes on loopback.
 *
 *   pure-link-sim relay LISTEN_PORT TARGET_PORT [--seed N] [--duration D] [--set 'path.K: V']...
 *
 * A client sends to 127.0.0.1:LISTEN_PORT; the relay puts each datagram on the path
 * client>server (sim_path.c: loss, Gilbert-Elliott bursts, duplication, corruption, the
 * bottleneck's rate and drop-tail queue, delay and jitter, so reordering) and, when the
 * model says it arrives, sends it from its own socket to 127.0.0.1:TARGET_PORT.  What
 * comes back to that socket goes through server>client to the latest client address.
 * `--set` takes the scenario's path keys (sim/README.md), `path.client>server.K` and
 * `path.server>client.K` for one direction.  Time is CLOCK_MONOTONIC; the model is the
 * very code the virtual-time runs use, so the fates of datagrams follow from the seed
 * and the times they came (which the machine's scheduling makes vary).  At the end (the
 * duration, SIGINT or SIGTERM) one JSON line gives each direction's counters. */
#define _GNU_SOURCE /* ppoll */
#include "sim_experiment.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sim_heap.h"
#include "sim_path.h"
#include "sim_scenario.h"
#include "sim_value.h"

#define RELAY_DATAGRAM_MOST 65536u  /* any UDP datagram */
#define RELAY_HELD_MOST 100000u     /* datagrams held for their arrival time; beyond: dropped, counted */
#define RELAY_SETS_MOST 64u
#define RELAY_SCENARIO_MOST 16384u

typedef struct relay_packet { uint32_t len; uint8_t bytes[]; } relay_packet;

typedef struct relay {
    int front, back;               /* the client's side and the server's side */
    struct sockaddr_in client, target;
    int have_client;
    sim_path paths[2];             /* 0: client > server, 1: server > client */
    sim_heap held;
    uint64_t seq, held_count, held_dropped, sent[2], send_errors;
} relay;

static volatile sig_atomic_t relay_stop;
static void on_signal(int sig) { (void)sig; relay_stop = 1; }

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int udp_bound(uint16_t port) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int big = 8 << 20;
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    }
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        fprintf(stderr, "pure-link-sim relay: cannot bind 127.0.0.1:%u: %s\n", port, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

/* The path parameters from --set lines, through the scenario parser (two nodes). */
static int relay_paths(relay *r, const char *const *sets, unsigned count, uint64_t seed) {
    char *text = malloc(RELAY_SCENARIO_MOST), err[256];
    sim_scenario *sc = calloc(1, sizeof *sc);
    size_t n = 0;
    int rc = -1;
    if (text && sc) {
        n += (size_t)snprintf(text, RELAY_SCENARIO_MOST, "node: client\nnode: server\n");
        for (unsigned i = 0; i < count && n < RELAY_SCENARIO_MOST; i++)
            n += (size_t)snprintf(text + n, RELAY_SCENARIO_MOST - n, "%s\n", sets[i]);
        if (n >= RELAY_SCENARIO_MOST) fprintf(stderr, "pure-link-sim relay: --set lines too long\n");
        else if (sim_scenario_parse(sc, text, err, sizeof err) != 0) fprintf(stderr, "pure-link-sim relay: %s\n", err);
        else {
            sim_path_params p[2];
            sim_scenario_path_params(sc, 0, 1, &p[0]);
            sim_scenario_path_params(sc, 1, 0, &p[1]);
            sim_path_init(&r->paths[0], &p[0], p[1].delay_ns, seed, "path:client>server");
            sim_path_init(&r->paths[1], &p[1], p[0].delay_ns, seed, "path:server>client");
            rc = 0;
        }
    }
    free(text);
    free(sc);
    return rc;
}

/* A datagram came in on side dir: its copies are held until the model's arrival times. */
static void relay_admit(relay *r, int dir, const uint8_t *bytes, size_t len, uint64_t now_ns) {
    sim_copy copies[SIM_PATH_COPIES_MOST];
    size_t n = sim_path_send(&r->paths[dir], now_ns, len, copies);
    for (size_t i = 0; i < n; i++) {
        if (copies[i].fate != SIM_FATE_ARRIVE) continue;
        relay_packet *p = r->held_count < RELAY_HELD_MOST ? malloc(sizeof *p + len) : NULL;
        if (p == NULL) { r->held_dropped++; continue; }
        p->len = (uint32_t)len;
        memcpy(p->bytes, bytes, len);
        if (copies[i].corrupt_bit >= 0 && len > 0)
            p->bytes[(size_t)copies[i].corrupt_bit / 8 % len] ^= (uint8_t)(1u << (copies[i].corrupt_bit % 8));
        sim_event ev = {.at_ns = copies[i].arrive_ns, .seq = r->seq++, .kind = (uint32_t)dir, .ptr = p};
        if (sim_heap_push(&r->held, &ev) != 0) { free(p); r->held_dropped++; continue; }
        r->held_count++;
    }
}

static void relay_read(relay *r, int dir, uint64_t now_ns) {
    static uint8_t buf[RELAY_DATAGRAM_MOST];
    for (;;) {
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t k = recvfrom(dir == 0 ? r->front : r->back, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
        if (k < 0) return; /* EAGAIN: drained */
        if (dir == 0) { r->client = from; r->have_client = 1; }
        relay_admit(r, dir, buf, (size_t)k, now_ns);
    }
}

/* Sends every held datagram due by now_ns; returns the next due time or UINT64_MAX. */
static uint64_t relay_deliver(relay *r, uint64_t now_ns) {
    const sim_event *next;
    while ((next = sim_heap_peek(&r->held)) != NULL && next->at_ns <= now_ns) {
        sim_event ev;
        sim_heap_pop(&r->held, &ev);
        relay_packet *p = ev.ptr;
        int dir = (int)ev.kind;
        r->held_count--;
        if (dir == 0 || r->have_client) {
            const struct sockaddr_in *to = dir == 0 ? &r->target : &r->client;
            if (sendto(dir == 0 ? r->back : r->front, p->bytes, p->len, 0, (const struct sockaddr *)to, sizeof *to) < 0)
                r->send_errors++;
            else r->sent[dir]++;
        }
        free(p);
    }
    return next ? next->at_ns : UINT64_MAX;
}

static void relay_report(const relay *r, double wall_s) {
    printf("{\"wall_s\":%.3f,\"held_dropped\":%llu,\"send_errors\":%llu,\"paths\":[", wall_s,
           (unsigned long long)r->held_dropped, (unsigned long long)r->send_errors);
    for (int d = 0; d < 2; d++) {
        const sim_path_counters *c = &r->paths[d].counters;
        printf("%s{\"from\":\"%s\",\"to\":\"%s\",\"datagrams_in\":%llu,\"bytes_in\":%llu,\"dropped_loss\":%llu,"
               "\"dropped_burst\":%llu,\"dropped_queue\":%llu,\"duplicated\":%llu,\"corrupted\":%llu,\"reordered\":%llu,"
               "\"sent\":%llu,\"queue_bytes_peak\":%llu}",
               d ? "," : "", d ? "server" : "client", d ? "client" : "server", (unsigned long long)c->datagrams_in,
               (unsigned long long)c->bytes_in, (unsigned long long)c->dropped_loss, (unsigned long long)c->dropped_burst,
               (unsigned long long)c->dropped_queue, (unsigned long long)c->duplicated, (unsigned long long)c->corrupted,
               (unsigned long long)c->reordered, (unsigned long long)r->sent[d], (unsigned long long)c->queue_bytes_peak);
    }
    printf("]}\n");
    fflush(stdout);
}

static int relay_loop(relay *r, uint64_t duration_ns) {
    uint64_t start = mono_ns(), end = duration_ns ? start + duration_ns : UINT64_MAX;
    while (!relay_stop) {
        uint64_t now = mono_ns();
        if (now >= end) break;
        uint64_t due = relay_deliver(r, now), wake = due < end ? due : end;
        uint64_t wait_ns = wake > now ? wake - now : 0;
        if (wait_ns > 100000000ull) wait_ns = 100000000ull; /* look at the stop flag now and then */
        struct timespec ts = {(time_t)(wait_ns / 1000000000ull), (long)(wait_ns % 1000000000ull)};
        struct pollfd fds[2] = {{.fd = r->front, .events = POLLIN}, {.fd = r->back, .events = POLLIN}};
        if (ppoll(fds, 2, &ts, NULL) < 0 && errno != EINTR) return -1;
        now = mono_ns();
        if (fds[0].revents & POLLIN) relay_read(r, 0, now);
        if (fds[1].revents & POLLIN) relay_read(r, 1, now);
    }
    relay_report(r, (double)(mono_ns() - start) / 1e9);
    return 0;
}

int sim_relay_main(int argc, char **argv) {
    const char *sets[RELAY_SETS_MOST];
    unsigned set_count = 0;
    uint64_t listen_port, target_port, seed = 1, duration_ns = 0;
    if (argc < 3 || sim_value_u64(argv[1], &listen_port) != 0 || sim_value_u64(argv[2], &target_port) != 0 ||
        listen_port == 0 || listen_port > 65535 || target_port == 0 || target_port > 65535) {
        fprintf(stderr, "usage: pure-link-sim relay LISTEN_PORT TARGET_PORT [--seed N] [--duration D] [--set 'path.K: V']...\n");
        return 2;
    }
    for (int i = 3; i < argc; i++) {
        int ok = i + 1 < argc;
        if (ok && strcmp(argv[i], "--set") == 0 && set_count < RELAY_SETS_MOST) sets[set_count++] = argv[++i];
        else if (ok && strcmp(argv[i], "--seed") == 0) ok = sim_value_u64(argv[++i], &seed) == 0;
        else if (ok && strcmp(argv[i], "--duration") == 0) ok = sim_value_duration_ns(argv[++i], &duration_ns) == 0;
        else ok = 0;
        if (!ok) { fprintf(stderr, "pure-link-sim relay: bad option %s\n", argv[i]); return 2; }
    }
    relay r;
    memset(&r, 0, sizeof r);
    sim_heap_init(&r.held);
    r.target = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((uint16_t)target_port),
                                    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (relay_paths(&r, sets, set_count, seed) != 0) return 2;
    if ((r.front = udp_bound((uint16_t)listen_port)) < 0 || (r.back = udp_bound(0)) < 0) return 2;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int rc = relay_loop(&r, duration_ns);
    sim_event ev;
    while (sim_heap_pop(&r.held, &ev)) free(ev.ptr);
    sim_heap_free(&r.held);
    sim_path_free(&r.paths[0]);
    sim_path_free(&r.paths[1]);
    close(r.front);
    close(r.back);
    return rc == 0 ? 0 : 1;
}
