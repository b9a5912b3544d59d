/* pacer.c: the credit pacer.  See pacer.h.
 *
 * Credit is kept in bytes * 1e9 so that credit earned in an interval is exactly
 * elapsed_ns * rate_bytes_per_s, with no rounding that could drift over a long run. */
#include "pacer.h"

#include <assert.h>
#include <stddef.h>

#define PL_PACER_DATAGRAM_MOST 65535u

_Static_assert(PL_PACER_BURST_DATAGRAMS >= 1, "at least one packet may always go");
_Static_assert(PL_PACER_BURST_DATAGRAMS_MOST >= PL_PACER_BURST_DATAGRAMS, "the largest burst is at least the least");
_Static_assert(PL_PACER_RATE_MOST * PL_PACER_BURST_NS < UINT64_MAX / 2, "1 ms of the top rate fits 64 bits");
_Static_assert((uint64_t)PL_PACER_DATAGRAM_MOST * PL_PACER_BURST_DATAGRAMS_MOST * PL_PACER_NS_PER_S < UINT64_MAX / 2,
               "the burst, in byte-ns per s, fits 64 bits with room for one more");
_Static_assert(PL_PACER_GAIN_PERCENT_SLOW_START >= 100 && PL_PACER_GAIN_PERCENT_AVOIDANCE >= 100,
               "a pacer slower than the window would starve it");

/* The pacer's invariants: checked after every change (init, set_rate, on_sent), which is
 * all that writes it; the query of every packet (next_send_ns) does not check again. */
static void pl_pacer_check(const pl_pacer *pacer) {
    assert(pacer != NULL);
    assert(pacer->credit <= pacer->burst);
    assert(pacer->rate_bytes_per_s <= PL_PACER_RATE_MOST);
    (void)pacer;
}

/* The credit at now_ns. */
static uint64_t pl_pacer_credit_at(const pl_pacer *pacer, uint64_t now_ns) {
    if (pacer->rate_bytes_per_s == 0) return pacer->burst;
    assert(now_ns >= pacer->credit_ns);
    uint64_t elapsed_ns = now_ns - pacer->credit_ns;
    uint64_t room = pacer->burst - pacer->credit;
    /* Compare before multiplying: elapsed * rate could overflow after a long idle. */
    if (elapsed_ns >= room / pacer->rate_bytes_per_s + 1) return pacer->burst;
    uint64_t credit = pacer->credit + elapsed_ns * pacer->rate_bytes_per_s;
    return credit > pacer->burst ? pacer->burst : credit;
}

void pl_pacer_init(pl_pacer *pacer, uint32_t datagram_bytes, uint64_t now_ns) {
    assert(pacer != NULL);
    assert(datagram_bytes >= 1 && datagram_bytes <= PL_PACER_DATAGRAM_MOST);
    pacer->rate_bytes_per_s = 0;
    pacer->burst_least = (uint64_t)datagram_bytes * PL_PACER_BURST_DATAGRAMS * PL_PACER_NS_PER_S;
    pacer->burst_most = (uint64_t)datagram_bytes * PL_PACER_BURST_DATAGRAMS_MOST * PL_PACER_NS_PER_S;
    pacer->burst = pacer->burst_least;
    pacer->credit = pacer->burst;
    pacer->credit_ns = now_ns;
    pl_pacer_check(pacer);
}

uint64_t pl_pacer_rate_bytes_per_s(uint64_t cwnd_bytes, uint64_t rtt_ns_smoothed, int slow_start) {
    uint64_t gain = slow_start ? PL_PACER_GAIN_PERCENT_SLOW_START : PL_PACER_GAIN_PERCENT_AVOIDANCE;
    if (rtt_ns_smoothed == 0) return PL_PACER_RATE_MOST;
    /* cwnd <= 2^32 (the controller's ceiling), so cwnd * gain / 100 <= 2^35 and the
     * product with 1e9 fits; a larger window saturates instead. */
    if (cwnd_bytes > (1ull << 32)) cwnd_bytes = 1ull << 32;
    uint64_t rate = cwnd_bytes * gain / 100 * PL_PACER_NS_PER_S / rtt_ns_smoothed;
    if (rate == 0) rate = 1;
    return rate > PL_PACER_RATE_MOST ? PL_PACER_RATE_MOST : rate;
}

void pl_pacer_set_rate(pl_pacer *pacer, uint64_t rate_bytes_per_s, uint64_t now_ns) {
    pl_pacer_check(pacer);
    assert(rate_bytes_per_s <= PL_PACER_RATE_MOST);
    pacer->credit = pl_pacer_credit_at(pacer, now_ns);
    pacer->credit_ns = now_ns;
    pacer->rate_bytes_per_s = rate_bytes_per_s;
    /* 1 ms of the rate, in credit units (bytes * 1e9 = rate * ns), within its bounds. */
    uint64_t burst = rate_bytes_per_s * PL_PACER_BURST_NS;
    pacer->burst = burst < pacer->burst_least ? pacer->burst_least : burst > pacer->burst_most ? pacer->burst_most : burst;
    if (pacer->credit > pacer->burst) pacer->credit = pacer->burst;
    pl_pacer_check(pacer);
}

uint64_t pl_pacer_next_send_ns(const pl_pacer *pacer, uint64_t now_ns, uint64_t bytes) {
    assert(bytes <= PL_PACER_DATAGRAM_MOST);
    uint64_t need = bytes * PL_PACER_NS_PER_S;
    assert(need <= pacer->burst); /* else no credit would ever cover it */
    uint64_t credit = pl_pacer_credit_at(pacer, now_ns);
    if (credit >= need) return now_ns;
    uint64_t missing = need - credit;
    return now_ns + (missing + pacer->rate_bytes_per_s - 1) / pacer->rate_bytes_per_s;
}

void pl_pacer_on_sent(pl_pacer *pacer, uint64_t bytes, uint64_t now_ns) {
    assert(bytes <= PL_PACER_DATAGRAM_MOST);
    uint64_t need = bytes * PL_PACER_NS_PER_S;
    uint64_t credit = pl_pacer_credit_at(pacer, now_ns);
    /* A packet sent without credit (a probe the sender would not hold back) is forgiven
     * rather than owed: the pacer smooths, the window limits. */
    pacer->credit = credit >= need ? credit - need : 0;
    pacer->credit_ns = now_ns;
    pl_pacer_check(pacer);
}
