/* sim_run.c: one run of one scenario with one seed, at the top of the simulator's layers
 * (sim_world.h lists them): it builds the world, the nodes, their applications, the TCP
 * flows and the attacker from the scenario, sets the hooks through which the lower layers
 * reach the upper ones, schedules what the scenario times and hands each event to the
 * layer it is for.  See sim_run.h. */
#include "sim_run.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "sim_attack.h"
#include "sim_host.h"
#include "sim_oracle.h"
#include "sim_report.h"

/* A datagram reaches a node: the attacker relays it if a `forward:` says so, the receiving
 * host notes it (the recovery clock after a crash), then the node takes it, up or not. */
static void arrive(sim_world *w, uint32_t node, sim_packet *pkt) {
    sim_attack_on_arrive(w, node, pkt);
    sim_receiver_on_arrival(w, &w->nodes[node], pkt);
    sim_node_on_arrival(w, &w->nodes[node], pkt);
}

static const sim_world_hooks hooks = {.on_route = sim_attack_on_route, .on_arrive = arrive};

static int set_up(sim_world *w, char *err, size_t err_len) {
    const sim_scenario *sc = w->sc;
    w->links = calloc(w->link_count ? w->link_count : 1, sizeof *w->links);
    w->tcps = calloc(w->tcp_count ? w->tcp_count : 1, sizeof *w->tcps);
    if (w->links == NULL || w->tcps == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    /* Before the nodes: their configurations name the oracle's crypto table. */
    sim_keys_init(&w->keys, sc->null_crypto ? pure_link_crypto_null() : pure_link_crypto_default());
    sim_keys_activate(&w->keys);
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
    const uint32_t n = w->node_count;
    for (uint32_t f = 0; f < n; f++)
        for (uint32_t t = 0; t < n; t++)
            if (f != t) sim_scenario_path_params(sc, f, t, &w->path_params[f * n + t]);
    return sim_attack_setup(w, err, err_len);
}

int sim_run_init(sim_world *w, const sim_scenario *sc, const sim_options *opt, char *err, size_t err_len) {
    if (sim_world_open(w, sc, opt, err, err_len) != 0) return -1;
    w->hooks = &hooks;
    w->host = &sim_host;
    w->watch = &sim_oracle_watch;
    return set_up(w, err, err_len);
}

void sim_run_free(sim_world *w) {
    for (sim_tcp_seg *s = w->free_tcp_segs, *next; s; s = next) {
        next = s->next_free;
        free(s);
    }
    w->free_tcp_segs = NULL;
    for (uint32_t i = 0; w->tcps && i < w->tcp_count; i++) sim_tcp_free(&w->tcps[i]);
    for (uint32_t i = 0; w->nodes && i < w->node_count; i++) sim_node_free(w, &w->nodes[i]);
    sim_attack_free(w);
    sim_keys_free(&w->keys);
    for (uint32_t i = 0; w->links && i < w->link_count; i++) sim_link_free(&w->links[i]);
    free(w->links);
    free(w->tcps);
    w->links = NULL;
    w->tcps = NULL;
    sim_world_close(w);
}

/* ---- the run ---- */

static void sample_metrics(sim_world *w) {
    for (uint32_t i = 0; i < w->link_count; i++) sim_link_sample(w, &w->links[i]);
    for (uint32_t i = 0; i < w->tcp_count; i++) sim_tcp_sample(w, &w->tcps[i]);
}

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
    case SIM_EV_ARRIVE: sim_world_on_arrive(w, ev->target, ev->ptr); break;
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
    case SIM_EV_CHANGE: sim_world_change_path(w, &w->sc->changes[ev->target]); break;
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

int sim_run(sim_world *w) {
    const sim_scenario *sc = w->sc;
    sim_keys_activate(&w->keys); /* the wrapped crypto reports to this world's oracle */
    schedule_start(w);
    const char *why = "duration";
    sim_event ev;
    while (sim_world_next(w, &ev)) {
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
    return sim_world_end(w, why);
}
