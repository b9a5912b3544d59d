/* sim_engine.c: virtual clock, stable event order, event bound; see sim_engine.h. */
#include "sim_engine.h"

#include <assert.h>

void sim_engine_init(sim_engine *engine, uint64_t events_most) {
    engine->now_ns = 0;
    engine->seq_next = 0;
    engine->events_run = 0;
    engine->events_most = events_most ? events_most : SIM_EVENTS_MOST_DEFAULT;
    engine->over_limit = 0;
    engine->out_of_memory = 0;
    sim_heap_init(&engine->heap);
}

void sim_engine_free(sim_engine *engine) { sim_heap_free(&engine->heap); }

int sim_engine_at(sim_engine *engine, uint64_t at_ns, uint32_t kind, uint32_t target, uint64_t arg,
                  void *ptr) {
    assert(at_ns >= engine->now_ns); /* the past cannot be scheduled */
    sim_event ev = {at_ns, engine->seq_next++, kind, target, arg, ptr};
    if (sim_heap_push(&engine->heap, &ev) != 0) {
        engine->out_of_memory = 1;
        return -1;
    }
    return 0;
}

sim_step sim_engine_next(sim_engine *engine, uint64_t until_ns, sim_event *out) {
    if (engine->events_run >= engine->events_most) {
        engine->over_limit = 1;
        return SIM_STEP_LIMIT;
    }
    const sim_event *head = sim_heap_peek(&engine->heap);
    if (head == NULL || head->at_ns > until_ns) {
        /* An open-ended wait on an empty queue leaves the clock where it is. */
        if (until_ns > engine->now_ns && until_ns != UINT64_MAX) engine->now_ns = until_ns;
        return SIM_STEP_IDLE;
    }
    sim_heap_pop(&engine->heap, out);
    assert(out->at_ns >= engine->now_ns);
    engine->now_ns = out->at_ns;
    engine->events_run++;
    return SIM_STEP_EVENT;
}
