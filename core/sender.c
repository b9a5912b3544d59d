/* sender.c: one output of this node — the public calls on it (open, send, close).  Its
 * record queue is queue.c, what goes into a datagram send.c, what a reply does reply.c. */
#include "internal.h"


static int name_ok(const char *name, uint8_t *len_out) {
    if (name == NULL) return 0;
    size_t n = pl_strnlen(name, PURE_LINK_NAME_MOST + 1);
    if (n == 0 || n > PURE_LINK_NAME_MOST) return 0;
    if (memchr(name, '\n', n) != NULL) return 0;  /* spec/wire.md: names hold no 0x00, 0x0a */
    *len_out = (uint8_t)n;
    return 1;
}

static pl_sender *sender_of(pure_link *pl, int handle) {
    assert(pl != NULL && pl->magic == PL_MAGIC);
    assert(handle >= 0 && (uint32_t)handle < pl->config.senders_most);
    pl_sender *s = &pl->senders[handle];
    assert(s->open);  /* a closed handle is misuse */
    return s;
}

/* Sets the sender's epoch-0 keys and its first OFFER.  The static secret S is used only to
 * compute E(0) and is wiped. */
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

int pure_link_sender_open(pure_link *pl, const pure_link_sender_config *cfg, uint64_t now_ns) {
    assert(pl != NULL && pl->magic == PL_MAGIC && cfg != NULL);
    assert(now_ns >= pl->now_ns);
    pl->now_ns = now_ns;
    if (pl->fatal) return PURE_LINK_ERR_FATAL;
    uint8_t source_len, input_len;
    if (cfg->version != PURE_LINK_VERSION || !name_ok(cfg->source, &source_len) ||
        !name_ok(cfg->input, &input_len) || cfg->receiver_addr.len == 0 ||
        cfg->receiver_addr.len > PURE_LINK_ADDR_MOST)
        return PURE_LINK_ERR_INVALID;
    pl_sender *s = NULL;
    for (uint32_t i = 0; i < pl->config.senders_most && s == NULL; i++)
        if (!pl->senders[i].open) s = &pl->senders[i];
    if (s == NULL) return PURE_LINK_ERR_FULL;

    /* Clear the struct but keep the storage carved at init. */
    uint32_t *block_table = s->block_table;
    uint64_t *record_start = s->record_start;
    pl_sent *sent = s->sent;
    uint32_t queue_bytes = s->queue_bytes, records_most = s->records_most, sent_most = s->sent_most;
    uint32_t table_most = s->table_most;
    int handle = s->handle;
    assert(s->blocks_held == 0);  /* a sender closes only with everything stored */
    memset(s, 0, sizeof *s);
    s->block_table = block_table, s->record_start = record_start, s->sent = sent;
    s->queue_bytes = queue_bytes, s->records_most = records_most, s->sent_most = sent_most;
    s->table_most = table_most;
    s->handle = handle;
    if ((uint32_t)handle + 1 > pl->senders_used) pl->senders_used = (uint32_t)handle + 1;
    memset(s->sent, 0, (size_t)s->sent_most * sizeof s->sent[0]);

    s->wiring = *cfg;
    s->wiring.source = NULL;
    s->wiring.input = NULL;
    memcpy(s->source, cfg->source, source_len);
    memcpy(s->input, cfg->input, input_len);
    s->source_len = source_len;
    s->input_len = input_len;
    do pl_random(pl, &s->run, sizeof s->run); while (s->run == 0 || pl_sender_by_run(pl, s->run) != NULL);
    s->open = 1;
    s->largest_acked = PL_NONE;
    s->pn_anchor = PL_NONE;
    s->largest_reply_pn = PL_NONE;
    s->trial_pn = PL_NONE;
    s->credit = PURE_LINK_CREDIT_FIRST;
    s->stats.version = PURE_LINK_STATS_VERSION;
    pl_rangeset_init(&s->resend, s->resend_store, PL_RESEND_RANGES_MOST);
    pl_rtt_init(&s->rtt, PL_RTT_NS_INITIAL);
    pl_rack_init(&s->rack);
    pl_cc_init(&s->cc, pl->config.congestion, PURE_LINK_DATAGRAM_MOST);
    pl_cc_seed(&s->cc, s->run);  /* senders do not probe in step */
    pl_pacer_init(&s->pacer, PURE_LINK_DATAGRAM_MOST, now_ns);
    s->loss_time_ns = PL_NONE;
    for (int t = 0; t < PL_ST_COUNT; t++) s->timers[t] = PL_NONE;
    if (sender_keys_start(pl, s) != 0) {
        s->open = 0;
        return PURE_LINK_ERR_CRYPTO;
    }
    pl->senders_open++;
    pl_sender_offer_new(pl, s, 1);
    return s->handle;
}

int64_t pure_link_send(pure_link *pl, int sender, const void *record, size_t len, uint64_t now_ns) {
    pl_sender *s = sender_of(pl, sender);
    assert(record != NULL || len == 0);
    assert(now_ns >= pl->now_ns);
    pl->now_ns = now_ns;
    if (pl->fatal) return PURE_LINK_ERR_FATAL;
    if (s->closing) return PURE_LINK_ERR_CLOSED;
    if (len > PURE_LINK_RECORD_MOST) return PURE_LINK_ERR_TOO_BIG;
    uint8_t prefix[8];
    size_t prefix_len = pl_record_prefix_put(prefix, sizeof prefix, len);
    assert(prefix_len > 0);
    if (s->records_end - s->records_stored >= s->records_most) return PURE_LINK_ERR_FULL;
    if (s->end_off - s->stored_off + prefix_len + len > s->queue_bytes) return PURE_LINK_ERR_FULL;
    if (pl_queue_grow(pl, s, s->end_off + prefix_len + len) != 0) return PURE_LINK_ERR_FULL;
    uint64_t number = s->records_end++;
    s->record_start[number % s->records_most] = s->end_off;
    pl_queue_put(pl, s, s->end_off, prefix, prefix_len);
    pl_queue_put(pl, s, s->end_off + prefix_len, record, len);
    s->end_off += prefix_len + len;
    s->stats.records_queued++;
    return (int64_t)number;
}

uint64_t pure_link_sender_run(const pure_link *pl, int sender) {
    assert(pl != NULL && pl->magic == PL_MAGIC);
    assert(sender >= 0 && (uint32_t)sender < pl->config.senders_most && pl->senders[sender].open);
    return pl->senders[sender].run;
}

int pure_link_sender_close(pure_link *pl, int sender, uint64_t now_ns) {
    pl_sender *s = sender_of(pl, sender);
    assert(now_ns >= pl->now_ns);
    pl->now_ns = now_ns;
    s->closing = 1;
    pl_sender_check_closed(pl, s);
    return 0;
}

/* The open sender of a run, or NULL (replies name their run). */
pl_sender *pl_sender_by_run(pure_link *pl, uint64_t run) {
    for (uint32_t i = 0; i < pl->senders_used; i++)
        if (pl->senders[i].open && pl->senders[i].run == run) return &pl->senders[i];
    return NULL;
}
