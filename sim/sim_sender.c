/* sim_sender.c: the sending application of a link.  See sim_host.h.
 *
 * The application numbers its records 0, 1, 2 ... and is durable: it outlives crashes of
 * its node.  Each record starts with its write time (u64 LE, virtual ns) and its number
 * (u64 LE; when the record has room), so the receiving host can measure latency and
 * recognise records.  Modes:
 *   bulk:  records are written whenever the core takes them (the send queue stays full);
 *   paced: record k is written at start + k / rate; records the core cannot take yet
 *          wait in the application, keeping their write time.
 * When the sending node restarts, its new endpoint opens the link with a new run, and the
 * application hands over again every record not yet confirmed stored. */
#include "sim_host.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define SIM_RECORD_BUFFER_MOST ((size_t)PURE_LINK_RECORD_MOST + 1) /* one byte over, to test refusal */

static void put_le64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static int grow_u64(uint64_t **a, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    uint64_t *p = realloc(*a, c * sizeof *p);
    if (p == NULL) return -1;
    *a = p;
    *cap = c;
    return 0;
}

int sim_link_setup(sim_world *w, sim_link *l, char *err, size_t err_len) {
    const sim_link_spec *s = l->spec;
    l->from = s->from;
    l->to = s->to;
    l->sender = -1;
    l->count_limit = s->count;
    if (s->record_bytes > SIM_RECORD_BUFFER_MOST) {
        snprintf(err, err_len, "link %u: record_bytes above %zu", l->index + 1, SIM_RECORD_BUFFER_MOST);
        return -1;
    }
    l->record = malloc(s->record_bytes ? s->record_bytes : 1);
    if (l->record == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    /* A fixed pattern after the header: the content does not matter to the protocol. */
    for (uint64_t i = 0; i < s->record_bytes; i++) l->record[i] = (uint8_t)(i * 131u + l->index);
    (void)w;
    return 0;
}

void sim_link_free(sim_link *l) {
    free(l->record);
    free(l->write_ns);
    free(l->handed);
    free(l->latency_ns);
    l->record = NULL;
    l->write_ns = NULL;
    l->handed = NULL;
    l->latency_ns = NULL;
}

static void trace_link(sim_world *w, const sim_link *l, const char *name) {
    sim_trace_begin(&w->trace, w->engine.now_ns, name);
    sim_trace_str(&w->trace, "node", sim_node_name(w, l->from));
    sim_trace_str(&w->trace, "to", sim_node_name(w, l->to));
    sim_trace_str(&w->trace, "source", l->spec->source);
}

static const char *reason_text(uint32_t reason) {
    switch (reason) {
    case 1: return "no input of that name";
    case 2: return "the input has another shape";
    case 3: return "this key may not send as that source";
    default: return "unknown reason";
    }
}

static void check_done(sim_world *w, sim_link *l) {
    if (l->done || !l->writing_over || l->stored < l->written) return;
    l->done = 1;
    l->done_ns = w->engine.now_ns;
    trace_link(w, l, "app:link_done");
    sim_trace_u64(&w->trace, "records", l->written);
    sim_trace_end(&w->trace);
}

static void maybe_close(sim_world *w, sim_link *l) {
    if (!l->writing_over || l->queued_next < l->written || l->close_called || l->sender < 0 ||
        !l->spec->close_when_done)
        return;
    sim_node *n = &w->nodes[l->from];
    int r = pure_link_sender_close(n->pl, l->sender, w->engine.now_ns);
    l->close_called = 1;
    if (r != 0) sim_node_api_error(w, n, "pure_link_sender_close", r);
}

void sim_link_open(sim_world *w, sim_link *l) {
    sim_node *n = &w->nodes[l->from];
    const sim_node *to = &w->nodes[l->to];
    if (!sim_node_up(n) || l->sender >= 0) return;
    pure_link_sender_config cfg;
    memset(&cfg, 0, sizeof cfg);
    memcpy(cfg.receiver_public, to->public_key, 32);
    cfg.receiver_addr = to->addr;
    cfg.version = PURE_LINK_VERSION;
    cfg.source = l->spec->source;
    cfg.input = l->spec->input;
    cfg.shape = l->spec->shape;
    int h = pure_link_sender_open(n->pl, &cfg, w->engine.now_ns);
    if (h < 0) {
        sim_node_api_error(w, n, "pure_link_sender_open", h);
        sim_world_log(w, "node %s: cannot open link %s to %s: %s", n->spec->name, l->spec->source, to->spec->name,
                      pure_link_strerror(h));
        return;
    }
    if ((uint32_t)h >= n->sender_capacity) {
        uint32_t cap = n->sender_capacity ? n->sender_capacity : 4;
        while (cap <= (uint32_t)h) cap *= 2;
        uint32_t *p = realloc(n->sender_links, cap * sizeof *p);
        if (p == NULL) {
            sim_world_fail(w, "out of memory");
            return;
        }
        for (uint32_t i = n->sender_capacity; i < cap; i++) p[i] = SIM_NO_LINK;
        n->sender_links = p;
        n->sender_capacity = cap;
    }
    n->sender_links[h] = l->index;
    l->sender = h;
    l->sender_incarnation = n->incarnation;
    l->run_base = l->stored;
    l->queued_next = l->stored; /* everything not confirmed goes again */
    l->close_called = 0;
    l->closed = 0;
    l->fill_wanted = 1;
    trace_link(w, l, "app:sender_open");
    sim_trace_i64(&w->trace, "sender", h);
    sim_trace_u64(&w->trace, "first_record", l->run_base);
    sim_trace_end(&w->trace);
}

static void copy_gauges(pure_link_stats *to, const pure_link_stats *from) {
    to->rtt_ns_latest = from->rtt_ns_latest;
    to->rtt_ns_min = from->rtt_ns_min;
    to->rtt_ns_smoothed = from->rtt_ns_smoothed;
    to->rtt_ns_variance = from->rtt_ns_variance;
    to->cwnd_bytes = from->cwnd_bytes;
    to->bytes_in_flight = from->bytes_in_flight;
    to->pacing_rate_bytes_per_s = from->pacing_rate_bytes_per_s;
}

void sim_link_on_crash(sim_world *w, sim_link *l) {
    sim_node *n = &w->nodes[l->from];
    if (l->sender >= 0 && n->pl) {
        pure_link_stats s;
        memset(&s, 0, sizeof s);
        s.version = PURE_LINK_STATS_VERSION;
        if (pure_link_stats_get(n->pl, l->sender, &s) == 0) {
            sim_stats_add(&l->past, &s);
            copy_gauges(&l->past, &s); /* gauges are not sums: keep the last sender's */
        }
    }
    l->sender = -1;
    l->fill_wanted = 0;
}

static void schedule_write(sim_world *w, sim_link *l, uint64_t k) {
    const sim_link_spec *s = l->spec;
    if (s->count && k >= s->count) {
        l->writing_over = 1;
        return;
    }
    /* k-th write at start + k * 10^12 / (records per 1000 s), exact. */
    unsigned __int128 off = (unsigned __int128)k * 1000000000000ull / s->rate_milli_per_s;
    uint64_t at = s->start_ns + (uint64_t)off;
    if (off > UINT64_MAX - s->start_ns || at >= s->until_ns || at >= w->sc->duration_ns) {
        if (at >= s->until_ns) l->writing_over = 1;
        return;
    }
    sim_world_at(w, at, SIM_EV_APP_WRITE, l->index, k, NULL);
}

void sim_link_on_start(sim_world *w, sim_link *l) {
    l->started = 1;
    trace_link(w, l, "app:link_start");
    sim_trace_str(&w->trace, "input", l->spec->input);
    sim_trace_u64(&w->trace, "shape", l->spec->shape);
    sim_trace_u64(&w->trace, "record_bytes", l->spec->record_bytes); /* goodput from records_stored */
    sim_trace_end(&w->trace);
    if (l->spec->mode == SIM_MODE_PACED) schedule_write(w, l, 0);
    sim_link_open(w, l);
    sim_node *n = &w->nodes[l->from];
    if (sim_node_up(n)) sim_node_service(w, n);
}

/* The application produces its next record now. */
static int produce(sim_world *w, sim_link *l) {
    if (grow_u64(&l->write_ns, &l->write_capacity, l->written + 1) != 0) {
        sim_world_fail(w, "out of memory for records");
        return -1;
    }
    l->write_ns[l->written++] = w->engine.now_ns;
    return 0;
}

void sim_link_on_write(sim_world *w, sim_link *l, uint64_t k) {
    if (l->writing_over) return;
    assert(k == l->written);
    if (produce(w, l) != 0) return;
    l->fill_wanted = 1;
    schedule_write(w, l, k + 1);
    sim_node *n = &w->nodes[l->from];
    if (sim_node_up(n)) sim_node_service(w, n);
}

void sim_link_on_until(sim_world *w, sim_link *l) {
    l->writing_over = 1;
    l->fill_wanted = 1;
    sim_node *n = &w->nodes[l->from];
    if (sim_node_up(n)) sim_node_service(w, n);
    check_done(w, l);
}

void sim_link_on_more(sim_world *w, sim_link *l, uint32_t more) {
    assert(more < l->spec->more_count && more == l->more_fired);
    l->more_fired++;
    if (l->writing_over) return; /* `until` came first */
    l->count_limit += l->spec->more[more].count;
    l->fill_wanted = 1;
    trace_link(w, l, "app:more");
    sim_trace_u64(&w->trace, "records", l->spec->more[more].count);
    sim_trace_end(&w->trace);
    sim_node *n = &w->nodes[l->from];
    if (sim_node_up(n)) sim_node_service(w, n);
}

int sim_link_fill(sim_world *w, sim_link *l) {
    const sim_link_spec *s = l->spec;
    sim_node *n = &w->nodes[l->from];
    l->fill_wanted = 0;
    if (l->sender < 0 || !sim_node_up(n)) return 0;
    int took = 0;
    for (;;) {
        int produced_now = 0;
        if (l->queued_next == l->written) {
            int more = s->mode == SIM_MODE_BULK && !l->writing_over && (s->count == 0 || l->written < l->count_limit);
            if (!more) break;
            if (produce(w, l) != 0) break;
            produced_now = 1;
        }
        uint64_t k = l->queued_next;
        size_t len = (size_t)s->record_bytes;
        if (len >= 8) put_le64(l->record, l->write_ns[k]);
        if (len >= SIM_RECORD_HEADER_BYTES) put_le64(l->record + 8, k);
        int64_t r = pure_link_send(n->pl, l->sender, l->record, len, w->engine.now_ns);
        if (r < 0) {
            if (produced_now) l->written--; /* a bulk record is written when the core takes it */
            if (r == PURE_LINK_ERR_FULL) {
                l->send_full++;
            } else if (r == PURE_LINK_ERR_TOO_BIG) {
                l->send_too_big++;
                l->writing_over = 1;
                trace_link(w, l, "app:too_big");
                sim_trace_u64(&w->trace, "len", len);
                sim_trace_end(&w->trace);
                sim_world_log(w, "node %s: link %s: a record of %zu B is refused at enqueue", n->spec->name, s->source, len);
            } else {
                l->send_errors++;
                sim_node_api_error(w, n, "pure_link_send", (int)r);
            }
            break;
        }
        if ((uint64_t)r != k - l->run_base) sim_node_api_error(w, n, "pure_link_send numbered a record unexpectedly", (int)r);
        l->queued_next++;
        l->records_sent++;
        took = 1;
    }
    /* Writing is over only when no `more` batch is still to come. */
    if (s->mode == SIM_MODE_BULK && s->count && l->written >= l->count_limit && l->more_fired == s->more_count)
        l->writing_over = 1;
    maybe_close(w, l);
    check_done(w, l);
    return took;
}

void sim_link_on_event(sim_world *w, sim_link *l, const pure_link_event *ev) {
    l->run = ev->run;
    switch (ev->kind) {
    case PURE_LINK_EVENT_STORED: {
        l->stored_events++;
        uint64_t confirmed = l->run_base + (uint64_t)(ev->record < 0 ? 0 : ev->record);
        if (confirmed > l->queued_next) {
            sim_node_api_error(w, &w->nodes[l->from], "STORED beyond the records sent", (int)ev->record);
            confirmed = l->queued_next;
        }
        if (confirmed > l->stored) l->stored = confirmed;
        l->fill_wanted = 1;
        trace_link(w, l, "app:stored_heard");
        sim_trace_id(&w->trace, "run", ev->run);
        sim_trace_i64(&w->trace, "record", ev->record);
        sim_trace_end(&w->trace);
        check_done(w, l);
        break;
    }
    case PURE_LINK_EVENT_REFUSED:
        l->refused_events++;
        l->last_reason = ev->reason;
        trace_link(w, l, "app:refused");
        sim_trace_id(&w->trace, "run", ev->run);
        sim_trace_u64(&w->trace, "reason", ev->reason);
        sim_trace_end(&w->trace);
        sim_world_log(w, "node %s: link %s -> %s/%s refused (reason %u: %s)", sim_node_name(w, l->from),
                      l->spec->source, sim_node_name(w, l->to), l->spec->input, ev->reason, reason_text(ev->reason));
        break;
    case PURE_LINK_EVENT_RELEASED:
        l->released_events++;
        trace_link(w, l, "app:released");
        sim_trace_id(&w->trace, "run", ev->run);
        sim_trace_end(&w->trace);
        sim_world_log(w, "node %s: link %s -> %s/%s released", sim_node_name(w, l->from), l->spec->source,
                      sim_node_name(w, l->to), l->spec->input);
        break;
    case PURE_LINK_EVENT_CLOSED:
        l->closed = 1;
        trace_link(w, l, "app:closed");
        sim_trace_id(&w->trace, "run", ev->run);
        sim_trace_end(&w->trace);
        break;
    default: break;
    }
}

int sim_link_sender_stats(const sim_world *w, const sim_link *l, pure_link_stats *out) {
    memset(out, 0, sizeof *out);
    out->version = PURE_LINK_STATS_VERSION;
    const sim_node *n = &w->nodes[l->from];
    if (l->sender < 0 || n->pl == NULL) return -1;
    return pure_link_stats_get(n->pl, l->sender, out) == 0 ? 0 : -1;
}

void sim_link_stats(const sim_world *w, const sim_link *l, pure_link_stats *out) {
    *out = l->past;
    out->version = PURE_LINK_STATS_VERSION;
    pure_link_stats now;
    if (sim_link_sender_stats(w, l, &now) != 0) return;
    sim_stats_add(out, &now);
    copy_gauges(out, &now); /* gauges describe the open sender only */
}

void sim_link_sample(sim_world *w, sim_link *l) {
    sim_node *n = &w->nodes[l->from];
    if (l->sender < 0 || !sim_node_up(n)) return;
    pure_link_stats s;
    memset(&s, 0, sizeof s);
    s.version = PURE_LINK_STATS_VERSION;
    if (pure_link_stats_get(n->pl, l->sender, &s) != 0) return;
    l->last = s;
    sim_trace_begin(&w->trace, w->engine.now_ns, "recovery:metrics_updated");
    sim_trace_str(&w->trace, "node", n->spec->name);
    sim_trace_str(&w->trace, "source", l->spec->source);
    sim_trace_u64(&w->trace, "rtt_ns_smoothed", s.rtt_ns_smoothed);
    sim_trace_u64(&w->trace, "rtt_ns_min", s.rtt_ns_min);
    sim_trace_u64(&w->trace, "rtt_ns_latest", s.rtt_ns_latest);
    sim_trace_u64(&w->trace, "rtt_ns_variance", s.rtt_ns_variance);
    sim_trace_u64(&w->trace, "cwnd_bytes", s.cwnd_bytes);
    sim_trace_u64(&w->trace, "bytes_in_flight", s.bytes_in_flight);
    sim_trace_u64(&w->trace, "pacing_rate_bytes_per_s", s.pacing_rate_bytes_per_s);
    sim_trace_u64(&w->trace, "packets_sent", s.packets_sent);
    sim_trace_u64(&w->trace, "packets_lost", s.packets_lost);
    sim_trace_u64(&w->trace, "packets_retransmitted", s.packets_retransmitted);
    sim_trace_u64(&w->trace, "records_stored", s.records_stored);
    sim_trace_u64(&w->trace, "datagram_bytes", s.datagram_bytes);
    sim_trace_end(&w->trace);
}
