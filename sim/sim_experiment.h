/* sim_experiment.h: the experiments a user runs by name (pure-link-sim m6 | share | credit |
 * sweep | plot), each a set of simulator runs (sim_grid.h) printed as a table beside the
 * seed's figures, or as JSON lines, CSV and plots.
 *
 *   sim_command.c     the command line: the options, which experiment runs
 *   sim_experiment.c  the scenario texts, running sets of them, m6, share and credit
 *   sim_sweep.c       goodput over loss, RTT and bursts, per controller
 *   sim_plot.c        gnuplot charts: a trace over time, the M6 grid, the sweep
 *   sim_relay.c       the path model in real time: a UDP relay on loopback */
#ifndef SIM_EXPERIMENT_H
#define SIM_EXPERIMENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim_grid.h"

#define SIM_EXP_SEEDS_MOST 64u

/* What every experiment command takes. */
typedef struct sim_exp_options {
    unsigned seeds;          /* --seeds N: seeds first_seed .. first_seed + N - 1 */
    uint64_t first_seed;     /* --seed S */
    const char *cc;          /* --cc bbr|cubic|newreno, NULL: the command's default */
    int json;                /* --json: one JSON object per case, one a line */
    unsigned jobs;           /* --jobs N: worker processes (default 2) */
    uint64_t duration_ms;    /* --duration: 0 is the command's default */
    uint64_t from_ms;        /* --from (share): start of the share window, 0: default */
    const char *plot;        /* --plot PREFIX: PREFIX.svg and PREFIX.png */
    const char *csv;         /* --csv FILE (sweep) */
} sim_exp_options;

/* One run's description, turned into a scenario text by sim_exp_scenario. */
typedef struct sim_exp_run {
    uint64_t duration_ms;
    uint64_t rtt_us;
    uint32_t loss_ppm;       /* independent loss */
    uint32_t burst_ppm;      /* mean loss of Gilbert-Elliott bursts (mean burst 4 datagrams) */
    uint64_t jitter_us;
    const char *cc;          /* the link's controller, NULL: the core's default */
    int paced;               /* 50 records/s */
    uint64_t record_bytes;
    int tcp;                 /* 0 none, 1 a TCP CUBIC flow beside the link, 2 two flows and no link */
    uint64_t share_from_ms;
} sim_exp_run;

/* Writes the scenario text of r into buf; returns buf. */
char *sim_exp_scenario(const sim_exp_run *r, char *buf, size_t cap);

/* Mean and spread of one figure over seeds. */
typedef struct sim_exp_stat { double mean, min, max; } sim_exp_stat;
sim_exp_stat sim_exp_stat_of(const sim_grid_figures *runs, size_t n, size_t offset);
#define SIM_EXP_STAT(runs, n, field) sim_exp_stat_of((runs), (n), offsetof(sim_grid_figures, field))

/* Runs count scenarios, each with every seed of o: figures[case * seeds + k].  Returns the
 * figures (malloc'ed) or NULL; *wall_s gets the wall time of the whole set. */
sim_grid_figures *sim_exp_run_all(const sim_exp_run *runs, size_t count, const sim_exp_options *o, double *wall_s);
/* The first error of a case's runs, or NULL. */
const char *sim_exp_error(const sim_grid_figures *runs, size_t n);
/* Prints the wall time and this machine's load, to out. */
void sim_exp_print_wall(FILE *out, const char *what, size_t runs, double wall_s, unsigned jobs);

/* The experiments; each returns the exit status. */
int sim_exp_m6(const sim_exp_options *o);
int sim_exp_share(const sim_exp_options *o);
int sim_exp_credit(const sim_exp_options *o);
int sim_sweep_main(const sim_exp_options *o);
/* pure-link-sim relay LISTEN_PORT TARGET_PORT ... (sim_relay.c): argv[0] is "relay". */
int sim_relay_main(int argc, char **argv);

/* gnuplot (sim_plot.c).  Each returns 0, or -1 with a line on stderr (no gnuplot, a bad trace). */
int sim_plot_trace(const char *trace_path, const char *prefix);
/* script: gnuplot commands after the terminal is set (data in $blocks); drawn as SVG and PNG. */
int sim_plot_script(const char *script, const char *prefix, unsigned width, unsigned height);

/* pure-link-sim m6|share|credit|sweep|plot|relay ... (sim_command.c): returns the exit
 * status, or -1 when argv[0] names no experiment. */
int sim_command_main(int argc, char **argv);

#endif
