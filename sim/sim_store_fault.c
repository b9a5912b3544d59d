/* sim_store_fault.c: the record store's failures (sim_store_fault.h): when they happen,
 * and the host's stop that follows each. */
#include "sim_store_fault.h"

#include <stdio.h>
#include <string.h>

#include "sim_value.h"
#include "sim_world.h"

#define WORD_MOST 64u

int sim_store_fault_parse(sim_store_fault_spec *s, const char *key, const char *value, const char **why) {
    char a[WORD_MOST], kw[WORD_MOST], b[WORD_MOST], kw2[WORD_MOST], c[WORD_MOST], extra;
    if (strcmp(key, "store_fail") == 0) {
        *why = "store_fail is 'TIME restart DELAY' (DELAY > 0)";
        if (sscanf(value, "%63s %63s %63s %c", a, kw, b, &extra) != 3 || strcmp(kw, "restart") != 0 ||
            sim_value_duration_ns(a, &s->fail_ns) != 0 || sim_value_duration_ns(b, &s->fail_restart_ns) != 0 ||
            s->fail_restart_ns == 0)
            return -1;
        s->fail_set = 1;
        return 1;
    }
    if (strcmp(key, "disk_full") == 0) {
        *why = "disk_full is 'TIME for DURATION restart DELAY' (DURATION, DELAY > 0)";
        if (sscanf(value, "%63s %63s %63s %63s %63s %c", a, kw, b, kw2, c, &extra) != 5 || strcmp(kw, "for") != 0 ||
            strcmp(kw2, "restart") != 0 || sim_value_duration_ns(a, &s->full_ns) != 0 ||
            sim_value_duration_ns(b, &s->full_for_ns) != 0 || sim_value_duration_ns(c, &s->full_restart_ns) != 0 ||
            s->full_for_ns == 0 || s->full_restart_ns == 0)
            return -1;
        s->full_set = 1;
        return 1;
    }
    if (strcmp(key, "store_tail") == 0) {
        *why = "store_tail is keep or drop";
        if (strcmp(value, "keep") != 0 && strcmp(value, "drop") != 0) return -1;
        s->tail_keep = strcmp(value, "keep") == 0;
        return 1;
    }
    return 0;
}

static sim_rng *rng_of(sim_world *w, sim_node *n) {
    sim_store_fault_state *st = &n->store_fault;
    if (!st->rng_ready) {
        char label[SIM_NODE_NAME_MOST + 8];
        snprintf(label, sizeof label, "store:%s", n->spec->name);
        sim_rng_derive(&st->rng, w->seed, label);
        st->rng_ready = 1;
    }
    return &st->rng;
}

/* The host stops now: the node crashes at this instant, in an event of its own, and starts
 * again restart_ns later. */
static void stop(sim_world *w, sim_node *n, int why, uint64_t restart_ns, const char *what) {
    const uint64_t now = w->engine.now_ns;
    n->store_fault.stopping = why;
    sim_trace_begin(&w->trace, now, what);
    sim_trace_str(&w->trace, "node", n->spec->name);
    sim_trace_u64(&w->trace, "restart_ns", restart_ns);
    sim_trace_end(&w->trace);
    sim_world_log(w, "node %s: %s, the host stops", n->spec->name, what);
    sim_world_at(w, now, SIM_EV_CRASH, n->index, 0, NULL);
    sim_world_at(w, now + restart_ns, SIM_EV_RESTART, n->index, 0, NULL);
}

int sim_store_fault_stopping(const sim_node *n) { return n->store_fault.stopping; }

int sim_store_fault_commit_fails(sim_world *w, sim_node *n) {
    const sim_store_fault_spec *s = &n->spec->store_fault;
    sim_store_fault_state *st = &n->store_fault;
    if (st->stopping) return 1;
    if (!s->fail_set || st->fail_fired || w->engine.now_ns < s->fail_ns) return 0;
    st->fail_fired = 1;
    st->sync_failures++;
    st->memo_writes_landed += sim_disk_sync_failed(&n->disk, rng_of(w, n));
    stop(w, n, SIM_STORE_STOP_SYNC_FAILED, s->fail_restart_ns, "store:fdatasync_failed");
    return 1;
}

int sim_store_fault_append_fails(sim_world *w, sim_node *n) {
    const sim_store_fault_spec *s = &n->spec->store_fault;
    const uint64_t now = w->engine.now_ns;
    if (n->store_fault.stopping || !s->full_set || now < s->full_ns || now - s->full_ns >= s->full_for_ns) return 0;
    n->store_fault.full_stops++;
    stop(w, n, SIM_STORE_STOP_DISK_FULL, s->full_restart_ns, "store:disk_full");
    return 1;
}

uint64_t sim_store_fault_tail_kept(sim_world *w, sim_node *n, uint64_t waiting) {
    /* After a failed fdatasync the store cut its files back to their durable ends. */
    if (!n->spec->store_fault.tail_keep || waiting == 0 || n->store_fault.stopping == SIM_STORE_STOP_SYNC_FAILED)
        return 0;
    uint64_t kept = sim_rng_upto(rng_of(w, n), waiting);
    n->store_fault.tail_records_kept += kept;
    return kept;
}

void sim_store_fault_on_crash(sim_node *n) { n->store_fault.stopping = 0; }
