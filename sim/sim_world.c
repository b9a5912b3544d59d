/* sim_world.c: the world's clock and events, datagrams on paths between the nodes'
 * addresses, and the paths themselves.  See sim_world.h. */
#include "sim_world.h"

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
void sim_world_trace_packet(sim_world *w, const char *name, const sim_packet *pkt, const char *why) {
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
    sim_world_trace_packet(w, "transport:packet_dropped", pkt, "no_route");
    sim_packet_free(w, pkt);
}

static void on_the_wire(sim_world *w, const sim_packet *pkt) {
    if (w->pcap_on) {
        sim_pcap_endpoint s, d;
        addr_endpoint(&pkt->src, &s);
        addr_endpoint(&pkt->dst, &d);
        sim_pcap_write(&w->pcap, w->engine.now_ns, &s, &d, pkt->bytes, pkt->len);
    }
    sim_world_trace_packet(w, "transport:packet_sent", pkt, NULL);
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
    if (w->hooks && w->hooks->on_route) w->hooks->on_route(w, from, (uint32_t)dst, pkt);
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
            const char *why = copies[i].fate == SIM_FATE_LOSS ? "loss" : copies[i].fate == SIM_FATE_MTU ? "mtu" : "queue";
            sim_world_trace_packet(w, "transport:packet_dropped", c, why);
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

void sim_world_on_arrive(sim_world *w, uint32_t target, sim_packet *pkt) {
    if (!addr_equal(&w->nodes[target].addr, &pkt->dst)) { /* the node moved while it was on its way */
        drop_no_route(w, pkt);
        return;
    }
    w->hooks->on_arrive(w, target, pkt);
}

/* ---- paths ---- */

void sim_world_change_path(sim_world *w, const sim_path_setting *s) {
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

/* ---- building and the loop ---- */

int sim_world_open(sim_world *w, const sim_scenario *sc, const sim_options *opt, char *err, size_t err_len) {
    memset(w, 0, sizeof *w);
    w->sc = sc;
    w->opt = *opt;
    w->seed = opt->seed_given ? opt->seed : sc->seed;
    if (sodium_init() < 0) {
        snprintf(err, err_len, "libsodium failed to initialise");
        return -1;
    }
    sim_engine_init(&w->engine, sc->events_most);
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
    const size_t directions = (size_t)w->node_count * w->node_count;
    w->paths = calloc(directions, sizeof *w->paths);
    w->path_params = calloc(directions, sizeof *w->path_params);
    w->path_ready = calloc(directions, 1);
    if (w->nodes == NULL || w->paths == NULL || w->path_params == NULL || w->path_ready == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    return 0;
}

void sim_world_close(sim_world *w) {
    /* Datagrams and segments still in flight are owned by their events. */
    sim_event ev;
    while (sim_heap_pop(&w->engine.heap, &ev))
        if (ev.ptr) free(ev.ptr);
    for (sim_packet *p = w->free_packets, *next; p; p = next) {
        next = p->next_free;
        free(p);
    }
    w->free_packets = NULL;
    for (uint32_t i = 0; w->paths && i < w->node_count * w->node_count; i++) sim_path_free(&w->paths[i]);
    free(w->nodes);
    free(w->paths);
    free(w->path_ready);
    free(w->path_params);
    sim_engine_free(&w->engine);
    w->nodes = NULL;
    w->paths = NULL;
    w->path_ready = NULL;
    w->path_params = NULL;
}

int sim_world_next(sim_world *w, sim_event *ev) {
    if (w->stopped) return 0;
    sim_step step = sim_engine_next(&w->engine, w->sc->duration_ns, ev);
    if (step == SIM_STEP_IDLE) return 0;
    if (step == SIM_STEP_LIMIT) {
        sim_world_fail(w, "event limit reached (events_most = %llu)", (unsigned long long)w->engine.events_most);
        return 0;
    }
    return 1;
}

int sim_world_end(sim_world *w, const char *why) {
    sim_trace_begin(&w->trace, w->end_ns, "sim:end");
    sim_trace_str(&w->trace, "why", why);
    sim_trace_u64(&w->trace, "events", w->engine.events_run);
    sim_trace_end(&w->trace);
    if (w->trace.write_error) sim_world_fail(w, "writing the trace failed");
    if (w->pcap.write_error) sim_world_fail(w, "writing the pcap failed");
    return w->error ? -1 : 0;
}
