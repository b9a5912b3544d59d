/* sim_oracle.h: what must never happen, watched from outside the core (sim_oracle.c). */
#ifndef SIM_ORACLE_H
#define SIM_ORACLE_H

#include "sim_node.h"

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
