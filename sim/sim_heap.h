/* sim_heap.h: the event queue, a binary min-heap ordered by (time, sequence).
 *
 * The sequence number is given by the engine in scheduling order, so two events due at
 * the same nanosecond always run in the order they were scheduled: the run does not
 * depend on the heap's internal layout. */
#ifndef SIM_HEAP_H
#define SIM_HEAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct sim_event {
    uint64_t at_ns;   /* virtual time the event is due */
    uint64_t seq;     /* scheduling order; breaks ties of at_ns */
    uint32_t kind;    /* what to do (the engine's user defines the kinds) */
    uint32_t target;  /* which node, link, path ... */
    uint64_t arg;     /* a generation or token, so stale events can be recognised */
    void *ptr;        /* owned payload, e.g. a datagram in flight */
} sim_event;

typedef struct sim_heap {
    sim_event *items;
    size_t count;
    size_t capacity;
} sim_heap;

void sim_heap_init(sim_heap *heap);
void sim_heap_free(sim_heap *heap);
/* Returns 0, or -1 if memory ran out. */
int sim_heap_push(sim_heap *heap, const sim_event *ev);
/* Removes the earliest event into *out; returns 1, or 0 when empty. */
int sim_heap_pop(sim_heap *heap, sim_event *out);
/* The earliest event, or NULL. */
const sim_event *sim_heap_peek(const sim_heap *heap);

#endif
