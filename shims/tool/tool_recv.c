/* tool_recv.c: `pure-link recv`: listens, takes the streams its config allows, stores
 * every record through the store of pl_store.h (group commit on the sync thread), and on
 * SIGINT or SIGTERM commits what arrived, prints its statistics and exits 0. */
#define _GNU_SOURCE
#include "tool.h"

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pl_store.h"

#define REFUSALS_REMEMBERED 1024u  /* (peer, run) pairs whose refusal was logged */
#define RUNS_PER_PEER_DEFAULT 4u   /* run slots per wired peer, shared by all peers (about 2.4 KiB
                                      each; record bytes live in the receive pool) */
#define PROGRESS_NS 250000000ull
#define DROP_LOG_NS 60000000000ull /* one line per key id and kind of drop a minute, at most */
#define DROP_KEYS_MOST 256u        /* key ids whose last line is remembered: a table indexed by the
                                      id (another id in the same place takes it over) */
#define DROP_LINES_MOST 16u        /* lines a minute for all key ids together: random ids from a
                                      flood are counted, not told each */
#define KEY_ID_OFFSET 2u           /* spec/wire.md §3.1: version, flags, then the key id */
#define KEY_ID_NONE 0xffffffffffull /* a reply packet (no key id) or a datagram cut short */
#define RELOAD_PEERS_SPARE 16u     /* peers a reload may add beyond those the receiver started with */
#define SLOTS_CHECK_NS 1000000000ull /* how often the count of datagrams that found no run slot is read */

typedef struct refusal {
    int peer;
    uint64_t run;
} refusal;

/* Dropped datagrams of one key id (and kind), and when a line last told of them. */
typedef struct drop_key {
    uint64_t key_id;              /* u32, or KEY_ID_NONE */
    uint32_t why;                 /* PURE_LINK_DROP_* */
    uint64_t logged_ns, since;    /* the last line's time; datagrams dropped after it */
    int used;
} drop_key;

typedef struct receiver_tool {
    tool_config config;
    tool_report report;
    pl_store *store;
    pure_link *pl;
    refusal refused[REFUSALS_REMEMBERED];
    size_t refused_next;
    uint64_t refusals_logged, streams_opened;
    drop_key drops[DROP_KEYS_MOST];
    uint64_t drop_lines, drop_window_ns, drops_untold;
    unsigned drop_window_lines;
    uint64_t slots_dropped_told, slots_check_ns, slots_logged_ns; /* dropped_no_slot: told, next read, last line */
    uint32_t runs_most;
    tool_rate_window rate;    /* the progress line's recent rate */
    tool_status status;       /* pure-link show, SIGUSR1 */
    tool_control *control;
    char listen[64];
    tool_reload_state reload; /* SIGHUP */
    const char *config_path;
    int peer_index[TOOL_PEERS_MOST];   /* the core's index of each config peer */
} receiver_tool;

typedef struct recv_options {
    tool_link_options link;
    const char *config, *listen, *control;
} recv_options;

static int recv_option(void *ctx, int c, const char *arg) {
    recv_options *o = ctx;
    switch (c) {
    case 'c': o->config = arg; return 0;
    case 'l': o->listen = arg; return 0;
    case 'C': o->control = arg; return 0;
    default: assert(0 && "an option in the table without a case"); return -1;
    }
}

static int parse_options(int argc, char **argv, recv_options *o) {
    static const struct option longs[] = {
        {"config", required_argument, 0, 'c'}, {"listen", required_argument, 0, 'l'},
        {"control", required_argument, 0, 'C'}, {0, 0, 0, 0}};
    *o = (recv_options){.listen = ":4433"};
    if (tool_options_parse(argc, argv, "recv", "c:l:", longs, recv_option, o, 0, &o->link) != 0) return -1;
    if (!o->config) {
        tool_log("missing --config FILE (see pure-link help recv)");
        return -1;
    }
    return 0;
}

/* ---- the driver's host ---- */

static const tool_input *input_named(const tool_config *c, const char *name) {
    for (size_t i = 0; i < c->inputs_len; i++)
        if (strcmp(c->inputs[i].name, name) == 0) return &c->inputs[i];
    return NULL;
}

/* One line per refused run, however often its sender asks again. */
static void log_refusal(receiver_tool *t, const pure_link_event *ev) {
    for (size_t i = 0; i < REFUSALS_REMEMBERED; i++)
        if (t->refused[i].peer == ev->peer && t->refused[i].run == ev->run) return;
    t->refused[t->refused_next] = (refusal){ev->peer, ev->run};
    t->refused_next = (t->refused_next + 1) % REFUSALS_REMEMBERED;
    t->refusals_logged++;
    const tool_input *in = input_named(&t->config, ev->input);
    const tool_peer *peer = NULL;   /* the config's peer of the core's index (a reload moves them) */
    for (size_t i = 0; i < t->config.peers_len && peer == NULL; i++)
        if (t->peer_index[i] == ev->peer) peer = &t->config.peers[i];
    if (peer == NULL) return;       /* unwired since */
    char key[65], why[320];
    tool_hex(peer->key, 32, key);
    pl_store_refusal r = ev->kind == PURE_LINK_EVENT_STREAM_REFUSED ? PL_STORE_REFUSAL_NONE
                         : in == NULL                               ? PL_STORE_REFUSAL_NO_INPUT
                                                                    : pl_store_refusal_last(t->store);
    if (ev->kind == PURE_LINK_EVENT_STREAM_REFUSED)
        snprintf(why, sizeof why, "this key may not send as that source (its peer line lists the sources it may use)");
    else if (r == PL_STORE_REFUSAL_NO_INPUT) snprintf(why, sizeof why, "no input of that name in the config");
    else if (r == PL_STORE_REFUSAL_CUT_OFF)
        snprintf(why, sizeof why, "run %016llx is cut off: a newer run of this source took it over (send --resume); "
                 "told so (REFUSED reason 5)", (unsigned long long)ev->run);
    else if (r == PL_STORE_REFUSAL_INPUT_FULL)
        snprintf(why, sizeof why, "the input's directory %s holds %u streams, the most one input takes: move the files "
                 "of sources that ended out of it, or send this source to another input; told as no such input "
                 "(REFUSED reason 1)", in->dir, PL_STORE_STREAMS_PER_INPUT_MOST);
    else if (r == PL_STORE_REFUSAL_NAME_TAKEN)
        snprintf(why, sizeof why, "another key whose first 96 bits are this one's (%.24s) sends source '%s' to this "
                 "input, and the stream's file name (key prefix and source) is taken: send it under another source "
                 "name; told as no such input (REFUSED reason 1)", key, ev->source);
    else snprintf(why, sizeof why, "shape %llu, the input's (line %d) is %llu", (unsigned long long)ev->shape, in->line,
                  (unsigned long long)in->shape);
    tool_log("refused a stream from peer %.16s... (config line %d), source '%s', input '%s': %s", key,
             peer->line, ev->source, ev->input, why);
}

/* The key id a sender packet claims (spec/wire.md §3.1), or KEY_ID_NONE. */
static uint64_t key_id_of(const uint8_t *data, size_t len) {
    if (len < KEY_ID_OFFSET + 4 || (data[1] & 0x80) != 0) return KEY_ID_NONE;
    const uint8_t *k = data + KEY_ID_OFFSET;
    return (uint64_t)k[0] << 24 | (uint64_t)k[1] << 16 | (uint64_t)k[2] << 8 | k[3];
}

/* The remembered entry of (key id, why): its place in the table, taken over when another
 * id held it (constant time per datagram, also under a flood of random ids). */
static drop_key *drop_entry(receiver_tool *t, uint64_t key_id, uint32_t why) {
    drop_key *d = &t->drops[(key_id * 2654435761u + why) % DROP_KEYS_MOST];
    if (!d->used || d->key_id != key_id || d->why != why) *d = (drop_key){.key_id = key_id, .why = why, .used = 1};
    return d;
}

/* 1 when a line may be written now: DROP_LINES_MOST a minute for every id together; the
 * datagrams of a minute's ids not told each are summed up in one line at the next. */
static int drop_line_allowed(receiver_tool *t, uint64_t now) {
    if (t->drop_window_ns == 0 || now - t->drop_window_ns >= DROP_LOG_NS) {
        if (t->drops_untold)
            tool_log("dropped %llu more datagrams in the last minute for keys not told each (over %u lines a minute)",
                     (unsigned long long)t->drops_untold, DROP_LINES_MOST);
        t->drop_window_ns = now ? now : 1, t->drop_window_lines = 0, t->drops_untold = 0;
    }
    return t->drop_window_lines < DROP_LINES_MOST;
}

/* A datagram dropped for its key or because it did not open: counted by the endpoint
 * (dropped_unknown_key, dropped_auth), and told in one line per key id a minute. */
static void on_dropped(void *ctx, const pure_link_addr *from, const uint8_t *data, size_t len, uint32_t why,
                       uint64_t now) {
    receiver_tool *t = ctx;
    uint64_t key_id = key_id_of(data, len);
    drop_key *d = drop_entry(t, key_id, why);
    d->since++;
    if (d->logged_ns != 0 && now - d->logged_ns < DROP_LOG_NS) return;
    if (!drop_line_allowed(t, now)) {
        t->drops_untold++;
        return;
    }
    t->drop_window_lines++;
    char where[64], id[16];
    pl_addr_format(from, where, sizeof where);
    if (key_id == KEY_ID_NONE) snprintf(id, sizeof id, "(none)");
    else snprintf(id, sizeof id, "%08llx", (unsigned long long)key_id);
    if (why == PURE_LINK_DROP_UNKNOWN_KEY)
        tool_log("dropped %llu datagram%s from %s with key id %s: no peer line of the config has that key "
                 "(add the sender's public key, pure-link pub, as a peer line)%s",
                 (unsigned long long)d->since, d->since == 1 ? "" : "s", where, id,
                 d->logged_ns ? " in the last minute" : "");
    else
        tool_log("dropped %llu datagram%s from %s with key id %s that did not open: the sender's --peer is not "
                 "this receiver's public key (pure-link pub), or they were damaged or forged%s",
                 (unsigned long long)d->since, d->since == 1 ? "" : "s", where, id,
                 d->logged_ns ? " in the last minute" : "");
    d->logged_ns = now ? now : 1;
    d->since = 0;
    t->drop_lines++;
}
/* Datagrams of new runs that found every run slot held (dropped_no_slot, spec/protocol.md §8):
 * their senders wait unanswered and cannot tell why, so the receiver says so, in one line a
 * minute at most, read once a second (the count is endpoint-wide: no key id to name). */
static void slots_line(receiver_tool *t, uint64_t now) {
    if (now < t->slots_check_ns) return;
    t->slots_check_ns = now + SLOTS_CHECK_NS;
    if (t->slots_logged_ns != 0 && now - t->slots_logged_ns < DROP_LOG_NS) return;
    pure_link_stats ep = {.version = PURE_LINK_STATS_VERSION};
    if (pure_link_stats_get(t->pl, -1, &ep) != 0) return;
    assert(ep.dropped_no_slot >= t->slots_dropped_told);
    uint64_t n = ep.dropped_no_slot - t->slots_dropped_told;
    if (n == 0) return;
    tool_log("dropped %llu datagram%s of new runs%s: every run slot is held by a live run (%u slots, at most %u "
             "a peer); those senders wait unanswered until a run ends or falls quiet",
             (unsigned long long)n, n == 1 ? "" : "s", t->slots_logged_ns ? " in the last minute" : "",
             t->runs_most, PURE_LINK_RUNS_PER_PEER);
    t->slots_dropped_told = ep.dropped_no_slot;
    t->slots_logged_ns = now ? now : 1;
    t->drop_lines++;
}

/* The rate of the last RATE_WINDOW_NS: a stall shows as one, not as a slowly sinking average. */
#define RATE_WINDOW_NS 1000000000ull

static void progress(receiver_tool *t, uint64_t now, int final) {
    if (!t->report.progress || (!final && now < t->report.progress_next_ns)) return;
    t->report.progress_next_ns = now + PROGRESS_NS;
    pl_store_stats ss;
    pl_store_stats_get(t->store, &ss);
    double s = (double)(now - t->report.start_ns) / 1e9;
    char bytes[32], rate[32];
    double bps = tool_rate_recent(&t->rate, ss.record_bytes_durable, now, RATE_WINDOW_NS);
    fprintf(stderr, "\r  stored %llu records (%s) of %llu runs  %s  %llu commits  %.1f s   %s",
            (unsigned long long)ss.records_durable, tool_bytes(ss.record_bytes_durable, bytes, sizeof bytes),
            (unsigned long long)t->streams_opened, tool_rate(bps * 8, rate, sizeof rate),
            (unsigned long long)ss.commits, s, final ? "\n" : "");
}

/* One line: what is stored, refused and dropped (at the end, or on SIGUSR1). */
static void status_line(receiver_tool *t, const char *what) {
    pure_link_stats ep = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(t->pl, -1, &ep);
    pl_store_stats ss;
    pl_store_stats_get(t->store, &ss);
    char bytes[32];
    uint64_t dropped = ep.dropped_bad_header + ep.dropped_unknown_key + ep.dropped_auth + ep.dropped_replay +
                       ep.dropped_malformed + ep.dropped_no_slot + ep.dropped_stale_epoch;
    tool_log("%s: %llu records (%s of records) stored of %llu runs; %llu runs refused (%llu REFUSED notices sent); "
             "%llu epochs; %llu datagrams dropped as bad",
             what, (unsigned long long)ss.records_durable, tool_bytes(ss.record_bytes_durable, bytes, sizeof bytes),
             (unsigned long long)t->streams_opened, (unsigned long long)t->refusals_logged,
             (unsigned long long)ep.listener_refused, (unsigned long long)ep.epochs, (unsigned long long)dropped);
}

static int on_event(void *ctx, pure_link *pl, const pure_link_event *ev, int refused, uint64_t now) {
    receiver_tool *t = ctx;
    tool_report_event(&t->report, ev, refused, now);
    if (ev->kind == PURE_LINK_EVENT_STREAM_OPEN) {
        /* An input that cannot store said so in its own line, once, not once per run. */
        if (!refused) t->streams_opened++, tool_status_opened(&t->status, ev);
        else if (pl_store_input_failed(t->store, ev->input) == 0) log_refusal(t, ev);
    }
    if (ev->kind == PURE_LINK_EVENT_STREAM_REFUSED) log_refusal(t, ev);
    return 0;
}

static size_t render(void *ctx, int json, char *buf, size_t cap, uint64_t now) {
    receiver_tool *t = ctx;
    tool_status_recv_view v = {.status = &t->status, .pl = t->pl, .store = t->store, .config = &t->config,
                               .peer_index = t->peer_index, .listen = t->listen,
                               .streams_opened = t->streams_opened, .refusals_logged = t->refusals_logged,
                               .reloads = t->reload.reloads};
    return tool_status_recv(&v, json, buf, cap, now);
}

static int on_turn(void *ctx, pure_link *pl, int watched, uint64_t now) {
    receiver_tool *t = ctx;
    for (int sig; (sig = tool_signal_noted()) != 0;) {
        if (sig == SIGUSR1) {
            status_line(t, "SIGUSR1");   /* then the status that pure-link show prints */
            char *text = malloc(TOOL_STATUS_BYTES_MOST);
            if (text) tool_status_log(text, render(t, 0, text, TOOL_STATUS_BYTES_MOST, now));
            free(text);
        } else {
            tool_reload(&t->reload, t->config_path, now);
        }
    }
    progress(t, now, 0);
    slots_line(t, now);
    pl_store_stats ss;
    pl_store_stats_get(t->store, &ss);
    tool_status_sample(&t->status, pl, ss.record_bytes_durable, now);
    if (watched && t->control) tool_control_serve(t->control, render, t, now);
    tool_signals_poll(now);
    return 0;
}

static void on_datagram(void *ctx, int sent, const pure_link_addr *peer, size_t len, uint64_t now) {
    receiver_tool *t = ctx;
    tool_report_datagram(&t->report, sent, peer, len, now);
}

static uint64_t wake_ns(void *ctx) {
    receiver_tool *t = ctx;
    uint64_t at = t->status.sample_ns + 1000000000ull;   /* the rates' next sample */
    return t->report.progress && t->report.progress_next_ns < at ? t->report.progress_next_ns : at;
}

/* ---- setting up ---- */

/* The store's lines: an input that cannot store, and one that stores again. */
static void store_notice(void *ctx, const char *line) {
    (void)ctx;
    tool_log("%s", line);
}

static int open_store(receiver_tool *t, const pure_link_config *cfg) {
    pl_store_input inputs[TOOL_INPUTS_MOST];
    for (size_t i = 0; i < t->config.inputs_len; i++)
        inputs[i] = (pl_store_input){t->config.inputs[i].name, t->config.inputs[i].shape, t->config.inputs[i].dir};
    pl_store_config sc = {.inputs = inputs, .inputs_len = t->config.inputs_len, .memo_path = t->config.memo,
                          .memo_bytes = t->config.memo ? pure_link_memo_size(cfg) : 0, .notice = store_notice};
    char err[512];
    if (pl_store_open(&t->store, &sc, err, sizeof err) != 0) {
        tool_log("%s", err);
        return TOOL_ERR_SYSTEM;
    }
    for (size_t i = 0; i < t->config.peers_len; i++) {
        const tool_peer *p = &t->config.peers[i];
        int idx = pure_link_wire_peer(t->pl, p->key, p->sources, pl_now_ns());
        if (idx < 0) {
            tool_log("%s:%d: this peer cannot be wired: %s", "config", p->line, pure_link_strerror(idx));
            return TOOL_ERR_FILE;
        }
        t->peer_index[i] = idx;
        if ((size_t)idx != i || pl_store_peer(t->store, idx, p->key) != 0) {
            tool_log("config line %d: the store did not take this peer", p->line);
            return TOOL_ERR_SYSTEM;
        }
    }
    /* After the wiring: the memo restores runs of wired peers only. */
    size_t len = 0;
    const uint8_t *memo = pl_store_memo(t->store, &len);
    if (memo && pure_link_memo_load(t->pl, memo, len, pl_now_ns()) != 0)
        tool_log("memo %s is not a memo of this receiver's format: starting without it", t->config.memo);
    return TOOL_OK;
}

static int open_socket(receiver_tool *t, const recv_options *o, const sigset_t *mask, pl_io **io) {
    int code = tool_io_open(&o->link, o->listen, "--listen", mask, io);
    if (code != TOOL_OK) return code;
    pure_link_addr local;
    if ((*io)->ops->local(*io, &local) == 0) pl_addr_format(&local, t->listen, sizeof t->listen);
    return TOOL_OK;
}

/* The control socket of pure-link show, watched by the driver's backend; then the one line
 * that says where the receiver listens and answers. */
static int open_control(receiver_tool *t, const recv_options *o, pl_io *io, const pure_link_config *cfg) {
    if (tool_status_init(&t->status, cfg->runs_most, pl_now_ns()) != 0) return TOOL_ERR_SYSTEM;
    if (o->control && strcmp(o->control, "none") == 0) {
        tool_log("listening on %s", t->listen);
        return TOOL_OK;
    }
    int code = tool_control_open(&t->control, o->control, "recv");
    if (code != TOOL_OK) return code;
    int w = io->ops->watch(io, tool_control_fd(t->control));
    if (w != 0) {
        tool_log("control socket: the backend cannot watch it: %s", strerror(-w));
        return TOOL_ERR_SYSTEM;
    }
    /* The address last: scripts read the port at the line's end. */
    tool_log("control socket %s (pure-link show); listening on %s", tool_control_path(t->control), t->listen);
    return TOOL_OK;
}

static int finish(receiver_tool *t, pl_io *io, const pl_driver_config *dc, const pl_driver_stats *ds, int r,
                  const char *err) {
    char line[512];
    int code = TOOL_OK;
    if (r < 0) {
        tool_log("%s", err);
        code = TOOL_ERR_SYSTEM;
    } else if (pl_driver_commit_all(dc, line, sizeof line) != 0) {
        tool_log("%s", line);
        code = TOOL_ERR_SYSTEM;
    }
    uint64_t now = pl_now_ns();
    progress(t, now, 1);
    status_line(t, "stopped");
    pure_link_stats ep = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(t->pl, -1, &ep);
    pl_store_stats ss;
    pl_store_stats_get(t->store, &ss);
    char extra[1280];
    snprintf(extra, sizeof extra,
             "\"store\":{\"records_appended\":%llu,\"records_durable\":%llu,\"bytes_durable\":%llu,"
             "\"record_bytes_durable\":%llu,\"commits\":%llu,"
             "\"fdatasyncs\":%llu,\"dir_fsyncs\":%llu,\"streams_refused\":%llu,\"records_missing\":%llu,\"bytes_cut\":%llu,"
             "\"inputs_failed\":%llu,\"inputs_failing\":%llu,\"inputs_recovered\":%llu},"
             "\"driver\":{\"turns\":%llu,\"commits\":%llu,\"commits_paced\":%llu,\"commit_wait_ns_most\":%llu,"
             "\"commit_wait_ns_total\":%llu},"
             "\"streams_opened\":%llu,\"refusals_logged\":%llu,\"drop_lines_logged\":%llu,\"exit\":%d",
             (unsigned long long)ss.records_appended, (unsigned long long)ss.records_durable,
             (unsigned long long)ss.bytes_durable, (unsigned long long)ss.record_bytes_durable,
             (unsigned long long)ss.commits, (unsigned long long)ss.fdatasyncs,
             (unsigned long long)ss.dir_fsyncs,
             (unsigned long long)ss.streams_refused, (unsigned long long)ss.records_missing,
             (unsigned long long)ss.bytes_cut, (unsigned long long)ss.inputs_failed,
             (unsigned long long)ss.inputs_failing, (unsigned long long)ss.inputs_recovered,
             (unsigned long long)ds->turns, (unsigned long long)ds->commits,
             (unsigned long long)ds->commits_paced, (unsigned long long)ds->commit_wait_ns_most, (unsigned long long)ds->commit_wait_ns_total,
             (unsigned long long)t->streams_opened,
             (unsigned long long)t->refusals_logged, (unsigned long long)t->drop_lines, code);
    int sc = tool_report_stats(&t->report, "recv", &ep, NULL, &io->stats, extra, now);
    return code != TOOL_OK ? code : sc;
}

int tool_recv_main(int argc, char **argv) {
    recv_options o;
    if (parse_options(argc, argv, &o) != 0) return TOOL_ERR_USAGE;
    receiver_tool *t = calloc(1, sizeof *t);
    for (size_t i = 0; i < REFUSALS_REMEMBERED; i++) t->refused[i].peer = -1;
    pure_link_config cfg = {0};
    void *mem = NULL;
    pl_io *io = NULL;
    sigset_t mask;
    tool_signals(&mask, 1);
    int code = tool_key_load(o.link.key, cfg.static_secret);
    if (code == TOOL_OK) code = tool_config_load(o.config, &t->config);
    /* Every output path is opened before the store and the socket: one that cannot be
     * written fails now, not at exit. */
    if (code == TOOL_OK) code = tool_report_open(&t->report, &o.link, "pure-link recv");
    if (code == TOOL_OK) {
        cfg.senders_most = PURE_LINK_NONE;
        cfg.peers_most = (uint32_t)(t->config.peers_len + RELOAD_PEERS_SPARE);
        if (cfg.peers_most > TOOL_PEERS_MOST) cfg.peers_most = TOOL_PEERS_MOST;
        /* Every wired peer may have runs at once: the slots are shared, and a run that
         * finds none (spec/protocol.md §8) waits, unanswered, until one comes free. */
        cfg.runs_most = cfg.peers_most * RUNS_PER_PEER_DEFAULT;
        t->runs_most = cfg.runs_most;
        cfg.memo_enabled = t->config.memo != NULL;
        mem = tool_endpoint(&cfg, &t->pl);
        if (mem == NULL) code = TOOL_ERR_SYSTEM;
    }
    if (code == TOOL_OK) code = open_store(t, &cfg);
    t->config_path = o.config;
    t->reload = (tool_reload_state){.command = "pure-link recv", .pl = t->pl, .store = t->store, .config = &t->config,
                                    .peer_index = t->peer_index, .peers_most = cfg.peers_most,
                                    .peers_started = t->config.peers_len};
    if (code == TOOL_OK) code = open_socket(t, &o, &mask, &io);
    if (code == TOOL_OK) code = open_control(t, &o, io, &cfg);
    if (code == TOOL_OK) {
        pl_driver_store ds = pl_driver_store_of(t->store);
        pl_driver_config dc = {.pl = t->pl, .io = io, .store = &ds, .stop = &tool_stop,
                               .host = {.ctx = t, .event = on_event, .turn = on_turn,
                                        .datagram = o.link.qlog ? on_datagram : NULL, .wake_ns = wake_ns,
                                        .dropped = on_dropped}};
        char err[512];
        pl_driver_stats ds_stats;
        int r = pl_driver_run(&dc, &ds_stats, err, sizeof err);
        code = finish(t, io, &dc, &ds_stats, r, err);
    }
    tool_report_close(&t->report);
    tool_control_close(t->control);
    tool_status_free(&t->status);
    if (t->store) pl_store_close(t->store);
    if (io) io->ops->close(io);
    tool_config_free(&t->config);
    free(mem);
    free(t);
    return code;
}
