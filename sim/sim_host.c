/* sim_host.c: the host of every node, the applications above its endpoint.  The node
 * drains its endpoint's events and hands each here (sim_node_host, sim_node.h); this file
 * gives it to the one it is for: the receiving host (streams, records) or the sending
 * application of the link whose sender it names. */
#include "sim_host.h"

static sim_link *link_of_sender(sim_world *w, sim_node *n, int sender) {
    if (sender < 0 || (uint32_t)sender >= n->sender_capacity || n->sender_links[sender] == SIM_NO_LINK) return NULL;
    return &w->links[n->sender_links[sender]];
}

static void host_start(sim_world *w, sim_node *n) {
    for (uint32_t i = 0; i < w->link_count; i++)
        if (w->links[i].from == n->index && w->links[i].started) sim_link_open(w, &w->links[i]);
}

static void host_event(sim_world *w, sim_node *n, const pure_link_event *ev) {
    sim_link *l;
    switch (ev->kind) {
    case PURE_LINK_EVENT_STREAM_OPEN: sim_receiver_on_stream_open(w, n, ev); break;
    case PURE_LINK_EVENT_RECORD: sim_receiver_on_record(w, n, ev); break;
    case PURE_LINK_EVENT_EPOCH:
        if ((l = link_of_sender(w, n, ev->sender)) != NULL) l->epoch_events++;
        break;
    default: /* STORED, REFUSED, RELEASED, CLOSED */
        l = link_of_sender(w, n, ev->sender);
        if (l) sim_link_on_event(w, l, ev);
        else sim_node_api_error(w, n, "event for an unknown sender", ev->sender);
        break;
    }
}

static int host_serve(sim_world *w, sim_node *n) {
    int progress = 0;
    for (uint32_t i = 0; i < n->out_count; i++) {
        sim_link *l = &w->links[n->out_links[i]];
        if (l->fill_wanted) progress |= sim_link_fill(w, l);
    }
    return progress;
}

static void host_crash(sim_world *w, sim_node *n) {
    for (uint32_t i = 0; i < w->link_count; i++)
        if (w->links[i].from == n->index) sim_link_on_crash(w, &w->links[i]);
    sim_receiver_on_crash(w, n);
}

const sim_node_host sim_host = {
    .on_start = host_start,
    .on_event = host_event,
    .on_serve = host_serve,
    .on_crash = host_crash,
    .on_free = sim_receiver_free,
};
