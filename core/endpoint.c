/* endpoint.c: the endpoint as a whole, the layer above both halves — config, memory
 * layout, dispatch of datagrams, pulls and timers to senders and run slots, the event queue's
 * exit, statistics.  The services both halves call (event.c, random.c, epoch_keys.c,
 * deadline.c) are below them (LAYERS). */
#include "internal.h"

#define KIB 1024u
#define MIB (1024u * 1024u)

/* Defaults for zero config fields (local choices, spec/protocol.md "Local choices"). */
#define DEFAULT_SENDERS          4u
#define DEFAULT_SEND_QUEUE_BYTES (32u * MIB)
#define DEFAULT_SEND_RECORDS     131072u
#define DEFAULT_SENT_MOST        16384u
#define DEFAULT_PEERS            16u
#define DEFAULT_RUNS             64u
#define DEFAULT_STREAM_BYTES     (PURE_LINK_RECORD_MOST + 64u * KIB)
#define DEFAULT_UNSTORED         16384u
#define DEFAULT_RECEIVE_BYTES    (20ull * MIB)
#define DEFAULT_SEND_BYTES       (PURE_LINK_RECORD_MOST + 64ull * KIB)
#define DEFAULT_IDLE_NS          (60ull * PL_NS_PER_S)
#define DEFAULT_EPOCH_NS         (120ull * PL_NS_PER_S)
#define DEFAULT_EPOCH_PACKETS    (1ull << 22)
#define DEFAULT_ACK_DELAY_US     5000u

/* Upper bounds on config fields: the layout's arithmetic must not overflow. */
#define CONFIG_SENDERS_MOST      1024u
#define CONFIG_PEERS_MOST        65536u
#define CONFIG_RUNS_MOST         (1u << 20)
#define CONFIG_RECORDS_MOST      (1u << 24)
#define CONFIG_SENT_MOST         (1u << 20)
#define CONFIG_BYTES_MOST        (1u << 30)
#define CONFIG_POOL_BYTES_MOST   (1ull << 40)  /* block numbers fit 32 bits */

void pure_link_config_default(pure_link_config *c) {
    assert(c != NULL);
    if (c->version == 0) c->version = PURE_LINK_VERSION;
    if (c->senders_most == 0) c->senders_most = DEFAULT_SENDERS;
    if (c->send_queue_bytes == 0) c->send_queue_bytes = DEFAULT_SEND_QUEUE_BYTES;
    if (c->send_queue_records == 0) c->send_queue_records = DEFAULT_SEND_RECORDS;
    if (c->packets_in_flight_most == 0) c->packets_in_flight_most = DEFAULT_SENT_MOST;
    if (c->peers_most == 0) c->peers_most = DEFAULT_PEERS;
    if (c->runs_most == 0) c->runs_most = c->peers_most == PURE_LINK_NONE ? PURE_LINK_NONE : DEFAULT_RUNS;
    if (c->stream_buffer_bytes == 0) c->stream_buffer_bytes = DEFAULT_STREAM_BYTES;
    if (c->unstored_records_most == 0) c->unstored_records_most = DEFAULT_UNSTORED;
    if (c->receive_memory_bytes == 0) c->receive_memory_bytes = DEFAULT_RECEIVE_BYTES;
    if (c->send_memory_bytes == 0) c->send_memory_bytes = DEFAULT_SEND_BYTES;
    if (c->idle_ns == 0) c->idle_ns = DEFAULT_IDLE_NS;
    if (c->epoch_ns == 0) c->epoch_ns = DEFAULT_EPOCH_NS;
    if (c->epoch_packets == 0) c->epoch_packets = DEFAULT_EPOCH_PACKETS;
    if (c->congestion == 0) c->congestion = PURE_LINK_CC_BBR;
    if (c->ack_delay_us == 0) c->ack_delay_us = DEFAULT_ACK_DELAY_US;
    if (c->copies == 0) c->copies = 1;
    if (c->pmtu_raise_ns == 0) c->pmtu_raise_ns = PL_PMTU_RAISE_NS_DEFAULT;
}

/* The config as the endpoint uses it: defaults filled in and PURE_LINK_NONE counts made 0
 * (the public config keeps PURE_LINK_NONE, so filling in defaults twice changes nothing). */
void pl_config_resolve(const pure_link_config *in, pure_link_config *c) {
    *c = *in;
    int no_senders = c->senders_most == PURE_LINK_NONE, no_peers = c->peers_most == PURE_LINK_NONE;
    pure_link_config_default(c);
    int no_runs = c->runs_most == PURE_LINK_NONE;
    if (no_senders) c->senders_most = 0;
    if (no_peers) c->peers_most = 0;
    if (no_runs) c->runs_most = 0;
}

static int config_valid(const pure_link_config *c) {
    return c->version == PURE_LINK_VERSION &&
           c->senders_most <= CONFIG_SENDERS_MOST &&
           c->send_queue_bytes >= PURE_LINK_RECORD_MOST + 8 && c->send_queue_bytes <= CONFIG_BYTES_MOST &&
           c->send_queue_records >= 1 && c->send_queue_records <= CONFIG_RECORDS_MOST &&
           c->packets_in_flight_most >= 64 && c->packets_in_flight_most <= CONFIG_SENT_MOST &&
           c->peers_most <= CONFIG_PEERS_MOST &&
           c->runs_most <= CONFIG_RUNS_MOST && (c->peers_most == 0) == (c->runs_most == 0) &&
           c->stream_buffer_bytes >= PURE_LINK_RECORD_MOST + 8 && c->stream_buffer_bytes <= CONFIG_BYTES_MOST &&
           c->unstored_records_most >= 1 && c->unstored_records_most <= CONFIG_RECORDS_MOST &&
           c->receive_memory_bytes >= PL_POOL_BYTES_LEAST && c->receive_memory_bytes <= CONFIG_POOL_BYTES_MOST &&
           c->send_memory_bytes >= PL_POOL_BYTES_LEAST && c->send_memory_bytes <= CONFIG_POOL_BYTES_MOST &&
           (c->congestion == PURE_LINK_CC_CUBIC || c->congestion == PURE_LINK_CC_NEWRENO || c->congestion == PURE_LINK_CC_BBR) &&
           c->epoch_packets <= PURE_LINK_EPOCH_PACKETS_MOST && (c->copies == 1 || c->copies == 2) &&
           c->epoch_ns <= PURE_LINK_DURATION_NS_MOST && c->idle_ns <= PURE_LINK_DURATION_NS_MOST &&
           c->ack_delay_us <= PURE_LINK_ACK_DELAY_US_MOST && c->pmtu_raise_ns <= PURE_LINK_DURATION_NS_MOST;
}

/* The memory layout: byte offsets of each array in the caller's block. */
typedef struct layout {
    size_t senders, peers, runs, memo;
    size_t peer_slots, peer_keys, peer_values, run_slots, run_keys, run_values, run_heap;  /* indexes */
    uint32_t key_entries, hole_tables;
    size_t key_build, key_used, key_ctx, hole_free, hole_store;  /* key cache, hole tables */
    size_t cleared_end;                    /* init clears [memo, cleared_end): mirror, key marks */
    size_t sender_each, sender_extra;      /* per-sender storage, after the arrays */
    uint32_t blocks;                       /* of the receive pool */
    size_t map_size, pool_free, pool_map_key, pool_map_block, pool_queue, pool_bytes, stage;
    uint32_t send_blocks, table_most;      /* of the send pool; block table entries per sender */
    uint32_t queue_bytes;
    size_t send_free, send_bytes;
    size_t total;
} layout;

static size_t align_up(size_t v) { return (v + PURE_LINK_ALIGN - 1) & ~(size_t)(PURE_LINK_ALIGN - 1); }

/* The receive pool: its blocks, their map and free list, the ticket queue, the hand-over
 * ring.  A sender-only endpoint (no run slots) has none of it. */
static size_t layout_pool(const pure_link_config *c, layout *l, size_t at) {
    l->blocks = c->runs_most == 0 ? 0 : (uint32_t)(c->receive_memory_bytes / PL_BLOCK_BYTES);
    l->map_size = l->blocks == 0 ? 0 : pl_map_slots(l->blocks, 2);
    l->pool_free = at;
    at = align_up(at + (size_t)l->blocks * 4);
    l->pool_map_key = at;
    at = align_up(at + l->map_size * 8);
    l->pool_map_block = at;
    at = align_up(at + l->map_size * 4);
    l->pool_queue = at;
    at = align_up(at + (size_t)c->runs_most * 4);
    l->pool_bytes = at;
    at += (size_t)l->blocks * PL_BLOCK_BYTES;
    l->stage = at;
    return at + (c->runs_most == 0 ? 0 : PL_STAGE_BYTES);
}

/* The peer and run indexes (a slot in PL_INDEX_SLOTS_PER_ENTRY taken at most, one slot at
 * least) and the run slots' deadline heap. */
static size_t layout_indexes(const pure_link_config *c, layout *l, size_t at) {
    l->peer_slots = pl_map_slots(c->peers_most, PL_INDEX_SLOTS_PER_ENTRY);
    l->run_slots = pl_map_slots(c->runs_most, PL_INDEX_SLOTS_PER_ENTRY);
    l->peer_keys = at;
    at = align_up(at + l->peer_slots * 8);
    l->peer_values = at;
    at = align_up(at + l->peer_slots * 4);
    l->run_keys = at;
    at = align_up(at + l->run_slots * 8);
    l->run_values = at;
    at = align_up(at + l->run_slots * 4);
    l->run_heap = at;
    return align_up(at + (size_t)c->runs_most * 4);
}

static void layout_of(const pure_link_config *c, layout *l) {
    size_t at = align_up(sizeof(pure_link));
    l->senders = at;
    at = align_up(at + (size_t)c->senders_most * sizeof(pl_sender));
    l->peers = at;
    at = align_up(at + (size_t)c->peers_most * sizeof(pl_peer));
    l->runs = at;
    at = align_up(at + (size_t)c->runs_most * sizeof(pl_run));
    l->memo = at;  /* the mirror of the memo's slots, when there is a memo */
    at = align_up(at + (c->memo_enabled ? pl_memo_slots(c) : 0) * sizeof(pl_memo_mirror));
    l->key_entries = pl_key_cache_entries(c);
    l->key_build = at;
    at = align_up(at + (size_t)l->key_entries * 8);
    l->key_used = at;
    at = align_up(at + l->key_entries);
    l->cleared_end = at;
    at = layout_indexes(c, l, at);
    at = layout_pool(c, l, at);
    /* Written before they are read: beyond the part init clears. */
    l->key_ctx = at = align_up(at);
    at += (size_t)l->key_entries * sizeof(pl_key_ctx);
    l->hole_tables = pl_hole_tables(c);
    l->hole_free = at = align_up(at);
    at = align_up(at + (size_t)l->hole_tables * 4);
    l->hole_store = at;
    at += (size_t)l->hole_tables * PL_RANGES_MOST * sizeof(pl_range);
    /* The send pool, and per sender its block table, record starts and sent packets. */
    l->send_blocks = c->senders_most == 0 ? 0 : (uint32_t)(c->send_memory_bytes / PL_BLOCK_BYTES);
    l->queue_bytes = (uint64_t)c->send_queue_bytes < c->send_memory_bytes ? c->send_queue_bytes
                                                                          : (uint32_t)c->send_memory_bytes;
    l->table_most = l->queue_bytes / PL_BLOCK_BYTES + 2;  /* a stretch of queue_bytes touches this many */
    l->send_free = align_up(at);
    at = align_up(l->send_free + (size_t)l->send_blocks * 4);
    l->sender_each = align_up((size_t)l->table_most * 4) + align_up((size_t)c->send_queue_records * 8) +
                     align_up((size_t)c->packets_in_flight_most * sizeof(pl_sent));
    l->sender_extra = at;
    at = l->sender_extra + (size_t)c->senders_most * l->sender_each;
    l->send_bytes = at;
    at += (size_t)l->send_blocks * PL_BLOCK_BYTES;
    l->total = at;
}

size_t pure_link_size(const pure_link_config *config) {
    assert(config != NULL);
    pure_link_config c;
    pl_config_resolve(config, &c);
    if (!config_valid(&c)) return 0;
    layout l;
    layout_of(&c, &l);
    return l.total;
}

size_t pure_link_memo_size(const pure_link_config *config) {
    assert(config != NULL);
    pure_link_config c;
    pl_config_resolve(config, &c);
    return pl_memo_bytes(&c);
}

static void carve(pure_link *pl, uint8_t *base, const layout *l) {
    const pure_link_config *c = &pl->config;
    pl->senders = (pl_sender *)(void *)(base + l->senders);
    pl->peers = (pl_peer *)(void *)(base + l->peers);
    pl->runs = (pl_run *)(void *)(base + l->runs);
    pl->memo_mirror = (pl_memo_mirror *)(void *)(base + l->memo);
    for (uint32_t i = 0; i < c->senders_most; i++) {
        uint8_t *p = base + l->sender_extra + (size_t)i * l->sender_each;
        pl_sender *s = &pl->senders[i];
        s->block_table = (uint32_t *)(void *)p;
        s->table_most = l->table_most;
        s->queue_bytes = l->queue_bytes;
        p += align_up((size_t)l->table_most * 4);
        s->record_start = (uint64_t *)(void *)p;
        s->records_most = c->send_queue_records;
        p += align_up((size_t)c->send_queue_records * 8);
        s->sent = (pl_sent *)(void *)p;
        s->sent_most = c->packets_in_flight_most;
        s->handle = (int)i;
    }
    pl_pool *p = &pl->pool;
    p->store.blocks = l->blocks;
    p->store.free_stack = (uint32_t *)(void *)(base + l->pool_free);
    if (l->map_size > 0)  /* never fuller than half: no probe bound */
        pl_map_init(&p->map, (uint64_t *)(void *)(base + l->pool_map_key), (uint32_t *)(void *)(base + l->pool_map_block),
                    l->map_size, (uint32_t)l->map_size);
    p->queue = (uint32_t *)(void *)(base + l->pool_queue);
    p->queue_most = c->runs_most;
    p->store.bytes = base + l->pool_bytes;
    p->stage = base + l->stage;
    p->holding_changes = 1;  /* a run's share_at (0 when cleared) names no count yet */
    if (l->blocks > 0) pl_pool_init(p, c);
    pl->keys.ctx = (pl_key_ctx *)(void *)(base + l->key_ctx);
    pl->keys.build = (uint64_t *)(void *)(base + l->key_build);
    pl->keys.used = base + l->key_used;
    pl->keys.entries = l->key_entries;
    pl->keys.pinned = 2 * c->senders_most;
    pl->hole_tables.blocks = l->hole_tables;
    pl->hole_tables.free_stack = (uint32_t *)(void *)(base + l->hole_free);
    pl->hole_store = (pl_range *)(void *)(base + l->hole_store);
    pl_blocks_init(&pl->hole_tables);
    pl->send_store.blocks = l->send_blocks;
    pl->send_store.free_stack = (uint32_t *)(void *)(base + l->send_free);
    pl->send_store.bytes = base + l->send_bytes;
    pl_blocks_init(&pl->send_store);
    pl_map_init(&pl->peer_index, (uint64_t *)(void *)(base + l->peer_keys), (uint32_t *)(void *)(base + l->peer_values),
                l->peer_slots, PL_INDEX_PROBES_MOST);
    pl_map_init(&pl->run_index, (uint64_t *)(void *)(base + l->run_keys), (uint32_t *)(void *)(base + l->run_values),
                l->run_slots, PL_INDEX_PROBES_MOST);
    pl->run_heap = (uint32_t *)(void *)(base + l->run_heap);
}

pure_link *pure_link_init(void *memory, size_t memory_bytes, const pure_link_config *config,
                          const uint8_t seed[32], uint64_t now_ns) {
    assert(memory != NULL && config != NULL && seed != NULL);
    assert(((uintptr_t)memory & (PURE_LINK_ALIGN - 1)) == 0);
    pure_link_config c;
    pl_config_resolve(config, &c);
    if (!config_valid(&c)) return NULL;
    layout l;
    layout_of(&c, &l);
    if (memory_bytes < l.total) return NULL;
    /* Only what is read before it is written is cleared: the endpoint but its event slots,
     * the senders, the memo mirror and the key cache's marks (here), and the keys of the
     * three maps (pl_map_init).  An event slot is written when pushed (event.c), peers and
     * run slots are cleared one by one when first taken (loops stop at peers_used and
     * runs_used), a map's values are read only under a key, the run heap only below its
     * count, a free stack only where a block was given back (pl_blocks), and the buffers
     * are written before they are read: the untouched pages of a lazily mapped block stay
     * unmapped. */
    memset(memory, 0, offsetof(pure_link, events));
    memset((uint8_t *)memory + offsetof(pure_link, ev_head), 0, l.peers - offsetof(pure_link, ev_head));
    memset((uint8_t *)memory + l.memo, 0, l.cleared_end - l.memo);
    pure_link *pl = memory;
    pl->magic = PL_MAGIC;
    pl->config = c;
    pl->crypto = c.crypto ? c.crypto : pure_link_crypto_default();
    memcpy(pl->static_secret, c.static_secret, 32);
    memset(pl->config.static_secret, 0, 32);
    pl->crypto->x25519_base(pl->static_public, pl->static_secret);
    pl->static_key_id = pl_key_id(pl->static_public);
    memcpy(pl->rng_key, seed, 32);
    pl->now_ns = now_ns;
    /* Apart from the draws (pl_random): the endpoint's other random values stay as they were. */
    pl_random_aside(pl, 1, pl->map_secret, sizeof pl->map_secret);
    carve(pl, memory, &l);
    pl_random(pl, pl->memo_generation, sizeof pl->memo_generation);
    pl->memo_header_due = c.memo_enabled != 0;
    pl->stats.version = PURE_LINK_STATS_VERSION;
    pl->memo_token_next = 1;
    return pl;
}

void pure_link_public_key(const pure_link *pl, uint8_t out[32]) {
    assert(pl != NULL && pl->magic == PL_MAGIC);
    memcpy(out, pl->static_public, 32);
}

static int event_take(pure_link *pl, pure_link_event *ev);

int pure_link_event_next(pure_link *pl, pure_link_event *ev) {
    assert(pl != NULL && pl->magic == PL_MAGIC && ev != NULL);
    int got;
    do {  /* an event taken out of the queue (pl_events_drop_records) is passed over */
        got = event_take(pl, ev);
    } while (got && ev->kind == PURE_LINK_EVENT_NONE);
    return got;
}

static int event_take(pure_link *pl, pure_link_event *ev) {
    pl_stage_release(pl);  /* the event taken before this call is done with */
    if (pl->event_keys_out != 0) {  /* so is the secret of an EPOCH taken before */
        memset(pl->event_keys[pl->event_keys_out - 1], 0, 32);
        pl->event_keys_out = 0;
    }
    if (pl->ev_count == 0) {
        /* Delivery paused on a full queue resumes once the host has drained it. */
        if (pl->deliver_blocked) {
            pl->deliver_blocked = 0;
            /* Only the runs that found the queue full (deadline.c), not every slot. */
            for (uint32_t at = pl_runs_held_take(pl); at != 0;) {
                pl_run *r = &pl->runs[at - 1];
                at = r->list_next[PL_LIST_HELD];
                r->listed[PL_LIST_HELD] = 0, r->list_next[PL_LIST_HELD] = 0;
                if (r->in_use != 1) continue;
                pl_receiver_deliver(pl, r);
                pl_run_emit(pl, r);
            }
            pl_memo_emit(pl);
            for (uint32_t i = 0; i < pl->senders_used; i++)
                if (pl->senders[i].open) pl_sender_emit(pl, &pl->senders[i]);
        }
        if (pl->ev_count == 0) return 0;
    }
    *ev = pl->events[pl->ev_head];
    if (ev->kind == PURE_LINK_EVENT_EPOCH) pl->event_keys_out = pl->ev_head + 1;  /* wiped at the next call */
    if (pl->event_stage_end[pl->ev_head] != 0) pl->pool.stage_popped_end = pl->event_stage_end[pl->ev_head];
    pl->ev_head = (pl->ev_head + 1) % PL_EVENTS_MOST;
    pl->ev_count--;
    return 1;
}

static void fatal(pure_link *pl, int code) {
    if (pl->fatal) return;
    pl->fatal = code;
    if (pl_events_room(pl) > 0) {
        pure_link_event *ev = pl_event_push(pl, PURE_LINK_EVENT_FATAL);
        ev->code = code;
        pl->fatal_reported = 1;
    }
}

static void enter(pure_link *pl, uint64_t now_ns) {
    assert(pl != NULL && pl->magic == PL_MAGIC);
    assert(now_ns >= pl->now_ns);  /* time never goes back */
    pl->now_ns = now_ns;
    pl_stage_release(pl);
    if (pl->fatal && !pl->fatal_reported && pl_events_room(pl) > 0) {
        pl->fatal_reported = 1;
        pl_event_push(pl, PURE_LINK_EVENT_FATAL)->code = pl->fatal;
    }
}

/* ---- Dispatch ---- */
int pure_link_receive(pure_link *pl, const pure_link_addr *from, const uint8_t *data, size_t len,
                      uint64_t now_ns) {
    enter(pl, now_ns);
    assert(from != NULL && from->len >= 1 && from->len <= PURE_LINK_ADDR_MOST);
    assert(data != NULL || len == 0);
    if (pl->fatal) return PURE_LINK_ERR_FATAL;
    pl->stats.packets_received++;
    pl->stats.bytes_received += len;
    /* The two drops a host may want to name, told apart by their counters. */
    uint64_t unknown_before = pl->stats.dropped_unknown_key, auth_before = pl->stats.dropped_auth;
    /* The one pass over the header (spec/wire.md §9, steps 1 and 2): what it decodes is
     * handed down to the half that opens the packet. */
    pl_header h;
    int hl = pl_packet_decode(&h, data, len);
    if (hl < 0) {
        pl->stats.dropped_bad_header++;
    } else if (h.reply) {
        pl_sender *s = pl_sender_by_run(pl, h.run);
        if (s == NULL) pl->stats.dropped_unknown_key++;
        else pl_sender_on_reply(pl, s, &h, (size_t)hl, data, len, now_ns);
    } else {
        pl_receiver_on_packet(pl, from, &h, (size_t)hl, data, len, now_ns);
    }
    pl->last_drop = pl->stats.dropped_unknown_key != unknown_before ? PURE_LINK_DROP_UNKNOWN_KEY
                    : pl->stats.dropped_auth != auth_before        ? PURE_LINK_DROP_AUTH
                                                                    : 0;
    return 0;
}

uint32_t pure_link_last_drop(const pure_link *pl) {
    assert(pl != NULL && pl->magic == PL_MAGIC);
    return pl->last_drop;
}

int pure_link_pull(pure_link *pl, uint8_t *buf, size_t cap, pure_link_addr *to, uint64_t now_ns) {
    enter(pl, now_ns);
    assert(buf != NULL && to != NULL);
    if (pl->fatal) return PURE_LINK_ERR_FATAL;
    if (cap < PURE_LINK_DATAGRAM_MOST) return PURE_LINK_ERR_BUFFER;
    int n = pl_lost_pull(pl, buf, to);
    /* Replies first (they carry ACKs the senders' windows wait on), then senders, each
     * round-robin so that no run or output starves the others.  Replies come from the
     * ready list (deadline.c), not a scan of the slots: a run leaves it when taken, and
     * one that has still more to reply after this one goes to its back (answer.c). */
    for (pl_run *r; n == 0 && (r = pl_run_ready_take(pl)) != NULL;) n = pl_run_pull(pl, r, buf, cap, to, now_ns);
    for (uint32_t k = 0; k < pl->senders_used && n == 0; k++) {
        pl_sender *s = &pl->senders[(pl->sender_cursor + k) % pl->senders_used];
        if (s->open) n = pl_sender_pull(pl, s, buf, cap, to, now_ns);
        if (n != 0) pl->sender_cursor = (uint32_t)((s - pl->senders) + 1);
    }
    if (n > 0) {
        pl->stats.packets_sent++;
        pl->stats.bytes_sent += (uint64_t)n;
    }
    return n;
}

int pure_link_tick(pure_link *pl, uint64_t now_ns) {
    enter(pl, now_ns);
    if (pl->fatal) return PURE_LINK_ERR_FATAL;
    for (uint32_t i = 0; i < pl->senders_used; i++)
        if (pl->senders[i].open) pl_sender_tick(pl, &pl->senders[i], now_ns);
    /* Only the runs whose deadline is due, from the heap's top (deadline.c); each one's
     * tick moves its deadline past now, so the loop ends. */
    for (pl_run *r; (r = pl_run_due(pl, now_ns)) != NULL;) {
        pl_run_tick(pl, r, now_ns);
        assert(r->deadline_ns > now_ns);
    }
    return 0;
}

uint64_t pure_link_deadline(const pure_link *pl) {
    assert(pl != NULL && pl->magic == PL_MAGIC);
    return pl_deadline(pl);
}

/* ---- Statistics ---- */
int pure_link_stats_get(const pure_link *pl, int sender, pure_link_stats *out) {
    assert(pl != NULL && pl->magic == PL_MAGIC && out != NULL);
    assert(out->version == PURE_LINK_STATS_VERSION);
    if (sender >= 0) {
        /* A closed sender (closing, no longer open) keeps its figures until reused. */
        if ((uint32_t)sender >= pl->config.senders_most || (!pl->senders[sender].open && !pl->senders[sender].closing))
            return PURE_LINK_ERR_NOT_FOUND;
        const pl_sender *s = &pl->senders[sender];
        *out = s->stats;
        out->rtt_ns_latest = s->rtt.rtt_ns_latest;
        out->rtt_ns_min = s->rtt.rtt_ns_min;
        out->rtt_ns_smoothed = s->rtt.rtt_ns_smoothed;
        out->rtt_ns_variance = s->rtt.rtt_ns_variance;
        out->cwnd_bytes = pl_cc_cwnd(&s->cc);
        out->bytes_in_flight = s->bytes_in_flight;
        out->pacing_rate_bytes_per_s = s->pacer.rate_bytes_per_s;
        out->congestion_events = s->cc.congestion_events;
        out->congestion_undos = s->cc.congestion_undos;
        out->datagram_bytes = s->pmtu.bytes;
        out->version = PURE_LINK_STATS_VERSION;
        return 0;
    }
    *out = pl->stats;
    out->receive_memory_bytes = (uint64_t)pl->pool.store.blocks * PL_BLOCK_BYTES;
    out->receive_memory_bytes_peak = (uint64_t)pl->pool.store.used_peak * PL_BLOCK_BYTES;
    /* Endpoint totals add up the senders' counters. */
    for (uint32_t i = 0; i < pl->senders_used; i++) {
        const pl_sender *s = &pl->senders[i];
        if (!s->open && s->stats.packets_sent == 0) continue;
        out->packets_lost += s->stats.packets_lost;
        out->packets_retransmitted += s->stats.packets_retransmitted;
        out->records_queued += s->stats.records_queued;
        out->records_sent += s->stats.records_sent;
        out->records_stored += s->stats.records_stored;
        out->records_resent += s->stats.records_resent;
        out->link_refused += s->stats.link_refused;
        out->epochs += s->stats.epochs;
        out->x25519_ops += s->stats.x25519_ops;
        out->lost_notices_received += s->stats.lost_notices_received;
        out->challenges_received += s->stats.challenges_received;
        out->spurious_losses += s->stats.spurious_losses;
        out->congestion_events += s->cc.congestion_events;
        out->congestion_undos += s->cc.congestion_undos;
        out->pmtu_probes_sent += s->stats.pmtu_probes_sent;
        out->pmtu_probes_lost += s->stats.pmtu_probes_lost;
        out->pmtu_black_holes += s->stats.pmtu_black_holes;
        out->path_too_big_hints += s->stats.path_too_big_hints;
        out->path_unreachable_hints += s->stats.path_unreachable_hints;
        /* The endpoint's datagram size: the smallest an open sender uses (0: none open). */
        if (s->open && (out->datagram_bytes == 0 || s->pmtu.bytes < out->datagram_bytes))
            out->datagram_bytes = s->pmtu.bytes;
    }
    out->version = PURE_LINK_STATS_VERSION;
    return 0;
}

const char *pure_link_strerror(int code) {
    switch (code) {
    case PURE_LINK_OK: return "ok";
    case PURE_LINK_ERR_INVALID: return "argument out of range";
    case PURE_LINK_ERR_TOO_BIG: return "record larger than PURE_LINK_RECORD_MOST (16 MiB)";
    case PURE_LINK_ERR_FULL: return "no room now; retry after progress";
    case PURE_LINK_ERR_BUFFER: return "buffer too small";
    case PURE_LINK_ERR_CRYPTO: return "key operation failed";
    case PURE_LINK_ERR_WIRING: return "wiring is inconsistent";
    case PURE_LINK_ERR_MEMO: return "not a memo of this format";
    case PURE_LINK_ERR_CLOSED: return "closed";
    case PURE_LINK_ERR_FATAL: return "endpoint failed earlier";
    case PURE_LINK_ERR_NOT_FOUND: return "no such sender, stream or peer";
    default: return "unknown error";
    }
}

/* A broken invariant of key setup ends the endpoint rather than sending under a bad key. */
void pl_fatal(pure_link *pl, int code) { fatal(pl, code); }
