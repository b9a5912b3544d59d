/* bench_recovery.c: CPU cost of the sender's per-packet recovery work (RTT sample, RACK
 * bookkeeping, congestion control per ack, pacer per send).  Prints ns per call; the
 * brief's budget for all core work per full data packet is 300 ns per side. */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "cc.h"
#include "pacer.h"
#include "rack.h"
#include "rtt.h"

#define MSS 1452u
#define N 4000000u

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t sink;

static void bench_cc(const char *name, uint32_t algo) {
    pl_cc cc;
    pl_cc_init(&cc, algo, MSS);
    pl_rtt rtt;
    pl_rtt_init(&rtt, 0);
    pl_rtt_on_sample(&rtt, 2000000, 0, 0);
    uint64_t now = 1000000000;
    /* RTT 2 ms, an ack every 2 us, a loss every 10,000 acks (20 ms): each episode's
     * recovery takes 1,000 acks and CUBIC's curve or Reno's line the other 9,000. */
    double t0 = now_s();
    for (uint32_t i = 0; i < N; i++) {
        now += 2000;
        if (i % 10000 == 9999) pl_cc_on_lost(&cc, MSS, now - 1000000, now);
        pl_cc_on_acked(&cc, MSS, now - 2000000, now, &rtt, pl_cc_cwnd(&cc), 0);
    }
    double t1 = now_s();
    sink += pl_cc_cwnd(&cc);
    printf("%-28s %6.1f ns/ack (cwnd at end %llu B)\n", name, (t1 - t0) * 1e9 / N,
           (unsigned long long)pl_cc_cwnd(&cc));
}

static void bench_rack_rtt(void) {
    pl_rack rack;
    pl_rack_init(&rack);
    pl_rtt rtt;
    pl_rtt_init(&rtt, 0);
    uint64_t now = 1000000000;
    double t0 = now_s();
    for (uint32_t i = 0; i < N; i++) {
        now += 2000;
        uint64_t sent = now - 20000000 - (i % 7) * 1000;
        pl_rtt_on_sample(&rtt, now - sent, 1000, 5000000);
        pl_rack_on_acked(&rack, i + 10, sent, now, i + 9);
        uint64_t wnd = pl_rack_reo_wnd_ns(&rack, &rtt, 0);
        sink += pl_rack_lost_at_ns(&rack, i + 5, sent - 10000, wnd) + (uint64_t)pl_rack_lost_by_count(&rack, i + 5, i + 10);
    }
    double t1 = now_s();
    printf("%-28s %6.1f ns/ack (sample + on_acked + window + 2 verdicts)\n", "rtt + rack", (t1 - t0) * 1e9 / N);
}

static void bench_pacer(void) {
    pl_pacer p;
    uint64_t now = 0;
    pl_pacer_init(&p, MSS, now);
    pl_pacer_set_rate(&p, 6250000, now); /* 50 Mbit/s */
    double t0 = now_s();
    for (uint32_t i = 0; i < N; i++) {
        now = pl_pacer_next_send_ns(&p, now, MSS);
        pl_pacer_on_sent(&p, MSS, now);
    }
    double t1 = now_s();
    sink += now;
    printf("%-28s %6.1f ns/send (next_send + on_sent); %u packets in %.3f s virtual\n", "pacer", (t1 - t0) * 1e9 / N,
           N, (double)now * 1e-9);
}

int main(void) {
    bench_cc("cc CUBIC on_acked", PURE_LINK_CC_CUBIC);
    bench_cc("cc NewReno on_acked", PURE_LINK_CC_NEWRENO);
    bench_rack_rtt();
    bench_pacer();
    return sink == 42; /* keeps the work observable */
}
