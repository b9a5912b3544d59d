/* fuzz_pair.h: a sender and a receiver for the endpoint fuzz targets, set up once per
 * process and restored from a snapshot of their memory before every input.
 *
 * An endpoint lives entirely in the memory its caller gives it (no globals, no allocation),
 * so putting its bytes back at the same address restores it: its internal pointers point
 * into the same block.  Setting the pair up again for every input (key derivation, the
 * first flight) held the target near 1,000 executions per second.
 *
 * The block is 17 MiB (sender) and 38 MiB (receiver), mostly the receive pool, the hand-over
 * ring and the send pool, and nearly all of it still zero at the snapshot.  The snapshot
 * sorts its pages:
 *  - pages that are not all zero: every restore copies them back;
 *  - zero pages in the regions that pure_link_init leaves as they are and the core writes
 *    before it reads (fp_regions_find: run slots, pools, expanded keys, tables): a restore
 *    leaves what the last input wrote there, which costs neither a copy nor, once written,
 *    a page fault;
 *  - the other zero pages (the memo mirror and the pool's tables, mostly): every restore
 *    clears them.
 * No restore makes a system call or drops a page.  Every FP_VERIFY_EVERY inputs the input
 * runs twice: as usual, then again from the snapshot with those regions' zero pages dropped
 * (MADV_DONTNEED: they read as zero).  Both runs must pull the same datagrams, hand over the
 * same events and record bytes and leave the same state outside those pages, so the core
 * read nothing there that it had not written; and before each run the rest of the block is
 * compared with the snapshot byte for byte.
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

#include "internal.h"
#include "pure_link.h"

#define FP_PULLS_MOST        64   /* datagrams taken from one side per serve */
#define FP_DEPTH_MOST        2    /* how far answers to answers are followed in one serve */
#ifndef FP_STEPS_MOST
#define FP_STEPS_MOST        64   /* script steps one input may take: inputs grown to max_len held
                                     thousands; the corpus reaches no more edges beyond 64 */
#endif
#define FP_STREAMS_WATCHED   64
#define FP_QUEUE_RECORDS     64   /* small counts keep the copied state small */
#define FP_UNSTORED_RECORDS  64
#define FP_PACKETS_MOST      64   /* a sender's packet table: the least a config may ask */
#define FP_SPANS_MOST        256
#define FP_LAZY_MOST         6    /* regions the core writes before it reads (fp_regions_find) */
#ifndef FP_VERIFY_EVERY
#define FP_VERIFY_EVERY      4096 /* inputs between checked double runs (~0.1 % of the time) */
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
    fp_span copy[FP_SPANS_MOST], zero[FP_SPANS_MOST], lazy[FP_SPANS_MOST]; /* zero: cleared; lazy: left */
    int copies, zeros, lazies;
    fp_span region[FP_LAZY_MOST]; /* written before read, whole pages only */
    int regions;
    pure_link_addr addr;
    uint8_t pub[32];
    int64_t next_record[FP_STREAMS_WATCHED]; /* the host's view: the next record it expects */
    int64_t next_record_snapshot[FP_STREAMS_WATCHED];
} fp_side;

static fp_side fp_a, fp_b; /* a sends, b receives */
static uint64_t fp_now_ns; /* the clock at the snapshot */
static int fp_digesting;   /* a checked run: what the hosts see goes into fp_digest */
static uint64_t fp_digest;

/* FNV-1a.  Outside coverage: the checked runs must not look like new behaviour.  (The
 * replay build, tests/fuzz/replay.c, may use a compiler without that attribute.) */
#ifdef __clang__
#define FP_NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define FP_NO_COVERAGE
#endif
FP_NO_COVERAGE static void fp_mix(const void *p, size_t len) {
    const uint8_t *b = p;
    for (size_t i = 0; i < len; i++) fp_digest = (fp_digest ^ b[i]) * 0x100000001b3ull;
}

static size_t fp_page_bytes(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* [from, to) of s's block, shrunk to whole pages, as a region written before it is read. */
static void fp_region_add(fp_side *s, const uint8_t *from, const uint8_t *to) {
    const size_t page = fp_page_bytes();
    const size_t at = ((size_t)(from - s->mem) + page - 1) & ~(page - 1), end = (size_t)(to - s->mem) & ~(page - 1);
    require(s->regions < FP_LAZY_MOST && from >= s->mem && to <= s->mem + s->bytes);
    if (end > at) s->region[s->regions++] = (fp_span){at, end - at};
}

/* The parts of the block pure_link_init leaves as they are, which the core writes before it
 * reads (endpoint.c, layout_of and pure_link_init): the event slots (written when pushed),
 * peers and run slots (each cleared when taken), the run heap (read below its count) and
 * the free stacks (read where a block was given back), the receive pool's blocks and
 * hand-over ring, the expanded keys (built before use), the borrowed hole tables (filled
 * when borrowed) and the send pool.  Not the maps' keys, which init clears, nor a sender's
 * packet table, which it clears when its run starts and then reads as cleared. */
static void fp_regions_find(fp_side *s) {
    const pure_link *pl = s->pl;
    s->regions = 0;
    fp_region_add(s, (const uint8_t *)pl->events, (const uint8_t *)&pl->ev_head); /* slots written when pushed */
    fp_region_add(s, (const uint8_t *)pl->peers, (const uint8_t *)pl->memo_mirror);
    if (pl->pool.store.blocks > 0) {
        fp_region_add(s, (const uint8_t *)pl->run_heap, (const uint8_t *)(pl->pool.store.free_stack + pl->pool.store.blocks));
        fp_region_add(s, pl->pool.store.bytes, pl->pool.stage + PL_STAGE_BYTES);
    }
    /* The expanded keys, the hole tables and their stack, the send pool's stack: up to the
     * senders' own tables, or to the send pool where there are none. */
    const uint8_t *tables = pl->config.senders_most > 0 ? (const uint8_t *)pl->senders[0].block_table : pl->send_store.bytes;
    fp_region_add(s, (const uint8_t *)pl->keys.ctx, tables);
    fp_region_add(s, pl->send_store.bytes, s->mem + s->bytes); /* the send pool ends the block */
}

static void fp_side_init(fp_side *s, uint8_t id, const pure_link_crypto *crypto, uint64_t now) {
    pure_link_config c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < 32; i++) c.static_secret[i] = (uint8_t)(id * 17 + i);
    c.crypto = crypto;
    /* Small tables keep the state a restore clears small: a sends on one output (the least
     * packet table), b only receives. */
    c.senders_most = id == 1 ? 1 : PURE_LINK_NONE;
    c.peers_most = id == 1 ? PURE_LINK_NONE : 2, c.runs_most = id == 1 ? PURE_LINK_NONE : 4;
    c.packets_in_flight_most = FP_PACKETS_MOST;
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
    fp_regions_find(s);
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
        if (fp_digesting) fp_mix(&ev.kind, sizeof ev.kind), fp_mix(&ev.stream, sizeof ev.stream), fp_mix(&ev.record, sizeof ev.record);
        switch (ev.kind) {
        case PURE_LINK_EVENT_STREAM_OPEN: pure_link_stream_answer(s->pl, ev.stream, 0, 0, now); break;
        case PURE_LINK_EVENT_RECORD:
            if (fp_digesting) fp_mix(ev.data, ev.len), fp_mix(ev.data2, ev.len2);
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
        if (fp_digesting) fp_mix(buf, (size_t)n);
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

enum { FP_PAGE_COPY, FP_PAGE_ZERO, FP_PAGE_LAZY };

static int fp_page_kind(const fp_side *s, size_t at, size_t len) {
    if (len < fp_page_bytes() || !fp_zero(s->mem + at, len)) return FP_PAGE_COPY;
    for (int i = 0; i < s->regions; i++)
        if (at >= s->region[i].at && at + len <= s->region[i].at + s->region[i].len) return FP_PAGE_LAZY;
    return FP_PAGE_ZERO;
}

/* A run of pages of one kind into its list. */
static void fp_run_add(fp_side *s, int kind, size_t at, size_t len) {
    if (kind == FP_PAGE_LAZY) fp_span_add(s->lazy, &s->lazies, at, len);
    else if (kind == FP_PAGE_ZERO) fp_span_add(s->zero, &s->zeros, at, len);
    else fp_span_add(s->copy, &s->copies, at, len);
}

/* The snapshot: every page sorted (a partial page at the end is copied); pages that are not
 * all zero are copied into it (the snapshot's own pages start zero). */
static void fp_take(fp_side *s) {
    const size_t page = fp_page_bytes();
    require(((uintptr_t)s->mem & (page - 1)) == 0);
    s->copies = s->zeros = s->lazies = 0;
    size_t run_at = 0;
    int run_kind = FP_PAGE_COPY;
    for (size_t at = 0; at < s->bytes; at += page) {
        const size_t len = s->bytes - at < page ? s->bytes - at : page;
        const int kind = fp_page_kind(s, at, len);
        if (kind == FP_PAGE_COPY) memcpy(s->snapshot + at, s->mem + at, len);
        if (kind != run_kind) {
            fp_run_add(s, run_kind, run_at, at - run_at);
            run_at = at, run_kind = kind;
        }
    }
    fp_run_add(s, run_kind, run_at, s->bytes - run_at);
    memcpy(s->next_record_snapshot, s->next_record, sizeof s->next_record);
}

/* A restore's copy and clear, without the address sanitizer's range checks: the block and
 * the snapshot are mappings it never poisons, and checking them read an eighth of every
 * restored byte again (on x86-64 the string instructions, which glibc itself uses at these
 * sizes; elsewhere the library calls, checked). */
static void fp_copy(uint8_t *to, const uint8_t *from, size_t len) {
#if defined(__x86_64__)
    __asm__ volatile("rep movsb" : "+D"(to), "+S"(from), "+c"(len) : : "memory");
#else
    memcpy(to, from, len);
#endif
}

static void fp_clear(uint8_t *to, size_t len) {
#if defined(__x86_64__)
    __asm__ volatile("rep stosb" : "+D"(to), "+c"(len) : "a"(0) : "memory");
#else
    memset(to, 0, len);
#endif
}

/* One side back to its snapshot. */
static void fp_restore_side(fp_side *s) {
    for (int i = 0; i < s->zeros; i++) fp_clear(s->mem + s->zero[i].at, s->zero[i].len);
    for (int i = 0; i < s->copies; i++) fp_copy(s->mem + s->copy[i].at, s->snapshot + s->copy[i].at, s->copy[i].len);
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

/* Everything but the lazy pages is the snapshot again. */
static void fp_verify_side(const fp_side *s) {
    for (int i = 0; i < s->copies; i++) require(memcmp(s->mem + s->copy[i].at, s->snapshot + s->copy[i].at, s->copy[i].len) == 0);
    for (int i = 0; i < s->zeros; i++) require(fp_zero(s->mem + s->zero[i].at, s->zero[i].len));
}

/* What a run left outside the lazy pages, into the digest. */
static void fp_mix_side(const fp_side *s) {
    for (int i = 0; i < s->copies; i++) fp_mix(s->mem + s->copy[i].at, s->copy[i].len);
    for (int i = 0; i < s->zeros; i++) fp_mix(s->mem + s->zero[i].at, s->zero[i].len);
    fp_mix(s->next_record, sizeof s->next_record);
}

static void fp_lazy_clear(const fp_side *s) {
    for (int i = 0; i < s->lazies; i++)
        require(madvise(s->mem + s->lazy[i].at, s->lazy[i].len, MADV_DONTNEED) == 0);
}

/* Back to the state fp_setup left, host views included. */
static void fp_restore(void) {
    fp_restore_side(&fp_a);
    fp_restore_side(&fp_b);
}

/* One run of `run` over the input from the snapshot, and its digest when checked. */
static uint64_t fp_run_once(void (*run)(const uint8_t *, size_t), const uint8_t *data, size_t size, int checked) {
    fp_restore();
    if (!checked) {
        run(data, size);
        return 0;
    }
    fp_verify_side(&fp_a), fp_verify_side(&fp_b);
    fp_digest = 0xcbf29ce484222325ull, fp_digesting = 1;
    run(data, size);
    fp_mix_side(&fp_a), fp_mix_side(&fp_b);
    fp_digesting = 0;
    return fp_digest;
}

/* The input through `run` from the snapshot; every FP_VERIFY_EVERY inputs, twice (above). */
static void fp_run(void (*run)(const uint8_t *, size_t), const uint8_t *data, size_t size) {
    static uint64_t inputs;
    const int checked = ++inputs % FP_VERIFY_EVERY == 0;
    const uint64_t first = fp_run_once(run, data, size, checked);
    if (!checked) return;
    fp_lazy_clear(&fp_a), fp_lazy_clear(&fp_b);
    require(fp_run_once(run, data, size, 1) == first);
}

#endif
