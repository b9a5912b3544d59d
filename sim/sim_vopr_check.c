/* sim_vopr_check.c: the invariants pure-link-sim vopr checks on every finished run.
 *
 * The run ends without an error (no livelock, no API misuse, no assertion); no record is
 * handed over twice or out of order; every record handed over was stored at most once; a
 * run whose nodes never crash stores every record it finished sending (an attack does not
 * excuse a stall); no (key, nonce) is sealed twice (the nonce oracle sees every seal) and no
 * seal uses a key no endpoint made; no epoch rolls back; the receiver sends at most 3x what
 * it received to an address that never answered (a sender speaks first to its wired
 * receiver: its figure is only informative); every datagram an endpoint is fed is in
 * packets_opened or in one dropped_* reason. */
#include "sim_vopr.h"

#include "sim_host.h"
#include "sim_oracle.h"
#include "sim_report.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define SIM_VOPR_AMPLIFICATION_X1000_MOST 3000u /* spec/protocol.md: 3x to an unanswered address */

typedef struct why_text {
    char *at;
    size_t len, used;
    int count;
} why_text;

static void broke(why_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void broke(why_text *t, const char *fmt, ...) {
    t->count++;
    if (t->used + 3 >= t->len) return;
    if (t->used) t->used += (size_t)snprintf(t->at + t->used, t->len - t->used, "; ");
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->at + t->used, t->len - t->used, fmt, ap);
    va_end(ap);
    if (n > 0) t->used += (size_t)n < t->len - t->used ? (size_t)n : t->len - t->used - 1;
}

static void check_totals(const sim_world *w, why_text *t) {
    sim_totals s;
    sim_report_totals(w, &s);
    if (w->error) broke(t, "error: %s", w->error);
    if (s.duplicates_delivered) broke(t, "duplicates %llu", (unsigned long long)s.duplicates_delivered);
    if (s.out_of_order) broke(t, "out of order %llu", (unsigned long long)s.out_of_order);
    if (s.records_stored > s.records_delivered) broke(t, "stored more than handed over");
    if (s.nonce_reuses) broke(t, "nonce_reuses %llu", (unsigned long long)s.nonce_reuses);
    if (s.epoch_rollbacks) broke(t, "epoch_rollbacks %llu", (unsigned long long)s.epoch_rollbacks);
    if (w->keys.unknown_ctx) broke(t, "aead_seals_unknown_key %llu", (unsigned long long)w->keys.unknown_ctx);
}

static void check_node(const sim_world *w, const sim_node *n, why_text *t) {
    pure_link_stats s;
    sim_node_stats(n, &s);
    uint64_t accounted = s.packets_opened + s.dropped_bad_header + s.dropped_unknown_key + s.dropped_auth +
                         s.dropped_replay + s.dropped_malformed + s.dropped_no_slot + s.dropped_stale_epoch +
                         s.dropped_no_run;
    if (accounted != s.packets_received)
        broke(t, "node %s: %llu datagrams in, %llu opened or dropped", n->spec->name,
              (unsigned long long)s.packets_received, (unsigned long long)accounted);
    if (strcmp(n->spec->name, "r") != 0) return;
    uint64_t amp, unanswered;
    sim_oracle_amplification(n, &amp, &unanswered);
    if (unanswered > SIM_VOPR_AMPLIFICATION_X1000_MOST)
        broke(t, "amplification %llu/1000 to a silent address", (unsigned long long)unanswered);
    (void)w;
}

static int all_done(const sim_world *w) {
    if (w->error || w->link_count == 0) return 0;
    for (uint32_t i = 0; i < w->link_count; i++)
        if (!w->links[i].done) return 0;
    return 1;
}

int sim_vopr_check(const sim_world *w, int crashes, char *why, size_t why_len) {
    why_text t = {why, why_len, 0, 0};
    why[0] = 0;
    check_totals(w, &t);
    for (uint32_t i = 0; i < w->node_count; i++) check_node(w, &w->nodes[i], &t);
    if (!crashes && all_done(w))
        for (uint32_t i = 0; i < w->link_count; i++) {
            const sim_link *l = &w->links[i];
            if (l->host_stored != l->written)
                broke(&t, "link %s: %llu of %llu stored", l->spec->source, (unsigned long long)l->host_stored,
                      (unsigned long long)l->written);
        }
    return t.count;
}
