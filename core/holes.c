/* holes.c: where a run's set of received stream ranges (its holes' edges) lives.
 *
 * In order, a run holds one range beyond delivery; after losses, one more per hole.  So
 * the slot itself keeps PL_RANGES_INLINE ranges, and a run that needs more borrows one of
 * the endpoint's hole tables (PL_RANGES_MOST ranges) until its ranges fit the slot again.
 * With every table lent, the run stays at PL_RANGES_INLINE: a packet that would open one
 * more hole is not kept and not acknowledged, so the sender sends it again (stream.c);
 * that costs a retransmission, never a record. */
#include "internal.h"

/* Tables for a config: PL_HOLE_TABLES_LEAST (at most one per run slot), or one per
 * PL_HOLE_SLOTS_PER_TABLE slots when that is more. */
uint32_t pl_hole_tables(const pure_link_config *c) {
    uint32_t share = c->runs_most / PL_HOLE_SLOTS_PER_TABLE;
    uint32_t n = share > PL_HOLE_TABLES_LEAST ? share : PL_HOLE_TABLES_LEAST;
    return n < c->runs_most ? n : c->runs_most;
}

static pl_range *table_at(const pure_link *pl, uint32_t t) {
    return pl->hole_store + (size_t)t * PL_RANGES_MOST;
}

/* The set empty, in the slot; a borrowed table goes back. */
void pl_run_have_clear(pure_link *pl, pl_run *r) {
    if (r->have_table != 0) pl_blocks_give(&pl->hole_tables, r->have_table - 1);
    r->have_table = 0;
    pl_rangeset_init(&r->have, r->have_inline, PL_RANGES_INLINE);
}

/* pl_rangeset_add, borrowing a table when the slot's ranges are all in use. */
int pl_run_have_add(pure_link *pl, pl_run *r, uint64_t lo, uint64_t hi) {
    if (pl_rangeset_add(&r->have, lo, hi) == 0) return 0;
    if (r->have_table != 0 || pl->hole_tables.free_count == 0) return -1;
    uint32_t table = pl_blocks_take(&pl->hole_tables);
    r->have_table = table + 1;
    pl_range *t = table_at(pl, table);
    memcpy(t, r->have.r, r->have.count * sizeof t[0]);
    r->have.r = t;
    r->have.most = PL_RANGES_MOST;
    return pl_rangeset_add(&r->have, lo, hi);
}

/* After ranges went (delivery, a trim): a table goes back once its ranges fit half the
 * slot's room, so that a run near the edge does not borrow and return at every packet. */
void pl_run_have_fit(pure_link *pl, pl_run *r) {
    if (r->have_table == 0 || r->have.count > PL_RANGES_INLINE / 2) return;
    memcpy(r->have_inline, r->have.r, r->have.count * sizeof r->have_inline[0]);
    pl_blocks_give(&pl->hole_tables, r->have_table - 1);
    r->have_table = 0;
    r->have.r = r->have_inline;
    r->have.most = PL_RANGES_INLINE;
}
