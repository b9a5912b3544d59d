/* deadline.c: when the endpoint next needs a call — the earliest wake-up of every sender
 * and run.  A sender's is derived from its timers and state, read when the host asks
 * (pure_link_deadline; senders are few).  A run's comes from its timers alone, which the
 * receiver sets here (pl_run_timer_set): each run with one keeps its earliest in a min-heap
 * of run slots, so a query reads the heap's top, not 40,000 slots.  Beside the heap, the
 * run slots' lists, through which the receiver finds the slots that have work (ready to
 * reply, held by a full event queue), a free slot, or the longest quiet run (the heard
 * list): what the endpoint does for one run never reads the others. */
#include "internal.h"

/* The earliest wake-up over every open sender and every run in use. */
uint64_t pl_deadline(const pure_link *pl) {
    uint64_t d = UINT64_MAX;
    for (uint32_t i = 0; i < pl->senders_used; i++)
        if (pl->senders[i].open) {
            uint64_t t = pl_sender_deadline(&pl->senders[i]);
            if (t < d) d = t;
        }
    if (pl->run_heap_count > 0) {
        uint64_t t = pl->runs[pl->run_heap[0]].deadline_ns;
        if (t < d) d = t;
    }
    return d;
}

uint64_t pl_sender_deadline(const pl_sender *s) {
    uint64_t d = PL_NONE;
    for (int t = 0; t < PL_ST_COUNT; t++)
        if (s->timers[t] < d) d = s->timers[t];
    if (!s->refused && s->acked_end > s->stored_off) {
        uint64_t t = s->stored_progress_ns + PL_RESEND_UNSTORED_NS;
        if (t < d) d = t;
    }
    if (s->epoch >= 1 && s->offer_epoch == 0) {
        uint64_t t = s->epoch_started_ns + s->epoch_ns_most;
        if (t < d) d = t;
    }
    /* Something to send but held back by pacing: wake when the pacer allows it. */
    if (s->pace_wait_ns != PL_NONE && s->pace_wait_ns < d) d = s->pace_wait_ns;
    /* A due copy waits only for pacing (whose deadline is above); every other refusal to
     * send drops it, so it never holds the deadline in the past. */
    if (s->copies_count > 0 && s->pace_wait_ns == PL_NONE && s->copies[0].due_ns < d) d = s->copies[0].due_ns;
    if (s->trial_due || s->probes_due) d = 0;
    return d;
}

uint64_t pl_run_deadline(const pl_run *r) {
    if (r->in_use != 1) return PL_NONE;
    uint64_t d = PL_NONE;
    for (int t = 0; t < PL_RT_COUNT; t++)
        if (r->timers[t] < d) d = r->timers[t];
    return d;
}

/* ---- The run heap: run_heap[0, run_heap_count) holds the slots whose deadline_ns is not
 * PL_NONE, each parent no later than its children; a slot knows its place (heap_at - 1). ---- */

static uint64_t heap_key(const pure_link *pl, uint32_t at) { return pl->runs[pl->run_heap[at]].deadline_ns; }

static void heap_place(pure_link *pl, uint32_t at, uint32_t handle) {
    pl->run_heap[at] = handle;
    pl->runs[handle].heap_at = at + 1;
}

static void heap_swap(pure_link *pl, uint32_t a, uint32_t b) {
    uint32_t ha = pl->run_heap[a], hb = pl->run_heap[b];
    heap_place(pl, a, hb);
    heap_place(pl, b, ha);
}

/* Moves the entry at `at` up or down until its parent is no later and its children no
 * earlier than it. */
static void heap_fix(pure_link *pl, uint32_t at) {
    while (at > 0 && heap_key(pl, (at - 1) / 2) > heap_key(pl, at)) {
        heap_swap(pl, at, (at - 1) / 2);
        at = (at - 1) / 2;
    }
    for (;;) {
        uint32_t least = at, l = 2 * at + 1, r = l + 1;
        if (l < pl->run_heap_count && heap_key(pl, l) < heap_key(pl, least)) least = l;
        if (r < pl->run_heap_count && heap_key(pl, r) < heap_key(pl, least)) least = r;
        if (least == at) return;
        heap_swap(pl, at, least);
        at = least;
    }
}

/* Sets one timer of a run and keeps the heap on the run's earliest. */
void pl_run_timer_set(pure_link *pl, pl_run *r, pl_run_timer t, uint64_t at_ns) {
    assert(t < PL_RT_COUNT && r->handle >= 0 && (uint32_t)r->handle < pl->config.runs_most);
    r->timers[t] = at_ns;
    uint64_t d = pl_run_deadline(r);
    if (d == r->deadline_ns && (d == PL_NONE) == (r->heap_at == 0)) return;
    r->deadline_ns = d;
    if (r->heap_at == 0) {
        if (d == PL_NONE) return;
        assert(pl->run_heap_count < pl->config.runs_most);
        heap_place(pl, pl->run_heap_count++, (uint32_t)r->handle);
        heap_fix(pl, r->heap_at - 1);
    } else if (d == PL_NONE) {
        uint32_t at = r->heap_at - 1, last = --pl->run_heap_count;
        r->heap_at = 0;
        if (at != last) {
            heap_place(pl, at, pl->run_heap[last]);
            heap_fix(pl, at);
        }
    } else {
        heap_fix(pl, r->heap_at - 1);
    }
}

/* The run slot whose deadline is due at now_ns, earliest first, or NULL: tick takes them
 * from the heap's top and leaves the runs with nothing due unread. */
pl_run *pl_run_due(pure_link *pl, uint64_t now_ns) {
    if (pl->run_heap_count == 0) return NULL;
    pl_run *r = &pl->runs[pl->run_heap[0]];
    return r->deadline_ns <= now_ns ? r : NULL;
}

/* ---- The run lists, first in first out, a slot on each at most once (so a list never
 * holds more than runs_most).  The ready list: slots that may have a reply due.  A slot is
 * put on it whenever what its run replies may have changed (a packet, a timer, the host's
 * answer or stored mark, a durable memo write); pull takes the head and looks, and a run
 * that sent goes to the back, so that every ready run gets its turn.  The held list: slots
 * whose delivery or events found the event queue full; when the host has drained the
 * queue, pure_link_event_next takes the whole list and tries each again. ---- */

static void list_append(pure_link *pl, pl_run_list l, pl_run *r) {
    assert(l < PL_RUN_LISTS && r->handle >= 0 && (uint32_t)r->handle < pl->config.runs_most);
    if (r->listed[l]) return;
    r->listed[l] = 1;
    r->list_next[l] = 0;
    uint32_t at = (uint32_t)r->handle + 1;
    if (pl->list_tail[l] == 0) pl->list_head[l] = at;
    else pl->runs[pl->list_tail[l] - 1].list_next[l] = at;
    pl->list_tail[l] = at;
}

/* Takes the list's head off it: the slot, or NULL when the list is empty. */
static pl_run *list_take(pure_link *pl, pl_run_list l) {
    if (pl->list_head[l] == 0) return NULL;
    pl_run *r = &pl->runs[pl->list_head[l] - 1];
    assert(r->listed[l]);
    pl->list_head[l] = r->list_next[l];
    if (pl->list_head[l] == 0) pl->list_tail[l] = 0;
    r->listed[l] = 0;
    r->list_next[l] = 0;
    return r;
}

void pl_run_ready_append(pure_link *pl, pl_run *r) { list_append(pl, PL_LIST_READY, r); }

pl_run *pl_run_ready_take(pure_link *pl) { return list_take(pl, PL_LIST_READY); }

/* Holding a slot also marks the endpoint blocked, which pure_link_event_next looks at. */
void pl_run_hold(pure_link *pl, pl_run *r) {
    pl->deliver_blocked = 1;
    list_append(pl, PL_LIST_HELD, r);
}

/* Empties the held list and returns its head (slot + 1; 0: none): the caller walks
 * list_next[PL_LIST_HELD], clearing each slot's mark before it tries the slot again (a
 * slot that finds the queue full again is held again, on the new list). */
uint32_t pl_runs_held_take(pure_link *pl) {
    uint32_t head = pl->list_head[PL_LIST_HELD];
    pl->list_head[PL_LIST_HELD] = pl->list_tail[PL_LIST_HELD] = 0;
    return head;
}

/* A slot let go by an unwired peer: the next new run takes it (pl_run_free_take). */
void pl_run_free(pure_link *pl, pl_run *r) { list_append(pl, PL_LIST_FREE, r); }

/* A free slot below runs_used, or NULL.  A slot on the list may have been taken since by
 * another way (a memo restore, say): such an entry is dropped. */
pl_run *pl_run_free_take(pure_link *pl) {
    for (pl_run *r; (r = list_take(pl, PL_LIST_FREE)) != NULL;)
        if (!r->in_use) return r;
    return NULL;
}

/* ---- The heard list: every run in use, by last_heard_ns, the longest quiet at the head.
 * Time never goes back, so a run heard now goes to the tail and the order holds. ---- */

void pl_run_unheard(pure_link *pl, pl_run *r) {
    uint32_t at = (uint32_t)r->handle + 1;
    if (r->heard_prev == 0 && pl->heard_head != at) return;  /* not on the list */
    if (r->heard_prev != 0) pl->runs[r->heard_prev - 1].heard_next = r->heard_next;
    else pl->heard_head = r->heard_next;
    if (r->heard_next != 0) pl->runs[r->heard_next - 1].heard_prev = r->heard_prev;
    else pl->heard_tail = r->heard_prev;
    r->heard_prev = r->heard_next = 0;
}

/* Moves run r, heard now, to the tail (pl_run_heard, internal.h, sets the time). */
void pl_run_heard_move(pure_link *pl, pl_run *r) {
    uint32_t at = (uint32_t)r->handle + 1;
    assert(r->in_use == 1 && pl->heard_tail != at);
    assert(r->heard_prev == 0 || pl->runs[r->heard_prev - 1].last_heard_ns <= r->last_heard_ns);
    pl_run_unheard(pl, r);
    r->heard_prev = pl->heard_tail;
    if (pl->heard_tail != 0) pl->runs[pl->heard_tail - 1].heard_next = at;
    else pl->heard_head = at;
    pl->heard_tail = at;
}
