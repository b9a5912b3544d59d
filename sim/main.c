/* main.c: pure-link-sim, the command line of the virtual-time simulator.
 *
 *   pure-link-sim SCENARIO [--seed N] [--trace FILE] [--json] [--pcap FILE] [--keylog FILE]
 *                 [--quiet] [--set 'KEY: VALUE']...
 *   pure-link-sim m6|share|credit|sweep [--seeds N] [--cc NAME] [--json] ...   (sim_experiment.h)
 *   pure-link-sim plot TRACE [--out PREFIX]
 *   pure-link-sim vopr [--seeds N] [--from S] [--jobs J] [--verbose] | --print S  (sim_vopr.h)
 *
 * Without --json: a progress line per virtual second, then a summary in words.  With
 * --json: the last line printed is one JSON object (keys in sim/README.md).  The wall
 * clock is read here only, to print how fast the run went; the run itself never reads it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_experiment.h"
#include "sim_report.h"
#include "sim_run.h"
#include "sim_scenario.h"
#include "sim_value.h"
#include "sim_vopr.h"
#include "sim_world.h"

#define SIM_SETS_MOST 64u /* --set options */

static void usage(FILE *f) {
    fprintf(f,
            "usage: pure-link-sim SCENARIO [--seed N] [--trace FILE] [--json] [--pcap FILE]\n"
            "                     [--keylog FILE] [--quiet] [--set 'KEY: VALUE']...\n"
            "  SCENARIO       a scenario file (sim/scenarios/*.conf; keys in sim/README.md)\n"
            "  --seed N       the run's seed (default: the scenario's `seed`, else 1)\n"
            "  --trace FILE   write the trace (JSON-SEQ, RFC 7464) to FILE\n"
            "  --json         print the summary as one JSON object, the last line of output\n"
            "  --pcap FILE    write every datagram as pcap (raw IPv4/UDP, virtual timestamps)\n"
            "  --keylog FILE  write each epoch's secret (PURE_LINK_EPOCH lines)\n"
            "  --quiet        no progress lines or logs\n"
            "  --realtime     print progress lines at the pace of virtual time (to watch a run)\n"
            "  --set 'K: V'   a scenario line appended after the file (repeatable)\n"
            "       pure-link-sim m6|share|credit|sweep [--seeds N] [--seed S] [--cc bbr|cubic|newreno]\n"
            "                     [--json] [--jobs N] [--duration D] [--from D] [--plot PREFIX] [--csv FILE]\n"
            "       pure-link-sim plot TRACE [--out PREFIX]   (sim/README.md, \"Experiments\")\n"
            "       pure-link-sim vopr [--seeds N] [--from S] [--jobs J] [--verbose] | --print S\n");
}

static double wall_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (size_t n; buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0;) {
        len += n;
        if (len + 1 == cap) {
            char *p = realloc(buf, cap *= 2);
            if (p == NULL) { free(buf); buf = NULL; }
            else buf = p;
        }
    }
    fclose(f);
    if (buf) buf[len] = 0;
    return buf;
}

static FILE *open_out(const char *path) {
    FILE *f = fopen(path, "wb");
    if (f == NULL) fprintf(stderr, "pure-link-sim: cannot write %s\n", path);
    return f;
}

int main(int argc, char **argv) {
    const char *scenario_path = NULL, *trace_path = NULL, *pcap_path = NULL, *keylog_path = NULL;
    const char *sets[SIM_SETS_MOST];
    unsigned set_count = 0;
    int json = 0, quiet = 0;
    sim_options opt;
    memset(&opt, 0, sizeof opt);
    if (argc > 1 && strcmp(argv[1], "vopr") == 0) return sim_vopr_main(argc - 1, argv + 1);
    if (argc > 1) {
        int rc = sim_command_main(argc - 1, argv + 1);
        if (rc >= 0) return rc;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { usage(stdout); return 0; }
        else if (strcmp(a, "--json") == 0) json = 1;
        else if (strcmp(a, "--quiet") == 0) quiet = 1;
        else if (strcmp(a, "--realtime") == 0) opt.realtime = 1;
        else if (strcmp(a, "--seed") == 0 && more) {
            if (sim_value_u64(argv[++i], &opt.seed) != 0) { fprintf(stderr, "pure-link-sim: bad seed\n"); return 2; }
            opt.seed_given = 1;
        } else if (strcmp(a, "--trace") == 0 && more) trace_path = argv[++i];
        else if (strcmp(a, "--pcap") == 0 && more) pcap_path = argv[++i];
        else if (strcmp(a, "--keylog") == 0 && more) keylog_path = argv[++i];
        else if (strcmp(a, "--set") == 0 && more) {
            if (set_count == SIM_SETS_MOST) { fprintf(stderr, "pure-link-sim: too many --set\n"); return 2; }
            sets[set_count++] = argv[++i];
        } else if (a[0] != '-' && scenario_path == NULL) scenario_path = a;
        else { usage(stderr); return 2; }
    }
    if (scenario_path == NULL) { usage(stderr); return 2; }

    char *text = read_file(scenario_path);
    if (text == NULL) { fprintf(stderr, "pure-link-sim: cannot read %s\n", scenario_path); return 2; }
    for (unsigned i = 0; i < set_count; i++) {
        size_t a = strlen(text), b = strlen(sets[i]);
        char *p = realloc(text, a + b + 3);
        if (p == NULL) { free(text); return 2; }
        text = p;
        snprintf(text + a, b + 3, "\n%s\n", sets[i]);
    }
    sim_scenario *sc = calloc(1, sizeof *sc);
    char err[512];
    if (sc == NULL || sim_scenario_parse(sc, text, err, sizeof err) != 0) {
        fprintf(stderr, "pure-link-sim: %s: %s\n", scenario_path, sc ? err : "out of memory");
        free(text);
        free(sc);
        return 2;
    }
    free(text);

    if (trace_path && (opt.trace_file = open_out(trace_path)) == NULL) return 2;
    if (pcap_path && (opt.pcap_file = open_out(pcap_path)) == NULL) return 2;
    if (keylog_path && (opt.keylog_file = open_out(keylog_path)) == NULL) return 2;
    /* --json: the output is the JSON line alone; progress and logs go with --quiet too. */
    if (!quiet && !json) opt.progress = stdout;

    sim_world *w = calloc(1, sizeof *w);
    if (w == NULL || sim_run_init(w, sc, &opt, err, sizeof err) != 0) {
        fprintf(stderr, "pure-link-sim: %s\n", w ? err : "out of memory");
        return 2;
    }
    double t0 = wall_now();
    int rc = sim_run(w);
    double wall = wall_now() - t0;
    if (json) {
        sim_report_json(w, stdout, wall);
    } else {
        sim_report_words(w, stdout);
        double v = (double)w->end_ns / 1e9;
        printf("  wall: %.3f s (%.1fx virtual time)\n", wall, wall > 0 ? v / wall : 0.0);
    }
    fflush(stdout);
    if (opt.trace_file) fclose(opt.trace_file);
    if (opt.pcap_file) fclose(opt.pcap_file);
    if (opt.keylog_file) fclose(opt.keylog_file);
    sim_run_free(w);
    free(w);
    free(sc);
    return rc == 0 ? 0 : 1;
}
