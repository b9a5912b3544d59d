/* sim_tcp.c: a bulk TCP flow between two simulated nodes: the sender's SACK scoreboard,
 * RACK loss detection, PRR, the retransmission timeout, and the receiver's ACKs.  See
 * sim_tcp.h for what is modelled and what is not; the window arithmetic is in sim_tcp_cc.c.
 *
 * Counters of the scoreboard (in segments, over [snd_una, snd_nxt)):
 *   sacked_out   segments flagged SACKED;
 *   lost_out     segments flagged LOST (LOST and SACKED exclude each other);
 *   retrans_out  LOST segments whose retransmission is in flight (flag RETRANS);
 *   pipe         (snd_nxt - snd_una) - sacked_out - lost_out + retrans_out: what the
 *                sender believes is in the network (RFC 6675's pipe, Linux's in_flight). */
#include "sim_world.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define SIM_TCP_SLOTS_FIRST 64u     /* scoreboard slots at first use; doubles after */
#define SIM_TCP_BLOCKS_FIRST 8u     /* receiver's out-of-order blocks at first use */
#define SIM_TCP_SEGS_MOST (1u << 22) /* segments and ACKs alive at once, over all flows */
#define SIM_TCP_DUPTHRESH 3u        /* SACKed segments that make RACK's window 0 (RFC 8985 §6.2) */
/* Pacing rate = cwnd / srtt times 2 in slow start, 1.2 after (Linux's defaults), in tenths. */
#define SIM_TCP_PACE_SS_TENTHS 20u
#define SIM_TCP_PACE_CA_TENTHS 12u
#define NS_PER_S 1000000000ull

_Static_assert(SIM_TCP_ACK_WIRE_BYTES < SIM_TCP_WIRE_BYTES, "an ACK is smaller than a segment");

const char *sim_tcp_algo_name(sim_tcp_algo algo) { return algo == SIM_TCP_NEWRENO ? "newreno" : "cubic"; }

void sim_tcp_spec_default(sim_tcp_spec *spec) {
    memset(spec, 0, sizeof *spec);
    spec->algo = SIM_TCP_CUBIC;
    spec->until_ns = UINT64_MAX;
    spec->hystart = 1;
    spec->initial_window = SIM_TCP_INITIAL_WINDOW;
    spec->window_most_bytes = SIM_TCP_WINDOW_MOST_DEFAULT;
    spec->rto_min_ns = SIM_TCP_RTO_MIN_NS;
}

uint64_t sim_tcp_delivered_bytes(const sim_tcp *t) { return t->rcv_nxt * SIM_TCP_MSS_BYTES; }

uint64_t sim_tcp_in_flight(const sim_tcp *t) {
    uint64_t out = t->snd_nxt - t->snd_una;
    assert(t->sacked_out + t->lost_out <= out && t->retrans_out <= t->lost_out);
    return out - t->sacked_out - t->lost_out + t->retrans_out;
}

/* ---- setup ---- */

int sim_tcp_setup(sim_world *w, sim_tcp *t, char *err, size_t err_len) {
    const sim_tcp_spec *s = t->spec;
    (void)w;
    t->window_most_segments = s->window_most_bytes / SIM_TCP_MSS_BYTES;
    if (t->window_most_segments < 2 || s->initial_window == 0) {
        snprintf(err, err_len, "tcp flow %u: window_most must hold 2 segments and initial_window 1", t->index + 1);
        return -1;
    }
    t->segments_most = s->bytes ? (s->bytes + SIM_TCP_MSS_BYTES - 1) / SIM_TCP_MSS_BYTES : UINT64_MAX;
    sim_tcp_cc_init(&t->cc, s->algo, s->initial_window, t->window_most_segments, s->hystart);
    t->rto_ns = SIM_TCP_RTO_INITIAL_NS;
    t->quickacks = SIM_TCP_QUICKACKS;
    t->xmit_next = 1;
    return 0;
}

void sim_tcp_free(sim_tcp *t) {
    free(t->slots);
    free(t->blocks);
    t->slots = NULL;
    t->blocks = NULL;
    t->slot_capacity = 0;
    t->block_capacity = t->block_count = 0;
}

/* ---- segments on paths ---- */

static sim_tcp_seg *seg_alloc(sim_world *w) {
    sim_tcp_seg *s = w->free_tcp_segs;
    if (s) {
        w->free_tcp_segs = s->next_free;
    } else {
        if (w->tcp_segs_allocated >= SIM_TCP_SEGS_MOST) {
            sim_world_fail(w, "more than %u TCP segments alive", SIM_TCP_SEGS_MOST);
            return NULL;
        }
        s = malloc(sizeof *s);
        if (s == NULL) {
            sim_world_fail(w, "out of memory for TCP segments");
            return NULL;
        }
        w->tcp_segs_allocated++;
    }
    memset(s, 0, sizeof *s);
    return s;
}

static void seg_free(sim_world *w, sim_tcp_seg *s) {
    s->next_free = w->free_tcp_segs;
    w->free_tcp_segs = s;
}

static void trace_drop(sim_world *w, const sim_tcp *t, const sim_tcp_seg *s, const char *why) {
    sim_trace_begin(&w->trace, w->engine.now_ns, "tcp:packet_dropped");
    sim_trace_u64(&w->trace, "flow", t->index);
    sim_trace_str(&w->trace, "kind", s->is_ack ? "ack" : "data");
    sim_trace_u64(&w->trace, s->is_ack ? "ack" : "seq", s->is_ack ? s->ack : s->seq);
    sim_trace_str(&w->trace, "why", why);
    sim_trace_end(&w->trace);
}

/* Puts a segment (or ACK) on the path from -> to; a duplicate follows as a copy.  A
 * corrupted copy fails the TCP checksum at the far end: it counts as dropped. */
static void put_on_path(sim_world *w, sim_tcp *t, sim_tcp_seg *seg, uint32_t from, uint32_t to, uint32_t wire_bytes) {
    sim_path *path = sim_world_path(w, from, to);
    uint32_t overhead = path->params.overhead_bytes;
    size_t bytes = wire_bytes > overhead ? wire_bytes - overhead : 0; /* bytes + overhead = wire */
    sim_copy copies[SIM_PATH_COPIES_MOST];
    size_t n = sim_path_send(path, w->engine.now_ns, bytes, copies);
    sim_tcp_seg *bufs[SIM_PATH_COPIES_MOST] = {seg, NULL};
    if (n > 1) {
        bufs[1] = seg_alloc(w);
        if (bufs[1] == NULL) n = 1;
        else *bufs[1] = *seg;
    }
    for (size_t i = 0; i < n; i++) {
        const char *why = copies[i].fate == SIM_FATE_LOSS    ? "loss"
                          : copies[i].fate == SIM_FATE_QUEUE ? "queue"
                          : copies[i].fate == SIM_FATE_MTU   ? "mtu"
                          : copies[i].corrupt_bit >= 0       ? "corrupt"
                                                             : NULL;
        if (why) {
            if (bufs[i]->is_ack) t->acks_dropped++;
            else t->dropped++;
            trace_drop(w, t, bufs[i], why);
            seg_free(w, bufs[i]);
            continue;
        }
        sim_world_at(w, copies[i].arrive_ns, SIM_EV_TCP_ARRIVE, t->index, 0, bufs[i]);
    }
}

/* ---- sender: scoreboard ---- */

static sim_tcp_slot *slot_of(sim_tcp *t, uint64_t seq) {
    assert(seq >= t->snd_una && seq < t->snd_nxt);
    return &t->slots[seq & (t->slot_capacity - 1)];
}

/* Room for one more outstanding segment; returns -1 when memory ran out. */
static int slots_reserve(sim_tcp *t) {
    uint64_t need = t->snd_nxt - t->snd_una + 1;
    if (need <= t->slot_capacity) return 0;
    uint64_t cap = t->slot_capacity ? t->slot_capacity * 2 : SIM_TCP_SLOTS_FIRST;
    while (cap < need) cap *= 2;
    sim_tcp_slot *s = malloc(cap * sizeof *s);
    if (s == NULL) return -1;
    for (uint64_t q = t->snd_una; q < t->snd_nxt; q++) s[q & (cap - 1)] = t->slots[q & (t->slot_capacity - 1)];
    free(t->slots);
    t->slots = s;
    t->slot_capacity = cap;
    return 0;
}

static void mark_lost(sim_tcp *t, uint64_t seq, sim_tcp_slot *s) {
    assert(!(s->flags & SIM_TCP_SACKED));
    if (s->flags & SIM_TCP_RETRANS) {
        /* Its retransmission is lost too: it waits for another. */
        s->flags &= ~(uint32_t)SIM_TCP_RETRANS;
        t->retrans_out--;
    } else {
        assert(!(s->flags & SIM_TCP_LOST));
        s->flags |= SIM_TCP_LOST;
        t->lost_out++;
    }
    if (seq < t->retx_hint) t->retx_hint = seq;
}

/* A segment reached the receiver (cumulative ACK or SACK): RACK's newest delivery and the
 * RTT sample candidate. */
static void note_delivery(sim_tcp *t, const sim_tcp_slot *s, uint64_t now, uint64_t *sample_xmit, uint64_t *sample_ns) {
    const uint64_t rtt = now - s->sent_ns;
    /* A retransmitted segment's ACK may be for the original (RFC 8985 §6.2 step 2). */
    int ambiguous = (s->flags & SIM_TCP_EVER_RETRANS) && rtt < t->rtt_ns_min;
    if (!ambiguous && (!t->rack_valid || s->xmit > t->rack_xmit)) {
        t->rack_xmit = s->xmit;
        t->rack_rtt_ns = rtt;
        t->rack_valid = 1;
    }
    if (!(s->flags & SIM_TCP_EVER_RETRANS) && s->xmit > *sample_xmit) { /* Karn: originals only */
        *sample_xmit = s->xmit;
        *sample_ns = rtt;
    }
}

static void release_slot(sim_tcp *t, sim_tcp_slot *s) {
    if (s->flags & SIM_TCP_SACKED) {
        t->sacked_out--;
        return;
    }
    if (s->flags & SIM_TCP_LOST) t->lost_out--;
    if (s->flags & SIM_TCP_RETRANS) t->retrans_out--;
}

/* ---- sender: RTT and timers ---- */

static void update_rtt(sim_tcp *t, uint64_t r) {
    if (r == 0) r = 1;
    if (t->rtt_ns_min == 0 || r < t->rtt_ns_min) t->rtt_ns_min = r;
    if (t->srtt_ns == 0) {
        t->srtt_ns = r;
        t->rttvar_ns = r / 2;
    } else {
        uint64_t diff = t->srtt_ns > r ? t->srtt_ns - r : r - t->srtt_ns;
        t->rttvar_ns = (3 * t->rttvar_ns + diff) / 4;
        t->srtt_ns = (7 * t->srtt_ns + r) / 8;
    }
    /* RFC 6298 (2.3) with Linux's floor on the variance term: RTO = SRTT + max(4 RTTVAR,
     * rto_min), so a queue that doubles the RTT does not fire it. */
    uint64_t var = 4 * t->rttvar_ns;
    if (var < t->spec->rto_min_ns) var = t->spec->rto_min_ns;
    t->rto_ns = t->srtt_ns + var;
    if (t->rto_ns > SIM_TCP_RTO_MOST_NS) t->rto_ns = SIM_TCP_RTO_MOST_NS;
}

static uint64_t rto_backed_off(const sim_tcp *t) {
    uint64_t r = t->rto_ns;
    for (uint32_t i = 0; i < t->rto_backoff && r < SIM_TCP_RTO_MOST_NS; i++) r *= 2;
    return r < SIM_TCP_RTO_MOST_NS ? r : SIM_TCP_RTO_MOST_NS;
}

static void arm_snd_timer(sim_world *w, sim_tcp *t) {
    uint64_t at = 0;
    const uint64_t cand[3] = {t->rto_at_ns, t->rack_at_ns, t->pace_at_ns};
    for (int i = 0; i < 3; i++)
        if (cand[i] && (at == 0 || cand[i] < at)) at = cand[i];
    if (at == 0) return;
    if (at < w->engine.now_ns) at = w->engine.now_ns;
    if (t->snd_timer_pending && t->snd_timer_ns <= at) return; /* an earlier event will re-arm */
    t->snd_timer_gen++;
    t->snd_timer_pending = 1;
    t->snd_timer_ns = at;
    sim_world_at(w, at, SIM_EV_TCP_TIMER, t->index, t->snd_timer_gen << 1, NULL);
}

static void trace_event(sim_world *w, const sim_tcp *t, const char *kind) {
    sim_trace_begin(&w->trace, w->engine.now_ns, "tcp:recovery");
    sim_trace_u64(&w->trace, "flow", t->index);
    sim_trace_str(&w->trace, "kind", kind);
    sim_trace_u64(&w->trace, "snd_una", t->snd_una);
    sim_trace_u64(&w->trace, "snd_nxt", t->snd_nxt);
    sim_trace_u64(&w->trace, "cwnd", sim_tcp_cc_cwnd(&t->cc));
    uint64_t ss = sim_tcp_cc_ssthresh(&t->cc);
    sim_trace_u64(&w->trace, "ssthresh", ss == UINT64_MAX ? 0 : ss);
    sim_trace_end(&w->trace);
}

/* ---- sender: RACK (RFC 8985) ---- */

static uint64_t reo_wnd_ns(const sim_tcp *t) {
    /* Until reordering is seen, a loss is declared as soon as a later segment is
     * delivered once in recovery or after DupThresh SACKs (the three-dupack rule). */
    if (!t->reordering_seen && (t->state != SIM_TCP_OPEN || t->sacked_out >= SIM_TCP_DUPTHRESH)) return 0;
    uint64_t r = t->rtt_ns_min / 4;
    return r < t->srtt_ns ? r : t->srtt_ns;
}

/* Marks lost every segment sent before the newest delivered one whose time is up; arms
 * the reordering timer for the others.  Returns the number newly marked. */
static uint64_t rack_detect(sim_tcp *t, uint64_t now) {
    t->rack_at_ns = 0;
    if (!t->rack_valid) return 0;
    const uint64_t reo = reo_wnd_ns(t);
    /* Segments sent before a delivered one lie below fack, except after a timeout, when
     * retransmissions go out in any order. */
    const uint64_t end = t->state == SIM_TCP_LOSS ? t->snd_nxt : t->fack;
    uint64_t newly = 0;
    for (uint64_t q = t->snd_una; q < end; q++) {
        sim_tcp_slot *s = slot_of(t, q);
        if (s->flags & SIM_TCP_SACKED) continue;
        if ((s->flags & SIM_TCP_LOST) && !(s->flags & SIM_TCP_RETRANS)) continue; /* waits to be resent */
        if (s->xmit >= t->rack_xmit) continue;                                      /* sent after */
        uint64_t deadline = s->sent_ns + t->rack_rtt_ns + reo;
        if (deadline <= now) {
            mark_lost(t, q, s);
            newly++;
        } else if (t->rack_at_ns == 0 || deadline < t->rack_at_ns) {
            t->rack_at_ns = deadline;
        }
    }
    return newly;
}

/* ---- sender: sending ---- */

static int new_data_allowed(const sim_tcp *t) {
    return !t->writing_over && t->snd_nxt < t->segments_most && t->snd_nxt - t->snd_una < t->window_most_segments;
}

static uint64_t pace_gap_ns(const sim_tcp *t) {
    if (!t->spec->pacing || t->srtt_ns == 0) return 0;
    uint64_t tenths = sim_tcp_cc_in_slow_start(&t->cc) ? SIM_TCP_PACE_SS_TENTHS : SIM_TCP_PACE_CA_TENTHS;
    return t->srtt_ns * 10 / (sim_tcp_cc_cwnd(&t->cc) * tenths);
}

/* The lowest segment marked lost and not being retransmitted. */
static uint64_t next_lost(sim_tcp *t) {
    uint64_t q = t->retx_hint > t->snd_una ? t->retx_hint : t->snd_una;
    for (; q < t->snd_nxt; q++)
        if ((slot_of(t, q)->flags & (SIM_TCP_LOST | SIM_TCP_RETRANS)) == SIM_TCP_LOST) return q;
    assert(0 && "lost_out > retrans_out, yet no segment waits for retransmission");
    return t->snd_nxt;
}

static void transmit(sim_world *w, sim_tcp *t, uint64_t seq) {
    sim_tcp_seg *seg = seg_alloc(w);
    if (seg == NULL) return;
    seg->flow = t->index;
    seg->seq = seq;
    t->segments_sent++;
    if (t->rto_at_ns == 0) t->rto_at_ns = w->engine.now_ns + rto_backed_off(t); /* RFC 6298 (5.1) */
    put_on_path(w, t, seg, t->spec->from, t->spec->to, SIM_TCP_WIRE_BYTES);
}

static void try_send(sim_world *w, sim_tcp *t) {
    const uint64_t now = w->engine.now_ns;
    while (!w->stopped && sim_tcp_in_flight(t) < sim_tcp_cc_cwnd(&t->cc)) {
        int retx = t->lost_out > t->retrans_out;
        if (!retx && !new_data_allowed(t)) break;
        if (t->next_send_ns > now) {
            t->pace_at_ns = t->next_send_ns;
            break;
        }
        uint64_t seq;
        sim_tcp_slot *s;
        if (retx) {
            seq = next_lost(t);
            s = slot_of(t, seq);
            s->flags |= SIM_TCP_RETRANS | SIM_TCP_EVER_RETRANS;
            t->retrans_out++;
            t->retransmissions++;
            t->retx_hint = seq + 1;
        } else {
            if (slots_reserve(t) != 0) {
                sim_world_fail(w, "out of memory for the TCP scoreboard");
                return;
            }
            seq = t->snd_nxt++;
            s = slot_of(t, seq);
            s->flags = 0;
        }
        s->sent_ns = now;
        s->xmit = t->xmit_next++;
        if (t->state == SIM_TCP_RECOVERY) t->prr_out++;
        transmit(w, t, seq);
        uint64_t gap = pace_gap_ns(t);
        if (gap) t->next_send_ns = (t->next_send_ns > now ? t->next_send_ns : now) + gap;
    }
}

/* ---- sender: recovery ---- */

static void enter_recovery(sim_world *w, sim_tcp *t) {
    t->prr_delivered = t->prr_out = 0;
    t->recover_fs = sim_tcp_cc_cwnd(&t->cc); /* RecoverFS: the window before the cut (Linux) */
    sim_tcp_cc_on_congestion(&t->cc);
    t->state = SIM_TCP_RECOVERY;
    t->recovery_point = t->snd_nxt;
    t->fast_recoveries++;
    trace_event(w, t, "fast_recovery");
}

/* Proportional Rate Reduction (RFC 6937, with slow-start reduction bound): in recovery the
 * window is what lets the sender send, in proportion to deliveries, down to ssthresh. */
static void prr_update(sim_tcp *t, uint64_t delivered) {
    t->prr_delivered += delivered;
    const uint64_t pipe = sim_tcp_in_flight(t);
    const uint64_t ss = sim_tcp_cc_ssthresh(&t->cc);
    int64_t sndcnt;
    if (pipe > ss) {
        uint64_t fs = t->recover_fs ? t->recover_fs : 1;
        sndcnt = (int64_t)((t->prr_delivered * ss + fs - 1) / fs) - (int64_t)t->prr_out;
    } else {
        int64_t limit = (int64_t)t->prr_delivered - (int64_t)t->prr_out;
        if (limit < (int64_t)delivered) limit = (int64_t)delivered;
        limit += 1;
        sndcnt = (int64_t)(ss - pipe) < limit ? (int64_t)(ss - pipe) : limit;
    }
    if (sndcnt < 0) sndcnt = 0;
    sim_tcp_cc_set_cwnd(&t->cc, pipe + (uint64_t)sndcnt);
}

/* After deliveries and loss marks: leave or enter recovery, and set the window. */
static void steer(sim_world *w, sim_tcp *t, uint64_t delivered, uint64_t newly_lost) {
    if (t->state != SIM_TCP_OPEN && t->snd_una >= t->recovery_point) {
        if (t->state == SIM_TCP_RECOVERY) sim_tcp_cc_set_cwnd(&t->cc, sim_tcp_cc_ssthresh(&t->cc));
        t->state = SIM_TCP_OPEN;
    }
    if (t->state == SIM_TCP_OPEN && newly_lost > 0) enter_recovery(w, t);
    if (t->state == SIM_TCP_RECOVERY) prr_update(t, delivered);
    else sim_tcp_cc_on_ack(&t->cc, delivered, w->engine.now_ns, t->rtt_ns_min);
}

static void check_done(sim_world *w, sim_tcp *t) {
    if (t->done || t->snd_una != t->snd_nxt || (!t->writing_over && t->snd_nxt < t->segments_most)) return;
    t->done = 1;
    t->done_ns = w->engine.now_ns;
    sim_trace_begin(&w->trace, t->done_ns, "tcp:done");
    sim_trace_u64(&w->trace, "flow", t->index);
    sim_trace_u64(&w->trace, "segments", t->snd_una);
    sim_trace_end(&w->trace);
}

static void on_timeout(sim_world *w, sim_tcp *t) {
    t->rto_at_ns = 0;
    if (t->snd_una == t->snd_nxt) return;
    t->timeouts++;
    /* A timeout in recovery keeps the reduction already made (Linux); from open, cut. */
    if (t->state == SIM_TCP_OPEN) sim_tcp_cc_on_congestion(&t->cc);
    sim_tcp_cc_on_timeout(&t->cc);
    t->state = SIM_TCP_LOSS;
    t->recovery_point = t->snd_nxt;
    /* Everything not SACKed is presumed lost and goes again, in order. */
    for (uint64_t q = t->snd_una; q < t->snd_nxt; q++) {
        sim_tcp_slot *s = slot_of(t, q);
        if (!(s->flags & SIM_TCP_SACKED)) s->flags = (s->flags & SIM_TCP_EVER_RETRANS) | SIM_TCP_LOST;
    }
    t->lost_out = t->snd_nxt - t->snd_una - t->sacked_out;
    t->retrans_out = 0;
    t->retx_hint = t->snd_una;
    t->rack_at_ns = 0;
    t->next_send_ns = 0;
    if (t->rto_backoff < 16) t->rto_backoff++; /* RFC 6298 (5.5) */
    trace_event(w, t, "timeout");
}

/* ---- sender: ACKs ---- */

static void on_ack(sim_world *w, sim_tcp *t, const sim_tcp_seg *a) {
    const uint64_t now = w->engine.now_ns;
    t->acks_received++;
    if (a->ack > t->snd_nxt) return; /* cannot happen: the receiver acknowledges what it got */
    const uint64_t prior_una = t->snd_una, prior_fack = t->fack;
    uint64_t delivered = 0, sample_xmit = 0, sample_ns = 0;
    for (; t->snd_una < a->ack; t->snd_una++) {
        sim_tcp_slot *s = slot_of(t, t->snd_una);
        if (!(s->flags & SIM_TCP_SACKED)) {
            delivered++;
            note_delivery(t, s, now, &sample_xmit, &sample_ns);
            /* An original that arrives after a later segment was SACKed: reordering. */
            if (!(s->flags & SIM_TCP_EVER_RETRANS) && t->snd_una < prior_fack) t->reordering_seen = 1;
        }
        release_slot(t, s);
    }
    if (t->fack < t->snd_una) t->fack = t->snd_una;
    for (unsigned b = 0; b < a->sack_count; b++) {
        uint64_t lo = a->sack[b][0] > t->snd_una ? a->sack[b][0] : t->snd_una;
        uint64_t hi = a->sack[b][1] < t->snd_nxt ? a->sack[b][1] : t->snd_nxt;
        for (uint64_t q = lo; q < hi; q++) {
            sim_tcp_slot *s = slot_of(t, q);
            if (s->flags & SIM_TCP_SACKED) continue;
            if (!(s->flags & SIM_TCP_EVER_RETRANS) && q < prior_fack) t->reordering_seen = 1;
            release_slot(t, s);
            s->flags = (s->flags & SIM_TCP_EVER_RETRANS) | SIM_TCP_SACKED;
            t->sacked_out++;
            delivered++;
            note_delivery(t, s, now, &sample_xmit, &sample_ns);
            if (q + 1 > t->fack) t->fack = q + 1;
        }
    }
    if (t->snd_una > prior_una) { /* RFC 6298 (5.3): new data acknowledged */
        t->rto_backoff = 0;
        t->rto_at_ns = 0;
        if (t->snd_una != t->snd_nxt) t->rto_at_ns = now + rto_backed_off(t);
    }
    if (sample_xmit) {
        update_rtt(t, sample_ns);
        sim_tcp_cc_on_rtt(&t->cc, now, sample_ns, t->rtt_ns_min, t->snd_una, t->snd_nxt, t->spec->pacing);
    }
    steer(w, t, delivered, rack_detect(t, now));
    try_send(w, t);
    arm_snd_timer(w, t);
    check_done(w, t);
}

/* ---- receiver ---- */

static int block_insert(sim_tcp *t, uint64_t seq) {
    size_t i = 0;
    while (i < t->block_count && t->blocks[i].end < seq) i++;
    const uint64_t touch = ++t->touch_clock;
    if (i < t->block_count && t->blocks[i].start <= seq + 1 && seq <= t->blocks[i].end) {
        /* Adjacent to or inside block i: extend it, and merge with the next if they meet. */
        sim_tcp_block *b = &t->blocks[i];
        if (seq < b->start) b->start = seq;
        if (seq + 1 > b->end) b->end = seq + 1;
        b->touched = touch;
        if (i + 1 < t->block_count && t->blocks[i + 1].start <= b->end) {
            b->end = t->blocks[i + 1].end;
            memmove(&t->blocks[i + 1], &t->blocks[i + 2], (t->block_count - i - 2) * sizeof *b);
            t->block_count--;
        }
        return (int)i;
    }
    if (t->block_count == t->block_capacity) {
        size_t cap = t->block_capacity ? t->block_capacity * 2 : SIM_TCP_BLOCKS_FIRST;
        sim_tcp_block *nb = realloc(t->blocks, cap * sizeof *nb);
        if (nb == NULL) return -1;
        t->blocks = nb;
        t->block_capacity = cap;
    }
    memmove(&t->blocks[i + 1], &t->blocks[i], (t->block_count - i) * sizeof *t->blocks);
    t->blocks[i] = (sim_tcp_block){seq, seq + 1, touch};
    t->block_count++;
    return (int)i;
}

static int block_holds(const sim_tcp *t, uint64_t seq) {
    for (size_t i = 0; i < t->block_count; i++)
        if (seq >= t->blocks[i].start && seq < t->blocks[i].end) return 1;
    return 0;
}

/* The ACK: cumulative, then SACK blocks: the one that changed first (RFC 2018), then the
 * most recently changed others. */
static void send_ack(sim_world *w, sim_tcp *t, int first_block) {
    sim_tcp_seg *a = seg_alloc(w);
    if (a == NULL) return;
    a->flow = t->index;
    a->is_ack = 1;
    a->ack = t->rcv_nxt;
    size_t picked[SIM_TCP_SACK_BLOCKS_MOST];
    unsigned n = 0;
    if (first_block >= 0) picked[n++] = (size_t)first_block;
    while (n < SIM_TCP_SACK_BLOCKS_MOST && n < t->block_count) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < t->block_count; i++) {
            int taken = 0;
            for (unsigned k = 0; k < n; k++) taken |= picked[k] == i;
            if (!taken && (best == SIZE_MAX || t->blocks[i].touched > t->blocks[best].touched)) best = i;
        }
        picked[n++] = best;
    }
    for (unsigned k = 0; k < n; k++) {
        a->sack[k][0] = t->blocks[picked[k]].start;
        a->sack[k][1] = t->blocks[picked[k]].end;
    }
    a->sack_count = (uint8_t)n;
    t->unacked_segments = 0;
    t->delack_at_ns = 0;
    t->acks_sent++;
    put_on_path(w, t, a, t->spec->to, t->spec->from, SIM_TCP_ACK_WIRE_BYTES);
}

static void on_data(sim_world *w, sim_tcp *t, const sim_tcp_seg *d) {
    const uint64_t seq = d->seq;
    int immediate = 0, first_block = -1;
    if (seq < t->rcv_nxt || block_holds(t, seq)) {
        immediate = 1; /* a duplicate: tell the sender at once */
    } else if (seq == t->rcv_nxt) {
        t->rcv_nxt++;
        if (t->block_count > 0) {
            immediate = 1; /* it fills (part of) a hole */
            if (t->blocks[0].start == t->rcv_nxt) {
                t->rcv_nxt = t->blocks[0].end;
                memmove(&t->blocks[0], &t->blocks[1], (t->block_count - 1) * sizeof *t->blocks);
                t->block_count--;
            }
        }
    } else {
        first_block = block_insert(t, seq);
        if (first_block < 0) {
            sim_world_fail(w, "out of memory for TCP receive blocks");
            return;
        }
        immediate = 1; /* out of order: a duplicate ACK with SACK */
    }
    t->unacked_segments++;
    if (t->quickacks > 0) {
        t->quickacks--;
        immediate = 1;
    }
    if (immediate || t->unacked_segments >= SIM_TCP_DELACK_SEGMENTS) {
        send_ack(w, t, first_block);
    } else if (t->delack_at_ns == 0) {
        t->delack_at_ns = w->engine.now_ns + SIM_TCP_DELACK_NS;
        t->rcv_timer_gen++;
        sim_world_at(w, t->delack_at_ns, SIM_EV_TCP_TIMER, t->index, t->rcv_timer_gen << 1 | 1, NULL);
    }
}

/* ---- events ---- */

void sim_tcp_on_start(sim_world *w, sim_tcp *t) {
    t->started = 1;
    sim_trace_begin(&w->trace, w->engine.now_ns, "tcp:start");
    sim_trace_u64(&w->trace, "flow", t->index);
    sim_trace_str(&w->trace, "from", sim_node_name(w, t->spec->from));
    sim_trace_str(&w->trace, "to", sim_node_name(w, t->spec->to));
    sim_trace_str(&w->trace, "algo", sim_tcp_algo_name(t->spec->algo));
    sim_trace_end(&w->trace);
    try_send(w, t);
    arm_snd_timer(w, t);
    check_done(w, t);
}

void sim_tcp_on_until(sim_world *w, sim_tcp *t) {
    t->writing_over = 1;
    check_done(w, t);
}

void sim_tcp_on_arrive(sim_world *w, sim_tcp *t, sim_tcp_seg *seg) {
    if (seg->is_ack) on_ack(w, t, seg);
    else on_data(w, t, seg);
    seg_free(w, seg);
}

void sim_tcp_on_timer(sim_world *w, sim_tcp *t, uint64_t arg) {
    const uint64_t now = w->engine.now_ns;
    if (arg & 1) { /* receiver: the delayed ACK */
        if ((arg >> 1) == t->rcv_timer_gen && t->delack_at_ns != 0 && t->delack_at_ns <= now) send_ack(w, t, -1);
        return;
    }
    if ((arg >> 1) != t->snd_timer_gen) return; /* superseded */
    t->snd_timer_pending = 0;
    if (t->rto_at_ns && t->rto_at_ns <= now) {
        on_timeout(w, t);
    } else if (t->rack_at_ns && t->rack_at_ns <= now) {
        steer(w, t, 0, rack_detect(t, now));
    }
    if (t->pace_at_ns && t->pace_at_ns <= now) t->pace_at_ns = 0;
    try_send(w, t);
    arm_snd_timer(w, t);
}

void sim_tcp_sample(sim_world *w, const sim_tcp *t) {
    if (!t->started) return;
    sim_trace_begin(&w->trace, w->engine.now_ns, "tcp:metrics_updated");
    sim_trace_u64(&w->trace, "flow", t->index);
    sim_trace_u64(&w->trace, "cwnd", sim_tcp_cc_cwnd(&t->cc));
    uint64_t ss = sim_tcp_cc_ssthresh(&t->cc);
    sim_trace_u64(&w->trace, "ssthresh", ss == UINT64_MAX ? 0 : ss);
    sim_trace_u64(&w->trace, "in_flight", sim_tcp_in_flight(t));
    sim_trace_u64(&w->trace, "rtt_ns_smoothed", t->srtt_ns);
    sim_trace_u64(&w->trace, "rtt_ns_min", t->rtt_ns_min);
    sim_trace_u64(&w->trace, "snd_una", t->snd_una);
    sim_trace_u64(&w->trace, "retransmissions", t->retransmissions);
    sim_trace_u64(&w->trace, "delivered_bytes", sim_tcp_delivered_bytes(t));
    sim_trace_end(&w->trace);
}
