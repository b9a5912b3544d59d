/* event.c: the event queue the halves push to and the host drains (pure_link_event_next
 * in endpoint.c takes them out). */
#include "internal.h"

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
    *ev = (pure_link_event){.kind = kind, .sender = -1, .stream = -1, .peer = -1};  /* the rest 0 */
    return ev;
}

/* An EPOCH event points at its keys, copied beside its slot (the run's own may change
 * before the host takes the event); pure_link_event_next wipes the secret at the call
 * after the host took it. */
pure_link_event *pl_event_push_epoch(pure_link *pl, const uint8_t secret[32], const uint8_t sender_public[32],
                                     const uint8_t receiver_public[32]) {
    pure_link_event *ev = pl_event_push(pl, PURE_LINK_EVENT_EPOCH);
    uint32_t at = (uint32_t)(ev - pl->events);
    if (pl->event_keys_out == at + 1) pl->event_keys_out = 0;  /* its slot came round again: new keys */
    uint8_t *keys = pl->event_keys[at];
    memcpy(keys, secret, 32);
    memcpy(keys + 32, sender_public, 32);
    memcpy(keys + 64, receiver_public, 32);
    ev->secret = keys, ev->sender_public = keys + 32, ev->receiver_public = keys + 64;
    return ev;
}
