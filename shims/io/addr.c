/* addr.c: socket addresses inside pure_link_addr, and the clock of the shims (pl_io.h).
 *
 * The core compares addresses byte for byte, so one address must always give the same
 * bytes: a sockaddr_in or sockaddr_in6 with every byte the kernel may leave unset zeroed. */
#define _GNU_SOURCE
#include "pl_io.h"

#include <arpa/inet.h>
#include <assert.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

uint64_t pl_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int pl_addr_from_sockaddr(const struct sockaddr *sa, pure_link_addr *out) {
    memset(out, 0, sizeof *out);
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        struct sockaddr_in c = {.sin_family = AF_INET, .sin_port = in->sin_port, .sin_addr = in->sin_addr};
        memcpy(out->bytes, &c, sizeof c);
        out->len = sizeof c;
        return 0;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        struct sockaddr_in6 c = {.sin6_family = AF_INET6, .sin6_port = in6->sin6_port,
                                 .sin6_addr = in6->sin6_addr, .sin6_scope_id = in6->sin6_scope_id};
        _Static_assert(sizeof c <= PURE_LINK_ADDR_MOST, "sockaddr_in6 fits an opaque address");
        memcpy(out->bytes, &c, sizeof c);
        out->len = sizeof c;
        return 0;
    }
    return -1;
}

int pl_addr_parse(const char *text, pure_link_addr *out, char *err, size_t err_len) {
    char host[256];
    const char *port;
    if (text[0] == '[') {
        const char *end = strchr(text, ']');
        if (end == NULL || end[1] != ':' || (size_t)(end - text - 1) >= sizeof host) {
            snprintf(err, err_len, "address '%s': want [IPV6]:PORT", text);
            return -1;
        }
        memcpy(host, text + 1, (size_t)(end - text - 1));
        host[end - text - 1] = 0;
        port = end + 2;
    } else {
        const char *colon = strrchr(text, ':');
        if (colon == NULL || (size_t)(colon - text) >= sizeof host || strchr(text, ':') != colon) {
            snprintf(err, err_len, "address '%s': want HOST:PORT, [IPV6]:PORT or :PORT", text);
            return -1;
        }
        memcpy(host, text, (size_t)(colon - text));
        host[colon - text] = 0;
        port = colon + 1;
    }
    char *end;
    unsigned long p = strtoul(port, &end, 10);
    if (*port == 0 || *end != 0 || p > 65535) {
        snprintf(err, err_len, "address '%s': the port must be 0..65535", text);
        return -1;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICSERV};
    if (host[0] == 0) {
        hints.ai_family = AF_INET6, hints.ai_flags |= AI_PASSIVE;
    }
    struct addrinfo *res = NULL;
    int r = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
    if (r != 0) {
        snprintf(err, err_len, "address '%s': %s", text, gai_strerror(r));
        return -1;
    }
    r = pl_addr_from_sockaddr(res->ai_addr, out);
    freeaddrinfo(res);
    if (r != 0) snprintf(err, err_len, "address '%s': not IPv4 or IPv6", text);
    return r;
}

/* "a.b.c.d:port", "[v6]:port", or without the port when with_port is 0 (and no brackets). */
static const char *format(const pure_link_addr *a, int with_port, char *buf, size_t len) {
    assert(len >= 64);
    char host[INET6_ADDRSTRLEN];
    sa_family_t family;
    memcpy(&family, a->bytes, sizeof family);
    if (family == AF_INET) {
        struct sockaddr_in in;
        memcpy(&in, a->bytes, sizeof in);
        inet_ntop(AF_INET, &in.sin_addr, host, sizeof host);
        if (with_port) snprintf(buf, len, "%s:%u", host, ntohs(in.sin_port));
        else snprintf(buf, len, "%s", host);
    } else if (family == AF_INET6) {
        struct sockaddr_in6 in6;
        memcpy(&in6, a->bytes, sizeof in6);
        inet_ntop(AF_INET6, &in6.sin6_addr, host, sizeof host);
        if (with_port) snprintf(buf, len, "[%s]:%u", host, ntohs(in6.sin6_port));
        else snprintf(buf, len, "%s", host);
    } else {
        snprintf(buf, len, "?");
    }
    return buf;
}

const char *pl_addr_format(const pure_link_addr *a, char *buf, size_t len) { return format(a, 1, buf, len); }

const char *pl_addr_format_host(const pure_link_addr *a, char *buf, size_t len) { return format(a, 0, buf, len); }

unsigned pl_addr_port(const pure_link_addr *a) {
    sa_family_t family;
    memcpy(&family, a->bytes, sizeof family);
    in_port_t port;
    /* sin_port and sin6_port sit at the same offset, right after the family. */
    _Static_assert(offsetof(struct sockaddr_in, sin_port) == offsetof(struct sockaddr_in6, sin6_port), "port offset");
    memcpy(&port, a->bytes + offsetof(struct sockaddr_in, sin_port), sizeof port);
    return family == AF_INET || family == AF_INET6 ? ntohs(port) : 0;
}
