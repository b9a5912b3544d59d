/* test_ranges.c: the bounded range sets (reassembly, resend, ACK) and the replay window,
 * at their edges. */
#include "harness.h"
#include "internal.h"

static void add_merges_touching_and_overlapping(void) {
    pl_range store[4];
    pl_rangeset s;
    pl_rangeset_init(&s, store, 4);
    CHECK(pl_rangeset_add(&s, 10, 20) == 0);
    CHECK(pl_rangeset_add(&s, 30, 40) == 0);
    CHECK(pl_rangeset_add(&s, 20, 30) == 0);  /* touches both: one range */
    CHECK_EQ_U(s.count, 1);
    CHECK(s.r[0].lo == 10 && s.r[0].hi == 40);
    CHECK(pl_rangeset_add(&s, 5, 50) == 0);   /* swallows */
    CHECK(s.count == 1 && s.r[0].lo == 5 && s.r[0].hi == 50);
    CHECK(pl_rangeset_add(&s, 7, 7) == 0);    /* empty: nothing */
    CHECK_EQ_U(s.count, 1);
}

static void full_set_refuses_a_new_range_and_keeps_its_own(void) {
    pl_range store[2];
    pl_rangeset s;
    pl_rangeset_init(&s, store, 2);
    CHECK(pl_rangeset_add(&s, 0, 1) == 0);
    CHECK(pl_rangeset_add(&s, 10, 11) == 0);
    CHECK(pl_rangeset_add(&s, 20, 21) == -1);
    CHECK(s.count == 2 && s.r[1].lo == 10);
    CHECK(pl_rangeset_add(&s, 1, 10) == 0);   /* joining needs no entry */
    CHECK(s.count == 1 && s.r[0].hi == 11);
}

static void cover_never_forgets(void) {
    pl_range store[2];
    pl_rangeset s;
    pl_rangeset_init(&s, store, 2);
    pl_rangeset_add_cover(&s, 0, 10);
    pl_rangeset_add_cover(&s, 100, 110);
    pl_rangeset_add_cover(&s, 30, 40);          /* nearer the first: it grows to 40 */
    CHECK(s.count == 2 && s.r[0].lo == 0 && s.r[0].hi == 40 && s.r[1].lo == 100);
    pl_rangeset_add_cover(&s, 90, 95);          /* nearer the second: it starts at 90 */
    CHECK(s.count == 2 && s.r[1].lo == 90 && s.r[1].hi == 110);
    pl_rangeset_add_cover(&s, 200, 210);        /* past the end: the last grows */
    CHECK(s.count == 2 && s.r[1].hi == 210);
    for (uint64_t v = 0; v < 210; v++)
        if ((v < 10) || (v >= 30 && v < 40) || (v >= 90 && v < 95) || (v >= 100 && v < 110) || v >= 200)
            CHECK(pl_rangeset_contains(&s, v));
}

static void remove_splits_and_trims(void) {
    pl_range store[3];
    pl_rangeset s;
    pl_rangeset_init(&s, store, 3);
    pl_rangeset_add(&s, 0, 100);
    pl_rangeset_remove(&s, 40, 60);
    CHECK(s.count == 2 && s.r[0].hi == 40 && s.r[1].lo == 60);
    pl_rangeset_remove_below(&s, 50);
    CHECK(s.count == 1 && s.r[0].lo == 60 && s.r[0].hi == 100);
    pl_rangeset_remove(&s, 0, 1000);
    CHECK_EQ_U(s.count, 0);
}

static void ack_ranges_drop_the_oldest_when_full(void) {
    pl_range store[3];
    pl_rangeset s;
    pl_rangeset_init(&s, store, 3);
    for (uint64_t pn = 0; pn < 10; pn += 2) pl_rangeset_add_pn(&s, pn);  /* 0 2 4 6 8 */
    CHECK_EQ_U(s.count, 3);
    CHECK(s.r[0].lo == 4 && s.r[2].lo == 8);
    pl_rangeset_add_pn(&s, 5);                                        /* 4..6 join */
    CHECK(s.count == 2 && s.r[0].lo == 4 && s.r[0].hi == 7);
}

static void replay_window_edges(void) {
    uint64_t w[PL_REPLAY_WINDOW / 64] = {0}, largest = PL_NONE;
    CHECK(pl_replay_check(w, largest, 5000));
    pl_replay_mark(w, &largest, 5000);
    CHECK(!pl_replay_check(w, largest, 5000));                         /* seen */
    CHECK(pl_replay_check(w, largest, 5000 - (PL_REPLAY_WINDOW - 1)));  /* oldest inside */
    CHECK(!pl_replay_check(w, largest, 5000 - PL_REPLAY_WINDOW));       /* just outside */
    pl_replay_mark(w, &largest, 4999);
    CHECK(!pl_replay_check(w, largest, 4999));
    pl_replay_mark(w, &largest, 5000 + PL_REPLAY_WINDOW + 10);          /* a jump clears */
    CHECK(!pl_replay_check(w, largest, 5000));                          /* now too old */
    CHECK(pl_replay_check(w, largest, 5000 + PL_REPLAY_WINDOW + 9));
    CHECK(!pl_replay_check(w, largest, 5000 + PL_REPLAY_WINDOW + 10));
    uint64_t top = 5000 + PL_REPLAY_WINDOW + 10;                      /* numbers in order from here */
    for (uint64_t pn = top + 1; pn <= top + PL_REPLAY_WINDOW + 1; pn += 2) pl_replay_mark(w, &largest, pn);
    for (uint64_t pn = top + 2; pn <= top + PL_REPLAY_WINDOW; pn += 2) pl_replay_mark(w, &largest, pn);
    CHECK(largest == top + PL_REPLAY_WINDOW + 1);
    for (uint64_t pn = top + 2; pn <= largest; pn++) CHECK(!pl_replay_check(w, largest, pn));
    CHECK(!pl_replay_check(w, largest, top + 1));                       /* W behind: too old */
    pl_replay_mark(w, &largest, largest + 1);                           /* the next: its bit was pn - W's */
    CHECK(!pl_replay_check(w, largest, largest) && pl_replay_check(w, largest, largest + 1));
    CHECK(!pl_replay_check(w, largest, largest - (PL_REPLAY_WINDOW - 1)));
}

/* Random adds (in order mostly, as bytes and packet numbers come, and anywhere) and
 * removals against a bitmap: the set holds exactly the model's values while it has room,
 * its ranges stay sorted with gaps between them, and a full set refuses only a range that
 * needs a new entry. */
static void adds_and_removals_match_a_bitmap(void) {
    enum { SPAN = 512, MOST = 6 };
    pl_range store[MOST];
    pl_rangeset s;
    uint8_t model[SPAN];
    uint64_t seed = 29;
    for (int round = 0; round < 200; round++) {
        pl_rangeset_init(&s, store, MOST);
        memset(model, 0, sizeof model);
        uint64_t edge = 0;
        for (int step = 0; step < 60; step++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t x = seed >> 33, op = x % 8, lo = (x >> 3) % SPAN, len = 1 + (x >> 12) % 24;
            if (op < 4) lo = edge + (op == 0 ? 1 + (x >> 20) % 3 : 0);  /* at or just past the top */
            if (lo >= SPAN) lo = SPAN - 1;
            uint64_t hi = lo + len > SPAN ? SPAN : lo + len;
            if (op < 7) {
                uint32_t before = s.count;
                if (pl_rangeset_add(&s, lo, hi) == 0) memset(model + lo, 1, hi - lo);
                else CHECK(before == MOST && s.count == MOST);
                if (hi > edge) edge = hi;
            } else if ((x >> 30) & 1) {
                pl_rangeset_remove_below(&s, lo);
                memset(model, 0, lo);
            } else {
                pl_rangeset_remove(&s, lo, hi);
                memset(model + lo, 0, hi - lo);
            }
            for (uint32_t i = 0; i < s.count; i++) {
                CHECK(s.r[i].lo < s.r[i].hi);
                if (i > 0) CHECK(s.r[i - 1].hi < s.r[i].lo);
            }
            if (s.count < MOST)  /* a removal from a full set may have kept a split's lower part */
                for (uint64_t v = 0; v < SPAN; v++) CHECK(pl_rangeset_contains(&s, v) == model[v]);
            if (s.count == MOST) memset(model, 0, sizeof model), pl_rangeset_init(&s, store, MOST), edge = 0;
        }
    }
}

TEST_MAIN(TEST_CASE(adds_and_removals_match_a_bitmap), TEST_CASE(add_merges_touching_and_overlapping), TEST_CASE(full_set_refuses_a_new_range_and_keeps_its_own),
          TEST_CASE(cover_never_forgets), TEST_CASE(remove_splits_and_trims),
          TEST_CASE(ack_ranges_drop_the_oldest_when_full), TEST_CASE(replay_window_edges))
