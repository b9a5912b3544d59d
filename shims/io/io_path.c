/* io_path.c: what a UDP socket learns about its paths (pl_io.h "paths"): the datagram size
 * is the application's (DF set, the kernel's path MTU cache ignored), and the kernel's
 * error queue (IP_RECVERR) is read for ICMP errors and local size refusals, so that the
 * endpoint hears of them at once instead of by timeouts.
 *
 * Both backends open their socket with pl_udp_open, which calls pl_udp_path_options, and
 * read the queue with pl_udp_errqueue when the socket reports an error (EPOLLERR, POLLERR)
 * or a send or receive failed with one. */
#define _GNU_SOURCE
#include "pl_io.h"

#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <string.h>
#include <sys/socket.h>

#define UDP_IPV4_OVERHEAD_BYTES 28u  /* IPv4 header without options (20) + UDP header (8) */
#define UDP_IPV6_OVERHEAD_BYTES 48u  /* IPv6 header (40) + UDP header (8) */
#define ERRQUEUE_PAYLOAD_BYTES 64u   /* the returned datagram's start: unused, MSG_TRUNC cuts it */

int pl_udp_path_options(int fd, int family) {
    /* PROBE: DF on every datagram, and sends sized by the device's MTU, not by the path MTU
     * the kernel cached from ICMP: the endpoint searches the path's size itself (spec's
     * datagram size search), and a cached value from a forged ICMP cannot hold it down.
     * On an IPv6 socket the IPv4 options cover IPv4 peers (mapped addresses). */
    int probe4 = IP_PMTUDISC_PROBE, probe6 = IPV6_PMTUDISC_PROBE, one = 1, failed = 0;
    if (family == AF_INET6) {
        failed |= setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &probe6, sizeof probe6) != 0;
        failed |= setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &one, sizeof one) != 0;
    }
    int v4_failed = setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &probe4, sizeof probe4) != 0;
    v4_failed |= setsockopt(fd, IPPROTO_IP, IP_RECVERR, &one, sizeof one) != 0;
    /* An IPv6-only kernel may refuse the IPv4 options on an IPv6 socket: not an error. */
    failed |= family == AF_INET && v4_failed;
    return failed ? -errno : 0;
}

/* The hint one extended error gives, 0 when it names none of ours. */
static uint32_t hint_kind(const struct sock_extended_err *ee) {
    if (ee->ee_origin == SO_EE_ORIGIN_LOCAL) return ee->ee_errno == EMSGSIZE ? PL_IO_HINT_TOO_BIG : 0;
    if (ee->ee_origin == SO_EE_ORIGIN_ICMP) {
        if (ee->ee_type != ICMP_DEST_UNREACH) return 0;
        if (ee->ee_code == ICMP_FRAG_NEEDED) return PL_IO_HINT_TOO_BIG;
        if (ee->ee_code == ICMP_PORT_UNREACH) return PL_IO_HINT_PORT_UNREACHABLE;
        return PL_IO_HINT_HOST_UNREACHABLE;   /* net, host, protocol, prohibited, ... */
    }
    if (ee->ee_origin == SO_EE_ORIGIN_ICMP6) {
        if (ee->ee_type == ICMP6_PACKET_TOO_BIG) return PL_IO_HINT_TOO_BIG;
        if (ee->ee_type != ICMP6_DST_UNREACH) return 0;
        return ee->ee_code == ICMP6_DST_UNREACH_NOPORT ? PL_IO_HINT_PORT_UNREACHABLE : PL_IO_HINT_HOST_UNREACHABLE;
    }
    return 0;
}

/* The UDP payload a path of `mtu` carries to `to`: an IPv4 address (or an IPv4 address
 * mapped into IPv6, which goes out as IPv4) costs 28 B of headers, IPv6 48 B. */
static uint32_t payload_of_mtu(uint32_t mtu, const struct sockaddr *to) {
    int v4 = to->sa_family == AF_INET ||
             (to->sa_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)to)->sin6_addr));
    uint32_t overhead = v4 ? UDP_IPV4_OVERHEAD_BYTES : UDP_IPV6_OVERHEAD_BYTES;
    return mtu > overhead ? mtu - overhead : 0;
}

/* One error-queue message into *h: 1 when it is a hint, 0 when not. */
static int read_hint(struct msghdr *m, pl_io_hint *h) {
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
        int ours = (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RECVERR) ||
                   (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_RECVERR);
        if (!ours) continue;
        struct sock_extended_err ee;
        memcpy(&ee, CMSG_DATA(c), sizeof ee);
        uint32_t kind = hint_kind(&ee);
        if (kind == 0 || pl_addr_from_sockaddr(m->msg_name, &h->to) != 0) return 0;
        /* IPv4 names no port for a local refusal on an unconnected socket: the backend
         * knows where the datagram it refused went (pl_io_hint.to, len 0 until then). */
        if (pl_addr_port(&h->to) == 0) h->to.len = 0;
        h->kind = kind;
        h->local = ee.ee_origin == SO_EE_ORIGIN_LOCAL;
        h->mtu = kind == PL_IO_HINT_TOO_BIG ? ee.ee_info : 0;
        h->datagram_bytes = h->mtu ? payload_of_mtu(h->mtu, m->msg_name) : 0;
        /* The offender (the router or host that sent the ICMP) follows the error. */
        const struct sockaddr *who = SO_EE_OFFENDER((struct sock_extended_err *)CMSG_DATA(c));
        size_t room = c->cmsg_len - (size_t)((const uint8_t *)who - (const uint8_t *)c);
        memset(&h->from, 0, sizeof h->from);
        if (!h->local && room >= sizeof(struct sockaddr_in) && who->sa_family != AF_UNSPEC &&
            (who->sa_family == AF_INET || room >= sizeof(struct sockaddr_in6)))
            pl_addr_from_sockaddr(who, &h->from);
        return 1;
    }
    return 0;
}

int pl_udp_errqueue(int fd, pl_io_hint *out, size_t most, const pure_link_addr *refused_to, pl_io_stats *stats) {
    size_t n = 0;
    while (n < most) {
        struct sockaddr_storage name;
        uint8_t payload[ERRQUEUE_PAYLOAD_BYTES];
        union { char buf[CMSG_SPACE(sizeof(struct sock_extended_err) + sizeof(struct sockaddr_in6)) * 2];
                struct cmsghdr align; } ctl;
        struct iovec iov = {payload, sizeof payload};
        struct msghdr m = {.msg_name = &name, .msg_namelen = sizeof name, .msg_iov = &iov, .msg_iovlen = 1,
                           .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
        if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
            if (errno == EINTR) continue;
            break;   /* EAGAIN: the queue is empty */
        }
        stats->errqueue_messages++;
        if (m.msg_namelen == 0 || !read_hint(&m, &out[n])) continue;
        if (out[n].to.len == 0) out[n].to = *refused_to;
        if (out[n].to.len == 0) continue;
        if (out[n].kind == PL_IO_HINT_TOO_BIG) stats->hints_too_big++;
        else stats->hints_unreachable++;
        n++;
    }
    return (int)n;
}

int pl_udp_error_is_path(int e) {
    /* What an ICMP error or a local refusal leaves on the socket: the next send or receive
     * returns it once (sk_err), whatever that call's own datagram was. */
    return e == ECONNREFUSED || e == EHOSTUNREACH || e == ENETUNREACH || e == EHOSTDOWN || e == ENONET ||
           e == EMSGSIZE || e == EACCES || e == EPROTO || e == ENOPROTOOPT || e == ETIMEDOUT || e == EPERM;
}
