/* sim_path.h: one direction of a network path between two simulated nodes.
 *
 * A datagram put on the path meets, in order:
 *   0. the MTU (mtu_bytes, an IP MTU): a datagram whose size with overhead_bytes exceeds it
 *      is dropped silently, as a router that may not fragment and sends no ICMP does (a
 *      black hole for that size);
 *   1. random loss: independent (loss_ppb) and Gilbert-Elliott bursts (two states,
 *      good and bad, each with its own loss probability; ge_p_ppb = P(good -> bad),
 *      ge_r_ppb = P(bad -> good), one step per datagram);
 *   2. duplication (dup_ppb): a second copy follows the first through the rest;
 *   3. corruption (corrupt_ppb, per copy): one random bit of the payload is flipped;
 *   4. the bottleneck: a FIFO served at rate_bps, with a drop-tail queue of queue_bytes
 *      (the packet being serialised counts as queued until its last bit leaves);
 *   5. propagation delay_ns plus a uniform jitter in [0, jitter_ns], drawn per copy after
 *      the bottleneck, so copies may overtake each other (reordering).
 * Sizes on the bottleneck include overhead_bytes per datagram (IPv4 + UDP headers).
 * Everything is computed when the datagram enters: the caller gets each copy's fate and
 * arrival time and schedules the arrival itself, so the path needs no events of its own. */
#ifndef SIM_PATH_H
#define SIM_PATH_H

#include <stddef.h>
#include <stdint.h>

#include "sim_rng.h"

#define SIM_PATH_COPIES_MOST 2          /* a datagram and its duplicate */
#define SIM_PATH_OVERHEAD_DEFAULT 28u   /* IPv4 (20) + UDP (8) header bytes on the bottleneck */
#define SIM_PATH_QUEUE_BYTES_LEAST 6000u /* an automatic (BDP) queue holds at least 4 x 1,500 B */

typedef struct sim_path_params {
    uint64_t rate_bps;         /* bottleneck; 0: unlimited (no queue either) */
    uint64_t queue_bytes;      /* drop-tail limit; 0: one bandwidth-delay product */
    uint64_t delay_ns;         /* one-way propagation delay */
    uint64_t jitter_ns;        /* extra delay, uniform in [0, jitter_ns] per copy */
    uint32_t loss_ppb;         /* independent loss */
    uint32_t ge_p_ppb;         /* Gilbert-Elliott: good -> bad per datagram (0: model off) */
    uint32_t ge_r_ppb;         /* bad -> good per datagram */
    uint32_t ge_loss_good_ppb; /* loss while good */
    uint32_t ge_loss_bad_ppb;  /* loss while bad */
    uint32_t dup_ppb;          /* duplication */
    uint32_t corrupt_ppb;      /* one flipped bit, per copy */
    uint32_t overhead_bytes;   /* added to each datagram's size on the bottleneck */
    uint32_t mtu_bytes;        /* IP MTU: larger datagrams (with overhead) vanish; 0: none */
} sim_path_params;

void sim_path_params_default(sim_path_params *params);

/* One field of the parameters, by the name a scenario gives it (sim_path_field_name). */
typedef enum sim_path_field {
    SIM_PF_RATE, SIM_PF_QUEUE, SIM_PF_DELAY, SIM_PF_JITTER, SIM_PF_LOSS, SIM_PF_GE_P, SIM_PF_GE_R,
    SIM_PF_GE_LOSS_GOOD, SIM_PF_GE_LOSS_BAD, SIM_PF_DUP, SIM_PF_CORRUPT, SIM_PF_OVERHEAD,
    SIM_PF_MTU, SIM_PF_COUNT
} sim_path_field;

/* Sets one field of path parameters. */
void sim_path_params_apply(sim_path_params *params, sim_path_field field, uint64_t value);
const char *sim_path_field_name(sim_path_field field);

typedef enum sim_fate {
    SIM_FATE_ARRIVE = 0, /* reaches the far end at arrive_ns */
    SIM_FATE_LOSS = 1,   /* random (independent or burst) loss */
    SIM_FATE_QUEUE = 2,  /* the drop-tail queue was full */
    SIM_FATE_MTU = 3     /* larger than the path's MTU */
} sim_fate;

typedef struct sim_copy {
    sim_fate fate;
    uint64_t arrive_ns;   /* SIM_FATE_ARRIVE only */
    int64_t corrupt_bit;  /* bit of the payload to flip, or -1 */
} sim_copy;

typedef struct sim_path_counters {
    uint64_t datagrams_in, bytes_in;       /* put on the path */
    uint64_t dropped_loss;                 /* independent loss */
    uint64_t dropped_burst;                /* Gilbert-Elliott loss */
    uint64_t dropped_queue;                /* drop-tail */
    uint64_t dropped_mtu;                  /* above the MTU */
    uint64_t duplicated, corrupted;
    uint64_t arrivals, bytes_out;          /* copies that will arrive */
    uint64_t reordered;                    /* copies arriving before an earlier-sent copy */
    uint64_t queue_bytes_peak;             /* largest queue occupancy seen */
    uint64_t ge_bad_steps;                 /* datagrams that met the bad state */
} sim_path_counters;

typedef struct sim_queued {
    uint64_t done_ns;  /* its last bit leaves the bottleneck */
    uint32_t bytes;
} sim_queued;

typedef struct sim_path {
    sim_path_params params;
    uint64_t queue_limit_bytes;  /* the effective drop-tail limit */
    uint64_t reverse_delay_ns;   /* for the automatic queue (BDP needs the round trip) */
    sim_rng rng;
    int ge_bad;                  /* Gilbert-Elliott state */
    /* Bottleneck: FIFO of datagrams not yet fully serialised. */
    sim_queued *fifo;
    size_t fifo_head, fifo_count, fifo_capacity;
    uint64_t queue_bytes;        /* bytes in the FIFO */
    uint64_t busy_until_ns;      /* when the bottleneck finishes what it holds */
    uint64_t busy_rem;           /* sub-nanosecond remainder (units of 1/rate_bps ns) */
    uint64_t latest_arrive_ns;   /* the latest arrival scheduled so far, to count reordering */
    sim_path_counters counters;
} sim_path;

/* rng_seed/label derive the path's own random stream (sim_rng_derive). */
void sim_path_init(sim_path *path, const sim_path_params *params, uint64_t reverse_delay_ns,
                   uint64_t run_seed, const char *label);
void sim_path_free(sim_path *path);
/* New conditions from now on; datagrams already on the path keep their fate. */
void sim_path_set(sim_path *path, const sim_path_params *params, uint64_t reverse_delay_ns);
/* Puts a datagram of `bytes` payload on the path at now_ns.  Fills out[0..n) and returns n
 * (1, or 2 with a duplicate). */
size_t sim_path_send(sim_path *path, uint64_t now_ns, size_t bytes, sim_copy out[SIM_PATH_COPIES_MOST]);
/* Bytes in the bottleneck queue at now_ns (datagrams not yet fully serialised). */
uint64_t sim_path_queued_bytes(sim_path *path, uint64_t now_ns);
/* Nanoseconds to serialise `bytes` (payload + overhead) at the current rate, rounded up. */
uint64_t sim_path_serialise_ns(const sim_path *path, size_t bytes);

#endif
