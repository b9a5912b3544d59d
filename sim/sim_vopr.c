/* sim_vopr.c: pure-link-sim vopr, the command line (sim_vopr.h).
 *
 * It runs in the simulator's own process: a seed costs one world (its endpoints' setup and
 * its events), with no process started, no JSON written and read again, so a campaign of
 * 10^5 seeds takes minutes, not hours.  With --jobs J, J worker processes take every J-th
 * seed and hand back a fixed-size result per seed; the parent reads them in seed order, so
 * the output is the same for any J.  The wall clock is read here only, to print the rate. */
#define _GNU_SOURCE /* program_invocation_name */
#include "sim_vopr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim_run.h"
#include "sim_value.h"

#define SIM_VOPR_JOBS_MOST 64u
#define SIM_VOPR_SETS_MOST 16u
#define SIM_VOPR_PROGRESS_S 30.0 /* a progress line at most this often (long campaigns) */

typedef struct vopr_result {
    uint64_t seed, trace_hash, events;
    uint32_t faults;
    int broken;
    double virtual_s;
    char why[SIM_VOPR_WHY_MOST];
} vopr_result;

typedef struct vopr_options {
    uint64_t seeds, from, print_seed;
    unsigned jobs, set_count;
    const char *sets[SIM_VOPR_SETS_MOST]; /* --set 'KEY: VALUE': appended to every drawn text */
    int verbose, print;
} vopr_options;

static double wall_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f) {
    fprintf(f, "usage: pure-link-sim vopr [--seeds N] [--from S] [--jobs J] [--verbose] [--set 'K: V']...\n"
               "       pure-link-sim vopr --print S [--set 'K: V']...   (seed S's scenario text)\n"
               "  N seeds from S (default 1000 from 1), each a drawn scenario checked against the\n"
               "  invariants; a failing seed prints the command that replays it (sim/README.md)\n");
}

static int parse_options(int argc, char **argv, vopr_options *o) {
    memset(o, 0, sizeof *o);
    o->seeds = 1000, o->from = 1, o->jobs = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t n = 0;
        if (strcmp(a, "--verbose") == 0) { o->verbose = 1; continue; }
        if (strcmp(a, "--set") == 0 && v != NULL && o->set_count < SIM_VOPR_SETS_MOST) {
            o->sets[o->set_count++] = argv[++i];
            continue;
        }
        if (v == NULL || sim_value_u64(v, &n) != 0) return -1;
        i++;
        if (strcmp(a, "--seeds") == 0) o->seeds = n;
        else if (strcmp(a, "--from") == 0) o->from = n;
        else if (strcmp(a, "--print") == 0) o->print = 1, o->print_seed = n;
        else if (strcmp(a, "--jobs") == 0 && n >= 1 && n <= SIM_VOPR_JOBS_MOST) o->jobs = (unsigned)n;
        else return -1;
    }
    return o->seeds == 0 || o->from + o->seeds < o->from ? -1 : 0;
}

/* One seed: draw, parse, run, check. */
static void draw(const vopr_options *o, uint64_t seed, sim_vopr_draw *d) {
    sim_vopr_draw_seed(seed, d);
    for (unsigned i = 0; i < o->set_count; i++) {
        int n = snprintf(d->text + d->len, sizeof d->text - d->len, "%s\n", o->sets[i]);
        if (n > 0 && (size_t)n < sizeof d->text - d->len) d->len += (size_t)n;
    }
}

static void run_seed(const vopr_options *o, uint64_t seed, sim_scenario *sc, sim_world *w, vopr_result *res) {
    sim_vopr_draw d;
    draw(o, seed, &d);
    memset(res, 0, sizeof *res);
    res->seed = seed;
    res->faults = d.faults;
    char err[256];
    memset(sc, 0, sizeof *sc);
    sim_options opt;
    memset(&opt, 0, sizeof opt);
    if (sim_scenario_parse(sc, d.text, err, sizeof err) != 0) {
        res->broken = 1;
        snprintf(res->why, sizeof res->why, "scenario: %s", err);
        return;
    }
    memset(w, 0, sizeof *w);
    if (sim_run_init(w, sc, &opt, err, sizeof err) != 0) {
        res->broken = 1;
        snprintf(res->why, sizeof res->why, "world: %s", err);
        return;
    }
    sim_run(w);
    res->broken = sim_vopr_check(w, d.crashes, res->why, sizeof res->why);
    res->trace_hash = w->trace.hash;
    res->events = w->engine.events_run;
    res->virtual_s = (double)w->end_ns / 1e9;
    sim_run_free(w);
}

static int write_all(int fd, const void *p, size_t n) {
    for (const char *c = p; n > 0;) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        c += k, n -= (size_t)k;
    }
    return 0;
}

static int read_all(int fd, void *p, size_t n) {
    for (char *c = p; n > 0;) {
        ssize_t k = read(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        c += k, n -= (size_t)k;
    }
    return 0;
}

/* ---- the seeds, run here (one job) or by worker processes ---- */

typedef struct vopr_runner {
    const vopr_options *o;
    sim_scenario *sc;
    sim_world *w;
    int fds[SIM_VOPR_JOBS_MOST];
    pid_t pids[SIM_VOPR_JOBS_MOST];
} vopr_runner;

/* Worker k runs seeds from + k, from + k + jobs, ... and writes each result to fd. */
static void worker(const vopr_options *o, unsigned k, sim_scenario *sc, sim_world *w, int fd) {
    vopr_result res;
    for (uint64_t i = k; i < o->seeds; i += o->jobs) {
        run_seed(o, o->from + i, sc, w, &res);
        if (write_all(fd, &res, sizeof res) != 0) _exit(1);
    }
    _exit(0);
}

static int runner_start(vopr_runner *r, const vopr_options *o) {
    memset(r, 0, sizeof *r);
    r->o = o;
    r->sc = calloc(1, sizeof *r->sc);
    r->w = calloc(1, sizeof *r->w);
    if (r->sc == NULL || r->w == NULL) return -1;
    if (o->jobs == 1) return 0;
    fflush(stdout);
    for (unsigned k = 0; k < o->jobs; k++) {
        int p[2];
        if (pipe(p) != 0) return -1;
        pid_t pid = fork();
        if (pid < 0) return -1;
        if (pid == 0) {
            close(p[0]);
            worker(o, k, r->sc, r->w, p[1]);
        }
        close(p[1]);
        r->fds[k] = p[0];
        r->pids[k] = pid;
    }
    return 0;
}

/* The result of the i-th seed (in order); -1 if a worker died. */
static int runner_next(vopr_runner *r, uint64_t i, vopr_result *res) {
    if (r->o->jobs == 1) {
        run_seed(r->o, r->o->from + i, r->sc, r->w, res);
        return 0;
    }
    return read_all(r->fds[i % r->o->jobs], res, sizeof *res);
}

static int runner_end(vopr_runner *r) {
    int bad = 0;
    for (unsigned k = 0; r->o->jobs > 1 && k < r->o->jobs; k++) {
        int status = 0;
        close(r->fds[k]);
        if (waitpid(r->pids[k], &status, 0) != r->pids[k] || !WIFEXITED(status) || WEXITSTATUS(status) != 0) bad = 1;
    }
    free(r->sc);
    free(r->w);
    return bad ? -1 : 0;
}

/* ---- the summary ---- */

typedef struct vopr_tally {
    uint64_t seeds, failed, events;
    double virtual_s;
    uint64_t drawn[SIM_VOPR_FAULTS], failed_with[SIM_VOPR_FAULTS];
} vopr_tally;

static void tally_add(vopr_tally *t, const vopr_result *res) {
    t->seeds++;
    t->events += res->events;
    t->virtual_s += res->virtual_s;
    if (res->broken) t->failed++;
    for (unsigned f = 0; f < SIM_VOPR_FAULTS; f++) {
        if (!(res->faults >> f & 1)) continue;
        t->drawn[f]++;
        if (res->broken) t->failed_with[f]++;
    }
}

/* The --set options again, quoted for a shell (a set with a quote in it is left out). */
static void print_sets(const vopr_options *o) {
    for (unsigned i = 0; i < o->set_count; i++)
        if (strchr(o->sets[i], '\'') == NULL) printf(" --set '%s'", o->sets[i]);
}

static void print_result(const vopr_options *o, const vopr_result *res) {
    const char *me = program_invocation_name;
    if (o->verbose)
        printf("seed %llu: %s, %llu events, %.3f virtual s, trace %016llx\n", (unsigned long long)res->seed,
               res->broken ? "FAIL" : "ok", (unsigned long long)res->events, res->virtual_s,
               (unsigned long long)res->trace_hash);
    if (res->broken) {
        printf("FAIL seed %llu: %s\n  replay: %s vopr --from %llu --seeds 1 --verbose", (unsigned long long)res->seed,
               res->why, me, (unsigned long long)res->seed);
        print_sets(o);
        printf("\n  its scenario: %s vopr --print %llu", me, (unsigned long long)res->seed);
        print_sets(o);
        printf(" > seed.conf; %s seed.conf --trace trace.json\n", me);
    }
    fflush(stdout);
}

static void print_table(const vopr_tally *t) {
    printf("  %-32s %10s %7s %8s\n", "fault drawn", "seeds", "share", "failed");
    for (unsigned f = 0; f < SIM_VOPR_FAULTS; f++)
        printf("  %-32s %10llu %6.1f%% %8llu\n", sim_vopr_fault_name((sim_vopr_fault)f),
               (unsigned long long)t->drawn[f], t->seeds ? 100.0 * (double)t->drawn[f] / (double)t->seeds : 0.0,
               (unsigned long long)t->failed_with[f]);
}

static int print_seed(const vopr_options *o) {
    sim_vopr_draw d;
    draw(o, o->print_seed, &d);
    fputs(d.text, stdout);
    return 0;
}

int sim_vopr_main(int argc, char **argv) {
    vopr_options o;
    if (parse_options(argc, argv, &o) != 0) { usage(stderr); return 2; }
    if (o.print) return print_seed(&o);
    vopr_runner r;
    vopr_tally t;
    memset(&t, 0, sizeof t);
    const double start = wall_now_s();
    double progress_at = start + SIM_VOPR_PROGRESS_S;
    int lost = runner_start(&r, &o) != 0;
    for (uint64_t i = 0; !lost && i < o.seeds; i++) {
        vopr_result res;
        if (runner_next(&r, i, &res) != 0) { lost = 1; break; }
        tally_add(&t, &res);
        print_result(&o, &res);
        if (wall_now_s() >= progress_at) {
            progress_at += SIM_VOPR_PROGRESS_S;
            printf("vopr: %llu of %llu seeds, %llu failed, %.0f seeds/s\n", (unsigned long long)t.seeds,
                   (unsigned long long)o.seeds, (unsigned long long)t.failed, (double)t.seeds / (wall_now_s() - start));
            fflush(stdout);
        }
    }
    if (runner_end(&r) != 0) lost = 1;
    const double wall = wall_now_s() - start;
    printf("vopr: %llu seeds from %llu in %.1f s: %.1f seeds/s (%u job%s), %.0f virtual s, %llu events; "
           "%llu broke an invariant\n",
           (unsigned long long)t.seeds, (unsigned long long)o.from, wall, wall > 0 ? (double)t.seeds / wall : 0.0,
           o.jobs, o.jobs == 1 ? "" : "s", t.virtual_s, (unsigned long long)t.events, (unsigned long long)t.failed);
    print_table(&t);
    if (lost) printf("vopr: a worker stopped before its last seed: counted as 1 failed\n");
    printf("%llu passed, %llu failed\n", (unsigned long long)(t.seeds - t.failed),
           (unsigned long long)(t.failed + (lost ? 1 : 0)));
    return t.failed || lost ? 1 : 0;
}
