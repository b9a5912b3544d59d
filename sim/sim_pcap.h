/* sim_pcap.h: every simulated datagram as a pcap file that tcpdump and tshark read.
 *
 * Nanosecond pcap (magic 0xa1b23c4d, little-endian) with LINKTYPE_RAW (101): each packet is
 * an IPv4 header (20 B, no options, DF, TTL 64) and a UDP header (8 B) built here with
 * correct lengths and checksums, then the datagram.  Timestamps are virtual time. */
#ifndef SIM_PCAP_H
#define SIM_PCAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SIM_PCAP_LINKTYPE_RAW 101u
#define SIM_PCAP_HEADERS_BYTES 28u /* IPv4 20 + UDP 8 */
#define SIM_PCAP_SNAPLEN 65535u

typedef struct sim_pcap_endpoint {
    uint8_t ip[4];
    uint16_t port;
} sim_pcap_endpoint;

typedef struct sim_pcap {
    FILE *file;
    uint16_t ip_id;     /* IPv4 identification, counts up */
    uint64_t packets;
    int write_error;
} sim_pcap;

/* Writes the file header; returns 0 or -1. */
int sim_pcap_init(sim_pcap *pcap, FILE *file);
/* Builds the IPv4 and UDP headers for a payload into out (SIM_PCAP_HEADERS_BYTES). */
void sim_pcap_headers(uint8_t out[SIM_PCAP_HEADERS_BYTES], const sim_pcap_endpoint *src,
                      const sim_pcap_endpoint *dst, uint16_t ip_id, const uint8_t *payload, size_t len);
/* One's-complement sum of bytes (RFC 1071), folded, not inverted, starting from `sum`. */
uint32_t sim_pcap_sum(uint32_t sum, const uint8_t *bytes, size_t len);
/* Appends one packet. */
void sim_pcap_write(sim_pcap *pcap, uint64_t time_ns, const sim_pcap_endpoint *src,
                    const sim_pcap_endpoint *dst, const uint8_t *payload, size_t len);

#endif
