/* test_live_runs.c: a receiver with many live runs finds its work without looking at the
 * quiet ones — pull serves the run the host's answer made ready, tick serves the one run
 * whose timer is due among hundreds that have none, memo_written frees the ACCEPT of the
 * run its write was for, and a run that found the event queue full is taken up again
 * (the ready and held lists and the deadline heap, core/deadline.c), and a new run finds
 * the longest quiet slot or one an unwiring let go without reading every slot. */
#include "harness.h"
#include "internal.h"

#define QUIET_RUNS 300u

static pure_link *endpoint(pure_link_config c, void **mem, uint8_t seed0) {
    size_t n = pure_link_size(&c);
    CHECK(n > 0);
    *mem = aligned_alloc(PURE_LINK_ALIGN, (n + PURE_LINK_ALIGN - 1) / PURE_LINK_ALIGN * PURE_LINK_ALIGN);
    uint8_t seed[32] = {seed0};
    pure_link *pl = pure_link_init(*mem, n, &c, seed, 0);
    CHECK(pl != NULL);
    return pl;
}

static pure_link *receiver_of(void **mem, int memo, uint32_t runs_most) {
    pure_link_config c = {.senders_most = PURE_LINK_NONE, .peers_most = 512, .runs_most = runs_most,
                          .memo_enabled = (uint8_t)memo, .idle_ns = PL_NS_PER_S};
    c.static_secret[0] = 0x51;
    return endpoint(c, mem, 1);
}

static pure_link *receiver(void **mem, int memo) { return receiver_of(mem, memo, 1024); }

static const pure_link_addr rx_addr = {.len = 6, .bytes = {10, 0, 0, 1}};

static pure_link_addr addr_of(uint32_t k) {
    return (pure_link_addr){.len = 6, .bytes = {10, 1, (uint8_t)(k >> 8), (uint8_t)k, 0, 9}};
}

/* Sends the first datagram of a new sender (key k) with one record to rx from addr_of(k);
 * returns the peer it is wired as. */
static int run_start(pure_link *rx, uint32_t k, uint64_t now_ns) {
    pure_link_config c = {.senders_most = 1, .peers_most = PURE_LINK_NONE, .send_queue_records = 64,
                          .packets_in_flight_most = 64};
    c.static_secret[1] = (uint8_t)k, c.static_secret[2] = (uint8_t)(k >> 8), c.static_secret[3] = 0x77;  /* byte 0 is clamped */
    void *mem;
    pure_link *tx = endpoint(c, &mem, (uint8_t)k);
    uint8_t pub[32];
    pure_link_public_key(tx, pub);
    int wired = pure_link_wire_peer(rx, pub, "*", now_ns);  /* a peer per run */
    if (wired < 0) fprintf(stderr, "wire %u: %s\n", k, pure_link_strerror(wired));
    CHECK(wired >= 0);
    pure_link_sender_config sc = {.version = PURE_LINK_VERSION, .source = "s", .input = "i"};
    pure_link_public_key(rx, sc.receiver_public);
    sc.receiver_addr = rx_addr;
    int out = pure_link_sender_open(tx, &sc, now_ns);
    CHECK(out >= 0);
    CHECK(pure_link_send(tx, out, (const uint8_t *)"r", 1, now_ns) >= 0);  /* a record: STREAM goes with it */
    uint8_t d[PURE_LINK_DATAGRAM_MOST];
    pure_link_addr to, from = addr_of(k);
    int len;
    while ((len = pure_link_pull(tx, d, sizeof d, &to, now_ns)) > 0) pure_link_receive(rx, &from, d, (size_t)len, now_ns);
    free(mem);
    return wired;
}

/* Takes rx's events: answers STREAM_OPEN (accept) if told to, stores every record, makes
 * memo writes durable if told to; returns the stream of the last STREAM_OPEN. */
static int drain(pure_link *rx, int answer, int memo_durable, uint64_t now_ns) {
    pure_link_event ev;
    int last = -1;
    while (pure_link_event_next(rx, &ev))
        if (ev.kind == PURE_LINK_EVENT_STREAM_OPEN) {
            last = ev.stream;
            if (answer) CHECK(pure_link_stream_answer(rx, ev.stream, 0, 0, now_ns) == 0);
        } else if (ev.kind == PURE_LINK_EVENT_MEMO_WRITE && memo_durable) {
            CHECK(pure_link_memo_written(rx, ev.token, now_ns) == 0);
        } else if (ev.kind == PURE_LINK_EVENT_RECORD) {
            CHECK(pure_link_stored(rx, ev.stream, ev.record + 1, now_ns) == 0);
        }
    return last;
}

/* Pulls every reply; returns how many went to `to` (and how many in all, in *all). */
static int replies_to(pure_link *rx, const pure_link_addr *to, int *all, uint64_t now_ns) {
    uint8_t d[PURE_LINK_DATAGRAM_MOST];
    pure_link_addr at;
    int n = 0, len, count = 0;
    while ((len = pure_link_pull(rx, d, sizeof d, &at, now_ns)) > 0) {
        count++;
        n += pl_addr_equal(&at, to);
    }
    if (all != NULL) *all = count;
    return n;
}

/* QUIET_RUNS runs brought up, answered and replied to, run k at time (k - 1) * step_ns. */
static void quiet_runs_at(pure_link *rx, int memo, uint64_t step_ns) {
    for (uint32_t k = 1; k <= QUIET_RUNS; k++) {
        uint64_t now = (k - 1) * step_ns;
        run_start(rx, k, now);
        drain(rx, 1, memo, now);
        replies_to(rx, &rx_addr, NULL, now);
    }
}

static void quiet_runs(pure_link *rx, int memo) { quiet_runs_at(rx, memo, 0); }

/* The slot a new run (key k) takes at now_ns: its STREAM_OPEN's stream. */
static int new_run_slot(pure_link *rx, uint32_t k, uint64_t now_ns) {
    run_start(rx, k, now_ns);
    int s = drain(rx, 1, 0, now_ns);
    replies_to(rx, &rx_addr, NULL, now_ns);
    return s;
}

/* Every slot taken by runs heard 1 ms apart: before the first has been quiet for idle_ns a
 * new run finds no slot; then it takes the longest quiet run's, and the next run the next
 * longest quiet one's (the heard list's head, not a scan). */
static void a_new_run_takes_the_longest_quiet_slot(void) {
    void *mem;
    pure_link *rx = receiver_of(&mem, 0, QUIET_RUNS);
    quiet_runs_at(rx, 0, PL_NS_PER_MS);
    uint64_t dropped = rx->stats.dropped_no_slot;
    CHECK_EQ_U(new_run_slot(rx, 1000, PL_NS_PER_S - 1), -1);  /* none quiet for 1 s yet */
    CHECK_EQ_U(rx->stats.dropped_no_slot, dropped + 1);
    uint64_t t = PL_NS_PER_S + 10 * PL_NS_PER_MS;             /* runs 1..11 idle */
    int first = new_run_slot(rx, 1001, t);
    CHECK_EQ_U(first, 0);
    CHECK_EQ_U(new_run_slot(rx, 1002, t), 1);
    CHECK_EQ_U(new_run_slot(rx, 1003, t), 2);
    free(mem);
}

/* An unwired peer's slot goes to the next new run before a slot never used. */
static void an_unwired_peers_slot_is_taken_first(void) {
    void *mem;
    pure_link *rx = receiver(&mem, 0);
    quiet_runs(rx, 0);
    CHECK(rx->runs[150].in_use);
    CHECK(pure_link_unwire_peer(rx, rx->runs[150].peer, 0) == 0);
    CHECK(!rx->runs[150].in_use);
    CHECK_EQ_U(new_run_slot(rx, 1000, 0), 150);
    CHECK_EQ_U(new_run_slot(rx, 1001, 0), QUIET_RUNS);       /* then the first never used */
    free(mem);
}

/* The host answers one STREAM_OPEN late: the ACK held for the answer is due at once, and
 * pull finds it among the quiet runs, which have nothing to send. */
static void pull_serves_a_run_made_ready(void) {
    void *mem;
    pure_link *rx = receiver(&mem, 0);
    quiet_runs(rx, 0);
    int all;
    CHECK_EQ_U(replies_to(rx, &rx_addr, &all, 0), 0);
    CHECK_EQ_U(all, 0);                          /* every quiet run said what it had */
    run_start(rx, 1000, 0);
    int s = drain(rx, 0, 0, 0);           /* no answer yet */
    CHECK(s >= 0);
    pure_link_addr a = addr_of(1000);
    replies_to(rx, &a, NULL, 0);                  /* its ACCEPT and CHALLENGE, no ACK */
    CHECK_EQ_U(replies_to(rx, &a, &all, 0), 0);
    CHECK(pure_link_stream_answer(rx, s, 0, 0, 0) == 0);
    CHECK_EQ_U(replies_to(rx, &a, &all, 0), 1);   /* the answer made it ready */
    CHECK_EQ_U(all, 1);
    CHECK(rx->list_head[PL_LIST_READY] == 0);                   /* nothing left on the ready list */
    free(mem);
}

/* One run leaves STREAM_OPEN unanswered among QUIET_RUNS answered ones: ticks at each
 * deadline before the host's do not refuse it, the tick at the host's deadline does (its
 * REFUSED reply goes), and no other run replies. */
static void tick_serves_the_due_run_among_quiet_ones(void) {
    void *mem;
    pure_link *rx = receiver(&mem, 0);
    quiet_runs(rx, 0);
    const uint64_t t0 = 500 * PL_NS_PER_MS;  /* the quiet runs' own timers fall before its */
    run_start(rx, 1000, t0);
    int s = drain(rx, 0, 0, t0);
    CHECK(s >= 0);
    pure_link_addr a = addr_of(1000);
    replies_to(rx, &a, NULL, t0);
    uint64_t due = rx->runs[s].timers[PL_RT_HOST];
    CHECK(due > 0 && due != UINT64_MAX);
    for (uint64_t d, i = 0; i < 16 && (d = pure_link_deadline(rx)) < due; i++) CHECK(pure_link_tick(rx, d) == 0);
    CHECK_EQ_U(pure_link_deadline(rx), due);
    CHECK_EQ_U(rx->run_heap_count, 1);             /* no quiet run has a timer left */
    CHECK(pure_link_tick(rx, due - 1) == 0);
    CHECK(rx->runs[s].stream_state == PL_STREAM_ASKING);
    CHECK(pure_link_tick(rx, due) == 0);
    CHECK(rx->runs[s].stream_state == PL_STREAM_REFUSED);
    int all;
    CHECK_EQ_U(replies_to(rx, &a, &all, due), 1);  /* its REFUSED, and nothing of another run */
    CHECK_EQ_U(all, 1);
    CHECK(pure_link_deadline(rx) > due);
    free(mem);
}

/* With the memo on, a run's ACCEPT waits until its write is durable; making another run's
 * write durable does not free it, its own does. */
static void memo_written_frees_its_own_run(void) {
    void *mem;
    pure_link *rx = receiver(&mem, 1);
    quiet_runs(rx, 1);
    run_start(rx, 1000, 0);
    run_start(rx, 1001, 0);
    pure_link_event ev;
    uint64_t tokens[8];
    int streams = 0, writes = 0;
    while (pure_link_event_next(rx, &ev)) {
        if (ev.kind == PURE_LINK_EVENT_STREAM_OPEN) {
            streams++;
            CHECK(pure_link_stream_answer(rx, ev.stream, 0, 0, 0) == 0);
        }
        if (ev.kind == PURE_LINK_EVENT_MEMO_WRITE) { CHECK(writes < 8); tokens[writes++] = ev.token; }
    }
    CHECK_EQ_U(streams, 2);
    CHECK_EQ_U(writes, 2);                       /* one slot write each (the header went long ago) */
    pure_link_addr a = addr_of(1000), b = addr_of(1001);
    uint8_t d[PURE_LINK_DATAGRAM_MOST];
    pure_link_addr at;
    while (pure_link_pull(rx, d, sizeof d, &at, 0) > 0) {}  /* CHALLENGE and ACK, no ACCEPT */
    CHECK(pure_link_memo_written(rx, tokens[1], 0) == 0);  /* the second run's write */
    int all;
    CHECK_EQ_U(replies_to(rx, &b, &all, 0), 1);  /* its ACCEPT goes */
    CHECK_EQ_U(all, 1);
    CHECK(pure_link_memo_written(rx, tokens[0], 0) == 0);
    CHECK_EQ_U(replies_to(rx, &a, &all, 0), 1);
    CHECK_EQ_U(all, 1);
    free(mem);
}

TEST_MAIN(TEST_CASE(a_new_run_takes_the_longest_quiet_slot), TEST_CASE(an_unwired_peers_slot_is_taken_first),
          TEST_CASE(pull_serves_a_run_made_ready), TEST_CASE(tick_serves_the_due_run_among_quiet_ones),
          TEST_CASE(memo_written_frees_its_own_run))
