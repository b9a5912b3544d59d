/* pool.c: the receive pool (spec/protocol.md §4.2 "Receive memory").  Every run's record
 * bytes — reassembly and delivered-but-unstored — live in blocks of PL_BLOCK_BYTES taken
 * from one budget; a map finds the block of (run slot, block number).  A run may hold a
 * fair share of the pool; a record too long for its share waits for the one ticket, which
 * promises it the whole record.  Records that span more than two blocks are copied into a
 * hand-over ring for the RECORD event, which offers two pieces at most.  The credit a run
 * grants is drawn from the pool too. */
#include "internal.h"

/* ---- The block map (map.c): keys never 0.  An authenticated run picks its block numbers
 * only within its window, so they need no keyed hash, and the map has twice the pool's
 * blocks in slots: it never fills, and takes no probe bound. ---- */

static uint64_t map_key(const pl_run *r, uint64_t block_no) {
    /* A run spans far fewer than 2^40 blocks, so the low 40 bits of the number tell its
     * blocks apart; the slot handle (< 2^20) takes the bits above. */
    return ((uint64_t)r->handle + 1) << 40 | (block_no & ((UINT64_C(1) << 40) - 1));
}

/* ---- Layout and init ---- */

void pl_pool_init(pl_pool *p, const pure_link_config *c) {
    p->ticket = -1;
    pl_blocks_init(&p->store);
    /* Room for one largest record stays outside the shares when the pool has it twice:
     * a long record then waits only for the ticket, not for every run to shrink. */
    uint32_t big = (uint32_t)(c->stream_buffer_bytes / PL_BLOCK_BYTES) + 2;
    p->big_blocks = p->store.blocks >= 2 * big ? big : 0;
}

/* ---- Shares and the ticket ---- */

/* Run r holds pool memory or the ticket: look again PL_RUN_STOPPED_NS after it was last
 * heard (pl_run_mem_stopped). */
static void stopped_watch(pure_link *pl, pl_run *r) {
    if (r->timers[PL_RT_STOPPED] == PL_NONE) pl_run_timer_set(pl, r, PL_RT_STOPPED, r->last_heard_ns + PL_RUN_STOPPED_NS);
}

static uint32_t blocks_of(uint64_t lo, uint64_t hi) {
    return hi <= lo ? 0 : (uint32_t)((hi - 1) / PL_BLOCK_BYTES - lo / PL_BLOCK_BYTES + 1);
}

/* A queued entry still asks for the ticket: its run waits and has not handed the record
 * over yet (the shares may have grown back and let it through before its turn came).  An
 * entry is its run's only while the run's entry number names it: a run that let go and asked
 * again, or a slot's next run, queues anew at the back. */
static int ticket_live(const pl_run *r) {
    return r->in_use && r->ticket_state == PL_TICKET_WAITING && r->deliver_off < r->ticket_end;
}

/* The run of queue entry i (from the head) if the entry still asks for the ticket, else NULL. */
static pl_run *entry_run(const pure_link *pl, uint32_t i) {
    const pl_pool *p = &pl->pool;
    pl_run *r = &pl->runs[p->queue[(p->queue_head + i) % p->queue_most]];
    return ticket_live(r) && r->ticket_entry == p->queue_head_no + i ? r : NULL;
}

static void queue_pop(pl_pool *p) {
    p->queue_head = (p->queue_head + 1) % p->queue_most, p->queue_count--, p->queue_head_no++;
}

/* Blocks run r's record still needs to be held whole. */
static uint32_t ticket_need(const pl_run *r) {
    uint32_t span = blocks_of(r->stored_off, r->ticket_end);
    return span > r->mem_blocks ? span - r->mem_blocks : 0;
}

/* The first waiting run while no run holds the ticket (NULL when none waits). */
static const pl_run *waiting_head(const pure_link *pl) {
    const pl_pool *p = &pl->pool;
    if (p->ticket >= 0 || p->queue_count == 0) return NULL;
    return entry_run(pl, 0);
}

/* Blocks the first waiting run's record still needs (0 when none waits). */
static uint32_t head_need(const pure_link *pl) {
    const pl_run *r = waiting_head(pl);
    return r == NULL ? 0 : ticket_need(r);
}

/* Blocks kept outside the shares: room for one largest record, or (in a pool too small to
 * keep it aside) what the ticket's record needs while it waits or fills. */
static uint32_t reserve_blocks(const pure_link *pl) {
    const pl_pool *p = &pl->pool;
    uint32_t need = p->ticket >= 0 ? p->promised : head_need(pl);
    uint32_t reserve = need > p->big_blocks ? need : p->big_blocks;
    return reserve < p->store.blocks ? reserve : p->store.blocks;
}

/* Run r's fair share of the pool's blocks but `reserve`: per peer first, then per run
 * within the peer (r and its peer counted), at most stream_buffer_bytes. */
static uint64_t share_of(const pure_link *pl, const pl_run *r, uint32_t reserve) {
    const pl_pool *p = &pl->pool;
    const pl_peer *peer = &pl->peers[r->peer];
    uint32_t peers = p->peers_holding + (peer->runs_holding == 0), runs = peer->runs_holding + (r->mem_blocks == 0);
    uint64_t share = (uint64_t)((p->store.blocks - reserve) / peers / runs) * PL_BLOCK_BYTES;
    return share < pl->config.stream_buffer_bytes ? share : pl->config.stream_buffer_bytes;
}

/* Bytes from its stored mark that run r may hold: the ticket's record, or its share. */
static uint64_t window_of(const pure_link *pl, const pl_run *r) {
    const pl_pool *p = &pl->pool;
    if (p->ticket == r->handle) return r->ticket_end - r->stored_off;
    /* While a record waits for free blocks, every other run takes no new bytes: it keeps
     * what it handed over (until stored) and nothing beyond, so freed blocks go only to
     * the waiting record and it gathers them whatever the others hold or are sent. */
    const pl_run *head = waiting_head(pl);
    if (head != NULL && head != r) return r->deliver_off - r->stored_off;
    return share_of(pl, r, reserve_blocks(pl));
}

/* pl_run_window when r's share is not kept (or the ticket is in play). */
uint64_t pl_run_window_of(const pure_link *pl, pl_run *r) {
    const pl_pool *p = &pl->pool;
    if (p->ticket >= 0 || p->queue_count > 0) return window_of(pl, r);
    assert(reserve_blocks(pl) == p->big_blocks);
    r->share = share_of(pl, r, p->big_blocks);
    r->share_at = p->holding_changes;
    return r->share;
}

/* Bytes of free blocks run r could take now (blocks promised to the ticket excluded). */
uint64_t pl_run_pool_free(const pure_link *pl, const pl_run *r) {
    const pl_pool *p = &pl->pool;
    if (p->ticket == r->handle) return (uint64_t)p->store.free_count * PL_BLOCK_BYTES;
    return p->store.free_count > p->promised ? (uint64_t)(p->store.free_count - p->promised) * PL_BLOCK_BYTES : 0;
}

/* Gives the ticket to the first waiting run whose record the free blocks can hold.  FIFO:
 * no run is passed, so each waits at most for the records queued before it. */
static void ticket_grant(pure_link *pl) {
    pl_pool *p = &pl->pool;
    while (p->ticket < 0 && p->queue_count > 0) {
        pl_run *r = entry_run(pl, 0);
        if (r == NULL) {
            r = &pl->runs[p->queue[p->queue_head]];
            if (r->in_use && r->ticket_state == PL_TICKET_WAITING && r->deliver_off >= r->ticket_end &&
                r->ticket_entry == p->queue_head_no)
                r->ticket_state = PL_TICKET_NONE;  /* its record went through before its turn */
            queue_pop(p);
            continue;
        }
        uint32_t need = ticket_need(r);
        if (p->store.free_count < need) return;
        queue_pop(p);
        p->ticket = r->handle;
        p->promised = need;
        r->ticket_state = PL_TICKET_HELD;
        stopped_watch(pl, r);
    }
}

/* Keeps only the entries that still ask, in order: a full queue then holds one entry per
 * waiting run at most, and the slots are as many as the runs. */
static void queue_compact(pure_link *pl) {
    pl_pool *p = &pl->pool;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < p->queue_count; i++) {
        pl_run *r = entry_run(pl, i);
        if (r == NULL) continue;
        p->queue[(p->queue_head + kept) % p->queue_most] = (uint32_t)r->handle;
        r->ticket_entry = p->queue_head_no + kept++;
    }
    p->queue_count = kept;
}

/* Run r's next record ends at stream offset end, beyond its share: it queues for the ticket. */
void pl_run_ticket_ask(pure_link *pl, pl_run *r, uint64_t end) {
    pl_pool *p = &pl->pool;
    assert(end - r->stored_off <= pl->config.stream_buffer_bytes);
    if (r->ticket_state != PL_TICKET_NONE) return;
    if (p->queue_count == p->queue_most) queue_compact(pl);
    assert(p->queue_count < p->queue_most);  /* r itself has no live entry */
    r->ticket_state = PL_TICKET_WAITING;
    r->ticket_end = end;
    r->ticket_entry = p->queue_head_no + p->queue_count;
    p->queue[(p->queue_head + p->queue_count) % p->queue_most] = (uint32_t)r->handle;
    p->queue_count++;
    ticket_grant(pl);
}

/* The ticket's record was handed over (or its run let go): the promise ends. */
static void ticket_drop(pure_link *pl, pl_run *r) {
    pl_pool *p = &pl->pool;
    if (r->ticket_state == PL_TICKET_HELD) {
        assert(p->ticket == r->handle);
        p->ticket = -1;
        p->promised = 0;
    }
    r->ticket_state = PL_TICKET_NONE;  /* a queued entry is skipped when it comes up */
    ticket_grant(pl);
}

/* Run r's record was handed over: a held ticket passes on, and a waiting one is not
 * granted later for a record already through (its window would end below its mark). */
void pl_run_ticket_done(pure_link *pl, pl_run *r) {
    if (r->ticket_state != PL_TICKET_NONE && r->deliver_off >= r->ticket_end) ticket_drop(pl, r);
}

/* ---- Blocks of a run ---- */

/* The pool block of r at block_no, or PL_MAP_NONE.  Packets fill a block after another and
 * records are read soon after their bytes came, so the block written last is asked most:
 * it is kept beside the run (the hint), and the map is looked up for the others. */
static uint32_t block_index(const pure_link *pl, const pl_run *r, uint64_t block_no) {
    if (r->mem_hint_at == block_no + 1) return r->mem_hint_block;
    return pl_map_get(&pl->pool.map, map_key(r, block_no));
}

static uint8_t *block_find(const pure_link *pl, const pl_run *r, uint64_t block_no) {
    uint32_t block = block_index(pl, r, block_no);
    return block == PL_MAP_NONE ? NULL : pl_block_bytes(&pl->pool.store, block);
}

/* The block of r at block_no, taken from the pool if r has none there; NULL when the pool
 * has no block for r (the rest is promised to the ticket, or all are taken). */
static uint8_t *block_get(pure_link *pl, pl_run *r, uint64_t block_no) {
    pl_pool *p = &pl->pool;
    uint32_t block = block_index(pl, r, block_no);
    if (block == PL_MAP_NONE) {
        int holder = p->ticket == r->handle;
        if (p->store.free_count == 0 || (!holder && p->store.free_count <= p->promised)) return NULL;
        block = pl_blocks_take(&p->store);
        if (holder && p->promised > 0) p->promised--;
        pl_map_put(&p->map, map_key(r, block_no), block);
        if (r->mem_blocks++ == 0) {
            p->holding_changes++;
            p->runs_holding++;
            if (pl->peers[r->peer].runs_holding++ == 0) p->peers_holding++;
            stopped_watch(pl, r);
        }
        if (block_no + 1 > r->mem_top) r->mem_top = block_no + 1;
    }
    r->mem_hint_at = block_no + 1, r->mem_hint_block = block;
    return pl_block_bytes(&p->store, block);
}

static void block_give(pure_link *pl, pl_run *r, uint64_t block_no) {
    pl_pool *p = &pl->pool;
    uint64_t key = map_key(r, block_no);
    uint32_t block = pl_map_get(&p->map, key);
    if (block == PL_MAP_NONE) return;  /* a hole never written */
    if (r->mem_hint_at == block_no + 1) r->mem_hint_at = 0;
    pl_blocks_give(&p->store, block);
    pl_map_del(&p->map, key, block);
    assert(r->mem_blocks > 0);
    if (--r->mem_blocks == 0) {
        p->holding_changes++;
        p->runs_holding--, r->mem_top = 0;
        if (--pl->peers[r->peer].runs_holding == 0) p->peers_holding--;
    }
}

static void mem_give_from(pure_link *pl, pl_run *r, uint64_t cut);

/* No free block for r's bytes up to block last: r gives back its highest block beyond them,
 * with the bytes in it (they come again, as bytes beyond memory do).  So bytes nearer the
 * delivery point always find room among the run's own blocks: a share counted in bytes from
 * an unaligned stored mark spans one block more than it holds, and a run alone in a pool of
 * one largest record held every block beyond a hole in its record, which then never filled
 * (spec/protocol.md §4.2 "Lower bytes first").  0 when a block went back, -1 when r holds
 * none beyond last. */
static int mem_give_top(pure_link *pl, pl_run *r, uint64_t last) {
    assert(last >= r->deliver_off / PL_BLOCK_BYTES);  /* bytes at or beyond the delivery point */
    while (r->mem_top > last + 1) {
        uint64_t top = r->mem_top - 1;
        int held = block_index(pl, r, top) != PL_MAP_NONE;
        mem_give_from(pl, r, top * PL_BLOCK_BYTES);
        assert(r->mem_top <= top);
        if (held) return 0;
    }
    return -1;
}

/* Writes n bytes at stream offset off; 0, or -1 (nothing written) when the pool cannot
 * give the blocks. */
int pl_run_mem_write(pure_link *pl, pl_run *r, uint64_t off, const uint8_t *src, size_t n) {
    uint64_t first = off / PL_BLOCK_BYTES, last = (off + n - 1) / PL_BLOCK_BYTES;
    assert(n > 0 && n <= PURE_LINK_DATAGRAM_MOST && last - first <= 1);  /* one packet's bytes */
    uint8_t *dst[2] = {NULL, NULL};
    for (uint64_t b = first; b <= last; b++)
        if ((dst[b - first] = block_get(pl, r, b)) == NULL) return -1;
    for (size_t i = 0, at = (size_t)(off % PL_BLOCK_BYTES); n > 0; i++, at = 0) {  /* the rest opens the next block */
        size_t take = PL_BLOCK_BYTES - at < n ? PL_BLOCK_BYTES - at : n;
        memcpy(dst[i] + at, src, take);
        src += take, n -= take;
    }
    return 0;
}

/* pl_run_mem_write when it found no room: r gives back its own blocks beyond the bytes,
 * highest first, until they fit (mem_give_top).  0, or -1 when they cannot. */
int pl_run_mem_write_lower(pure_link *pl, pl_run *r, uint64_t off, const uint8_t *src, size_t n) {
    uint64_t last = (off + n - 1) / PL_BLOCK_BYTES;
    while (mem_give_top(pl, r, last) == 0)  /* each time one block fewer beyond */
        if (pl_run_mem_write(pl, r, off, src, n) == 0) return 0;
    return -1;
}

/* pl_run_mem_at, for bytes outside the block the run wrote last. */
const uint8_t *pl_run_mem_at_map(const pure_link *pl, const pl_run *r, uint64_t off, size_t n, size_t *n_out) {
    const uint8_t *b = block_find(pl, r, off / PL_BLOCK_BYTES);
    assert(b != NULL);  /* only bytes that were received are read */
    return b + pl_block_piece(off, n, n_out);
}

void pl_run_mem_read(const pure_link *pl, const pl_run *r, uint64_t off, uint8_t *dst, size_t n) {
    while (n > 0) {
        size_t take;
        const uint8_t *src = pl_run_mem_at(pl, r, off, n, &take);
        memcpy(dst, src, take);
        off += take, dst += take, n -= take;
    }
}

/* While a long record waits for the ticket and the free blocks cannot hold it, a run holding more than its share
 * gives back the blocks beyond it, with the bytes in them that were not handed over yet
 * (acknowledged or not: they come again, by loss recovery or the 1 s resend rule).  So
 * the shares shrink to leave the ticket's record room even when runs filled the pool
 * before it came. */
/* Run r gives back its blocks wholly at or beyond stream offset cut (at least its delivery
 * point), with the bytes in them not handed over yet. */
static void mem_give_from(pure_link *pl, pl_run *r, uint64_t cut) {
    assert(cut >= r->deliver_off);
    uint64_t first = cut == r->stored_off ? cut / PL_BLOCK_BYTES : (cut + PL_BLOCK_BYTES - 1) / PL_BLOCK_BYTES;
    if (first >= r->mem_top) return;
    pl_rangeset_remove(&r->have, first * PL_BLOCK_BYTES > cut ? first * PL_BLOCK_BYTES : cut, UINT64_MAX);
    pl_run_have_fit(pl, r);
    for (uint64_t b = first; b < r->mem_top && r->mem_blocks > 0; b++) block_give(pl, r, b);
    r->mem_top = r->mem_blocks > 0 ? first : 0;
    ticket_grant(pl);
}

void pl_run_mem_trim_for_head(pure_link *pl, pl_run *r) {
    const pl_pool *p = &pl->pool;
    if (r->mem_blocks == 0 || r->ticket_state == PL_TICKET_HELD || head_need(pl) <= p->store.free_count) return;
    uint64_t cut = r->stored_off + pl_run_window(pl, r);
    if (cut < r->deliver_off) cut = r->deliver_off;  /* handed over: the host holds those */
    mem_give_from(pl, r, cut);
}

/* Run r's stream failed to parse at its delivery point: nothing beyond it can ever be
 * handed over, so every byte past it goes back (and its ticket, if it asked), and the
 * records handed over stay until the host stores them (their prefixes are read then). */
void pl_run_mem_broken(pure_link *pl, pl_run *r) {
    if (r->ticket_state != PL_TICKET_NONE) ticket_drop(pl, r);
    pl_rangeset_remove(&r->have, r->deliver_off, UINT64_MAX);
    pl_run_have_fit(pl, r);
    mem_give_from(pl, r, r->deliver_off);
}

/* Run r holds pool memory or the ticket.  If it has not been heard for PL_RUN_STOPPED_NS
 * (its sender crashed mid-record, say), it gives both back as a broken stream does: its
 * bytes past the delivery point come again if the sender does (the 1 s resend rule, or a
 * new run), and what it handed over stays until the host stores it (spec/protocol.md §4.2). */
void pl_run_mem_stopped(pure_link *pl, pl_run *r, uint64_t now_ns) {
    if (r->mem_blocks == 0 && r->ticket_state == PL_TICKET_NONE) return;
    if (now_ns - r->last_heard_ns < PL_RUN_STOPPED_NS) {
        pl_run_timer_set(pl, r, PL_RT_STOPPED, r->last_heard_ns + PL_RUN_STOPPED_NS);
        return;
    }
    pl_run_mem_broken(pl, r);
    if (r->mem_blocks > 0) pl_run_timer_set(pl, r, PL_RT_STOPPED, now_ns + PL_RUN_STOPPED_NS);
}

/* The stored mark moved from `from` to r->stored_off: blocks wholly below it go back. */
void pl_run_mem_stored(pure_link *pl, pl_run *r, uint64_t from) {
    /* With nothing held beyond the mark, its block goes too (an idle run holds nothing). */
    int empty = r->stored_off == r->deliver_off && r->have.count == 0;
    uint64_t to = empty ? r->mem_top : r->stored_off / PL_BLOCK_BYTES;
    for (uint64_t b = from / PL_BLOCK_BYTES; b < to && r->mem_blocks > 0; b++) block_give(pl, r, b);
    if (pl->pool.queue_count > 0) ticket_grant(pl);  /* at every record stored: no call for an empty queue */
}

/* Everything r holds goes back (a new binding, a refusal, a slot taken over). */
void pl_run_mem_release(pure_link *pl, pl_run *r) {
    if (r->ticket_state != PL_TICKET_NONE) ticket_drop(pl, r);
    if (r->mem_blocks > 0) {
        for (uint64_t b = r->stored_off / PL_BLOCK_BYTES; b < r->mem_top && r->mem_blocks > 0; b++)
            block_give(pl, r, b);
        assert(r->mem_blocks == 0);
    }
    r->mem_top = 0;
    ticket_grant(pl);
}

/* ---- Hand-over ring for records of more than two pieces ---- */

/* Copies record [start, start + len) of r into the ring; NULL when it has no room now
 * (delivery waits until the host has taken the records before). */
const uint8_t *pl_stage_record(pure_link *pl, const pl_run *r, uint64_t start, size_t len, uint64_t *end_out) {
    pl_pool *p = &pl->pool;
    assert(len <= PL_STAGE_BYTES);
    if (p->stage_head == p->stage_tail) p->stage_head = p->stage_tail = p->stage_popped_end = 0;
    size_t at = (size_t)(p->stage_tail % PL_STAGE_BYTES);
    uint64_t skip = at + len > PL_STAGE_BYTES ? PL_STAGE_BYTES - at : 0;  /* no wrap inside a record */
    if (p->stage_tail + skip + len - p->stage_head > PL_STAGE_BYTES) return NULL;
    p->stage_tail += skip;
    uint8_t *dst = p->stage + (size_t)(p->stage_tail % PL_STAGE_BYTES);
    pl_run_mem_read(pl, r, start, dst, len);
    p->stage_tail += len;
    *end_out = p->stage_tail;
    return dst;
}

/* Credit (spec/protocol.md "Credit"): the room left in the run's window of the receive
 * pool (no more than the pool has free for it) divided by the average bytes per record
 * delivered so far, within 1..65,536; 1,024 before any delivery. */
uint64_t pl_run_credit(const pure_link *pl, const pl_run *r) {
    if (r->delivered_records == 0) return PURE_LINK_CREDIT_FIRST;
    uint64_t held_end = r->have.count > 0 ? r->have.r[r->have.count - 1].hi : r->deliver_off;
    if (held_end < r->deliver_off) held_end = r->deliver_off;
    uint64_t held = held_end - r->stored_off, size = window_of(pl, r);
    uint64_t room = held < size ? size - held : 0, free_bytes = pl_run_pool_free(pl, r);
    if (room > free_bytes) room = free_bytes;
    uint64_t per_record = r->delivered_bytes / r->delivered_records;
    if (per_record == 0) per_record = 1;
    uint64_t credit = room / per_record;
    if (credit < 1) credit = 1;
    if (credit > PURE_LINK_CREDIT_MOST) credit = PURE_LINK_CREDIT_MOST;
    return credit;
}
