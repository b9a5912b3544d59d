/* sim_oracle.c: properties watched from outside the core (BRIEF §3), per node.  See
 * sim_oracle.h.  (The nonce oracle is sim_keys.c: it has to sit inside the crypto table.)
 *
 * Amplification (property 5).  For every (node, remote address) pair, from the first
 * datagram the node receives from that address on, it counts the UDP payload bytes
 * received from it and sent to it; at every datagram sent there it takes
 * sent * 1000 / received, and keeps the largest.  The core's own limit counts only the
 * authentic bytes of one run since the address was taken, so this ratio is never above
 * the core's: a figure above 3000 for an address that never answered is a broken rule.
 * An address that sent something after the node's first datagram to it has answered (a
 * real peer); one that never did (a spoofed victim) is "unanswered".  The oracle knows
 * the truth the endpoint cannot: the attacker's datagrams (replayed or spoofed) count as
 * bytes received from their address but never as an answer from it.  A receiver that
 * validated its sender may send it far more than 3x, so the figure for answered pairs is
 * only informative.  Pairs belong to one incarnation of the node: a restarted endpoint
 * starts with nothing received.
 *
 * Epochs (property 2).  A receiver reports each epoch a run enters (EPOCH events); within
 * one build of a run's state (the event's token names it: its reply run), a reported epoch
 * that goes down is an epoch rollback.  A new build (the run lost its slot, or drew LOST,
 * and starts again from epoch 0 with new secrets) starts its own record. */
#include "sim_oracle.h"

#include <stdlib.h>
#include <string.h>

#define SIM_AMP_SCALE 1000u /* ratios are reported in thousandths */

static sim_amp_pair *pair_find(sim_node *n, const pure_link_addr *a) {
    for (size_t i = 0; i < n->amp_count; i++)
        if (n->amp[i].addr.len == a->len && memcmp(n->amp[i].addr.bytes, a->bytes, a->len) == 0) return &n->amp[i];
    return NULL;
}

void sim_oracle_on_receive(sim_world *w, sim_node *n, const pure_link_addr *from, uint32_t len, int genuine) {
    sim_amp_pair *p = pair_find(n, from);
    if (p == NULL) {
        if (n->amp_count == n->amp_capacity) {
            size_t cap = n->amp_capacity ? n->amp_capacity * 2 : 4;
            sim_amp_pair *a = realloc(n->amp, cap * sizeof *a);
            if (a == NULL) {
                sim_world_fail(w, "out of memory");
                return;
            }
            n->amp = a;
            n->amp_capacity = cap;
        }
        p = &n->amp[n->amp_count++];
        memset(p, 0, sizeof *p);
        p->addr = *from;
    }
    p->received_bytes += len;
    if (p->sent_any && genuine) p->answered = 1;
}

void sim_oracle_on_send(sim_world *w, sim_node *n, const pure_link_addr *to, uint32_t len) {
    (void)w;
    sim_amp_pair *p = pair_find(n, to);
    if (p == NULL) return; /* nothing received from there yet: this node speaks first */
    p->sent_any = 1;
    p->sent_bytes += len;
    uint64_t x = (uint64_t)((unsigned __int128)p->sent_bytes * SIM_AMP_SCALE / p->received_bytes);
    if (x > p->max_x1000) p->max_x1000 = x;
}

static void fold(const sim_amp_pair *p, size_t count, uint64_t *max_x1000, uint64_t *unanswered_max_x1000) {
    for (size_t i = 0; i < count; i++) {
        if (p[i].max_x1000 > *max_x1000) *max_x1000 = p[i].max_x1000;
        if (!p[i].answered && p[i].max_x1000 > *unanswered_max_x1000) *unanswered_max_x1000 = p[i].max_x1000;
    }
}

void sim_oracle_amplification(const sim_node *n, uint64_t *max_x1000, uint64_t *unanswered_max_x1000) {
    *max_x1000 = n->amp_max_x1000_past;
    *unanswered_max_x1000 = n->amp_unanswered_max_x1000_past;
    fold(n->amp, n->amp_count, max_x1000, unanswered_max_x1000);
}

void sim_oracle_on_epoch(sim_world *w, sim_node *n, const pure_link_event *ev) {
    for (size_t i = 0; i < n->epochs_seen_count; i++) {
        sim_epoch_seen *e = &n->epochs_seen[i];
        if (e->peer != ev->peer || e->run != ev->run || e->build != ev->token) continue;
        if (ev->epoch < e->epoch) {
            n->epoch_rollbacks++;
            sim_trace_begin(&w->trace, w->engine.now_ns, "security:epoch_rollback");
            sim_trace_str(&w->trace, "node", n->spec->name);
            sim_trace_id(&w->trace, "run", ev->run);
            sim_trace_u64(&w->trace, "from", e->epoch);
            sim_trace_u64(&w->trace, "to", ev->epoch);
            sim_trace_end(&w->trace);
        }
        e->epoch = ev->epoch;
        return;
    }
    if (n->epochs_seen_count == n->epochs_seen_capacity) {
        size_t cap = n->epochs_seen_capacity ? n->epochs_seen_capacity * 2 : 8;
        sim_epoch_seen *a = realloc(n->epochs_seen, cap * sizeof *a);
        if (a == NULL) {
            sim_world_fail(w, "out of memory");
            return;
        }
        n->epochs_seen = a;
        n->epochs_seen_capacity = cap;
    }
    n->epochs_seen[n->epochs_seen_count++] = (sim_epoch_seen){ev->peer, ev->run, ev->token, ev->epoch};
}

void sim_oracle_on_crash(sim_node *n) {
    fold(n->amp, n->amp_count, &n->amp_max_x1000_past, &n->amp_unanswered_max_x1000_past);
    n->amp_count = 0;
    n->epochs_seen_count = 0;
}

void sim_oracle_free(sim_node *n) {
    free(n->amp);
    free(n->epochs_seen);
    n->amp = NULL;
    n->epochs_seen = NULL;
    n->amp_count = n->amp_capacity = n->epochs_seen_count = n->epochs_seen_capacity = 0;
}

const sim_node_watch sim_oracle_watch = {
    .on_receive = sim_oracle_on_receive,
    .on_send = sim_oracle_on_send,
    .on_epoch = sim_oracle_on_epoch,
    .on_crash = sim_oracle_on_crash,
    .on_free = sim_oracle_free,
};
