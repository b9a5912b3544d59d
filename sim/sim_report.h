/* sim_report.h: a run's figures, its progress line, the summary in words and the JSON
 * line (sim_report.c). */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include <stdio.h>

#include "sim_world.h"

typedef struct sim_totals {
    double virtual_s;
    uint64_t packets_sent, packets_received;
    uint64_t records_sent, records_delivered, records_stored, stored_bytes, duplicates_delivered, out_of_order;
    double goodput_mbit, records_per_s;
    uint64_t lost_notices, refused_notices, refused_events, run_key_builds, x25519_ops, epochs;
    uint64_t packets_lost, packets_retransmitted;
    uint64_t latency_count;
    double latency_ms_p50, latency_ms_p99, latency_ms_max;
    uint64_t nonce_reuses, aead_seals, amplification_max_x1000, amplification_unanswered_max_x1000;
    uint64_t epoch_rollbacks;
} sim_totals;

void sim_report_totals(const sim_world *w, sim_totals *t);
/* Percentile (0..100) of n samples, sorted in place; 0 if n == 0. */
uint64_t sim_percentile(uint64_t *samples, size_t n, unsigned percent);
void sim_report_progress(sim_world *w);
void sim_report_words(const sim_world *w, FILE *out);
/* One JSON object on one line.  wall_s < 0 leaves out the wall-clock figures. */
void sim_report_json(const sim_world *w, FILE *out, double wall_s);
/* The share window (BRIEF §6): each link's stored record bytes and each TCP flow's
 * delivered bytes from share_from (or 0 if the run ended before it) to the end, and the
 * window's length.  links[] and tcps[] have link_count and tcp_count entries. */
uint64_t sim_report_share(const sim_world *w, uint64_t *links, uint64_t *tcps);

#endif
