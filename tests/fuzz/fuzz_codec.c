/* fuzz_codec.c: libFuzzer target for the wire codec (core/wire.h).
 *
 *   clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -Icore \
 *         tests/fuzz/fuzz_codec.c core/varint.c core/header.c core/codec.c -o build/fuzz_codec
 *   build/fuzz_codec -max_len=1500
 *
 * The input is read as a datagram: header, then the rest as a payload of the direction the
 * header names (the AEAD is not in the way: this fuzzes what comes out of a successful open).
 * The input is also walked as a payload of both directions from its first byte.  Properties
 * checked beyond "no crash": nothing reports consuming more than it was given; every frame
 * that decodes re-encodes no longer and reads back the same; a header has one encoding. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int cond) {
    if (!cond) abort();
}

static void walk(const uint8_t *p, size_t n, int reply_dir) {
    int frames = pl_payload_check(p, n, reply_dir);
    require(frames < 0 ? frames >= -PL_WIRE_REASONS : (size_t)frames <= n);
    for (size_t at = 0; at < n;) {
        pl_frame f, g;
        uint8_t buf[2 * PL_DATAGRAM_MOST];
        int used = pl_frame_decode(&f, p + at, n - at, reply_dir);
        if (used < 0) break;
        require(used >= 1 && (size_t)used <= n - at);
        size_t size = pl_frame_encode(buf, sizeof buf, &f);
        require(size >= 1 && size <= (size_t)used);
        require(pl_frame_decode(&g, buf, size, reply_dir) == (int)size);
        require(pl_frame_size(&g) == size);
        at += (size_t)used;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    pl_header h;
    int len = pl_header_decode(&h, data, size);
    require(len < 0 || (size_t)len <= size);
    if (len > 0) {
        uint8_t again[PL_HEADER_MOST];
        require(pl_header_encode(again, sizeof again, &h) == (size_t)len);
        require(memcmp(again, data, (size_t)len) == 0);
        walk(data + len, size - (size_t)len, h.reply);
    }
    int packet = pl_packet_decode(&h, data, size);
    require(packet < 0 || (packet == len && (size_t)packet + PL_TAG_BYTES < size));
    walk(data, size, 0);
    walk(data, size, 1);
    return 0;
}
