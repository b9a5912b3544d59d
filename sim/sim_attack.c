/* sim_attack.c: what the network and an attacker do to addresses.  See sim_attack.h and
 * the scenario keys in sim/README.md.
 *
 *   at TIME node.NAME.port|addr   the node's address changes (a NAT rebinding, a move):
 *                                 it sends from the new one; datagrams to the old one,
 *                                 even those already on their way, find no node.
 *   replay: FROM > TO at TIME     an attacker who saw every datagram FROM sent to TO sends
 *                                 them all again at TIME, in order, byte for byte, each
 *                                 from the address it left from.  It sits next to TO:
 *                                 the copies skip the path (no loss, no queue, no delay).
 *   spoof: FROM > TO as V at TIME the first datagram FROM sends to TO at or after TIME is
 *                                 copied and sent from V's address; the copy skips the
 *                                 path's loss, queue and jitter and arrives after the
 *                                 path's propagation delay alone, so never after the
 *                                 original (at the same instant it is handled first).
 *   forge: FROM > TO as A at TIME ... datagrams made up from what travels in clear (FROM's
 *                                 key id, a seen or random run, an epoch field), sent
 *                                 from A's address next to TO.
 *   forward: NODE > TO at TIME    whatever reaches NODE is relayed to TO.
 *
 * The attacker's datagrams are in the trace (`attack`, `src`) and the pcap like any other. */
#include "sim_attack.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

int sim_attack_setup(sim_world *w, char *err, size_t err_len) {
    const sim_scenario *sc = w->sc;
    w->captures = calloc(sc->replay_count ? sc->replay_count : 1, sizeof *w->captures);
    w->spoof_fired = calloc(sc->spoof_count ? sc->spoof_count : 1, 1);
    w->forges = calloc(sc->forge_count ? sc->forge_count : 1, sizeof *w->forges);
    if (w->captures == NULL || w->spoof_fired == NULL || w->forges == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < sc->forge_count; i++) {
        char label[32];
        snprintf(label, sizeof label, "forge:%u", i);
        sim_rng_derive(&w->forges[i].rng, w->seed, label);
    }
    return 0;
}

void sim_attack_free(sim_world *w) {
    for (uint32_t i = 0; w->captures && i < w->sc->replay_count; i++) {
        free(w->captures[i].bytes);
        free(w->captures[i].items);
    }
    free(w->captures);
    free(w->spoof_fired);
    free(w->forges);
    w->captures = NULL;
    w->spoof_fired = NULL;
    w->forges = NULL;
}

/* ---- address changes ---- */

void sim_attack_on_node_change(sim_world *w, uint32_t index) {
    const sim_node_change *c = &w->sc->node_changes[index];
    sim_node *n = &w->nodes[c->node];
    pure_link_addr next = n->addr;
    if (c->field == SIM_NF_ADDR) {
        memcpy(next.bytes, c->ip, 4);
    } else {
        next.bytes[4] = (uint8_t)(c->port >> 8);
        next.bytes[5] = (uint8_t)c->port;
    }
    int holder = sim_world_node_at(w, &next);
    char old_text[SIM_ADDR_TEXT_MOST], new_text[SIM_ADDR_TEXT_MOST];
    sim_addr_text(&n->addr, old_text);
    sim_addr_text(&next, new_text);
    if (holder >= 0 && (uint32_t)holder != c->node) {
        sim_world_fail(w, "node %s cannot take %s: node %s holds it", n->spec->name, new_text,
                       sim_node_name(w, (uint32_t)holder));
        return;
    }
    n->addr = next;
    memcpy(n->ep.ip, next.bytes, 4);
    n->ep.port = (uint16_t)(next.bytes[4] << 8 | next.bytes[5]);
    n->address_changes++;
    sim_trace_begin(&w->trace, w->engine.now_ns, "sim:node_address");
    sim_trace_str(&w->trace, "node", n->spec->name);
    sim_trace_str(&w->trace, "from", old_text);
    sim_trace_str(&w->trace, "to", new_text);
    sim_trace_end(&w->trace);
    sim_world_log(w, "node %s moves from %s to %s", n->spec->name, old_text, new_text);
}

/* ---- capture and replay ---- */

static int capture(sim_capture *c, const sim_packet *pkt) {
    if (c->count == c->item_capacity) {
        size_t cap = c->item_capacity ? c->item_capacity * 2 : 256;
        struct sim_captured *p = realloc(c->items, cap * sizeof *p);
        if (p == NULL) return -1;
        c->items = p;
        c->item_capacity = cap;
    }
    if (c->used + pkt->len > c->capacity) {
        size_t cap = c->capacity ? c->capacity : 256 * PURE_LINK_DATAGRAM_MOST;
        while (cap < c->used + pkt->len) cap *= 2;
        uint8_t *p = realloc(c->bytes, cap);
        if (p == NULL) return -1;
        c->bytes = p;
        c->capacity = cap;
    }
    struct sim_captured *it = &c->items[c->count++];
    it->offset = c->used;
    it->len = pkt->len;
    it->src = pkt->src;
    it->dst = pkt->dst;
    memcpy(c->bytes + c->used, pkt->bytes, pkt->len);
    c->used += pkt->len;
    return 0;
}

void sim_attack_on_replay(sim_world *w, uint32_t index) {
    const sim_replay_spec *r = &w->sc->replays[index];
    sim_capture *c = &w->captures[index];
    assert(!c->fired);
    c->fired = 1;
    sim_trace_begin(&w->trace, w->engine.now_ns, "sim:replay");
    sim_trace_str(&w->trace, "from", r->from_name);
    sim_trace_str(&w->trace, "to", r->to_name);
    sim_trace_u64(&w->trace, "datagrams", c->count);
    sim_trace_end(&w->trace);
    sim_world_log(w, "replay: %zu datagrams %s sent to %s, again", c->count, r->from_name, r->to_name);
    for (size_t i = 0; i < c->count && !w->stopped; i++) {
        const struct sim_captured *it = &c->items[i];
        sim_packet *pkt = sim_packet_alloc(w);
        if (pkt == NULL) {
            sim_world_fail(w, "too many datagrams alive");
            break;
        }
        pkt->from = r->from;
        pkt->forged = SIM_FORGED_REPLAY;
        pkt->src = it->src;
        pkt->dst = it->dst;
        pkt->len = it->len;
        memcpy(pkt->bytes, c->bytes + it->offset, it->len);
        c->replayed++;
        w->replayed_datagrams++;
        /* All at this instant; the engine keeps the order they are scheduled in. */
        sim_world_inject(w, pkt, w->engine.now_ns);
    }
    free(c->bytes);
    free(c->items);
    c->bytes = NULL;
    c->items = NULL;
    c->used = c->capacity = c->count = c->item_capacity = 0;
}

/* ---- forged datagrams and relays ---- */

static uint32_t key_id(const uint8_t public_key[32]) {
    uint32_t h = 0x811c9dc5u; /* FNV-1a 32 (spec/crypto.md §4): the key id is in clear */
    for (int i = 0; i < 32; i++) h = (h ^ public_key[i]) * 0x01000193u;
    return h;
}

void sim_attack_on_forge(sim_world *w, uint32_t index) {
    const sim_forge_spec *x = &w->sc->forges[index];
    struct sim_forge_state *st = &w->forges[index];
    if (!x->run_seen || st->seen) {
        sim_packet *pkt = sim_packet_alloc(w);
        if (pkt == NULL) {
            sim_world_fail(w, "too many datagrams alive");
            return;
        }
        uint64_t run = x->run_seen ? st->seen_run : sim_rng_next(&st->rng);
        uint32_t id = key_id(w->nodes[x->from].public_key);
        pkt->len = (uint32_t)x->len;
        sim_rng_fill(&st->rng, pkt->bytes, pkt->len);
        pkt->bytes[0] = 1;                                  /* version 1, sender packet */
        pkt->bytes[1] = (uint8_t)(0x30 | x->epoch_field);   /* 4-byte packet number */
        for (int b = 0; b < 4; b++) pkt->bytes[2 + b] = (uint8_t)(id >> (24 - 8 * b));
        for (int b = 0; b < 8; b++) pkt->bytes[6 + b] = (uint8_t)(run >> (56 - 8 * b));
        pkt->from = x->as;
        pkt->forged = SIM_FORGED_FORGE;
        pkt->src = w->nodes[x->as].addr;
        pkt->dst = w->nodes[x->to].addr;
        w->forged_datagrams++;
        sim_world_inject(w, pkt, w->engine.now_ns); /* the attacker sits next to its target */
    }
    if (++st->sent < x->count) sim_world_at(w, w->engine.now_ns + x->every_ns, SIM_EV_FORGE, index, 0, NULL);
}

void sim_attack_on_arrive(sim_world *w, uint32_t node, const sim_packet *pkt) {
    const sim_scenario *sc = w->sc;
    for (uint32_t i = 0; i < sc->forward_count; i++) {
        const sim_forward_spec *x = &sc->forwards[i];
        if (x->from != node || w->engine.now_ns < x->at_ns) continue;
        sim_packet *copy = sim_packet_alloc(w);
        if (copy == NULL) {
            sim_world_fail(w, "too many datagrams alive");
            return;
        }
        memcpy(copy->bytes, pkt->bytes, pkt->len);
        copy->len = pkt->len;
        copy->from = node;
        copy->forged = SIM_FORGED_FORWARD;
        copy->src = w->nodes[node].addr;
        copy->dst = w->nodes[x->to].addr;
        w->forwarded_datagrams++;
        const sim_path_params *pp = &w->path_params[node * w->node_count + x->to];
        sim_world_inject(w, copy, w->engine.now_ns + pp->delay_ns);
    }
}

/* ---- on every routed datagram ---- */

static void spoof(sim_world *w, const sim_spoof_spec *x, const sim_packet *pkt) {
    sim_packet *copy = sim_packet_alloc(w);
    if (copy == NULL) {
        sim_world_fail(w, "too many datagrams alive");
        return;
    }
    copy->from = x->from;
    copy->forged = SIM_FORGED_SPOOF;
    copy->src = w->nodes[x->as].addr;
    copy->dst = pkt->dst;
    copy->len = pkt->len;
    memcpy(copy->bytes, pkt->bytes, pkt->len);
    w->spoofed_datagrams++;
    const sim_path_params *pp = &w->path_params[x->from * w->node_count + x->to];
    sim_world_inject(w, copy, w->engine.now_ns + pp->delay_ns);
}

void sim_attack_on_route(sim_world *w, uint32_t from, uint32_t to, const sim_packet *pkt) {
    const sim_scenario *sc = w->sc;
    for (uint32_t i = 0; i < sc->forge_count; i++) {
        /* The attacker reads the run of sender packets (R = 0) off the path. */
        if (sc->forges[i].from != from || sc->forges[i].to != to || pkt->len < 14 || (pkt->bytes[1] & 0x80)) continue;
        uint64_t run = 0;
        for (int b = 6; b < 14; b++) run = run << 8 | pkt->bytes[b];
        w->forges[i].seen_run = run;
        w->forges[i].seen = 1;
    }
    for (uint32_t i = 0; i < sc->replay_count; i++) {
        sim_capture *c = &w->captures[i];
        if (c->fired || sc->replays[i].from != from || sc->replays[i].to != to) continue;
        if (capture(c, pkt) != 0) sim_world_fail(w, "out of memory for the replay capture");
    }
    for (uint32_t i = 0; i < sc->spoof_count; i++) {
        const sim_spoof_spec *x = &sc->spoofs[i];
        if (w->spoof_fired[i] || x->from != from || x->to != to || w->engine.now_ns < x->at_ns) continue;
        w->spoof_fired[i] = 1;
        spoof(w, x, pkt);
    }
}
