/* sim_node.h: one node's endpoint through its lifetimes (sim_node.c), and what the node
 * calls above itself without knowing it: its host (the applications its events go to) and
 * its watch (the oracles that see every datagram it sends or receives).  The run sets both
 * in the world (w->host, w->watch); the node calls only through them. */
#ifndef SIM_NODE_H
#define SIM_NODE_H

#include "sim_world.h"

/* The applications on a node (sim_host.c). */
typedef struct sim_node_host {
    /* The endpoint is up (peers wired, memo loaded): open what should be open. */
    void (*on_start)(sim_world *w, sim_node *n);
    /* An event for the applications: STREAM_OPEN, RECORD, STORED, REFUSED, RELEASED,
     * CLOSED, and the EPOCH events of the node's own senders. */
    void (*on_event)(sim_world *w, sim_node *n, const pure_link_event *ev);
    /* After the events of a service round: hand waiting records to the core.  Returns 1
     * if the core took any. */
    int (*on_serve)(sim_world *w, sim_node *n);
    /* The endpoint is about to be discarded (a crash): its statistics can still be read. */
    void (*on_crash)(sim_world *w, sim_node *n);
    void (*on_free)(sim_node *n);
} sim_node_host;

/* The oracles watching a node (sim_oracle.c). */
typedef struct sim_node_watch {
    /* genuine: sent by the node that holds `from` (not the attacker's). */
    void (*on_receive)(sim_world *w, sim_node *n, const pure_link_addr *from, uint32_t len, int genuine);
    void (*on_send)(sim_world *w, sim_node *n, const pure_link_addr *to, uint32_t len);
    /* A receiver-side EPOCH event. */
    void (*on_epoch)(sim_world *w, sim_node *n, const pure_link_event *ev);
    /* The endpoint ended (a crash). */
    void (*on_crash)(sim_node *n);
    void (*on_free)(sim_node *n);
} sim_node_watch;

int sim_node_setup(sim_world *w, sim_node *n, char *err, size_t err_len);
void sim_node_start(sim_world *w, sim_node *n);      /* (re)starts the endpoint */
void sim_node_crash(sim_world *w, sim_node *n);
void sim_node_free(sim_world *w, sim_node *n);
/* After any call into the endpoint: drain events, pull datagrams, reschedule its wake-up. */
void sim_node_service(sim_world *w, sim_node *n);
/* A datagram reaches the node (up or not); it takes it. */
void sim_node_on_arrival(sim_world *w, sim_node *n, sim_packet *pkt);
void sim_node_on_wake(sim_world *w, sim_node *n, uint64_t gen);
void sim_node_on_disk(sim_world *w, sim_node *n, uint64_t incarnation);
/* Records a failed API call on this node (counted, traced). */
void sim_node_api_error(sim_world *w, sim_node *n, const char *call, int code);
int sim_node_up(const sim_node *n);
/* Endpoint totals over every incarnation (sender = -1). */
void sim_node_stats(const sim_node *n, pure_link_stats *out);
void sim_stats_add(pure_link_stats *sum, const pure_link_stats *add);

#endif
