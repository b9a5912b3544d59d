/* event.c: the event queue the halves push to and the host drains (pure_link_event_next
 * in endpoint.c takes them out). */
#include "internal.h"

_Static_assert(offsetof(pure_link_event, secret) + 32 == offsetof(pure_link_event, sender_public) &&
               offsetof(pure_link_event, sender_public) + 32 == offsetof(pure_link_event, receiver_public) &&
               offsetof(pure_link_event, receiver_public) + 32 == sizeof(pure_link_event),
               "an EPOCH event's keys close the struct");

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
