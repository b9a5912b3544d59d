/* link_loop.h: a small in-memory network for core tests — nodes, a fixed one-way delay,
 * seeded loss, reordering by jitter, virtual time — so that core behaviour can be asserted
 * without the simulator.  Header-only; each test program includes it once. */
#ifndef LINK_LOOP_H
#define LINK_LOOP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pure_link.h"

#define LL_NODES 4
#define LL_STREAMS 128

typedef struct ll_stream {
    uint64_t run;
    int handle;            /* the receiver's stream handle */
    int64_t next;          /* next record number expected */
    int64_t stored;        /* host's durable mark */
} ll_stream;

struct ll_net;

typedef struct ll_node {
    pure_link *pl;
    void *mem;
    size_t mem_bytes;
    pure_link_config config;
    pure_link_addr addr;
    uint8_t secret[32], pub[32];
    int answer;                      /* STREAM_OPEN answer: 0, -1 or -PURE_LINK_OTHER_SHAPE */
    int hold_stored;                 /* 1: the host does not report records stored (yet) */
    int hold_events;                 /* 1: the host does not drain its events (yet) */
    int pull_each_stored;            /* 1: the host pulls after each record it stores, so each
                                        may draw a reply of its own (several per packet) */
    /* With pull_each_stored: called before that pull (the stream's handle) */
    void (*before_pull)(struct ll_net *net, int node, int stream);
    uint64_t input_appears_ns;       /* before this, answer -1 */
    int64_t resume_mark;             /* a STREAM_OPEN that asks where to resume is answered
                                        with this (records the source holds), -1: as any other */
    uint64_t resume_opens;
    ll_stream streams[LL_STREAMS];
    uint64_t records_delivered, duplicates, out_of_order, bytes_delivered;
    uint64_t refused_events, released_events, epoch_events, stream_opens;
    uint32_t refused_reason;         /* sender: the reason of the last REFUSED event */
    int64_t stored_seen[8];          /* sender: STORED mark per sender handle */
    uint64_t packets_out;
    /* Memo on a simulated disk: writes are durable at once unless memo_hold is set, in
     * which case they wait in memo_log (the torn-write tests replay that log). */
    uint8_t *memo;
    size_t memo_bytes;
    int memo_hold;
    struct ll_write { uint64_t offset, token; size_t len; uint8_t data[256]; } memo_log[256];
    int memo_logged;
    /* Wiring, kept for restarts. */
    uint8_t wired[4][32];
    char wired_sources[4][64];
    int wired_count;
} ll_node;

typedef struct ll_pkt {
    uint64_t at_ns;
    uint64_t seq;
    int to;
    pure_link_addr from;
    size_t len;
    uint8_t data[PURE_LINK_DATAGRAM_MOST];
} ll_pkt;

typedef struct ll_net {
    ll_node node[LL_NODES];
    int nodes;
    uint64_t now_ns;
    uint64_t delay_ns, jitter_ns;
    uint32_t loss_ppm;
    uint64_t rng;
    ll_pkt *q;
    size_t qn, qcap;
    uint64_t seq;
    uint64_t delivered_packets, dropped_packets;
    /* Optional tap on every datagram that leaves a node (return 0 to drop it). */
    int (*tap)(struct ll_net *net, int from, int to, uint8_t *data, size_t len, void *arg);
    void *tap_arg;
    /* Optional look at every RECORD event a host takes (its bytes are valid only then). */
    void (*on_record)(struct ll_net *net, int node, const pure_link_event *ev);
} ll_net;

static uint64_t ll_rand(ll_net *n) {
    uint64_t z = (n->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void ll_init(ll_net *n, uint64_t seed, uint64_t delay_ns) {
    memset(n, 0, sizeof *n);
    n->rng = seed;
    n->delay_ns = delay_ns;
    n->qcap = 1 << 16;
    n->q = calloc(n->qcap, sizeof *n->q);
}

/* Adds a node; cfg may be NULL for defaults.  Returns its index. */
static int ll_node_add(ll_net *n, const pure_link_config *cfg) {
    int i = n->nodes++;
    ll_node *d = &n->node[i];
    memset(d, 0, sizeof *d);
    if (cfg) d->config = *cfg;
    d->config.stream_buffer_bytes = d->config.stream_buffer_bytes ? d->config.stream_buffer_bytes
                                                                  : PURE_LINK_RECORD_MOST + 65536;
    for (int k = 0; k < 32; k++) d->secret[k] = (uint8_t)ll_rand(n);
    memcpy(d->config.static_secret, d->secret, 32);
    d->mem_bytes = pure_link_size(&d->config);
    if (d->config.memo_enabled) {
        d->memo_bytes = pure_link_memo_size(&d->config);
        d->memo = calloc(1, d->memo_bytes);
    }
    if (d->mem_bytes == 0) { fprintf(stderr, "bad config\n"); abort(); }
    d->mem = aligned_alloc(PURE_LINK_ALIGN, (d->mem_bytes + PURE_LINK_ALIGN - 1) / PURE_LINK_ALIGN * PURE_LINK_ALIGN);
    uint8_t seed[32];
    for (int k = 0; k < 32; k++) seed[k] = (uint8_t)ll_rand(n);
    d->pl = pure_link_init(d->mem, d->mem_bytes, &d->config, seed, n->now_ns);
    if (!d->pl) abort();
    pure_link_public_key(d->pl, d->pub);
    d->addr.len = 6;
    d->addr.bytes[0] = 10, d->addr.bytes[3] = (uint8_t)(i + 1), d->addr.bytes[5] = 80;
    return i;
}

static int ll_addr_node(ll_net *n, const pure_link_addr *a) {
    for (int i = 0; i < n->nodes; i++)
        if (n->node[i].addr.len == a->len && memcmp(n->node[i].addr.bytes, a->bytes, a->len) == 0) return i;
    return -1;
}

static ll_stream *ll_stream_of(ll_node *d, uint64_t run) {
    for (int i = 0; i < LL_STREAMS; i++)
        if (d->streams[i].run == run) return &d->streams[i];
    for (int i = 0; i < LL_STREAMS; i++)
        if (d->streams[i].run == 0) { d->streams[i].run = run; return &d->streams[i]; }
    abort();
}

/* Moves every datagram node i has to send onto the wire (through the tap and the loss). */
static void ll_pull_out(ll_net *n, int i) {
    ll_node *d = &n->node[i];
    uint8_t buf[PURE_LINK_DATAGRAM_MOST];
    pure_link_addr to;
    int len;
    while ((len = pure_link_pull(d->pl, buf, sizeof buf, &to, n->now_ns)) > 0) {
        d->packets_out++;
        int dst = ll_addr_node(n, &to);
        if (dst < 0) continue;
        if (n->tap && !n->tap(n, i, dst, buf, (size_t)len, n->tap_arg)) { n->dropped_packets++; continue; }
        if (n->loss_ppm && ll_rand(n) % 1000000 < n->loss_ppm) { n->dropped_packets++; continue; }
        if (n->qn == n->qcap) abort();
        ll_pkt *p = &n->q[n->qn++];
        p->at_ns = n->now_ns + n->delay_ns + (n->jitter_ns ? ll_rand(n) % n->jitter_ns : 0);
        p->seq = n->seq++;
        p->to = dst;
        p->from = d->addr;
        p->len = (size_t)len;
        memcpy(p->data, buf, (size_t)len);
    }
}

/* The host's side: answer events, then move datagrams onto the wire. */
static void ll_service(ll_net *n, int i) {
    ll_node *d = &n->node[i];
    pure_link_event ev;
    while (!d->hold_events && pure_link_event_next(d->pl, &ev)) {
        switch (ev.kind) {
        case PURE_LINK_EVENT_STREAM_OPEN: {
            d->stream_opens++;
            ll_stream *st = ll_stream_of(d, ev.run);
            int answer = n->now_ns < d->input_appears_ns ? -1 : d->answer;
            if (ev.reason == PURE_LINK_OPEN_RESUME) d->resume_opens++;
            if (ev.reason == PURE_LINK_OPEN_RESUME && d->resume_mark >= 0 && answer == 0) st->stored = d->resume_mark;
            pure_link_stream_answer(d->pl, ev.stream, answer, st->stored, n->now_ns);
            if (answer == 0 && st->next < st->stored) st->next = st->stored;
            break;
        }
        case PURE_LINK_EVENT_RECORD: {
            if (n->on_record) n->on_record(n, i, &ev);
            ll_stream *st = ll_stream_of(d, ev.run);
            st->handle = ev.stream;
            if (ev.record < st->stored) d->duplicates++;
            else if (ev.record != st->next) d->out_of_order++;
            st->next = ev.record + 1;
            d->records_delivered++;
            d->bytes_delivered += ev.len + ev.len2;
            if (!d->hold_stored) {
                st->stored = ev.record + 1;
                pure_link_stored(d->pl, ev.stream, st->stored, n->now_ns);
                if (d->pull_each_stored && d->before_pull) d->before_pull(n, i, ev.stream);
                if (d->pull_each_stored) ll_pull_out(n, i);
            }
            break;
        }
        case PURE_LINK_EVENT_STORED: if (ev.sender >= 0 && ev.sender < 8) d->stored_seen[ev.sender] = ev.record; break;
        case PURE_LINK_EVENT_REFUSED: d->refused_events++, d->refused_reason = ev.reason; break;
        case PURE_LINK_EVENT_RELEASED: d->released_events++; break;
        case PURE_LINK_EVENT_EPOCH: d->epoch_events++; break;
        case PURE_LINK_EVENT_MEMO_WRITE:
            if (d->memo_logged < 256 && ev.len <= 256) {
                struct ll_write *w = &d->memo_log[d->memo_logged++];
                w->offset = ev.offset, w->token = ev.token, w->len = ev.len;
                memcpy(w->data, ev.data, ev.len);
            }
            if (!d->memo_hold) {
                memcpy(d->memo + ev.offset, ev.data, ev.len);
                pure_link_memo_written(d->pl, ev.token, n->now_ns);
            }
            break;
        default: break;
        }
    }
    ll_pull_out(n, i);
}

/* Runs until `until_ns` of virtual time or until done(arg) says so. */
static void ll_run(ll_net *n, uint64_t until_ns, int (*done)(ll_net *, void *), void *arg) {
    for (int i = 0; i < n->nodes; i++) ll_service(n, i);
    uint64_t stuck = 0, last_ns = n->now_ns;
    while (n->now_ns < until_ns) {
        /* A core whose deadline stays in the past without progress would spin here: fail. */
        if (n->now_ns == last_ns) {
            if (++stuck > 1000000) { fprintf(stderr, "ll_run: no progress at %llu ns\n", (unsigned long long)n->now_ns); abort(); }
        } else {
            stuck = 0, last_ns = n->now_ns;
        }
        if (done && done(n, arg)) return;
        uint64_t next = until_ns;
        size_t pick = (size_t)-1;
        for (size_t k = 0; k < n->qn; k++)
            if (n->q[k].at_ns < next || (n->q[k].at_ns == next && pick != (size_t)-1 && n->q[k].seq < n->q[pick].seq)) {
                next = n->q[k].at_ns;
                pick = k;
            }
        int tick_node = -1;
        for (int i = 0; i < n->nodes; i++) {
            uint64_t d = pure_link_deadline(n->node[i].pl);
            if (d < next || (d == next && pick == (size_t)-1 && tick_node < 0)) { next = d; tick_node = i; pick = (size_t)-1; }
        }
        if (next < n->now_ns) next = n->now_ns;
        n->now_ns = next;
        if (n->now_ns >= until_ns && pick == (size_t)-1 && tick_node < 0) break;
        if (pick != (size_t)-1) {
            ll_pkt p = n->q[pick];
            n->q[pick] = n->q[--n->qn];
            n->delivered_packets++;
            pure_link_receive(n->node[p.to].pl, &p.from, p.data, p.len, n->now_ns);
            ll_service(n, p.to);
        } else if (tick_node >= 0) {
            pure_link_tick(n->node[tick_node].pl, n->now_ns);
            ll_service(n, tick_node);
        }
    }
}

/* The host of node i catches up: every record handed over is now stored. */
static inline void ll_store_all(ll_net *n, int i) {
    ll_node *d = &n->node[i];
    d->hold_stored = 0;
    for (int k = 0; k < LL_STREAMS; k++) {
        ll_stream *st = &d->streams[k];
        if (st->run == 0 || st->next <= st->stored) continue;
        st->stored = st->next;
        pure_link_stored(d->pl, st->handle, st->stored, n->now_ns);
    }
    ll_service(n, i);
}

/* Opens a sender on node s towards node r and wires s's key at r. */
static inline int ll_link_resume(ll_net *n, int s, int r, const char *source, const char *input, uint64_t shape,
                                 uint32_t resume) {
    pure_link_sender_config sc;
    memset(&sc, 0, sizeof sc);
    memcpy(sc.receiver_public, n->node[r].pub, 32);
    sc.receiver_addr = n->node[r].addr;
    sc.version = PURE_LINK_VERSION;
    sc.source = source;
    sc.input = input;
    sc.shape = shape;
    sc.resume = resume;
    return pure_link_sender_open(n->node[s].pl, &sc, n->now_ns);
}

static inline int ll_link(ll_net *n, int s, int r, const char *source, const char *input, uint64_t shape) {
    return ll_link_resume(n, s, r, source, input, shape, 0);
}

/* Wires sender key of node s at node r (remembered for restarts). */
static inline int ll_wire(ll_net *n, int r, int s, const char *sources) {
    ll_node *d = &n->node[r];
    memcpy(d->wired[d->wired_count], n->node[s].pub, 32);
    snprintf(d->wired_sources[d->wired_count], 64, "%s", sources);
    d->wired_count++;
    return pure_link_wire_peer(d->pl, n->node[s].pub, sources, n->now_ns);
}

/* kill -9 and start again: the endpoint's memory is gone; the static key, the wiring,
 * the host's stored marks and the memo disk stay.  Returns the memo load result. */
static inline int ll_restart(ll_net *n, int i) {
    ll_node *d = &n->node[i];
    memset(d->mem, 0xa5, d->mem_bytes);
    uint8_t seed[32];
    for (int k = 0; k < 32; k++) seed[k] = (uint8_t)ll_rand(n);
    d->pl = pure_link_init(d->mem, d->mem_bytes, &d->config, seed, n->now_ns);
    if (!d->pl) abort();
    for (int k = 0; k < d->wired_count; k++)
        if (pure_link_wire_peer(d->pl, d->wired[k], d->wired_sources[k], n->now_ns) < 0) abort();
    int rc = 0;
    if (d->memo) rc = pure_link_memo_load(d->pl, d->memo, d->memo_bytes, n->now_ns);
    /* Datagrams in flight to or from the old incarnation stay in flight. */
    return rc;
}

static inline void ll_free(ll_net *n) {
    for (int i = 0; i < n->nodes; i++) { free(n->node[i].mem); free(n->node[i].memo); }
    free(n->q);
}
#endif
