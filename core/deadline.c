/* deadline.c: when the endpoint next needs a call — the earliest wake-up of every sender
 * and run, from their timers and state (read only: the halves set timers; the scan runs
 * when the host asks, pure_link_deadline). */
#include "internal.h"

/* The earliest wake-up over every sender and run, read when the host asks (a scan at each
 * call into the endpoint would cost every datagram O(senders + runs)). */
uint64_t pl_deadline(const pure_link *pl) {
    uint64_t d = UINT64_MAX;
    for (uint32_t i = 0; i < pl->senders_used; i++)
        if (pl->senders[i].open) {
            uint64_t t = pl_sender_deadline(&pl->senders[i]);
            if (t < d) d = t;
        }
    for (uint32_t i = 0; i < pl->runs_used; i++)
        if (pl->runs[i].in_use) {
            uint64_t t = pl_run_deadline(&pl->runs[i]);
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
