/* test_resume.c: a sender that asks where to resume (spec/protocol.md §4.3), in virtual time:
 * the host's count comes back in the STORED that answers, the sender numbers its records
 * from it and sends none of the records before it; a lost ask is asked again; a refusal
 * lifts into the same answer; a host that does not know resuming answers 0 and the sender
 * starts at its first record. */
#include "harness.h"
#include "link_loop.h"

#define MS 1000000ull
#define S (1000 * MS)
#define CHECK_EQ_I(a, b) CHECK_EQ_U((int64_t)(a), (int64_t)(b))

typedef struct seen {
    uint64_t first, count, wrong;  /* RECORD events: the first number, how many, payloads not theirs */
} seen;

static seen g_seen;

/* Each record carries its own number in its first 8 bytes: what arrives must be the record
 * its number says. */
static void on_record(ll_net *n, int node, const pure_link_event *ev) {
    (void)n, (void)node;
    uint64_t k = 0;
    CHECK(ev->len >= 8);
    memcpy(&k, ev->data, 8);
    if (g_seen.count == 0) g_seen.first = (uint64_t)ev->record;
    if (k != (uint64_t)ev->record) g_seen.wrong++;
    g_seen.count++;
}

static int answered(ll_net *n, void *arg) {
    (void)arg;
    return n->node[0].stored_seen[0] >= 0;
}

/* Sender node 0, receiver node 1 whose host holds `mark` records of the source. */
static void setup(ll_net *n, int64_t mark, uint32_t loss_ppm) {
    pure_link_config tx = {.peers_most = PURE_LINK_NONE, .senders_most = 2};
    pure_link_config rx = {.senders_most = PURE_LINK_NONE};
    ll_init(n, 11, 5 * MS);
    n->loss_ppm = loss_ppm;
    CHECK(ll_node_add(n, &tx) == 0 && ll_node_add(n, &rx) == 1);
    n->node[1].resume_mark = mark;
    n->node[0].stored_seen[0] = -1;
    n->on_record = on_record;
    memset(&g_seen, 0, sizeof g_seen);
    CHECK(ll_wire(n, 1, 0, "*") >= 0);
    CHECK(ll_link_resume(n, 0, 1, "logs", "in", 1, 1) == 0);
}

/* Queues records first..first+count-1, each stamped with its number. */
static void send_from(ll_net *n, uint64_t first, uint64_t count) {
    uint8_t rec[200];
    memset(rec, 0x5a, sizeof rec);
    for (uint64_t k = first; k < first + count; k++) {
        memcpy(rec, &k, 8);
        CHECK_EQ_U((uint64_t)pure_link_send(n->node[0].pl, 0, rec, sizeof rec, n->now_ns), k);
    }
}

/* Sends records first..first+count-1 after the answer: each arrives once, in order, as
 * itself, and the sender hears them all stored. */
static void send_exactly_once(ll_net *n, uint64_t first, uint64_t count, uint64_t within_ns) {
    send_from(n, first, count);
    ll_run(n, n->now_ns + within_ns, NULL, NULL);
    CHECK_EQ_I(n->node[0].stored_seen[0], (int64_t)(first + count));
    CHECK_EQ_U(g_seen.first, first);
    CHECK_EQ_U(g_seen.count, count);
    CHECK_EQ_U(g_seen.wrong + n->node[1].duplicates + n->node[1].out_of_order, 0);
}

static void resumes_at_the_hosts_count(void) {
    ll_net n;
    setup(&n, 500, 0);
    uint8_t rec[8] = {0};
    CHECK_EQ_I(pure_link_send(n.node[0].pl, 0, rec, sizeof rec, 0), PURE_LINK_ERR_FULL);  /* not before the answer */
    ll_run(&n, 5 * S, answered, NULL);
    CHECK_EQ_I(n.node[0].stored_seen[0], 500);
    CHECK_EQ_U(n.node[1].resume_opens, 1);
    CHECK(n.now_ns < 100 * MS);  /* one round trip and the host's answer */
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(n.node[0].pl, 0, &st);
    CHECK_EQ_U(st.records_stored, 0);  /* the host's records are not this run's */
    send_exactly_once(&n, 500, 100, 10 * S);
    pure_link_stats_get(n.node[0].pl, 0, &st);
    CHECK_EQ_U(st.records_stored, 100);
    CHECK(st.bytes_sent < 100 * 260);  /* none of the 500 records before the mark went */
    ll_free(&n);
}

/* A quarter of the datagrams lost: the ask (a STREAM alone) goes again until answered, and
 * the transfer after it is exact. */
static void a_lost_ask_is_asked_again(void) {
    ll_net n;
    setup(&n, 7, 250000);
    ll_run(&n, 60 * S, answered, NULL);
    CHECK_EQ_I(n.node[0].stored_seen[0], 7);
    send_exactly_once(&n, 7, 300, 60 * S);
    ll_free(&n);
}

/* The input appears 3 s in: the ask is refused, the trial asks again, and the answer lifts
 * the refusal with the host's count. */
static void a_refused_ask_is_answered_after_the_trial(void) {
    ll_net n;
    setup(&n, 42, 0);
    n.node[1].input_appears_ns = 3 * S;
    ll_run(&n, 30 * S, answered, NULL);
    CHECK_EQ_I(n.node[0].stored_seen[0], 42);
    CHECK(n.now_ns >= 3 * S);
    CHECK_EQ_U(n.node[0].refused_events, 1);
    CHECK_EQ_U(n.node[0].released_events, 1);
    CHECK(n.node[1].resume_opens >= 2);  /* every trial asked as a resume */
    send_exactly_once(&n, 42, 10, 10 * S);
    ll_free(&n);
}

/* A host that answers the ask as any new run (0): the sender starts at its first record. */
static void a_host_without_a_count_starts_at_zero(void) {
    ll_net n;
    setup(&n, -1, 0);
    ll_run(&n, 5 * S, answered, NULL);
    CHECK_EQ_I(n.node[0].stored_seen[0], 0);
    send_exactly_once(&n, 0, 20, 10 * S);
    ll_free(&n);
}

/* A sender that does not resume never asks: its STREAM goes with its first record bytes. */
static void a_new_stream_does_not_ask(void) {
    ll_net n;
    setup(&n, 500, 0);
    CHECK(ll_link(&n, 0, 1, "other", "in", 1) == 1);
    uint8_t rec[200] = {0};
    for (uint64_t k = 0; k < 5; k++) {
        memcpy(rec, &k, 8);
        CHECK_EQ_I(pure_link_send(n.node[0].pl, 1, rec, sizeof rec, 0), (int64_t)k);
    }
    ll_run(&n, 5 * S, NULL, NULL);
    CHECK_EQ_I(n.node[0].stored_seen[1], 5);
    CHECK_EQ_U(n.node[1].resume_opens, 1);  /* the resuming sender's only */
    ll_free(&n);
}

TEST_MAIN(TEST_CASE(resumes_at_the_hosts_count), TEST_CASE(a_lost_ask_is_asked_again),
          TEST_CASE(a_refused_ask_is_answered_after_the_trial), TEST_CASE(a_host_without_a_count_starts_at_zero),
          TEST_CASE(a_new_stream_does_not_ask))
