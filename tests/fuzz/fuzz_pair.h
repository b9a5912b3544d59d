/* fuzz_pair.h: a sender and a receiver for the endpoint fuzz targets, set up once per
 * process and restored from a snapshot of their memory before every input.
 *
 * An endpoint lives entirely in the memory its caller gives it (no globals, no allocation),
 * so putting its bytes back at the same address restores it: its internal pointers point
 * into the same block.  Setting the pair up again for every input (key derivation, the
 * first flight) held the target near 1,000 executions per second.
 *
 * The block is over 100 MiB a side, mostly send queues and receive memory sized for the
 * largest record, and nearly all of it still zero at the snapshot.  So the snapshot notes
 * the stretches of at least FP_HOLE_BYTES that are all zero (the holes), and a restore
 * drops their pages (MADV_DONTNEED on anonymous memory: they read as zero again) and copies
 * back only the rest.  That is the snapshot byte for byte without knowing the core's layout;
 * every FP_VERIFY_EVERY inputs the whole block is compared to prove it.
 *
 * The cipher is chosen at build time: FUZZ_AEAD_REAL uses the core's default table
 * (AES-128-GCM, X25519); otherwise the target passes its own fuzz-friendly table. */
#ifndef FUZZ_PAIR_H
#define FUZZ_PAIR_H

#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* madvise */
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pure_link.h"

#define FP_PULLS_MOST        64   /* datagrams taken from one side per serve */
#define FP_DEPTH_MOST        2    /* how far answers to answers are followed in one serve */
#define FP_STREAMS_WATCHED   64
#define FP_QUEUE_RECORDS     64   /* small counts keep the copied state small */
#define FP_UNSTORED_RECORDS  64
#define FP_HOLE_BYTES        (16u * 1024u) /* shorter zero stretches are copied with the rest */
#define FP_SPANS_MOST        256
#ifndef FP_VERIFY_EVERY
#define FP_VERIFY_EVERY      65536 /* inputs between whole-block comparisons (~1 % of the time) */
#endif

static void require(int cond) {
    if (!cond) abort();
}

typedef struct fp_span {
    size_t at, len;
} fp_span;

typedef struct fp_side {
    pure_link *pl;
    uint8_t *mem, *snapshot; /* the snapshot is a copy at the same offsets */
    size_t bytes;
    fp_span copy[FP_SPANS_MOST], hole[FP_SPANS_MOST];
    int copies, holes;
    pure_link_addr addr;
    uint8_t pub[32];
    int64_t next_record[FP_STREAMS_WATCHED]; /* the host's view: the next record it expects */
    int64_t next_record_snapshot[FP_STREAMS_WATCHED];
} fp_side;

static fp_side fp_a, fp_b; /* a sends, b receives */
static uint64_t fp_now_ns; /* the clock at the snapshot */

static void fp_side_init(fp_side *s, uint8_t id, const pure_link_crypto *crypto, uint64_t now) {
    pure_link_config c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < 32; i++) c.static_secret[i] = (uint8_t)(id * 17 + i);
    c.crypto = crypto;
    c.senders_most = 2, c.peers_most = 2, c.runs_most = 4, c.packets_in_flight_most = 256;
    c.memo_enabled = 1;
    c.send_queue_records = FP_QUEUE_RECORDS, c.unstored_records_most = FP_UNSTORED_RECORDS;
    s->bytes = pure_link_size(&c);
    /* Anonymous pages: zero until written (most never are), and MADV_DONTNEED makes them so again. */
    s->mem = mmap(NULL, s->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    s->snapshot = mmap(NULL, s->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    require(s->mem != MAP_FAILED && s->snapshot != MAP_FAILED);
    uint8_t seed[32] = {id};
    s->pl = pure_link_init(s->mem, s->bytes, &c, seed, now);
    require(s->pl != NULL);
    pure_link_public_key(s->pl, s->pub);
    s->addr.len = 6;
    memset(s->addr.bytes, 0, sizeof s->addr.bytes);
    s->addr.bytes[3] = id;
    memset(s->next_record, 0, sizeof s->next_record);
}

/* The host's part: answer every event (checking a record never comes twice), then hand
 * every datagram pulled to the other side, following answers FP_DEPTH_MOST deep. */
static void fp_serve(fp_side *s, fp_side *peer, uint64_t now, int depth) {
    pure_link_event ev;
    while (pure_link_event_next(s->pl, &ev)) {
        switch (ev.kind) {
        case PURE_LINK_EVENT_STREAM_OPEN: pure_link_stream_answer(s->pl, ev.stream, 0, 0, now); break;
        case PURE_LINK_EVENT_RECORD:
            require(ev.stream >= 0 && ev.stream < FP_STREAMS_WATCHED);
            require(ev.record >= s->next_record[ev.stream]); /* never twice */
            s->next_record[ev.stream] = ev.record + 1;
            pure_link_stored(s->pl, ev.stream, ev.record + 1, now);
            break;
        case PURE_LINK_EVENT_MEMO_WRITE: pure_link_memo_written(s->pl, ev.token, now); break;
        default: break;
        }
    }
    uint8_t buf[PURE_LINK_DATAGRAM_MOST];
    pure_link_addr to;
    int n, count = 0;
    while ((n = pure_link_pull(s->pl, buf, sizeof buf, &to, now)) > 0 && count++ < FP_PULLS_MOST) {
        require(n <= (int)PURE_LINK_DATAGRAM_MOST);
        if (depth < FP_DEPTH_MOST) {
            pure_link_receive(peer->pl, &s->addr, buf, (size_t)n, now);
            fp_serve(peer, s, now, depth + 1);
        }
    }
}

/* Both sides run their timers at `now`, then the hosts answer. */
static void fp_step(fp_side *to, fp_side *from, uint64_t now) {
    pure_link_tick(fp_a.pl, now);
    pure_link_tick(fp_b.pl, now);
    fp_serve(to, from, now, 0);
    fp_serve(from, to, now, 0);
}

static size_t fp_page_bytes(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* memcmp against zeros: a byte loop here would run through the fuzzer's comparison hooks
 * 2^28 times at start-up. */
static int fp_zero(const uint8_t *p, size_t len) {
    static const uint8_t zeros[4096];
    for (size_t at = 0; at < len; at += sizeof zeros) {
        const size_t n = len - at < sizeof zeros ? len - at : sizeof zeros;
        if (memcmp(p + at, zeros, n) != 0) return 0;
    }
    return 1;
}

static void fp_span_add(fp_span *list, int *count, size_t at, size_t len) {
    if (len == 0) return;
    if (*count > 0 && list[*count - 1].at + list[*count - 1].len == at) {
        list[*count - 1].len += len; /* adjacent: one span */
        return;
    }
    require(*count < FP_SPANS_MOST);
    list[(*count)++] = (fp_span){at, len};
}

/* The snapshot: the block's pages that are not all zero are copied (the snapshot's own pages
 * start zero); page-aligned zero stretches of FP_HOLE_BYTES or more become holes, everything
 * else (including the partial pages at the ends) spans to copy back. */
static void fp_take(fp_side *s) {
    const size_t page = fp_page_bytes();
    size_t zero_at = 0, zero_len = 0, done = 0;
    require(((uintptr_t)s->mem & (page - 1)) == 0);
    s->copies = s->holes = 0;
    for (size_t at = 0; at < s->bytes; at += page) {
        const size_t len = s->bytes - at < page ? s->bytes - at : page;
        const int zero = len == page && fp_zero(s->mem + at, len);
        if (!zero) memcpy(s->snapshot + at, s->mem + at, len);
        if (zero && zero_len == 0) zero_at = at;
        if (zero) zero_len += len;
        if (!zero || at + len == s->bytes) {
            if (zero_len >= FP_HOLE_BYTES) {
                fp_span_add(s->copy, &s->copies, done, zero_at - done);
                fp_span_add(s->hole, &s->holes, zero_at, zero_len);
                done = zero_at + zero_len;
            }
            zero_len = 0;
        }
    }
    fp_span_add(s->copy, &s->copies, done, s->bytes - done);
    memcpy(s->next_record_snapshot, s->next_record, sizeof s->next_record);
}

/* One side back to its snapshot. */
static void fp_restore_side(fp_side *s) {
    for (int i = 0; i < s->holes; i++)
        require(madvise(s->mem + s->hole[i].at, s->hole[i].len, MADV_DONTNEED) == 0);
    for (int i = 0; i < s->copies; i++) memcpy(s->mem + s->copy[i].at, s->snapshot + s->copy[i].at, s->copy[i].len);
    memcpy(s->next_record, s->next_record_snapshot, sizeof s->next_record);
}

/* Sets the pair up: b wired to a, a's stream open with `records` records queued (sizes
 * i * 13 mod record_bytes_most), then `rounds` exchanges `round_ns` apart (0: the first
 * flight only).  Takes the snapshot. */
static void fp_setup(const pure_link_crypto *crypto, int records, size_t record_bytes_most, int rounds,
                     uint64_t round_ns) {
    uint64_t now = 1000000;
    fp_side_init(&fp_a, 1, crypto, now);
    fp_side_init(&fp_b, 2, crypto, now);
    require(pure_link_wire_peer(fp_b.pl, fp_a.pub, "*", now) >= 0);
    pure_link_sender_config sc;
    memset(&sc, 0, sizeof sc);
    memcpy(sc.receiver_public, fp_b.pub, 32);
    sc.receiver_addr = fp_b.addr, sc.version = PURE_LINK_VERSION, sc.source = "f", sc.input = "g";
    require(pure_link_sender_open(fp_a.pl, &sc, now) == 0);
    static uint8_t rec[PURE_LINK_DATAGRAM_MOST * 4] = {7};
    require(records <= FP_QUEUE_RECORDS && record_bytes_most <= sizeof rec);
    for (int i = 0; i < records; i++)
        require(pure_link_send(fp_a.pl, 0, rec, (size_t)(i * 13) % record_bytes_most, now) >= 0);
    fp_serve(&fp_a, &fp_b, now, 0);
    for (int i = 0; i < rounds; i++) {
        now += round_ns;
        fp_step(&fp_b, &fp_a, now);
    }
    fp_now_ns = now;
    fp_take(&fp_a);
    fp_take(&fp_b);
}

/* Back to the state fp_setup left, host views included. */
static void fp_restore(void) {
    static uint64_t restores;
    fp_restore_side(&fp_a);
    fp_restore_side(&fp_b);
    if (++restores % FP_VERIFY_EVERY == 0) {
        require(memcmp(fp_a.mem, fp_a.snapshot, fp_a.bytes) == 0);
        require(memcmp(fp_b.mem, fp_b.snapshot, fp_b.bytes) == 0);
    }
}

#endif
