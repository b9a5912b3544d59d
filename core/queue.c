/* queue.c: a sender's record queue in the send pool (spec/protocol.md §4.2 "Send memory"):
 * the bytes [stored_off, end_off) of its record stream, the start of each record, the
 * credit's limit. */
#include "internal.h"

/* Blocks a sender may hold: an even share of the send pool among the open senders, and
 * never less than one largest record (so any record can be queued once the pool has room). */
static uint32_t send_share(const pure_link *pl) {
    uint32_t even = pl->send_store.blocks / (pl->senders_open ? pl->senders_open : 1);
    uint32_t record = PURE_LINK_RECORD_MOST / PL_BLOCK_BYTES + 2;
    return even > record ? even : record;
}

/* Takes the blocks that stream bytes up to `end` need; 0, or -1 (nothing taken). */
int pl_queue_grow(pure_link *pl, pl_sender *s, uint64_t end) {
    if (s->blocks_held == 0) s->block_lo = s->end_off / PL_BLOCK_BYTES;
    uint64_t top = s->block_lo + s->blocks_held, want = (end + PL_BLOCK_BYTES - 1) / PL_BLOCK_BYTES;
    if (want <= top) return 0;
    uint64_t need = want - top;
    if (s->blocks_held + need > s->table_most || s->blocks_held + need > send_share(pl) ||
        need > pl->send_store.free_count)
        return -1;
    for (uint64_t b = top; b < want; b++) s->block_table[b % s->table_most] = pl_blocks_take(&pl->send_store);
    s->blocks_held += (uint32_t)need;
    return 0;
}

/* STORED moved stored_off on: blocks wholly below it go back (all of them when the queue
 * is empty). */
void pl_queue_stored(pure_link *pl, pl_sender *s) {
    uint64_t lo = s->stored_off == s->end_off ? s->block_lo + s->blocks_held : s->stored_off / PL_BLOCK_BYTES;
    while (s->blocks_held > 0 && s->block_lo < lo) {
        pl_blocks_give(&pl->send_store, s->block_table[s->block_lo % s->table_most]);
        s->block_lo++, s->blocks_held--;
    }
}

static uint8_t *queue_at(const pure_link *pl, const pl_sender *s, uint64_t off, size_t n, size_t *n_out) {
    uint64_t b = off / PL_BLOCK_BYTES;
    assert(b >= s->block_lo && b < s->block_lo + s->blocks_held);
    size_t at = (size_t)(off % PL_BLOCK_BYTES);
    *n_out = PL_BLOCK_BYTES - at < n ? PL_BLOCK_BYTES - at : n;
    return pl_block_bytes(&pl->send_store, s->block_table[b % s->table_most]) + at;
}

/* Copies len bytes into the queue at stream offset off (its blocks taken already). */
void pl_queue_put(const pure_link *pl, pl_sender *s, uint64_t off, const uint8_t *p, size_t len) {
    while (len > 0) {
        size_t take;
        uint8_t *dst = queue_at(pl, s, off, len, &take);
        memcpy(dst, p, take);
        off += take, p += take, len -= take;
    }
}

/* Queues one record at stream offset off (its blocks taken already): its length prefix
 * (prefix_len bytes, pl_record_prefix_size) written in place, then its bytes.  A record
 * that fits in the rest of its block (most do: blocks are 16 KiB) is one lookup and one
 * copy; the others go through pl_queue_put, piece by piece. */
void pl_queue_put_record(const pure_link *pl, pl_sender *s, uint64_t off, size_t prefix_len, const uint8_t *p,
                         size_t len) {
    assert(prefix_len > 0 && prefix_len == pl_record_prefix_size(len));
    size_t room;
    uint8_t *dst = queue_at(pl, s, off, prefix_len + len, &room);
    if (room < prefix_len) {  /* the prefix crosses a block's end */
        uint8_t prefix[8];
        pl_record_prefix_put(prefix, sizeof prefix, len);
        pl_queue_put(pl, s, off, prefix, prefix_len);
    } else {
        pl_record_prefix_put(dst, room, len);
        if (room - prefix_len >= len) {
            if (len > 0) memcpy(dst + prefix_len, p, len);
            return;
        }
    }
    pl_queue_put(pl, s, off + prefix_len, p, len);
}

void pl_queue_get(const pure_link *pl, const pl_sender *s, uint64_t off, uint8_t *out, size_t len) {
    assert(off >= s->stored_off && off + len <= s->end_off);
    while (len > 0) {
        size_t take;
        const uint8_t *src = queue_at(pl, s, off, len, &take);
        memcpy(out, src, take);
        off += take, out += take, len -= take;
    }
}

/* Stream offset below which records may be sent: the start of the first record beyond the
 * receiver's credit (spec: record numbers below the heard STORED mark + credit). */
uint64_t pl_sender_credit_off(const pl_sender *s) {
    uint64_t limit = s->records_stored + s->credit;
    uint64_t off = limit >= s->records_end ? s->end_off : s->record_start[limit % s->records_most];
    /* A draining run (run.c) finishes the records it started and starts no other. */
    if (pl_sender_draining(s) && s->records_started < s->records_end) {
        uint64_t unstarted = s->record_start[s->records_started % s->records_most];
        if (unstarted < off) off = unstarted;
    }
    /* spec/wire.md: never PL_STREAM_LEAD_MOST past the first unstored byte, so that 32-bit
     * offsets always decode. */
    uint64_t lead = s->stored_off + PL_STREAM_LEAD_MOST - 1;
    return off < lead ? off : lead;
}

/* The record number whose bytes hold stream offset off (binary search of the ring). */
uint64_t pl_sender_record_at(const pl_sender *s, uint64_t off) {
    uint64_t lo = s->records_stored, hi = s->records_end;  /* answer in [lo, hi) */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (s->record_start[mid % s->records_most] <= off) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* Bytes [stored_off, hi), acknowledged but not stored, go again: the receiver no longer has
 * them all (the 1 s resend rule, or a silence long enough for it to give them back). */
void pl_sender_resend_heard(pl_sender *s, uint64_t hi) {
    assert(hi <= s->acked_end && hi <= s->end_off);
    if (hi <= s->stored_off) return;
    pl_rangeset_add_cover(&s->resend, s->stored_off, hi);
    s->stats.records_resent += pl_sender_record_at(s, hi - 1) - s->records_stored + 1;
}
