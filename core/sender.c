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

    assert(s->blocks_held == 0);  /* a sender closes only with everything stored */
    pl_sender_clear(pl, s);
    s->wiring = *cfg;
    s->wiring.source = NULL;
    s->wiring.input = NULL;
    memcpy(s->source, cfg->source, source_len);
    memcpy(s->input, cfg->input, input_len);
    s->source_len = source_len;
    s->input_len = input_len;
    s->open = 1;
    s->resuming = cfg->resume != 0;
    s->stats.version = PURE_LINK_STATS_VERSION;
    if (pl_sender_run_start(pl, s, now_ns) != 0) {
        s->open = 0;
        return PURE_LINK_ERR_CRYPTO;
    }
    pl->senders_open++;
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
    if (s->resuming) return PURE_LINK_ERR_FULL;  /* numbered only once the receiver answered */
    size_t prefix_len = pl_record_prefix_size(len);
    assert(prefix_len > 0);
    if (s->records_end - s->records_stored >= s->records_most) return PURE_LINK_ERR_FULL;
    if (s->end_off - s->stored_off + prefix_len + len > s->queue_bytes) return PURE_LINK_ERR_FULL;
    if (pl_queue_grow(pl, s, s->end_off + prefix_len + len) != 0) return PURE_LINK_ERR_FULL;
    uint64_t number = s->records_end++;
    s->record_start[number % s->records_most] = s->end_off;
    pl_queue_put_record(pl, s, s->end_off, prefix_len, record, len);
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

int pure_link_path_hint(pure_link *pl, const pure_link_addr *to, uint32_t kind, uint32_t datagram_bytes,
                        uint64_t now_ns) {
    assert(pl != NULL && pl->magic == PL_MAGIC && to != NULL);
    assert(now_ns >= pl->now_ns);
    pl->now_ns = now_ns;
    if (pl->fatal) return PURE_LINK_ERR_FATAL;
    if ((kind != PURE_LINK_HINT_TOO_BIG && kind != PURE_LINK_HINT_UNREACHABLE) || to->len == 0 ||
        to->len > PURE_LINK_ADDR_MOST)
        return PURE_LINK_ERR_INVALID;
    /* Only a sender that sends to `to` takes it (RFC 8899 §4.6.1: a hint about another path
     * is no evidence about this one). */
    int taken = 0;
    for (uint32_t i = 0; i < pl->senders_used; i++) {
        pl_sender *s = &pl->senders[i];
        if (!s->open || !pl_addr_equal(&s->wiring.receiver_addr, to)) continue;
        pl_pmtu_hint(s, kind, datagram_bytes, now_ns);
        taken++;
    }
    if (taken == 0 && kind == PURE_LINK_HINT_TOO_BIG) pl->stats.path_too_big_hints++;
    if (taken == 0 && kind == PURE_LINK_HINT_UNREACHABLE) pl->stats.path_unreachable_hints++;
    return taken;
}
