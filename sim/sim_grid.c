/* sim_grid.c: many independent runs over worker processes (sim_grid.h). */
#include "sim_grid.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim_host.h"
#include "sim_report.h"
#include "sim_run.h"

static double wall_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The share window: the first link's part of all bytes, else the first flow's. */
static void share_figures(const sim_world *w, sim_grid_figures *f) {
    uint64_t links[SIM_LINKS_MOST], tcps[SIM_TCP_FLOWS_MOST], sum = 0, tcp_sum = 0;
    uint64_t span_ns = sim_report_share(w, links, tcps);
    for (uint32_t i = 0; i < w->link_count; i++) sum += links[i];
    for (uint32_t i = 0; i < w->tcp_count; i++) tcp_sum += tcps[i];
    sum += tcp_sum;
    uint64_t first = w->link_count ? links[0] : w->tcp_count ? tcps[0] : 0;
    f->share_first = sum ? (double)first / (double)sum : 0.0;
    f->tcp_goodput_mbit = span_ns ? (double)tcp_sum * 8 * 1e3 / (double)span_ns : 0.0;
    f->link_goodput_mbit_window = span_ns && w->link_count ? (double)links[0] * 8 * 1e3 / (double)span_ns : 0.0;
}

static void first_link_figures(const sim_world *w, sim_grid_figures *f) {
    if (w->link_count == 0) return;
    const sim_link *l = &w->links[0];
    const sim_node *from = &w->nodes[l->from], *to = &w->nodes[l->to];
    f->packets_sent = from->datagrams_sent;
    f->replies_sent = to->datagrams_sent;
    double record_bytes = (double)l->host_delivered * (double)l->spec->record_bytes;
    if (to->bytes_received > 0 && record_bytes <= (double)to->bytes_received)
        f->framing_bytes_per_full_packet = PURE_LINK_DATAGRAM_MOST * (1.0 - record_bytes / (double)to->bytes_received);
}

static void world_figures(const sim_world *w, sim_grid_figures *f) {
    sim_totals t;
    sim_report_totals(w, &t);
    f->virtual_s = t.virtual_s;
    f->goodput_mbit = t.goodput_mbit;
    f->records_per_s = t.records_per_s;
    f->p50_ms = t.latency_ms_p50;
    f->p99_ms = t.latency_ms_p99;
    f->max_ms = t.latency_ms_max;
    f->latency_samples = t.latency_count;
    f->packets_lost = t.packets_lost;
    f->packets_retransmitted = t.packets_retransmitted;
    for (uint32_t i = 0; i < w->node_count * w->node_count; i++) f->dropped_queue += w->paths[i].counters.dropped_queue;
    first_link_figures(w, f);
    share_figures(w, f);
    if (w->error) snprintf(f->error, sizeof f->error, "%s", w->error);
}

void sim_grid_run_one(const char *scenario_text, uint64_t seed, sim_grid_figures *out) {
    memset(out, 0, sizeof *out);
    sim_scenario *sc = calloc(1, sizeof *sc);
    sim_world *w = calloc(1, sizeof *w);
    char err[SIM_GRID_ERROR_MOST - 16];
    sim_options opt;
    memset(&opt, 0, sizeof opt);
    opt.seed = seed;
    opt.seed_given = 1;
    if (sc == NULL || w == NULL) snprintf(out->error, sizeof out->error, "out of memory");
    else if (sim_scenario_parse(sc, scenario_text, err, sizeof err) != 0)
        snprintf(out->error, sizeof out->error, "scenario: %s", err);
    else if (sim_run_init(w, sc, &opt, err, sizeof err) != 0) {
        snprintf(out->error, sizeof out->error, "%s", err);
        sim_run_free(w); /* what init built before it failed */
    } else {
        double t0 = wall_now_s();
        sim_run(w);
        out->wall_s = wall_now_s() - t0;
        out->ran = 1;
        world_figures(w, out);
        sim_run_free(w);
    }
    free(w);
    free(sc);
}

static int write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n > 0) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

/* A worker: every jobs-th case from `first`, each as (index, figures) down fd. */
static void worker(const char *const *texts, const uint64_t *seeds, size_t count, size_t first, unsigned jobs, int fd) {
    for (size_t i = first; i < count; i += jobs) {
        sim_grid_figures f;
        sim_grid_run_one(texts[i], seeds[i], &f);
        uint64_t index = i;
        if (write_all(fd, &index, sizeof index) != 0 || write_all(fd, &f, sizeof f) != 0) _exit(1);
    }
    _exit(0);
}

static int read_all(FILE *f, void *p, size_t n) { return fread(p, 1, n, f) == n ? 0 : -1; }

int sim_grid_run(const char *const *texts, const uint64_t *seeds, size_t count, unsigned jobs,
                 sim_grid_figures *out) {
    if (jobs < 1) jobs = 1;
    if (jobs > SIM_GRID_JOBS_MOST) jobs = SIM_GRID_JOBS_MOST;
    if (jobs > count) jobs = count ? (unsigned)count : 1;
    for (size_t i = 0; i < count; i++) {
        memset(&out[i], 0, sizeof out[i]);
        snprintf(out[i].error, sizeof out[i].error, "not run: its worker failed");
    }
    if (jobs == 1) {
        for (size_t i = 0; i < count; i++) sim_grid_run_one(texts[i], seeds[i], &out[i]);
        return 0;
    }
    fflush(NULL); /* the children must not write the parent's buffered output again */
    FILE *from[SIM_GRID_JOBS_MOST];
    pid_t pids[SIM_GRID_JOBS_MOST];
    int rc = 0;
    unsigned started = 0;
    for (unsigned j = 0; j < jobs; j++, started++) {
        int fds[2];
        if (pipe(fds) != 0) { rc = -1; break; }
        pid_t pid = fork();
        if (pid < 0) { close(fds[0]); close(fds[1]); rc = -1; break; }
        if (pid == 0) {
            close(fds[0]);
            for (unsigned k = 0; k < j; k++) fclose(from[k]);
            worker(texts, seeds, count, j, jobs, fds[1]);
        }
        close(fds[1]);
        pids[j] = pid;
        from[j] = fdopen(fds[0], "rb");
    }
    /* A worker blocked on a full pipe waits for its turn: the others go on to their end. */
    for (unsigned j = 0; j < started; j++) {
        uint64_t index;
        sim_grid_figures f;
        while (from[j] && read_all(from[j], &index, sizeof index) == 0 && read_all(from[j], &f, sizeof f) == 0)
            if (index < count) out[index] = f;
        if (from[j]) fclose(from[j]);
        int status = 0;
        if (waitpid(pids[j], &status, 0) != pids[j] || !WIFEXITED(status) || WEXITSTATUS(status) != 0) rc = -1;
    }
    return rc;
}
