/* sim_world.h: the simulated network at the bottom of the simulator: the virtual clock
 * and its events, the nodes' addresses, datagrams routed over paths between them, and the
 * state of everything a run holds (one struct, so the layers above reach theirs).
 *
 * One world is one run of one scenario with one seed.  Everything the run does follows
 * from (scenario, seed): the engine orders events by (time, sequence), every random draw
 * comes from a stream derived from the seed, and endpoint memory is fresh zeroed pages.
 *
 * It is the bottom of the simulator's layers (LAYERS, section [sim]: one run, sim_run.c,
 * on top of the reports, the attacker, the oracles and the scenario; under them the
 * applications on the nodes, sim_host.h; then the nodes, sim_node.h, and the TCP flows;
 * then this).  The world calls nothing above it by name: the run sets its hooks
 * (sim_world_hooks) and the nodes' (sim_node_host, sim_node_watch). */
#ifndef SIM_WORLD_H
#define SIM_WORLD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pure_link.h"
#include "sim_disk.h"
#include "sim_engine.h"
#include "sim_keys.h"
#include "sim_path.h"
#include "sim_pcap.h"
#include "sim_rng.h"
#include "sim_scenario.h"
#include "sim_trace.h"

_Static_assert(SIM_KEYS_NODES_MOST >= SIM_NODES_MOST, "the nonce oracle attributes seals to every node");

#define SIM_NO_LINK UINT32_MAX
#define SIM_WAKES_SAME_INSTANT_MOST 100000u /* wake-ups of one node at one instant: a livelock */
#define SIM_RX_BATCH_WAIT_NS 1000000u /* rx_batch: a batch not full is served after 1 ms */
#define SIM_RECORD_HEADER_BYTES 16u /* a record starts with its write time and app number (LE u64) */

typedef enum sim_event_kind {
    SIM_EV_NODE_START = 1, /* target node: first start */
    SIM_EV_ARRIVE,         /* target node, ptr packet */
    SIM_EV_WAKE,           /* target node, arg wake generation */
    SIM_EV_STORE,          /* target node, arg incarnation << 32 | host run */
    SIM_EV_DISK,           /* target node, arg incarnation */
    SIM_EV_CRASH,          /* target node, arg crash index */
    SIM_EV_RESTART,        /* target node, arg crash index */
    SIM_EV_LINK_START,     /* target link */
    SIM_EV_APP_WRITE,      /* target link, arg record number (paced) */
    SIM_EV_APP_UNTIL,      /* target link: writing stops */
    SIM_EV_CHANGE,         /* target change index */
    SIM_EV_METRICS,        /* sample endpoint statistics into the trace */
    SIM_EV_PROGRESS,       /* print the progress line */
    SIM_EV_TCP_START,      /* target TCP flow */
    SIM_EV_TCP_UNTIL,      /* target TCP flow: no new data */
    SIM_EV_TCP_ARRIVE,     /* target TCP flow, ptr sim_tcp_seg */
    SIM_EV_TCP_TIMER,      /* target TCP flow, arg generation << 1 | side */
    SIM_EV_NODE_CHANGE,    /* target node change index (an address change) */
    SIM_EV_REPLAY,         /* target replay index */
    SIM_EV_APP_MORE,       /* target link, arg index of its `more` line */
    SIM_EV_FORGE           /* target forge index */
} sim_event_kind;

#define SIM_FORGED_NONE 0u
#define SIM_FORGED_REPLAY 1u /* a replayed copy of what `from` sent earlier */
#define SIM_FORGED_SPOOF 2u  /* a copy of what `from` sends now, from a victim's address */
#define SIM_FORGED_FORGE 3u  /* made up by the attacker (`from` is the attacker's node) */
#define SIM_FORGED_FORWARD 4u /* what reached the attacker's node, relayed (`forward:`) */
#define SIM_NO_NODE UINT32_MAX
#define SIM_ADDR_TEXT_MOST 24u /* "255.255.255.255:65535" and a NUL */

typedef struct sim_packet {
    struct sim_packet *next_free;
    uint64_t id;           /* datagram number in the run (a duplicate keeps it) */
    uint32_t from, to;     /* node indices */
    uint32_t len;
    uint8_t copy;          /* 1 for the path's duplicate */
    uint8_t corrupt;       /* a bit was flipped on the path */
    uint8_t forged;        /* SIM_FORGED_*: sent by the attacker, not by `from` */
    pure_link_addr src;    /* the address it leaves from (its sender's, or a victim's) */
    pure_link_addr dst;    /* the address it goes to; at arrival a node must still hold it */
    uint8_t bytes[PURE_LINK_DATAGRAM_MOST];
} sim_packet;

typedef struct sim_node {
    uint32_t index;
    const sim_node_spec *spec;
    uint8_t secret[32], public_key[32];
    pure_link_addr addr;     /* 10.0.0.(index+1) : port, as 4 B + 2 B big-endian; `at` may change it */
    pure_link_addr home;     /* the address it started with */
    sim_pcap_endpoint ep;    /* addr, for pcap */
    sim_rng rng;             /* endpoint seeds, torn writes */
    pure_link_config config;
    size_t memory_bytes;     /* pure_link_size(&config) */
    void *memory;            /* mapped while up */
    size_t memory_mapped;
    pure_link *pl;           /* NULL while down */
    uint32_t incarnation;    /* counts starts */
    uint64_t memo_durable;   /* memo writes made durable, over every incarnation */
    int failed;              /* a fatal error stopped it */
    int fatal_code;
    uint64_t wake_ns, wake_gen;
    int wake_pending;
    uint64_t same_instant_ns, same_instant_wakes;
    pure_link_stats past;    /* totals of earlier incarnations */
    sim_disk disk;
    sim_store_fault_state store_fault; /* the receiving host's store failing (sim_store_fault.h) */
    uint32_t *peer_nodes;    /* peer index -> node index */
    uint32_t peer_count, peer_capacity;
    struct sim_host_run *runs; /* the receiving host's (sim_host.h) */
    size_t run_count, run_capacity;
    int32_t *stream_runs;    /* stream handle -> host run, -1 */
    size_t stream_capacity;
    uint32_t *sender_links;  /* sender handle -> link index */
    uint32_t sender_capacity;
    uint32_t *out_links;     /* the links from this node, in link order */
    uint32_t out_count;
    /* Counters. */
    uint64_t datagrams_sent, datagrams_received, bytes_sent, bytes_received;
    uint64_t crashes, restarts, api_errors, memo_loads, memo_rejected, streams_refused;
    uint64_t records_delivered, duplicates_delivered, out_of_order;
    uint64_t address_changes;
    /* LOST bytes sent (a reply with a 1-byte packet number: spec/wire.md, every other reply
     * carries 4), in bins of 100 ms; the most in any 10 consecutive bins (one second). */
    uint64_t lost_bytes_sent, lost_bytes_bin[10], lost_bytes_per_s_most;
    uint64_t lost_bin_at;       /* the bin the newest LOST went into, by number since 0 */
    uint64_t rx_unserved;       /* datagrams handed to the endpoint since it was last served */
    uint32_t recoveries_waiting; /* links into it in SIM_RECOVERY_WAIT (sim_host.h) */
    /* Oracles (sim_oracle.h).  Pairs and epochs are of the running incarnation; the maxima
     * of earlier incarnations are folded into the *_past fields at a crash. */
    struct sim_amp_pair *amp;
    size_t amp_count, amp_capacity;
    uint64_t amp_max_x1000_past, amp_unanswered_max_x1000_past;
    struct sim_epoch_seen *epochs_seen;
    size_t epochs_seen_count, epochs_seen_capacity;
    uint64_t epoch_rollbacks;
} sim_node;

typedef struct sim_options {
    uint64_t seed;
    int seed_given;          /* else the scenario's seed */
    FILE *trace_file;        /* NULL: hash only */
    FILE *pcap_file;
    FILE *keylog_file;
    FILE *progress;          /* progress lines and one-line logs; NULL: silent */
    int realtime;            /* --realtime: progress lines keep pace with the wall clock
                                (presentation only: the run and its trace are unchanged) */
} sim_options;

/* What the world calls above itself for datagrams, without knowing who: the run sets them. */
typedef struct sim_world_hooks {
    /* A datagram from `from` to node `to` is about to enter its path (NULL: nothing). */
    void (*on_route)(struct sim_world *w, uint32_t from, uint32_t to, const sim_packet *pkt);
    /* A datagram reaches node `node`, which holds its destination; the hook owns it. */
    void (*on_arrive)(struct sim_world *w, uint32_t node, sim_packet *pkt);
} sim_world_hooks;

typedef struct sim_world {
    const sim_scenario *sc;
    const sim_world_hooks *hooks;
    sim_options opt;
    uint64_t seed;
    sim_engine engine;
    sim_trace trace;
    sim_pcap pcap;
    int pcap_on;
    sim_node *nodes;
    uint32_t node_count;
    struct sim_link *links;  /* the links' applications (sim_host.h) */
    uint32_t link_count;
    sim_path *paths;         /* [from * node_count + to], set up on first use (sim_world_path) */
    uint8_t *path_ready;
    sim_path_params *path_params;
    sim_packet *free_packets;
    uint64_t packets_allocated;
    uint64_t next_packet_id;
    struct sim_tcp *tcps;    /* TCP flows beside the links (sim_tcp.h) */
    uint32_t tcp_count;
    struct sim_tcp_seg *free_tcp_segs;
    uint64_t tcp_segs_allocated;
    int share_marked;        /* the share window's start was passed (see share_from) */
    uint64_t end_ns;         /* when the run ended */
    int stopped;
    const char *error;       /* why the run failed, or NULL */
    char error_text[256];
    /* Progress. */
    uint64_t progress_last_bytes;
    uint64_t progress_last_tcp_bytes;
    /* Totals. */
    uint64_t datagrams_routed, datagrams_unroutable, arrivals_dropped_down;
    uint64_t keylog_lines;
    /* What runs above the nodes: the host applications their events go to, and the
     * oracles that watch them (sim_node.h); the world only holds them. */
    const struct sim_node_host *host;
    const struct sim_node_watch *watch; /* NULL: nothing watches */
    /* The attacker and the oracles. */
    sim_keys keys;           /* the nonce oracle: every endpoint's crypto table */
    struct sim_capture *captures; /* one per `replay:` line (sim_attack.h) */
    uint8_t *spoof_fired;    /* one per `spoof:` line */
    struct sim_forge_state *forges; /* one per `forge:` line */
    uint64_t replayed_datagrams, spoofed_datagrams, forged_datagrams, forwarded_datagrams;
} sim_world;

/* ---- sim_world.c ---- */
/* The world of sc's nodes, their state zeroed, its clock at 0, its
 * paths' parameters zeroed (the run sets them before the first datagram).  Returns 0, or
 * -1 with a message (sim_world_close frees what was made). */
int sim_world_open(sim_world *w, const sim_scenario *sc, const sim_options *opt, char *err, size_t err_len);
/* Frees the events still queued (their payloads too), the datagrams and the paths. */
void sim_world_close(sim_world *w);
/* The next event before the end of the run, the clock at its time: 1, or 0 at the end
 * (the run stopped, nothing is left before its duration, or the event bound was hit). */
int sim_world_next(sim_world *w, sim_event *ev);
/* The run ended at w->end_ns for why: the last trace record.  Returns 0, or -1 if the
 * run ended with an error (w->error says why). */
int sim_world_end(sim_world *w, const char *why);
/* SIM_EV_ARRIVE: a datagram reaches the address of node `target`; the node still holds
 * it, so the datagram goes to hooks->on_arrive, or it moved, and the datagram is dropped. */
void sim_world_on_arrive(sim_world *w, uint32_t target, sim_packet *pkt);
/* SIM_EV_CHANGE: a timed change of path parameters, from now on. */
void sim_world_change_path(sim_world *w, const sim_path_setting *s);
/* One transport:packet_* record of a datagram (why: a drop's reason, or NULL). */
void sim_world_trace_packet(sim_world *w, const char *name, const sim_packet *pkt, const char *why);
/* Ends the run now with an error. */
void sim_world_fail(sim_world *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A datagram from node `from` to the node at `to` leaves now. */
void sim_world_route(sim_world *w, uint32_t from, const pure_link_addr *to, sim_packet *pkt);
/* A datagram whose src, dst, from and forged are set (the attacker's) goes onto the wire
 * now, past every path, and arrives at arrive_ns at the node holding dst (if any). */
void sim_world_inject(sim_world *w, sim_packet *pkt, uint64_t arrive_ns);
/* The node holding a simulated address now, or -1. */
int sim_world_node_at(const sim_world *w, const pure_link_addr *addr);
sim_path *sim_world_path(sim_world *w, uint32_t from, uint32_t to);
sim_packet *sim_packet_alloc(sim_world *w);
void sim_packet_free(sim_world *w, sim_packet *pkt);
/* Schedules an event; a failure ends the run. */
void sim_world_at(sim_world *w, uint64_t at_ns, sim_event_kind kind, uint32_t target, uint64_t arg, void *ptr);
/* Prints one log line to the progress stream, if any. */
void sim_world_log(sim_world *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "a.b.c.d:port" of a simulated (IPv4) address. */
void sim_addr_text(const pure_link_addr *a, char out[SIM_ADDR_TEXT_MOST]);
/* Node name for the trace. */
static inline const char *sim_node_name(const sim_world *w, uint32_t node) { return w->nodes[node].spec->name; }

#endif
