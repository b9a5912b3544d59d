/* sim_sweep.c: pure-link-sim sweep: bulk goodput over loss 0-10 % (independent, or in
 * Gilbert-Elliott bursts of 4 datagrams on average with the same mean), RTT 10-300 ms,
 * for each controller; a CSV line per point and a chart of goodput against loss with the
 * Mathis bound of a loss-based controller, (MSS / RTT) x sqrt(3/2) / sqrt(p) with the
 * 1,452 B datagram as MSS, and the 50 Mbit/s link rate as reference lines. */
#include "sim_experiment.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pure_link.h"

static const char *const sweep_ccs[] = {"bbr", "cubic", "newreno"};
static const unsigned sweep_rtts_ms[] = {10, 30, 100, 300};
static const uint32_t sweep_loss_ppm[] = {0, 1000, 2000, 5000, 10000, 20000, 50000, 100000};
#define SWEEP_CCS (sizeof sweep_ccs / sizeof sweep_ccs[0])
#define SWEEP_RTTS (sizeof sweep_rtts_ms / sizeof sweep_rtts_ms[0])
#define SWEEP_LOSSES (sizeof sweep_loss_ppm / sizeof sweep_loss_ppm[0])
#define SWEEP_CASES_MOST (SWEEP_CCS * 2 * SWEEP_RTTS * SWEEP_LOSSES)

typedef struct sweep_case { const char *cc; int burst; unsigned rtt_ms; uint32_t loss_ppm; } sweep_case;

static size_t sweep_cases(const sim_exp_options *o, sweep_case *out) {
    size_t n = 0;
    for (size_t c = 0; c < SWEEP_CCS; c++) {
        if (o->cc && strcmp(o->cc, sweep_ccs[c]) != 0) continue;
        for (int burst = 0; burst <= 1; burst++)
            for (size_t r = 0; r < SWEEP_RTTS; r++)
                for (size_t l = burst; l < SWEEP_LOSSES; l++) /* no bursts of loss 0 */
                    out[n++] = (sweep_case){sweep_ccs[c], burst, sweep_rtts_ms[r], sweep_loss_ppm[l]};
    }
    return n;
}

static double mathis_mbit(unsigned rtt_ms, double loss) {
    return loss > 0 ? PURE_LINK_DATAGRAM_MOST * 8.0 / (rtt_ms / 1e3) * 1.2247449 / sqrt(loss) / 1e6 : 0.0;
}

static void sweep_csv(FILE *f, const sweep_case *cases, size_t count, const sim_grid_figures *all, unsigned seeds) {
    fputs("cc,model,rtt_ms,loss,seeds,goodput_mbit,goodput_mbit_min,goodput_mbit_max,mathis_mbit,link_mbit,"
          "packets_sent,packets_lost,packets_retransmitted,dropped_queue,error\n", f);
    for (size_t i = 0; i < count; i++) {
        const sweep_case *c = &cases[i];
        const sim_grid_figures *r = all + i * seeds;
        sim_exp_stat g = SIM_EXP_STAT(r, seeds, goodput_mbit);
        const char *e = sim_exp_error(r, seeds);
        fprintf(f, "%s,%s,%u,%.4f,%u,%.4f,%.4f,%.4f,%.4f,50,%.0f,%.0f,%.0f,%.0f,%s\n", c->cc, c->burst ? "burst" : "random",
                c->rtt_ms, c->loss_ppm / 1e6, seeds, g.mean, g.min, g.max, mathis_mbit(c->rtt_ms, c->loss_ppm / 1e6),
                SIM_EXP_STAT(r, seeds, packets_sent).mean, SIM_EXP_STAT(r, seeds, packets_lost).mean,
                SIM_EXP_STAT(r, seeds, packets_retransmitted).mean, SIM_EXP_STAT(r, seeds, dropped_queue).mean,
                e ? "error" : "");
    }
}

/* One datablock per (controller, model, RTT): loss %, goodput. */
static int sweep_plot(const sweep_case *cases, size_t count, const sim_grid_figures *all, const sim_exp_options *o) {
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (f == NULL) return -1;
    for (size_t i = 0; i < count; i++) {
        const sweep_case *c = &cases[i];
        if (i == 0 || c->cc != cases[i - 1].cc || c->burst != cases[i - 1].burst || c->rtt_ms != cases[i - 1].rtt_ms)
            fprintf(f, "%s$%s_%s_%u << EOD\n", i ? "EOD\n" : "", c->cc, c->burst ? "burst" : "random", c->rtt_ms);
        if (c->loss_ppm > 0)
            fprintf(f, "%g %g\n", c->loss_ppm / 1e4, SIM_EXP_STAT(all + i * o->seeds, o->seeds, goodput_mbit).mean);
    }
    fputs("EOD\n", f);
    fprintf(f, "set multiplot layout 2,2 title \"Bulk goodput against loss, 50 Mbit/s, %.0f s, %u seed(s): "
               "solid independent loss, dashed bursts (4 datagrams)\"\n",
            (double)o->duration_ms / 1e3, o->seeds);
    fputs("set logscale xy\nset grid\nset xrange [0.08:12]\nset yrange [0.05:80]\nset key bottom left font ',9'\n"
          "set xlabel 'loss, %'\nset ylabel 'goodput, Mbit/s'\n", f);
    static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c"};
    for (size_t r = 0; r < SWEEP_RTTS; r++) {
        unsigned rtt = sweep_rtts_ms[r];
        fprintf(f, "set title 'RTT %u ms'\nplot 50 with lines dt 3 lc rgb 'black' title 'link rate', "
                   "%g / sqrt(x / 100) with lines dt 4 lc rgb 'gray40' title 'Mathis bound'",
                rtt, PURE_LINK_DATAGRAM_MOST * 8.0 / (rtt / 1e3) * 1.2247449 / 1e6);
        for (size_t c = 0; c < SWEEP_CCS; c++) {
            if (o->cc && strcmp(o->cc, sweep_ccs[c]) != 0) continue;
            for (int burst = 0; burst <= 1; burst++)
                fprintf(f, ", $%s_%s_%u with linespoints lw 1.5 pt 7 ps 0.6 dt %d lc rgb '%s' title '%s%s'", sweep_ccs[c],
                        burst ? "burst" : "random", rtt, burst ? 2 : 1, colours[c], sweep_ccs[c], burst ? " bursts" : "");
        }
        fputc('\n', f);
    }
    fputs("unset multiplot\n", f);
    fclose(f);
    int rc = sim_plot_script(s, o->plot, 1300, 1000);
    free(s);
    return rc;
}

int sim_sweep_main(const sim_exp_options *in) {
    sim_exp_options o = *in;
    if (o.duration_ms == 0) o.duration_ms = 10000;
    sweep_case cases[SWEEP_CASES_MOST];
    size_t count = sweep_cases(&o, cases);
    sim_exp_run *runs = calloc(count, sizeof *runs);
    if (runs == NULL) return 2;
    for (size_t i = 0; i < count; i++)
        runs[i] = (sim_exp_run){.duration_ms = o.duration_ms, .rtt_us = cases[i].rtt_ms * 1000ull, .cc = cases[i].cc,
                                .loss_ppm = cases[i].burst ? 0 : cases[i].loss_ppm,
                                .burst_ppm = cases[i].burst ? cases[i].loss_ppm : 0, .record_bytes = 1024,
                                .share_from_ms = 5000};
    double wall;
    sim_grid_figures *all = sim_exp_run_all(runs, count, &o, &wall);
    free(runs);
    if (all == NULL) return 2;
    int rc = 0;
    FILE *csv = o.csv ? fopen(o.csv, "w") : stdout;
    if (csv == NULL) { fprintf(stderr, "pure-link-sim: cannot write %s\n", o.csv); rc = 2; }
    else {
        sweep_csv(csv, cases, count, all, o.seeds);
        if (csv != stdout) fclose(csv);
    }
    sim_exp_print_wall(stderr, "the sweep", count * o.seeds, wall, o.jobs);
    if (rc == 0 && o.plot && sweep_plot(cases, count, all, &o) != 0) rc = 1;
    if (rc == 0 && sim_exp_error(all, count * o.seeds)) rc = 1;
    free(all);
    return rc;
}
