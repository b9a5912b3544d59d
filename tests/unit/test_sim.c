/* test_sim.c: the simulator's engine, path model, trace, pcap, disk and scenario parser,
 * with synthetic traffic (not the core), and then whole runs through the core. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sim_disk.h"
#include "sim_engine.h"
#include "sim_host.h"
#include "sim_oracle.h"
#include "sim_path.h"
#include "sim_pcap.h"
#include "sim_report.h"
#include "sim_rng.h"
#include "sim_run.h"
#include "sim_scenario.h"
#include "sim_tcp.h"
#include "sim_trace.h"
#include "sim_value.h"
#include "sim_vopr.h"
#include "sim_world.h"

#define MS 1000000ull
#define SEC 1000000000ull

/* ---- engine ---- */

static void engine_orders_by_time_then_sequence(void) {
    sim_engine e;
    sim_engine_init(&e, 0);
    /* (time, tag): equal times must come out in scheduling order. */
    static const uint64_t times[] = {50, 10, 50, 30, 10, 50, 0, 30};
    for (uint32_t i = 0; i < 8; i++) CHECK(sim_engine_at(&e, times[i], 1, i, 0, NULL) == 0);
    static const uint32_t want[] = {6, 1, 4, 3, 7, 0, 2, 5};
    sim_event ev;
    for (uint32_t i = 0; i < 8; i++) {
        CHECK(sim_engine_next(&e, UINT64_MAX, &ev) == SIM_STEP_EVENT);
        CHECK_EQ_U(ev.target, want[i]);
        CHECK_EQ_U(e.now_ns, times[want[i]]);
    }
    CHECK(sim_engine_next(&e, UINT64_MAX, &ev) == SIM_STEP_IDLE);
    sim_engine_free(&e);
}

static void engine_random_schedule_is_stable(void) {
    sim_engine e;
    sim_engine_init(&e, 0);
    sim_rng rng;
    sim_rng_seed(&rng, 7);
    enum { N = 20000 };
    for (uint32_t i = 0; i < N; i++) CHECK(sim_engine_at(&e, sim_rng_below(&rng, 100), 0, i, 0, NULL) == 0);
    sim_event ev, prev = {0, 0, 0, 0, 0, NULL};
    for (uint32_t i = 0; i < N; i++) {
        CHECK(sim_engine_next(&e, UINT64_MAX, &ev) == SIM_STEP_EVENT);
        if (i > 0) {
            CHECK(ev.at_ns >= prev.at_ns);
            if (ev.at_ns == prev.at_ns) CHECK(ev.target > prev.target); /* scheduling order */
        }
        /* Events scheduled while running interleave correctly. */
        if (i % 7 == 0 && i < N / 2) CHECK(sim_engine_at(&e, e.now_ns + 5, 0, N + i, 0, NULL) == 0);
        prev = ev;
    }
    sim_engine_free(&e);
}

static void engine_until_and_limit(void) {
    sim_engine e;
    sim_engine_init(&e, 10);
    for (uint32_t i = 0; i < 20; i++) sim_engine_at(&e, 100 + i, 0, i, 0, NULL);
    sim_event ev;
    CHECK(sim_engine_next(&e, 50, &ev) == SIM_STEP_IDLE);
    CHECK_EQ_U(e.now_ns, 50); /* the clock moves to the horizon */
    for (int i = 0; i < 10; i++) CHECK(sim_engine_next(&e, UINT64_MAX, &ev) == SIM_STEP_EVENT);
    CHECK(sim_engine_next(&e, UINT64_MAX, &ev) == SIM_STEP_LIMIT);
    CHECK(e.over_limit);
    sim_engine_free(&e);
}

/* ---- PRNG ---- */

static void rng_known_answers(void) {
    uint64_t s = 0;
    CHECK(sim_splitmix64(&s) == 0xe220a8397b1dcdafull); /* splitmix64 from 0 */
    sim_rng r = {{1, 2, 3, 4}};
    static const uint64_t want[] = {11520u, 0u, 1509978240u, 1215971899390074240ull};
    for (int i = 0; i < 4; i++) CHECK(sim_rng_next(&r) == want[i]); /* xoshiro256** reference */
}

static void rng_reproducible_and_independent(void) {
    sim_rng a, b, c;
    sim_rng_derive(&a, 42, "path:a>b");
    sim_rng_derive(&b, 42, "path:a>b");
    sim_rng_derive(&c, 42, "path:b>a");
    int differ = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = sim_rng_next(&a);
        CHECK(x == sim_rng_next(&b));
        differ |= x != sim_rng_next(&c);
    }
    CHECK(differ);
    sim_rng_derive(&b, 43, "path:a>b");
    sim_rng_derive(&a, 42, "path:a>b");
    CHECK(sim_rng_next(&a) != sim_rng_next(&b));
    /* below() stays in range and reaches both ends. */
    int lo = 0, hi = 0;
    for (int i = 0; i < 10000; i++) {
        uint64_t v = sim_rng_below(&a, 10);
        CHECK(v < 10);
        lo |= v == 0;
        hi |= v == 9;
    }
    CHECK(lo && hi);
}

/* ---- path model with a synthetic source ---- */

enum { EV_SEND = 1, EV_ARRIVE = 2 };

static void path_rate_matches_bottleneck(void) {
    sim_path_params pp;
    sim_path_params_default(&pp);
    pp.rate_bps = 50000000;
    pp.delay_ns = 10 * MS;
    pp.queue_bytes = 1000000;
    sim_path path;
    sim_path_init(&path, &pp, 10 * MS, 1, "t");
    sim_engine e;
    sim_engine_init(&e, 0);
    /* The source offers 1,200 B datagrams at twice the bottleneck rate for 3 s. */
    const uint64_t gap = 96000; /* ns: 1,228 B * 8 / 100 Mbit/s = 98 us; a bit faster still */
    sim_engine_at(&e, 0, EV_SEND, 0, 0, NULL);
    uint64_t bytes = 0, first = 0, last = 0;
    sim_event ev;
    while (sim_engine_next(&e, 3 * SEC, &ev) == SIM_STEP_EVENT) {
        if (ev.kind == EV_SEND) {
            sim_copy c[SIM_PATH_COPIES_MOST];
            size_t n = sim_path_send(&path, e.now_ns, 1200, c);
            for (size_t i = 0; i < n; i++)
                if (c[i].fate == SIM_FATE_ARRIVE) sim_engine_at(&e, c[i].arrive_ns, EV_ARRIVE, 0, 0, NULL);
            sim_engine_at(&e, e.now_ns + gap, EV_SEND, 0, 0, NULL);
        } else if (e.now_ns >= 1 * SEC && e.now_ns < 2 * SEC) {
            /* Steady state: count what arrives in one second. */
            if (!first) first = e.now_ns;
            last = e.now_ns;
            bytes += 1200 + SIM_PATH_OVERHEAD_DEFAULT;
        }
    }
    CHECK(path.counters.dropped_queue > 0); /* the source did saturate it */
    double rate = (double)(bytes - 1228) * 8 / ((double)(last - first) / 1e9);
    fprintf(stderr, "  delivered %.0f bit/s of 50,000,000\n", rate);
    CHECK(fabs(rate - 50e6) < 0.01 * 50e6);
    CHECK(path.counters.queue_bytes_peak <= 1000000);
    sim_path_free(&path);
    sim_engine_free(&e);
}

static void path_delay_and_jitter_bounds(void) {
    sim_path_params pp;
    sim_path_params_default(&pp);
    pp.delay_ns = 20 * MS;
    pp.jitter_ns = 5 * MS;
    sim_path path;
    sim_path_init(&path, &pp, 0, 3, "t");
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint64_t i = 0; i < 20000; i++) {
        uint64_t now = i * 50000;
        sim_copy c[SIM_PATH_COPIES_MOST];
        CHECK(sim_path_send(&path, now, 1000, c) == 1);
        CHECK(c[0].fate == SIM_FATE_ARRIVE);
        uint64_t d = c[0].arrive_ns - now;
        CHECK(d >= 20 * MS && d <= 25 * MS);
        if (d < lo) lo = d;
        if (d > hi) hi = d;
    }
    CHECK(lo < 20 * MS + 50000 && hi > 25 * MS - 50000); /* the whole range is used */
    /* With a bottleneck the delay is at least serialisation + propagation. */
    pp.rate_bps = 10000000;
    pp.queue_bytes = 100000;
    sim_path_set(&path, &pp, 0);
    for (uint64_t i = 0; i < 2000; i++) {
        uint64_t now = 2 * SEC + i * 2 * MS;
        sim_copy c[SIM_PATH_COPIES_MOST];
        sim_path_send(&path, now, 1000, c);
        CHECK(c[0].fate == SIM_FATE_ARRIVE);
        uint64_t ser = sim_path_serialise_ns(&path, 1000);
        CHECK(c[0].arrive_ns - now >= ser - 1 + 20 * MS);
        CHECK(c[0].arrive_ns - now <= ser + 25 * MS); /* one packet per 2 ms never queues */
    }
    sim_path_free(&path);
}

static void loss_within_binomial_bound(uint32_t ppb) {
    sim_path_params pp;
    sim_path_params_default(&pp);
    pp.loss_ppb = ppb;
    sim_path path;
    sim_path_init(&path, &pp, 0, 11, "loss");
    const uint64_t n = 100000;
    uint64_t lost = 0;
    for (uint64_t i = 0; i < n; i++) {
        sim_copy c[SIM_PATH_COPIES_MOST];
        sim_path_send(&path, i, 100, c);
        lost += c[0].fate == SIM_FATE_LOSS;
    }
    double p = (double)ppb / 1e9, mean = n * p, sigma = sqrt(n * p * (1 - p));
    fprintf(stderr, "  lost %llu of %llu (expected %.0f +- %.0f)\n", (unsigned long long)lost, (unsigned long long)n,
            mean, 4 * sigma);
    CHECK(fabs((double)lost - mean) <= 4 * sigma);
    CHECK_EQ_U(lost, path.counters.dropped_loss);
    sim_path_free(&path);
}

static void path_loss_1_percent(void) { loss_within_binomial_bound(10000000); }
static void path_loss_5_percent(void) { loss_within_binomial_bound(50000000); }

static void path_jitter_reorders(void) {
    sim_path_params pp;
    sim_path_params_default(&pp);
    pp.delay_ns = 10 * MS;
    pp.jitter_ns = 3 * MS;
    pp.rate_bps = 50000000;
    sim_path path;
    sim_path_init(&path, &pp, 10 * MS, 5, "t");
    uint64_t prev_arrive = 0;
    int overtaken = 0;
    for (uint64_t i = 0; i < 1000; i++) {
        sim_copy c[SIM_PATH_COPIES_MOST];
        sim_path_send(&path, i * 250000, 1200, c);
        CHECK(c[0].fate == SIM_FATE_ARRIVE);
        if (c[0].arrive_ns < prev_arrive) overtaken++; /* a later datagram arrives first */
        prev_arrive = c[0].arrive_ns;
    }
    CHECK(overtaken > 0);
    CHECK(path.counters.reordered > 0);
    /* Without jitter the bottleneck keeps order. */
    pp.jitter_ns = 0;
    sim_path_set(&path, &pp, 10 * MS);
    prev_arrive = 0;
    for (uint64_t i = 0; i < 1000; i++) {
        sim_copy c[SIM_PATH_COPIES_MOST];
        sim_path_send(&path, SEC + i * 250000, 1200, c);
        CHECK(c[0].fate == SIM_FATE_ARRIVE);
        CHECK(c[0].arrive_ns >= prev_arrive);
        prev_arrive = c[0].arrive_ns;
    }
    sim_path_free(&path);
}

static void path_drop_tail_queue(void) {
    sim_path_params pp;
    sim_path_params_default(&pp);
    pp.rate_bps = 1000000;
    pp.queue_bytes = 10000;
    sim_path path;
    sim_path_init(&path, &pp, 0, 9, "t");
    /* 100 datagrams of 1,000 B (+28) at one instant: 9 fit in 10,000 B. */
    uint64_t kept = 0;
    for (int i = 0; i < 100; i++) {
        sim_copy c[SIM_PATH_COPIES_MOST];
        sim_path_send(&path, 0, 1000, c);
        kept += c[0].fate == SIM_FATE_ARRIVE;
        CHECK(sim_path_queued_bytes(&path, 0) <= 10000);
    }
    CHECK_EQ_U(kept, 10000 / 1028);
    CHECK_EQ_U(path.counters.dropped_queue, 100 - kept);
    CHECK(path.counters.queue_bytes_peak <= 10000);
    /* Once the first datagram has left, one more fits. */
    uint64_t ser = sim_path_serialise_ns(&path, 1000);
    CHECK(sim_path_queued_bytes(&path, ser) == (kept - 1) * 1028);
    sim_copy c[SIM_PATH_COPIES_MOST];
    sim_path_send(&path, ser, 1000, c);
    CHECK(c[0].fate == SIM_FATE_ARRIVE);
    sim_path_send(&path, ser, 1000, c);
    CHECK(c[0].fate == SIM_FATE_QUEUE);
    /* The automatic queue is one bandwidth-delay product of the round trip. */
    pp.queue_bytes = 0;
    pp.rate_bps = 50000000;
    pp.delay_ns = 20 * MS;
    sim_path_set(&path, &pp, 20 * MS);
    CHECK_EQ_U(path.queue_limit_bytes, 50000000ull / 8 * 40 / 1000);
    sim_path_free(&path);
}

static void path_gilbert_elliott_mean(void) {
    sim_path_params pp;
    sim_path_params_default(&pp);
    pp.ge_p_ppb = 10000000;       /* 1 % good -> bad */
    pp.ge_r_ppb = 100000000;      /* 10 % bad -> good */
    pp.ge_loss_bad_ppb = 500000000;
    pp.ge_loss_good_ppb = 1000000;
    sim_path path;
    sim_path_init(&path, &pp, 0, 13, "ge");
    const uint64_t n = 1000000;
    uint64_t lost = 0, run = 0, longest = 0;
    for (uint64_t i = 0; i < n; i++) {
        sim_copy c[SIM_PATH_COPIES_MOST];
        sim_path_send(&path, i, 100, c);
        int l = c[0].fate == SIM_FATE_LOSS;
        lost += (uint64_t)l;
        run = l ? run + 1 : 0;
        if (run > longest) longest = run;
    }
    double pi_bad = 0.01 / (0.01 + 0.1);
    double mean = pi_bad * 0.5 + (1 - pi_bad) * 0.001;
    double got = (double)lost / n, bad = (double)path.counters.ge_bad_steps / n;
    fprintf(stderr, "  loss %.5f (stationary %.5f), bad %.4f (%.4f), longest burst %llu\n", got, mean, bad, pi_bad,
            (unsigned long long)longest);
    /* Bursts correlate the draws; 8 % covers about 4 sigma for a million datagrams. */
    CHECK(fabs(got - mean) < 0.08 * mean);
    CHECK(fabs(bad - pi_bad) < 0.08 * pi_bad);
    CHECK_EQ_U(lost, path.counters.dropped_burst + path.counters.dropped_loss);
    CHECK(longest >= 4); /* losses come in bursts */
    sim_path_free(&path);
}

static void path_duplication_and_corruption(void) {
    sim_path_params pp;
    sim_path_params_default(&pp);
    pp.dup_ppb = 20000000;     /* 2 % */
    pp.corrupt_ppb = 30000000; /* 3 % per copy */
    sim_path path;
    sim_path_init(&path, &pp, 0, 17, "t");
    const uint64_t n = 100000;
    uint64_t copies = 0, corrupt = 0;
    for (uint64_t i = 0; i < n; i++) {
        sim_copy c[SIM_PATH_COPIES_MOST];
        size_t k = sim_path_send(&path, i, 200, c);
        copies += k;
        for (size_t j = 0; j < k; j++) {
            CHECK(c[j].fate == SIM_FATE_ARRIVE);
            if (c[j].corrupt_bit >= 0) {
                CHECK(c[j].corrupt_bit < 200 * 8);
                corrupt++;
            }
        }
    }
    double dup_mean = n * 0.02, dup_sigma = sqrt(n * 0.02 * 0.98);
    double cor_mean = copies * 0.03, cor_sigma = sqrt(copies * 0.03 * 0.97);
    CHECK_EQ_U(copies - n, path.counters.duplicated);
    CHECK(fabs((double)(copies - n) - dup_mean) <= 4 * dup_sigma);
    CHECK_EQ_U(corrupt, path.counters.corrupted);
    CHECK(fabs((double)corrupt - cor_mean) <= 4 * cor_sigma);
    sim_path_free(&path);
}

/* ---- values and scenarios ---- */

static void values_parse_exactly(void) {
    uint64_t v;
    uint32_t p;
    CHECK(sim_value_duration_ns("1.5ms", &v) == 0 && v == 1500000);
    CHECK(sim_value_duration_ns("10s", &v) == 0 && v == 10 * SEC);
    CHECK(sim_value_duration_ns("250 us", &v) == 0 && v == 250000);
    CHECK(sim_value_duration_ns("0", &v) == 0 && v == 0);
    CHECK(sim_value_duration_ns("5", &v) != 0); /* a duration needs a unit */
    CHECK(sim_value_duration_ns("5 parsecs", &v) != 0);
    CHECK(sim_value_rate_bps("50Mbit", &v) == 0 && v == 50000000);
    CHECK(sim_value_rate_bps("1.5 Gbit/s", &v) == 0 && v == 1500000000);
    CHECK(sim_value_bytes("1KiB", &v) == 0 && v == 1024);
    CHECK(sim_value_bytes("16MiB", &v) == 0 && v == 16777216);
    CHECK(sim_value_bytes("16777217", &v) == 0 && v == 16777217);
    CHECK(sim_value_ppb("5%", &p) == 0 && p == 50000000);
    CHECK(sim_value_ppb("0.01", &p) == 0 && p == 10000000);
    CHECK(sim_value_ppb("1", &p) == 0 && p == 1000000000);
    CHECK(sim_value_ppb("1.5", &p) != 0);
    CHECK(sim_value_per_s("50/s", &v) == 0 && v == 50000);
    CHECK(sim_value_per_s("0.5/s", &v) == 0 && v == 500);
}

static void scenario_parses_every_kind_of_key(void) {
    static const char text[] =
        "# a comment\n"
        "seed: 7\n"
        "duration: 30s\n"
        "path.rate: 50Mbit\n"
        "path.delay: 10ms   # one way\n"
        "path.loss: 1%\n"
        "path.b>a.loss: 0\n"
        "path.a<>b.jitter: 3ms\n"
        "at 10s path.loss 5%\n"
        "at: 12s path.a>b.delay: 50ms\n"
        "node: a\n"
        "node: b\n"
        "store_latency: 2ms\n"
        "input: in shape 3 at 10s\n"
        "wire: a out1,out2\n"
        "crash: 3s restart 4s\n"
        "runs_most: 8\n"
        "link: a > b\n"
        "source: out1\n"
        "input: in\n"
        "shape: 3\n"
        "mode: paced\n"
        "rate: 50/s\n"
        "record_bytes: 1KiB\n"
        "count: 200\n";
    sim_scenario *sc = calloc(1, sizeof *sc);
    char err[256];
    int r = sim_scenario_parse(sc, text, err, sizeof err);
    if (r != 0) fprintf(stderr, "  %s\n", err);
    CHECK(r == 0);
    CHECK_EQ_U(sc->seed, 7);
    CHECK_EQ_U(sc->duration_ns, 30 * SEC);
    CHECK_EQ_U(sc->node_count, 2);
    CHECK_EQ_U(sc->link_count, 1);
    const sim_node_spec *b = &sc->nodes[1];
    CHECK_EQ_U(b->store_latency_ns, 2 * MS);
    CHECK_EQ_U(b->input_count, 1);
    CHECK_EQ_U(b->inputs[0].shape, 3);
    CHECK_EQ_U(b->inputs[0].at_ns, 10 * SEC);
    CHECK(strcmp(b->wires[0].sources, "out1\nout2") == 0);
    CHECK_EQ_U(b->crashes[0].restart_ns, 4 * SEC);
    CHECK_EQ_U(b->endpoint.runs_most, 8);
    const sim_link_spec *l = &sc->links[0];
    CHECK(l->from == 0 && l->to == 1 && l->mode == SIM_MODE_PACED);
    CHECK_EQ_U(l->rate_milli_per_s, 50000);
    CHECK_EQ_U(l->count, 200);
    sim_path_params ab, ba;
    sim_scenario_path_params(sc, 0, 1, &ab);
    sim_scenario_path_params(sc, 1, 0, &ba);
    CHECK_EQ_U(ab.loss_ppb, 10000000);
    CHECK_EQ_U(ba.loss_ppb, 0);
    CHECK_EQ_U(ab.jitter_ns, 3 * MS);
    CHECK_EQ_U(ba.jitter_ns, 3 * MS);
    CHECK_EQ_U(ab.rate_bps, 50000000);
    CHECK_EQ_U(sc->change_count, 2);
    CHECK(sc->changes[0].all && sc->changes[0].field == SIM_PF_LOSS && sc->changes[0].value == 50000000);
    CHECK(sc->changes[1].from == 0 && sc->changes[1].to == 1 && sc->changes[1].value == 50 * MS);
    /* Errors name the line. */
    CHECK(sim_scenario_parse(sc, "node: a\nnode: b\nbogus: 1\n", err, sizeof err) != 0);
    CHECK(strstr(err, "line 3") != NULL);
    CHECK(sim_scenario_parse(sc, "node: a\nnode: b\nlink: a > c\n", err, sizeof err) != 0);
    free(sc);
}

static void scenario_parses_keys_over_time(void) {
    static const char text[] =
        "at 2s node.a.port 4434\n"
        "at: 3s node.a.addr: 10.0.0.77\n"
        "replay: a > b at 2500ms\n"
        "spoof: a > b as v at 1s\n"
        "spoof: b>a at 0 as v\n"
        "node: a\n"
        "node: b\n"
        "node: v\n"
        "link: a > b\n"
        "count: 10\n"
        "more: 5 at 3s\n"
        "more: 7 at 4s\n";
    sim_scenario *sc = calloc(1, sizeof *sc);
    char err[256];
    int r = sim_scenario_parse(sc, text, err, sizeof err);
    if (r != 0) fprintf(stderr, "  %s\n", err);
    CHECK(r == 0);
    CHECK_EQ_U(sc->node_change_count, 2);
    const sim_node_change *c = &sc->node_changes[0];
    CHECK(c->node == 0 && c->field == SIM_NF_PORT && c->port == 4434 && c->at_ns == 2 * SEC);
    c = &sc->node_changes[1];
    static const uint8_t ip[4] = {10, 0, 0, 77};
    CHECK(c->node == 0 && c->field == SIM_NF_ADDR && memcmp(c->ip, ip, 4) == 0 && c->at_ns == 3 * SEC);
    CHECK_EQ_U(sc->replay_count, 1);
    CHECK(sc->replays[0].from == 0 && sc->replays[0].to == 1 && sc->replays[0].at_ns == 2500 * MS);
    CHECK_EQ_U(sc->spoof_count, 2);
    CHECK(sc->spoofs[0].from == 0 && sc->spoofs[0].to == 1 && sc->spoofs[0].as == 2 && sc->spoofs[0].at_ns == SEC);
    CHECK(sc->spoofs[1].from == 1 && sc->spoofs[1].to == 0 && sc->spoofs[1].as == 2 && sc->spoofs[1].at_ns == 0);
    CHECK_EQ_U(sc->links[0].more_count, 2);
    CHECK(sc->links[0].more[1].count == 7 && sc->links[0].more[1].at_ns == 4 * SEC);
    /* Each mistake is refused, and the message says what. */
    static const struct { const char *text, *says; } bad[] = {
        {"at 1s node.a.port 0\nnode: a\nnode: b\n", "bad port"},
        {"at 1s node.a.addr 10.0.0\nnode: a\nnode: b\n", "bad IPv4"},
        {"at 1s node.a.addr 10.0.0.256\nnode: a\nnode: b\n", "bad IPv4"},
        {"at 1s node.a.mtu 1\nnode: a\nnode: b\n", "port and addr"},
        {"at 1s node.zz.port 5\nnode: a\nnode: b\n", "unknown node"},
        {"replay: a > b\nnode: a\nnode: b\n", "at TIME"},
        {"replay: a > a at 1s\nnode: a\nnode: b\n", "two different"},
        {"spoof: a > b at 1s\nnode: a\nnode: b\n", "as NAME"},
        {"spoof: a > b as a at 1s\nnode: a\nnode: b\n", "neither end"},
        {"spoof: a > b as v at 1s\nnode: a\nnode: b\nnode: v\nlink: v > b\n", "send nothing"},
        {"node: a\nnode: b\nlink: a > b\nmode: paced\nrate: 1/s\ncount: 5\nmore: 1 at 1s\n", "bulk link"},
        {"node: a\nnode: b\nlink: a > b\ncount: 5\nmore: 1 at 2s\nmore: 1 at 1s\n", "time order"},
        {"node: a\nnode: b\nlink: a > b\ncount: 5\nmore: 1 after 2s\n", "COUNT at TIME"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = sim_scenario_parse(sc, bad[i].text, err, sizeof err);
        if (r == 0 || strstr(err, bad[i].says) == NULL) fprintf(stderr, "  case %zu: %d '%s'\n", i, r, err);
        CHECK(r != 0 && strstr(err, bad[i].says) != NULL);
    }
    free(sc);
}

/* ---- oracles ---- */

static void nonce_oracle_counts_repeated_pairs(void) {
    sim_keys k;
    sim_keys_init(&k, NULL);
    sim_keys *before = sim_keys_active();
    sim_keys_activate(&k);
    static _Alignas(64) uint8_t mem[4 * PURE_LINK_AEAD_CTX_BYTES];
    void *a = mem, *b = mem + PURE_LINK_AEAD_CTX_BYTES, *elsewhere = mem + 3 * PURE_LINK_AEAD_CTX_BYTES;
    sim_keys_node_memory(&k, 5, mem, 2 * PURE_LINK_AEAD_CTX_BYTES);
    uint8_t key1[16], key2[16], n1[12], n2[12], text[40], out[40 + 16], want[40 + 16];
    memset(key1, 1, 16);
    memset(key2, 2, 16);
    memset(n1, 0xa1, 12);
    memset(n2, 0xa2, 12);
    for (size_t i = 0; i < sizeof text; i++) text[i] = (uint8_t)i;
    const pure_link_crypto *t = &k.table, *real = pure_link_crypto_default();
    t->aead_init(a, key1);
    t->aead_init(b, key1);                      /* another context, the same key */
    t->aead_seal(a, n1, text, 4, text, sizeof text, out);
    /* The wrapped table seals exactly as the real one. */
    static _Alignas(64) uint8_t ref[PURE_LINK_AEAD_CTX_BYTES];
    real->aead_init(ref, key1);
    real->aead_seal(ref, n1, text, 4, text, sizeof text, want);
    CHECK_MEM(out, want, sizeof want);
    CHECK(t->aead_open(a, n1, text, 4, out, sizeof out, out) == 0 && memcmp(out, text, sizeof text) == 0);
    CHECK_EQ_U(k.reuses, 0);
    t->aead_seal(a, n2, text, 4, text, sizeof text, out);
    CHECK_EQ_U(k.reuses, 0);
    t->aead_seal(b, n1, text, 4, text, sizeof text, out); /* key1 and n1 again, through b */
    CHECK_EQ_U(k.reuses, 1);
    t->aead_seal(a, n1, text, 4, text, sizeof text, out);
    CHECK_EQ_U(k.reuses, 2);
    t->aead_init(a, key2);                      /* a new key where key1 was */
    t->aead_seal(a, n1, text, 4, text, sizeof text, out);
    CHECK_EQ_U(k.reuses, 2);
    CHECK_EQ_U(k.node_reuses[5], 2);
    CHECK_EQ_U(k.node_seals[5], 5);
    real->aead_init(elsewhere, key1);           /* set up behind the oracle's back */
    t->aead_seal(elsewhere, n1, text, 4, text, sizeof text, out);
    CHECK_EQ_U(k.unknown_ctx, 1);
    CHECK_EQ_U(k.seals, 6);
    /* Enough pairs to grow the table several times: all new, then all repeated. */
    uint8_t n[12] = {0};
    for (uint32_t i = 0; i < 5000; i++) {
        memcpy(n, &i, sizeof i);
        t->aead_seal(a, n, text, 0, text, 1, out);
    }
    CHECK_EQ_U(k.reuses, 2);
    for (uint32_t i = 0; i < 5000; i += 7) {
        memcpy(n, &i, sizeof i);
        t->aead_seal(a, n, text, 0, text, 1, out);
    }
    CHECK_EQ_U(k.reuses, 2 + 715);
    sim_keys_activate(before);
    sim_keys_free(&k);
}

static void oracle_amplification_and_epochs(void) {
    sim_world *w = calloc(1, sizeof *w);
    CHECK(w != NULL);
    sim_trace_init(&w->trace, NULL, 1);
    sim_node_spec spec;
    memset(&spec, 0, sizeof spec);
    strcpy(spec.name, "r");
    sim_node n;
    memset(&n, 0, sizeof n);
    n.spec = &spec;
    pure_link_addr peer = {6, {10, 0, 0, 1, 0x11, 0x51}}, victim = {6, {10, 0, 0, 9, 0x11, 0x51}};
    uint64_t max, unanswered;
    sim_oracle_on_send(w, &n, &peer, 500);         /* before anything came from there: not counted */
    sim_oracle_on_receive(w, &n, &peer, 100, 1);
    sim_oracle_on_send(w, &n, &peer, 200);
    sim_oracle_on_send(w, &n, &peer, 101);
    sim_oracle_amplification(&n, &max, &unanswered);
    CHECK_EQ_U(max, 3010);
    CHECK_EQ_U(unanswered, 3010);                  /* it has not answered yet */
    sim_oracle_on_receive(w, &n, &peer, 50, 1);    /* now it has */
    sim_oracle_amplification(&n, &max, &unanswered);
    CHECK_EQ_U(max, 3010);
    CHECK_EQ_U(unanswered, 0);
    sim_oracle_on_receive(w, &n, &victim, 60, 0);  /* a spoofed datagram */
    sim_oracle_on_send(w, &n, &victim, 90);
    sim_oracle_on_receive(w, &n, &victim, 60, 0);  /* a second one is no answer */
    sim_oracle_on_send(w, &n, &victim, 150);
    sim_oracle_amplification(&n, &max, &unanswered);
    CHECK_EQ_U(unanswered, 2000);
    /* A crash keeps the maxima and forgets the pairs. */
    sim_oracle_on_crash(&n);
    CHECK_EQ_U(n.amp_count, 0);
    sim_oracle_amplification(&n, &max, &unanswered);
    CHECK(max == 3010 && unanswered == 2000);
    /* Epochs of one (peer, run) may only go up within an incarnation. */
    pure_link_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = PURE_LINK_EVENT_EPOCH;
    ev.peer = 0;
    ev.run = 77;
    ev.epoch = 1;
    sim_oracle_on_epoch(w, &n, &ev);
    ev.epoch = 2;
    sim_oracle_on_epoch(w, &n, &ev);
    ev.run = 78;
    ev.epoch = 1;                                  /* another run */
    sim_oracle_on_epoch(w, &n, &ev);
    CHECK_EQ_U(n.epoch_rollbacks, 0);
    ev.run = 77;
    sim_oracle_on_epoch(w, &n, &ev);
    CHECK_EQ_U(n.epoch_rollbacks, 1);
    sim_oracle_on_crash(&n);                       /* a new incarnation starts over */
    sim_oracle_on_epoch(w, &n, &ev);
    CHECK_EQ_U(n.epoch_rollbacks, 1);
    sim_oracle_free(&n);
    free(w);
}

/* ---- trace ---- */

static void trace_is_json_seq_and_hashed(void) {
    FILE *f = tmpfile();
    CHECK(f != NULL);
    sim_trace t;
    sim_trace_init(&t, f, 5);
    sim_trace_begin(&t, 123, "transport:packet_sent");
    sim_trace_str(&t, "from", "a\"b");
    sim_trace_u64(&t, "len", 1452);
    sim_trace_i64(&t, "code", -3);
    sim_trace_end(&t);
    fflush(f);
    long size = ftell(f);
    CHECK(size > 0 && (uint64_t)size == t.bytes);
    rewind(f);
    char *buf = malloc((size_t)size);
    CHECK(fread(buf, 1, (size_t)size, f) == (size_t)size);
    CHECK(sim_fnv1a64(SIM_FNV64_BASIS, buf, (size_t)size) == t.hash);
    /* Two records, each 0x1E ... '\n'. */
    CHECK(buf[0] == 0x1e && buf[size - 1] == '\n');
    const char *second = memchr(buf + 1, 0x1e, (size_t)size - 1);
    CHECK(second != NULL && second[-1] == '\n');
    static const char want[] =
        "\x1e{\"time\":123,\"name\":\"transport:packet_sent\",\"data\":{\"from\":\"a\\\"b\",\"len\":1452,\"code\":-3}}\n";
    CHECK((size_t)(buf + size - second) == strlen(want));
    CHECK(memcmp(second, want, strlen(want)) == 0);
    /* The hash does not need the file. */
    sim_trace u;
    sim_trace_init(&u, NULL, 5);
    sim_trace_begin(&u, 123, "transport:packet_sent");
    sim_trace_str(&u, "from", "a\"b");
    sim_trace_u64(&u, "len", 1452);
    sim_trace_i64(&u, "code", -3);
    sim_trace_end(&u);
    CHECK(u.hash == t.hash);
    free(buf);
    fclose(f);
}

/* ---- pcap ---- */

static void pcap_headers_have_valid_checksums(void) {
    sim_pcap_endpoint a = {{10, 0, 0, 1}, 4433}, b = {{10, 0, 0, 2}, 4434};
    uint8_t payload[301];
    for (size_t i = 0; i < sizeof payload; i++) payload[i] = (uint8_t)(i * 7);
    uint8_t h[SIM_PCAP_HEADERS_BYTES];
    sim_pcap_headers(h, &a, &b, 77, payload, sizeof payload);
    CHECK(h[0] == 0x45 && h[9] == 17);
    CHECK_EQ_U((unsigned)h[2] << 8 | h[3], sizeof payload + 28);
    CHECK_EQ_U((unsigned)h[24] << 8 | h[25], sizeof payload + 8);
    CHECK_EQ_U(sim_pcap_sum(0, h, 20), 0xffff); /* IPv4 header checksum verifies */
    uint8_t pseudo[12] = {10, 0, 0, 1, 10, 0, 0, 2, 0, 17, (uint8_t)((sizeof payload + 8) >> 8),
                          (uint8_t)(sizeof payload + 8)};
    uint32_t s = sim_pcap_sum(0, pseudo, 12);
    s = sim_pcap_sum(s, h + 20, 8);
    s = sim_pcap_sum(s, payload, sizeof payload);
    CHECK_EQ_U(s, 0xffff); /* UDP checksum verifies */
    /* A file: header and one record. */
    FILE *f = tmpfile();
    sim_pcap p;
    CHECK(sim_pcap_init(&p, f) == 0);
    sim_pcap_write(&p, 1500000123ull, &a, &b, payload, sizeof payload);
    CHECK_EQ_U(ftell(f), 24 + 16 + 28 + sizeof payload);
    rewind(f);
    uint8_t fh[40];
    CHECK(fread(fh, 1, 40, f) == 40);
    CHECK(fh[0] == 0x4d && fh[1] == 0x3c && fh[2] == 0xb2 && fh[3] == 0xa1); /* ns magic, LE */
    CHECK_EQ_U(fh[20], 101);
    CHECK_EQ_U(fh[24], 1); /* seconds */
    CHECK_EQ_U((uint32_t)fh[28] | (uint32_t)fh[29] << 8 | (uint32_t)fh[30] << 16 | (uint32_t)fh[31] << 24, 500000123);
    fclose(f);
}

/* ---- disk ---- */

static void disk_syncs_in_order_and_crashes(void) {
    sim_disk d;
    CHECK(sim_disk_init(&d, 64, MS, SIM_DISK_CRASH_DROP) == 0);
    uint8_t x[8], y[8];
    memset(x, 0xaa, 8);
    memset(y, 0xbb, 8);
    uint64_t done1, done2, tok;
    CHECK(sim_disk_write(&d, 0, 0, x, 8, 1, &done1) == 0);
    CHECK(sim_disk_write(&d, 0, 8, y, 8, 2, &done2) == 0);
    CHECK(done1 == MS && done2 >= done1);
    CHECK(sim_disk_complete(&d, MS - 1, &tok) == 0);
    CHECK(sim_disk_complete(&d, MS, &tok) == 1 && tok == 1);
    CHECK(d.exists && d.image[0] == 0xaa && d.image[8] == 0);
    sim_rng rng;
    sim_rng_seed(&rng, 1);
    sim_disk_crash_now(&d, &rng); /* the second write was not durable */
    CHECK(d.image[8] == 0 && d.pending_count == 0 && d.dropped == 1);
    sim_disk_free(&d);

    /* Tearing keeps a prefix of the last unsynced write, and nothing of the others. */
    CHECK(sim_disk_init(&d, 64, MS, SIM_DISK_CRASH_TEAR_LAST) == 0);
    uint8_t z[32];
    memset(z, 0xcc, sizeof z);
    int partial = 0;
    for (int trial = 0; trial < 20; trial++) {
        memset(d.image, 0, 64);
        CHECK(sim_disk_write(&d, 0, 0, x, 8, 1, &done1) == 0);
        CHECK(sim_disk_write(&d, 0, 16, z, 32, 2, &done2) == 0);
        sim_disk_crash_now(&d, &rng);
        CHECK(d.image[0] == 0);
        size_t k = 0;
        while (k < 32 && d.image[16 + k] == 0xcc) k++;
        for (size_t i = 16 + k; i < 48; i++) CHECK(d.image[i] == 0);
        partial |= k > 0 && k < 32;
    }
    CHECK(partial);
    CHECK_EQ_U(d.torn, 20);
    sim_disk_free(&d);
}

/* A failed fdatasync: each pending write reached the image whole, cut or not at all. */
static void disk_sync_failure_lands_whole_cut_or_nothing(void) {
    sim_disk d;
    CHECK(sim_disk_init(&d, 128, MS, SIM_DISK_CRASH_DROP) == 0);
    sim_rng rng;
    sim_rng_seed(&rng, 3);
    uint8_t z[32];
    memset(z, 0xcc, sizeof z);
    int seen[3] = {0, 0, 0}; /* nothing, cut, whole */
    uint64_t whole_counted = 0, whole_seen = 0;
    for (int trial = 0; trial < 40; trial++) {
        memset(d.image, 0, 128);
        uint64_t done;
        for (int i = 0; i < 3; i++) CHECK(sim_disk_write(&d, 0, (uint64_t)i * 40, z, 32, (uint64_t)i, &done) == 0);
        whole_counted += sim_disk_sync_failed(&d, &rng);
        CHECK(d.pending_count == 0);
        for (int i = 0; i < 3; i++) {
            size_t k = 0;
            while (k < 32 && d.image[i * 40 + k] == 0xcc) k++;
            for (size_t j = k; j < 40 && i * 40 + j < 128; j++) CHECK(d.image[i * 40 + j] == 0);
            seen[k == 0 ? 0 : k < 32 ? 1 : 2]++;
            whole_seen += k == 32;
        }
    }
    CHECK(seen[0] > 0 && seen[1] > 0 && seen[2] > 0);
    CHECK_EQ_U(whole_counted, whole_seen);
    CHECK_EQ_U(d.dropped, 120 - whole_seen);
    uint64_t token;
    CHECK(sim_disk_complete(&d, UINT64_MAX, &token) == 0); /* nothing left to complete */
    sim_disk_free(&d);
}

/* store_fail, disk_full and store_tail: their values, and a wrong one for each. */
static void store_fault_keys_parse(void) {
    static const char head[] = "duration: 1s\nnode: a\nnode: r\n";
    static const struct { const char *line, *error; } bad[] = {
        {"store_fail: 1s", "store_fail is"}, {"store_fail: 1s restart 0ms", "store_fail is"},
        {"store_fail: 1s after 1ms", "store_fail is"}, {"disk_full: 1s for 0ms restart 1ms", "disk_full is"},
        {"disk_full: 1s for 1s", "disk_full is"}, {"disk_full: 1s for 1s restart 1ms more", "disk_full is"},
        {"store_tail: maybe", "store_tail is"}};
    char text[512];
    char err[256];
    sim_scenario *sc = calloc(1, sizeof *sc);
    CHECK(sc != NULL);
    snprintf(text, sizeof text, "%sstore_fail: 300ms restart 1ms\ndisk_full: 2s for 500ms restart 100ms\n"
             "store_tail: keep\nlink: a > r\n", head);
    CHECK(sim_scenario_parse(sc, text, err, sizeof err) == 0);
    const sim_store_fault_spec *f = &sc->nodes[1].store_fault;
    CHECK(f->fail_set && f->fail_ns == 300 * MS && f->fail_restart_ns == MS);
    CHECK(f->full_set && f->full_ns == 2000 * MS && f->full_for_ns == 500 * MS && f->full_restart_ns == 100 * MS);
    CHECK(f->tail_keep && !sc->nodes[0].store_fault.fail_set);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(sc, 0, sizeof *sc);
        snprintf(text, sizeof text, "%s%s\nlink: a > r\n", head, bad[i].line);
        CHECK(sim_scenario_parse(sc, text, err, sizeof err) != 0);
        CHECK(strstr(err, bad[i].error) != NULL);
    }
    free(sc);
}

/* ---- whole runs through the core ---- */

/* Runs scenario text with a seed; the caller checks and frees the world. */
static sim_world *run_scenario(const char *text, uint64_t seed, sim_scenario **sc_out) {
    sim_scenario *sc = calloc(1, sizeof *sc);
    char err[256];
    if (sc == NULL || sim_scenario_parse(sc, text, err, sizeof err) != 0) {
        fprintf(stderr, "  scenario: %s\n", err);
        free(sc);
        return NULL;
    }
    sim_options opt;
    memset(&opt, 0, sizeof opt);
    opt.seed = seed;
    opt.seed_given = 1;
    sim_world *w = calloc(1, sizeof *w);
    if (w == NULL || sim_run_init(w, sc, &opt, err, sizeof err) != 0) {
        fprintf(stderr, "  world: %s\n", err);
        free(w);
        free(sc);
        return NULL;
    }
    sim_run(w);
    if (w->error) fprintf(stderr, "  run error: %s\n", w->error);
    *sc_out = sc;
    return w;
}

static void free_run(sim_world *w, sim_scenario *sc) {
    sim_run_free(w);
    free(w);
    free(sc);
}

static const char lossy_text[] =
    "duration: 20s\n"
    "path.rate: 20Mbit\n"
    "path.delay: 10ms\n"
    "path.loss: 2%\n"
    "path.jitter: 1ms\n"
    "node: a\n"
    "node: b\n"
    "store_latency: 1ms\n"
    "link: a > b\n"
    "record_bytes: 700\n"
    "count: 2000\n";

static void run_same_seed_same_trace(void) {
    sim_scenario *sc1, *sc2, *sc3;
    sim_world *w1 = run_scenario(lossy_text, 5, &sc1);
    sim_world *w2 = run_scenario(lossy_text, 5, &sc2);
    sim_world *w3 = run_scenario(lossy_text, 6, &sc3);
    CHECK(w1 && w2 && w3);
    CHECK(w1->error == NULL && w2->error == NULL && w3->error == NULL);
    sim_totals t;
    sim_report_totals(w1, &t);
    CHECK(t.packets_sent > 1000 && t.records_stored > 0);
    CHECK(w1->trace.hash == w2->trace.hash);       /* same seed: the same bytes */
    CHECK(w1->trace.bytes == w2->trace.bytes);
    CHECK(w1->end_ns == w2->end_ns);
    CHECK(w1->trace.hash != w3->trace.hash);       /* another seed: another run */
    free_run(w1, sc1);
    free_run(w2, sc2);
    free_run(w3, sc3);
}

/* The campaign's check passes a clean run and names each invariant broken in it. */
static void vopr_check_names_each_broken_invariant(void) {
    static const char text[] = "duration: 10s\nstop_when_done: yes\npath.rate: 20Mbit\npath.delay: 5ms\n"
                               "node: a\nnode: r\nlink: a > r\nsource: s\ninput: i\nrecord_bytes: 500\ncount: 200\n";
    sim_scenario *sc;
    sim_world *w = run_scenario(text, 1, &sc);
    CHECK(w != NULL && w->error == NULL && w->links[0].done);
    char why[SIM_VOPR_WHY_MOST];
    CHECK(sim_vopr_check(w, 0, why, sizeof why) == 0 && why[0] == 0);
    sim_node *r = &w->nodes[1];
    r->duplicates_delivered = 1;
    CHECK(sim_vopr_check(w, 0, why, sizeof why) == 1 && strstr(why, "duplicates 1") != NULL);
    r->duplicates_delivered = 0;
    r->out_of_order = 2;
    r->epoch_rollbacks = 3;
    CHECK(sim_vopr_check(w, 0, why, sizeof why) == 2 && strstr(why, "out of order 2") && strstr(why, "epoch_rollbacks 3"));
    r->out_of_order = r->epoch_rollbacks = 0;
    r->past.packets_received++; /* a datagram neither opened nor dropped */
    CHECK(sim_vopr_check(w, 0, why, sizeof why) == 1 && strstr(why, "node r:") != NULL);
    r->past.packets_received--;
    w->links[0].host_stored--; /* a record the run finished sending and never stored */
    CHECK(sim_vopr_check(w, 0, why, sizeof why) == 1 && strstr(why, "199 of 200 stored") != NULL);
    CHECK(sim_vopr_check(w, 1, why, sizeof why) == 0); /* unless a node crashed */
    w->links[0].host_stored++;
    free_run(w, sc);
}

static void run_lossy_path_delivers_each_record_once(void) {
    /* Loss, reordering, duplication and corruption on both directions. */
    static const char text[] =
        "duration: 60s\n"
        "path.rate: 20Mbit\n"
        "path.delay: 10ms\n"
        "path.loss: 2%\n"
        "path.dup: 2%\n"
        "path.corrupt: 1%\n"
        "node: a\n"
        "node: b\n"
        "link: a > b\n"
        "record_bytes: 700\n"
        "count: 2000\n";
    sim_scenario *sc;
    sim_world *w = run_scenario(text, 9, &sc);
    CHECK(w != NULL && w->error == NULL);
    sim_totals t;
    sim_report_totals(w, &t);
    fprintf(stderr, "  stored %llu, handed %llu, duplicates %llu, out of order %llu, %.2f s\n",
            (unsigned long long)t.records_stored, (unsigned long long)t.records_delivered,
            (unsigned long long)t.duplicates_delivered, (unsigned long long)t.out_of_order, t.virtual_s);
    CHECK(w->paths[0 * 2 + 1].counters.duplicated > 0 && w->paths[0 * 2 + 1].counters.corrupted > 0);
    CHECK_EQ_U(t.records_stored, 2000);
    CHECK_EQ_U(t.duplicates_delivered, 0);
    CHECK_EQ_U(t.out_of_order, 0);
    CHECK(w->links[0].done);
    free_run(w, sc);
}

static void run_crash_and_restart_completes(void) {
    static const char text[] =
        "duration: 60s\n"
        "path.rate: 20Mbit\n"
        "path.delay: 10ms\n"
        "path.loss: 0.5%\n"
        "node: a\n"
        "crash: 3s restart 3200ms\n"
        "node: b\n"
        "store_latency: 2ms\n"
        "memo_crash: tear_last\n"
        "crash: 1s restart 1500ms\n"
        "link: a > b\n"
        "record_bytes: 1KiB\n"
        "mode: paced\n"
        "rate: 1000/s\n"
        "count: 5000\n";
    sim_scenario *sc;
    sim_world *w = run_scenario(text, 3, &sc);
    CHECK(w != NULL && w->error == NULL);
    sim_totals t;
    sim_report_totals(w, &t);
    fprintf(stderr, "  stored %llu of 5000 by %.2f s, duplicates %llu, out of order %llu\n",
            (unsigned long long)w->links[0].stored, t.virtual_s, (unsigned long long)t.duplicates_delivered,
            (unsigned long long)t.out_of_order);
    CHECK_EQ_U(w->nodes[0].crashes, 1);
    CHECK_EQ_U(w->nodes[1].crashes, 1);
    CHECK_EQ_U(w->nodes[1].restarts, 1);
    CHECK(w->links[0].done);                 /* every record confirmed stored */
    CHECK_EQ_U(w->links[0].stored, 5000);
    CHECK_EQ_U(t.duplicates_delivered, 0);
    CHECK_EQ_U(t.out_of_order, 0);
    CHECK(w->end_ns < 60 * SEC);
    free_run(w, sc);
}

static void run_event_limit_ends_with_error(void) {
    static const char text[] =
        "events_most: 500\n"
        "node: a\n"
        "node: b\n"
        "link: a > b\n"
        "count: 1000\n";
    sim_scenario *sc;
    sim_world *w = run_scenario(text, 1, &sc);
    CHECK(w != NULL);
    CHECK(w->error != NULL && strstr(w->error, "event limit") != NULL);
    CHECK_EQ_U(w->engine.events_run, 500);
    free_run(w, sc);
}

/* Runs scenario text (seed 1) with its trace in a temporary file, rewound for reading. */
static sim_world *run_traced(const char *text, sim_scenario **sc_out, FILE **trace_out) {
    sim_scenario *sc = calloc(1, sizeof *sc);
    char err[256];
    CHECK(sim_scenario_parse(sc, text, err, sizeof err) == 0);
    sim_options opt;
    memset(&opt, 0, sizeof opt);
    opt.trace_file = tmpfile();
    CHECK(opt.trace_file != NULL);
    sim_world *w = calloc(1, sizeof *w);
    CHECK(sim_run_init(w, sc, &opt, err, sizeof err) == 0);
    CHECK(sim_run(w) == 0);
    fflush(opt.trace_file);
    rewind(opt.trace_file);
    *sc_out = sc;
    *trace_out = opt.trace_file;
    return w;
}

static void run_timed_change_applies_from_its_time(void) {
    static const char text[] =
        "duration: 2s\n"
        "path.rate: 10Mbit\n"
        "path.delay: 5ms\n"
        "at 1s path.a>b.loss: 100%\n"
        "node: a\n"
        "node: b\n"
        "link: a > b\n"
        "record_bytes: 500\n"
        "until: 2s\n";
    sim_scenario *sc;
    FILE *trace;
    sim_world *w = run_traced(text, &sc, &trace);
    CHECK(w->paths[1].counters.dropped_loss > 0);
    /* Every loss is at or after 1 s, and the change is in the trace at 1 s. */
    char line[SIM_TRACE_RECORD_MOST];
    uint64_t losses = 0, changes = 0;
    while (fgets(line, sizeof line, trace)) {
        unsigned long long t;
        if (sscanf(line, "\x1e{\"time\":%llu,", &t) != 1) continue;
        if (strstr(line, "\"why\":\"loss\"")) {
            CHECK(t >= SEC);
            losses++;
        }
        if (strstr(line, "sim:path_change")) {
            CHECK(t == SEC);
            changes++;
        }
    }
    CHECK(losses == w->paths[1].counters.dropped_loss && changes == 1);
    fclose(trace);
    free_run(w, sc);
}

/* ---- datagram sizes (spec/protocol.md §5.1) over paths with an MTU ---- */

/* A bulk transfer over a path of IP MTU `mtu` with `overhead` B of IP and UDP headers: it
 * completes, every record once, and the sender's size ends within 8 B of the best the path
 * allows; the path dropped only probes for their size. */
static void mtu_transfer(uint32_t mtu, uint32_t overhead) {
    char text[512];
    snprintf(text, sizeof text,
             "duration: 30s\npath.rate: 50Mbit\npath.delay: 10ms\npath.mtu: %u\npath.overhead: %u\n"
             "node: a\nnode: b\nlink: a > b\nrecord_bytes: 1KiB\ncount: 10000\n", mtu, overhead);
    sim_scenario *sc;
    sim_world *w = run_scenario(text, 1, &sc);
    CHECK(w != NULL && w->error == NULL);
    sim_totals t;
    sim_report_totals(w, &t);
    pure_link_stats s;
    sim_link_stats(w, &w->links[0], &s);
    uint32_t best = mtu - overhead < PURE_LINK_DATAGRAM_MOST ? mtu - overhead : PURE_LINK_DATAGRAM_MOST;
    fprintf(stderr, "  MTU %u (-%u): size %llu of %u, %llu probes (%llu lost), done in %.2f s\n", mtu, overhead,
            (unsigned long long)s.datagram_bytes, best, (unsigned long long)s.pmtu_probes_sent,
            (unsigned long long)s.pmtu_probes_lost, (double)w->links[0].done_ns / SEC);
    CHECK(w->links[0].done);
    CHECK_EQ_U(t.records_stored, 10000);
    CHECK_EQ_U(t.duplicates_delivered, 0);
    CHECK_EQ_U(t.out_of_order, 0);
    CHECK(s.datagram_bytes <= best && s.datagram_bytes + 8 > best);
    CHECK_EQ_U(w->paths[0 * 2 + 1].counters.dropped_mtu, s.pmtu_probes_lost);
    CHECK_EQ_U(w->paths[1 * 2 + 0].counters.dropped_mtu, 0);  /* replies fit any path */
    free_run(w, sc);
}

static void mtu_1280_ipv4(void) { mtu_transfer(1280, 28); }
static void mtu_1280_ipv6(void) { mtu_transfer(1280, 48); }
static void mtu_1400_ipv4(void) { mtu_transfer(1400, 28); }
static void mtu_1450_ipv4(void) { mtu_transfer(1450, 28); }
static void mtu_1450_ipv6(void) { mtu_transfer(1450, 48); }
static void mtu_1500_ipv4(void) { mtu_transfer(1500, 28); }
static void mtu_1500_ipv6(void) { mtu_transfer(1500, 48); }

/* The path's MTU drops from 1,500 to 1,280 at 3 s with no hint (a black hole) and comes back
 * at 6 s: the sender is at a size the path carries within 3 s of the drop (here: the
 * samples every 10 ms say when), finds 1,452 B again one raise interval (2 s) after its search
 * below 1,280 ended, and every record arrives once. */
static void mtu_black_hole_and_back(void) {
    static const char text[] =
        "duration: 20s\nmetrics_interval: 10ms\npath.rate: 50Mbit\npath.delay: 10ms\npath.mtu: 1500\n"
        "at 3s path.mtu: 1280\nat 6s path.mtu: 1500\n"
        "node: a\npmtu_raise: 2s\nnode: b\nlink: a > b\nrecord_bytes: 1KiB\ncount: 60000\n";
    sim_scenario *sc;
    FILE *trace;
    sim_world *w = run_traced(text, &sc, &trace);
    static char line[SIM_TRACE_RECORD_MOST];
    uint64_t full_before = 0, small_ns = 0, full_again_ns = 0, stored_at_small = 0, stored_after = 0;
    while (fgets(line, sizeof line, trace)) {
        unsigned long long t, stored, bytes;
        const char *m = strstr(line, "recovery:metrics_updated");
        const char *b = strstr(line, "\"datagram_bytes\":"), *r = strstr(line, "\"records_stored\":");
        if (m == NULL || b == NULL || r == NULL || sscanf(line, "\x1e{\"time\":%llu,", &t) != 1) continue;
        sscanf(b, "\"datagram_bytes\":%llu", &bytes);
        sscanf(r, "\"records_stored\":%llu", &stored);
        if (t < 3 * SEC && bytes == PURE_LINK_DATAGRAM_MOST) full_before++;
        if (t >= 3 * SEC && small_ns == 0 && bytes <= 1252) small_ns = t, stored_at_small = stored;
        if (small_ns && t < 6 * SEC) stored_after = stored;
        if (t >= 6 * SEC && full_again_ns == 0 && bytes == PURE_LINK_DATAGRAM_MOST) full_again_ns = t;
    }
    pure_link_stats s;
    sim_link_stats(w, &w->links[0], &s);
    fprintf(stderr, "  black hole at 3 s left at %.2f s (%llu records stored by 6 s after it); 1,452 B again at %.2f s\n",
            (double)small_ns / SEC, (unsigned long long)(stored_after - stored_at_small), (double)full_again_ns / SEC);
    CHECK(full_before > 0);
    CHECK(small_ns > 3 * SEC && small_ns < 6 * SEC);
    CHECK(stored_after > stored_at_small + 1000);        /* back at work below the new MTU */
    CHECK(full_again_ns >= 7 * SEC && full_again_ns < 10 * SEC);  /* after the raise interval */
    CHECK(s.pmtu_black_holes >= 1);
    CHECK(w->links[0].done);
    CHECK_EQ_U(w->links[0].host_stored, 60000);
    CHECK_EQ_U(w->nodes[1].duplicates_delivered, 0);
    fclose(trace);
    free_run(w, sc);
}

/* A trace record of `event` with the number after `key` (its name, quotes and colon): its
 * time and that number, or 0 for any other line. */
static int trace_number(const char *line, const char *event, const char *key, uint64_t *t_ns, uint64_t *value) {
    unsigned long long t, v;
    const char *at = strstr(line, key);
    if (strstr(line, event) == NULL || at == NULL || sscanf(line, "\x1e{\"time\":%llu,", &t) != 1) return 0;
    if (sscanf(at + strlen(key), "%llu", &v) != 1) return 0;
    *t_ns = t;
    *value = v;
    return 1;
}

/* Mbit/s of records stored between two instants of a bulk M6 run (50 Mbit/s, 1 KiB
 * records) of this seed, one-way delay, loss and jitter, run until `to_ns`. */
static double m6_stored_mbit(unsigned seed, unsigned delay_ms, unsigned loss_pct, unsigned jitter_ms, uint64_t from_ns,
                             uint64_t to_ns) {
    char text[512];
    snprintf(text, sizeof text,
             "duration: %llums\nseed: %u\npath.rate: 50Mbit\npath.delay: %ums\npath.loss: %u%%\n"
             "path.jitter: %ums\nnode: sender\nnode: receiver\nlink: sender > receiver\nrecord_bytes: 1KiB\n",
             (unsigned long long)(to_ns / MS), seed, delay_ms, loss_pct, jitter_ms);
    sim_scenario *sc;
    FILE *trace;
    sim_world *w = run_traced(text, &sc, &trace);
    static char line[SIM_TRACE_RECORD_MOST];
    uint64_t stored_from = 0, stored_to = 0, t, stored;
    while (fgets(line, sizeof line, trace)) {
        if (!trace_number(line, "recovery:metrics_updated", "\"records_stored\":", &t, &stored)) continue;
        if (t <= from_ns) stored_from = stored;
        if (t <= to_ns) stored_to = stored;
    }
    double mbit = (double)(stored_to - stored_from) * 1024 * 8 / ((double)(to_ns - from_ns) / SEC) / 1e6;
    fprintf(stderr, "  seed %u: %.2f Mbit/s of records stored from %.1f s to %.1f s\n", seed, mbit,
            (double)from_ns / SEC, (double)to_ns / SEC);
    CHECK(stored_from > 0);
    CHECK_EQ_U(w->nodes[1].duplicates_delivered, 0);
    fclose(trace);
    free_run(w, sc);
    return mbit;
}

/* M6's row of RTT 100 ms and 1 % loss, its first 5 s: random losses end BBR's Startup
 * mid-way through a loss round on these seeds, and the round ends in Drain.  Stored records
 * from 1.5 s to 5 s come at the path's rate (here 45.5-46.1 Mbit/s; 30.3 and 31.3 when the
 * round's losses, judged again in Drain, held the sender to the rate Startup had reached when
 * they came, until its first probe 6 s later). */
static void m6_lossy_startup_exit_keeps_the_path_rate(void) {
    CHECK(m6_stored_mbit(3, 50, 1, 0, 1500 * MS, 5 * SEC) >= 43.0);
    CHECK(m6_stored_mbit(5, 50, 1, 0, 1500 * MS, 5 * SEC) >= 43.0);
}

/* M6's row of RTT 100 ms, 1 % loss and 3 ms jitter, seed 8: ProbeRTT starts at 16.1 s,
 * inside a bandwidth probe, and leaves at 16.4 s.  The loss round of its last packets (half
 * a BDP of them: 6 random losses in 213 are 2.8 %) ends after the exit; judged there, it cut
 * bw_lo to 70 % of the estimate and the sender paced at 34-35 Mbit/s until its next probe at
 * 22.8 s.  ProbeRTT's exit answers its rounds: from 16.5 s to 22.5 s the records come at the
 * path's rate (here 44.7 Mbit/s; 33.3 before). */
static void m6_probe_rtt_rounds_cut_no_lower_bound(void) {
    CHECK(m6_stored_mbit(8, 50, 1, 3, 16500 * MS, 22500 * MS) >= 43.0);
}

/* M6's row of RTT 20 ms, 1 % loss and 3 ms jitter, seed 6: the probe at 10.8 s builds a
 * queue, and the loss round of its packets, in DOWN, loses at random behind it.  Taken for
 * another flow's standing queue, that cut inflight_hi and inflight_lo to 70 %: CRUISE kept
 * the window below the BDP, and random loss held the sender at 37 Mbit/s until 17 s.  No
 * queue stood before the probe: the cut stops at the BDP, and from 11 to 17 s the records
 * come at the path's rate. */
static void m6_a_probe_s_own_queue_keeps_the_window(void) {
    CHECK(m6_stored_mbit(6, 10, 1, 3, 11 * SEC, 17 * SEC) >= 43.0);
}

/* M6's row of RTT 20 ms, 5 % loss and 3 ms jitter, seeds 3 and 8: most loss rounds lose
 * above BBR's 2 % threshold and cut bw_lo to the best delivery rate of the round.  Taken
 * per ACK frame, that best had as many samples as the receiver sent ACKs (0.86 per packet
 * here: some cover two packets), and with every cut it fell further: 28.8 and 29.0 Mbit/s
 * over the 30 s.  Each packet delivered is a sample of its own (core/reply.c,
 * rate_on_delivered; spec/protocol.md §5): 36.1 and 37.1, and from 5 s to 30 s the records
 * come at 33 Mbit/s or more (34.8 and 36.4; 32.2 and 28.9 for seed 3 with the per-packet
 * rate or the per-packet volume left out). */
static void m6_lossy_rounds_sample_every_packet(void) {
    CHECK(m6_stored_mbit(3, 10, 5, 3, 5 * SEC, 30 * SEC) >= 33.0);
    CHECK(m6_stored_mbit(8, 10, 5, 3, 5 * SEC, 30 * SEC) >= 33.0);
}

/* The path goes down for 5 s mid-transfer (the answers 10 ms before the data, as a link that
 * fails while acknowledgements are on their way), then comes back.  The sender's PTO backs
 * off to at most 1 s, so a probe gets through within 1 s and a round trip of the return; the
 * bytes the receiver acknowledged and then gave back after 1 s of silence (spec/protocol.md
 * §4.2, stopped runs) go again with the first ACK, not 1 s later by the resend rule.  At a
 * one-way delay of DELAY_MS, 100 records more are heard stored within 1.2 s of the return
 * (with the PTO backed off to 64 times: 3.5 s at 20 ms; with the resend rule waited on:
 * 1.9 s at 1 ms), and every record arrives once. */
static void link_down_5s_at(unsigned delay_ms) {
    char text[512];
    snprintf(text, sizeof text,
             "duration: 20s\npath.rate: 100Mbit\npath.delay: %ums\nat 2s path.b>a.loss: 100%%\n"
             "at 2010ms path.a>b.loss: 100%%\nat 7s path.loss: 0%%\n"
             "node: a\nnode: b\nlink: a > b\nrecord_bytes: 1KiB\ncount: 60000\n", delay_ms);
    sim_scenario *sc;
    FILE *trace;
    sim_world *w = run_traced(text, &sc, &trace);
    static char line[SIM_TRACE_RECORD_MOST];
    uint64_t heard_at_up = 0, back_ns = 0, t, record;
    while (fgets(line, sizeof line, trace)) {
        if (!trace_number(line, "app:stored_heard", "\"record\":", &t, &record)) continue;
        if (t < 7 * SEC) heard_at_up = record;
        else if (back_ns == 0 && record >= heard_at_up + 100) back_ns = t;
    }
    fprintf(stderr, "  delay %u ms, path down from 2 s to 7 s: %llu records stored before; 100 more heard stored "
            "%.0f ms after the path came back\n", delay_ms, (unsigned long long)heard_at_up,
            (double)(back_ns - 7 * SEC) / 1e6);
    CHECK(heard_at_up > 1000 && heard_at_up < 59000);   /* down mid-transfer */
    CHECK(back_ns > 7 * SEC && back_ns < 7 * SEC + 1200 * MS);
    CHECK(w->links[0].done);
    CHECK_EQ_U(w->links[0].host_stored, 60000);
    CHECK_EQ_U(w->nodes[1].duplicates_delivered, 0);
    fclose(trace);
    free_run(w, sc);
}

static void link_down_5s_resumes_within_a_probe(void) {
    link_down_5s_at(1);
    link_down_5s_at(20);
}

/* Address changes, a replay and a spoofed copy in one run: the datagrams go where the
 * rules say, and the run still stores everything once. */
static void run_address_change_replay_and_spoof(void) {
    static const char text[] =
        "duration: 10s\n"
        "path.rate: 20Mbit\n"
        "path.delay: 5ms\n"
        "at 300ms node.a.port 5000\n"
        "at 600ms node.a.addr 192.168.1.9\n"
        "replay: a > b at 800ms\n"
        "spoof: a > b as v at 400ms\n"
        "node: a\n"
        "node: b\n"
        "node: v\n"
        "link: a > b\n"
        "record_bytes: 500\n"
        "mode: paced\n"
        "rate: 1000/s\n"
        "count: 1000\n";
    sim_scenario *sc;
    sim_world *w = run_scenario(text, 4, &sc);
    CHECK(w != NULL && w->error == NULL);
    sim_totals t;
    sim_report_totals(w, &t);
    const sim_node *a = &w->nodes[0], *v = &w->nodes[2];
    static const uint8_t moved[6] = {192, 168, 1, 9, 5000 >> 8, 5000 & 0xff};
    CHECK(a->addr.len == 6 && memcmp(a->addr.bytes, moved, 6) == 0);
    CHECK_EQ_U(a->address_changes, 2);
    CHECK(sim_world_node_at(w, &a->addr) == 0 && sim_world_node_at(w, &a->home) == -1);
    CHECK(w->datagrams_unroutable > 0);           /* replies on their way to an old address */
    CHECK_EQ_U(w->spoofed_datagrams, 1);
    CHECK(w->replayed_datagrams > 300);           /* every a > b datagram of 0.8 s */
    CHECK_EQ_U(v->datagrams_sent, 0);
    CHECK(v->datagrams_received > 0);             /* the receiver wrote to the victim */
    CHECK_EQ_U(t.records_stored, 1000);
    CHECK_EQ_U(t.duplicates_delivered, 0);
    CHECK_EQ_U(t.nonce_reuses, 0);
    CHECK(t.aead_seals >= t.packets_sent);
    CHECK(t.amplification_unanswered_max_x1000 > 0 && t.amplification_unanswered_max_x1000 <= 3000);
    CHECK_EQ_U(t.epoch_rollbacks, 0);
    free_run(w, sc);
}

/* ---- TCP flows (sim_tcp.c) ---- */

static void tcp_cubic_curve_in_fixed_point(void) {
    const uint64_t fp = SIM_TCP_FP;
    /* K = cbrt((W_max - cwnd) / C): 100 -> 70 segments gives cbrt(75) s = 4.217163 s. */
    uint64_t k = sim_cubic_k_us(100 * fp, 70 * fp);
    CHECK(k >= 4217162 && k <= 4217164);
    CHECK_EQ_U(sim_cubic_k_us(70 * fp, 100 * fp), 0);
    /* W(0) is where the epoch starts, W(K) the plateau, W(K + 10 s) = W_max + 0.4 * 1000. */
    uint64_t w0 = sim_cubic_w_fp(100 * fp, k, 0);
    CHECK(w0 >= 70 * fp - fp / 100 && w0 <= 70 * fp + fp / 100);
    CHECK_EQ_U(sim_cubic_w_fp(100 * fp, k, k), 100 * fp);
    uint64_t w10 = sim_cubic_w_fp(100 * fp, k, k + 10000000);
    CHECK(w10 >= 500 * fp - 1 && w10 <= 500 * fp + 1);
    CHECK_EQ_U(sim_cubic_w_fp(10 * fp, 0, 0), 10 * fp);
}

/* One RTT of ACKs, one segment each, all at t_ns. */
static void ack_one_rtt(sim_tcp_cc *cc, uint64_t t_ns, uint64_t rtt_ns) {
    uint64_t n = sim_tcp_cc_cwnd(cc);
    for (uint64_t i = 0; i < n; i++) sim_tcp_cc_on_ack(cc, 1, t_ns, rtt_ns);
}

static void tcp_cc_reductions_and_growth(void) {
    sim_tcp_cc cc;
    /* CUBIC: beta 0.7; fast convergence aims at (1 + beta) / 2 of a window that fell short. */
    sim_tcp_cc_init(&cc, SIM_TCP_CUBIC, 10, 100000, 1);
    CHECK(sim_tcp_cc_in_slow_start(&cc) && sim_tcp_cc_cwnd(&cc) == 10);
    sim_tcp_cc_on_ack(&cc, 5, 1, 20 * MS);
    CHECK_EQ_U(sim_tcp_cc_cwnd(&cc), 15); /* slow start: a segment per segment */
    sim_tcp_cc_set_cwnd(&cc, 1000);
    sim_tcp_cc_on_congestion(&cc);
    CHECK_EQ_U(sim_tcp_cc_ssthresh(&cc), 700);
    CHECK_EQ_U(cc.w_max_fp, 1000 * SIM_TCP_FP);
    sim_tcp_cc_set_cwnd(&cc, 800);
    sim_tcp_cc_on_congestion(&cc);
    CHECK_EQ_U(sim_tcp_cc_ssthresh(&cc), 560);
    CHECK_EQ_U(cc.w_max_fp, 680 * SIM_TCP_FP);
    /* Concave growth back to W_max: RTT 100 ms, 1000 -> 700; K = cbrt(750) s = 9.086 s.
     * Reno-friendly W_est stays below W_cubic here (700 + 0.53 * 91 < 1000). */
    sim_tcp_cc_init(&cc, SIM_TCP_CUBIC, 10, 100000, 0);
    sim_tcp_cc_set_cwnd(&cc, 1000);
    sim_tcp_cc_on_congestion(&cc);
    sim_tcp_cc_set_cwnd(&cc, sim_tcp_cc_ssthresh(&cc));
    uint64_t t = SEC, half = 0;
    const uint64_t k_ns = 9086000 * 1000ull;
    for (; t < SEC + k_ns; t += 100 * MS) {
        ack_one_rtt(&cc, t, 100 * MS);
        if (half == 0 && t >= SEC + k_ns / 2) half = sim_tcp_cc_cwnd(&cc);
    }
    fprintf(stderr, "  cubic: %llu segments halfway to K, %llu at K\n", (unsigned long long)half,
            (unsigned long long)sim_tcp_cc_cwnd(&cc));
    CHECK(half >= 955 && half <= 975);               /* W(K/2 + RTT) = 1000 - 0.4 * 4.44^3 = 965 */
    CHECK(sim_tcp_cc_cwnd(&cc) >= 995 && sim_tcp_cc_cwnd(&cc) <= 1005);
    /* Reno-friendly region: RTT 20 ms, 100 -> 70: W_est grows 0.53 a round until it passes
     * 100 (57 rounds), then 1 a round; after 100 rounds it is about 143, far above W_cubic(2 s). */
    sim_tcp_cc_init(&cc, SIM_TCP_CUBIC, 10, 100000, 0);
    sim_tcp_cc_set_cwnd(&cc, 100);
    sim_tcp_cc_on_congestion(&cc);
    sim_tcp_cc_set_cwnd(&cc, sim_tcp_cc_ssthresh(&cc));
    for (int r = 0; r < 100; r++) ack_one_rtt(&cc, SEC + (uint64_t)r * 20 * MS, 20 * MS);
    fprintf(stderr, "  reno-friendly: %llu segments after 100 rounds\n", (unsigned long long)sim_tcp_cc_cwnd(&cc));
    CHECK(sim_tcp_cc_cwnd(&cc) >= 135 && sim_tcp_cc_cwnd(&cc) <= 150);
    /* NewReno: halves, then one segment a round. */
    sim_tcp_cc_init(&cc, SIM_TCP_NEWRENO, 10, 100000, 1);
    sim_tcp_cc_set_cwnd(&cc, 100);
    sim_tcp_cc_on_congestion(&cc);
    CHECK_EQ_U(sim_tcp_cc_ssthresh(&cc), 50);
    sim_tcp_cc_set_cwnd(&cc, 50);
    for (int r = 0; r < 10; r++) ack_one_rtt(&cc, SEC + (uint64_t)r * 20 * MS, 20 * MS);
    CHECK(sim_tcp_cc_cwnd(&cc) >= 59 && sim_tcp_cc_cwnd(&cc) <= 60); /* 1 / cwnd per ACK: just under 1 a round */
    /* A timeout: one segment, slow start again. */
    sim_tcp_cc_on_timeout(&cc);
    CHECK(sim_tcp_cc_cwnd(&cc) == 1 && sim_tcp_cc_in_slow_start(&cc));
}

static void tcp_scenario_keys(void) {
    static const char text[] =
        "share_from: 2s\n"
        "node: a\n"
        "congestion: bbr\n"
        "node: b\n"
        "tcp: a > b\n"
        "algo: newreno\n"
        "start: 1s\n"
        "until: 9s\n"
        "bytes: 10MB\n"
        "pacing: yes\n"
        "hystart: no\n"
        "initial_window: 4\n"
        "window_most: 1MiB\n"
        "rto_min: 1s\n"
        "tcp: b > a\n";
    sim_scenario *sc = calloc(1, sizeof *sc);
    char err[256];
    int r = sim_scenario_parse(sc, text, err, sizeof err);
    if (r != 0) fprintf(stderr, "  %s\n", err);
    CHECK(r == 0);
    CHECK_EQ_U(sc->share_from_ns, 2 * SEC);
    CHECK_EQ_U(sc->nodes[0].endpoint.congestion, 3); /* PURE_LINK_CC_BBR */
    CHECK_EQ_U(sc->tcp_count, 2);
    const sim_tcp_spec *t = &sc->tcps[0];
    CHECK(t->from == 0 && t->to == 1 && t->algo == SIM_TCP_NEWRENO && t->pacing == 1 && t->hystart == 0);
    CHECK(t->start_ns == SEC && t->until_ns == 9 * SEC && t->bytes == 10000000 && t->initial_window == 4);
    CHECK(t->window_most_bytes == 1048576 && t->rto_min_ns == SEC);
    t = &sc->tcps[1];
    CHECK(t->from == 1 && t->to == 0 && t->algo == SIM_TCP_CUBIC && t->pacing == 0 && t->hystart == 1);
    CHECK(t->until_ns == SIM_NEVER && t->initial_window == SIM_TCP_INITIAL_WINDOW && t->rto_min_ns == SIM_TCP_RTO_MIN_NS);
    CHECK(sim_scenario_parse(sc, "node: a\nnode: b\ntcp: a > b\nalgo: vegas\n", err, sizeof err) != 0);
    CHECK(strstr(err, "line 4") != NULL);
    CHECK(sim_scenario_parse(sc, "node: a\nnode: b\ntcp: a > b\ncount: 3\n", err, sizeof err) != 0);
    CHECK(sim_scenario_parse(sc, "node: a\nnode: b\ntcp: a > c\n", err, sizeof err) != 0);
    CHECK(sim_scenario_parse(sc, "node: a\nnode: b\ntcp: a > a\n", err, sizeof err) != 0);
    free(sc);
}

static const char tcp_lone_text[] =
    "duration: 20s\n"
    "share_from: 3s\n"
    "path.rate: 50Mbit\n"
    "path.delay: 10ms\n"
    "node: a\n"
    "node: b\n"
    "tcp: a > b\n";

static void tcp_lone_flow_fills_the_bottleneck(void) {
    sim_scenario *sc;
    sim_world *w = run_scenario(tcp_lone_text, 1, &sc);
    CHECK(w != NULL && w->error == NULL);
    uint64_t lb[1], tb[1];
    uint64_t span = sim_report_share(w, lb, tb);
    CHECK_EQ_U(span, 17 * SEC);
    double mbit = (double)tb[0] * 8 / ((double)span / 1e9) / 1e6;
    const sim_tcp *t = &w->tcps[0];
    fprintf(stderr, "  %.4f Mbit/s from 3 s on; %llu segments, %llu dropped, %llu retransmitted, %llu recoveries\n", mbit,
            (unsigned long long)t->segments_sent, (unsigned long long)t->dropped, (unsigned long long)t->retransmissions,
            (unsigned long long)t->fast_recoveries);
    /* The link carries at most 50 Mbit/s of 1,500 B packets: 48.27 Mbit/s of payload (and
     * the segment being serialised when the window opens). */
    CHECK(mbit >= 45.0 && mbit <= 50.0 * SIM_TCP_MSS_BYTES / SIM_TCP_WIRE_BYTES * 1.0001);
    CHECK(t->fast_recoveries > 0 && t->timeouts == 0);        /* the drop-tail queue did overflow */
    CHECK_EQ_U(t->retransmissions, t->dropped);              /* and no segment went twice in vain */
    CHECK(w->paths[0 * 2 + 1].counters.dropped_queue == t->dropped);
    free_run(w, sc);
}

static void tcp_against_tcp_shares_a_symmetric_path(void) {
    static const char text[] =
        "duration: 60s\n"
        "share_from: 5s\n"
        "path.rate: 50Mbit\n"
        "path.delay: 10ms\n"
        "path.jitter: 1ms\n"
        "node: a\n"
        "node: b\n"
        "tcp: a > b\n"
        "tcp: a > b\n";
    for (uint64_t seed = 1; seed <= 2; seed++) {
        sim_scenario *sc;
        sim_world *w = run_scenario(text, seed, &sc);
        CHECK(w != NULL && w->error == NULL);
        uint64_t lb[1], tb[2];
        uint64_t span = sim_report_share(w, lb, tb);
        double share = (double)tb[0] / (double)(tb[0] + tb[1]);
        double total = (double)(tb[0] + tb[1]) * 8 / ((double)span / 1e9) / 1e6;
        fprintf(stderr, "  seed %llu: share %.3f, together %.2f Mbit/s\n", (unsigned long long)seed, share, total);
        CHECK(share >= 0.35 && share <= 0.65);
        CHECK(total >= 45.0);
        CHECK(w->tcps[0].reordering_seen && w->tcps[1].reordering_seen); /* jitter reorders */
        free_run(w, sc);
    }
}

/* Runs with a trace and returns the time of the first TCP data segment dropped (or 0) and
 * of the first fast recovery. */
static void tcp_trace_times(FILE *f, uint64_t *drop_ns, uint64_t *recovery_ns) {
    fflush(f);
    rewind(f);
    char line[SIM_TRACE_RECORD_MOST];
    *drop_ns = *recovery_ns = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long t;
        if (sscanf(line, "\x1e{\"time\":%llu,", &t) != 1) continue;
        if (*drop_ns == 0 && strstr(line, "tcp:packet_dropped") && strstr(line, "\"kind\":\"data\"")) *drop_ns = t;
        if (*recovery_ns == 0 && strstr(line, "\"kind\":\"fast_recovery\"")) *recovery_ns = t;
    }
}

static void tcp_single_loss_is_repaired_by_fast_retransmit(void) {
    /* The window (100 KB) stays below the BDP (125 KB), so the queue never overflows: the
     * only losses are random ones on a -> b.  Seeds are tried until one drops exactly one
     * data segment, early enough to be repaired before the end. */
    static const char text[] =
        "duration: 3s\n"
        "path.rate: 50Mbit\n"
        "path.delay: 10ms\n"
        "path.a>b.loss: 0.02%\n"
        "node: a\n"
        "node: b\n"
        "tcp: a > b\n"
        "window_most: 100KB\n";
    int found = 0;
    for (uint64_t seed = 1; seed <= 64 && !found; seed++) {
        sim_scenario *sc = calloc(1, sizeof *sc);
        char err[256];
        CHECK(sim_scenario_parse(sc, text, err, sizeof err) == 0);
        sim_options opt;
        memset(&opt, 0, sizeof opt);
        opt.seed = seed;
        opt.seed_given = 1;
        opt.trace_file = tmpfile();
        CHECK(opt.trace_file != NULL);
        sim_world *w = calloc(1, sizeof *w);
        CHECK(sim_run_init(w, sc, &opt, err, sizeof err) == 0);
        CHECK(sim_run(w) == 0);
        const sim_tcp *t = &w->tcps[0];
        uint64_t drop_ns, recovery_ns;
        tcp_trace_times(opt.trace_file, &drop_ns, &recovery_ns);
        if (t->dropped == 1 && t->acks_dropped == 0 && drop_ns > 0 && drop_ns < 2 * SEC) {
            found = 1;
            fprintf(stderr, "  seed %llu: dropped at %.3f s, fast recovery at %.3f s\n", (unsigned long long)seed,
                    (double)drop_ns / 1e9, (double)recovery_ns / 1e9);
            CHECK(w->paths[0 * 2 + 1].counters.dropped_queue == 0);
            CHECK_EQ_U(t->fast_recoveries, 1);
            CHECK_EQ_U(t->timeouts, 0);
            CHECK_EQ_U(t->retransmissions, 1);
            /* Found lost within about one RTT (20 ms) of the drop: three SACKs, no timer. */
            CHECK(recovery_ns > drop_ns && recovery_ns - drop_ns < 30 * MS);
            CHECK(t->state == SIM_TCP_OPEN && t->rcv_nxt > 1000);
            CHECK_EQ_U(t->lost_out, 0);
        }
        fclose(opt.trace_file);
        sim_run_free(w);
        free(w);
        free(sc);
    }
    CHECK(found);
}

static void tcp_lossy_path_delivers_every_byte(void) {
    /* Loss, duplication and corruption on both directions, jitter reordering: a flow of a
     * fixed size ends, with every segment delivered in order, and the run stops then. */
    static const char text[] =
        "duration: 60s\n"
        "path.rate: 20Mbit\n"
        "path.delay: 10ms\n"
        "path.jitter: 2ms\n"
        "path.loss: 2%\n"
        "path.dup: 1%\n"
        "path.corrupt: 1%\n"
        "node: a\n"
        "node: b\n"
        "tcp: a > b\n"
        "bytes: 5MB\n"
        "tcp: b > a\n"
        "algo: newreno\n"
        "pacing: yes\n"
        "bytes: 2MB\n";
    sim_scenario *sc;
    sim_world *w = run_scenario(text, 4, &sc);
    CHECK(w != NULL && w->error == NULL);
    for (int i = 0; i < 2; i++) {
        const sim_tcp *t = &w->tcps[i];
        fprintf(stderr, "  flow %d: done at %.2f s, %llu segments, %llu dropped, %llu retransmitted, %llu timeouts\n", i,
                (double)t->done_ns / 1e9, (unsigned long long)t->segments_sent, (unsigned long long)t->dropped,
                (unsigned long long)t->retransmissions, (unsigned long long)t->timeouts);
        CHECK(t->done);
        CHECK_EQ_U(t->rcv_nxt, t->segments_most);
        CHECK_EQ_U(t->snd_una, t->segments_most);
        CHECK(t->dropped > 0 && t->retransmissions >= t->dropped / 2);
        CHECK(t->block_count == 0 && t->sacked_out == 0 && t->lost_out == 0 && t->retrans_out == 0);
    }
    CHECK_EQ_U(w->tcps[0].segments_most, (5000000 + SIM_TCP_MSS_BYTES - 1) / SIM_TCP_MSS_BYTES);
    CHECK(w->end_ns < 60 * SEC); /* stopped when both were done */
    free_run(w, sc);
}

static void tcp_same_seed_same_trace(void) {
    static const char text[] =
        "duration: 4s\n"
        "share_from: 1s\n"
        "path.rate: 50Mbit\n"
        "path.delay: 10ms\n"
        "path.jitter: 1ms\n"
        "node: a\n"
        "node: b\n"
        "link: a > b\n"
        "record_bytes: 1KiB\n"
        "tcp: a > b\n";
    sim_scenario *sc1, *sc2, *sc3;
    sim_world *w1 = run_scenario(text, 5, &sc1);
    sim_world *w2 = run_scenario(text, 5, &sc2);
    sim_world *w3 = run_scenario(text, 6, &sc3);
    CHECK(w1 && w2 && w3);
    CHECK(w1->error == NULL && w2->error == NULL && w3->error == NULL);
    CHECK(w1->tcps[0].rcv_nxt > 1000 && w1->links[0].host_stored_bytes > 1000000); /* both moved */
    CHECK(w1->trace.hash == w2->trace.hash);
    CHECK(w1->trace.bytes == w2->trace.bytes);
    CHECK_EQ_U(w1->tcps[0].rcv_nxt, w2->tcps[0].rcv_nxt);
    CHECK_EQ_U(w1->tcps[0].retransmissions, w2->tcps[0].retransmissions);
    CHECK_EQ_U(w1->engine.events_run, w2->engine.events_run);
    CHECK(w1->trace.hash != w3->trace.hash);
    free_run(w1, sc1);
    free_run(w2, sc2);
    free_run(w3, sc3);
}

TEST_MAIN(TEST_CASE(engine_orders_by_time_then_sequence), TEST_CASE(engine_random_schedule_is_stable),
          TEST_CASE(engine_until_and_limit), TEST_CASE(rng_known_answers),
          TEST_CASE(rng_reproducible_and_independent), TEST_CASE(path_rate_matches_bottleneck),
          TEST_CASE(path_delay_and_jitter_bounds), TEST_CASE(path_loss_1_percent), TEST_CASE(path_loss_5_percent),
          TEST_CASE(path_jitter_reorders), TEST_CASE(path_drop_tail_queue), TEST_CASE(path_gilbert_elliott_mean),
          TEST_CASE(path_duplication_and_corruption), TEST_CASE(values_parse_exactly),
          TEST_CASE(scenario_parses_every_kind_of_key),
          TEST_CASE(scenario_parses_keys_over_time), TEST_CASE(nonce_oracle_counts_repeated_pairs),
          TEST_CASE(oracle_amplification_and_epochs), TEST_CASE(trace_is_json_seq_and_hashed),
          TEST_CASE(pcap_headers_have_valid_checksums), TEST_CASE(disk_syncs_in_order_and_crashes),
          TEST_CASE(disk_sync_failure_lands_whole_cut_or_nothing), TEST_CASE(store_fault_keys_parse),
          TEST_CASE(vopr_check_names_each_broken_invariant),
          TEST_CASE(run_same_seed_same_trace), TEST_CASE(run_lossy_path_delivers_each_record_once),
          TEST_CASE(run_crash_and_restart_completes), TEST_CASE(run_event_limit_ends_with_error),
          TEST_CASE(run_timed_change_applies_from_its_time), TEST_CASE(mtu_1280_ipv4), TEST_CASE(mtu_1280_ipv6),
          TEST_CASE(mtu_1400_ipv4), TEST_CASE(mtu_1450_ipv4), TEST_CASE(mtu_1450_ipv6), TEST_CASE(mtu_1500_ipv4),
          TEST_CASE(mtu_1500_ipv6), TEST_CASE(mtu_black_hole_and_back), TEST_CASE(link_down_5s_resumes_within_a_probe), TEST_CASE(m6_lossy_startup_exit_keeps_the_path_rate),
          TEST_CASE(m6_probe_rtt_rounds_cut_no_lower_bound), TEST_CASE(m6_a_probe_s_own_queue_keeps_the_window),
          TEST_CASE(m6_lossy_rounds_sample_every_packet),
          TEST_CASE(run_address_change_replay_and_spoof), TEST_CASE(tcp_cubic_curve_in_fixed_point),
          TEST_CASE(tcp_cc_reductions_and_growth), TEST_CASE(tcp_scenario_keys),
          TEST_CASE(tcp_lone_flow_fills_the_bottleneck), TEST_CASE(tcp_against_tcp_shares_a_symmetric_path),
          TEST_CASE(tcp_single_loss_is_repaired_by_fast_retransmit), TEST_CASE(tcp_lossy_path_delivers_every_byte),
          TEST_CASE(tcp_same_seed_same_trace))
