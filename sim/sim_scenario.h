/* sim_scenario.h: a scenario file, parsed.
 *
 * A scenario is text: `key: value` lines, `#` comments, blank lines.  `node: NAME`,
 * `link: FROM > TO` and `tcp: FROM > TO` open sections; the keys after them (until the next
 * section) describe that node, link or TCP flow.  Global keys (run settings, `path.*`, `at`,
 * the attacker's `replay:` and `spoof:`) may appear anywhere.
 * Every key is documented in sim/README.md. */
#ifndef SIM_SCENARIO_H
#define SIM_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "sim_disk.h"
#include "sim_path.h"
#include "sim_store_fault.h"
#include "sim_tcp.h"

#define SIM_NODES_MOST 1024u        /* nodes in one scenario */
#define SIM_LINKS_MOST 1024u        /* links (sender -> receiver) in one scenario */
#define SIM_NODE_NAME_MOST 31u      /* bytes of a node name: [A-Za-z0-9_-] */
#define SIM_STREAM_NAME_MOST 64u    /* bytes of a source or input name (PURE_LINK_NAME_MOST) */
#define SIM_INPUTS_MOST 16u         /* inputs declared on one node */
#define SIM_WIRES_MOST 16u          /* wired peers declared on one node */
#define SIM_SOURCES_TEXT_MOST 1024u /* bytes of one wire's source list */
#define SIM_CRASHES_MOST 16u        /* crashes of one node */
#define SIM_PATH_SETTINGS_MOST 256u /* path.* lines for single directions */
#define SIM_CHANGES_MOST 256u       /* timed changes (`at` lines) */
#define SIM_NODE_CHANGES_MOST 64u   /* timed address changes (`at TIME node.NAME.port|addr`) */
#define SIM_ATTACKS_MOST 16u        /* `replay:`, `spoof:`, `forge:` and `forward:` lines, each */
#define SIM_MORE_MOST 16u           /* `more:` lines of one link */
#define SIM_LINE_MOST 2048u         /* bytes of one scenario line */
#define SIM_NEVER UINT64_MAX        /* "no such time" */
#define SIM_SHARE_FROM_DEFAULT_NS 5000000000ull /* the share window skips the first 5 s */

_Static_assert(sizeof(((sim_tcp_spec *)0)->from_name) == SIM_NODE_NAME_MOST + 1, "a TCP flow names nodes");

typedef enum sim_mode { SIM_MODE_BULK = 0, SIM_MODE_PACED = 1 } sim_mode;

typedef struct sim_input_spec {
    char name[SIM_STREAM_NAME_MOST + 1];
    uint64_t shape;
    int any_shape;          /* no shape given: accept every shape */
    uint64_t at_ns;         /* the input exists from this time on */
} sim_input_spec;

typedef struct sim_wire_spec {
    char peer[SIM_NODE_NAME_MOST + 1];
    uint32_t peer_node;     /* resolved */
    char sources[SIM_SOURCES_TEXT_MOST]; /* '\n'-separated, as pure_link_wire_peer wants */
} sim_wire_spec;

typedef struct sim_crash_spec {
    uint64_t at_ns;
    uint64_t restart_ns;    /* SIM_NEVER: stays down */
} sim_crash_spec;

/* Endpoint configuration overrides; 0 keeps the core's default (pure_link_config_default). */
typedef struct sim_endpoint_spec {
    uint64_t senders_most, send_queue_bytes, send_queue_records, packets_in_flight_most;
    uint64_t peers_most, runs_most, stream_buffer_bytes, unstored_records_most;
    uint64_t receive_memory_bytes, send_memory_bytes;
    uint64_t idle_ns, epoch_ns, epoch_packets, congestion, ack_delay_us, copies, pmtu_raise_ns;
} sim_endpoint_spec;

typedef struct sim_node_spec {
    char name[SIM_NODE_NAME_MOST + 1];
    uint16_t port;
    uint64_t store_latency_ns;
    int memo;                       /* memo_enabled */
    uint64_t memo_sync_ns;
    sim_disk_crash memo_crash;
    sim_input_spec inputs[SIM_INPUTS_MOST];
    uint32_t input_count;           /* 0: every link's input and shape is accepted */
    sim_wire_spec wires[SIM_WIRES_MOST];
    uint32_t wire_count;            /* 0: every node linking here is wired with "*" */
    sim_crash_spec crashes[SIM_CRASHES_MOST];
    uint32_t crash_count;
    uint64_t crash_at_memo;         /* `crash_at_memo: K restart D`: 0 none, else K */
    uint64_t crash_at_memo_restart_ns;
    sim_store_fault_spec store_fault; /* store_fail, disk_full, store_tail (sim_store_fault.h) */
    uint64_t rx_batch;              /* `rx_batch: N`: serve after N arrivals (or SIM_RX_BATCH_WAIT_NS) */
    sim_endpoint_spec endpoint;
} sim_node_spec;

/* `more: COUNT at TIME` of a bulk link: the application writes COUNT more records then. */
typedef struct sim_more_spec {
    uint64_t count;
    uint64_t at_ns;
} sim_more_spec;

typedef struct sim_link_spec {
    char from_name[SIM_NODE_NAME_MOST + 1], to_name[SIM_NODE_NAME_MOST + 1];
    uint32_t from, to;              /* resolved node indices */
    char source[SIM_STREAM_NAME_MOST + 1];
    char input[SIM_STREAM_NAME_MOST + 1];
    uint64_t shape;
    sim_mode mode;
    uint64_t record_bytes;
    uint64_t rate_milli_per_s;      /* paced: records per 1000 s */
    uint64_t count;                 /* records to write; 0: no limit */
    uint64_t start_ns;
    uint64_t until_ns;              /* stop writing at; SIM_NEVER: no limit */
    int close_when_done;
    sim_more_spec more[SIM_MORE_MOST]; /* later batches (bulk), in time order */
    uint32_t more_count;
} sim_link_spec;

/* One path parameter (sim_path_field, sim_path.h) and its value, from a time on. */
typedef struct sim_path_setting {
    uint64_t at_ns;                 /* 0 for settings at the start */
    int all;                        /* every direction */
    char from_name[SIM_NODE_NAME_MOST + 1], to_name[SIM_NODE_NAME_MOST + 1];
    int both_ways;                  /* a<>b */
    uint32_t from, to;              /* resolved */
    sim_path_field field;
    uint64_t value;
} sim_path_setting;

/* `at TIME node.NAME.port PORT` / `at TIME node.NAME.addr A.B.C.D`: the node's address
 * changes (its datagrams leave from the new one; datagrams to the old one find no node). */
typedef enum sim_node_field { SIM_NF_PORT, SIM_NF_ADDR } sim_node_field;

typedef struct sim_node_change {
    uint64_t at_ns;
    char node_name[SIM_NODE_NAME_MOST + 1];
    uint32_t node;                  /* resolved */
    sim_node_field field;
    uint8_t ip[4];                  /* SIM_NF_ADDR */
    uint16_t port;                  /* SIM_NF_PORT */
} sim_node_change;

/* `replay: FROM > TO at TIME`: at TIME an attacker sends TO again, in order and byte for
 * byte, every datagram FROM sent to TO until then, each from the address it left from. */
typedef struct sim_replay_spec {
    char from_name[SIM_NODE_NAME_MOST + 1], to_name[SIM_NODE_NAME_MOST + 1];
    uint32_t from, to;              /* resolved */
    uint64_t at_ns;
} sim_replay_spec;

/* `spoof: FROM > TO as VICTIM at TIME`: the first datagram FROM sends to TO at or after TIME
 * also reaches TO from VICTIM's address, no later than the original (an attacker on the
 * path races a copy).  VICTIM is a node that sends nothing of its own. */
typedef struct sim_spoof_spec {
    char from_name[SIM_NODE_NAME_MOST + 1], to_name[SIM_NODE_NAME_MOST + 1], as_name[SIM_NODE_NAME_MOST + 1];
    uint32_t from, to, as;          /* resolved */
    uint64_t at_ns;
} sim_spoof_spec;

/* `forge: FROM > TO as ATTACKER at TIME [epoch E] [len N] [count C] [every D] [run seen]`:
 * from TIME on, C datagrams (default 1), one every D, from ATTACKER's address to TO: a
 * sender header of version 1 with FROM's key id (it travels in clear), epoch field E
 * (default 0), a random 4-byte packet number, and random bytes up to N B (default 80).
 * The run is random per datagram, or with `run seen` that of the latest sender packet
 * FROM sent TO (the attacker read it on the path; none seen yet: nothing sent). */
typedef struct sim_forge_spec {
    char from_name[SIM_NODE_NAME_MOST + 1], to_name[SIM_NODE_NAME_MOST + 1], as_name[SIM_NODE_NAME_MOST + 1];
    uint32_t from, to, as;          /* resolved */
    uint64_t at_ns, every_ns, count, len, epoch_field;
    int run_seen;
} sim_forge_spec;

/* `forward: NODE > TO at TIME`: from TIME on, every datagram that reaches NODE is also sent
 * to TO from NODE's address (after the path's delay NODE > TO): an attacker relays what it
 * draws, a LOST among it. */
typedef sim_replay_spec sim_forward_spec;  /* from: NODE */

typedef struct sim_scenario {
    uint64_t seed;
    int seed_given;
    uint64_t duration_ns;
    int stop_when_done;
    uint64_t events_most;
    uint64_t metrics_interval_ns;
    uint64_t progress_interval_ns;
    int null_crypto;
    sim_path_params path_default;
    sim_path_setting settings[SIM_PATH_SETTINGS_MOST]; /* per-direction, at the start */
    uint32_t setting_count;
    sim_path_setting changes[SIM_CHANGES_MOST];        /* timed, in file order */
    uint32_t change_count;
    sim_node_change node_changes[SIM_NODE_CHANGES_MOST]; /* timed, in file order */
    uint32_t node_change_count;
    sim_replay_spec replays[SIM_ATTACKS_MOST];
    uint32_t replay_count;
    sim_spoof_spec spoofs[SIM_ATTACKS_MOST];
    uint32_t spoof_count;
    sim_forge_spec forges[SIM_ATTACKS_MOST];
    uint32_t forge_count;
    sim_forward_spec forwards[SIM_ATTACKS_MOST];
    uint32_t forward_count;
    sim_node_spec nodes[SIM_NODES_MOST];
    uint32_t node_count;
    sim_link_spec links[SIM_LINKS_MOST];
    uint32_t link_count;
    sim_tcp_spec tcps[SIM_TCP_FLOWS_MOST];
    uint32_t tcp_count;
    uint64_t share_from_ns;         /* start of the share window (sim_report_share) */
} sim_scenario;

/* Parses scenario text.  Returns 0, or -1 with a message "LINE: what" in err. */
int sim_scenario_parse(sim_scenario *sc, const char *text, char *err, size_t err_len);
/* Reads and parses a file; the message names the file. */
int sim_scenario_load(sim_scenario *sc, const char *path, char *err, size_t err_len);

/* The parameters of the direction from -> to at the start of the run. */
void sim_scenario_path_params(const sim_scenario *sc, uint32_t from, uint32_t to, sim_path_params *out);
/* Index of the node called name, or -1. */
int sim_scenario_node(const sim_scenario *sc, const char *name);

#endif
