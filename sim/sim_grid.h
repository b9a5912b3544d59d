/* sim_grid.h: many runs of the simulator, each a scenario text and a seed, spread over
 * worker processes, with the figures an experiment reads from each run.
 *
 * The runs are independent worlds, so they may go in any order and in parallel: a
 * worker is a fork()ed process that runs every jobs-th case and writes each case's
 * figures, a fixed-size struct, down its pipe.  The figures are the same whatever the
 * number of workers (only wall_s varies). */
#ifndef SIM_GRID_H
#define SIM_GRID_H

#include <stddef.h>
#include <stdint.h>

#define SIM_GRID_JOBS_MOST 16u
#define SIM_GRID_ERROR_MOST 160u

typedef struct sim_grid_figures {
    int ran;                      /* the run happened (the scenario parsed and the world was built) */
    char error[SIM_GRID_ERROR_MOST]; /* why it did not run, or the run's error; "" if none */
    double virtual_s, wall_s;
    double goodput_mbit;          /* stored record bytes x 8 / virtual_s / 10^6 */
    double records_per_s;
    double p50_ms, p99_ms, max_ms; /* paced links: write -> first hand-over */
    uint64_t latency_samples;
    uint64_t packets_sent;        /* datagrams of the first link's sending node */
    uint64_t replies_sent;        /* datagrams of the first link's receiving node (its replies) */
    uint64_t packets_lost, packets_retransmitted; /* the endpoints' statistics */
    uint64_t dropped_queue;       /* datagrams and segments the bottleneck queues dropped */
    /* 1,452 x (1 - record bytes handed over / datagram bytes the first link's receiver got
     * from its sender): what a full packet carries besides record bytes.  Retransmitted
     * and control bytes count as overhead, so only loss-free rows give the framing alone. */
    double framing_bytes_per_full_packet;
    double share_first;           /* share of the window: the first link, else the first TCP flow */
    double link_goodput_mbit_window; /* the first link's stored record bytes per second of the window */
    double tcp_goodput_mbit;      /* the window's TCP bytes per second */
} sim_grid_figures;

/* Runs one scenario text with one seed in this process (quiet, no trace). */
void sim_grid_run_one(const char *scenario_text, uint64_t seed, sim_grid_figures *out);

/* Runs texts[i] with seeds[i] for i < count over `jobs` worker processes (1..SIM_GRID_JOBS_MOST;
 * 1 runs them here).  out[i] gets each run's figures.  Returns 0, or -1 if a worker could
 * not be started or died (the cases it did not report have ran == 0 and an error). */
int sim_grid_run(const char *const *texts, const uint64_t *seeds, size_t count, unsigned jobs,
                 sim_grid_figures *out);

#endif
