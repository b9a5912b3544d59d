/* sim_host.h: the applications on the nodes, above them: the sending application of each
 * link (sim_sender.c), the receiving host (sim_receiver.c), and sim_host, the node's host
 * that hands each endpoint event to the one it is for (sim_host.c). */
#ifndef SIM_HOST_H
#define SIM_HOST_H

#include "sim_node.h"

extern const sim_node_host sim_host;

/* ---- sim_sender.c ---- */
int sim_link_setup(sim_world *w, sim_link *l, char *err, size_t err_len);
void sim_link_free(sim_link *l);
void sim_link_on_start(sim_world *w, sim_link *l);
void sim_link_open(sim_world *w, sim_link *l);       /* opens its sender on a running node */
void sim_link_on_crash(sim_world *w, sim_link *l);   /* the sending node crashed */
void sim_link_on_write(sim_world *w, sim_link *l, uint64_t number);
void sim_link_on_until(sim_world *w, sim_link *l);
void sim_link_on_more(sim_world *w, sim_link *l, uint32_t more); /* a `more` batch is due */
/* Hands waiting records to the core; returns 1 if any was taken. */
int sim_link_fill(sim_world *w, sim_link *l);
void sim_link_on_event(sim_world *w, sim_link *l, const pure_link_event *ev);
/* Samples the open sender's statistics into the trace (recovery:metrics_updated). */
void sim_link_sample(sim_world *w, sim_link *l);
/* Sender statistics over every incarnation. */
void sim_link_stats(const sim_world *w, const sim_link *l, pure_link_stats *out);

/* ---- sim_receiver.c ---- */
void sim_receiver_on_stream_open(sim_world *w, sim_node *n, const pure_link_event *ev);
void sim_receiver_on_record(sim_world *w, sim_node *n, const pure_link_event *ev);
void sim_receiver_on_store(sim_world *w, sim_node *n, uint32_t run_index);
void sim_receiver_on_crash(sim_world *w, sim_node *n);
void sim_receiver_free(sim_node *n);

#endif
