/* test_link.c: the endpoint end to end over the in-memory network of link_loop.h, in
 * virtual time: transfer, epochs, loss, REFUSED, record size, run slots. */
#include "harness.h"
#include "link_loop.h"
#include "internal.h"

#define MS 1000000ull
#define S 1000000000ull

static int all_stored(ll_net *n, void *arg) {
    const int64_t *want = arg;
    return n->node[0].stored_seen[0] >= *want;
}

/* Counts sender packets by epoch field (header byte 1, low 4 bits, reply bit clear). */
typedef struct epoch_count { uint64_t epoch0, later; } epoch_count;
static int count_epochs(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    (void)n, (void)to, (void)len;
    epoch_count *c = arg;
    if (from == 0 && (data[1] & 0x80) == 0) {
        if ((data[1] & 0x0f) == 0) c->epoch0++;
        else c->later++;
    }
    return 1;
}

static void send_records(ll_net *n, int node, int sender, int count, size_t size) {
    uint8_t *rec = malloc(size ? size : 1);
    for (int i = 0; i < count; i++) {
        memset(rec, (uint8_t)i, size);
        int64_t r = pure_link_send(n->node[node].pl, sender, rec, size, n->now_ns);
        CHECK(r == i);
    }
    free(rec);
}

static void small_transfer_in_epoch_1(void) {
    ll_net n;
    ll_init(&n, 1, 10 * MS);
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, NULL);
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[a].pub, "out", 0) >= 0);
    int s = ll_link(&n, a, b, "out", "in", 7);
    CHECK(s == 0);
    send_records(&n, a, s, 200, 100);
    epoch_count c = {0, 0};
    n.tap = count_epochs, n.tap_arg = &c;
    int64_t want = 200;
    ll_run(&n, 10 * S, all_stored, &want);
    CHECK_EQ_U(n.node[a].stored_seen[0], 200);
    CHECK_EQ_U(n.node[b].records_delivered, 200);
    CHECK_EQ_U(n.node[b].duplicates, 0);
    CHECK_EQ_U(n.node[b].out_of_order, 0);
    /* The seed: after the first packet everything is sealed in epoch 1. */
    CHECK_EQ_U(c.epoch0, 1);
    CHECK(c.later >= 1);
    CHECK(n.now_ns < 200 * MS);  /* a few round trips */
    ll_free(&n);
}

/* The receiver's held memo writes reach its disk now: each is durable, and the core hears so. */
static void memo_release(ll_net *n, int b) {
    n->node[b].memo_hold = 0;
    for (int i = 0; i < n->node[b].memo_logged; i++) {
        const struct ll_write *w = &n->node[b].memo_log[i];
        memcpy(n->node[b].memo + w->offset, w->data, w->len);
        pure_link_memo_written(n->node[b].pl, w->token, n->now_ns);
    }
    ll_service(n, b);
}

/* The receiver's memo write is slow: the ACK of the first packet comes long before the
 * ACCEPT.  Epoch 0 goes on one packet at a time, each with the same OFFER (about one per
 * round trip), and the ACCEPT, once the write is durable, moves the run to epoch 1. */
static void slow_memo_write_epoch_0_one_packet_at_a_time(void) {
    ll_net n;
    ll_init(&n, 12, 10 * MS);
    pure_link_config rc = {.memo_enabled = 1};
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, &rc);
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[a].pub, "*", 0) >= 0);
    int s = ll_link(&n, a, b, "out", "in", 7);
    send_records(&n, a, s, 200, 100);
    epoch_count c = {0, 0};
    n.tap = count_epochs, n.tap_arg = &c;
    n.node[b].memo_hold = 1;
    ll_run(&n, 200 * MS, NULL, NULL);  /* ten round trips with the write pending */
    CHECK(n.node[b].memo_logged >= 1);
    CHECK(c.epoch0 >= 3);              /* the OFFER went again */
    CHECK(c.epoch0 <= 12);             /* one at a time: about once per round trip */
    CHECK_EQ_U(c.later, 0);
    CHECK_EQ_U(n.node[b].records_delivered, 0);  /* epoch-0 data waits for proof of life */
    uint64_t epoch0_before = c.epoch0;
    memo_release(&n, b);
    int64_t want = 200;
    ll_run(&n, n.now_ns + 10 * S, all_stored, &want);
    CHECK_EQ_U(n.node[a].stored_seen[0], 200);
    CHECK_EQ_U(n.node[b].records_delivered, 200);
    CHECK_EQ_U(n.node[b].duplicates, 0);
    CHECK(c.epoch0 <= epoch0_before + 1);  /* the ACCEPT went at once after the write */
    CHECK(c.later >= 1);
    ll_free(&n);
}

/* One record, and the receiver's ACCEPT waits for its memo write (a few ms here): the
 * record goes whole in epoch 0 and is acknowledged there, but is handed over only once a
 * packet of epoch 1 proves the run live.  The sender sends one (a PING) as soon as it
 * takes the ACCEPT, so the record is stored within a few round trips, not at the 1 s
 * resend: no record sent twice, five sender packets at most. */
static void one_record_stored_without_a_resend(void) {
    ll_net n;
    ll_init(&n, 13, 10 * MS);
    pure_link_config rc = {.memo_enabled = 1};
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, &rc);
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[a].pub, "*", 0) >= 0);
    int s = ll_link(&n, a, b, "out", "in", 7);
    send_records(&n, a, s, 1, 100);
    n.node[b].memo_hold = 1;
    ll_run(&n, 15 * MS, NULL, NULL);  /* the first packet is acknowledged; the write pends */
    memo_release(&n, b);
    int64_t want = 1;
    ll_run(&n, 5 * S, all_stored, &want);
    CHECK_EQ_U(n.node[a].stored_seen[0], 1);
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n.node[a].pl, s, &st) == 0);
    fprintf(stderr, "  stored at %.1f ms virtual (RTT 20 ms), %llu packets, %llu records resent\n", n.now_ns / 1e6,
            (unsigned long long)st.packets_sent, (unsigned long long)st.records_resent);
    CHECK_EQ_U(st.records_resent, 0);
    CHECK(st.packets_sent <= 5);
    CHECK(n.now_ns < 100 * MS);
    ll_free(&n);
}

/* Holds back the receiver's first reply (dropped on the way, kept to come late). */
typedef struct held_reply { int held; size_t len; uint8_t data[PURE_LINK_DATAGRAM_MOST]; } held_reply;
static int hold_first_reply(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    (void)n, (void)to;
    held_reply *h = arg;
    if (from != 1 || h->held) return 1;
    h->held = 1, h->len = len;
    memcpy(h->data, data, len);
    return 0;
}

/* A STORED that comes late, behind one with a higher count, is an older view: its count
 * and the credit that came with it are ignored, so the sender's limit stays the highest
 * count heard plus its own credit. */
static void late_stored_keeps_the_credit_of_the_highest_count(void) {
    ll_net n;
    ll_init(&n, 13, 10 * MS);
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, NULL);
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[a].pub, "*", 0) >= 0);
    int h = ll_link(&n, a, b, "out", "in", 7);
    send_records(&n, a, h, 200, 100);
    held_reply late = {0, 0, {0}};
    n.tap = hold_first_reply, n.tap_arg = &late;
    int64_t want = 200;
    ll_run(&n, 5 * S, all_stored, &want);
    CHECK_EQ_U(n.node[a].stored_seen[0], 200);
    CHECK(late.held);
    const pl_sender *s = &n.node[a].pl->senders[h];
    uint64_t credit = s->credit;
    CHECK(credit != PURE_LINK_CREDIT_FIRST);  /* the late reply's STORED: count 0, credit 1,024 */
    pure_link_stats before = {.version = PURE_LINK_STATS_VERSION}, after = before;
    CHECK(pure_link_stats_get(n.node[a].pl, h, &before) == 0);
    pure_link_receive(n.node[a].pl, &n.node[b].addr, late.data, late.len, n.now_ns);
    CHECK(pure_link_stats_get(n.node[a].pl, h, &after) == 0);
    CHECK_EQ_U(after.packets_received, before.packets_received + 1);  /* it opened */
    CHECK_EQ_U(s->credit, credit);
    CHECK_EQ_U(s->records_stored, 200);
    ll_free(&n);
}

static void lossy_jittery_transfer_exactly_once(void) {
    ll_net n;
    ll_init(&n, 2, 20 * MS);
    n.loss_ppm = 50000;  /* 5 % */
    n.jitter_ns = 3 * MS;
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, NULL);
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[a].pub, "*", 0) >= 0);
    int s = ll_link(&n, a, b, "out", "in", 7);
    send_records(&n, a, s, 3000, 1000);
    int64_t want = 3000;
    ll_run(&n, 120 * S, all_stored, &want);
    CHECK_EQ_U(n.node[a].stored_seen[0], 3000);
    CHECK_EQ_U(n.node[b].records_delivered, 3000);
    CHECK_EQ_U(n.node[b].duplicates, 0);
    CHECK_EQ_U(n.node[b].out_of_order, 0);
    ll_free(&n);
}

static void record_most_in_one_go(void) {
    ll_net n;
    ll_init(&n, 3, 5 * MS);
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, NULL);
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[a].pub, "*", 0) >= 0);
    int s = ll_link(&n, a, b, "out", "in", 7);
    uint8_t *big = calloc(1, PURE_LINK_RECORD_MOST + 1);
    CHECK(pure_link_send(n.node[a].pl, s, big, PURE_LINK_RECORD_MOST + 1, 0) == PURE_LINK_ERR_TOO_BIG);
    CHECK(pure_link_send(n.node[a].pl, s, big, PURE_LINK_RECORD_MOST, 0) == 0);
    free(big);
    int64_t want = 1;
    ll_run(&n, 60 * S, all_stored, &want);
    CHECK_EQ_U(n.node[b].records_delivered, 1);
    CHECK_EQ_U(n.node[b].bytes_delivered, PURE_LINK_RECORD_MOST);
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n.node[a].pl, s, &st) == 0);
    CHECK_EQ_U(st.records_resent, 0);  /* in one go: no record sent twice */
    ll_free(&n);
}

/* REFUSED: one refusal turn per trial, waits of 1, 2, 4 ... 64 s. */
static void refused_case(int answer, const char *allowed, uint64_t *refused, uint64_t *packets, uint64_t *events) {
    ll_net n;
    ll_init(&n, 4, 10 * MS);
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, NULL);
    n.node[b].answer = answer;
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[a].pub, allowed, 0) >= 0);
    int s = ll_link(&n, a, b, "out", "in", 7);
    send_records(&n, a, s, 200, 20);
    ll_run(&n, 90 * S, NULL, NULL);
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n.node[a].pl, s, &st) == 0);
    *refused = st.link_refused;
    *packets = st.packets_sent;
    *events = n.node[a].refused_events;
    CHECK_EQ_U(n.node[b].records_delivered, 0);
    ll_free(&n);
}

static void refused_reasons_seven_times_in_90s(void) {
    struct { int answer; const char *allowed; } cases[3] = {{-1, "*"}, {-PURE_LINK_OTHER_SHAPE, "*"}, {0, "other"}};
    for (int i = 0; i < 3; i++) {
        uint64_t refused, packets, events;
        refused_case(cases[i].answer, cases[i].allowed, &refused, &packets, &events);
        fprintf(stderr, "  reason %d: refused %llu times, %llu packets, %llu log events\n", i + 1,
                (unsigned long long)refused, (unsigned long long)packets, (unsigned long long)events);
        CHECK_EQ_U(refused, 7);   /* at 0, 1, 3, 7, 15, 31, 63 s */
        CHECK_EQ_U(packets, 7);   /* the first packet and six trials: one packet each */
        CHECK_EQ_U(events, 1);    /* one log line per refusal episode */
    }
}

/* Drops the sender's packets numbered in [lo, hi) (counted from 0 as they leave). */
typedef struct drop_sent { uint64_t seen, lo, hi; } drop_sent;
static int drop_sender_packets(ll_net *n, int from, int to, uint8_t *data, size_t len, void *arg) {
    (void)n, (void)to, (void)len;
    drop_sent *d = arg;
    if (from != 0 || (data[1] & 0x80) != 0) return 1;
    uint64_t k = d->seen++;
    return k < d->lo || k >= d->hi;
}

/* The input appears at 10 s; the sender's packets [drop.lo, drop.hi) are lost on the way.
 * Returns the virtual time at which every record was stored. */
static uint64_t refused_until_input_appears_dropping(uint64_t seed, drop_sent drop) {
    ll_net n;
    ll_init(&n, seed, 10 * MS);
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, NULL);
    n.node[b].input_appears_ns = 10 * S;
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[a].pub, "*", 0) >= 0);
    int s = ll_link(&n, a, b, "out", "in", 7);
    send_records(&n, a, s, 200, 20);
    n.tap = drop_sender_packets, n.tap_arg = &drop;
    int64_t want = 200;
    ll_run(&n, 90 * S, all_stored, &want);
    CHECK_EQ_U(n.node[a].stored_seen[0], 200);
    CHECK_EQ_U(n.node[b].duplicates, 0);
    CHECK_EQ_U(n.node[a].released_events, 1);
    uint64_t at_ns = n.now_ns;
    ll_free(&n);
    return at_ns;
}

static void refused_until_input_appears(void) {
    uint64_t at_ns = refused_until_input_appears_dropping(5, (drop_sent){0, 0, 0});
    /* Released at the first trial after 10 s, which is at 15 s (0+1+2+4+8). */
    CHECK(at_ns >= 15 * S && at_ns < 16 * S);
}

/* A trial lost on the way: no reply will come, and during a refusal nothing else is in
 * flight to reveal the loss, so the PTO declares it lost and it goes again at once (the
 * wait is for the receiver's answer).  The refusal goes on as if nothing was lost. */
static void lost_trial_goes_again_at_pto(void) {
    uint64_t at_ns = refused_until_input_appears_dropping(11, (drop_sent){0, 1, 2});  /* the trial at 1 s */
    /* The lost trial went again a PTO later (about 1.3 s), then waits of 2, 4, 8 s:
     * released at the first trial after 10 s, at about 15.3 s. */
    CHECK(at_ns >= 15 * S + 200 * MS && at_ns < 17 * S);
}

static void missing_input_two_packets_in_2_5s(void) {
    ll_net n;
    ll_init(&n, 6, 10 * MS);
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, NULL);
    n.node[b].answer = -1;
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[a].pub, "*", 0) >= 0);
    int s = ll_link(&n, a, b, "out", "missing", 7);
    send_records(&n, a, s, 1, 20);
    ll_run(&n, 2500 * MS, NULL, NULL);
    CHECK_EQ_U(n.node[a].packets_out, 2);
    CHECK_EQ_U(n.node[a].refused_events, 1);
    ll_free(&n);
}

static int delivered_at_least(ll_net *n, void *arg) { return n->node[1].records_delivered >= *(uint64_t *)arg; }

/* The host takes back its acceptance with `answer` once it made 100 of the 300 records it
 * took durable, and refuses every trial so for 10 s: the sender hears one REFUSED episode
 * of that reason and no STORED beyond 100, and nothing is handed over meanwhile.  Returns
 * the records delivered; n is left at the end of the 10 s. */
static uint64_t refused_after_300(ll_net *n, int answer, int *a_, int *b_) {
    ll_init(n, 12, 10 * MS);
    int a = ll_node_add(n, NULL), b = ll_node_add(n, NULL);
    CHECK(pure_link_wire_peer(n->node[b].pl, n->node[a].pub, "*", 0) >= 0);
    int s = ll_link(n, a, b, "out", "in", 7);
    send_records(n, a, s, 1000, 20);
    n->node[b].hold_stored = 1;
    uint64_t took = 300;
    ll_run(n, 5 * S, delivered_at_least, &took);
    ll_stream *st = &n->node[b].streams[0];  /* the one run's */
    CHECK(st->run != 0 && st->next >= 300);
    CHECK(pure_link_stored(n->node[b].pl, st->handle, 100, n->now_ns) == 0);
    st->stored = 100;
    CHECK(pure_link_stream_refuse(n->node[b].pl, st->handle, answer, n->now_ns) == 0);
    CHECK(pure_link_stream_refuse(n->node[b].pl, st->handle, answer, n->now_ns) == 0); /* again: 0 */
    CHECK(pure_link_stream_refuse(n->node[b].pl, st->handle, 0, n->now_ns) == PURE_LINK_ERR_INVALID);
    CHECK(pure_link_stored(n->node[b].pl, st->handle, 200, n->now_ns) == PURE_LINK_ERR_NOT_FOUND);
    n->node[b].answer = answer;  /* every trial is refused again */
    uint64_t delivered = n->node[b].records_delivered;
    ll_run(n, n->now_ns + 10 * S, NULL, NULL);
    CHECK_EQ_U(n->node[a].refused_events, 1);
    CHECK_EQ_U(n->node[a].refused_reason, (uint64_t)-answer);
    CHECK(n->node[a].stored_seen[0] <= 100);
    CHECK_EQ_U(n->node[b].records_delivered, delivered);
    pure_link_stats rx = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n->node[b].pl, -1, &rx) == 0);
    CHECK_EQ_U(rx.records_stored, 100);
    CHECK(rx.listener_refused >= 4);  /* the first REFUSED and the trials at 1, 3, 7 s */
    *a_ = a, *b_ = b;
    return delivered;
}

/* Refused after accepting (protocol.md §4.1, reason 4): the host made 100 of the 300
 * records it took durable when its disk failed.  Once it can store again (having made
 * 150 durable meanwhile) every record is stored, none twice. */
static void refused_after_accept_claims_only_the_durable(void) {
    ll_net n;
    int a, b;
    uint64_t delivered = refused_after_300(&n, -PURE_LINK_CANNOT_STORE, &a, &b);
    ll_stream *st = &n.node[b].streams[0];
    st->stored = st->next = 150;       /* durable meanwhile: answered as the mark */
    n.node[b].answer = 0, n.node[b].hold_stored = 0;
    int64_t want = 1000;
    ll_run(&n, n.now_ns + 40 * S, all_stored, &want);
    CHECK_EQ_U(n.node[a].stored_seen[0], 1000);
    CHECK_EQ_U(n.node[a].released_events, 1);
    CHECK_EQ_U(n.node[b].duplicates, 0);
    CHECK_EQ_U(n.node[b].out_of_order, 0);
    CHECK_EQ_U(n.node[b].records_delivered, delivered + 850);  /* 150..999, each once */
    ll_free(&n);
}

/* A run cut off (protocol.md §4.3, reason 5): a newer run took its source over after 100
 * of its records were durable.  It hears REFUSED reason 5 (its host ends it), and each of
 * its trials draws reason 5 again, one packet per wait. */
static void cut_off_run_is_told(void) {
    ll_net n;
    int a, b;
    refused_after_300(&n, -PURE_LINK_CUT_OFF, &a, &b);
    pure_link_stats tx = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n.node[a].pl, -1, &tx) == 0);
    CHECK_EQ_U(tx.link_refused, 4);  /* the first REFUSED and the trials at 1, 3, 7 s */
    ll_free(&n);
}

static int three_stored(ll_net *n, void *arg) {
    (void)arg;
    return n->node[0].stored_seen[0] >= 1000 && n->node[0].stored_seen[1] >= 1000 && n->node[0].stored_seen[2] >= 1000;
}

static void three_outputs_three_run_keys(void) {
    ll_net n;
    ll_init(&n, 7, 1 * MS);
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, NULL);
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[a].pub, "*", 0) >= 0);
    for (int k = 0; k < 3; k++) {
        char name[8] = {'o', 'u', 't', (char)('0' + k), 0};
        int s = ll_link(&n, a, b, name, "in", 7);
        CHECK(s == k);
        send_records(&n, a, s, 1000, 61);
    }
    ll_run(&n, 10 * S, three_stored, NULL);
    CHECK(three_stored(&n, NULL));
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n.node[b].pl, -1, &st) == 0);
    CHECK_EQ_U(st.run_key_builds, 3);
    CHECK_EQ_U(n.node[b].records_delivered, 3000);
    CHECK_EQ_U(n.node[b].duplicates, 0);
    fprintf(stderr, "  three outputs stored in %.1f ms virtual (RTT 2 ms)\n", n.now_ns / 1e6);
    CHECK(n.now_ns < 50 * MS);
    ll_free(&n);
}

/* The receiver holds at most unstored_records_most records handed over and not yet
 * stored: a slow host pauses delivery (and the sender, through credit), loses nothing. */
static void slow_host_pauses_delivery_at_the_unstored_bound(void) {
    ll_net n;
    ll_init(&n, 8, 5 * MS);
    pure_link_config rc = {.unstored_records_most = 8};
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, &rc);
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[a].pub, "*", 0) >= 0);
    int s = ll_link(&n, a, b, "out", "in", 7);
    n.node[b].hold_stored = 1;
    send_records(&n, a, s, 100, 100);
    ll_run(&n, 1 * S, NULL, NULL);
    CHECK_EQ_U(n.node[b].records_delivered, 8);   /* exactly the bound */
    CHECK_EQ_U(n.node[a].stored_seen[0], 0);
    ll_store_all(&n, b);
    CHECK(n.node[b].records_delivered > 8);  /* the host's STORED alone lets delivery on, no packet */
    int64_t want = 100;
    for (int round = 0; round < 100 && n.node[a].stored_seen[0] < want; round++) {
        ll_run(&n, n.now_ns + 50 * MS, all_stored, &want);
        ll_store_all(&n, b);
    }
    CHECK_EQ_U(n.node[a].stored_seen[0], 100);
    CHECK_EQ_U(n.node[b].records_delivered, 100);
    CHECK_EQ_U(n.node[b].duplicates, 0);
    CHECK_EQ_U(n.node[b].out_of_order, 0);
    ll_free(&n);
}

/* A host that stops draining its events: the bounded queue fills, delivery pauses, and
 * when the host drains again every record comes, once, in order. */
static void full_event_queue_loses_nothing(void) {
    ll_net n;
    ll_init(&n, 9, 5 * MS);
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, NULL);
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[a].pub, "*", 0) >= 0);
    int s = ll_link(&n, a, b, "out", "in", 7);
    send_records(&n, a, s, 1, 61);
    int64_t want = 1;
    ll_run(&n, 1 * S, all_stored, &want);
    CHECK_EQ_U(n.node[a].stored_seen[0], 1);
    n.node[b].hold_events = 1;
    uint8_t rec[61] = {0};
    for (int i = 0; i < 3000; i++) CHECK(pure_link_send(n.node[a].pl, s, rec, sizeof rec, n.now_ns) == i + 1);
    ll_run(&n, n.now_ns + 500 * MS, NULL, NULL);
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n.node[b].pl, -1, &st) == 0);
    fprintf(stderr, "  while the host was away: %llu records handed over into the event queue\n",
            (unsigned long long)st.records_delivered);
    CHECK(st.records_delivered <= 1 + 512);         /* the queue's bound */
    n.node[b].hold_events = 0;
    ll_service(&n, b);
    want = 3001;
    ll_run(&n, n.now_ns + 10 * S, all_stored, &want);
    CHECK_EQ_U(n.node[a].stored_seen[0], 3001);
    CHECK_EQ_U(n.node[b].records_delivered, 3001);
    CHECK_EQ_U(n.node[b].duplicates, 0);
    CHECK_EQ_U(n.node[b].out_of_order, 0);
    ll_free(&n);
}

/* Run slots: at most 64 per peer, even with free slots; the 65th run of the same peer waits
 * (its packets are dropped unanswered) while each of the 64 has records the host has not
 * stored, and takes the longest-quiet one's slot once they are stored and it has been quiet
 * for PL_RUN_SETTLED_NS (spec/protocol.md §8). */
static int sixty_five_stored(ll_net *n, void *arg) {
    (void)arg;
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    pure_link_stats_get(n->node[0].pl, -1, &st);
    return st.records_stored >= 65;
}

static void sixty_four_run_slots_per_peer(void) {
    ll_net n;
    ll_init(&n, 10, 2 * MS);
    pure_link_config sc = {.senders_most = 65, .send_queue_bytes = PURE_LINK_RECORD_MOST + 64,
                           .send_queue_records = 4, .packets_in_flight_most = 64};
    pure_link_config rc = {.runs_most = 70, .idle_ns = 3 * S, .stream_buffer_bytes = PURE_LINK_RECORD_MOST + 8};
    int a = ll_node_add(&n, &sc), b = ll_node_add(&n, &rc);
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[a].pub, "*", 0) >= 0);
    n.node[b].hold_stored = 1;
    for (int k = 0; k < 65; k++) {
        char name[16];
        snprintf(name, sizeof name, "out%d", k);
        CHECK(ll_link(&n, a, b, name, "in", 7) == k);
        CHECK(pure_link_send(n.node[a].pl, k, "x", 1, n.now_ns) == 0);
        ll_service(&n, a);  /* each run's first packet leaves in turn */
        n.now_ns += 1 * MS;
    }
    ll_run(&n, n.now_ns + 1 * S, NULL, NULL);
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n.node[b].pl, -1, &st) == 0);
    fprintf(stderr, "  after 1 s: %llu streams opened, %llu packets without a slot\n",
            (unsigned long long)n.node[b].stream_opens, (unsigned long long)st.dropped_no_slot);
    CHECK_EQ_U(n.node[b].stream_opens, 64);
    CHECK(st.dropped_no_slot >= 1);
    CHECK_EQ_U(st.lost_notices_sent, 0);  /* an epoch-0 packet gets no LOST */
    /* The host stores the 64 records: the runs settle, and the 65th takes a slot at its
     * next PTO (backed off while it found none). */
    ll_store_all(&n, b);
    uint64_t stored_at = n.now_ns;
    ll_run(&n, n.now_ns + 30 * S, sixty_five_stored, NULL);
    CHECK(sixty_five_stored(&n, NULL));
    fprintf(stderr, "  the 65th stored %llu ms after the others\n", (unsigned long long)((n.now_ns - stored_at) / MS));
    CHECK_EQ_U(n.node[b].records_delivered, 65);
    CHECK_EQ_U(n.node[b].duplicates, 0);
    ll_free(&n);
}

/* A receiver of `pure-link recv`'s default shape (2 wired peers, 4 run slots each, shared)
 * serves 1,000 short runs of one peer in turn — each run's first packet finds all 8 slots
 * held by finished runs, none idle (60 s) — and then a run of the second peer at once
 * (spec/protocol.md §8: a settled run quiet for PL_RUN_SETTLED_NS gives its slot). */
typedef struct one_stored { int node, handle; } one_stored;

static int stored_one(ll_net *n, void *arg) {
    const one_stored *o = arg;
    return n->node[o->node].stored_seen[o->handle] >= 1;
}

static uint64_t short_run(ll_net *n, int from, int to, const char *source) {
    uint64_t start = n->now_ns;
    int h = ll_link(n, from, to, source, "in", 1);
    CHECK(h >= 0 && h < 8);
    n->node[from].stored_seen[h] = 0;
    CHECK(pure_link_send(n->node[from].pl, h, "record", 6, n->now_ns) == 0);
    one_stored o = {from, h};
    ll_run(n, n->now_ns + 60 * S, stored_one, &o);
    CHECK(stored_one(n, &o));
    CHECK(pure_link_sender_close(n->node[from].pl, h, n->now_ns) == 0);
    ll_service(n, from);
    /* The host keeps a run's mark only until its records are durable (pure_link.h): the
     * table of this harness holds 128 runs. */
    memset(n->node[to].streams, 0, sizeof n->node[to].streams);
    return n->now_ns - start;
}

static void thousand_short_runs_then_a_second_peer(void) {
    ll_net n;
    ll_init(&n, 27, 5 * MS);
    pure_link_config rc = {.senders_most = PURE_LINK_NONE, .peers_most = 2, .runs_most = 8};
    pure_link_config sc = {.senders_most = 2, .peers_most = PURE_LINK_NONE};
    int rx = ll_node_add(&n, &rc), a = ll_node_add(&n, &sc), b = ll_node_add(&n, &sc);
    CHECK(ll_wire(&n, rx, a, "*") >= 0);
    CHECK(ll_wire(&n, rx, b, "*") >= 0);
    uint64_t slowest = 0, start = n.now_ns;
    for (int k = 0; k < 1000; k++) {
        uint64_t took = short_run(&n, a, rx, "a");
        if (took > slowest) slowest = took;
    }
    uint64_t b_took = short_run(&n, b, rx, "b");
    pure_link_stats st = {.version = PURE_LINK_STATS_VERSION};
    CHECK(pure_link_stats_get(n.node[rx].pl, -1, &st) == 0);
    fprintf(stderr, "  1,000 runs in %llu ms (slowest %llu ms), %llu packets without a slot; b's run %llu ms\n",
            (unsigned long long)((n.now_ns - start - b_took) / MS), (unsigned long long)(slowest / MS),
            (unsigned long long)st.dropped_no_slot, (unsigned long long)(b_took / MS));
    CHECK_EQ_U(n.node[rx].records_delivered, 1001);
    CHECK_EQ_U(st.run_key_builds, 1001);      /* no run lost its slot before it was done */
    /* None waited for a run to go idle (60 s): each waited at most for the peer's X25519
     * budget (PL_OFFERS_PER_S: every fourth run's OFFER waits up to 1 s). */
    CHECK(slowest < 2 * S);
    CHECK(b_took < 200 * MS);                 /* at once: a few round trips of 10 ms */
    ll_free(&n);
}

/* The PTO fires with the stream's first packets unanswered, and the REFUSED for them is read
 * before the host pulls the probe: a refused sender sends no probe (spec/protocol.md §4.1),
 * so none stays due, and the sender's deadline is its next trial, not now for the whole
 * wait (a host that polls by the deadline would spin until the trial). */
static int stream_opened(ll_net *n, void *arg) {
    (void)arg;
    return n->node[1].stream_opens > 0;
}

static void refused_after_pto_leaves_no_probe_due(void) {
    ll_net n;
    ll_init(&n, 8, 10 * MS);
    int a = ll_node_add(&n, NULL), b = ll_node_add(&n, NULL);
    n.node[b].answer = -1;
    CHECK(pure_link_wire_peer(n.node[b].pl, n.node[a].pub, "*", 0) >= 0);
    int s = ll_link(&n, a, b, "out", "missing", 7);
    send_records(&n, a, s, 20, 20);
    ll_run(&n, 2 * S, stream_opened, NULL);
    CHECK(stream_opened(&n, NULL));
    pl_sender *tx = &n.node[a].pl->senders[s];
    CHECK(!tx->refused && tx->eliciting_in_flight > 0 && tx->timers[PL_ST_LOSS] != PL_NONE);
    n.now_ns = tx->timers[PL_ST_LOSS];   /* the REFUSED is late: the PTO comes first */
    pure_link_tick(n.node[a].pl, n.now_ns);
    CHECK_EQ_U(tx->probes_due, 1);
    while (n.qn > 0) {                    /* then the replies, before the host pulls */
        ll_pkt p = n.q[--n.qn];
        if (p.to == a) pure_link_receive(n.node[a].pl, &p.from, p.data, p.len, n.now_ns);
    }
    ll_service(&n, a);
    CHECK(tx->refused);
    CHECK_EQ_U(tx->probes_due, 0);
    CHECK(pure_link_deadline(n.node[a].pl) > n.now_ns);
    if (pure_link_deadline(n.node[a].pl) <= n.now_ns) { ll_free(&n); return; }  /* would spin */
    ll_run(&n, n.now_ns + 5 * S, NULL, NULL);
    CHECK_EQ_U(n.node[a].refused_events, 1);
    ll_free(&n);
}

TEST_MAIN(TEST_CASE(small_transfer_in_epoch_1), TEST_CASE(lossy_jittery_transfer_exactly_once),
          TEST_CASE(record_most_in_one_go), TEST_CASE(refused_reasons_seven_times_in_90s),
          TEST_CASE(refused_until_input_appears), TEST_CASE(missing_input_two_packets_in_2_5s),
          TEST_CASE(refused_after_accept_claims_only_the_durable), TEST_CASE(cut_off_run_is_told),
          TEST_CASE(one_record_stored_without_a_resend),
          TEST_CASE(three_outputs_three_run_keys), TEST_CASE(slow_host_pauses_delivery_at_the_unstored_bound),
          TEST_CASE(full_event_queue_loses_nothing), TEST_CASE(sixty_four_run_slots_per_peer),
          TEST_CASE(thousand_short_runs_then_a_second_peer),
          TEST_CASE(lost_trial_goes_again_at_pto),
          TEST_CASE(slow_memo_write_epoch_0_one_packet_at_a_time),
          TEST_CASE(late_stored_keeps_the_credit_of_the_highest_count),
          TEST_CASE(refused_after_pto_leaves_no_probe_due))
