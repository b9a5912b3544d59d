/* test_run_edge.c: packet numbers at the end of a run (spec/protocol.md §2, wire.md §5).
 * A receiver without state for a run (its first packet after a LOST) decodes a 4-byte number
 * against nothing: right below 2^32 and wrong from 2^32 on.  So a sender starts no new record
 * after 2^31 packets of a run and moves to a new run once the records it started are stored.
 * The runs here start at high packet numbers through the sender's state (a test-only way:
 * sending 2^31 packets would take hours). */
#include "harness.h"
#include "link_loop.h"
#include "internal.h"

static void decode_without_state_up_to_2_32(void) {
    CHECK_EQ_U(pl_pn_decode(PL_PN_NONE, 0, 4), 0);
    CHECK_EQ_U(pl_pn_decode(PL_PN_NONE, 0x7fffffffu, 4), 0x7fffffffu);
    CHECK_EQ_U(pl_pn_decode(PL_PN_NONE, 0x80000000u, 4), 0x80000000u);
    CHECK_EQ_U(pl_pn_decode(PL_PN_NONE, 0xffffffffu, 4), 0xffffffffu);  /* the last number a run sends */
    /* 2^32 and above do not come back: their low 32 bits decode as a number below 2^32. */
    uint64_t beyond = PL_RUN_PACKETS_MOST + 5;
    CHECK_EQ_U(pl_pn_decode(PL_PN_NONE, pl_pn_truncate(beyond, 4), 4), 5);
    CHECK_EQ_U(PL_RUN_PACKETS_MOST, 1ull << 32);
    CHECK_EQ_U(PL_RUN_PACKETS_DRAIN, 1ull << 31);
}

#define RECORDS 4000
#define RECORD_BYTES 1000

static uint8_t seen[RECORDS];
static uint64_t runs_seen[4];
static int runs_count;

static void on_record(ll_net *n, int node, const pure_link_event *ev) {
    (void)n, (void)node;
    if (ev->record >= 0 && ev->record < RECORDS && seen[ev->record] < 255) seen[ev->record]++;
    for (int i = 0; i < runs_count; i++)
        if (runs_seen[i] == ev->run) return;
    if (runs_count < 4) runs_seen[runs_count++] = ev->run;
}

typedef struct edge {
    int a, b;
    uint64_t first_run;
} edge;

/* A sender whose run is at packet `start`, with RECORDS records queued, to a receiver. */
static edge edge_setup(ll_net *n, uint64_t start) {
    memset(seen, 0, sizeof seen);
    memset(runs_seen, 0, sizeof runs_seen);
    runs_count = 0;
    pure_link_config tx = {.peers_most = PURE_LINK_NONE, .senders_most = 1};
    pure_link_config rx = {.senders_most = PURE_LINK_NONE};
    ll_init(n, 11, 5000000);
    n->on_record = on_record;
    edge e;
    e.a = ll_node_add(n, &tx), e.b = ll_node_add(n, &rx);
    CHECK(ll_wire(n, e.b, e.a, "*") == 0);
    CHECK(ll_link(n, e.a, e.b, "out", "in", 1) == 0);
    pl_sender *s = &n->node[e.a].pl->senders[0];
    s->pn_next = s->pn_oldest = s->epoch_first_pn = start;  /* as if `start` packets had gone and settled */
    static uint8_t rec[RECORD_BYTES];
    for (int k = 0; k < RECORDS; k++) {
        memset(rec, k, sizeof rec);
        CHECK(pure_link_send(n->node[e.a].pl, 0, rec, sizeof rec, 0) == k);
    }
    e.first_run = pure_link_sender_run(n->node[e.a].pl, 0);
    return e;
}

static void every_record_once(void) {
    for (int k = 0; k < RECORDS; k++)
        if (seen[k] != 1) { fprintf(stderr, "  record %d seen %d times\n", k, seen[k]); CHECK(seen[k] == 1); }
}

/* 1,000 packets before 2^31: the run passes the drain point mid-transfer, finishes the
 * records it started, waits for them to be stored, and the rest go in a second run from
 * packet 0.  The sender's packet numbers never reach 2^32, every record arrives once. */
static void run_moves_on_at_2_31(void) {
    ll_net n;
    edge e = edge_setup(&n, PL_RUN_PACKETS_DRAIN - 1000);
    ll_run(&n, 60ull * 1000000000ull, NULL, NULL);
    every_record_once();
    const pl_sender *s = &n.node[e.a].pl->senders[0];
    uint64_t run = pure_link_sender_run(n.node[e.a].pl, 0);
    CHECK(run != e.first_run);
    CHECK_EQ_U(runs_count, 2);
    CHECK(runs_seen[0] == e.first_run && runs_seen[1] == run);
    CHECK(s->pn_next < PL_RUN_PACKETS_DRAIN);  /* the second run's numbers, from 0 */
    CHECK_EQ_U(s->records_stored, RECORDS);
    CHECK_EQ_U(n.node[e.b].duplicates, 0);
    ll_free(&n);
}

/* A run already past 2^31 when its first record is queued: nothing was started, so it moves
 * at once and everything goes in the new run. */
static void run_past_2_31_moves_before_sending(void) {
    ll_net n;
    edge e = edge_setup(&n, PL_RUN_PACKETS_MOST - 10);
    ll_run(&n, 60ull * 1000000000ull, NULL, NULL);
    every_record_once();
    CHECK_EQ_U(runs_count, 1);
    CHECK(runs_seen[0] != e.first_run);
    ll_free(&n);
}

/* The receiver restarts without a memo while the run is past 2^31 and still finishing its
 * started records: the sender's next packets draw a LOST, it goes back to epoch 0 with
 * numbers near 2^31 written whole, the restarted receiver decodes them against nothing and
 * opens them; the run finishes, moves on, and every record arrives (the host's stored marks
 * survive the restart, so none twice). */
static int draining_with_unstored(ll_net *n, void *arg) {
    const pl_sender *s = arg;
    (void)n;
    return s->pn_next >= PL_RUN_PACKETS_DRAIN + 50 && s->records_started > s->records_stored;
}

static void lost_past_2_31_recovers(void) {
    ll_net n;
    edge e = edge_setup(&n, PL_RUN_PACKETS_DRAIN - 300);
    pl_sender *s = &n.node[e.a].pl->senders[0];
    n.node[e.b].hold_stored = 1;  /* nothing durable: the records started stay unstored */
    ll_run(&n, 60ull * 1000000000ull, draining_with_unstored, s);
    CHECK(draining_with_unstored(&n, s));
    CHECK(s->epoch >= 1 && s->records_stored == 0);
    CHECK(ll_restart(&n, e.b) == 0);  /* no memo: the run is unknown to the new receiver */
    n.node[e.b].hold_stored = 0;
    memset(seen, 0, sizeof seen);  /* the host stored none of what it saw before */
    runs_count = 0;
    ll_run(&n, 120ull * 1000000000ull, NULL, NULL);
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n.node[e.a].pl, 0, &st) == 0);
    CHECK(st.lost_notices_received >= 1);
    every_record_once();
    CHECK_EQ_U(runs_count, 2);  /* the old run, recovered, and the new one */
    CHECK(runs_seen[0] == e.first_run && runs_seen[1] != e.first_run);
    CHECK_EQ_U(s->records_stored, RECORDS);
    ll_free(&n);
}

/* The path changes while the run drains (a too-big hint of the size in use: back to the base
 * and a search below it), and the search goes on in the next run, whose packet numbers start
 * again from 0: its probes' acknowledgements raise the size, though their numbers are below
 * the old run's number for the change. */
static int draining(ll_net *n, void *arg) {
    const pl_sender *s = arg;
    (void)n;
    return pl_sender_draining(s);
}

static void run_move_keeps_the_search_going(void) {
    ll_net n;
    edge e = edge_setup(&n, PL_RUN_PACKETS_DRAIN - 1000);
    pl_sender *s = &n.node[e.a].pl->senders[0];
    ll_run(&n, 60ull * 1000000000ull, draining, s);
    CHECK(draining(&n, s) && s->pmtu.bytes == PURE_LINK_DATAGRAM_MOST);
    CHECK_EQ_U(pure_link_path_hint(n.node[e.a].pl, &s->wiring.receiver_addr, PURE_LINK_HINT_TOO_BIG, 0, n.now_ns), 1);
    CHECK(s->pmtu.bytes == PURE_LINK_DATAGRAM_BASE && s->pmtu.probe_bytes != 0);
    ll_run(&n, 60ull * 1000000000ull, NULL, NULL);
    every_record_once();
    CHECK(pure_link_sender_run(n.node[e.a].pl, 0) != e.first_run);
    fprintf(stderr, "  new run: %llu packets, size %u, searching for %u\n", (unsigned long long)s->pn_next,
            s->pmtu.bytes, s->pmtu.probe_bytes);
    CHECK(s->pn_next < PL_RUN_PACKETS_DRAIN);
    CHECK_EQ_U(s->pmtu.probe_bytes, 0);  /* the search ended, within the grain of the failed size */
    CHECK(s->pmtu.bytes + PL_PMTU_GRAIN_BYTES >= PURE_LINK_DATAGRAM_MOST);
    ll_free(&n);
}

TEST_MAIN(TEST_CASE(decode_without_state_up_to_2_32), TEST_CASE(run_moves_on_at_2_31),
          TEST_CASE(run_past_2_31_moves_before_sending), TEST_CASE(lost_past_2_31_recovers),
          TEST_CASE(run_move_keeps_the_search_going))
