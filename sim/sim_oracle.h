/* sim_oracle.h: what must never happen, watched from outside the core (sim_oracle.c). */
#ifndef SIM_ORACLE_H
#define SIM_ORACLE_H

#include "sim_node.h"

/* Amplification oracle: bytes between one node and one remote address, counted from the
 * first datagram the node received from it (sim_oracle.c). */
typedef struct sim_amp_pair {
    pure_link_addr addr;
    uint64_t received_bytes, sent_bytes; /* since the first datagram from addr */
    uint64_t max_x1000;                  /* largest sent * 1000 / received at a send */
    int sent_any;                        /* the node has sent to addr since then */
    int answered;                        /* addr sent something after the node's first datagram */
} sim_amp_pair;

/* Epoch oracle: the last epoch a receiver reported for one (peer, run), this incarnation. */
typedef struct sim_epoch_seen {
    int peer;
    uint64_t run, build;     /* build: the event's token, the reply run of that build */
    uint32_t epoch;
} sim_epoch_seen;

/* The oracles as a node's watch. */
extern const sim_node_watch sim_oracle_watch;

/* genuine: sent by the node that holds `from` (not the attacker's). */
void sim_oracle_on_receive(sim_world *w, sim_node *n, const pure_link_addr *from, uint32_t len, int genuine);
void sim_oracle_on_send(sim_world *w, sim_node *n, const pure_link_addr *to, uint32_t len);
/* A receiver-side EPOCH event. */
void sim_oracle_on_epoch(sim_world *w, sim_node *n, const pure_link_event *ev);
/* The node's endpoint ends (crash): fold its pairs into the node's maxima, forget epochs. */
void sim_oracle_on_crash(sim_node *n);
void sim_oracle_free(sim_node *n);
/* The node's amplification maxima over every incarnation, the running one included. */
void sim_oracle_amplification(const sim_node *n, uint64_t *max_x1000, uint64_t *unanswered_max_x1000);

#endif
