/* sim_host.h: the applications on the nodes, above them: the sending application of each
 * link (sim_sender.c), the receiving host (sim_receiver.c), and sim_host, the node's host
 * that hands each endpoint event to the one it is for (sim_host.c). */
#ifndef SIM_HOST_H
#define SIM_HOST_H

#include "sim_node.h"

extern const sim_node_host sim_host;

/* One record waiting in a receiving host's store queue. */
typedef struct sim_store_item {
    uint64_t ready_ns;
    int64_t record;
    uint32_t len;
} sim_store_item;


/* The receiving host's view of one (peer, run): durable part first. */
typedef struct sim_host_run {
    uint32_t peer_node;
    uint64_t run;
    uint32_t link;           /* the link it carries, or SIM_NO_LINK */
    int64_t stored_mark;     /* durable: records [0, stored_mark) are stored */
    uint64_t stored_bytes;   /* durable: bytes of stored records */
    /* Per incarnation of the receiver. */
    int stream;              /* the endpoint's handle, -1 when not bound */
    int64_t next_expected;   /* one past the highest record delivered */
    uint8_t *state;          /* per record number: 0 not delivered, 1 delivered, 2 stored */
    size_t state_capacity;
    sim_store_item *fifo;    /* records waiting for store_latency */
    size_t fifo_head, fifo_count, fifo_capacity;
    int store_timer;         /* a SIM_EV_STORE is scheduled */
    uint64_t delivered, duplicates, out_of_order;
} sim_host_run;


typedef struct sim_link {
    uint32_t index;
    const sim_link_spec *spec;
    uint32_t from, to;
    int sender;              /* handle in the sending endpoint, -1 if not open */
    uint32_t sender_incarnation;
    uint64_t run;            /* the current run, once an event named it */
    int started;             /* start time reached */
    /* The application's records, numbered from 0. */
    uint64_t written;        /* produced */
    uint64_t queued_next;    /* next to hand to the core */
    uint64_t run_base;       /* application number of the current run's record 0 */
    uint64_t stored;         /* confirmed stored (STORED) */
    uint64_t *write_ns;      /* write time per record (grown as needed) */
    size_t write_capacity;
    uint8_t *handed;         /* receiver side: 1 once a record was handed over (first time) */
    size_t handed_capacity;
    int writing_over;        /* count reached or until passed */
    uint64_t count_limit;    /* bulk: count plus the `more` batches that came */
    uint32_t more_fired;     /* `more` lines reached */
    int fill_wanted;         /* try pure_link_send at the next service */
    int close_called, closed, done;
    uint64_t done_ns;
    uint8_t *record;         /* scratch bytes of one record */
    /* Counters. */
    uint64_t records_sent, send_full, send_too_big, send_errors;
    uint64_t refused_events, released_events, stored_events, epoch_events;
    uint64_t host_delivered, host_stored, host_stored_bytes, duplicates, out_of_order;
    uint64_t *latency_ns;    /* paced: write -> first hand-over */
    size_t latency_count, latency_capacity;
    pure_link_stats past;    /* counters of senders of earlier incarnations */
    pure_link_stats last;    /* the latest sample of the open sender */
    uint32_t last_reason;
    uint64_t share_mark_bytes; /* host_stored_bytes when the share window began */
    /* Recovery from a crash of the receiving node: from the first datagram of the link's
     * sender that the restarted node receives until host_stored reaches recovery_target,
     * the records whose first byte the sender had sent when the node crashed. */
    uint8_t recovery_state;  /* SIM_RECOVERY_* */
    uint64_t recovery_target, recovery_from_ns;
    uint64_t recoveries, recovery_ns_max;
} sim_link;

#define SIM_RECOVERY_NONE 0u    /* not measuring */
#define SIM_RECOVERY_WAIT 1u    /* the receiving node crashed: waiting for its first datagram */
#define SIM_RECOVERY_RUNNING 2u /* it got one: waiting for host_stored to reach the target */


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
/* The open sender's own statistics: 0, or -1 when no sender is open (*out zeroed). */
int sim_link_sender_stats(const sim_world *w, const sim_link *l, pure_link_stats *out);
/* Sender statistics over every incarnation. */
void sim_link_stats(const sim_world *w, const sim_link *l, pure_link_stats *out);

/* ---- sim_receiver.c ---- */
void sim_receiver_on_stream_open(sim_world *w, sim_node *n, const pure_link_event *ev);
void sim_receiver_on_record(sim_world *w, sim_node *n, const pure_link_event *ev);
void sim_receiver_on_store(sim_world *w, sim_node *n, uint32_t run_index);
void sim_receiver_on_crash(sim_world *w, sim_node *n);
/* A datagram reaches node n (up or not), before n takes it: a link into n that waits for
 * the first datagram of its sender after n's crash starts its recovery clock. */
void sim_receiver_on_arrival(sim_world *w, sim_node *n, const sim_packet *pkt);
void sim_receiver_free(sim_node *n);

#endif
