/* ranges.c: bounded sets of disjoint [lo, hi) ranges (reassembly, resend, ACK), and the
 * replay window over packet numbers. */
#include "internal.h"

void pl_rangeset_init(pl_rangeset *s, pl_range *store, uint32_t most) {
    assert(most >= 1);
    s->count = 0;
    s->most = most;
    s->r = store;
}

/* pl_rangeset_add for a range that starts below the last one's start (or an empty set). */
int pl_rangeset_add_scan(pl_rangeset *s, uint64_t lo, uint64_t hi) {
    assert(lo < hi && (s->count == 0 || lo < s->r[s->count - 1].lo));
    uint32_t i = 0;
    while (i < s->count && s->r[i].hi < lo) i++;       /* first range that may touch */
    uint32_t j = i;
    while (j < s->count && s->r[j].lo <= hi) j++;      /* ranges [i, j) touch [lo, hi) */
    if (i == j) {
        if (s->count == s->most) return -1;
        memmove(&s->r[i + 1], &s->r[i], (s->count - i) * sizeof s->r[0]);
        s->r[i].lo = lo;
        s->r[i].hi = hi;
        s->count++;
        return 0;
    }
    uint64_t nlo = s->r[i].lo < lo ? s->r[i].lo : lo;
    uint64_t nhi = s->r[j - 1].hi > hi ? s->r[j - 1].hi : hi;
    s->r[i].lo = nlo;
    s->r[i].hi = nhi;
    memmove(&s->r[i + 1], &s->r[j], (s->count - j) * sizeof s->r[0]);
    s->count -= j - i - 1;
    return 0;
}

/* Merges ranges that overlap or touch after a range grew. */
static void coalesce(pl_rangeset *s) {
    uint32_t out = 0;
    for (uint32_t i = 1; i < s->count; i++) {
        if (s->r[i].lo <= s->r[out].hi) {
            if (s->r[i].hi > s->r[out].hi) s->r[out].hi = s->r[i].hi;
        } else {
            s->r[++out] = s->r[i];
        }
    }
    if (s->count > 0) s->count = out + 1;
}

/* Adds [lo, hi); when the set is full, the range nearest to it grows to cover it.  The set
 * may then hold more than was added: right for "bytes to send again", where an extra byte
 * costs a duplicate and a forgotten one costs a stall. */
void pl_rangeset_add_cover(pl_rangeset *s, uint64_t lo, uint64_t hi) {
    if (pl_rangeset_add(s, lo, hi) == 0) return;
    assert(s->count == s->most && s->most >= 1);
    uint32_t i = 0;
    while (i < s->count && s->r[i].lo < lo) i++;  /* r[i - 1] starts before, r[i] at or after */
    int left = i > 0;
    if (left && i < s->count) left = lo - s->r[i - 1].hi <= s->r[i].lo - hi;
    if (left) {
        if (hi > s->r[i - 1].hi) s->r[i - 1].hi = hi;
    } else {
        s->r[i].lo = lo;
        if (hi > s->r[i].hi) s->r[i].hi = hi;
    }
    coalesce(s);
}

void pl_rangeset_remove(pl_rangeset *s, uint64_t lo, uint64_t hi) {
    for (uint32_t i = 0; i < s->count;) {
        pl_range *x = &s->r[i];
        if (x->hi <= lo || x->lo >= hi) { i++; continue; }
        if (x->lo < lo && x->hi > hi) {                 /* split: needs one more entry */
            if (s->count == s->most) { x->hi = lo; return; }  /* keep the lower part */
            memmove(&s->r[i + 2], &s->r[i + 1], (s->count - i - 1) * sizeof s->r[0]);
            s->r[i + 1].lo = hi;
            s->r[i + 1].hi = x->hi;
            x->hi = lo;
            s->count++;
            return;
        }
        if (x->lo < lo) { x->hi = lo; i++; continue; }
        if (x->hi > hi) { x->lo = hi; i++; continue; }
        memmove(&s->r[i], &s->r[i + 1], (s->count - i - 1) * sizeof s->r[0]);
        s->count--;
    }
}

/* Packet numbers for ACK: when the set is full, the oldest range is forgotten (the sender
 * has long since had it acknowledged or given it up). */
void pl_rangeset_add_pn_full(pl_rangeset *s, uint64_t pn) {
    assert(s->count == s->most);
    memmove(&s->r[0], &s->r[1], (s->count - 1) * sizeof s->r[0]);
    s->count--;
    int ok = pl_rangeset_add(s, pn, pn + 1);
    assert(ok == 0);
    (void)ok;
}

/* pl_rangeset_remove(s, 0, lo): the ranges wholly below lo go, and the first one left
 * starts at lo at the earliest. */
void pl_rangeset_remove_below(pl_rangeset *s, uint64_t lo) {
    uint32_t k = 0;
    while (k < s->count && s->r[k].hi <= lo) k++;
    if (k > 0) {
        memmove(&s->r[0], &s->r[k], (s->count - k) * sizeof s->r[0]);
        s->count -= k;
    }
    if (s->count > 0 && s->r[0].lo < lo) s->r[0].lo = lo;
}

int pl_rangeset_contains(const pl_rangeset *s, uint64_t v) {
    for (uint32_t i = 0; i < s->count; i++)
        if (v >= s->r[i].lo && v < s->r[i].hi) return 1;
    return 0;
}

/* Replay window: bit (pn % W) is set when pn was seen; pns at or below largest - W are old. */
int pl_replay_check(const uint64_t *window, uint64_t largest, uint64_t pn) {
    if (largest == PL_NONE || pn > largest) return 1;
    if (largest - pn >= PL_REPLAY_WINDOW) return 0;
    uint64_t bit = pn % PL_REPLAY_WINDOW;
    return (window[bit / 64] >> (bit % 64) & 1) == 0;
}

void pl_replay_mark(uint64_t *window, uint64_t *largest, uint64_t pn) {
    if (*largest != PL_NONE && pn == *largest + 1) {  /* the next number: its bit is the one to clear and set */
        *largest = pn;
        window[pn % PL_REPLAY_WINDOW / 64] |= 1ull << (pn % 64);
        return;
    }
    if (*largest == PL_NONE || pn > *largest) {
        uint64_t from = *largest == PL_NONE ? pn : *largest + 1;
        /* Clear the bits of the numbers skipped over, then move the edge. */
        if (*largest == PL_NONE || pn - *largest >= PL_REPLAY_WINDOW) {
            memset(window, 0, PL_REPLAY_WINDOW / 8);
        } else {
            for (uint64_t q = from; q <= pn; q++) {
                uint64_t b = q % PL_REPLAY_WINDOW;
                window[b / 64] &= ~(1ull << (b % 64));
            }
        }
        *largest = pn;
    }
    uint64_t bit = pn % PL_REPLAY_WINDOW;
    window[bit / 64] |= 1ull << (bit % 64);
}
