/* run.c: a sender's run — how one starts (at open, and again when the sender moves to a new
 * run) and when a sender moves on.
 *
 * spec/protocol.md §2: a run sends fewer than 2^32 packets.  After a LOST the receiver has
 * nothing to decode the sender's numbers against and takes the 4 bytes it is sent as the
 * whole number, which is right below 2^32 only.  So from PL_RUN_PACKETS_DRAIN packets on a
 * run starts no new record; once every record it started is stored, the sender takes a new
 * run (new id, packet numbers from 0, epoch 0 under the new run's keys) and binds its stream
 * again from its stored mark.  Waiting for the stored mark is what keeps records exactly
 * once: the receiver's host keys what it stored on the run, so a record sent in two runs
 * could be stored twice. */
#include "internal.h"

/* The open sender of a run, or NULL (replies name their run). */
pl_sender *pl_sender_by_run(pure_link *pl, uint64_t run) {
    for (uint32_t i = 0; i < pl->senders_used; i++)
        if (pl->senders[i].open && pl->senders[i].run == run) return &pl->senders[i];
    return NULL;
}

/* Clears s but keeps the storage carved at init. */
void pl_sender_clear(pure_link *pl, pl_sender *s) {
    uint32_t *block_table = s->block_table;
    uint64_t *record_start = s->record_start;
    pl_sent *sent = s->sent;
    uint32_t queue_bytes = s->queue_bytes, records_most = s->records_most, sent_most = s->sent_most;
    uint32_t table_most = s->table_most;
    int handle = s->handle;
    memset(s, 0, sizeof *s);
    s->block_table = block_table, s->record_start = record_start, s->sent = sent;
    s->queue_bytes = queue_bytes, s->records_most = records_most, s->sent_most = sent_most;
    s->table_most = table_most;
    s->handle = handle;
    if ((uint32_t)handle + 1 > pl->senders_used) pl->senders_used = (uint32_t)handle + 1;
    memset(s->sent, 0, (size_t)s->sent_most * sizeof s->sent[0]);
}

/* Sets the sender's epoch-0 keys.  The static secret S is used only to compute E(0) and is
 * wiped. */
static int sender_keys_start(pure_link *pl, pl_sender *s) {
    uint8_t shared[32];
    s->stats.x25519_ops++;
    if (pl->crypto->x25519(shared, pl->static_secret, s->wiring.receiver_public) != 0) return -1;
    pl_epoch0_secret(s->static_e0, shared);
    memset(shared, 0, sizeof shared);
    pl_sender_keys_wipe(pl, s);
    pl_sender_set_epoch(pl, s, 0, s->static_e0);
    return 0;
}

/* A fresh run for a cleared sender with its wiring: its id, packet numbers, path state,
 * epoch-0 keys and first OFFER.  0, or PURE_LINK_ERR_CRYPTO. */
int pl_sender_run_start(pure_link *pl, pl_sender *s, uint64_t now_ns) {
    uint64_t run;
    do pl_random(pl, &run, sizeof run); while (run == 0 || pl_sender_by_run(pl, run) != NULL);
    s->run = run;
    s->largest_acked = PL_NONE;
    s->pn_anchor = PL_NONE;
    s->largest_reply_pn = PL_NONE;
    s->trial_pn = PL_NONE;
    s->credit = PURE_LINK_CREDIT_FIRST;
    pl_rangeset_init(&s->resend, s->resend_store, PL_RESEND_RANGES_MOST);
    pl_rtt_init(&s->rtt, PL_RTT_NS_INITIAL);
    pl_rack_init(&s->rack);
    pl_cc_init(&s->cc, pl->config.congestion, PURE_LINK_DATAGRAM_MOST);
    pl_cc_seed(&s->cc, s->run);  /* senders do not probe in step */
    pl_pacer_init(&s->pacer, PURE_LINK_DATAGRAM_MOST, now_ns);
    pl_pmtu_start(&s->pmtu, pl->config.pmtu_raise_ns);
    s->loss_time_ns = PL_NONE;
    for (int t = 0; t < PL_ST_COUNT; t++) s->timers[t] = PL_NONE;
    if (sender_keys_start(pl, s) != 0) return PURE_LINK_ERR_CRYPTO;
    pl_sender_offer_new(pl, s, 1);
    return 0;
}

/* Moves a draining sender whose started records are all stored, and that has more to send,
 * to a new run: what is queued stays, everything about the old run goes. */
void pl_sender_run_move(pure_link *pl, pl_sender *s, uint64_t now_ns) {
    if (!pl_sender_draining(s) || s->records_started != s->records_stored || s->records_end == s->records_started)
        return;
    assert(s->next_off == s->stored_off);  /* nothing sent beyond the stored mark */
    pl_sender_emit(pl, s);                 /* events of the old run go out under its id */
    pl_sender keep = *s;
    pl_sender_clear(pl, s);
    s->open = keep.open, s->closing = keep.closing;
    s->wiring = keep.wiring;
    memcpy(s->source, keep.source, sizeof s->source), memcpy(s->input, keep.input, sizeof s->input);
    s->source_len = keep.source_len, s->input_len = keep.input_len;
    s->blocks_held = keep.blocks_held, s->block_lo = keep.block_lo;
    s->records_stored = keep.records_stored, s->records_end = keep.records_end;
    s->records_started = keep.records_started;
    s->stored_off = s->next_off = s->acked_end = keep.stored_off, s->end_off = keep.end_off;
    s->stored_progress_ns = s->acked_progress_ns = now_ns;
    s->stored_event_due = keep.stored_event_due, s->refused_event_due = keep.refused_event_due;
    s->released_event_due = keep.released_event_due;
    s->stats = keep.stats;
    int rc = pl_sender_run_start(pl, s, now_ns);
    assert(rc == 0);  /* E(0) of the same two keys computed at open */
    (void)rc;
    s->pmtu = keep.pmtu;             /* the same path: its size stays, its probe was the old run's */
    pl_pmtu_forget_probe(&s->pmtu);
    memset(&keep, 0, sizeof keep);  /* the old run's keys */
}
