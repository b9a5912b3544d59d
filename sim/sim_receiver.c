/* sim_receiver.c: the receiving host application.  See sim_host.h.
 *
 * It answers STREAM_OPEN by its inputs (name, shape, time of appearance), stores every
 * record store_latency after its hand-over, then tells the endpoint (pure_link_stored).
 * Its store is durable: per (peer, run) it keeps the stored mark across crashes, and
 * reports it when the run's stream opens again.  It checks what the core hands over:
 * a record below the stored mark, or handed twice in one incarnation, is a duplicate;
 * a record that is not the one after the highest so far is out of order. */
#include "sim_host.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static uint64_t get_le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* ---- host runs ---- */

static int find_run(sim_node *n, uint32_t peer_node, uint64_t run) {
    for (size_t i = 0; i < n->run_count; i++)
        if (n->runs[i].peer_node == peer_node && n->runs[i].run == run) return (int)i;
    return -1;
}

static int add_run(sim_world *w, sim_node *n, uint32_t peer_node, uint64_t run) {
    if (n->run_count == n->run_capacity) {
        size_t cap = n->run_capacity ? n->run_capacity * 2 : 8;
        sim_host_run *p = realloc(n->runs, cap * sizeof *p);
        if (p == NULL) {
            sim_world_fail(w, "out of memory");
            return -1;
        }
        n->runs = p;
        n->run_capacity = cap;
    }
    sim_host_run *hr = &n->runs[n->run_count];
    memset(hr, 0, sizeof *hr);
    hr->peer_node = peer_node;
    hr->run = run;
    hr->link = SIM_NO_LINK;
    hr->stream = -1;
    return (int)n->run_count++;
}

static int bind_stream(sim_world *w, sim_node *n, int stream, int run_index) {
    if (stream < 0) return -1;
    if ((size_t)stream >= n->stream_capacity) {
        size_t cap = n->stream_capacity ? n->stream_capacity : 16;
        while (cap <= (size_t)stream) cap *= 2;
        int32_t *p = realloc(n->stream_runs, cap * sizeof *p);
        if (p == NULL) {
            sim_world_fail(w, "out of memory");
            return -1;
        }
        for (size_t i = n->stream_capacity; i < cap; i++) p[i] = -1;
        n->stream_runs = p;
        n->stream_capacity = cap;
    }
    int32_t old = n->stream_runs[stream];
    if (old >= 0 && old != run_index) n->runs[old].stream = -1; /* the slot now serves another run */
    n->stream_runs[stream] = run_index;
    n->runs[run_index].stream = stream;
    return 0;
}

static sim_host_run *run_of_stream(sim_node *n, int stream, int *index) {
    if (stream < 0 || (size_t)stream >= n->stream_capacity || n->stream_runs[stream] < 0) return NULL;
    *index = n->stream_runs[stream];
    return &n->runs[*index];
}

static int state_reserve(sim_host_run *hr, int64_t record) {
    size_t need = (size_t)record + 1;
    if (need <= hr->state_capacity) return 0;
    size_t cap = hr->state_capacity ? hr->state_capacity : 1024;
    while (cap < need) cap *= 2;
    uint8_t *p = realloc(hr->state, cap);
    if (p == NULL) return -1;
    memset(p + hr->state_capacity, 0, cap - hr->state_capacity);
    hr->state = p;
    hr->state_capacity = cap;
    return 0;
}

static uint8_t state_get(const sim_host_run *hr, int64_t record) {
    return (size_t)record < hr->state_capacity ? hr->state[record] : 0;
}

/* ---- stream answers ---- */

static sim_link *link_for(sim_world *w, const sim_node *n, uint32_t peer_node, const pure_link_event *ev) {
    for (uint32_t i = 0; i < w->link_count; i++) {
        sim_link *l = &w->links[i];
        if (l->from == peer_node && l->to == n->index && ev->source && ev->input &&
            strcmp(l->spec->source, ev->source) == 0 && strcmp(l->spec->input, ev->input) == 0)
            return l;
    }
    return NULL;
}

/* 0 accepts; -1: no input of that name (now); -PURE_LINK_OTHER_SHAPE: another shape. */
static int decide(const sim_world *w, const sim_node *n, const pure_link_event *ev) {
    const sim_node_spec *s = n->spec;
    if (s->input_count == 0) return 0; /* no inputs declared: every stream is accepted */
    for (uint32_t i = 0; i < s->input_count; i++) {
        const sim_input_spec *in = &s->inputs[i];
        if (ev->input == NULL || strcmp(in->name, ev->input) != 0 || in->at_ns > w->engine.now_ns) continue;
        if (!in->any_shape && in->shape != ev->shape) return -PURE_LINK_OTHER_SHAPE;
        return 0;
    }
    return -1;
}

void sim_receiver_on_stream_open(sim_world *w, sim_node *n, const pure_link_event *ev) {
    const uint64_t now = w->engine.now_ns;
    if (ev->peer < 0 || (uint32_t)ev->peer >= n->peer_count || n->peer_nodes[ev->peer] == SIM_NO_LINK) {
        sim_node_api_error(w, n, "STREAM_OPEN from an unknown peer index", ev->peer);
        return;
    }
    uint32_t peer_node = n->peer_nodes[ev->peer];
    int idx = find_run(n, peer_node, ev->run);
    if (idx < 0 && (idx = add_run(w, n, peer_node, ev->run)) < 0) return;
    sim_link *l = link_for(w, n, peer_node, ev);
    n->runs[idx].link = l ? l->index : SIM_NO_LINK;
    int answer = decide(w, n, ev);
    int64_t mark = answer == 0 ? n->runs[idx].stored_mark : 0;
    if (answer == 0 && bind_stream(w, n, ev->stream, idx) != 0) return;
    if (answer != 0) n->streams_refused++;
    sim_trace_begin(&w->trace, now, "app:stream_open");
    sim_trace_str(&w->trace, "node", n->spec->name);
    sim_trace_str(&w->trace, "peer", sim_node_name(w, peer_node));
    sim_trace_id(&w->trace, "run", ev->run);
    sim_trace_i64(&w->trace, "stream", ev->stream);
    sim_trace_str(&w->trace, "source", ev->source);
    sim_trace_str(&w->trace, "input", ev->input);
    sim_trace_u64(&w->trace, "shape", ev->shape);
    sim_trace_i64(&w->trace, "answer", answer);
    sim_trace_i64(&w->trace, "stored_mark", mark);
    sim_trace_end(&w->trace);
    int r = pure_link_stream_answer(n->pl, ev->stream, answer, mark, now);
    if (r != 0) sim_node_api_error(w, n, "pure_link_stream_answer", r);
}

/* ---- records ---- */

static void measure_latency(sim_world *w, sim_link *l, const pure_link_event *ev) {
    size_t len = ev->len + ev->len2;
    if (l->spec->mode != SIM_MODE_PACED || len < 8 || ev->data == NULL) return;
    /* The record may come in two pieces (data, data2): its header too. */
    uint8_t head[SIM_RECORD_HEADER_BYTES];
    size_t want = len < sizeof head ? len : sizeof head, first = ev->len < want ? ev->len : want;
    memcpy(head, ev->data, first);
    if (want > first) memcpy(head + first, ev->data2, want - first);
    uint64_t written_ns = get_le64(head);
    if (len >= SIM_RECORD_HEADER_BYTES) {
        /* Count only the first hand-over of a record: a restart may hand it over again. */
        uint64_t k = get_le64(head + 8);
        if (k >= l->written) return;
        if (k >= l->handed_capacity) {
            size_t cap = l->handed_capacity ? l->handed_capacity : 1024;
            while (cap <= k) cap *= 2;
            uint8_t *p = realloc(l->handed, cap);
            if (p == NULL) return;
            memset(p + l->handed_capacity, 0, cap - l->handed_capacity);
            l->handed = p;
            l->handed_capacity = cap;
        }
        if (l->handed[k]) return;
        l->handed[k] = 1;
    }
    if (written_ns > w->engine.now_ns) return;
    if (l->latency_count == l->latency_capacity) {
        size_t cap = l->latency_capacity ? l->latency_capacity * 2 : 1024;
        uint64_t *p = realloc(l->latency_ns, cap * sizeof *p);
        if (p == NULL) return;
        l->latency_ns = p;
        l->latency_capacity = cap;
    }
    l->latency_ns[l->latency_count++] = w->engine.now_ns - written_ns;
}

static int fifo_push(sim_host_run *hr, const sim_store_item *item) {
    if (hr->fifo_count == hr->fifo_capacity) {
        size_t cap = hr->fifo_capacity ? hr->fifo_capacity * 2 : 256;
        sim_store_item *p = malloc(cap * sizeof *p);
        if (p == NULL) return -1;
        for (size_t i = 0; i < hr->fifo_count; i++) p[i] = hr->fifo[(hr->fifo_head + i) % hr->fifo_capacity];
        free(hr->fifo);
        hr->fifo = p;
        hr->fifo_head = 0;
        hr->fifo_capacity = cap;
    }
    hr->fifo[(hr->fifo_head + hr->fifo_count) % hr->fifo_capacity] = *item;
    hr->fifo_count++;
    return 0;
}

static void commit_all(sim_world *w, sim_node *n);

void sim_receiver_on_record(sim_world *w, sim_node *n, const pure_link_event *ev) {
    int idx;
    sim_host_run *hr = run_of_stream(n, ev->stream, &idx);
    if (hr == NULL) {
        sim_node_api_error(w, n, "RECORD on a stream not accepted", ev->stream);
        return;
    }
    if (sim_store_fault_stopping(n)) return; /* the host is going: the record is not taken */
    if (sim_store_fault_append_fails(w, n)) {
        commit_all(w, n); /* what was appended before it is still committed */
        return;
    }
    sim_link *l = hr->link != SIM_NO_LINK ? &w->links[hr->link] : NULL;
    const int64_t r = ev->record;
    n->records_delivered++;
    hr->delivered++;
    if (l) l->host_delivered++;
    if (r < 0 || r < hr->stored_mark || state_get(hr, r) != 0) {
        n->duplicates_delivered++;
        hr->duplicates++;
        if (l) l->duplicates++;
        sim_trace_begin(&w->trace, w->engine.now_ns, "app:duplicate");
        sim_trace_str(&w->trace, "node", n->spec->name);
        sim_trace_id(&w->trace, "run", hr->run);
        sim_trace_i64(&w->trace, "record", r);
        sim_trace_i64(&w->trace, "stored_mark", hr->stored_mark);
        sim_trace_end(&w->trace);
        return;
    }
    if (r != hr->next_expected) {
        n->out_of_order++;
        hr->out_of_order++;
        if (l) l->out_of_order++;
    }
    if (r + 1 > hr->next_expected) hr->next_expected = r + 1;
    if (state_reserve(hr, r) != 0) {
        sim_world_fail(w, "out of memory");
        return;
    }
    hr->state[r] = 1;
    if (l) measure_latency(w, l, ev);
    sim_store_item item = {w->engine.now_ns + n->spec->store_latency_ns, r, (uint32_t)(ev->len + ev->len2)};
    if (fifo_push(hr, &item) != 0) {
        sim_world_fail(w, "out of memory");
        return;
    }
    if (!hr->store_timer) {
        hr->store_timer = 1;
        sim_world_at(w, item.ready_ns, SIM_EV_STORE, n->index, (uint64_t)n->incarnation << 32 | (uint32_t)idx, NULL);
    }
}

/* Makes durable the first `most` records of hr's store queue that are due by due_ns, and
 * moves the stored mark over them; returns how far it moved. */
static int64_t make_durable(sim_world *w, sim_host_run *hr, uint64_t due_ns, uint64_t most) {
    sim_link *l = hr->link != SIM_NO_LINK ? &w->links[hr->link] : NULL;
    for (; most > 0 && hr->fifo_count > 0 && hr->fifo[hr->fifo_head].ready_ns <= due_ns; most--) {
        const sim_store_item *it = &hr->fifo[hr->fifo_head];
        hr->state[it->record] = 2;
        hr->stored_bytes += it->len;
        if (l) l->host_stored_bytes += it->len;
        hr->fifo_head = (hr->fifo_head + 1) % hr->fifo_capacity;
        hr->fifo_count--;
    }
    int64_t before = hr->stored_mark;
    while (state_get(hr, hr->stored_mark) == 2) hr->stored_mark++;
    if (l) l->host_stored += (uint64_t)(hr->stored_mark - before);
    if (l && l->recovery_state == SIM_RECOVERY_RUNNING && l->host_stored >= l->recovery_target) {
        uint64_t took_ns = w->engine.now_ns - l->recovery_from_ns;
        l->recovery_state = SIM_RECOVERY_NONE;
        l->recoveries++;
        if (took_ns > l->recovery_ns_max) l->recovery_ns_max = took_ns;
        sim_trace_begin(&w->trace, w->engine.now_ns, "sim:restart_recovered");
        sim_trace_str(&w->trace, "from", sim_node_name(w, l->from));
        sim_trace_str(&w->trace, "to", sim_node_name(w, l->to));
        sim_trace_u64(&w->trace, "took_ns", took_ns);
        sim_trace_u64(&w->trace, "records", l->recovery_target);
        sim_trace_end(&w->trace);
    }
    return hr->stored_mark - before;
}

/* A commit of hr's records due by due_ns: durable, then the endpoint hears it. */
static void commit_run(sim_world *w, sim_node *n, uint32_t run_index, uint64_t due_ns) {
    const uint64_t now = w->engine.now_ns;
    sim_host_run *hr = &n->runs[run_index];
    int64_t moved = make_durable(w, hr, due_ns, UINT64_MAX);
    if (moved > 0) {
        const int64_t before = hr->stored_mark - moved;
        sim_trace_begin(&w->trace, now, "app:records_stored");
        sim_trace_str(&w->trace, "node", n->spec->name);
        sim_trace_str(&w->trace, "peer", sim_node_name(w, hr->peer_node));
        sim_trace_id(&w->trace, "run", hr->run);
        sim_trace_i64(&w->trace, "stored_mark", hr->stored_mark);
        sim_trace_i64(&w->trace, "records", hr->stored_mark - before);
        sim_trace_end(&w->trace);
        /* Tell the endpoint only if the stream still serves this run. */
        if (hr->stream >= 0 && (size_t)hr->stream < n->stream_capacity && n->stream_runs[hr->stream] == (int32_t)run_index) {
            int r = pure_link_stored(n->pl, hr->stream, hr->stored_mark, now);
            if (r != 0) sim_node_api_error(w, n, "pure_link_stored", r);
        }
    }
}

/* Everything appended so far, committed now (a failing append stops the host after it). */
static void commit_all(sim_world *w, sim_node *n) {
    for (uint32_t i = 0; i < n->run_count; i++) commit_run(w, n, i, UINT64_MAX);
}

void sim_receiver_on_store(sim_world *w, sim_node *n, uint32_t run_index) {
    assert(run_index < n->run_count);
    sim_host_run *hr = &n->runs[run_index];
    hr->store_timer = 0;
    if (sim_store_fault_commit_fails(w, n)) return; /* nothing of this batch is claimed */
    commit_run(w, n, run_index, w->engine.now_ns);
    if (hr->fifo_count > 0) {
        hr->store_timer = 1;
        sim_world_at(w, hr->fifo[hr->fifo_head].ready_ns, SIM_EV_STORE, n->index,
                     (uint64_t)n->incarnation << 32 | run_index, NULL);
    }
    sim_node_service(w, n);
}

/* store_tail: keep -- the record file keeps a prefix of what was appended and not claimed. */
static void keep_tail(sim_world *w, sim_node *n, sim_host_run *hr) {
    uint64_t kept = sim_store_fault_tail_kept(w, n, hr->fifo_count);
    if (kept == 0) return;
    int64_t moved = make_durable(w, hr, UINT64_MAX, kept);
    sim_trace_begin(&w->trace, w->engine.now_ns, "store:tail_kept");
    sim_trace_str(&w->trace, "node", n->spec->name);
    sim_trace_id(&w->trace, "run", hr->run);
    sim_trace_u64(&w->trace, "records", kept);
    sim_trace_i64(&w->trace, "stored_mark", hr->stored_mark);
    sim_trace_i64(&w->trace, "mark_moved", moved);
    sim_trace_end(&w->trace);
}

/* The node's crash opens a recovery for each link into it whose sender had sent records
 * not yet stored: the records whose first byte left, counted by the open sender, each
 * of which the crashed incarnation may have held (received or handed over, not stored). */
static void recovery_open(sim_world *w, sim_node *n) {
    n->recoveries_waiting = 0;
    for (uint32_t i = 0; i < w->link_count; i++) {
        sim_link *l = &w->links[i];
        if (l->to != n->index) continue;
        l->recovery_state = SIM_RECOVERY_NONE;
        pure_link_stats s;
        if (sim_link_sender_stats(w, l, &s) != 0) continue;
        uint64_t target = l->run_base + s.records_sent;
        if (target <= l->host_stored) continue;
        assert(target <= l->written);
        l->recovery_state = SIM_RECOVERY_WAIT;
        l->recovery_target = target;
        n->recoveries_waiting++;
    }
}

void sim_receiver_on_arrival(sim_world *w, sim_node *n, const sim_packet *pkt) {
    if (n->recoveries_waiting == 0 || !sim_node_up(n) || pkt->forged != SIM_FORGED_NONE || pkt->corrupt) return;
    for (uint32_t i = 0; i < w->link_count; i++) {
        sim_link *l = &w->links[i];
        if (l->to != n->index || l->from != pkt->from || l->recovery_state != SIM_RECOVERY_WAIT) continue;
        l->recovery_state = SIM_RECOVERY_RUNNING;
        l->recovery_from_ns = w->engine.now_ns;
        assert(n->recoveries_waiting > 0);
        n->recoveries_waiting--;
    }
}

void sim_receiver_on_crash(sim_world *w, sim_node *n) {
    recovery_open(w, n);
    /* What was stored stays; what was only handed over is gone with the process (but for
     * the tail a store_tail: keep file holds). */
    for (size_t i = 0; i < n->run_count; i++) {
        sim_host_run *hr = &n->runs[i];
        keep_tail(w, n, hr);
        hr->stream = -1;
        hr->next_expected = hr->stored_mark;
        if ((size_t)hr->stored_mark < hr->state_capacity)
            memset(hr->state + hr->stored_mark, 0, hr->state_capacity - (size_t)hr->stored_mark);
        hr->fifo_count = 0;
        hr->fifo_head = 0;
        hr->store_timer = 0;
    }
    for (size_t i = 0; i < n->stream_capacity; i++) n->stream_runs[i] = -1;
    sim_store_fault_on_crash(n);
}

void sim_receiver_free(sim_node *n) {
    for (size_t i = 0; i < n->run_count; i++) {
        free(n->runs[i].state);
        free(n->runs[i].fifo);
    }
    free(n->runs);
    n->runs = NULL;
    n->run_count = n->run_capacity = 0;
}
