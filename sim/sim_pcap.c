/* sim_pcap.c: pcap with raw IPv4/UDP packets; see sim_pcap.h. */
#include "sim_pcap.h"

#include <assert.h>
#include <string.h>

#define PCAP_MAGIC_NS 0xa1b23c4du
#define IPV4_TTL 64u
#define IPPROTO_UDP_NUMBER 17u

static void le32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void le16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void be16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

int sim_pcap_init(sim_pcap *pcap, FILE *file) {
    memset(pcap, 0, sizeof *pcap);
    pcap->file = file;
    uint8_t h[24];
    le32(h, PCAP_MAGIC_NS);
    le16(h + 4, 2);  /* version 2.4 */
    le16(h + 6, 4);
    le32(h + 8, 0);  /* GMT offset */
    le32(h + 12, 0); /* timestamp accuracy */
    le32(h + 16, SIM_PCAP_SNAPLEN);
    le32(h + 20, SIM_PCAP_LINKTYPE_RAW);
    if (fwrite(h, 1, sizeof h, file) != sizeof h) {
        pcap->write_error = 1;
        return -1;
    }
    return 0;
}

uint32_t sim_pcap_sum(uint32_t sum, const uint8_t *bytes, size_t len) {
    size_t i = 0;
    for (; i + 1 < len; i += 2) sum += (uint32_t)bytes[i] << 8 | bytes[i + 1];
    if (i < len) sum += (uint32_t)bytes[i] << 8; /* an odd byte is padded with zero */
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return sum;
}

void sim_pcap_headers(uint8_t out[SIM_PCAP_HEADERS_BYTES], const sim_pcap_endpoint *src,
                      const sim_pcap_endpoint *dst, uint16_t ip_id, const uint8_t *payload, size_t len) {
    assert(len + SIM_PCAP_HEADERS_BYTES <= 0xffff);
    uint8_t *ip = out, *udp = out + 20;
    ip[0] = 0x45; /* version 4, 5 words */
    ip[1] = 0;
    be16(ip + 2, (uint16_t)(len + SIM_PCAP_HEADERS_BYTES));
    be16(ip + 4, ip_id);
    be16(ip + 6, 0x4000); /* don't fragment */
    ip[8] = IPV4_TTL;
    ip[9] = IPPROTO_UDP_NUMBER;
    be16(ip + 10, 0);
    memcpy(ip + 12, src->ip, 4);
    memcpy(ip + 16, dst->ip, 4);
    be16(ip + 10, (uint16_t)~sim_pcap_sum(0, ip, 20));

    uint16_t udp_len = (uint16_t)(len + 8);
    be16(udp, src->port);
    be16(udp + 2, dst->port);
    be16(udp + 4, udp_len);
    be16(udp + 6, 0);
    /* Pseudo-header (RFC 768): addresses, protocol, UDP length. */
    uint8_t pseudo[12];
    memcpy(pseudo, src->ip, 4);
    memcpy(pseudo + 4, dst->ip, 4);
    pseudo[8] = 0;
    pseudo[9] = IPPROTO_UDP_NUMBER;
    be16(pseudo + 10, udp_len);
    uint32_t sum = sim_pcap_sum(0, pseudo, sizeof pseudo);
    sum = sim_pcap_sum(sum, udp, 8);
    sum = sim_pcap_sum(sum, payload, len);
    uint16_t check = (uint16_t)~sum;
    be16(udp + 6, check ? check : 0xffff); /* 0 means "no checksum" in UDP over IPv4 */
}

void sim_pcap_write(sim_pcap *pcap, uint64_t time_ns, const sim_pcap_endpoint *src,
                    const sim_pcap_endpoint *dst, const uint8_t *payload, size_t len) {
    if (pcap->file == NULL) return;
    uint8_t rec[16 + SIM_PCAP_HEADERS_BYTES];
    uint32_t total = (uint32_t)(len + SIM_PCAP_HEADERS_BYTES);
    le32(rec, (uint32_t)(time_ns / 1000000000u));
    le32(rec + 4, (uint32_t)(time_ns % 1000000000u));
    le32(rec + 8, total);
    le32(rec + 12, total);
    sim_pcap_headers(rec + 16, src, dst, pcap->ip_id++, payload, len);
    if (fwrite(rec, 1, sizeof rec, pcap->file) != sizeof rec ||
        fwrite(payload, 1, len, pcap->file) != len)
        pcap->write_error = 1;
    pcap->packets++;
}
