/* load_many.c: many senders in one process, all writing to one `pure-link recv` on
 * loopback.  Each sender is an endpoint of its own: its own static key (one wired peer
 * each), its own run and its own UDP socket on 127.0.0.1 with a port of its own, as a
 * thousand machines behind one address would look; the kernel sorts the replies by port,
 * so no endpoint reads another's.  One epoll loop drives them all.
 *
 * Sender k sends RECORDS records of SIZE bytes to input "logs" as source "out"; record j
 * begins with k and j (4 bytes each, little-endian), byte i of the rest is (7k + 13j + i)
 * mod 256.  The last REFUSED_INPUT + REFUSED_SOURCE senders are refused: the first of
 * them name an input the receiver does not have (reason 1), the last are wired for
 * another source only (reason 3); they keep asking until each has heard two REFUSED.
 *
 *   load_many keys SEED N          the N public keys, one per line (for the receiver's config)
 *   load_many send --to 127.0.0.1:PORT --receiver-pub HEX --seed SEED --senders N
 *             --records R --size BYTES --refused-input A --refused-source B --pid RECV_PID
 *             [--deadline-s S]
 * It prints the figures and last one line "many {json}"; exit 0 once every accepted
 * sender heard all its records stored and every refused one its REFUSED, 1 otherwise. */
#include "load.h"

#include <getopt.h>
#include <sodium.h>
#include <sys/epoll.h>

#include "pure_link.h"

#define SENDERS_MOST 4096u
#define REFUSED_HEARD_LEAST 2u  /* REFUSED notices each refused sender waits for */

typedef struct sender {
    pure_link *pl;
    void *mem;                     /* the endpoint's memory */
    int fd, handle, refused_kind;  /* refused_kind: 0 accepted, 1 no input, 3 source */
    uint64_t next_record, stored, deadline_ns, done_ns;
    int done;
} sender;

typedef struct many {
    sender s[SENDERS_MOST];
    unsigned n, done;
    uint64_t records, size;
    struct sockaddr_in rx;
    pure_link_addr rx_addr;
    uint8_t receiver_pub[32];
    uint64_t datagrams_sent, datagrams_received, refused_events, turns;
} many;

static void key_of(unsigned seed, unsigned k, uint8_t secret[32]) {
    char label[64];
    snprintf(label, sizeof label, "load_many %u %u", seed, k);
    crypto_hash_sha256(secret, (const uint8_t *)label, strlen(label));
}

static void record_of(unsigned k, uint64_t j, uint8_t *out, size_t len) {
    uint32_t kk = k, jj = (uint32_t)j;
    for (size_t i = 0; i < len; i++) out[i] = (uint8_t)(7u * k + 13u * jj + i);
    memcpy(out, &kk, len < 4 ? len : 4);
    if (len > 4) memcpy(out + 4, &jj, len < 8 ? len - 4 : 4);
}

static int open_sender(many *m, unsigned k, unsigned seed, const char *input) {
    sender *s = &m->s[k];
    pure_link_config c = {0};
    c.senders_most = 1, c.peers_most = PURE_LINK_NONE, c.packets_in_flight_most = 256;
    c.send_queue_records = (uint32_t)(m->records < 1024 ? 1024 : m->records);
    key_of(seed, k, c.static_secret);
    size_t size = pure_link_size(&c), rounded = (size + PURE_LINK_ALIGN - 1) / PURE_LINK_ALIGN * PURE_LINK_ALIGN;
    void *mem = aligned_alloc(PURE_LINK_ALIGN, rounded);  /* its send pool is touched only as used */
    s->mem = mem;
    uint8_t seed_bytes[32];
    randombytes_buf(seed_bytes, 32);
    s->pl = mem ? pure_link_init(mem, size, &c, seed_bytes, pl_now_ns()) : NULL;
    if (!s->pl) {
        fprintf(stderr, "load_many: endpoint %u: no memory\n", k);
        return -1;
    }
    pure_link_sender_config sc = {.version = PURE_LINK_VERSION, .source = "out", .input = input, .shape = 1,
                                  .receiver_addr = m->rx_addr};
    memcpy(sc.receiver_public, m->receiver_pub, 32);
    s->handle = pure_link_sender_open(s->pl, &sc, pl_now_ns());
    s->fd = load_socket(1, 0, 256 << 10);
    return s->handle >= 0 && s->fd >= 0 ? 0 : -1;
}

static void feed(many *m, sender *s, unsigned k, uint64_t now) {
    uint8_t rec[65536];
    while (s->next_record < m->records) {
        record_of(k, s->next_record, rec, m->size);
        if (pure_link_send(s->pl, s->handle, rec, m->size, now) < 0) break;  /* FULL: after STORED */
        s->next_record++;
    }
}

static int is_done(const many *m, const sender *s) {
    if (s->refused_kind == 0) return s->stored >= m->records;
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(s->pl, s->handle, &st);
    return st.link_refused >= REFUSED_HEARD_LEAST;
}

/* Events, then every datagram due; returns -1 on a fatal error. */
static int service(many *m, unsigned k, uint64_t now) {
    sender *s = &m->s[k];
    pure_link_event ev;
    while (pure_link_event_next(s->pl, &ev)) {
        if (ev.kind == PURE_LINK_EVENT_STORED) s->stored = (uint64_t)ev.record;
        if (ev.kind == PURE_LINK_EVENT_REFUSED) m->refused_events++;
        if (ev.kind == PURE_LINK_EVENT_FATAL) {
            fprintf(stderr, "load_many: sender %u failed: %s\n", k, pure_link_strerror(ev.code));
            return -1;
        }
    }
    feed(m, s, k, now);
    uint8_t buf[PURE_LINK_DATAGRAM_MOST];
    pure_link_addr to;
    int n;
    while ((n = pure_link_pull(s->pl, buf, sizeof buf, &to, now)) > 0) {
        if (sendto(s->fd, buf, (size_t)n, 0, (const struct sockaddr *)&m->rx, sizeof m->rx) == n)  /* to: the receiver */
            m->datagrams_sent++;
    }
    if (n < 0) return -1;
    if (!s->done && is_done(m, s)) s->done = 1, s->done_ns = now, m->done++;
    s->deadline_ns = pure_link_deadline(s->pl);
    return 0;
}

static int receive(many *m, unsigned k, uint64_t now) {
    sender *s = &m->s[k];
    uint8_t buf[2048];
    struct sockaddr_storage from;
    for (;;) {
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(s->fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
        if (n < 0) break;
        pure_link_addr a;
        if (pl_addr_from_sockaddr((struct sockaddr *)&from, &a) != 0) continue;
        m->datagrams_received++;
        if (pure_link_receive(s->pl, &a, buf, (size_t)n, now) != 0) return -1;
    }
    return service(m, k, now);
}

static int run(many *m, uint64_t deadline_ns) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    for (unsigned k = 0; k < m->n; k++) {
        struct epoll_event e = {.events = EPOLLIN, .data.u32 = k};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, m->s[k].fd, &e) != 0) return -1;
        if (service(m, k, pl_now_ns()) != 0) return -1;
    }
    struct epoll_event evs[256];
    while (m->done < m->n) {
        uint64_t now = pl_now_ns(), soonest = UINT64_MAX;
        m->turns++;
        if (now > deadline_ns) return -1;
        for (unsigned k = 0; k < m->n; k++) {
            sender *s = &m->s[k];
            if (s->deadline_ns <= now) {
                if (pure_link_tick(s->pl, now) != 0 || service(m, k, now) != 0) return -1;
            }
            if (s->deadline_ns < soonest) soonest = s->deadline_ns;
        }
        uint64_t wait_ns = soonest > now ? soonest - now : 0;
        int ms = wait_ns > 100000000ull ? 100 : (int)((wait_ns + 999999) / 1000000);
        int r = epoll_wait(ep, evs, 256, ms);
        now = pl_now_ns();
        for (int i = 0; i < r; i++)
            if (receive(m, evs[i].data.u32, now) != 0) return -1;
    }
    close(ep);
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int keys_main(unsigned seed, unsigned n) {
    for (unsigned k = 0; k < n; k++) {
        uint8_t secret[32], pub[32];
        key_of(seed, k, secret);
        crypto_scalarmult_base(pub, secret);
        for (int i = 0; i < 32; i++) printf("%02x", pub[i]);
        printf("\n");
    }
    return 0;
}

int main(int argc, char **argv) {
    if (sodium_init() < 0) return 1;
    if (argc == 4 && strcmp(argv[1], "keys") == 0) return keys_main((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]));
    static const struct option longs[] = {
        {"to", 1, 0, 't'},       {"receiver-pub", 1, 0, 'r'},   {"seed", 1, 0, 'S'},
        {"senders", 1, 0, 'n'},  {"records", 1, 0, 'R'},        {"size", 1, 0, 'z'},
        {"refused-input", 1, 0, 'i'}, {"refused-source", 1, 0, 'o'}, {"pid", 1, 0, 'p'},
        {"deadline-s", 1, 0, 'd'}, {0, 0, 0, 0}};
    static many m;
    const char *to = NULL, *rpub = NULL;
    unsigned seed = 1, refused_input = 0, refused_source = 0;
    long pid = 0;
    uint64_t deadline_s = 120;
    m.records = 100, m.size = 200;
    int c;
    optind = 2;
    while (argc >= 2 && strcmp(argv[1], "send") == 0 && (c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 't': to = optarg; break;
        case 'r': rpub = optarg; break;
        case 'S': seed = (unsigned)atoi(optarg); break;
        case 'n': m.n = (unsigned)atoi(optarg); break;
        case 'R': m.records = strtoull(optarg, NULL, 10); break;
        case 'z': m.size = strtoull(optarg, NULL, 10); break;
        case 'i': refused_input = (unsigned)atoi(optarg); break;
        case 'o': refused_source = (unsigned)atoi(optarg); break;
        case 'p': pid = atol(optarg); break;
        case 'd': deadline_s = strtoull(optarg, NULL, 10); break;
        default: return 2;
        }
    }
    if (argc < 2 || strcmp(argv[1], "send") != 0 || !to || !rpub || strlen(rpub) != 64 || m.n == 0 ||
        m.n > SENDERS_MOST || refused_input + refused_source > m.n || pid <= 0 || m.size == 0 || m.size > 65536 ||
        load_parse_loopback(to, &m.rx) != 0) {
        fprintf(stderr, "usage: load_many keys SEED N | load_many send --to 127.0.0.1:PORT --receiver-pub HEX "
                        "--seed S --senders N --records R --size BYTES (1..65536) --refused-input A "
                        "--refused-source B --pid RECV_PID [--deadline-s S]\n");
        return 2;
    }
    for (int i = 0; i < 32; i++) sscanf(rpub + 2 * i, "%2hhx", &m.receiver_pub[i]);
    pl_addr_from_sockaddr((const struct sockaddr *)&m.rx, &m.rx_addr);
    struct rlimit nofile = {m.n + 64, m.n + 64};  /* a socket each */
    if (setrlimit(RLIMIT_NOFILE, &nofile) != 0) {
        fprintf(stderr, "load_many: %u sockets: %s\n", m.n, strerror(errno));
        return 1;
    }
    unsigned first_refused = m.n - refused_input - refused_source;
    for (unsigned k = 0; k < m.n; k++) m.s[k].fd = -1;
    for (unsigned k = 0; k < m.n; k++) {
        m.s[k].refused_kind = k < first_refused ? 0 : k < first_refused + refused_input ? 1 : 3;
        if (open_sender(&m, k, seed, m.s[k].refused_kind == 1 ? "nosuch" : "logs") != 0) return 1;
    }
    uint64_t rss_rx0 = load_rss_kib(pid), t0 = pl_now_ns();
    double cpu_rx0 = load_cpu_s(pid), cpu_self0 = load_cpu_s(getpid());
    int r = run(&m, t0 + deadline_s * 1000000000ull);
    double secs = (double)(pl_now_ns() - t0) / 1e9;
    double cpu_rx = load_cpu_s(pid) - cpu_rx0, cpu_self = load_cpu_s(getpid()) - cpu_self0;
    uint64_t rss_rx1 = load_rss_kib(pid), rss_self = load_rss_kib(getpid());
    uint64_t stored = 0, refused_heard = 0;
    for (unsigned k = 0; k < m.n; k++) {
        pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
        pure_link_stats_get(m.s[k].pl, m.s[k].handle, &st);
        stored += m.s[k].stored, refused_heard += st.link_refused;
    }
    uint64_t want = (uint64_t)first_refused * m.records;
    double *took = calloc(m.n, sizeof *took);
    unsigned took_n = 0;
    for (unsigned k = 0; k < first_refused; k++)
        if (m.s[k].done) took[took_n++] = (double)(m.s[k].done_ns - t0) / 1e9;
    qsort(took, took_n, sizeof *took, cmp_double);
    for (unsigned k = 0, shown = 0; k < m.n && shown < 5; k++) {
        if (m.s[k].done) continue;
        pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
        pure_link_stats_get(m.s[k].pl, m.s[k].handle, &st);
        printf("not done: sender %u (refused kind %d): %llu of %llu stored; %llu packets sent, %llu lost, %llu "
               "refused heard, cwnd %llu B, rtt %.1f ms\n", k, m.s[k].refused_kind, (unsigned long long)m.s[k].stored,
               (unsigned long long)m.records, (unsigned long long)st.packets_sent, (unsigned long long)st.packets_lost,
               (unsigned long long)st.link_refused, (unsigned long long)st.cwnd_bytes, st.rtt_ns_smoothed / 1e6);
        shown++;
    }
    printf("%u senders (%u refused: %u no such input, %u source not allowed), %llu records of %llu B each to "
           "store: %llu stored in %.2f s%s\n",
           m.n, m.n - first_refused, refused_input, refused_source, (unsigned long long)want,
           (unsigned long long)m.size, (unsigned long long)stored, secs, r == 0 ? "" : " (DEADLINE)");
    if (took_n)
        printf("accepted senders done after: median %.2f s, 90th percentile %.2f s, last %.2f s\n",
               took[took_n / 2], took[took_n * 9 / 10], took[took_n - 1]);
    free(took);
    printf("datagrams: %llu sent, %llu received in %llu turns of the loop; REFUSED heard %llu times, %llu refusal "
           "events\n", (unsigned long long)m.datagrams_sent, (unsigned long long)m.datagrams_received,
           (unsigned long long)m.turns,
           (unsigned long long)refused_heard, (unsigned long long)m.refused_events);
    printf("receiver: %.2f CPU s, %.2f us per record; RSS %llu KiB before, %llu KiB after\n", cpu_rx,
           stored ? cpu_rx * 1e6 / (double)stored : 0, (unsigned long long)rss_rx0, (unsigned long long)rss_rx1);
    printf("generator: %.2f CPU s, %.2f us per record; RSS %llu KiB (%.0f KiB per sender)\n", cpu_self,
           stored ? cpu_self * 1e6 / (double)stored : 0, (unsigned long long)rss_self, (double)rss_self / m.n);
    printf("many {\"senders\":%u,\"refused\":%u,\"records_wanted\":%llu,\"records_stored\":%llu,\"seconds\":%.3f,"
           "\"refused_heard\":%llu,\"refusal_events\":%llu,\"receiver_cpu_s\":%.3f,\"generator_cpu_s\":%.3f,"
           "\"receiver_rss_kib_before\":%llu,\"receiver_rss_kib_after\":%llu,\"generator_rss_kib\":%llu,"
           "\"ok\":%d}\n",
           m.n, m.n - first_refused, (unsigned long long)want, (unsigned long long)stored, secs,
           (unsigned long long)refused_heard, (unsigned long long)m.refused_events, cpu_rx, cpu_self,
           (unsigned long long)rss_rx0, (unsigned long long)rss_rx1, (unsigned long long)rss_self, r == 0);
    for (unsigned k = 0; k < m.n; k++) {
        if (m.s[k].fd >= 0) close(m.s[k].fd);
        free(m.s[k].mem);
    }
    return r == 0 ? 0 : 1;
}
