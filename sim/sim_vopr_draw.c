/* sim_vopr_draw.c: a seed's scenario for pure-link-sim vopr (sim_vopr.h).
 *
 * Drawn per seed: RTT 2-200 ms, loss 0-10 %, Gilbert-Elliott bursts, jitter 0-10 ms,
 * duplication and corruption 0-3 %, record sizes 0 B-64 KiB, bulk or paced, 1-3 links from
 * one or two sender nodes, CUBIC/NewReno/BBR, copies on or off, epochs mid-transfer, small
 * endpoint limits (queues, packets in flight, unstored records: the edges of backpressure),
 * crashes and restarts of the receiver (with or without a memo, torn memo writes, a crash
 * between a memo write and its ACCEPT) and of a sender; the record store failing as the
 * shims' does (an fdatasync that fails, a full disk, a file that keeps a cut tail of what
 * was not yet claimed at a stop: sim_store_fault.h); and an attacker who knows only what
 * travels in clear: forged epoch-0/1/2 packets with the sender's key id and a seen or random
 * run, its answers (LOST) forwarded to the sender, replays of either direction after the
 * receiver's runs went idle.
 *
 * The draws come from the seed's own stream ("vopr"), one after the other in a fixed
 * order, so a seed always gives the same text. */
#include "sim_vopr.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define PICK(r, a) ((a)[sim_rng_below((r), ARRAY_LEN(a))])

static const char *const fault_names[SIM_VOPR_FAULTS] = {
    [SIM_VOPR_LOSS] = "loss", [SIM_VOPR_BURSTS] = "loss bursts (Gilbert-Elliott)", [SIM_VOPR_JITTER] = "jitter",
    [SIM_VOPR_DUPLICATION] = "duplication", [SIM_VOPR_CORRUPTION] = "corruption",
    [SIM_VOPR_TWO_SENDERS] = "two sender nodes", [SIM_VOPR_LINKS_MANY] = "2-3 links",
    [SIM_VOPR_PACED] = "paced link", [SIM_VOPR_MORE_AFTER_IDLE] = "more records after a pause",
    [SIM_VOPR_EPOCHS] = "epochs mid-transfer", [SIM_VOPR_IDLE] = "runs go idle",
    [SIM_VOPR_SMALL_LIMITS] = "small endpoint limits", [SIM_VOPR_SENDER_CRASH] = "sender crash",
    [SIM_VOPR_RECEIVER_CRASH] = "receiver crash", [SIM_VOPR_MEMO] = "memo",
    [SIM_VOPR_MEMO_DROP] = "memo: unsynced writes lost", [SIM_VOPR_MEMO_TEAR_LAST] = "memo: last write torn",
    [SIM_VOPR_MEMO_TEAR_FIRST] = "memo: first write torn", [SIM_VOPR_CRASH_AT_MEMO] = "crash at a memo write",
    [SIM_VOPR_STORE_FAIL] = "store: fdatasync fails", [SIM_VOPR_DISK_FULL] = "store: disk full",
    [SIM_VOPR_STORE_TAIL] = "store: unclaimed tail kept", [SIM_VOPR_REPLAY] = "replay after idle", [SIM_VOPR_FORGE] = "forged packets",
    [SIM_VOPR_FORWARD] = "LOST forwarded to the sender",
};

const char *sim_vopr_fault_name(sim_vopr_fault f) { return f < SIM_VOPR_FAULTS ? fault_names[f] : "?"; }

static void line(sim_vopr_draw *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(sim_vopr_draw *d, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(d->text + d->len, sizeof d->text - d->len - 1, fmt, ap);
    va_end(ap);
    /* Every text fits: at most 3 links and 2 senders, a few dozen lines of < 100 bytes. */
    if (n < 0 || (size_t)n >= sizeof d->text - d->len - 1) return;
    d->len += (size_t)n;
    d->text[d->len++] = '\n';
    d->text[d->len] = 0;
}

static int chance(sim_rng *r, unsigned percent) { return sim_rng_below(r, 100) < percent; }

static void drew(sim_vopr_draw *d, sim_vopr_fault f) { d->faults |= 1u << f; }

static void draw_path(sim_rng *r, sim_vopr_draw *d, uint64_t rtt_ms) {
    static const unsigned rate_mbit[] = {5, 20, 50, 200};
    static const char *const loss[] = {"0.1", "0.5", "1", "2", "5", "10"};
    static const char *const some[] = {"0.5", "1", "3"};
    static const unsigned jitter_ms[] = {1, 3, 10};
    line(d, "path.rate: %uMbit", PICK(r, rate_mbit));
    line(d, "path.delay: %llums", (unsigned long long)(rtt_ms / 2));
    if (chance(r, 70)) line(d, "path.loss: %s%%", PICK(r, loss)), drew(d, SIM_VOPR_LOSS);
    if (chance(r, 20)) line(d, "path.ge_p: 0.01\npath.ge_r: 0.3\npath.ge_loss_bad: 50%%"), drew(d, SIM_VOPR_BURSTS);
    if (chance(r, 50)) line(d, "path.jitter: %ums", PICK(r, jitter_ms)), drew(d, SIM_VOPR_JITTER);
    if (chance(r, 30)) line(d, "path.dup: %s%%", PICK(r, some)), drew(d, SIM_VOPR_DUPLICATION);
    if (chance(r, 30)) line(d, "path.corrupt: %s%%", PICK(r, some)), drew(d, SIM_VOPR_CORRUPTION);
}

static void draw_sender(sim_rng *r, sim_vopr_draw *d, const char *name) {
    static const char *const cc[] = {"cubic", "newreno", "bbr"};
    static const unsigned queue_records[] = {64, 1024}, in_flight[] = {64, 256}, epoch_packets[] = {100, 300};
    line(d, "node: %s", name);
    line(d, "congestion: %s", PICK(r, cc));
    line(d, "copies: %u", 1 + (unsigned)sim_rng_below(r, 2));
    if (chance(r, 10)) line(d, "crash: 1s restart 1200ms"), drew(d, SIM_VOPR_SENDER_CRASH), d->crashes = 1;
    if (chance(r, 20)) line(d, "epoch_packets: %u", PICK(r, epoch_packets)), drew(d, SIM_VOPR_EPOCHS);
    if (chance(r, 15)) {
        line(d, "send_queue_records: %u", PICK(r, queue_records));
        line(d, "packets_in_flight_most: %u", PICK(r, in_flight));
        drew(d, SIM_VOPR_SMALL_LIMITS);
    }
}

static void draw_memo(sim_rng *r, sim_vopr_draw *d) {
    static const sim_vopr_fault modes[] = {SIM_VOPR_MEMO_DROP, SIM_VOPR_MEMO_TEAR_LAST, SIM_VOPR_MEMO_TEAR_FIRST};
    static const char *const mode_names[] = {"drop", "tear_last", "tear_first"};
    static const unsigned restart_ms[] = {1, 100};
    line(d, "memo: yes\nmemo_sync: 1ms");
    drew(d, SIM_VOPR_MEMO);
    if (chance(r, 50)) {
        size_t m = (size_t)sim_rng_below(r, ARRAY_LEN(modes));
        line(d, "memo_crash: %s", mode_names[m]);
        drew(d, modes[m]);
    }
    if (chance(r, 15)) {
        /* The memo keeps everything: the run must still finish, so it is no excuse. */
        line(d, "crash_at_memo: %u restart %ums", 2 + (unsigned)sim_rng_below(r, 4), PICK(r, restart_ms));
        drew(d, SIM_VOPR_CRASH_AT_MEMO);
    }
}

/* The receiver's record store failing (sim_store_fault.h). */
static void draw_store(sim_rng *r, sim_vopr_draw *d) {
    static const unsigned at_ms[] = {300, 800, 1500}, restart_ms[] = {1, 100, 500}, full_ms[] = {50, 300, 1000};
    if (chance(r, 10)) {
        line(d, "store_fail: %ums restart %ums", PICK(r, at_ms), PICK(r, restart_ms));
        drew(d, SIM_VOPR_STORE_FAIL);
        d->crashes = 1;
    }
    if (chance(r, 10)) {
        /* Restarts 100 ms apart while it is full: at most 10 stops. */
        line(d, "disk_full: %ums for %ums restart 100ms", PICK(r, at_ms), PICK(r, full_ms));
        drew(d, SIM_VOPR_DISK_FULL);
        d->crashes = 1;
    }
    if (chance(r, 30)) line(d, "store_tail: keep"), drew(d, SIM_VOPR_STORE_TAIL);
}

/* The receiver r; returns 1 if its runs go idle within the run. */
static int draw_receiver(sim_rng *r, sim_vopr_draw *d, int replay) {
    static const unsigned latency_ms[] = {0, 1, 5}, crash_ms[] = {500, 1000, 1500}, down_ms[] = {1, 100, 500};
    static const unsigned unstored[] = {64, 1024};
    line(d, "node: r");
    line(d, "store_latency: %ums", PICK(r, latency_ms));
    int idle = replay || chance(r, 30);
    /* Runs go idle within the run: replays, forgeries and `more` meet idle slots. */
    if (idle) line(d, "idle: 300ms"), drew(d, SIM_VOPR_IDLE);
    if (chance(r, 50)) draw_memo(r, d);
    if (chance(r, 30)) {
        unsigned at = PICK(r, crash_ms);
        line(d, "crash: %ums restart %ums", at, at + PICK(r, down_ms));
        drew(d, SIM_VOPR_RECEIVER_CRASH);
        d->crashes = 1;
    }
    if (chance(r, 15)) line(d, "unstored_records_most: %u", PICK(r, unstored)), drew(d, SIM_VOPR_SMALL_LIMITS);
    draw_store(r, d);
    return idle;
}

static void draw_link(sim_rng *r, sim_vopr_draw *d, unsigned i, const char *from) {
    static const unsigned paced_bytes[] = {8, 61, 1024, 1400, 3000, 65536};
    static const unsigned bulk_bytes[] = {0, 1, 61, 1024, 1400, 3000, 65536};
    static const unsigned rate[] = {10, 50, 500}, count[] = {10, 200, 2000}, more[] = {10, 200}, more_ms[] = {1500, 2500};
    line(d, "link: %s > r\nsource: out%u\ninput: in%u", from, i, i);
    int paced = chance(r, 40);
    line(d, "record_bytes: %u", paced ? PICK(r, paced_bytes) : PICK(r, bulk_bytes));
    if (paced) line(d, "mode: paced\nrate: %u/s", PICK(r, rate)), drew(d, SIM_VOPR_PACED);
    line(d, "count: %u", PICK(r, count));
    if (!paced && chance(r, 30)) {
        /* After an idle time. */
        line(d, "more: %u at %ums", PICK(r, more), PICK(r, more_ms));
        drew(d, SIM_VOPR_MORE_AFTER_IDLE);
    }
}

static void draw_attacker(sim_rng *r, sim_vopr_draw *d, uint64_t rtt_ms) {
    static const unsigned at_ms[] = {10, 30, 300, 1000, 2000}, epoch[] = {0, 1, 1, 2}, len[] = {64, 80, 200};
    static const unsigned count[] = {1, 50, 500}, every_ms[] = {2, 10};
    line(d, "node: x"); /* the attacker: sends nothing of its own */
    int forward = chance(r, 50);
    /* Forwarding: just after the first packet reaches the receiver (the run not yet proven). */
    uint64_t at_us = forward ? rtt_ms / 2 * 1000 + 500 : (uint64_t)PICK(r, at_ms) * 1000;
    unsigned e = PICK(r, epoch), l = PICK(r, len), c = PICK(r, count), every = PICK(r, every_ms);
    line(d, "forge: a > r as x at %lluus epoch %u len %u count %u every %ums run %s", (unsigned long long)at_us, e,
         l, c, every, chance(r, 50) ? "seen" : "random");
    drew(d, SIM_VOPR_FORGE);
    if (forward) line(d, "forward: x > a at 0"), drew(d, SIM_VOPR_FORWARD);
}

void sim_vopr_draw_seed(uint64_t seed, sim_vopr_draw *d) {
    static const unsigned rtt_ms[] = {2, 10, 20, 50, 100, 200}, duration_s[] = {2, 3, 5}, replay_ms[] = {500, 1000, 1500};
    static const unsigned links[] = {1, 1, 2, 3};
    memset(d, 0, sizeof *d);
    sim_rng r;
    sim_rng_derive(&r, seed, "vopr");
    uint64_t rtt = PICK(&r, rtt_ms);
    line(d, "duration: %us\nseed: %llu\nstop_when_done: yes", PICK(&r, duration_s), (unsigned long long)seed);
    draw_path(&r, d, rtt);
    const char *const senders[] = {"a", "b"};
    unsigned sender_count = chance(&r, 70) ? 1 : 2;
    if (sender_count == 2) drew(d, SIM_VOPR_TWO_SENDERS);
    for (unsigned i = 0; i < sender_count; i++) draw_sender(&r, d, senders[i]);
    int replay = chance(&r, 15);
    draw_receiver(&r, d, replay);
    unsigned link_count = PICK(&r, links);
    if (link_count > 1) drew(d, SIM_VOPR_LINKS_MANY);
    for (unsigned i = 0; i < link_count; i++) draw_link(&r, d, i, senders[sim_rng_below(&r, sender_count)]);
    if (replay) {
        int back = chance(&r, 50);
        line(d, "replay: %s at %ums", back ? "r > a" : "a > r", PICK(&r, replay_ms));
        drew(d, SIM_VOPR_REPLAY);
    }
    if (chance(&r, 25)) draw_attacker(&r, d, rtt);
}
