/* tool_status.c: what `pure-link show` prints and SIGUSR1 logs (tool.h): a running
 * receiver's or sender's figures, as text in the manner of `wg show` or as one JSON object.
 * The same renderer serves the control socket (tool_control.c) and the log, so both say the
 * same thing.  Rates are measured over the last whole second (tool_status_sample). */
#define _GNU_SOURCE
#include "tool.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pl_store.h"

#define SAMPLE_NS 1000000000ull

/* Appends to a bounded buffer; past its end nothing more is written, and the text says so. */
typedef struct out {
    char *buf;
    size_t len, cap;
    int cut;
} out;

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out *o, const char *fmt, ...) {
    if (o->cut) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= o->cap - o->len) o->cut = 1;
    else o->len += (size_t)n;
}

int tool_status_init(tool_status *s, uint32_t runs_most, uint64_t now_ns) {
    memset(s, 0, sizeof *s);
    s->runs_most = runs_most;
    s->start_ns = s->sample_ns = now_ns;
    s->runs = runs_most ? calloc(runs_most, sizeof *s->runs) : NULL;
    return runs_most && s->runs == NULL ? -1 : 0;
}

void tool_status_free(tool_status *s) {
    free(s->runs);
    s->runs = NULL;
}

void tool_status_opened(tool_status *s, const pure_link_event *ev) {
    if (ev->stream < 0 || (uint32_t)ev->stream >= s->runs_most) return;
    tool_status_run *r = &s->runs[ev->stream];
    *r = (tool_status_run){.run = ev->run};
    snprintf(r->source, sizeof r->source, "%s", ev->source ? ev->source : "");
    snprintf(r->input, sizeof r->input, "%s", ev->input ? ev->input : "");
}

/* Once a second: each run's and the whole's bytes since the last sample, as rates. */
void tool_status_sample(tool_status *s, pure_link *pl, uint64_t stored_bytes, uint64_t now_ns) {
    if (now_ns - s->sample_ns < SAMPLE_NS) return;
    double dt = (double)(now_ns - s->sample_ns) / 1e9;
    s->sample_ns = now_ns;
    s->rate_bits = (double)(stored_bytes - s->sample_bytes) * 8 / dt;
    s->sample_bytes = stored_bytes;
    for (uint32_t i = 0; i < s->runs_most && pl; i++) {
        pure_link_run_info info;
        tool_status_run *r = &s->runs[i];
        if (pure_link_run_info_get(pl, (int)i, &info) != 0) continue;
        if (info.run != r->run) *r = (tool_status_run){.run = info.run};   /* its STREAM_OPEN is still to come */
        r->rate_bits = r->sample_bytes && info.bytes_delivered >= r->sample_bytes
                           ? (double)(info.bytes_delivered - r->sample_bytes) * 8 / dt : 0;
        r->sample_bytes = info.bytes_delivered;
    }
}

static void drops_text(out *o, const pure_link_stats *st) {
    put(o, "  dropped:");
#define F(field) if (strncmp(#field, "dropped_", 8) == 0) put(o, " %s %llu", #field + 8, (unsigned long long)st->field);
    PURE_LINK_STATS_COUNTERS(F)
#undef F
    put(o, "\n");
}

static void drops_json(out *o, const pure_link_stats *st) {
    put(o, ",\"dropped\":{");
    const char *sep = "";
#define F(field) if (strncmp(#field, "dropped_", 8) == 0) put(o, "%s\"%s\":%llu", sep, #field + 8, (unsigned long long)st->field), sep = ",";
    PURE_LINK_STATS_COUNTERS(F)
#undef F
    put(o, "}");
}

/* A name as a JSON string: the names the core passes have 1..64 printable bytes, but a
 * quote or a control byte must not break the object. */
static void json_str(out *o, const char *s) {
    put(o, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') put(o, "\\%c", c);
        else if (c < 0x20 || c == 0x7f) put(o, "\\u%04x", c);
        else put(o, "%c", c);
    }
    put(o, "\"");
}

static void run_text(out *o, const tool_status *s, int i, const pure_link_run_info *info, uint64_t now) {
    const tool_status_run *r = &s->runs[i];
    char where[64], bytes[32], rate[32];
    put(o, "  run %016llx  stream %d  source %s  input %s%s\n", (unsigned long long)info->run, i,
        r->source[0] ? r->source : "-", r->input[0] ? r->input : "-", info->accepted ? "" : "  (not accepted)");
    put(o, "    address %s%s  epoch %u  last heard %.1f s ago\n", pl_addr_format(&info->addr, where, sizeof where),
        info->validated ? "" : " (not validated)", info->epoch, (double)(now - info->last_heard_ns) / 1e9);
    put(o, "    records %llu delivered, %llu stored  %s  rate %s  rtt - (measured by the sender)\n",
        (unsigned long long)info->records_delivered, (unsigned long long)info->records_stored,
        tool_bytes(info->bytes_delivered, bytes, sizeof bytes), tool_rate(r->rate_bits, rate, sizeof rate));
}

static void run_json(out *o, const tool_status *s, int i, const pure_link_run_info *info, uint64_t now) {
    const tool_status_run *r = &s->runs[i];
    char where[64];
    put(o, "{\"stream\":%d,\"run\":\"%016llx\",\"source\":", i, (unsigned long long)info->run);
    json_str(o, r->source);
    put(o, ",\"input\":");
    json_str(o, r->input);
    put(o, ",\"accepted\":%s,\"address\":\"%s\",\"validated\":%s,\"epoch\":%u,\"last_heard_s\":%.3f,"
           "\"records_delivered\":%llu,\"records_stored\":%llu,\"bytes_delivered\":%llu,\"rate_bits_per_s\":%.0f}",
        info->accepted ? "true" : "false", pl_addr_format(&info->addr, where, sizeof where),
        info->validated ? "true" : "false", info->epoch, (double)(now - info->last_heard_ns) / 1e9,
        (unsigned long long)info->records_delivered, (unsigned long long)info->records_stored,
        (unsigned long long)info->bytes_delivered, r->rate_bits);
}

static void peer_runs(out *o, const tool_status *s, pure_link *pl, int peer, int json, uint64_t now) {
    const char *sep = "";
    for (uint32_t i = 0; i < s->runs_most; i++) {
        pure_link_run_info info;
        if (pure_link_run_info_get(pl, (int)i, &info) != 0 || info.peer != peer) continue;
        if (json) put(o, "%s", sep), run_json(o, s, (int)i, &info, now), sep = ",";
        else run_text(o, s, (int)i, &info, now);
    }
}

static void peer_head(out *o, const tool_peer *p, int index, int json) {
    char key[65];
    tool_hex(p->key, 32, key);
    if (!json) {
        put(o, "\npeer %s\n  config line %d  sources", key, p->line);
        for (const char *c = p->sources; *c;) {
            size_t n = strcspn(c, "\n");
            put(o, " %.*s", (int)n, c);
            c += n + (c[n] == '\n');
        }
        put(o, "\n");
        return;
    }
    put(o, "{\"index\":%d,\"key\":\"%s\",\"line\":%d,\"sources\":[", index, key, p->line);
    const char *sep = "";
    for (const char *c = p->sources; *c;) {
        size_t n = strcspn(c, "\n");
        char name[PURE_LINK_NAME_MOST + 1];
        snprintf(name, sizeof name, "%.*s", (int)n, c);
        put(o, "%s", sep), json_str(o, name), sep = ",";
        c += n + (c[n] == '\n');
    }
    put(o, "],\"runs\":[");
}

size_t tool_status_recv(const tool_status_recv_view *v, int json, char *buf, size_t cap, uint64_t now) {
    out o = {.buf = buf, .cap = cap};
    const tool_status *s = v->status;
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(v->pl, -1, &st);
    pl_store_stats ss;
    pl_store_stats_get(v->store, &ss);
    uint8_t pub[32];
    char key[65], bytes[32], rate[32];
    pure_link_public_key(v->pl, pub);
    tool_hex(pub, 32, key);
    double up = (double)(now - s->start_ns) / 1e9;
    if (json) {
        put(&o, "{\"command\":\"recv\",\"pid\":%d,\"listen\":\"%s\",\"public_key\":\"%s\",\"uptime_s\":%.3f,"
                "\"records_stored\":%llu,\"bytes_stored\":%llu,\"commits\":%llu,\"streams_opened\":%llu,"
                "\"streams_refused\":%llu,\"rate_bits_per_s\":%.0f,\"reloads\":%llu,"
                "\"inputs_failed\":%llu,\"inputs_failing\":%llu,\"inputs_recovered\":%llu",
            (int)getpid(), v->listen, key, up, (unsigned long long)ss.records_durable,
            (unsigned long long)ss.record_bytes_durable, (unsigned long long)ss.commits, (unsigned long long)v->streams_opened,
            (unsigned long long)v->refusals_logged, s->rate_bits, (unsigned long long)v->reloads,
            (unsigned long long)ss.inputs_failed, (unsigned long long)ss.inputs_failing,
            (unsigned long long)ss.inputs_recovered);
        drops_json(&o, &st);
        put(&o, ",\"peers\":[");
    } else {
        put(&o, "receiver %s (pid %d)\n  public key %s\n  up %.1f s, %zu peers, %zu inputs, %llu reloads\n", v->listen,
            (int)getpid(), key, up, v->config->peers_len, v->config->inputs_len, (unsigned long long)v->reloads);
        put(&o, "  stored %llu records (%s), %llu commits, %llu streams opened, %llu refused  rate %s\n",
            (unsigned long long)ss.records_durable, tool_bytes(ss.record_bytes_durable, bytes, sizeof bytes),
            (unsigned long long)ss.commits, (unsigned long long)v->streams_opened,
            (unsigned long long)v->refusals_logged, tool_rate(s->rate_bits, rate, sizeof rate));
        drops_text(&o, &st);
        if (ss.inputs_failing > 0)
            put(&o, "  %llu inputs cannot store now (their streams are refused, reason 4; the log says why)\n",
                (unsigned long long)ss.inputs_failing);
    }
    for (size_t p = 0; p < v->config->peers_len; p++) {
        int index = v->peer_index ? v->peer_index[p] : (int)p;
        if (json && p > 0) put(&o, ",");
        peer_head(&o, &v->config->peers[p], index, json);
        peer_runs(&o, s, v->pl, index, json, now);
        if (json) put(&o, "]}");
    }
    if (json) put(&o, "]}\n");
    if (o.cut) {
        /* Cut short: a text answer says so on its last line; JSON gets an object that parses. */
        o.cut = 0;
        o.len = json ? 0 : (o.len < cap - 64 ? o.len : cap - 64);
        put(&o, json ? "{\"command\":\"recv\",\"error\":\"the status is longer than %u bytes\"}\n"
                     : "\n... (cut: the status is longer than %u bytes)\n", (unsigned)cap);
    }
    return o.len;
}

void tool_status_log(const char *text, size_t len) {
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (n > 0) tool_log("%.*s", (int)n, p);
        p += n + 1;
    }
}

/* ---- Signals: the handlers of tool_signals note SIGUSR1 and SIGHUP for the loop's next turn. ---- */

/* A loop that is never idle never waits, and so never unblocks its signals: each turn takes
 * those pending at most every SIGNALS_POLL_NS, by unblocking them for a moment. */
#define SIGNALS_POLL_NS 10000000ull
void tool_signals_poll(uint64_t now_ns) {
    static uint64_t next_ns;   /* the one loop of the process */
    if (now_ns < next_ns) return;
    next_ns = now_ns + SIGNALS_POLL_NS;
    sigset_t pending, take;
    sigemptyset(&take);
    if (sigpending(&pending) != 0) return;
    int sigs[] = {SIGUSR1, SIGHUP, SIGINT, SIGTERM};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (sigismember(&pending, sigs[i])) sigaddset(&take, sigs[i]);
    if (sigisemptyset(&take)) return;
    sigprocmask(SIG_UNBLOCK, &take, NULL);   /* the handlers run here */
    sigprocmask(SIG_BLOCK, &take, NULL);
}

/* A sender's status: the same manner as a receiver's, one block (or one JSON object). */
size_t tool_status_send(const tool_status_send_view *v, int json, char *buf, size_t cap, uint64_t now) {
    out o = {.buf = buf, .cap = cap};
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(v->pl, v->sender, &st);
    uint8_t pub[32];
    char key[65], bytes[32], rate[32], flight[32], window[32];
    pure_link_public_key(v->pl, pub);
    tool_hex(pub, 32, key);
    double up = (double)(now - v->start_ns) / 1e9;
    double heard = v->answered_ns ? (double)(now - v->answered_ns) / 1e9 : -1;
    unsigned long long run = (unsigned long long)pure_link_sender_run(v->pl, v->sender);
    const char *state = v->refused ? "refused" : v->resuming ? "resuming" : v->input_open ? "sending" : "input ended";
    if (json) {
        put(&o, "{\"command\":\"send\",\"pid\":%d,\"to\":\"%s\",\"public_key\":\"%s\",\"uptime_s\":%.3f,"
                "\"run\":\"%016llx\",\"source\":", (int)getpid(), v->to, key, up, run);
        json_str(&o, v->source);
        put(&o, ",\"input\":");
        json_str(&o, v->input);
        put(&o, ",\"state\":\"%s\",\"refused\":", state);
        if (v->refused) json_str(&o, v->refused_why); else put(&o, "null");
        put(&o, ",\"records_queued\":%lld,\"records_stored\":%lld,\"bytes_stored\":%llu,\"rate_bits_per_s\":%.0f,"
                "\"epochs\":%llu,\"rtt_s\":%.6f,\"rtt_min_s\":%.6f,\"bytes_in_flight\":%llu,\"cwnd_bytes\":%llu,"
                "\"packets_sent\":%llu,\"packets_lost\":%llu,\"packets_retransmitted\":%llu,\"datagram_bytes\":%llu,"
                "\"last_answer_s\":",
            (long long)v->queued, (long long)v->stored, (unsigned long long)v->stored_bytes, v->rate_bits,
            (unsigned long long)st.epochs, (double)st.rtt_ns_smoothed / 1e9, (double)st.rtt_ns_min / 1e9,
            (unsigned long long)st.bytes_in_flight, (unsigned long long)st.cwnd_bytes,
            (unsigned long long)st.packets_sent, (unsigned long long)st.packets_lost,
            (unsigned long long)st.packets_retransmitted, (unsigned long long)st.datagram_bytes);
        if (heard >= 0) put(&o, "%.3f}\n", heard); else put(&o, "null}\n");
        return o.len;
    }
    put(&o, "sender to %s (pid %d)\n  public key %s\n  up %.1f s\n", v->to, (int)getpid(), key, up);
    put(&o, "run %016llx  source %s  input %s  %s", run, v->source, v->input, state);
    if (v->refused) put(&o, " (%s)", v->refused_why);
    put(&o, "\n  stored %lld of %lld records (%s)%s  rate %s\n", (long long)v->stored, (long long)v->queued,
        tool_bytes(v->stored_bytes, bytes, sizeof bytes), v->input_open ? ", input open" : "",
        tool_rate(v->rate_bits, rate, sizeof rate));
    put(&o, "  epochs %llu  rtt %.2f ms (min %.2f)  in flight %s  window %s  datagrams of %llu B\n",
        (unsigned long long)st.epochs, (double)st.rtt_ns_smoothed / 1e6, (double)st.rtt_ns_min / 1e6,
        tool_bytes(st.bytes_in_flight, flight, sizeof flight), tool_bytes(st.cwnd_bytes, window, sizeof window),
        (unsigned long long)st.datagram_bytes);
    put(&o, "  packets %llu sent, %llu lost, %llu retransmitted  ", (unsigned long long)st.packets_sent,
        (unsigned long long)st.packets_lost, (unsigned long long)st.packets_retransmitted);
    if (heard >= 0) put(&o, "last answer %.1f s ago\n", heard); else put(&o, "no answer yet\n");
    return o.len;
}
