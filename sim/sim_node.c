/* sim_node.c: one node's endpoint through its lifetimes.  See sim_node.h.
 *
 * A node is started (endpoint made in fresh memory, peers wired, memo loaded, senders
 * opened), driven (every arrival, wake-up, disk completion or application call is
 * followed by sim_node_service), crashed (the endpoint memory is discarded, unsynced disk
 * writes are lost) and restarted with the same static key. */
#include "sim_node.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <sodium.h>

#define SIM_SERVICE_ROUNDS_MOST 100000u /* drain/pull rounds after one call: more is a livelock */
#define SIM_PULLS_PER_SERVICE_MOST 100000u /* datagrams pulled after one call: more is a livelock */

int sim_node_up(const sim_node *n) { return n->pl != NULL && !n->failed; }

void sim_stats_add(pure_link_stats *sum, const pure_link_stats *add) {
    /* Every field after `version` is a uint64_t counter or gauge. */
    _Static_assert(sizeof(pure_link_stats) % sizeof(uint64_t) == 0, "stats are whole u64 fields");
    _Static_assert(offsetof(pure_link_stats, rtt_ns_latest) == sizeof(uint64_t), "u64 fields follow version");
    uint64_t *s = (uint64_t *)((char *)sum + offsetof(pure_link_stats, rtt_ns_latest));
    const uint64_t *a = (const uint64_t *)((const char *)add + offsetof(pure_link_stats, rtt_ns_latest));
    size_t n = (sizeof(pure_link_stats) - offsetof(pure_link_stats, rtt_ns_latest)) / sizeof(uint64_t);
    for (size_t i = 0; i < n; i++) s[i] += a[i];
}

void sim_node_stats(const sim_node *n, pure_link_stats *out) {
    *out = n->past;
    out->version = PURE_LINK_STATS_VERSION;
    if (n->pl == NULL) return;
    pure_link_stats now;
    memset(&now, 0, sizeof now);
    now.version = PURE_LINK_STATS_VERSION;
    if (pure_link_stats_get(n->pl, -1, &now) == 0) sim_stats_add(out, &now);
}

void sim_node_api_error(sim_world *w, sim_node *n, const char *call, int code) {
    n->api_errors++;
    sim_trace_begin(&w->trace, w->engine.now_ns, "sim:api_error");
    sim_trace_str(&w->trace, "node", n->spec->name);
    sim_trace_str(&w->trace, "call", call);
    sim_trace_i64(&w->trace, "code", code);
    sim_trace_end(&w->trace);
}

static void node_fatal(sim_world *w, sim_node *n, const char *where, int code) {
    if (n->failed) return;
    n->failed = 1;
    n->fatal_code = code;
    sim_trace_begin(&w->trace, w->engine.now_ns, "sim:fatal");
    sim_trace_str(&w->trace, "node", n->spec->name);
    sim_trace_str(&w->trace, "where", where);
    sim_trace_i64(&w->trace, "code", code);
    sim_trace_end(&w->trace);
    sim_world_fail(w, "node %s: fatal error in %s: %d (%s)", n->spec->name, where, code, pure_link_strerror(code));
}

/* ---- setup ---- */

static int grow_u32(uint32_t **a, uint32_t *cap, uint32_t need) {
    if (need <= *cap) return 0;
    uint32_t c = *cap ? *cap : 8;
    while (c < need) c *= 2;
    uint32_t *p = realloc(*a, c * sizeof *p);
    if (p == NULL) return -1;
    for (uint32_t i = *cap; i < c; i++) p[i] = SIM_NO_LINK;
    *a = p;
    *cap = c;
    return 0;
}

static void make_config(sim_world *w, sim_node *n) {
    const sim_endpoint_spec *e = &n->spec->endpoint;
    pure_link_config *c = &n->config;
    pure_link_config_default(c);
    memcpy(c->static_secret, n->secret, sizeof n->secret);
    c->crypto = &w->keys.table; /* the real table (default or null) behind the nonce oracle */
    uint32_t links_out = 0, peers = 0;
    for (uint32_t i = 0; i < w->sc->link_count; i++)
        if (w->sc->links[i].from == n->index) links_out++;
    if (n->spec->wire_count) {
        peers = n->spec->wire_count;
    } else {
        uint8_t seen[SIM_NODES_MOST] = {0};  /* distinct nodes with a link here */
        for (uint32_t i = 0; i < w->sc->link_count; i++)
            if (w->sc->links[i].to == n->index && !seen[w->sc->links[i].from]) seen[w->sc->links[i].from] = 1, peers++;
    }
    if (c->senders_most < links_out) c->senders_most = links_out;
    if (c->peers_most < peers) c->peers_most = peers;
    /* A node with no link out has no sender, one with no peer no receiver half. */
    if (links_out == 0) c->senders_most = PURE_LINK_NONE;
    if (peers == 0) c->peers_most = c->runs_most = PURE_LINK_NONE;
    c->memo_enabled = n->spec->memo ? 1u : 0u;
#define OVERRIDE(field, from) if (e->from) c->field = (__typeof__(c->field))e->from
    OVERRIDE(senders_most, senders_most);
    OVERRIDE(send_queue_bytes, send_queue_bytes);
    OVERRIDE(send_queue_records, send_queue_records);
    OVERRIDE(packets_in_flight_most, packets_in_flight_most);
    OVERRIDE(peers_most, peers_most);
    OVERRIDE(runs_most, runs_most);
    OVERRIDE(stream_buffer_bytes, stream_buffer_bytes);
    OVERRIDE(unstored_records_most, unstored_records_most);
    OVERRIDE(receive_memory_bytes, receive_memory_bytes);
    OVERRIDE(send_memory_bytes, send_memory_bytes);
    OVERRIDE(idle_ns, idle_ns);
    OVERRIDE(epoch_ns, epoch_ns);
    OVERRIDE(epoch_packets, epoch_packets);
    OVERRIDE(congestion, congestion);
    OVERRIDE(ack_delay_us, ack_delay_us);
    OVERRIDE(copies, copies);
    OVERRIDE(pmtu_raise_ns, pmtu_raise_ns);
#undef OVERRIDE
}

int sim_node_setup(sim_world *w, sim_node *n, char *err, size_t err_len) {
    char label[SIM_NODE_NAME_MOST + 16];
    /* The static key depends on the seed and the name only. */
    snprintf(label, sizeof label, "key:%s", n->spec->name);
    sim_rng key_rng;
    sim_rng_derive(&key_rng, w->seed, label);
    sim_rng_fill(&key_rng, n->secret, sizeof n->secret);
    crypto_scalarmult_curve25519_base(n->public_key, n->secret);
    snprintf(label, sizeof label, "node:%s", n->spec->name);
    sim_rng_derive(&n->rng, w->seed, label);

    uint8_t ip[4] = {10, 0, (uint8_t)((n->index + 1) >> 8), (uint8_t)(n->index + 1)};
    _Static_assert(SIM_NODES_MOST < 65535, "node addresses are 10.0.0.1 .. 10.0.255.254");
    memcpy(n->ep.ip, ip, 4);
    n->ep.port = n->spec->port;
    n->addr.len = 6;
    memcpy(n->addr.bytes, ip, 4);
    n->addr.bytes[4] = (uint8_t)(n->spec->port >> 8);
    n->addr.bytes[5] = (uint8_t)n->spec->port;
    n->home = n->addr;

    make_config(w, n);
    n->memory_bytes = pure_link_size(&n->config);
    if (n->memory_bytes == 0) {
        snprintf(err, err_len, "node %s: the endpoint configuration is invalid (pure_link_size is 0)", n->spec->name);
        return -1;
    }
    size_t memo_bytes = n->spec->memo ? pure_link_memo_size(&n->config) : 0;
    if (sim_disk_init(&n->disk, memo_bytes, n->spec->memo_sync_ns, n->spec->memo_crash) != 0 ||
        grow_u32(&n->sender_links, &n->sender_capacity, n->config.senders_most && n->config.senders_most != PURE_LINK_NONE ? n->config.senders_most : 1) != 0) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    /* Its own links, so that serving a node does not walk every link of the world. */
    n->out_links = calloc(w->sc->link_count ? w->sc->link_count : 1, sizeof *n->out_links);
    if (n->out_links == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < w->sc->link_count; i++)
        if (w->sc->links[i].from == n->index) n->out_links[n->out_count++] = i;
    return 0;
}

void sim_node_free(sim_world *w, sim_node *n) {
    if (n->memory) munmap(n->memory, n->memory_mapped);
    n->memory = NULL;
    n->pl = NULL;
    sim_disk_free(&n->disk);
    w->host->on_free(n);
    if (w->watch) w->watch->on_free(n);
    free(n->peer_nodes);
    free(n->sender_links);
    free(n->out_links);
    n->out_links = NULL;
    n->out_count = 0;
    free(n->stream_runs);
    n->peer_nodes = NULL;
    n->sender_links = NULL;
    n->stream_runs = NULL;
}

/* ---- wiring ---- */

static void wire_one(sim_world *w, sim_node *n, uint32_t peer, const char *sources) {
    int idx = pure_link_wire_peer(n->pl, w->nodes[peer].public_key, sources, w->engine.now_ns);
    if (idx < 0) {
        sim_node_api_error(w, n, "pure_link_wire_peer", idx);
        return;
    }
    if (grow_u32(&n->peer_nodes, &n->peer_capacity, (uint32_t)idx + 1) != 0) {
        sim_world_fail(w, "out of memory");
        return;
    }
    n->peer_nodes[idx] = peer;
    if ((uint32_t)idx >= n->peer_count) n->peer_count = (uint32_t)idx + 1;
}

static void wire_peers(sim_world *w, sim_node *n) {
    const sim_scenario *sc = w->sc;
    if (n->spec->wire_count) {
        for (uint32_t i = 0; i < n->spec->wire_count; i++)
            wire_one(w, n, n->spec->wires[i].peer_node, n->spec->wires[i].sources);
        return;
    }
    /* By default every node with a link here may send as any source (wired in node order). */
    uint8_t here[SIM_NODES_MOST] = {0};
    for (uint32_t i = 0; i < sc->link_count; i++)
        if (sc->links[i].to == n->index) here[sc->links[i].from] = 1;
    for (uint32_t p = 0; p < sc->node_count; p++)
        if (here[p]) wire_one(w, n, p, "*");
}

/* ---- start, crash ---- */

void sim_node_start(sim_world *w, sim_node *n) {
    if (n->pl != NULL || n->failed) return;
    const uint64_t now = w->engine.now_ns;
    /* Fresh anonymous pages: zeroed, so the run cannot depend on what memory held before. */
    size_t page = 4096;
    n->memory_mapped = (n->memory_bytes + page - 1) / page * page;
    n->memory = mmap(NULL, n->memory_mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (n->memory == MAP_FAILED) {
        n->memory = NULL;
        sim_world_fail(w, "node %s: cannot map %zu bytes for the endpoint", n->spec->name, n->memory_bytes);
        return;
    }
    uint8_t seed[32];
    sim_rng_fill(&n->rng, seed, sizeof seed);
    n->pl = pure_link_init(n->memory, n->memory_bytes, &n->config, seed, now);
    if (n->pl == NULL) {
        munmap(n->memory, n->memory_mapped);
        n->memory = NULL;
        sim_world_fail(w, "node %s: pure_link_init failed", n->spec->name);
        return;
    }
    uint8_t pub[32];
    pure_link_public_key(n->pl, pub);
    if (memcmp(pub, n->public_key, 32) != 0)
        sim_world_fail(w, "node %s: the endpoint's public key differs from X25519(secret)", n->spec->name);
    sim_keys_node_memory(&w->keys, n->index, n->memory, n->memory_mapped);
    n->incarnation++;
    if (n->incarnation > 1) n->restarts++;
    n->peer_count = 0;
    for (uint32_t i = 0; i < n->sender_capacity; i++) n->sender_links[i] = SIM_NO_LINK;
    for (size_t i = 0; i < n->stream_capacity; i++) n->stream_runs[i] = -1;
    n->same_instant_wakes = 0;

    sim_trace_begin(&w->trace, now, n->incarnation > 1 ? "sim:node_restart" : "sim:node_start");
    sim_trace_str(&w->trace, "node", n->spec->name);
    sim_trace_u64(&w->trace, "incarnation", n->incarnation);
    sim_trace_u64(&w->trace, "memory_bytes", n->memory_bytes);
    sim_trace_hex(&w->trace, "public_key", n->public_key, 32);
    sim_trace_end(&w->trace);

    wire_peers(w, n);
    if (n->spec->memo && n->disk.exists) {
        int r = pure_link_memo_load(n->pl, n->disk.image, n->disk.size, now);
        n->memo_loads++;
        if (r != 0) n->memo_rejected++;
        sim_trace_begin(&w->trace, now, "memo:load");
        sim_trace_str(&w->trace, "node", n->spec->name);
        sim_trace_u64(&w->trace, "len", n->disk.size);
        sim_trace_i64(&w->trace, "result", r);
        sim_trace_end(&w->trace);
        if (r != 0 && r != PURE_LINK_ERR_MEMO) sim_node_api_error(w, n, "pure_link_memo_load", r);
    }
    w->host->on_start(w, n);
    sim_node_service(w, n);
}

void sim_node_crash(sim_world *w, sim_node *n) {
    if (n->pl == NULL) return;
    const uint64_t now = w->engine.now_ns;
    pure_link_stats s;
    memset(&s, 0, sizeof s);
    s.version = PURE_LINK_STATS_VERSION;
    if (pure_link_stats_get(n->pl, -1, &s) == 0) sim_stats_add(&n->past, &s);
    w->host->on_crash(w, n);
    uint64_t pending = n->disk.pending_count, torn_before = n->disk.torn;
    sim_disk_crash_now(&n->disk, &n->rng);
    if (w->watch) w->watch->on_crash(n);
    sim_keys_node_memory(&w->keys, n->index, NULL, 0);
    munmap(n->memory, n->memory_mapped);
    n->memory = NULL;
    n->pl = NULL;
    n->failed = 0;
    n->wake_pending = 0;
    n->wake_gen++;
    n->crashes++;
    sim_trace_begin(&w->trace, now, "sim:node_crash");
    sim_trace_str(&w->trace, "node", n->spec->name);
    sim_trace_u64(&w->trace, "incarnation", n->incarnation);
    sim_trace_u64(&w->trace, "memo_writes_lost", pending);
    sim_trace_u64(&w->trace, "memo_writes_torn", n->disk.torn - torn_before);
    sim_trace_end(&w->trace);
    sim_world_log(w, "node %s crashed", n->spec->name);
}

/* ---- events from the endpoint ---- */

static void keylog(sim_world *w, const pure_link_event *ev) {
    FILE *f = w->opt.keylog_file;
    if (f == NULL) return;
    char sp[65], rp[65], sec[65];
    sodium_bin2hex(sp, sizeof sp, ev->sender_public, 32);
    sodium_bin2hex(rp, sizeof rp, ev->receiver_public, 32);
    sodium_bin2hex(sec, sizeof sec, ev->secret, 32);
    fprintf(f, "PURE_LINK_EPOCH %s %s %016llx %u %s\n", sp, rp, (unsigned long long)ev->run, ev->epoch, sec);
    w->keylog_lines++;
}

static void on_memo_write(sim_world *w, sim_node *n, const pure_link_event *ev) {
    uint64_t done;
    if (sim_disk_write(&n->disk, w->engine.now_ns, ev->offset, ev->data, ev->len, ev->token, &done) != 0) {
        sim_world_fail(w, "out of memory for disk writes");
        return;
    }
    sim_trace_begin(&w->trace, w->engine.now_ns, "memo:write");
    sim_trace_str(&w->trace, "node", n->spec->name);
    sim_trace_u64(&w->trace, "offset", ev->offset);
    sim_trace_u64(&w->trace, "len", ev->len);
    sim_trace_u64(&w->trace, "token", ev->token);
    sim_trace_end(&w->trace);
    sim_world_at(w, done, SIM_EV_DISK, n->index, n->incarnation, NULL);
}

static void on_event(sim_world *w, sim_node *n, const pure_link_event *ev) {
    switch (ev->kind) {
    case PURE_LINK_EVENT_STREAM_OPEN:
    case PURE_LINK_EVENT_RECORD:
    case PURE_LINK_EVENT_STORED:
    case PURE_LINK_EVENT_REFUSED:
    case PURE_LINK_EVENT_RELEASED:
    case PURE_LINK_EVENT_CLOSED: w->host->on_event(w, n, ev); break;
    case PURE_LINK_EVENT_MEMO_WRITE: on_memo_write(w, n, ev); break;
    case PURE_LINK_EVENT_EPOCH:
        keylog(w, ev);
        sim_trace_begin(&w->trace, w->engine.now_ns, "security:epoch");
        sim_trace_str(&w->trace, "node", n->spec->name);
        sim_trace_id(&w->trace, "run", ev->run);
        sim_trace_u64(&w->trace, "epoch", ev->epoch);
        /* The side is told by whose key is ours: an event has no role field. */
        sim_trace_str(&w->trace, "side", memcmp(ev->sender_public, n->public_key, 32) == 0 ? "sender" : "receiver");
        sim_trace_end(&w->trace);
        if (memcmp(ev->sender_public, n->public_key, 32) == 0) w->host->on_event(w, n, ev);
        else if (w->watch) w->watch->on_epoch(w, n, ev);
        break;
    case PURE_LINK_EVENT_FATAL: node_fatal(w, n, "event", ev->code); break;
    case PURE_LINK_EVENT_STREAM_REFUSED: break; /* the core refused it itself: counted in listener_refused */
    default: sim_node_api_error(w, n, "unknown event kind", (int)ev->kind); break;
    }
}

/* ---- the service loop ---- */

static void schedule_wake(sim_world *w, sim_node *n) {
    const uint64_t now = w->engine.now_ns;
    uint64_t d = pure_link_deadline(n->pl);
    if (d == UINT64_MAX) return;
    if (d < now) d = now;
    if (n->wake_pending && n->wake_ns <= d) return; /* an earlier wake-up will re-ask */
    n->wake_gen++;
    n->wake_ns = d;
    n->wake_pending = 1;
    sim_world_at(w, d, SIM_EV_WAKE, n->index, n->wake_gen, NULL);
}

/* A LOST goes out (its reply header carries a 1-byte packet number): the bound on LOST
 * bytes per second (spec/protocol.md §7) is checked on these sums, over any second that
 * starts at a multiple of 100 ms. */
static void count_lost(sim_node *n, uint64_t now_ns, uint32_t len) {
    uint64_t bin = now_ns / (100 * 1000 * 1000);
    if (bin >= n->lost_bin_at + 10) memset(n->lost_bytes_bin, 0, sizeof n->lost_bytes_bin);
    else
        for (uint64_t b = n->lost_bin_at + 1; b <= bin; b++) n->lost_bytes_bin[b % 10] = 0;
    n->lost_bin_at = bin;
    n->lost_bytes_bin[bin % 10] += len;
    n->lost_bytes_sent += len;
    uint64_t sum = 0;
    for (int i = 0; i < 10; i++) sum += n->lost_bytes_bin[i];
    if (sum > n->lost_bytes_per_s_most) n->lost_bytes_per_s_most = sum;
}

/* A wake-up at `at_ns` at the latest. */
static void wake_by(sim_world *w, sim_node *n, uint64_t at_ns) {
    if (n->wake_pending && n->wake_ns <= at_ns) return;
    n->wake_gen++;
    n->wake_ns = at_ns;
    n->wake_pending = 1;
    sim_world_at(w, at_ns, SIM_EV_WAKE, n->index, n->wake_gen, NULL);
}

void sim_node_service(sim_world *w, sim_node *n) {
    const uint64_t now = w->engine.now_ns;
    n->rx_unserved = 0;
    uint32_t pulled = 0;
    for (uint32_t round = 0;; round++) {
        if (!sim_node_up(n)) return;
        if (round == SIM_SERVICE_ROUNDS_MOST) {
            sim_world_fail(w, "node %s: the endpoint keeps producing output at one instant (livelock)", n->spec->name);
            return;
        }
        int progress = 0;
        pure_link_event ev;
        while (sim_node_up(n) && pure_link_event_next(n->pl, &ev)) {
            progress = 1;
            on_event(w, n, &ev);
        }
        if (!sim_node_up(n)) return;
        progress |= w->host->on_serve(w, n);
        for (;;) {
            if (pulled++ == SIM_PULLS_PER_SERVICE_MOST) {
                sim_world_fail(w, "node %s: pure_link_pull gave more than %u datagrams at %llu ns without returning 0 "
                               "(livelock)", n->spec->name, SIM_PULLS_PER_SERVICE_MOST, (unsigned long long)now);
                return;
            }
            sim_packet *pkt = sim_packet_alloc(w);
            if (pkt == NULL) {
                sim_world_fail(w, "too many datagrams alive");
                return;
            }
            pure_link_addr to;
            memset(&to, 0, sizeof to);
            int len = pure_link_pull(n->pl, pkt->bytes, sizeof pkt->bytes, &to, now);
            if (len <= 0) {
                sim_packet_free(w, pkt);
                if (len < 0) node_fatal(w, n, "pure_link_pull", len);
                break;
            }
            assert((size_t)len <= sizeof pkt->bytes);
            progress = 1;
            pkt->len = (uint32_t)len;
            n->datagrams_sent++;
            n->bytes_sent += (uint64_t)len;
            if (len >= 2 && (pkt->bytes[1] & 0x80) && (pkt->bytes[1] & 0x30) == 0) count_lost(n, now, (uint32_t)len);
            if (w->watch) w->watch->on_send(w, n, &to, (uint32_t)len);
            sim_world_route(w, n->index, &to, pkt);
        }
        if (!progress) break;
    }
    if (sim_node_up(n)) schedule_wake(w, n);
}

void sim_node_on_arrival(sim_world *w, sim_node *n, sim_packet *pkt) {
    if (!sim_node_up(n)) {
        w->arrivals_dropped_down++;
        sim_world_trace_packet(w, "transport:packet_dropped", pkt, n->failed ? "node_failed" : "node_down");
        sim_packet_free(w, pkt);
        return;
    }
    /* A corrupted datagram still goes to the endpoint, which must drop it unanswered. */
    sim_world_trace_packet(w, pkt->corrupt ? "transport:packet_dropped" : "transport:packet_received", pkt,
                           pkt->corrupt ? "corrupt" : NULL);
    n->datagrams_received++;
    n->bytes_received += pkt->len;
    if (w->watch) w->watch->on_receive(w, n, &pkt->src, pkt->len, pkt->forged == SIM_FORGED_NONE);
    /* The address it left from: its sender's at that time, or the attacker's choice. */
    int r = pure_link_receive(n->pl, &pkt->src, pkt->bytes, pkt->len, w->engine.now_ns);
    sim_packet_free(w, pkt);
    if (r != 0) {
        node_fatal(w, n, "pure_link_receive", r);
        return;
    }
    /* A host that reads datagrams in batches (recvmmsg) pulls only after each batch. */
    if (n->spec->rx_batch > 1 && ++n->rx_unserved < n->spec->rx_batch) {
        wake_by(w, n, w->engine.now_ns + SIM_RX_BATCH_WAIT_NS);
        return;
    }
    sim_node_service(w, n);
}

void sim_node_on_wake(sim_world *w, sim_node *n, uint64_t gen) {
    if (gen != n->wake_gen || !sim_node_up(n)) return; /* superseded, or from an earlier life */
    n->wake_pending = 0;
    const uint64_t now = w->engine.now_ns;
    if (now == n->same_instant_ns) {
        if (++n->same_instant_wakes > SIM_WAKES_SAME_INSTANT_MOST) {
            sim_world_fail(w, "node %s: pure_link_deadline stays at %llu ns after pure_link_tick (livelock)",
                           n->spec->name, (unsigned long long)now);
            return;
        }
    } else {
        n->same_instant_ns = now;
        n->same_instant_wakes = 0;
    }
    int r = pure_link_tick(n->pl, now);
    if (r != 0) {
        node_fatal(w, n, "pure_link_tick", r);
        return;
    }
    sim_node_service(w, n);
}

void sim_node_on_disk(sim_world *w, sim_node *n, uint64_t incarnation) {
    if (incarnation != n->incarnation || !sim_node_up(n)) return;
    uint64_t token;
    int any = 0;
    while (sim_disk_complete(&n->disk, w->engine.now_ns, &token)) {
        any = 1;
        sim_trace_begin(&w->trace, w->engine.now_ns, "memo:written");
        sim_trace_str(&w->trace, "node", n->spec->name);
        sim_trace_u64(&w->trace, "token", token);
        sim_trace_end(&w->trace);
        if (++n->memo_durable == n->spec->crash_at_memo) {
            /* crash_at_memo: durable on disk, and the endpoint dies before it hears so (it
             * never sends the ACCEPT this write was waiting for). */
            sim_node_crash(w, n);
            sim_world_at(w, w->engine.now_ns + n->spec->crash_at_memo_restart_ns, SIM_EV_RESTART, n->index, 0, NULL);
            return;
        }
        int r = pure_link_memo_written(n->pl, token, w->engine.now_ns);
        if (r != 0) sim_node_api_error(w, n, "pure_link_memo_written", r);
    }
    if (any) sim_node_service(w, n);
}
