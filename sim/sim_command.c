/* sim_command.c: the command line of the experiments (pure-link-sim m6 | share | credit |
 * sweep | plot | relay ...): the options every experiment takes, and which one runs.
 * See sim_experiment.h. */
#include <string.h>

#include "sim_experiment.h"
#include "sim_value.h"

static void usage(FILE *f) {
    fprintf(f, "usage: pure-link-sim m6|share|credit|sweep [--seeds N] [--seed S] [--cc bbr|cubic|newreno] [--json]\n"
               "                     [--jobs N] [--duration D] [--from D] [--plot PREFIX] [--csv FILE]\n"
               "       pure-link-sim plot TRACE [--out PREFIX]\n"
               "       pure-link-sim relay LISTEN_PORT TARGET_PORT [--seed N] [--duration D] [--set 'path.K: V']...\n");
}

static int parse_options(int argc, char **argv, sim_exp_options *o) {
    memset(o, 0, sizeof *o);
    o->seeds = 1;
    o->first_seed = 1;
    o->jobs = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t x, ns;
        if (strcmp(a, "--json") == 0) { o->json = 1; continue; }
        if (v == NULL) return -1;
        i++;
        if (strcmp(a, "--seeds") == 0 && sim_value_u64(v, &x) == 0 && x >= 1 && x <= SIM_EXP_SEEDS_MOST) o->seeds = (unsigned)x;
        else if (strcmp(a, "--seed") == 0 && sim_value_u64(v, &x) == 0) o->first_seed = x;
        else if (strcmp(a, "--jobs") == 0 && sim_value_u64(v, &x) == 0 && x >= 1 && x <= SIM_GRID_JOBS_MOST) o->jobs = (unsigned)x;
        else if (strcmp(a, "--cc") == 0 && (!strcmp(v, "bbr") || !strcmp(v, "cubic") || !strcmp(v, "newreno"))) o->cc = v;
        else if (strcmp(a, "--duration") == 0 && sim_value_duration_ns(v, &ns) == 0 && ns >= 1000000) o->duration_ms = ns / 1000000;
        else if (strcmp(a, "--from") == 0 && sim_value_duration_ns(v, &ns) == 0) o->from_ms = ns / 1000000;
        else if (strcmp(a, "--plot") == 0) o->plot = v;
        else if (strcmp(a, "--csv") == 0) o->csv = v;
        else return -1;
    }
    return 0;
}

int sim_command_main(int argc, char **argv) {
    const char *name = argv[0];
    if (strcmp(name, "relay") == 0) return sim_relay_main(argc, argv);
    if (strcmp(name, "plot") == 0) {
        if (argc == 2) return sim_plot_trace(argv[1], NULL) == 0 ? 0 : 1;
        if (argc == 4 && strcmp(argv[2], "--out") == 0) return sim_plot_trace(argv[1], argv[3]) == 0 ? 0 : 1;
        usage(stderr);
        return 2;
    }
    int (*cmd)(const sim_exp_options *) = !strcmp(name, "m6") ? sim_exp_m6 : !strcmp(name, "share") ? sim_exp_share
                                          : !strcmp(name, "credit") ? sim_exp_credit : !strcmp(name, "sweep") ? sim_sweep_main
                                                                                                         : NULL;
    if (cmd == NULL) return -1;
    sim_exp_options o;
    if (parse_options(argc, argv, &o) != 0) { usage(stderr); return 2; }
    if (o.duration_ms == 0 && cmd == sim_exp_m6) o.duration_ms = 30000;
    return cmd(&o);
}
