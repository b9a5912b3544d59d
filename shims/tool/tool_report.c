/* tool_report.c: what the tool writes beside its work: the key log (spec/keylog.md), the
 * qlog trace (the simulator's JSON-SEQ format, sim/README.md "The trace", written by the
 * same sim_trace.c), the statistics as JSON, and metrics for the trace. */
#define _GNU_SOURCE
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sim_trace.h"

/* Files of secrets (the key log) are created 0600. */
static FILE *open_private(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    return fd < 0 ? NULL : fdopen(fd, "w");
}

int tool_report_open(tool_report *r, const tool_link_options *o, const char *title) {
    const char *keylog = o->keylog, *qlog = o->qlog;
    r->start_ns = pl_now_ns();
    r->progress = o->progress;
    r->stats_path = o->stats;
    if (o->stats && strcmp(o->stats, "-") != 0 && (r->stats_file = fopen(o->stats, "w")) == NULL) {
        tool_log("--stats %s: %s", o->stats, strerror(errno));
        return TOOL_ERR_SYSTEM;
    }
    if (o->stats && strcmp(o->stats, "-") == 0) r->stats_file = stdout;
    if (keylog && (r->keylog = open_private(keylog)) == NULL) {
        tool_log("--keylog %s: %s", keylog, strerror(errno));
        return TOOL_ERR_SYSTEM;
    }
    if (qlog) {
        r->qlog_file = fopen(qlog, "w");
        sim_trace *t = calloc(1, sizeof *t);
        if (r->qlog_file == NULL || t == NULL) {
            tool_log("--qlog %s: %s", qlog, strerror(errno));
            free(t);
            return TOOL_ERR_SYSTEM;
        }
        sim_trace_init(t, r->qlog_file, 0);
        r->qlog = t;
        sim_trace_begin(t, 0, "app:start");
        sim_trace_str(t, "title", title);
        sim_trace_end(t);
    }
    return TOOL_OK;
}

void tool_report_close(tool_report *r) {
    if (r->keylog) fclose(r->keylog);
    if (r->stats_file && r->stats_file != stdout) fclose(r->stats_file);
    r->stats_file = NULL;
    if (r->qlog_file) fclose(r->qlog_file);
    free(r->qlog);
    r->keylog = r->qlog_file = NULL;
    r->qlog = NULL;
}

static void keylog_line(FILE *f, const pure_link_event *ev) {
    char sp[65], rp[65], sec[65];
    tool_hex(ev->sender_public, 32, sp);
    tool_hex(ev->receiver_public, 32, rp);
    tool_hex(ev->secret, 32, sec);
    fprintf(f, "PURE_LINK_EPOCH %s %s %016llx %u %s\n", sp, rp, (unsigned long long)ev->run, ev->epoch, sec);
    fflush(f); /* a reader may follow it while the run goes on */
}

void tool_report_event(tool_report *r, const pure_link_event *ev, int refused, uint64_t now_ns) {
    if (ev->kind == PURE_LINK_EVENT_EPOCH && r->keylog) keylog_line(r->keylog, ev);
    sim_trace *t = r->qlog;
    if (t == NULL) return;
    uint64_t at = now_ns - r->start_ns;
    switch (ev->kind) {
    case PURE_LINK_EVENT_STREAM_OPEN:
        sim_trace_begin(t, at, "app:stream_open");
        sim_trace_i64(t, "peer", ev->peer);
        sim_trace_id(t, "run", ev->run);
        sim_trace_i64(t, "stream", ev->stream);
        sim_trace_str(t, "source", ev->source);
        sim_trace_str(t, "input", ev->input);
        sim_trace_u64(t, "shape", ev->shape);
        sim_trace_i64(t, "answer", refused ? -1 : 0);
        break;
    case PURE_LINK_EVENT_STORED:
        sim_trace_begin(t, at, "app:stored_heard");
        sim_trace_id(t, "run", ev->run);
        sim_trace_i64(t, "record", ev->record);
        break;
    case PURE_LINK_EVENT_REFUSED:
    case PURE_LINK_EVENT_RELEASED:
    case PURE_LINK_EVENT_CLOSED:
        sim_trace_begin(t, at, ev->kind == PURE_LINK_EVENT_REFUSED ? "app:refused"
                               : ev->kind == PURE_LINK_EVENT_RELEASED ? "app:released" : "app:closed");
        sim_trace_id(t, "run", ev->run);
        if (ev->kind == PURE_LINK_EVENT_REFUSED) sim_trace_u64(t, "reason", ev->reason);
        break;
    case PURE_LINK_EVENT_EPOCH:
        sim_trace_begin(t, at, "security:epoch");
        sim_trace_id(t, "run", ev->run);
        sim_trace_u64(t, "epoch", ev->epoch);
        sim_trace_str(t, "side", ev->sender >= 0 ? "sender" : "receiver");
        break;
    case PURE_LINK_EVENT_MEMO_WRITE:
        sim_trace_begin(t, at, "memo:write");
        sim_trace_u64(t, "offset", ev->offset);
        sim_trace_u64(t, "len", ev->len);
        break;
    default:
        return; /* RECORD: one per record is the store's business, not the trace's */
    }
    sim_trace_end(t);
}

void tool_report_datagram(tool_report *r, int sent, const pure_link_addr *peer, size_t len, uint64_t now_ns) {
    sim_trace *t = r->qlog;
    if (t == NULL) return;
    char where[64];
    sim_trace_begin(t, now_ns - r->start_ns, sent ? "transport:packet_sent" : "transport:packet_received");
    sim_trace_str(t, sent ? "dst" : "src", pl_addr_format(peer, where, sizeof where));
    sim_trace_u64(t, "len", len);
    sim_trace_end(t);
}

void tool_report_metrics(tool_report *r, const pure_link_stats *s, uint64_t now_ns) {
    sim_trace *t = r->qlog;
    if (t == NULL) return;
    sim_trace_begin(t, now_ns - r->start_ns, "recovery:metrics_updated");
    sim_trace_u64(t, "rtt_ns_smoothed", s->rtt_ns_smoothed);
    sim_trace_u64(t, "rtt_ns_min", s->rtt_ns_min);
    sim_trace_u64(t, "rtt_ns_latest", s->rtt_ns_latest);
    sim_trace_u64(t, "rtt_ns_variance", s->rtt_ns_variance);
    sim_trace_u64(t, "cwnd_bytes", s->cwnd_bytes);
    sim_trace_u64(t, "bytes_in_flight", s->bytes_in_flight);
    sim_trace_u64(t, "pacing_rate_bytes_per_s", s->pacing_rate_bytes_per_s);
    sim_trace_u64(t, "packets_sent", s->packets_sent);
    sim_trace_u64(t, "packets_lost", s->packets_lost);
    sim_trace_u64(t, "records_stored", s->records_stored);
    sim_trace_u64(t, "datagram_bytes", s->datagram_bytes);
    sim_trace_end(t);
}

void tool_report_hint(tool_report *r, const pl_io_hint *h, uint64_t now_ns) {
    sim_trace *t = r->qlog;
    if (t == NULL) return;
    char who[64] = "";
    sim_trace_begin(t, now_ns - r->start_ns, "transport:path_hint");
    sim_trace_str(t, "kind", h->kind == PL_IO_HINT_PORT_UNREACHABLE ? "port_unreachable"
                             : h->kind == PL_IO_HINT_HOST_UNREACHABLE ? "host_unreachable" : "too_big");
    if (h->from.len) sim_trace_str(t, "from", pl_addr_format_host(&h->from, who, sizeof who));
    if (h->mtu) sim_trace_u64(t, "mtu", h->mtu);
    sim_trace_end(t);
}

void tool_report_told(tool_report *r, const char *kind, uint64_t now_ns) {
    sim_trace *t = r->qlog;
    if (t == NULL) return;
    sim_trace_begin(t, now_ns - r->start_ns, "app:path_told");
    sim_trace_str(t, "kind", kind);
    sim_trace_end(t);
}

static void json_stats(FILE *f, const char *name, const pure_link_stats *s) {
    fprintf(f, ",\"%s\":{\"rtt_ns_smoothed\":%llu,\"rtt_ns_min\":%llu,\"cwnd_bytes\":%llu", name,
            (unsigned long long)s->rtt_ns_smoothed, (unsigned long long)s->rtt_ns_min, (unsigned long long)s->cwnd_bytes);
#define F(field) fprintf(f, ",\"" #field "\":%llu", (unsigned long long)s->field);
    PURE_LINK_STATS_COUNTERS(F)
    F(datagram_bytes)   /* the size a sender's datagram search reached (not a counter) */
#undef F
    fprintf(f, "}");
}

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

int tool_report_stats(tool_report *r, const char *command, const pure_link_stats *endpoint, const pure_link_stats *sender,
                      const pl_io_stats *io, const char *extra_json, uint64_t now_ns) {
    if (r->stats_file == NULL) return TOOL_OK;
    FILE *f = r->stats_file;
    int to_stdout = f == stdout;
    fprintf(f, "{\"command\":\"%s\",\"seconds\":%.6f,\"cpu_seconds\":%.6f", command, (double)(now_ns - r->start_ns) / 1e9,
            cpu_seconds());
    json_stats(f, "endpoint", endpoint);
    if (sender) json_stats(f, "sender", sender);
    fprintf(f, ",\"io\":{\"datagrams_in\":%llu,\"datagrams_out\":%llu,\"bytes_in\":%llu,\"bytes_out\":%llu,"
               "\"gro_batches\":%llu,\"gso_batches\":%llu,\"send_full\":%llu,\"send_dropped\":%llu,"
               "\"recv_calls\":%llu,\"send_calls\":%llu,\"wait_calls\":%llu,\"syncs\":%llu,"
               "\"send_too_big\":%llu,\"retries\":%llu,\"errqueue_messages\":%llu,\"hints_too_big\":%llu,"
               "\"hints_unreachable\":%llu,\"datagram_bytes_most\":%llu}",
            (unsigned long long)io->datagrams_in, (unsigned long long)io->datagrams_out,
            (unsigned long long)io->bytes_in, (unsigned long long)io->bytes_out, (unsigned long long)io->gro_batches,
            (unsigned long long)io->gso_batches, (unsigned long long)io->send_full,
            (unsigned long long)io->send_dropped, (unsigned long long)io->recv_calls,
            (unsigned long long)io->send_calls, (unsigned long long)io->wait_calls, (unsigned long long)io->syncs,
            (unsigned long long)io->send_too_big, (unsigned long long)io->retries,
            (unsigned long long)io->errqueue_messages, (unsigned long long)io->hints_too_big,
            (unsigned long long)io->hints_unreachable, (unsigned long long)io->datagram_bytes_most);
    if (extra_json) fprintf(f, ",%s", extra_json);
    fprintf(f, "}\n");
    int bad = ferror(f);
    if (!to_stdout) bad |= fclose(f) != 0;
    else bad |= fflush(f) != 0;
    r->stats_file = NULL;
    if (bad) {
        tool_log("--stats %s: write failed", r->stats_path);
        return TOOL_ERR_SYSTEM;
    }
    return TOOL_OK;
}
