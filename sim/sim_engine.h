/* sim_engine.h: the virtual clock and the run loop's source of events.
 *
 * Time is nanoseconds of virtual time from the start of the run; it only moves when an
 * event is taken.  Nothing here reads a wall clock.  A run is bounded by a number of
 * events, so a livelock (two endpoints waking each other at one instant forever) ends
 * the run with an error instead of hanging it. */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include <stdint.h>

#include "sim_heap.h"

#define SIM_EVENTS_MOST_DEFAULT 200000000ull /* events per run unless the scenario says */

typedef struct sim_engine {
    uint64_t now_ns;       /* virtual time of the event being handled */
    uint64_t seq_next;     /* sequence number of the next scheduled event */
    uint64_t events_run;   /* events taken so far */
    uint64_t events_most;  /* the bound on events_run */
    int over_limit;        /* 1 once the bound was hit */
    int out_of_memory;     /* 1 if an event could not be stored */
    sim_heap heap;
} sim_engine;

void sim_engine_init(sim_engine *engine, uint64_t events_most);
void sim_engine_free(sim_engine *engine); /* does not free event payloads */

/* Schedules an event at at_ns (>= now).  Returns 0, or -1 if memory ran out (the engine
 * then reports out_of_memory and the run should end). */
int sim_engine_at(sim_engine *engine, uint64_t at_ns, uint32_t kind, uint32_t target, uint64_t arg,
                  void *ptr);

typedef enum sim_step {
    SIM_STEP_EVENT = 1,     /* *out holds the next event; the clock is at its time */
    SIM_STEP_IDLE = 0,      /* no event before until_ns; the clock is at until_ns
                               (unless until_ns is UINT64_MAX) */
    SIM_STEP_LIMIT = -1     /* events_most events were taken; the run must end */
} sim_step;

/* Takes the next event due at or before until_ns. */
sim_step sim_engine_next(sim_engine *engine, uint64_t until_ns, sim_event *out);

#endif
