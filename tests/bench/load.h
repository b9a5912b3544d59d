/* load.h: what the two load generators share (load_hostile.c, load_many.c): a fast
 * random source, UDP sockets bound on loopback, the resident memory of a process, the CPU
 * time of this one, and a bounded wait.  Both send only to 127.0.0.0/8. */
#ifndef PL_LOAD_H
#define PL_LOAD_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pl_io.h"

/* xorshift64*: junk bytes at memory speed (what they are does not matter, only that they
 * differ); seeded from the clock and the pid. */
typedef struct load_rng {
    uint64_t s;
} load_rng;
static inline uint64_t load_next(load_rng *r) {
    r->s ^= r->s >> 12, r->s ^= r->s << 25, r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}
static inline uint64_t load_below(load_rng *r, uint64_t n) { return n ? load_next(r) % n : 0; }
static inline void load_fill(load_rng *r, uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = load_next(r);
        memcpy(p + i, &v, n - i < 8 ? n - i : 8);
    }
}

/* A non-blocking UDP socket bound to 127.0.0.<host>:<port> (port 0: the system picks);
 * -1 with one line on stderr.  127/8 is all loopback on Linux, so other hosts than .1 need
 * no set-up: that is how the generators speak from many "machines". */
static inline int load_socket(unsigned host, unsigned port, int rcvbuf_bytes) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fprintf(stderr, "socket: %s\n", strerror(errno));
        return -1;
    }
    if (rcvbuf_bytes) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf_bytes, sizeof rcvbuf_bytes);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(0x7f000000u | (host & 0xffffffu))};
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        fprintf(stderr, "bind 127.0.0.%u:%u: %s\n", host, port, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* "127.0.0.1:PORT" (IPv4 loopback only: the generators never send elsewhere). */
static inline int load_parse_loopback(const char *text, struct sockaddr_in *out) {
    unsigned a, b, c, d, port;
    if (sscanf(text, "%u.%u.%u.%u:%u", &a, &b, &c, &d, &port) != 5 || a != 127 || b > 255 || c > 255 || d > 255 ||
        port == 0 || port > 65535) {
        fprintf(stderr, "%s: not a 127.0.0.0/8 address with a port\n", text);
        return -1;
    }
    *out = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(a << 24 | b << 16 | c << 8 | d)};
    return 0;
}

/* VmRSS of a process in KiB from /proc/PID/status; 0 if it cannot be read. */
static inline uint64_t load_rss_kib(long pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    uint64_t kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %lu kB", (unsigned long *)&kib) == 1) break;
    fclose(f);
    return kib;
}

/* User + system CPU seconds of a process from /proc/PID/stat (fields 14, 15). */
static inline double load_cpu_s(long pid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');  /* the command name may hold spaces */
    unsigned long ut = 0, st = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) return 0;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static inline void load_sleep_ns(uint64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    nanosleep(&ts, NULL);
}

#endif
