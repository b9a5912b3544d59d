/* sim_experiment.c: pure-link-sim m6 | share | credit: the seed's experiments as tables
 * beside its figures, or as JSON lines, and what every experiment shares (its scenario
 * texts, running a set of them, figures over seeds).
 * The seed's figures are [R 111-130] (M6), [R 96-97] (credit) of the translation. */
#include "sim_experiment.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


#define SIM_EXP_TEXT_MOST 2048u

/* ---- scenario texts ---- */

/* A probability in parts per million as an exact decimal ("0.012500"). */
static const char *ppm_text(uint32_t ppm, char out[16]) {
    snprintf(out, 16, "%u.%06u", ppm / 1000000u, ppm % 1000000u);
    return out;
}

char *sim_exp_scenario(const sim_exp_run *r, char *buf, size_t cap) {
    char a[16], b[16];
    size_t n = (size_t)snprintf(buf, cap,
                                "duration: %llums\nseed: 1\npath.rate: 50Mbit\npath.delay: %lluus\n"
                                "path.jitter: %lluus\npath.loss: %s\nshare_from: %llums\n",
                                (unsigned long long)r->duration_ms, (unsigned long long)(r->rtt_us / 2),
                                (unsigned long long)r->jitter_us, ppm_text(r->loss_ppm, a),
                                (unsigned long long)r->share_from_ms);
    if (r->burst_ppm > 0) {
        /* Bad state drops all, good none; 1/ge_r = 4 datagrams a burst; pi_bad = p / (p + r). */
        uint32_t ge_r = 250000, ge_p = (uint32_t)((uint64_t)ge_r * r->burst_ppm / (1000000u - r->burst_ppm));
        n += (size_t)snprintf(buf + n, cap - n, "path.ge_p: %s\npath.ge_r: %s\npath.ge_loss_bad: 1\n",
                              ppm_text(ge_p, a), ppm_text(ge_r, b));
    }
    if (r->tcp == 2) {
        snprintf(buf + n, cap - n, "node: a\nnode: b\ntcp: a > b\nalgo: cubic\ntcp: a > b\nalgo: cubic\n");
        return buf;
    }
    n += (size_t)snprintf(buf + n, cap - n, "node: sender\n%s%s%snode: receiver\n", r->cc ? "congestion: " : "",
                          r->cc ? r->cc : "", r->cc ? "\n" : "");
    n += (size_t)snprintf(buf + n, cap - n, "link: sender > receiver\nsource: %s\ninput: sink\nrecord_bytes: %llu\n",
                          r->paced ? "paced" : "bulk", (unsigned long long)r->record_bytes);
    if (r->paced) n += (size_t)snprintf(buf + n, cap - n, "mode: paced\nrate: 50/s\n");
    if (r->tcp == 1) snprintf(buf + n, cap - n, "tcp: sender > receiver\nalgo: cubic\n");
    return buf;
}

/* ---- running and summing ---- */

sim_exp_stat sim_exp_stat_of(const sim_grid_figures *runs, size_t n, size_t offset) {
    sim_exp_stat s = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        double v;
        const char *at = (const char *)&runs[i] + offset;
        if (offset == offsetof(sim_grid_figures, packets_sent) || offset == offsetof(sim_grid_figures, replies_sent) ||
            offset == offsetof(sim_grid_figures, packets_lost) ||
            offset == offsetof(sim_grid_figures, packets_retransmitted) || offset == offsetof(sim_grid_figures, dropped_queue))
            v = (double)*(const uint64_t *)(const void *)at;
        else v = *(const double *)(const void *)at;
        s.mean += v / (double)n;
        if (i == 0 || v < s.min) s.min = v;
        if (i == 0 || v > s.max) s.max = v;
    }
    return s;
}

static double wall_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

sim_grid_figures *sim_exp_run_all(const sim_exp_run *runs, size_t count, const sim_exp_options *o, double *wall_s) {
    size_t total = count * o->seeds;
    char **texts = calloc(total, sizeof *texts);
    uint64_t *seeds = calloc(total, sizeof *seeds);
    sim_grid_figures *out = calloc(total, sizeof *out);
    int ok = texts && seeds && out;
    for (size_t i = 0; ok && i < total; i++) {
        ok = (texts[i] = malloc(SIM_EXP_TEXT_MOST)) != NULL;
        if (ok) sim_exp_scenario(&runs[i / o->seeds], texts[i], SIM_EXP_TEXT_MOST);
        seeds[i] = o->first_seed + i % o->seeds;
    }
    double t0 = wall_now_s();
    if (ok && sim_grid_run((const char *const *)texts, seeds, total, o->jobs, out) != 0)
        fprintf(stderr, "pure-link-sim: a worker process failed; its cases are marked\n");
    *wall_s = wall_now_s() - t0;
    for (size_t i = 0; texts && i < total; i++) free(texts[i]);
    free(texts);
    free(seeds);
    if (!ok) { free(out); return NULL; }
    return out;
}

const char *sim_exp_error(const sim_grid_figures *runs, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (runs[i].error[0]) return runs[i].error;
    return NULL;
}

void sim_exp_print_wall(FILE *out, const char *what, size_t runs, double wall_s, unsigned jobs) {
    double load[3] = {-1, -1, -1};
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
        fclose(f);
    }
    fprintf(out, "wall: %.1f s for %s (%zu runs, %u worker processes); load average %.2f %.2f %.2f\n", wall_s, what,
            runs, jobs, load[0], load[1], load[2]);
}

/* ---- JSON pieces ---- */

static void json_stat(FILE *out, const char *key, sim_exp_stat s, int present) {
    if (!present) { fprintf(out, ",\"%s\":null", key); return; }
    fprintf(out, ",\"%s\":%.6g", key, s.mean);
}

static void json_spread(FILE *out, const char *key, sim_exp_stat s, int present, int first) {
    if (!present) fprintf(out, "%s\"%s\":null", first ? "" : ",", key);
    else fprintf(out, "%s\"%s\":[%.6g,%.6g]", first ? "" : ",", key, s.min, s.max);
}

static void json_pair(FILE *out, const char *key, const double v[2], int first) {
    fprintf(out, "%s\"%s\":[%.6g,%.6g]", first ? "" : ",", key, v[0], v[1]);
}

static void json_error(FILE *out, const char *error) {
    fputs(",\"error\":", out);
    if (error == NULL) { fputs("null", out); return; }
    fputc('"', out);
    for (const char *c = error; *c; c++) {
        if (*c == '"' || *c == '\\') fputc('\\', out);
        if ((unsigned char)*c >= 0x20) fputc(*c, out);
    }
    fputc('"', out);
}

/* ---- m6 ---- */

typedef struct m6_cell {
    unsigned rtt_ms, loss_pct, jitter_ms;
    int paced;
    double pure[3], quinn[3], ngtcp2[3]; /* bulk: round a, round b; paced: p50, p99, max */
    double goal;                         /* bulk: goodput at least; paced: p99 at most */
} m6_cell;

static const m6_cell m6_cells[] = {
    {20, 0, 0, 0, {45.4, 45.4}, {46.8, 46.8}, {47.2, 47.2}, 47.5},
    {20, 0, 3, 0, {45.4, 45.4}, {1.9, 2.1}, {40.0, 39.8}, 47.5},
    {20, 1, 0, 0, {6.6, 7.0}, {6.9, 7.6}, {7.2, 7.5}, 7.6},
    {20, 1, 3, 0, {7.0, 7.6}, {1.6, 1.8}, {25.5, 26.2}, 26.2},
    {20, 5, 0, 0, {2.8, 3.0}, {2.8, 3.1}, {3.0, 3.3}, 3.3},
    {20, 5, 3, 0, {3.1, 3.1}, {1.7, 1.4}, {6.0, 9.3}, 9.3},
    {100, 0, 0, 0, {44.9, 44.9}, {47.3, 47.3}, {47.2, 47.2}, 47.5},
    {100, 0, 3, 0, {45.2, 45.2}, {1.0, 1.3}, {29.1, 47.2}, 47.5},
    {100, 1, 0, 0, {1.3, 1.6}, {1.6, 1.3}, {1.7, 1.2}, 1.7},
    {100, 1, 3, 0, {1.4, 1.4}, {0.8, 0.8}, {1.8, 2.5}, 2.5},
    {100, 5, 0, 0, {0.6, 0.6}, {0.6, 0.5}, {0.6, 0.7}, 0.7},
    {100, 5, 3, 0, {0.6, 0.7}, {0.4, 0.4}, {1.2, 0.9}, 1.2},
    {20, 1, 0, 1, {10.0, 50.1, 60.2}, {10.1, 50.3, 70.4}, {10.0, 40.1, 53.2}, 40.1},
    {20, 5, 0, 1, {10.0, 61.7, 110.1}, {10.1, 84.0, 122.6}, {10.0, 71.2, 110.6}, 61.7},
    {100, 1, 0, 1, {50.0, 130.1, 230.1}, {50.1, 180.3, 236.3}, {50.0, 173.7, 210.5}, 130.1},
    {100, 5, 0, 1, {60.2, 411.5, 467.9}, {70.7, 406.3, 490.5}, {71.9, 292.0, 366.8}, 292.0},
};
#define M6_CELLS (sizeof m6_cells / sizeof m6_cells[0])

static int m6_met(const m6_cell *c, const sim_grid_figures *r, size_t n) {
    if (sim_exp_error(r, n)) return 0;
    sim_exp_stat s = c->paced ? SIM_EXP_STAT(r, n, p99_ms) : SIM_EXP_STAT(r, n, goodput_mbit);
    return c->paced ? s.max <= c->goal : s.min >= c->goal; /* every seed meets it */
}

static void m6_json(const m6_cell *c, const sim_grid_figures *r, const sim_exp_options *o) {
    size_t n = o->seeds;
    int lat = c->paced;
    fprintf(stdout, "{\"rtt_ms\":%u,\"loss\":%.2f,\"jitter_ms\":%u,\"mode\":\"%s\"", c->rtt_ms, c->loss_pct / 100.0,
            c->jitter_ms, c->paced ? "paced" : "bulk");
    json_stat(stdout, "goodput_mbit", SIM_EXP_STAT(r, n, goodput_mbit), 1);
    json_stat(stdout, "goodput_mbit_from_5s", SIM_EXP_STAT(r, n, link_goodput_mbit_window), 1);
    json_stat(stdout, "p50_ms", SIM_EXP_STAT(r, n, p50_ms), lat);
    json_stat(stdout, "p99_ms", SIM_EXP_STAT(r, n, p99_ms), lat);
    json_stat(stdout, "max_ms", SIM_EXP_STAT(r, n, max_ms), lat);
    json_stat(stdout, "framing_bytes_per_full_packet", SIM_EXP_STAT(r, n, framing_bytes_per_full_packet), 1);
    json_stat(stdout, "packets_sent", SIM_EXP_STAT(r, n, packets_sent), 1);
    json_stat(stdout, "replies_sent", SIM_EXP_STAT(r, n, replies_sent), 1);
    json_stat(stdout, "packets_lost", SIM_EXP_STAT(r, n, packets_lost), 1);
    json_stat(stdout, "packets_retransmitted", SIM_EXP_STAT(r, n, packets_retransmitted), 1);
    json_stat(stdout, "dropped_queue", SIM_EXP_STAT(r, n, dropped_queue), 1);
    fprintf(stdout, ",\"seed\":%llu,\"seeds\":%u,\"cc\":\"%s\",\"spread\":{", (unsigned long long)o->first_seed,
            o->seeds, o->cc ? o->cc : "default");
    json_spread(stdout, "goodput_mbit", SIM_EXP_STAT(r, n, goodput_mbit), 1, 1);
    json_spread(stdout, "p50_ms", SIM_EXP_STAT(r, n, p50_ms), lat, 0);
    json_spread(stdout, "p99_ms", SIM_EXP_STAT(r, n, p99_ms), lat, 0);
    json_spread(stdout, "max_ms", SIM_EXP_STAT(r, n, max_ms), lat, 0);
    fprintf(stdout, "},\"goal\":{\"%s\":%.6g},\"met\":%s,\"anchors\":{", c->paced ? "p99_ms_most" : "goodput_mbit_least",
            c->goal, m6_met(c, r, n) ? "true" : "false");
    if (c->paced) fprintf(stdout, "\"pure\":[%g,%g,%g],\"quinn\":[%g,%g,%g],\"ngtcp2\":[%g,%g,%g]", c->pure[0],
                          c->pure[1], c->pure[2], c->quinn[0], c->quinn[1], c->quinn[2], c->ngtcp2[0], c->ngtcp2[1],
                          c->ngtcp2[2]);
    else {
        json_pair(stdout, "pure", c->pure, 1);
        json_pair(stdout, "quinn", c->quinn, 0);
        json_pair(stdout, "ngtcp2", c->ngtcp2, 0);
    }
    fputc('}', stdout);
    json_error(stdout, sim_exp_error(r, n));
    fputs("}\n", stdout);
}

static void m6_text_bulk(const m6_cell *c, const sim_grid_figures *r, size_t n) {
    sim_exp_stat g = SIM_EXP_STAT(r, n, goodput_mbit);
    sim_exp_stat fr = SIM_EXP_STAT(r, n, framing_bytes_per_full_packet);
    sim_exp_stat late = SIM_EXP_STAT(r, n, link_goodput_mbit_window);
    const char *e = sim_exp_error(r, n);
    printf("  %4u  %3u %%  %4u  | %4.1f / %-4.1f  %4.1f / %-4.1f  %4.1f / %-4.1f | %6.2f  %6.2f..%-6.2f %5.1f  %-2s  %6.2f  %5.1f%s%s\n",
           c->rtt_ms, c->loss_pct, c->jitter_ms, c->pure[0], c->pure[1], c->quinn[0], c->quinn[1], c->ngtcp2[0],
           c->ngtcp2[1], g.mean, g.min, g.max, c->goal, m6_met(c, r, n) ? "ok" : "--", late.mean, fr.mean,
           e ? "  ERROR: " : "", e ? e : "");
}

static void m6_text_paced(const m6_cell *c, const sim_grid_figures *r, size_t n) {
    sim_exp_stat p50 = SIM_EXP_STAT(r, n, p50_ms), p99 = SIM_EXP_STAT(r, n, p99_ms), mx = SIM_EXP_STAT(r, n, max_ms);
    const char *e = sim_exp_error(r, n);
    printf("  %4u  %3u %%  | %4.1f/%5.1f/%5.1f  %4.1f/%5.1f/%5.1f  %4.1f/%5.1f/%5.1f | %5.1f/%6.1f/%6.1f  %6.1f..%-6.1f %6.1f  %s%s%s\n",
           c->rtt_ms, c->loss_pct, c->pure[0], c->pure[1], c->pure[2], c->quinn[0], c->quinn[1], c->quinn[2],
           c->ngtcp2[0], c->ngtcp2[1], c->ngtcp2[2], p50.mean, p99.mean, mx.mean, p99.min, p99.max, c->goal,
           m6_met(c, r, n) ? "ok" : "--", e ? "  ERROR: " : "", e ? e : "");
}

static void m6_text(const sim_grid_figures *all, const sim_exp_options *o) {
    size_t n = o->seeds;
    printf("M6 bulk: goodput, Mbit/s of record bytes; 50 Mbit/s bottleneck, %.0f s virtual, congestion %s,\n"
           "seeds %llu..%llu (mean, min..max; ok: every seed meets the goal); from 5 s: goodput of the run after\n"
           "its first 5 s; framing in B per full packet\n",
           (double)o->duration_ms / 1e3, o->cc ? o->cc : "default", (unsigned long long)o->first_seed,
           (unsigned long long)(o->first_seed + n - 1));
    printf("   RTT  loss  jitter | Pure (seed)  quinn        ngtcp2      |   ours   min..max      goal      from 5 s framing\n");
    for (size_t i = 0; i < M6_CELLS; i++)
        if (!m6_cells[i].paced) m6_text_bulk(&m6_cells[i], all + i * n, n);
    printf("M6 paced: 50 records/s, latency write -> hand-over, p50/p99/max ms (ours: mean over seeds; p99 min..max)\n");
    printf("   RTT  loss  | Pure (seed)        quinn              ngtcp2            | ours                p99 min..max   goal\n");
    for (size_t i = 0; i < M6_CELLS; i++)
        if (m6_cells[i].paced) m6_text_paced(&m6_cells[i], all + i * n, n);
}

static int m6_plot(const sim_grid_figures *all, const sim_exp_options *o);

int sim_exp_m6(const sim_exp_options *o) {
    sim_exp_run runs[M6_CELLS];
    for (size_t i = 0; i < M6_CELLS; i++) {
        const m6_cell *c = &m6_cells[i];
        runs[i] = (sim_exp_run){.duration_ms = o->duration_ms ? o->duration_ms : 30000, .rtt_us = c->rtt_ms * 1000ull,
                                .loss_ppm = c->loss_pct * 10000u, .jitter_us = c->jitter_ms * 1000ull, .cc = o->cc,
                                .paced = c->paced, .record_bytes = 1024, .share_from_ms = 5000};
    }
    double wall;
    sim_grid_figures *all = sim_exp_run_all(runs, M6_CELLS, o, &wall);
    if (all == NULL) { fprintf(stderr, "pure-link-sim: out of memory\n"); return 2; }
    if (o->json) for (size_t i = 0; i < M6_CELLS; i++) m6_json(&m6_cells[i], all + i * o->seeds, o);
    else m6_text(all, o);
    sim_exp_print_wall(o->json ? stderr : stdout, "the M6 grid", M6_CELLS * o->seeds, wall, o->jobs);
    int rc = sim_exp_error(all, M6_CELLS * o->seeds) ? 1 : 0;
    if (o->plot && m6_plot(all, o) != 0) rc = 1;
    free(all);
    return rc;
}

/* The bulk rows as bars: ours (mean, with min..max) beside the seed's three (mean of the rounds). */
static int m6_plot(const sim_grid_figures *all, const sim_exp_options *o) {
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (f == NULL) return -1;
    fputs("$bulk << EOD\n", f);
    for (size_t i = 0; i < M6_CELLS; i++) {
        const m6_cell *c = &m6_cells[i];
        if (c->paced) continue;
        sim_exp_stat g = SIM_EXP_STAT(all + i * o->seeds, o->seeds, goodput_mbit);
        fprintf(f, "\"%u ms %u%% j%u\" %g %g %g %g %g %g %g\n", c->rtt_ms, c->loss_pct, c->jitter_ms, g.mean, g.min,
                g.max, (c->pure[0] + c->pure[1]) / 2, (c->quinn[0] + c->quinn[1]) / 2, (c->ngtcp2[0] + c->ngtcp2[1]) / 2,
                c->goal);
    }
    fputs("EOD\n$paced << EOD\n", f);
    for (size_t i = 0; i < M6_CELLS; i++) {
        const m6_cell *c = &m6_cells[i];
        if (!c->paced) continue;
        sim_exp_stat p = SIM_EXP_STAT(all + i * o->seeds, o->seeds, p99_ms);
        fprintf(f, "\"%u ms %u%%\" %g %g %g %g %g %g %g\n", c->rtt_ms, c->loss_pct, p.mean, p.min, p.max, c->pure[1],
                c->quinn[1], c->ngtcp2[1], c->goal);
    }
    fputs("EOD\n", f);
    fprintf(f, "set multiplot layout 2,1 title \"M6 in the simulator (congestion %s, %u seeds, %.0f s each) beside the seed's figures\"\n",
            o->cc ? o->cc : "default", o->seeds, (double)o->duration_ms / 1e3);
    fputs("set style data histograms\nset style histogram errorbars gap 1 lw 1\nset style fill solid 0.8 border -1\n"
          "set key top right\nset grid ytics\nset logscale y\nset xtics rotate by -30 scale 0\n"
          "set ylabel \"bulk goodput, Mbit/s (log)\"\nset yrange [0.2:80]\n"
          "plot $bulk using 2:3:4:xtic(1) title \"pure-link (min..max)\" lc rgb \"#1f77b4\", "
          "'' using 5:5:5 title \"Pure (seed)\" lc rgb \"#aaaaaa\", '' using 6:6:6 title \"quinn\" lc rgb \"#ff7f0e\", "
          "'' using 7:7:7 title \"ngtcp2\" lc rgb \"#2ca02c\", '' using 0:8 with points pt 7 ps 1.2 lc rgb \"red\" title \"goal\"\n"
          "set ylabel \"paced p99, ms (log)\"\nset yrange [5:3000]\n"
          "plot $paced using 2:3:4:xtic(1) title \"pure-link (min..max)\" lc rgb \"#1f77b4\", "
          "'' using 5:5:5 title \"Pure (seed)\" lc rgb \"#aaaaaa\", '' using 6:6:6 title \"quinn\" lc rgb \"#ff7f0e\", "
          "'' using 7:7:7 title \"ngtcp2\" lc rgb \"#2ca02c\", '' using 0:8 with points pt 7 ps 1.2 lc rgb \"red\" title \"goal (at most)\"\n"
          "unset multiplot\n",
          f);
    fclose(f);
    int rc = sim_plot_script(s, o->plot, 1200, 900);
    free(s);
    return rc;
}

/* ---- share ---- */

typedef struct share_case { unsigned rtt_ms; const char *cc; /* NULL: TCP against TCP */ } share_case;

static void share_line(const share_case *c, const sim_grid_figures *r, const sim_exp_options *o) {
    static const double pure[2][2] = {{0.53, 0.47}, {0.57, 0.58}}, ng[2][2] = {{0.52, 0.47}, {0.61, 0.56}},
                        tcp[2][2] = {{0.53, 0.50}, {0.47, 0.49}};
    size_t n = o->seeds;
    int row = c->rtt_ms == 100;
    sim_exp_stat s = SIM_EXP_STAT(r, n, share_first), g = SIM_EXP_STAT(r, n, goodput_mbit);
    sim_exp_stat t = SIM_EXP_STAT(r, n, tcp_goodput_mbit);
    int met = !sim_exp_error(r, n) && s.min >= 0.375 && s.max <= 0.625;
    const char *e = sim_exp_error(r, n);
    if (!o->json) {
        char ours[16] = "     -";
        if (c->cc) snprintf(ours, sizeof ours, "%6.2f", g.mean);
        printf("  %4u  %-16s | %4.2f / %-4.2f  %4.2f / %-4.2f  %4.2f / %-4.2f | %5.3f  %5.3f..%-5.3f  %-2s  %s %6.2f%s%s\n",
               c->rtt_ms, c->cc ? c->cc : "TCP CUBIC", pure[row][0], pure[row][1], ng[row][0], ng[row][1], tcp[row][0],
               tcp[row][1], s.mean, s.min, s.max, met ? "ok" : "--", ours, t.mean, e ? "  ERROR: " : "", e ? e : "");
        return;
    }
    printf("{\"rtt_ms\":%u,\"jitter_ms\":1,\"first\":\"%s\",\"second\":\"tcp-cubic\",\"cc\":\"%s\"", c->rtt_ms,
           c->cc ? "pure-link" : "tcp-cubic", c->cc ? c->cc : "tcp-cubic");
    json_stat(stdout, "share", s, 1);
    json_stat(stdout, "goodput_mbit", g, c->cc != NULL);
    json_stat(stdout, "tcp_goodput_mbit", t, 1);
    json_stat(stdout, "packets_sent", SIM_EXP_STAT(r, n, packets_sent), c->cc != NULL);
    json_stat(stdout, "dropped_queue", SIM_EXP_STAT(r, n, dropped_queue), 1);
    printf(",\"duration_s\":%g,\"from_s\":%g,\"seed\":%llu,\"seeds\":%u,\"spread\":{", (double)o->duration_ms / 1e3,
           (double)o->from_ms / 1e3, (unsigned long long)o->first_seed, o->seeds);
    json_spread(stdout, "share", s, 1, 1);
    printf("},\"goal\":[0.375,0.625],\"met\":%s,\"anchors\":{", met ? "true" : "false");
    json_pair(stdout, "pure", pure[row], 1);
    json_pair(stdout, "ngtcp2", ng[row], 0);
    json_pair(stdout, "tcp_vs_tcp", tcp[row], 0);
    fputc('}', stdout);
    json_error(stdout, e);
    fputs("}\n", stdout);
}

int sim_exp_share(const sim_exp_options *in) {
    sim_exp_options o = *in;
    if (o.duration_ms == 0) o.duration_ms = 60000;
    if (o.from_ms == 0) o.from_ms = 5000;
    share_case cases[6];
    size_t count = 0;
    for (unsigned rtt = 20; rtt <= 100; rtt += 80) {
        if (o.cc) cases[count++] = (share_case){rtt, o.cc};
        else { cases[count++] = (share_case){rtt, "cubic"}; cases[count++] = (share_case){rtt, "bbr"}; }
        cases[count++] = (share_case){rtt, NULL};
    }
    sim_exp_run runs[6];
    for (size_t i = 0; i < count; i++)
        runs[i] = (sim_exp_run){.duration_ms = o.duration_ms, .rtt_us = cases[i].rtt_ms * 1000ull, .jitter_us = 1000,
                                .cc = cases[i].cc, .record_bytes = 1024, .tcp = cases[i].cc ? 1 : 2,
                                .share_from_ms = o.from_ms};
    double wall;
    sim_grid_figures *all = sim_exp_run_all(runs, count, &o, &wall);
    if (all == NULL) return 2;
    if (!o.json) {
        printf("Share next to one TCP CUBIC flow: 50 Mbit/s, drop-tail queue of one BDP, jitter 1 ms, %.0f s, bytes from\n"
               "%.0f s on; the first flow's share, mean and min..max over seeds %llu..%llu; goal 0.375..0.625 for every seed\n",
               (double)o.duration_ms / 1e3, (double)o.from_ms / 1e3, (unsigned long long)o.first_seed,
               (unsigned long long)(o.first_seed + o.seeds - 1));
        printf("   RTT  first flow       | Pure (seed)  ngtcp2       TCP vs TCP  | share  min..max        Mbit/s: ours tcp\n");
    }
    for (size_t i = 0; i < count; i++) share_line(&cases[i], all + i * o.seeds, &o);
    sim_exp_print_wall(o.json ? stderr : stdout, "the share grid", count * o.seeds, wall, o.jobs);
    int rc = sim_exp_error(all, count * o.seeds) ? 1 : 0;
    free(all);
    return rc;
}

/* ---- credit ---- */

int sim_exp_credit(const sim_exp_options *in) {
    static const struct { unsigned rtt_ms; double before, after; } rows[] = {{100, 9953, 56296}, {10, 90814, 87130}};
    sim_exp_options o = *in;
    if (o.duration_ms == 0) o.duration_ms = 10000;
    sim_exp_run runs[2];
    for (size_t i = 0; i < 2; i++)
        runs[i] = (sim_exp_run){.duration_ms = o.duration_ms, .rtt_us = rows[i].rtt_ms * 1000ull, .cc = o.cc,
                                .record_bytes = 61, .share_from_ms = 5000};
    double wall;
    sim_grid_figures *all = sim_exp_run_all(runs, 2, &o, &wall);
    if (all == NULL) return 2;
    if (!o.json)
        printf("Credit: 61 B records, 50 Mbit/s, %.0f s, congestion %s, seeds %llu..%llu; records/s stored (mean, min..max)\n"
               "   RTT | seed before fix  seed after fix | ours     min..max            goal (the path's limit)\n",
               (double)o.duration_ms / 1e3, o.cc ? o.cc : "default", (unsigned long long)o.first_seed,
               (unsigned long long)(o.first_seed + o.seeds - 1));
    for (size_t i = 0; i < 2; i++) {
        const sim_grid_figures *r = all + i * o.seeds;
        sim_exp_stat rps = SIM_EXP_STAT(r, o.seeds, records_per_s);
        const char *e = sim_exp_error(r, o.seeds);
        if (!o.json) {
            printf("  %4u | %15.0f  %14.0f | %7.0f  %7.0f..%-7.0f  %s 90000%s%s\n", rows[i].rtt_ms, rows[i].before,
                   rows[i].after, rps.mean, rps.min, rps.max, rps.min >= 90000 ? "ok" : "--", e ? "  ERROR: " : "",
                   e ? e : "");
            continue;
        }
        printf("{\"rtt_ms\":%u,\"record_bytes\":61,\"cc\":\"%s\"", rows[i].rtt_ms, o.cc ? o.cc : "default");
        json_stat(stdout, "records_per_s", rps, 1);
        json_stat(stdout, "goodput_mbit", SIM_EXP_STAT(r, o.seeds, goodput_mbit), 1);
        json_stat(stdout, "packets_sent", SIM_EXP_STAT(r, o.seeds, packets_sent), 1);
        json_stat(stdout, "packets_lost", SIM_EXP_STAT(r, o.seeds, packets_lost), 1);
        printf(",\"seed\":%llu,\"seeds\":%u,\"spread\":{", (unsigned long long)o.first_seed, o.seeds);
        json_spread(stdout, "records_per_s", rps, 1, 1);
        printf("},\"goal\":{\"records_per_s_least\":90000},\"met\":%s,\"anchors\":{\"before_fix\":%g,\"after_fix\":%g}",
               rps.min >= 90000 && !e ? "true" : "false", rows[i].before, rows[i].after);
        json_error(stdout, e);
        fputs("}\n", stdout);
    }
    sim_exp_print_wall(o.json ? stderr : stdout, "the credit rows", 2 * o.seeds, wall, o.jobs);
    int rc = sim_exp_error(all, 2 * o.seeds) ? 1 : 0;
    free(all);
    return rc;
}
