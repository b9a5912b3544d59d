/* bench_sim.c: how fast the simulator runs the real core.
 *
 * A 50 Mbit/s bulk flow of 1 KiB records for 30 s of virtual time (RTT 20 ms, no loss),
 * then the same with 1 % loss and 3 ms jitter.  Prints the wall time and the ratio of
 * virtual to wall time (goal: at least 20x; the 12-case M6 grid in under 60 s of wall
 * time needs about 6x).  The trace is hashed as in every run, but not written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_report.h"
#include "sim_run.h"
#include "sim_scenario.h"

static double wall_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int bench(const char *name, const char *text) {
    sim_scenario *sc = calloc(1, sizeof *sc);
    sim_world *w = calloc(1, sizeof *w);
    char err[256];
    sim_options opt;
    memset(&opt, 0, sizeof opt);
    if (sc == NULL || w == NULL || sim_scenario_parse(sc, text, err, sizeof err) != 0 ||
        sim_run_init(w, sc, &opt, err, sizeof err) != 0) {
        fprintf(stderr, "bench_sim: %s: %s\n", name, err);
        return 1;
    }
    double t0 = wall_now();
    int rc = sim_run(w);
    double wall = wall_now() - t0;
    sim_totals t;
    sim_report_totals(w, &t);
    printf("%-28s virtual %5.1f s  wall %6.3f s  speed %6.1fx  goodput %6.2f Mbit/s  packets %llu  events %llu"
           "  trace %.1f MB%s%s\n",
           name, t.virtual_s, wall, wall > 0 ? t.virtual_s / wall : 0.0, t.goodput_mbit,
           (unsigned long long)t.packets_sent, (unsigned long long)w->engine.events_run,
           (double)w->trace.bytes / 1e6, rc ? "  ERROR: " : "", rc ? w->error : "");
    sim_run_free(w);
    free(w);
    free(sc);
    return rc;
}

#define FLOW                                                                                                 \
    "duration: 30s\n"                                                                                       \
    "path.rate: 50Mbit\n"                                                                                   \
    "path.delay: 10ms\n"                                                                                    \
    "node: sender\n"                                                                                        \
    "node: receiver\n"                                                                                      \
    "link: sender > receiver\n"                                                                             \
    "record_bytes: 1KiB\n"

int main(void) {
    int rc = 0;
    rc |= bench("50 Mbit/s, RTT 20 ms", FLOW);
    rc |= bench("... loss 1 %, jitter 3 ms", FLOW "path.loss: 1%\npath.jitter: 3ms\n");
    return rc;
}
