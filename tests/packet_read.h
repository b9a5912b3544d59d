/* packet_read.h: a test's tap reads a datagram's header and frames (the AEAD a copy in the
 * link harness, so the payload is plaintext).  Include after internal.h. */
#ifndef PL_TESTS_PACKET_READ_H
#define PL_TESTS_PACKET_READ_H

/* Decodes the header into h and up to PL_FRAMES_MOST frames into f (count in *count);
 * 0 when either does not decode or no frame is there. */
static inline int read_packet(const uint8_t *data, size_t len, pl_header *h, pl_frame *f, int *count) {
    int hl = pl_packet_decode(h, data, len);
    if (hl < 0) return 0;
    *count = pl_payload_decode(f, PL_FRAMES_MOST, data + hl, len - (size_t)hl - PURE_LINK_TAG_BYTES, h->reply);
    return *count > 0;
}

#endif
