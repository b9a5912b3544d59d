/* sim_run.h: one run of one scenario with one seed (sim_run.c), the simulator's entry
 * point: everything below it is wired together here. */
#ifndef SIM_RUN_H
#define SIM_RUN_H

#include "sim_world.h"

/* Builds the world of sc.  Returns 0, or -1 with a message (sim_run_free frees what was
 * built before the failure). */
int sim_run_init(sim_world *w, const sim_scenario *sc, const sim_options *opt, char *err, size_t err_len);
/* Runs to the end (duration, all links done, or an error).  Returns 0, or -1 if the run
 * ended with an error (w->error says why; the figures are still valid up to then). */
int sim_run(sim_world *w);
void sim_run_free(sim_world *w);

#endif
