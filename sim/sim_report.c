/* sim_report.c: the run's figures: progress lines, the summary in words, the JSON line.
 * The JSON key names are read by other tools: keep them stable (sim/README.md lists them). */
#include "sim_report.h"

#include "sim_host.h"
#include "sim_oracle.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t sim_percentile(uint64_t *samples, size_t n, unsigned percent) {
    if (n == 0) return 0;
    qsort(samples, n, sizeof *samples, cmp_u64);
    /* Nearest rank: the smallest sample with at least percent% of samples at or below it. */
    size_t rank = (size_t)(((unsigned __int128)n * percent + 99) / 100);
    if (rank == 0) rank = 1;
    return samples[rank - 1];
}

static double ms(uint64_t ns) { return (double)ns / 1e6; }

/* Latency figures over the given links' samples (all links when link == NULL). */
static size_t latency(const sim_world *w, const sim_link *only, double *p50, double *p99, double *max) {
    size_t n = 0;
    for (uint32_t i = 0; i < w->link_count; i++)
        if (only == NULL || only == &w->links[i]) n += w->links[i].latency_count;
    *p50 = *p99 = *max = 0;
    if (n == 0) return 0;
    uint64_t *all = malloc(n * sizeof *all);
    if (all == NULL) return 0;
    size_t k = 0;
    for (uint32_t i = 0; i < w->link_count; i++) {
        const sim_link *l = &w->links[i];
        if (only != NULL && only != l) continue;
        /* A link without samples has no array, and memcpy from NULL is undefined even for 0 B. */
        if (l->latency_count) memcpy(all + k, l->latency_ns, l->latency_count * sizeof *all);
        k += l->latency_count;
    }
    *p50 = ms(sim_percentile(all, n, 50));
    *p99 = ms(sim_percentile(all, n, 99));
    *max = ms(all[n - 1]);
    free(all);
    return n;
}

void sim_report_totals(const sim_world *w, sim_totals *t) {
    memset(t, 0, sizeof *t);
    t->virtual_s = (double)w->end_ns / 1e9;
    for (uint32_t i = 0; i < w->node_count; i++) {
        const sim_node *n = &w->nodes[i];
        t->packets_sent += n->datagrams_sent;
        t->packets_received += n->datagrams_received;
        t->records_delivered += n->records_delivered;
        t->duplicates_delivered += n->duplicates_delivered;
        t->out_of_order += n->out_of_order;
        for (size_t r = 0; r < n->run_count; r++) {
            t->records_stored += (uint64_t)n->runs[r].stored_mark;
            t->stored_bytes += n->runs[r].stored_bytes;
        }
        pure_link_stats s;
        sim_node_stats(n, &s);
        t->lost_notices += s.lost_notices_sent;     /* LOST notices the receivers sent */
        t->refused_notices += s.link_refused;       /* REFUSED notices the senders heard */
        t->run_key_builds += s.run_key_builds;
        t->x25519_ops += s.x25519_ops;
        t->epochs += s.epochs;
        t->packets_lost += s.packets_lost;
        t->packets_retransmitted += s.packets_retransmitted;
        uint64_t amp, unanswered;
        sim_oracle_amplification(n, &amp, &unanswered);
        if (amp > t->amplification_max_x1000) t->amplification_max_x1000 = amp;
        if (unanswered > t->amplification_unanswered_max_x1000) t->amplification_unanswered_max_x1000 = unanswered;
        t->epoch_rollbacks += n->epoch_rollbacks;
    }
    t->nonce_reuses = w->keys.reuses;
    t->aead_seals = w->keys.seals;
    for (uint32_t i = 0; i < w->link_count; i++) {
        t->records_sent += w->links[i].records_sent;
        t->refused_events += w->links[i].refused_events; /* refusal episodes (REFUSED events) */
    }
    if (t->virtual_s > 0) {
        t->goodput_mbit = (double)t->stored_bytes * 8 / t->virtual_s / 1e6;
        t->records_per_s = (double)t->records_stored / t->virtual_s;
    }
    t->latency_count = latency(w, NULL, &t->latency_ms_p50, &t->latency_ms_p99, &t->latency_ms_max);
}

static uint64_t stored_bytes_now(const sim_world *w) {
    uint64_t b = 0;
    for (uint32_t i = 0; i < w->node_count; i++)
        for (size_t r = 0; r < w->nodes[i].run_count; r++) b += w->nodes[i].runs[r].stored_bytes;
    return b;
}

/* --realtime: sleep until as much wall time has passed since the first call as virtual
 * time has.  It only slows the printing; nothing of the run depends on it. */
static void wait_for_wall_clock(uint64_t virtual_ns) {
    static uint64_t start_ns;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t wall_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
    if (start_ns == 0) start_ns = wall_ns - virtual_ns;
    if (start_ns + virtual_ns <= wall_ns) return;
    uint64_t wait_ns = start_ns + virtual_ns - wall_ns;
    struct timespec d = {(time_t)(wait_ns / 1000000000ull), (long)(wait_ns % 1000000000ull)};
    nanosleep(&d, NULL);
}

void sim_report_progress(sim_world *w) {
    uint64_t bytes = stored_bytes_now(w);
    uint64_t delta = bytes - w->progress_last_bytes;
    w->progress_last_bytes = bytes;
    FILE *f = w->opt.progress;
    if (f == NULL) return;
    uint64_t records = 0;
    for (uint32_t i = 0; i < w->node_count; i++)
        for (size_t r = 0; r < w->nodes[i].run_count; r++) records += (uint64_t)w->nodes[i].runs[r].stored_mark;
    double secs = (double)w->sc->progress_interval_ns / 1e9;
    fprintf(f, "[%8.3f s] stored %10llu records  goodput %7.2f Mbit/s", (double)w->engine.now_ns / 1e9,
            (unsigned long long)records, (double)delta * 8 / secs / 1e6);
    /* RTT and window of the first link's open sender. */
    if (w->link_count > 0) {
        const sim_link *l = &w->links[0];
        fprintf(f, "  rtt %7.2f ms  cwnd %8llu B  in flight %8llu B  lost %llu", ms(l->last.rtt_ns_smoothed),
                (unsigned long long)l->last.cwnd_bytes, (unsigned long long)l->last.bytes_in_flight,
                (unsigned long long)l->last.packets_lost);
    }
    if (w->tcp_count > 0) { /* TCP flows together: goodput over the last interval */
        uint64_t tcp = 0;
        for (uint32_t i = 0; i < w->tcp_count; i++) tcp += sim_tcp_delivered_bytes(&w->tcps[i]);
        fprintf(f, "  tcp %7.2f Mbit/s", (double)(tcp - w->progress_last_tcp_bytes) * 8 / secs / 1e6);
        w->progress_last_tcp_bytes = tcp;
    }
    fputc('\n', f);
    fflush(f);
    if (w->opt.realtime) wait_for_wall_clock(w->engine.now_ns);
}

static const char *end_reason(const sim_world *w) {
    if (w->error) return "error";
    for (uint32_t i = 0; i < w->link_count; i++)
        if (!w->links[i].done) return "duration";
    return w->link_count ? "done" : "duration";
}

void sim_report_words(const sim_world *w, FILE *out) {
    sim_totals t;
    sim_report_totals(w, &t);
    uint64_t written = 0;
    for (uint32_t i = 0; i < w->link_count; i++) written += w->links[i].written;
    fprintf(out, "pure-link-sim: %.3f s of virtual time, seed %llu, ended by %s\n", t.virtual_s,
            (unsigned long long)w->seed, end_reason(w));
    if (w->error) fprintf(out, "  ERROR: %s\n", w->error);
    fprintf(out, "  records: %llu stored of %llu written (handed over %llu, duplicates %llu, out of order %llu)\n",
            (unsigned long long)t.records_stored, (unsigned long long)written, (unsigned long long)t.records_delivered,
            (unsigned long long)t.duplicates_delivered, (unsigned long long)t.out_of_order);
    fprintf(out, "  goodput: %.2f Mbit/s of record bytes, %.0f records/s\n", t.goodput_mbit, t.records_per_s);
    fprintf(out, "  packets: %llu sent, %llu received; %llu lost, %llu retransmitted\n",
            (unsigned long long)t.packets_sent, (unsigned long long)t.packets_received,
            (unsigned long long)t.packets_lost, (unsigned long long)t.packets_retransmitted);
    for (uint32_t i = 0; i < w->link_count; i++) {
        const sim_link *l = &w->links[i];
        pure_link_stats s;
        sim_link_stats(w, l, &s);
        fprintf(out, "  link %s -> %s/%s: %llu stored", sim_node_name(w, l->from), sim_node_name(w, l->to),
                l->spec->input, (unsigned long long)l->host_stored);
        if (l->done) fprintf(out, " (all by %.3f s)", (double)l->done_ns / 1e9);
        fprintf(out, "; rtt min %.2f ms, smoothed %.2f ms; cwnd %llu B", ms(s.rtt_ns_min), ms(s.rtt_ns_smoothed),
                (unsigned long long)s.cwnd_bytes);
        if (l->refused_events) fprintf(out, "; refused %llu times", (unsigned long long)l->refused_events);
        if (l->send_too_big) fprintf(out, "; a %llu B record was refused at enqueue", (unsigned long long)l->spec->record_bytes);
        fputc('\n', out);
    }
    for (uint32_t i = 0; i < w->tcp_count; i++) {
        const sim_tcp *tc = &w->tcps[i];
        fprintf(out, "  tcp %s -> %s (%s%s): %.2f MB delivered; %llu segments, %llu retransmitted, %llu fast recoveries, "
                "%llu timeouts; rtt min %.2f ms, smoothed %.2f ms; cwnd %llu segments\n",
                sim_node_name(w, tc->spec->from), sim_node_name(w, tc->spec->to), sim_tcp_algo_name(tc->spec->algo),
                tc->spec->pacing ? ", paced" : "", (double)sim_tcp_delivered_bytes(tc) / 1e6,
                (unsigned long long)tc->segments_sent, (unsigned long long)tc->retransmissions,
                (unsigned long long)tc->fast_recoveries, (unsigned long long)tc->timeouts, ms(tc->rtt_ns_min),
                ms(tc->srtt_ns), (unsigned long long)sim_tcp_cc_cwnd(&tc->cc));
    }
    if (w->tcp_count > 0) {
        uint64_t lb[SIM_LINKS_MOST], tb[SIM_TCP_FLOWS_MOST], sum = 0;
        uint64_t span = sim_report_share(w, lb, tb);
        for (uint32_t i = 0; i < w->link_count; i++) sum += lb[i];
        for (uint32_t i = 0; i < w->tcp_count; i++) sum += tb[i];
        fprintf(out, "  share over the last %.3f s:", (double)span / 1e9);
        for (uint32_t i = 0; i < w->link_count; i++)
            fprintf(out, " link %u %.3f", i + 1, sum ? (double)lb[i] / (double)sum : 0.0);
        for (uint32_t i = 0; i < w->tcp_count; i++)
            fprintf(out, " tcp %u %.3f", i + 1, sum ? (double)tb[i] / (double)sum : 0.0);
        fputc('\n', out);
    }
    fprintf(out, "  keys: %llu epochs, %llu run-key builds, %llu X25519 operations; LOST notices %llu, REFUSED notices %llu\n",
            (unsigned long long)t.epochs, (unsigned long long)t.run_key_builds, (unsigned long long)t.x25519_ops,
            (unsigned long long)t.lost_notices, (unsigned long long)t.refused_notices);
    /* Only the unanswered figure is a bound (3x): a sender sends far more than it hears back. */
    fprintf(out, "  oracles: %llu (key, nonce) reuses in %llu seals; %llu epoch rollbacks; to addresses that "
            "never answered at most %.3fx what came from them (limit 3x)\n",
            (unsigned long long)t.nonce_reuses, (unsigned long long)t.aead_seals, (unsigned long long)t.epoch_rollbacks,
            (double)t.amplification_unanswered_max_x1000 / 1000);
    if (w->replayed_datagrams || w->spoofed_datagrams || w->datagrams_unroutable)
        fprintf(out, "  attacker: %llu datagrams replayed, %llu spoofed; %llu datagrams found no node\n",
                (unsigned long long)w->replayed_datagrams, (unsigned long long)w->spoofed_datagrams,
                (unsigned long long)w->datagrams_unroutable);
    if (t.latency_count)
        fprintf(out, "  paced latency (write -> hand-over): p50 %.2f ms, p99 %.2f ms, max %.2f ms over %llu records\n",
                t.latency_ms_p50, t.latency_ms_p99, t.latency_ms_max, (unsigned long long)t.latency_count);
    for (uint32_t i = 0; i < w->node_count; i++) {
        const sim_node *n = &w->nodes[i];
        if (n->crashes) fprintf(out, "  node %s: crashed %llu times, restarted %llu times\n", n->spec->name,
                                (unsigned long long)n->crashes, (unsigned long long)n->restarts);
        if (n->address_changes) {
            char addr[SIM_ADDR_TEXT_MOST];
            sim_addr_text(&n->addr, addr);
            fprintf(out, "  node %s: changed address %llu times, now %s\n", n->spec->name,
                    (unsigned long long)n->address_changes, addr);
        }
        if (n->api_errors) fprintf(out, "  node %s: %llu API calls failed (see the trace)\n", n->spec->name,
                                   (unsigned long long)n->api_errors);
    }
    fprintf(out, "  trace: %llu records, %llu bytes, hash %016llx; %llu events\n", (unsigned long long)w->trace.records,
            (unsigned long long)w->trace.bytes, (unsigned long long)w->trace.hash,
            (unsigned long long)w->engine.events_run);
}

/* ---- JSON ---- */

static void json_string(FILE *out, const char *s) {
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(out, "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f) fprintf(out, "\\u%04x", *p);
        else fputc(*p, out);
    }
    fputc('"', out);
}

static void ju(FILE *out, const char *key, uint64_t v) { fprintf(out, ",\"%s\":%llu", key, (unsigned long long)v); }
static void jd(FILE *out, const char *key, double v) { fprintf(out, ",\"%s\":%.6g", key, v); }

static void json_stats(FILE *out, const pure_link_stats *s) {
#define F(name) ju(out, #name, s->name);
    PURE_LINK_STATS_COUNTERS(F)
#undef F
}

static void json_node(const sim_world *w, const sim_node *n, FILE *out) {
    pure_link_stats s;
    sim_node_stats(n, &s);
    json_string(out, n->spec->name);
    fprintf(out, ":{\"up\":%d", sim_node_up(n));
    ju(out, "datagrams_sent", n->datagrams_sent);
    ju(out, "datagrams_received", n->datagrams_received);
    ju(out, "lost_bytes_sent", n->lost_bytes_sent);
    ju(out, "lost_bytes_per_s_most", n->lost_bytes_per_s_most);
    ju(out, "crashes", n->crashes);
    ju(out, "restarts", n->restarts);
    ju(out, "api_errors", n->api_errors);
    ju(out, "records_delivered", n->records_delivered);
    ju(out, "duplicates_delivered", n->duplicates_delivered);
    ju(out, "out_of_order", n->out_of_order);
    ju(out, "streams_refused", n->streams_refused);
    ju(out, "memo_loads", n->memo_loads);
    ju(out, "memo_rejected", n->memo_rejected);
    ju(out, "memo_writes", n->disk.writes);
    ju(out, "memo_writes_lost", n->disk.dropped);
    ju(out, "memo_writes_torn", n->disk.torn);
    ju(out, "store_sync_failures", n->store_fault.sync_failures);
    ju(out, "store_full_stops", n->store_fault.full_stops);
    ju(out, "store_tail_records_kept", n->store_fault.tail_records_kept);
    ju(out, "memo_writes_landed_unconfirmed", n->store_fault.memo_writes_landed);
    ju(out, "memory_bytes", n->memory_bytes);
    /* RTT of the node's first link, if it sends. */
    for (uint32_t i = 0; i < w->link_count; i++) {
        if (w->links[i].from != n->index) continue;
        pure_link_stats ls;
        sim_link_stats(w, &w->links[i], &ls);
        jd(out, "rtt_ms_smoothed", ms(ls.rtt_ns_smoothed));
        jd(out, "rtt_ms_min", ms(ls.rtt_ns_min));
        ju(out, "cwnd_bytes", ls.cwnd_bytes);
        break;
    }
    char addr[SIM_ADDR_TEXT_MOST];
    sim_addr_text(&n->addr, addr);
    fprintf(out, ",\"addr\":");
    json_string(out, addr);
    ju(out, "address_changes", n->address_changes);
    ju(out, "aead_seals", n->index < SIM_KEYS_NODES_MOST ? w->keys.node_seals[n->index] : 0);
    ju(out, "nonce_reuses", n->index < SIM_KEYS_NODES_MOST ? w->keys.node_reuses[n->index] : 0);
    uint64_t amp, unanswered;
    sim_oracle_amplification(n, &amp, &unanswered);
    ju(out, "amplification_max_x1000", amp);
    ju(out, "amplification_unanswered_max_x1000", unanswered);
    ju(out, "epoch_rollbacks", n->epoch_rollbacks);
    /* The running incarnation's (node, address) pairs. */
    fprintf(out, ",\"amplification_pairs\":[");
    for (size_t i = 0; i < n->amp_count; i++) {
        const sim_amp_pair *p = &n->amp[i];
        sim_addr_text(&p->addr, addr);
        fprintf(out, "%s{\"addr\":", i ? "," : "");
        json_string(out, addr);
        fprintf(out, ",\"received_bytes\":%llu,\"sent_bytes\":%llu,\"max_x1000\":%llu,\"answered\":%d}",
                (unsigned long long)p->received_bytes, (unsigned long long)p->sent_bytes,
                (unsigned long long)p->max_x1000, p->answered);
    }
    fputc(']', out);
    json_stats(out, &s);
    /* The running endpoint alone, e.g. to see that a restart did no X25519 work. */
    pure_link_stats cur;
    memset(&cur, 0, sizeof cur);
    cur.version = PURE_LINK_STATS_VERSION;
    if (n->pl) pure_link_stats_get(n->pl, -1, &cur);
    fprintf(out, ",\"current_incarnation\":{\"incarnation\":%u", n->incarnation);
    json_stats(out, &cur);
    fprintf(out, "}}");
}

static void json_link(const sim_world *w, const sim_link *l, FILE *out) {
    pure_link_stats s;
    sim_link_stats(w, l, &s);
    fprintf(out, "{\"from\":");
    json_string(out, sim_node_name(w, l->from));
    fprintf(out, ",\"to\":");
    json_string(out, sim_node_name(w, l->to));
    fprintf(out, ",\"source\":");
    json_string(out, l->spec->source);
    fprintf(out, ",\"input\":");
    json_string(out, l->spec->input);
    fprintf(out, ",\"mode\":\"%s\"", l->spec->mode == SIM_MODE_PACED ? "paced" : "bulk");
    ju(out, "records_written", l->written);
    ju(out, "records_sent", l->records_sent);
    ju(out, "records_confirmed", l->stored);
    ju(out, "records_delivered", l->host_delivered);
    ju(out, "records_stored", l->host_stored);
    ju(out, "duplicates_delivered", l->duplicates);
    ju(out, "out_of_order", l->out_of_order);
    fprintf(out, ",\"done\":%d", l->done);
    if (l->done) jd(out, "done_ms", ms(l->done_ns));
    uint64_t span = l->done ? l->done_ns : w->end_ns;
    jd(out, "goodput_mbit", span ? (double)l->host_stored_bytes * 8 / ((double)span / 1e9) / 1e6 : 0);
    ju(out, "refused_events", l->refused_events);
    ju(out, "released_events", l->released_events);
    ju(out, "epoch_events", l->epoch_events);
    ju(out, "send_full", l->send_full);
    ju(out, "send_too_big", l->send_too_big);
    jd(out, "rtt_ms_smoothed", ms(s.rtt_ns_smoothed));
    jd(out, "rtt_ms_min", ms(s.rtt_ns_min));
    ju(out, "cwnd_bytes", s.cwnd_bytes);
    ju(out, "bytes_in_flight", s.bytes_in_flight);
    ju(out, "packets_lost", s.packets_lost);
    ju(out, "packets_retransmitted", s.packets_retransmitted);
    ju(out, "records_resent", s.records_resent);
    ju(out, "datagram_bytes", s.datagram_bytes);
    ju(out, "pmtu_probes_sent", s.pmtu_probes_sent);
    ju(out, "pmtu_probes_lost", s.pmtu_probes_lost);
    ju(out, "pmtu_black_holes", s.pmtu_black_holes);
    ju(out, "restart_recoveries", l->recoveries);
    jd(out, "restart_recovery_ms_max", ms(l->recovery_ns_max));
    double p50, p99, max;
    if (latency(w, l, &p50, &p99, &max)) {
        jd(out, "latency_ms_p50", p50);
        jd(out, "latency_ms_p99", p99);
        jd(out, "latency_ms_max", max);
    }
    fputc('}', out);
}

uint64_t sim_report_share(const sim_world *w, uint64_t *links, uint64_t *tcps) {
    const int marked = w->share_marked;
    for (uint32_t i = 0; i < w->link_count; i++)
        links[i] = w->links[i].host_stored_bytes - (marked ? w->links[i].share_mark_bytes : 0);
    for (uint32_t i = 0; i < w->tcp_count; i++)
        tcps[i] = (w->tcps[i].rcv_nxt - (marked ? w->tcps[i].share_mark_segments : 0)) * SIM_TCP_MSS_BYTES;
    uint64_t from = marked ? w->sc->share_from_ns : 0;
    return w->end_ns > from ? w->end_ns - from : 0;
}

static void json_tcp(const sim_world *w, const sim_tcp *t, FILE *out) {
    fprintf(out, "{\"from\":");
    json_string(out, sim_node_name(w, t->spec->from));
    fprintf(out, ",\"to\":");
    json_string(out, sim_node_name(w, t->spec->to));
    fprintf(out, ",\"algo\":\"%s\",\"pacing\":%d", sim_tcp_algo_name(t->spec->algo), t->spec->pacing);
    uint64_t start = t->spec->start_ns, end = t->done ? t->done_ns : w->end_ns;
    uint64_t span = end > start ? end - start : 0;
    jd(out, "goodput_mbit", span ? (double)sim_tcp_delivered_bytes(t) * 8 / ((double)span / 1e9) / 1e6 : 0);
    ju(out, "bytes_delivered", sim_tcp_delivered_bytes(t));
    ju(out, "packets", t->segments_sent);
    ju(out, "retransmissions", t->retransmissions);
    ju(out, "fast_recoveries", t->fast_recoveries);
    ju(out, "timeouts", t->timeouts);
    ju(out, "hystart_exits", t->cc.hystart_exits);
    ju(out, "dropped", t->dropped);
    ju(out, "acks_sent", t->acks_sent);
    ju(out, "acks_dropped", t->acks_dropped);
    ju(out, "cwnd_segments", sim_tcp_cc_cwnd(&t->cc));
    jd(out, "rtt_ms_smoothed", ms(t->srtt_ns));
    jd(out, "rtt_ms_min", ms(t->rtt_ns_min));
    fprintf(out, ",\"reordering_seen\":%d,\"done\":%d", t->reordering_seen, t->done);
    fputc('}', out);
}

/* "share": per link and per TCP flow, its bytes over the sum of all, in the window. */
static void json_share(const sim_world *w, FILE *out) {
    uint64_t lb[SIM_LINKS_MOST], tb[SIM_TCP_FLOWS_MOST], sum = 0;
    uint64_t span = sim_report_share(w, lb, tb);
    for (uint32_t i = 0; i < w->link_count; i++) sum += lb[i];
    for (uint32_t i = 0; i < w->tcp_count; i++) sum += tb[i];
    fprintf(out, ",\"share\":{\"from_s\":%.6g,\"window_s\":%.6g", w->share_marked ? (double)w->sc->share_from_ns / 1e9 : 0.0,
            (double)span / 1e9);
    const uint64_t *sets[2] = {lb, tb};
    const uint32_t counts[2] = {w->link_count, w->tcp_count};
    const char *names[2] = {"links", "tcp"};
    for (int k = 0; k < 2; k++) {
        fprintf(out, ",\"%s\":[", names[k]);
        for (uint32_t i = 0; i < counts[k]; i++)
            fprintf(out, "%s%.6g", i ? "," : "", sum ? (double)sets[k][i] / (double)sum : 0.0);
        fprintf(out, "],\"%s_goodput_mbit\":[", names[k]);
        for (uint32_t i = 0; i < counts[k]; i++)
            fprintf(out, "%s%.6g", i ? "," : "", span ? (double)sets[k][i] * 8 / ((double)span / 1e9) / 1e6 : 0.0);
        fputc(']', out);
    }
    fputc('}', out);
}

static void json_path(const sim_world *w, uint32_t f, uint32_t t, FILE *out) {
    const sim_path *p = &w->paths[f * w->node_count + t];
    const sim_path_counters *c = &p->counters;
    fprintf(out, "{\"from\":");
    json_string(out, sim_node_name(w, f));
    fprintf(out, ",\"to\":");
    json_string(out, sim_node_name(w, t));
    ju(out, "datagrams_in", c->datagrams_in);
    ju(out, "bytes_in", c->bytes_in);
    ju(out, "dropped_loss", c->dropped_loss);
    ju(out, "dropped_burst", c->dropped_burst);
    ju(out, "dropped_queue", c->dropped_queue);
    ju(out, "dropped_mtu", c->dropped_mtu);
    ju(out, "duplicated", c->duplicated);
    ju(out, "corrupted", c->corrupted);
    ju(out, "arrivals", c->arrivals);
    ju(out, "reordered", c->reordered);
    ju(out, "queue_bytes_peak", c->queue_bytes_peak);
    ju(out, "queue_bytes_limit", p->queue_limit_bytes == UINT64_MAX ? 0 : p->queue_limit_bytes);
    fputc('}', out);
}

void sim_report_json(const sim_world *w, FILE *out, double wall_s) {
    sim_totals t;
    sim_report_totals(w, &t);
    fprintf(out, "{\"seed\":%llu", (unsigned long long)w->seed);
    fprintf(out, ",\"end\":\"%s\"", end_reason(w));
    fprintf(out, ",\"error\":");
    if (w->error) json_string(out, w->error);
    else fprintf(out, "null");
    jd(out, "virtual_s", t.virtual_s);
    ju(out, "events", w->engine.events_run);
    ju(out, "packets_sent", t.packets_sent);
    ju(out, "packets_received", t.packets_received);
    ju(out, "records_sent", t.records_sent);
    ju(out, "records_delivered", t.records_delivered);
    ju(out, "records_stored", t.records_stored);
    ju(out, "duplicates_delivered", t.duplicates_delivered);
    ju(out, "out_of_order", t.out_of_order);
    jd(out, "goodput_mbit", t.goodput_mbit);
    jd(out, "records_per_s", t.records_per_s);
    ju(out, "lost_notices", t.lost_notices);
    ju(out, "refused_notices", t.refused_notices);
    ju(out, "refused_events", t.refused_events);
    ju(out, "run_key_builds", t.run_key_builds);
    ju(out, "x25519_ops", t.x25519_ops);
    ju(out, "epochs", t.epochs);
    ju(out, "packets_lost", t.packets_lost);
    ju(out, "packets_retransmitted", t.packets_retransmitted);
    ju(out, "nonce_reuses", t.nonce_reuses);
    ju(out, "aead_seals", t.aead_seals);
    ju(out, "aead_seals_unknown_key", w->keys.unknown_ctx);
    ju(out, "amplification_max_x1000", t.amplification_max_x1000);
    ju(out, "amplification_unanswered_max_x1000", t.amplification_unanswered_max_x1000);
    ju(out, "epoch_rollbacks", t.epoch_rollbacks);
    ju(out, "replayed_datagrams", w->replayed_datagrams);
    ju(out, "spoofed_datagrams", w->spoofed_datagrams);
    ju(out, "forged_datagrams", w->forged_datagrams);
    ju(out, "forwarded_datagrams", w->forwarded_datagrams);
    ju(out, "datagrams_no_route", w->datagrams_unroutable);
    if (t.latency_count) {
        jd(out, "latency_ms_p50", t.latency_ms_p50);
        jd(out, "latency_ms_p99", t.latency_ms_p99);
        jd(out, "latency_ms_max", t.latency_ms_max);
        ju(out, "latency_samples", t.latency_count);
    }
    fprintf(out, ",\"trace_hash\":\"%016llx\"", (unsigned long long)w->trace.hash);
    ju(out, "trace_records", w->trace.records);
    ju(out, "trace_bytes", w->trace.bytes);
    ju(out, "keylog_lines", w->keylog_lines);
    if (wall_s >= 0) {
        jd(out, "wall_s", wall_s);
        jd(out, "speed_x", wall_s > 0 ? t.virtual_s / wall_s : 0);
    }
    fprintf(out, ",\"nodes\":{");
    for (uint32_t i = 0; i < w->node_count; i++) {
        if (i) fputc(',', out);
        json_node(w, &w->nodes[i], out);
    }
    fprintf(out, "},\"links\":[");
    for (uint32_t i = 0; i < w->link_count; i++) {
        if (i) fputc(',', out);
        json_link(w, &w->links[i], out);
    }
    fprintf(out, "],\"paths\":[");
    int first = 1;
    for (uint32_t f = 0; f < w->node_count; f++)
        for (uint32_t to = 0; to < w->node_count; to++) {
            if (f == to || w->paths[f * w->node_count + to].counters.datagrams_in == 0) continue;
            if (!first) fputc(',', out);
            first = 0;
            json_path(w, f, to, out);
        }
    fprintf(out, "],\"tcp\":[");
    for (uint32_t i = 0; i < w->tcp_count; i++) {
        if (i) fputc(',', out);
        json_tcp(w, &w->tcps[i], out);
    }
    fputc(']', out);
    json_share(w, out);
    fprintf(out, "}\n");
}
