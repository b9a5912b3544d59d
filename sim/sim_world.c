/* sim_world.c: building a world from a scenario, the event loop, and datagrams on paths.
 * See sim_world.h. */
#include "sim_world.h"

#include "sim_host.h"
#include "sim_oracle.h"

#include <assert.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#define SIM_PACKETS_MOST (1u << 22) /* datagrams alive at once (in flight or in hand) */

/* ---- errors and logs ---- */

void sim_world_fail(sim_world *w, const char *fmt, ...) {
    if (w->error == NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->error_text, sizeof w->error_text, fmt, ap);
        va_end(ap);
        w->error = w->error_text;
        sim_trace_begin(&w->trace, w->engine.now_ns, "sim:error");
        sim_trace_str(&w->trace, "what", w->error_text);
        sim_trace_end(&w->trace);
    }
    w->stopped = 1;
}

void sim_world_log(sim_world *w, const char *fmt, ...) {
    if (w->opt.progress == NULL) return;
    uint64_t ms = w->engine.now_ns / 1000000;
    fprintf(w->opt.progress, "[%4llu.%03llu s] ", (unsigned long long)(ms / 1000), (unsigned long long)(ms % 1000));
    va_list ap;
    va_start(ap, fmt);
    vfprintf(w->opt.progress, fmt, ap);
    va_end(ap);
    fputc('\n', w->opt.progress);
    fflush(w->opt.progress);
}

void sim_world_at(sim_world *w, uint64_t at_ns, sim_event_kind kind, uint32_t target, uint64_t arg, void *ptr) {
    if (sim_engine_at(&w->engine, at_ns, (uint32_t)kind, target, arg, ptr) != 0)
        sim_world_fail(w, "out of memory for events");
}

/* ---- datagrams ---- */

sim_packet *sim_packet_alloc(sim_world *w) {
    sim_packet *p = w->free_packets;
    if (p) {
        w->free_packets = p->next_free;
        return p;
    }
    if (w->packets_allocated >= SIM_PACKETS_MOST) return NULL;
    p = malloc(sizeof *p);
    if (p) w->packets_allocated++;
    return p;
}

void sim_packet_free(sim_world *w, sim_packet *pkt) {
    pkt->next_free = w->free_packets;
    w->free_packets = pkt;
}

static int addr_equal(const pure_link_addr *a, const pure_link_addr *b) {
    return a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

void sim_addr_text(const pure_link_addr *a, char out[SIM_ADDR_TEXT_MOST]) {
    if (a->len != 6) {
        snprintf(out, SIM_ADDR_TEXT_MOST, "?");
        return;
    }
    snprintf(out, SIM_ADDR_TEXT_MOST, "%u.%u.%u.%u:%u", a->bytes[0], a->bytes[1], a->bytes[2], a->bytes[3],
             (unsigned)a->bytes[4] << 8 | a->bytes[5]);
}

static void addr_endpoint(const pure_link_addr *a, sim_pcap_endpoint *ep) {
    memcpy(ep->ip, a->bytes, 4);
    ep->port = (uint16_t)(a->bytes[4] << 8 | a->bytes[5]);
}

/* Records name nodes; the addresses are added only when they are not the nodes' first
 * ones (after an address change, for the attacker's datagrams, or when no node holds the
 * destination), so a run without any of these keeps its trace. */
static void trace_packet(sim_world *w, const char *name, const sim_packet *pkt, const char *why) {
    char text[SIM_ADDR_TEXT_MOST];
    sim_trace_begin(&w->trace, w->engine.now_ns, name);
    sim_trace_str(&w->trace, "from", sim_node_name(w, pkt->from));
    sim_trace_str(&w->trace, "to", pkt->to == SIM_NO_NODE ? "-" : sim_node_name(w, pkt->to));
    sim_trace_u64(&w->trace, "id", pkt->id);
    sim_trace_u64(&w->trace, "len", pkt->len);
    if (pkt->copy) sim_trace_u64(&w->trace, "copy", 1);
    static const char *const attack_names[] = {"", "replay", "spoof", "forge", "forward"};
    if (pkt->forged) sim_trace_str(&w->trace, "attack", attack_names[pkt->forged]);
    if (!addr_equal(&pkt->src, &w->nodes[pkt->from].home)) {
        sim_addr_text(&pkt->src, text);
        sim_trace_str(&w->trace, "src", text);
    }
    if (pkt->to == SIM_NO_NODE || !addr_equal(&pkt->dst, &w->nodes[pkt->to].home)) {
        sim_addr_text(&pkt->dst, text);
        sim_trace_str(&w->trace, "dst", text);
    }
    if (why) sim_trace_str(&w->trace, "why", why);
    sim_trace_end(&w->trace);
}

int sim_world_node_at(const sim_world *w, const pure_link_addr *to) {
    if (to->len != 6) return -1;
    /* Node i starts at 10.0.0.(i+1): try that one first. */
    uint32_t guess = ((uint32_t)to->bytes[2] << 8 | to->bytes[3]) - 1;
    if (to->bytes[0] == 10 && guess < w->node_count && addr_equal(&w->nodes[guess].addr, to)) return (int)guess;
    for (uint32_t i = 0; i < w->node_count; i++)
        if (addr_equal(&w->nodes[i].addr, to)) return (int)i;
    return -1;
}

static void drop_no_route(sim_world *w, sim_packet *pkt) {
    w->datagrams_unroutable++;
    pkt->to = SIM_NO_NODE;
    trace_packet(w, "transport:packet_dropped", pkt, "no_route");
    sim_packet_free(w, pkt);
}

static void on_the_wire(sim_world *w, const sim_packet *pkt) {
    if (w->pcap_on) {
        sim_pcap_endpoint s, d;
        addr_endpoint(&pkt->src, &s);
        addr_endpoint(&pkt->dst, &d);
        sim_pcap_write(&w->pcap, w->engine.now_ns, &s, &d, pkt->bytes, pkt->len);
    }
    trace_packet(w, "transport:packet_sent", pkt, NULL);
}

void sim_world_inject(sim_world *w, sim_packet *pkt, uint64_t arrive_ns) {
    pkt->id = w->next_packet_id++;
    pkt->copy = 0;
    pkt->corrupt = 0;
    int dst = sim_world_node_at(w, &pkt->dst);
    if (dst < 0) {
        drop_no_route(w, pkt);
        return;
    }
    pkt->to = (uint32_t)dst;
    on_the_wire(w, pkt);
    sim_world_at(w, arrive_ns, SIM_EV_ARRIVE, (uint32_t)dst, 0, pkt);
}

void sim_world_route(sim_world *w, uint32_t from, const pure_link_addr *to, sim_packet *pkt) {
    const uint64_t now = w->engine.now_ns;
    int dst = sim_world_node_at(w, to);
    pkt->id = w->next_packet_id++;
    pkt->from = from;
    pkt->copy = 0;
    pkt->corrupt = 0;
    pkt->forged = SIM_FORGED_NONE;
    pkt->src = w->nodes[from].addr;
    pkt->dst = *to;
    if (dst < 0 || (uint32_t)dst == from) {
        drop_no_route(w, pkt);
        return;
    }
    pkt->to = (uint32_t)dst;
    w->datagrams_routed++;
    /* Before the datagram enters its path: a spoofed copy must not arrive after it. */
    sim_attack_on_route(w, from, (uint32_t)dst, pkt);
    on_the_wire(w, pkt);

    sim_path *path = sim_world_path(w, from, (uint32_t)dst);
    sim_copy copies[SIM_PATH_COPIES_MOST];
    size_t n = sim_path_send(path, now, pkt->len, copies);
    /* Copy before anything is flipped, so each copy is corrupted on its own. */
    sim_packet *bufs[SIM_PATH_COPIES_MOST] = {pkt, NULL};
    if (n > 1) {
        bufs[1] = sim_packet_alloc(w);
        if (bufs[1] == NULL) {
            sim_world_fail(w, "more than %u datagrams alive", SIM_PACKETS_MOST);
            n = 1;
        } else {
            memcpy(bufs[1], pkt, offsetof(sim_packet, bytes) + pkt->len);
            bufs[1]->copy = 1;
        }
    }
    for (size_t i = 0; i < n; i++) {
        sim_packet *c = bufs[i];
        if (copies[i].fate != SIM_FATE_ARRIVE) {
            trace_packet(w, "transport:packet_dropped", c, copies[i].fate == SIM_FATE_LOSS ? "loss" : "queue");
            sim_packet_free(w, c);
            continue;
        }
        if (copies[i].corrupt_bit >= 0) {
            c->bytes[copies[i].corrupt_bit / 8] ^= (uint8_t)(1u << (copies[i].corrupt_bit % 8));
            c->corrupt = 1;
        }
        sim_world_at(w, copies[i].arrive_ns, SIM_EV_ARRIVE, (uint32_t)dst, 0, c);
    }
}

static void on_arrive(sim_world *w, uint32_t target, sim_packet *pkt) {
    sim_node *n = &w->nodes[target];
    if (!addr_equal(&n->addr, &pkt->dst)) { /* the node moved while it was on its way */
        drop_no_route(w, pkt);
        return;
    }
    sim_attack_on_arrive(w, target, pkt);
    if (!sim_node_up(n)) {
        w->arrivals_dropped_down++;
        trace_packet(w, "transport:packet_dropped", pkt, n->failed ? "node_failed" : "node_down");
        sim_packet_free(w, pkt);
        return;
    }
    /* A corrupted datagram still goes to the endpoint, which must drop it unanswered. */
    trace_packet(w, pkt->corrupt ? "transport:packet_dropped" : "transport:packet_received", pkt,
                 pkt->corrupt ? "corrupt" : NULL);
    sim_node_on_arrival(w, n, pkt);
}

/* ---- paths ---- */

static void apply_change(sim_world *w, const sim_path_setting *s) {
    const uint32_t n = w->node_count;
    for (uint32_t f = 0; f < n; f++)
        for (uint32_t t = 0; t < n; t++) {
            if (f == t) continue;
            int hit = s->all || (s->from == f && s->to == t) || (s->both_ways && s->from == t && s->to == f);
            if (hit) sim_path_params_apply(&w->path_params[f * n + t], s->field, s->value);
        }
    /* Automatic queues follow the round trip, which a delay change on either side moves. */
    for (uint32_t f = 0; f < n; f++)
        for (uint32_t t = 0; t < n; t++)
            if (f != t && w->path_ready[f * n + t])
                sim_path_set(&w->paths[f * n + t], &w->path_params[f * n + t], w->path_params[t * n + f].delay_ns);
    sim_trace_begin(&w->trace, w->engine.now_ns, "sim:path_change");
    sim_trace_str(&w->trace, "from", s->all ? "*" : sim_node_name(w, s->from));
    sim_trace_str(&w->trace, "to", s->all ? "*" : sim_node_name(w, s->to));
    if (s->both_ways) sim_trace_u64(&w->trace, "both_ways", 1);
    sim_trace_str(&w->trace, "param", sim_path_field_name(s->field));
    sim_trace_u64(&w->trace, "value", s->value);
    sim_trace_end(&w->trace);
}

static int setup_paths(sim_world *w) {
    const uint32_t n = w->node_count;
    w->paths = calloc((size_t)n * n, sizeof *w->paths);
    w->path_params = calloc((size_t)n * n, sizeof *w->path_params);
    w->path_ready = calloc((size_t)n * n, 1);
    if (w->paths == NULL || w->path_params == NULL || w->path_ready == NULL) return -1;
    for (uint32_t f = 0; f < n; f++)
        for (uint32_t t = 0; t < n; t++)
            if (f != t) sim_scenario_path_params(w->sc, f, t, &w->path_params[f * n + t]);
    return 0;
}

/* The path from f to t, set up when a datagram first takes it: a world of a thousand nodes
 * has a million directions and uses a few thousand.  Its random stream is named after its
 * ends, so when it is set up changes nothing. */
sim_path *sim_world_path(sim_world *w, uint32_t f, uint32_t t) {
    const uint32_t n = w->node_count;
    assert(f != t && f < n && t < n);
    sim_path *path = &w->paths[f * n + t];
    if (!w->path_ready[f * n + t]) {
        char label[2 * SIM_NODE_NAME_MOST + 8];
        snprintf(label, sizeof label, "path:%s>%s", w->nodes[f].spec->name, w->nodes[t].spec->name);
        sim_path_init(path, &w->path_params[f * n + t], w->path_params[t * n + f].delay_ns, w->seed, label);
        w->path_ready[f * n + t] = 1;
    }
    return path;
}

/* ---- metrics ---- */

static void sample_metrics(sim_world *w) {
    for (uint32_t i = 0; i < w->link_count; i++) {
        sim_link *l = &w->links[i];
        sim_node *n = &w->nodes[l->from];
        if (l->sender < 0 || !sim_node_up(n)) continue;
        pure_link_stats s;
        memset(&s, 0, sizeof s);
        s.version = PURE_LINK_STATS_VERSION;
        if (pure_link_stats_get(n->pl, l->sender, &s) != 0) continue;
        l->last = s;
        sim_trace_begin(&w->trace, w->engine.now_ns, "recovery:metrics_updated");
        sim_trace_str(&w->trace, "node", n->spec->name);
        sim_trace_str(&w->trace, "source", l->spec->source);
        sim_trace_u64(&w->trace, "rtt_ns_smoothed", s.rtt_ns_smoothed);
        sim_trace_u64(&w->trace, "rtt_ns_min", s.rtt_ns_min);
        sim_trace_u64(&w->trace, "rtt_ns_latest", s.rtt_ns_latest);
        sim_trace_u64(&w->trace, "rtt_ns_variance", s.rtt_ns_variance);
        sim_trace_u64(&w->trace, "cwnd_bytes", s.cwnd_bytes);
        sim_trace_u64(&w->trace, "bytes_in_flight", s.bytes_in_flight);
        sim_trace_u64(&w->trace, "pacing_rate_bytes_per_s", s.pacing_rate_bytes_per_s);
        sim_trace_u64(&w->trace, "packets_sent", s.packets_sent);
        sim_trace_u64(&w->trace, "packets_lost", s.packets_lost);
        sim_trace_u64(&w->trace, "packets_retransmitted", s.packets_retransmitted);
        sim_trace_u64(&w->trace, "records_stored", s.records_stored);
        sim_trace_end(&w->trace);
    }
    for (uint32_t i = 0; i < w->tcp_count; i++) sim_tcp_sample(w, &w->tcps[i]);
}

/* ---- building ---- */

int sim_world_init(sim_world *w, const sim_scenario *sc, const sim_options *opt, char *err, size_t err_len) {
    memset(w, 0, sizeof *w);
    w->sc = sc;
    w->opt = *opt;
    w->seed = opt->seed_given ? opt->seed : sc->seed;
    w->host = &sim_host;
    w->watch = &sim_oracle_watch;
    if (sodium_init() < 0) {
        snprintf(err, err_len, "libsodium failed to initialise");
        return -1;
    }
    sim_engine_init(&w->engine, sc->events_most);
    /* Before the nodes: their configurations name the oracle's crypto table. */
    sim_keys_init(&w->keys, sc->null_crypto ? pure_link_crypto_null() : pure_link_crypto_default());
    sim_keys_activate(&w->keys);
    sim_trace_init(&w->trace, opt->trace_file, w->seed);
    if (opt->pcap_file) {
        if (sim_pcap_init(&w->pcap, opt->pcap_file) != 0) {
            snprintf(err, err_len, "cannot write the pcap file");
            return -1;
        }
        w->pcap_on = 1;
    }
    w->node_count = sc->node_count;
    w->link_count = sc->link_count;
    w->tcp_count = sc->tcp_count;
    w->nodes = calloc(w->node_count, sizeof *w->nodes);
    w->links = calloc(w->link_count ? w->link_count : 1, sizeof *w->links);
    w->tcps = calloc(w->tcp_count ? w->tcp_count : 1, sizeof *w->tcps);
    if (w->nodes == NULL || w->links == NULL || w->tcps == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < w->node_count; i++) {
        w->nodes[i].index = i;
        w->nodes[i].spec = &sc->nodes[i];
        if (sim_node_setup(w, &w->nodes[i], err, err_len) != 0) return -1;
    }
    for (uint32_t i = 0; i < w->link_count; i++) {
        w->links[i].index = i;
        w->links[i].spec = &sc->links[i];
        if (sim_link_setup(w, &w->links[i], err, err_len) != 0) return -1;
    }
    for (uint32_t i = 0; i < w->tcp_count; i++) {
        w->tcps[i].index = i;
        w->tcps[i].spec = &sc->tcps[i];
        if (sim_tcp_setup(w, &w->tcps[i], err, err_len) != 0) return -1;
    }
    if (setup_paths(w) != 0) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    return sim_attack_setup(w, err, err_len);
}

void sim_world_free(sim_world *w) {
    /* Datagrams still in flight are owned by their events. */
    sim_event ev;
    while (sim_heap_pop(&w->engine.heap, &ev))
        if (ev.kind == SIM_EV_ARRIVE || ev.kind == SIM_EV_TCP_ARRIVE) free(ev.ptr);
    for (sim_packet *p = w->free_packets, *next; p; p = next) {
        next = p->next_free;
        free(p);
    }
    w->free_packets = NULL;
    for (sim_tcp_seg *s = w->free_tcp_segs, *next; s; s = next) {
        next = s->next_free;
        free(s);
    }
    w->free_tcp_segs = NULL;
    for (uint32_t i = 0; w->tcps && i < w->tcp_count; i++) sim_tcp_free(&w->tcps[i]);
    free(w->tcps);
    w->tcps = NULL;
    for (uint32_t i = 0; w->nodes && i < w->node_count; i++) sim_node_free(w, &w->nodes[i]);
    sim_attack_free(w);
    sim_keys_free(&w->keys);
    for (uint32_t i = 0; w->links && i < w->link_count; i++) sim_link_free(&w->links[i]);
    for (uint32_t i = 0; w->paths && i < w->node_count * w->node_count; i++) sim_path_free(&w->paths[i]);
    free(w->nodes);
    free(w->links);
    free(w->paths);
    free(w->path_ready);
    free(w->path_params);
    sim_engine_free(&w->engine);
    w->nodes = NULL;
    w->links = NULL;
    w->paths = NULL;
    w->path_ready = NULL;
    w->path_params = NULL;
}

/* ---- the run ---- */

static void schedule_start(sim_world *w) {
    const sim_scenario *sc = w->sc;
    for (uint32_t i = 0; i < w->node_count; i++) {
        sim_world_at(w, 0, SIM_EV_NODE_START, i, 0, NULL);
        const sim_node_spec *ns = &sc->nodes[i];
        for (uint32_t c = 0; c < ns->crash_count; c++) {
            sim_world_at(w, ns->crashes[c].at_ns, SIM_EV_CRASH, i, c, NULL);
            if (ns->crashes[c].restart_ns != SIM_NEVER)
                sim_world_at(w, ns->crashes[c].restart_ns, SIM_EV_RESTART, i, c, NULL);
        }
    }
    for (uint32_t i = 0; i < w->link_count; i++) {
        sim_world_at(w, sc->links[i].start_ns, SIM_EV_LINK_START, i, 0, NULL);
        if (sc->links[i].until_ns != SIM_NEVER) sim_world_at(w, sc->links[i].until_ns, SIM_EV_APP_UNTIL, i, 0, NULL);
    }
    for (uint32_t i = 0; i < w->tcp_count; i++) {
        sim_world_at(w, sc->tcps[i].start_ns, SIM_EV_TCP_START, i, 0, NULL);
        if (sc->tcps[i].until_ns != SIM_NEVER) sim_world_at(w, sc->tcps[i].until_ns, SIM_EV_TCP_UNTIL, i, 0, NULL);
    }
    for (uint32_t i = 0; i < sc->change_count; i++) sim_world_at(w, sc->changes[i].at_ns, SIM_EV_CHANGE, i, 0, NULL);
    for (uint32_t i = 0; i < sc->node_change_count; i++)
        sim_world_at(w, sc->node_changes[i].at_ns, SIM_EV_NODE_CHANGE, i, 0, NULL);
    for (uint32_t i = 0; i < sc->replay_count; i++) sim_world_at(w, sc->replays[i].at_ns, SIM_EV_REPLAY, i, 0, NULL);
    for (uint32_t i = 0; i < sc->forge_count; i++) sim_world_at(w, sc->forges[i].at_ns, SIM_EV_FORGE, i, 0, NULL);
    for (uint32_t i = 0; i < w->link_count; i++)
        for (uint32_t m = 0; m < sc->links[i].more_count; m++)
            sim_world_at(w, sc->links[i].more[m].at_ns, SIM_EV_APP_MORE, i, m, NULL);
    if (sc->metrics_interval_ns) sim_world_at(w, sc->metrics_interval_ns, SIM_EV_METRICS, 0, 0, NULL);
    sim_world_at(w, sc->progress_interval_ns, SIM_EV_PROGRESS, 0, 0, NULL);
}

/* Every link and every TCP flow is done (and there is at least one). */
static int all_links_done(const sim_world *w) {
    if (w->link_count == 0 && w->tcp_count == 0) return 0;
    for (uint32_t i = 0; i < w->link_count; i++)
        if (!w->links[i].done) return 0;
    for (uint32_t i = 0; i < w->tcp_count; i++)
        if (!w->tcps[i].done) return 0;
    return 1;
}

/* The share window begins: the figures as they stand after every event before share_from.
 * Taken before the first event at or after it, so it costs no event of its own. */
static void share_mark(sim_world *w) {
    w->share_marked = 1;
    for (uint32_t i = 0; i < w->link_count; i++) w->links[i].share_mark_bytes = w->links[i].host_stored_bytes;
    for (uint32_t i = 0; i < w->tcp_count; i++) w->tcps[i].share_mark_segments = w->tcps[i].rcv_nxt;
}

static void dispatch(sim_world *w, const sim_event *ev) {
    const uint64_t now = w->engine.now_ns;
    switch ((sim_event_kind)ev->kind) {
    case SIM_EV_NODE_START: sim_node_start(w, &w->nodes[ev->target]); break;
    case SIM_EV_ARRIVE: on_arrive(w, ev->target, ev->ptr); break;
    case SIM_EV_WAKE: sim_node_on_wake(w, &w->nodes[ev->target], ev->arg); break;
    case SIM_EV_STORE: {
        sim_node *n = &w->nodes[ev->target];
        if (sim_node_up(n) && (ev->arg >> 32) == n->incarnation) sim_receiver_on_store(w, n, (uint32_t)ev->arg);
        break;
    }
    case SIM_EV_DISK: sim_node_on_disk(w, &w->nodes[ev->target], ev->arg); break;
    case SIM_EV_CRASH: sim_node_crash(w, &w->nodes[ev->target]); break;
    case SIM_EV_RESTART: sim_node_start(w, &w->nodes[ev->target]); break;
    case SIM_EV_LINK_START: sim_link_on_start(w, &w->links[ev->target]); break;
    case SIM_EV_APP_WRITE: sim_link_on_write(w, &w->links[ev->target], ev->arg); break;
    case SIM_EV_APP_UNTIL: sim_link_on_until(w, &w->links[ev->target]); break;
    case SIM_EV_CHANGE: apply_change(w, &w->sc->changes[ev->target]); break;
    case SIM_EV_METRICS:
        sample_metrics(w);
        sim_world_at(w, now + w->sc->metrics_interval_ns, SIM_EV_METRICS, 0, 0, NULL);
        break;
    case SIM_EV_PROGRESS:
        sim_report_progress(w);
        sim_world_at(w, now + w->sc->progress_interval_ns, SIM_EV_PROGRESS, 0, 0, NULL);
        break;
    case SIM_EV_TCP_START: sim_tcp_on_start(w, &w->tcps[ev->target]); break;
    case SIM_EV_TCP_UNTIL: sim_tcp_on_until(w, &w->tcps[ev->target]); break;
    case SIM_EV_TCP_ARRIVE: sim_tcp_on_arrive(w, &w->tcps[ev->target], ev->ptr); break;
    case SIM_EV_TCP_TIMER: sim_tcp_on_timer(w, &w->tcps[ev->target], ev->arg); break;
    case SIM_EV_NODE_CHANGE: sim_attack_on_node_change(w, ev->target); break;
    case SIM_EV_REPLAY: sim_attack_on_replay(w, ev->target); break;
    case SIM_EV_FORGE: sim_attack_on_forge(w, ev->target); break;
    case SIM_EV_APP_MORE: sim_link_on_more(w, &w->links[ev->target], (uint32_t)ev->arg); break;
    default: assert(0 && "unknown event kind"); break;
    }
}

int sim_world_run(sim_world *w) {
    const sim_scenario *sc = w->sc;
    sim_keys_activate(&w->keys); /* the wrapped crypto reports to this world's oracle */
    schedule_start(w);
    const char *why = "duration";
    while (!w->stopped) {
        sim_event ev;
        sim_step step = sim_engine_next(&w->engine, sc->duration_ns, &ev);
        if (step == SIM_STEP_IDLE) break;
        if (step == SIM_STEP_LIMIT) {
            sim_world_fail(w, "event limit reached (events_most = %llu)", (unsigned long long)w->engine.events_most);
            break;
        }
        if (!w->share_marked && ev.at_ns >= sc->share_from_ns) share_mark(w);
        dispatch(w, &ev);
        if (sc->stop_when_done && all_links_done(w)) {
            why = "done";
            break;
        }
    }
    if (w->error) why = "error";
    w->end_ns = w->engine.now_ns;
    /* A final sample so the summary's per-link figures are current. */
    sample_metrics(w);
    sim_trace_begin(&w->trace, w->end_ns, "sim:end");
    sim_trace_str(&w->trace, "why", why);
    sim_trace_u64(&w->trace, "events", w->engine.events_run);
    sim_trace_end(&w->trace);
    if (w->trace.write_error) sim_world_fail(w, "writing the trace failed");
    if (w->pcap.write_error) sim_world_fail(w, "writing the pcap failed");
    return w->error ? -1 : 0;
}
