/* sim_plot.c: charts drawn by gnuplot (Debian's gnuplot-nox), each as SVG and PNG.
 *
 * pure-link-sim plot TRACE reads a trace (JSON text sequences, sim/README.md) and draws the
 * first link's sender over time: goodput (and the first TCP flow's, if any), congestion
 * window and bytes in flight, smoothed and minimum RTT, and the loss events: datagrams the
 * path dropped (random loss or the full queue), packets the sender declared lost and
 * retransmitted, per metrics interval (the path's drops as marks below zero); every new epoch is a dashed vertical line. */
#include "sim_experiment.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define PLOT_EPOCHS_MOST 64u /* epoch lines drawn */
#define PLOT_GOODPUT_SAMPLES 5u /* goodput over the last 5 metrics intervals: STORED comes in batches */

/* ---- gnuplot ---- */

static int run_gnuplot(const char *terminal, const char *path, const char *script) {
    FILE *g = popen("gnuplot", "w");
    if (g == NULL) return -1;
    fprintf(g, "set terminal %s noenhanced\nset output '%s'\n%s", terminal, path, script);
    int status = pclose(g);
    return status == 0 ? 0 : -1;
}

int sim_plot_script(const char *script, const char *prefix, unsigned width, unsigned height) {
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        fprintf(stderr, "pure-link-sim: gnuplot is not installed (sh scripts/deps.sh plot)\n");
        return -1;
    }
    size_t n = strlen(prefix) + 8;
    char *svg = malloc(n), *png = malloc(n), svg_term[96], png_term[96];
    snprintf(svg, n, "%s.svg", prefix);
    snprintf(png, n, "%s.png", prefix);
    snprintf(svg_term, sizeof svg_term, "svg size %u,%u dynamic background '#ffffff' font 'Sans,11'", width, height);
    snprintf(png_term, sizeof png_term, "pngcairo size %u,%u background '#ffffff' font 'Sans,10'", width, height);
    int rc = run_gnuplot(svg_term, svg, script) == 0 && run_gnuplot(png_term, png, script) == 0 ? 0 : -1;
    if (rc != 0) fprintf(stderr, "pure-link-sim: gnuplot failed drawing %s\n", prefix);
    else fprintf(stderr, "pure-link-sim: wrote %s and %s\n", svg, png);
    free(svg);
    free(png);
    return rc;
}

/* ---- reading a trace ---- */

static int field_u64(const char *rec, const char *key, uint64_t *out) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(rec, pat);
    if (p == NULL) return -1;
    *out = strtoull(p + strlen(pat), NULL, 10);
    return 0;
}

/* A string field's value equals want. */
static int field_is(const char *rec, const char *key, const char *want) {
    char pat[160];
    snprintf(pat, sizeof pat, "\"%s\":\"%s\"", key, want);
    return strstr(rec, pat) != NULL;
}

/* Copies a string field into out (cap bytes); "" if absent. */
static void field_str(const char *rec, const char *key, char *out, size_t cap) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(rec, pat);
    size_t n = 0;
    if (p != NULL)
        for (p += strlen(pat); *p && *p != '"' && n + 1 < cap; p++) out[n++] = *p;
    out[n] = 0;
}

typedef struct plot_trace {
    FILE *metrics, *tcp, *drops; /* datablock rows, in memory */
    char *metrics_s, *tcp_s, *drops_s;
    size_t metrics_n, tcp_n, drops_n;
    char node[40], source[80], sender[40], title[120];
    uint64_t record_bytes;
    uint64_t last_ns, last_stored, last_lost, last_retx, tcp_last_ns, tcp_last_bytes;
    uint64_t window_ns[PLOT_GOODPUT_SAMPLES], window_stored[PLOT_GOODPUT_SAMPLES]; /* a ring of samples */
    unsigned samples;
    int have_metrics, have_tcp, rows;
    uint64_t epoch_ns[PLOT_EPOCHS_MOST];
    uint32_t epoch[PLOT_EPOCHS_MOST], epochs;
} plot_trace;

static void on_metrics(plot_trace *t, const char *rec, uint64_t ns) {
    char node[40], source[80];
    field_str(rec, "node", node, sizeof node);
    field_str(rec, "source", source, sizeof source);
    if (t->node[0] == 0) { snprintf(t->node, sizeof t->node, "%s", node); snprintf(t->source, sizeof t->source, "%s", source); }
    if (strcmp(node, t->node) != 0 || strcmp(source, t->source) != 0) return; /* the first link only */
    uint64_t srtt = 0, minrtt = 0, cwnd = 0, flight = 0, lost = 0, retx = 0, stored = 0;
    field_u64(rec, "rtt_ns_smoothed", &srtt);
    field_u64(rec, "rtt_ns_min", &minrtt);
    field_u64(rec, "cwnd_bytes", &cwnd);
    field_u64(rec, "bytes_in_flight", &flight);
    field_u64(rec, "packets_lost", &lost);
    field_u64(rec, "packets_retransmitted", &retx);
    field_u64(rec, "records_stored", &stored);
    unsigned oldest = t->samples >= PLOT_GOODPUT_SAMPLES ? t->samples % PLOT_GOODPUT_SAMPLES : 0;
    uint64_t since_ns = t->window_ns[oldest], since_stored = t->window_stored[oldest];
    t->window_ns[t->samples % PLOT_GOODPUT_SAMPLES] = ns;
    t->window_stored[t->samples % PLOT_GOODPUT_SAMPLES] = stored;
    t->samples++;
    if (t->have_metrics && ns > since_ns && stored >= since_stored) {
        double mbit = (double)(stored - since_stored) * (double)t->record_bytes * 8e3 / (double)(ns - since_ns);
        fprintf(t->metrics, "%.3f %.4f %.2f %.2f %.3f %.3f %llu %llu\n", (double)ns / 1e9, mbit, (double)cwnd / 1e3,
                (double)flight / 1e3, (double)srtt / 1e6, (double)minrtt / 1e6,
                (unsigned long long)(lost - t->last_lost), (unsigned long long)(retx - t->last_retx));
        t->rows++;
    }
    t->have_metrics = 1;
    t->last_ns = ns;
    t->last_stored = stored;
    t->last_lost = lost;
    t->last_retx = retx;
}

static void on_tcp_metrics(plot_trace *t, const char *rec, uint64_t ns) {
    uint64_t flow = 1, bytes = 0;
    field_u64(rec, "flow", &flow);
    field_u64(rec, "delivered_bytes", &bytes);
    if (flow != 0) return;
    if (t->have_tcp && ns > t->tcp_last_ns && bytes >= t->tcp_last_bytes)
        fprintf(t->tcp, "%.3f %.4f\n", (double)ns / 1e9, (double)(bytes - t->tcp_last_bytes) * 8e3 / (double)(ns - t->tcp_last_ns));
    t->have_tcp = 1;
    t->tcp_last_ns = ns;
    t->tcp_last_bytes = bytes;
}

static void on_record(plot_trace *t, const char *rec) {
    uint64_t ns = 0, v = 0;
    if (field_u64(rec, "time", &ns) != 0) return;
    if (field_is(rec, "name", "header")) field_str(rec, "title", t->title, sizeof t->title);
    else if (field_is(rec, "name", "app:link_start") && t->sender[0] == 0) {
        field_str(rec, "node", t->sender, sizeof t->sender);
        if (field_u64(rec, "record_bytes", &v) == 0) t->record_bytes = v;
    } else if (field_is(rec, "name", "recovery:metrics_updated")) on_metrics(t, rec, ns);
    else if (field_is(rec, "name", "tcp:metrics_updated")) on_tcp_metrics(t, rec, ns);
    else if (field_is(rec, "name", "transport:packet_dropped") && field_is(rec, "from", t->sender)) {
        int queue = field_is(rec, "why", "queue");
        if (queue || field_is(rec, "why", "loss")) fprintf(t->drops, "%.6f %d\n", (double)ns / 1e9, queue ? 2 : 1);
    } else if (field_is(rec, "name", "security:epoch") && field_u64(rec, "epoch", &v) == 0) {
        for (uint32_t i = 0; i < t->epochs; i++)
            if (t->epoch[i] == v) return; /* both ends report it: the first time is the change */
        if (t->epochs < PLOT_EPOCHS_MOST) { t->epoch[t->epochs] = (uint32_t)v; t->epoch_ns[t->epochs++] = ns; }
    }
}

static int read_trace(const char *path, plot_trace *t) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) { fprintf(stderr, "pure-link-sim: cannot read %s\n", path); return -1; }
    t->record_bytes = 1024; /* traces written before link_start named it */
    t->metrics = open_memstream(&t->metrics_s, &t->metrics_n);
    t->tcp = open_memstream(&t->tcp_s, &t->tcp_n);
    t->drops = open_memstream(&t->drops_s, &t->drops_n);
    char *rec = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getdelim(&rec, &cap, 0x1e, f)) > 0) {
        if (rec[n - 1] == 0x1e) rec[n - 1] = 0;
        on_record(t, rec);
    }
    free(rec);
    fclose(f);
    fclose(t->metrics);
    fclose(t->tcp);
    fclose(t->drops);
    if (t->rows < 2) { fprintf(stderr, "pure-link-sim: %s has no recovery:metrics_updated records of a link\n", path); return -1; }
    return 0;
}

/* ---- the chart ---- */

static void trace_script(const plot_trace *t, const char *path, FILE *s) {
    fprintf(s, "$m << EOD\n%sEOD\n$tcp << EOD\n%s\nEOD\n$drops << EOD\n%s\nEOD\n", t->metrics_s, t->tcp_s, t->drops_s);
    for (uint32_t i = 0; i < t->epochs; i++)
        fprintf(s, "set arrow %u from %.6f, graph 0 to %.6f, graph 1 nohead dt 2 lc rgb '#9467bd'\n", i + 1,
                (double)t->epoch_ns[i] / 1e9, (double)t->epoch_ns[i] / 1e9);
    const char *slash = strrchr(path, '/');
    fprintf(s, "set multiplot layout 4,1 title \"%s: node %s, source %s (epoch changes dashed)\"\n", slash ? slash + 1 : path,
            t->node, t->source);
    fputs("set grid\nset key top right horizontal\nset lmargin 10\nset format x ''\n", s);
    fprintf(s, "set ylabel 'goodput, Mbit/s'\nplot $m using 1:2 with lines lw 1.5 title 'pure-link (over 0.5 s)'%s\n",
            t->have_tcp ? ", $tcp using 1:2 with lines lw 1.5 title 'TCP flow 1'" : "");
    fputs("set ylabel 'kB'\nplot $m using 1:3 with lines lw 1.5 title 'cwnd', '' using 1:4 with lines title 'bytes in flight'\n", s);
    fputs("set ylabel 'RTT, ms'\nplot $m using 1:5 with lines lw 1.5 title 'smoothed', '' using 1:6 with lines title 'min'\n", s);
    fputs("set format x '%g'\nset xlabel 'virtual time, s'\nset ylabel 'events'\nset yrange [-1.5:*]\n"
          "plot $m using 1:7 with impulses lw 2 title 'declared lost per 100 ms', "
          "'' using 1:8 with impulses lw 1 title 'retransmitted per 100 ms', "
          "$drops using 1:($2 == 1 ? -0.5 : 1/0) with points pt 2 ps 0.4 title 'path: random loss', "
          "'' using 1:($2 == 2 ? -1.0 : 1/0) with points pt 6 ps 0.4 title 'path: queue full'\n"
          "unset multiplot\n", s);
}

int sim_plot_trace(const char *trace_path, const char *prefix) {
    plot_trace t;
    memset(&t, 0, sizeof t);
    int rc = read_trace(trace_path, &t);
    char *script = NULL, *own = NULL;
    size_t len = 0;
    if (rc == 0) {
        if (prefix == NULL) { /* TRACE without its extension */
            own = strdup(trace_path);
            char *dot = strrchr(own, '.'), *slash = strrchr(own, '/');
            if (dot && (!slash || dot > slash)) *dot = 0;
            prefix = own;
        }
        FILE *s = open_memstream(&script, &len);
        trace_script(&t, trace_path, s);
        fclose(s);
        rc = sim_plot_script(script, prefix, 1100, 1100);
    }
    free(script);
    free(own);
    free(t.metrics_s);
    free(t.tcp_s);
    free(t.drops_s);
    return rc;
}
