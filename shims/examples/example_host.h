/* example_host.h: the host's side of a pure-link endpoint, kept in memory, shared by the
 * examples so that each of them shows only how it moves datagrams and time.
 *
 * A host is the program around the core.  On the receiver it decides which streams to
 * accept (STREAM_OPEN), stores records (RECORD, then pure_link_stored) and keeps the memo
 * (MEMO_WRITE, then pure_link_memo_written).  On the sender it queues records and waits
 * for STORED and CLOSED.  A real host stores on disk and calls pure_link_stored() only
 * once the bytes are durable; here "stored" means "checked and counted in memory", which
 * is enough to show the calls in their order.
 *
 * The records are made up from their number, so the receiver can check every byte of
 * every record without keeping a copy: record i has ex_record_len(i) bytes, byte k of it
 * is ex_record_byte(i, k).  Uses only the public header. */
#ifndef EXAMPLE_HOST_H
#define EXAMPLE_HOST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pure_link.h"

#define EX_INPUT  "example-in"  /* the receiver's one input */
#define EX_SOURCE "example-out" /* the sender's output name */
#define EX_SHAPE  7u            /* the records' shape id; both sides agree on it */
#define EX_RECORD_BYTES_MOST 3000u /* records span one to three datagrams */

static inline size_t ex_record_len(int64_t i) { return 1 + (size_t)((uint64_t)i * 7919u % EX_RECORD_BYTES_MOST); }
static inline uint8_t ex_record_byte(int64_t i, size_t k) { return (uint8_t)((uint64_t)i * 131u + k * 7u + (k >> 8)); }

/* An endpoint in memory from malloc: the core itself never allocates.  `seed` must be 32
 * random bytes.  Returns NULL (after saying why) when the config is invalid; otherwise the
 * caller owns *memory and frees it once it is done with the endpoint. */
static inline pure_link *ex_endpoint_new(const pure_link_config *cfg, const uint8_t seed[32], uint64_t now_ns,
                                         void **memory_out) {
    *memory_out = NULL;
    size_t bytes = pure_link_size(cfg);
    if (bytes == 0) { fprintf(stderr, "example: invalid pure_link_config\n"); return NULL; }
    size_t rounded = (bytes + PURE_LINK_ALIGN - 1) / PURE_LINK_ALIGN * PURE_LINK_ALIGN;
    void *memory = aligned_alloc(PURE_LINK_ALIGN, rounded);
    if (!memory) { fprintf(stderr, "example: out of memory (%zu B)\n", rounded); return NULL; }
    pure_link *pl = pure_link_init(memory, bytes, cfg, seed, now_ns);
    if (!pl) { free(memory); return NULL; }
    *memory_out = memory;
    return pl;
}

/* ---- Receiver host: one input, a few runs, everything in memory. ---- */
#define EX_RUNS_MOST 8

typedef struct ex_receiver {
    pure_link *pl;
    /* The stored mark of each run, keyed on (peer, run): a stream handle is a slot that
     * another run may take after this one goes idle. */
    struct { int used, peer; uint64_t run; int64_t stored; } runs[EX_RUNS_MOST];
    int64_t records_stored, records_bad, refused;
    uint8_t *memo;             /* the memo "file": pure_link_memo_size() bytes */
    size_t memo_bytes;
} ex_receiver;

/* The stored mark of the event's run, which a real host keeps durably beside the records
 * and reads back after a restart; NULL when this host has no room for another run. */
static inline int64_t *ex_stored_mark(ex_receiver *r, const pure_link_event *ev) {
    for (int i = 0; i < EX_RUNS_MOST; i++)
        if (r->runs[i].used && r->runs[i].peer == ev->peer && r->runs[i].run == ev->run) return &r->runs[i].stored;
    for (int i = 0; i < EX_RUNS_MOST; i++)
        if (!r->runs[i].used) {
            r->runs[i].used = 1, r->runs[i].peer = ev->peer, r->runs[i].run = ev->run;
            return &r->runs[i].stored;
        }
    return NULL;
}

static inline int ex_record_ok(const pure_link_event *ev) {
    if (ev->len + ev->len2 != ex_record_len(ev->record)) return 0;
    for (size_t k = 0; k < ev->len + ev->len2; k++) {
        uint8_t b = k < ev->len ? ev->data[k] : ev->data2[k - ev->len];
        if (b != ex_record_byte(ev->record, k)) return 0;
    }
    return 1;
}

/* Sets up the host of receiving endpoint `pl` (made with `cfg`), with an empty memo. */
static inline int ex_receiver_init(ex_receiver *r, pure_link *pl, const pure_link_config *cfg) {
    memset(r, 0, sizeof *r);
    r->pl = pl;
    r->memo_bytes = cfg->memo_enabled ? pure_link_memo_size(cfg) : 0;
    r->memo = r->memo_bytes ? calloc(1, r->memo_bytes) : NULL;
    return r->memo_bytes && !r->memo ? -1 : 0;
}

/* Answers one receiver event. */
static inline void ex_receiver_event(ex_receiver *r, const pure_link_event *ev, uint64_t now_ns) {
    switch (ev->kind) {
    case PURE_LINK_EVENT_STREAM_OPEN: {
        /* Accept our input with our shape; the stored mark lets a run that comes back
         * (after a restart of either side) skip what is already stored. */
        int64_t *mark = ex_stored_mark(r, ev);
        int answer = strcmp(ev->input, EX_INPUT) != 0 || !mark ? -1
                     : ev->shape != EX_SHAPE                    ? -PURE_LINK_OTHER_SHAPE
                                                                : 0;
        if (answer != 0) r->refused++;
        pure_link_stream_answer(r->pl, ev->stream, answer, mark ? *mark : 0, now_ns);
        break;
    }
    case PURE_LINK_EVENT_RECORD: {
        /* Records of a run arrive in order, each once; check the bytes, then "store". */
        int64_t *mark = ex_stored_mark(r, ev);
        if (!mark || ev->record != *mark || !ex_record_ok(ev)) { r->records_bad++; break; }
        *mark = ev->record + 1;
        r->records_stored++;
        pure_link_stored(r->pl, ev->stream, *mark, now_ns);
        break;
    }
    case PURE_LINK_EVENT_MEMO_WRITE:
        /* A real host does pwrite + fdatasync here, and answers when that returns. */
        if (ev->offset + ev->len <= r->memo_bytes) memcpy(r->memo + ev->offset, ev->data, ev->len);
        pure_link_memo_written(r->pl, ev->token, now_ns);
        break;
    case PURE_LINK_EVENT_FATAL:
        fprintf(stderr, "receiver: fatal: %s\n", pure_link_strerror(ev->code));
        r->records_bad++;
        break;
    default: break; /* EPOCH: a host that keeps a key log writes ev->secret here */
    }
}

/* ---- Sender host: `count` records on one sender, then close. ---- */
typedef struct ex_sender {
    pure_link *pl;
    int handle;
    int64_t count, queued, stored;
    int closed, failed;
} ex_sender;

/* Queues records until the core's queue is full or all are queued; closes after the last. */
static inline void ex_sender_feed(ex_sender *s, uint64_t now_ns) {
    static uint8_t record[EX_RECORD_BYTES_MOST];
    while (s->queued < s->count) {
        size_t len = ex_record_len(s->queued);
        for (size_t k = 0; k < len; k++) record[k] = ex_record_byte(s->queued, k);
        int64_t n = pure_link_send(s->pl, s->handle, record, len, now_ns);
        if (n == PURE_LINK_ERR_FULL) return; /* more after the next STORED */
        if (n != s->queued) { fprintf(stderr, "sender: send: %s\n", pure_link_strerror((int)n)); s->failed = 1; return; }
        if (++s->queued == s->count) pure_link_sender_close(s->pl, s->handle, now_ns);
    }
}

static inline void ex_sender_event(ex_sender *s, const pure_link_event *ev, uint64_t now_ns) {
    switch (ev->kind) {
    case PURE_LINK_EVENT_STORED: s->stored = ev->record; ex_sender_feed(s, now_ns); break;
    case PURE_LINK_EVENT_CLOSED: s->closed = 1; break;
    case PURE_LINK_EVENT_REFUSED: fprintf(stderr, "sender: refused (reason %u)\n", ev->reason); break;
    case PURE_LINK_EVENT_FATAL:
        fprintf(stderr, "sender: fatal: %s\n", pure_link_strerror(ev->code));
        s->failed = 1;
        break;
    default: break;
    }
}

/* Opens the sender towards `receiver_public` at `to` and queues the first records. */
static inline int ex_sender_start(ex_sender *s, const uint8_t receiver_public[32], const pure_link_addr *to,
                                  uint64_t now_ns) {
    pure_link_sender_config sc;
    memset(&sc, 0, sizeof sc);
    memcpy(sc.receiver_public, receiver_public, 32);
    sc.receiver_addr = *to;
    sc.version = PURE_LINK_VERSION;
    sc.source = EX_SOURCE, sc.input = EX_INPUT, sc.shape = EX_SHAPE;
    s->handle = pure_link_sender_open(s->pl, &sc, now_ns);
    if (s->handle < 0) { fprintf(stderr, "sender: open: %s\n", pure_link_strerror(s->handle)); return -1; }
    ex_sender_feed(s, now_ns);
    return 0;
}

/* Answers every queued event of the endpoint whose host is rx (a receiver) or tx (a
 * sender); returns how many there were. */
static inline int ex_answer_events(pure_link *pl, ex_receiver *rx, ex_sender *tx, uint64_t now_ns) {
    pure_link_event ev;
    int n = 0;
    for (; pure_link_event_next(pl, &ev); n++)
        if (rx) ex_receiver_event(rx, &ev, now_ns);
        else ex_sender_event(tx, &ev, now_ns);
    return n;
}

/* A small config for one side of one link.  The defaults size an endpoint that both sends
 * and receives, for many peers and runs (about 1.2 GB, most of it never touched); a
 * receiver here needs no send queue and one run slot, a sender no peers and no run slots. */
static inline void ex_config(pure_link_config *cfg, const uint8_t secret[32], int receiver) {
    memset(cfg, 0, sizeof *cfg);
    cfg->version = PURE_LINK_VERSION;
    memcpy(cfg->static_secret, secret, 32);
    if (receiver) {
        cfg->senders_most = PURE_LINK_NONE;
        cfg->peers_most = 1, cfg->runs_most = 1;
        cfg->memo_enabled = 1; /* restarts keep their keys (spec/memo.md) */
    } else {
        cfg->peers_most = PURE_LINK_NONE;
        cfg->senders_most = 1;
        cfg->send_queue_bytes = PURE_LINK_RECORD_MOST + 8; /* the least; the sender meets FULL */
    }
}
#endif
