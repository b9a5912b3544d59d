/* notify.c: what a sender tells its host — REFUSED, RELEASED, STORED, EPOCH and CLOSED
 * events, each once, when the event queue has room. */
#include "internal.h"

/* Events are emitted only when the queue has room; otherwise they wait for the next call. */
void pl_sender_emit(pure_link *pl, pl_sender *s) {
    if (pl_events_room(pl) < 4) pl->deliver_blocked = 1;  /* retried when the queue drains */
    if (s->refused_event_due && pl_events_room(pl) > 0) {
        pure_link_event *ev = pl_event_push(pl, PURE_LINK_EVENT_REFUSED);
        ev->sender = s->handle, ev->run = s->run, ev->reason = s->refused_reason;
        s->refused_event_due = 0;
    }
    if (s->released_event_due && pl_events_room(pl) > 0) {
        pure_link_event *ev = pl_event_push(pl, PURE_LINK_EVENT_RELEASED);
        ev->sender = s->handle, ev->run = s->run;
        s->released_event_due = 0;
    }
    if (s->stored_event_due && pl_events_room(pl) > 0) {
        pure_link_event *ev = pl_event_push(pl, PURE_LINK_EVENT_STORED);
        ev->sender = s->handle, ev->run = s->run, ev->record = (int64_t)s->records_stored;
        s->stored_event_due = 0;
    }
    if (s->epoch_event_due && pl_events_room(pl) > 0) {
        pure_link_event *ev = pl_event_push_epoch(pl, PL_SENDER_KEYS(s)->secret, pl->static_public,
                                                  s->wiring.receiver_public);
        ev->sender = s->handle, ev->run = s->run, ev->epoch = s->epoch;
        s->epoch_event_due = 0;
    }
    pl_sender_check_closed(pl, s);
}

/* A closing sender whose every record is stored reports CLOSED once and frees its slot. */
void pl_sender_check_closed(pure_link *pl, pl_sender *s) {
    if (!s->closing || s->records_stored < s->records_end || pl_events_room(pl) == 0) return;
    pure_link_event *ev = pl_event_push(pl, PURE_LINK_EVENT_CLOSED);
    ev->sender = s->handle;
    ev->run = s->run;
    s->open = 0;
    pl->senders_open--;
}
