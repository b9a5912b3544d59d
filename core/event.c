/* event.c: the event queue the halves push to and the host drains (pure_link_event_next
 * in endpoint.c takes them out). */
#include "internal.h"

uint32_t pl_events_room(const pure_link *pl) { return PL_EVENTS_MOST - pl->ev_count; }

pure_link_event *pl_event_push(pure_link *pl, pure_link_event_kind kind) {
    assert(pl->ev_count < PL_EVENTS_MOST);  /* callers check pl_events_room() first */
    uint32_t at = (pl->ev_head + pl->ev_count) % PL_EVENTS_MOST;
    pure_link_event *ev = &pl->events[at];
    pl->event_stage_end[at] = 0;
    pl->ev_count++;
    memset(ev, 0, sizeof *ev);
    ev->kind = kind;
    ev->sender = -1;
    ev->stream = -1;
    ev->peer = -1;
    return ev;
}
