/* sim_heap.c: binary min-heap of events; see sim_heap.h. */
#include "sim_heap.h"

#include <assert.h>
#include <stdlib.h>

#define SIM_HEAP_CAPACITY_FIRST 1024u /* events room at the first push; doubles after */

static int before(const sim_event *a, const sim_event *b) {
    if (a->at_ns != b->at_ns) return a->at_ns < b->at_ns;
    return a->seq < b->seq;
}

void sim_heap_init(sim_heap *heap) {
    heap->items = NULL;
    heap->count = 0;
    heap->capacity = 0;
}

void sim_heap_free(sim_heap *heap) {
    free(heap->items);
    sim_heap_init(heap);
}

int sim_heap_push(sim_heap *heap, const sim_event *ev) {
    if (heap->count == heap->capacity) {
        size_t cap = heap->capacity ? heap->capacity * 2 : SIM_HEAP_CAPACITY_FIRST;
        sim_event *items = realloc(heap->items, cap * sizeof *items);
        if (items == NULL) return -1;
        heap->items = items;
        heap->capacity = cap;
    }
    /* Sift up: move parents down until the new event's place is found. */
    size_t i = heap->count++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(ev, &heap->items[parent])) break;
        heap->items[i] = heap->items[parent];
        i = parent;
    }
    heap->items[i] = *ev;
    return 0;
}

int sim_heap_pop(sim_heap *heap, sim_event *out) {
    if (heap->count == 0) return 0;
    *out = heap->items[0];
    sim_event last = heap->items[--heap->count];
    size_t n = heap->count;
    size_t i = 0;
    /* Sift down the last event from the root. */
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && before(&heap->items[child + 1], &heap->items[child])) child++;
        if (!before(&heap->items[child], &last)) break;
        heap->items[i] = heap->items[child];
        i = child;
    }
    if (n > 0) heap->items[i] = last;
    assert(heap->count == 0 || !before(&heap->items[0], out));
    return 1;
}

const sim_event *sim_heap_peek(const sim_heap *heap) {
    return heap->count ? &heap->items[0] : NULL;
}
