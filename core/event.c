/* event.c: the event queue the halves push to and the host drains (pure_link_event_next
 * in endpoint.c takes them out). */
#include "internal.h"

_Static_assert(offsetof(pure_link_event, secret) + 32 == offsetof(pure_link_event, sender_public) &&
               offsetof(pure_link_event, sender_public) + 32 == offsetof(pure_link_event, receiver_public) &&
               offsetof(pure_link_event, receiver_public) + 32 == sizeof(pure_link_event),
               "an EPOCH event's keys close the struct");

/* A dropped event stays in its slot as kind NONE, which pure_link_event_next passes over
 * (its hand-over copy is released with the events around it). */
uint32_t pl_events_drop_records(pure_link *pl, int stream) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < pl->ev_count; i++) {
        pure_link_event *ev = &pl->events[(pl->ev_head + i) % PL_EVENTS_MOST];
        if (ev->kind != PURE_LINK_EVENT_RECORD || ev->stream != stream) continue;
        ev->kind = PURE_LINK_EVENT_NONE;
        ev->data = NULL, ev->len = 0, ev->data2 = NULL, ev->len2 = 0;
        n++;
    }
    return n;
}

pure_link_event *pl_event_push(pure_link *pl, pure_link_event_kind kind) {
    assert(pl->ev_count < PL_EVENTS_MOST);  /* callers check pl_events_room() first */
    uint32_t at = (pl->ev_head + pl->ev_count) % PL_EVENTS_MOST;
    pure_link_event *ev = &pl->events[at];
    pl->event_stage_end[at] = 0;
    pl->ev_count++;
    /* The keys at the struct's end are written by an EPOCH event only, and read only from an
     * EPOCH event's slot (pure_link_event_next): other events leave them as they are, so
     * neither a push nor init clears them. */
    memset(ev, 0, offsetof(pure_link_event, secret));
    ev->kind = kind;
    ev->sender = -1;
    ev->stream = -1;
    ev->peer = -1;
    return ev;
}
