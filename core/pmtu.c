/* pmtu.c: a sender's datagram size (spec/protocol.md §5.1), after RFC 8899's datagram
 * packetization layer PMTU discovery.
 *
 * Full packets start at the base size, which every IPv6 path carries.  While the sender has
 * record bytes to send, one probe at a time — a PING padded to the size probed — asks
 * whether the path carries a larger size: first the largest (most paths carry it, and then
 * one round trip settles it; that probe carries record bytes, pl_pmtu_probe_carries), then
 * halves of the interval between the largest size acknowledged and the smallest that
 * failed, until they are within PL_PMTU_GRAIN_BYTES (PING and PADDING alone: they are
 * likely lost).  A size fails after PL_PMTU_PROBES_MOST probes of it are lost in a row.  A
 * lost probe is not a congestion signal: a path that drops large datagrams says nothing
 * about its queue; its record bytes go again like a lost packet's.  A probe in flight takes
 * no room in the window from the packets after it (send.c, sent_pn).
 *
 * A path may start dropping what it carried (a route change with ICMP filtered: a black
 * hole).  Packets above the base then are all lost while the loss timer's probes, which the
 * sender sizes at the base, come through; PL_PMTU_BLACK_HOLE_LOSSES such losses with no
 * packet above the base acknowledged or any packet at most the base lost since, and a
 * smaller packet acknowledged after them, drop the size to the base at once and start the
 * search again from the top.  An outage loses the small probes too, so it is not taken for
 * a black hole (one shorter than a PTO can be, and then costs only the few probes that find
 * the old size again).
 * A search that ended below the largest size starts again after raise_interval_ns: the path
 * may have grown.
 *
 * The host's too-big hints (pl_pmtu_hint) are unauthenticated and may be stale, so none
 * raises the size: one below the size in use lowers it at once (sending on at a size the
 * path refuses loses everything), and one above it names the next size to probe (a probe
 * of exactly the path's size ends the search there, where halving stops within the grain
 * of it). */
#include "internal.h"

#define NO_FAILURE (PL_DATAGRAM_MOST + 1u)

/* When pl_pmtu_probe_due may next have a probe: while one is in flight never (its fate
 * decides first), else now if the search goes on, else at the raise. */
static void probe_at(pl_pmtu *m) {
    m->probe_at_ns = m->probe_pn != PL_NONE ? PL_NONE : m->probe_bytes != 0 ? 0 : m->raise_ns;
}

void pl_pmtu_start(pl_pmtu *m, uint64_t raise_interval_ns) {
    memset(m, 0, sizeof *m);
    m->bytes = m->acked = PL_DATAGRAM_BASE;
    m->failed = NO_FAILURE;
    m->probe_bytes = PL_DATAGRAM_MOST;
    m->probe_pn = m->sent_pn = PL_NONE;
    m->raise_ns = PL_NONE;
    m->raise_interval_ns = raise_interval_ns;
    probe_at(m);
}

/* A new run on the same path: its size and search stay, the old run's packet numbers are
 * forgotten (its probe in flight, and where the path changed: the new run numbers from 0,
 * and all its packets go over the path as it is now). */
void pl_pmtu_forget_probe(pl_pmtu *m) {
    m->probe_pn = m->sent_pn = PL_NONE;
    m->path_pn = 0;
    probe_at(m);
}

/* The next size to probe, or 0 when the search is over. */
static uint32_t next_size(const pl_pmtu *m) {
    if (m->bytes > m->acked) return m->bytes;           /* a hint lowered it: confirm it */
    if (m->hinted > m->acked && m->hinted < m->failed) return m->hinted;  /* a hint's candidate */
    if (m->failed <= m->acked + PL_PMTU_GRAIN_BYTES) return 0;
    if (m->failed == NO_FAILURE) return PL_DATAGRAM_MOST;
    return m->acked + (m->failed - m->acked) / 2;
}

/* The search goes on from what m knows now (a new target forgets any probe in flight: its
 * fate no longer decides anything). */
static void retarget(pl_pmtu *m, uint64_t now_ns) {
    m->ack_quiet_bytes = 0;
    m->probe_pn = PL_NONE;
    m->probe_losses = 0;
    m->probe_bytes = next_size(m);
    m->raise_ns = PL_NONE;
    if (m->probe_bytes == 0 && m->acked < PL_DATAGRAM_MOST) m->raise_ns = now_ns + m->raise_interval_ns;
    probe_at(m);
    assert(m->acked >= PL_DATAGRAM_BASE && m->bytes >= PL_DATAGRAM_BASE && m->bytes <= PL_DATAGRAM_MOST);
}

/* Back to the base and a new search below `failed`; the path changed after pn_next - 1. */
static void fall_to_base(pl_pmtu *m, uint32_t failed, uint64_t pn_next, uint64_t now_ns) {
    m->path_pn = pn_next;
    m->bytes = m->acked = PL_DATAGRAM_BASE;
    m->failed = failed;
    m->hinted = 0;
    m->big_losses = 0;
    retarget(m, now_ns);
}

/* The size of the probe to send now, or 0 (none due: the search is over, or its probe is in
 * flight).  The raise interval's end restarts the search here, so it needs no timer: a sender
 * with nothing to send has nothing to probe with. */
uint32_t pl_pmtu_probe_due(pl_pmtu *m, uint64_t now_ns) {
    assert(m->raise_ns == PL_NONE || m->probe_bytes == 0);
    assert(m->probe_at_ns == (m->probe_pn != PL_NONE ? PL_NONE : m->probe_bytes != 0 ? 0 : m->raise_ns));
    if (m->raise_ns != PL_NONE && now_ns >= m->raise_ns) {
        m->failed = NO_FAILURE;
        m->hinted = 0;
        retarget(m, now_ns);
    }
    return m->probe_pn == PL_NONE ? m->probe_bytes : 0;
}

void pl_pmtu_probe_sent(pl_sender *s, uint64_t pn) {
    assert(s->pmtu.probe_bytes > 0 && s->pmtu.probe_pn == PL_NONE);
    s->pmtu.probe_pn = s->pmtu.sent_pn = pn;
    probe_at(&s->pmtu);
    s->stats.pmtu_probes_sent++;
}

/* An acknowledged packet larger than any before on this path (pl_pmtu_on_acked). */
void pl_pmtu_on_larger(pl_sender *s, const pl_sent *e, uint64_t now_ns) {
    pl_pmtu *m = &s->pmtu;
    assert(e->bytes > m->acked && e->pn >= m->path_pn);
    m->acked = e->bytes;
    if (m->acked > m->bytes) m->bytes = m->acked;
    if (m->failed <= m->acked) m->failed = NO_FAILURE;  /* an older failure the path has outgrown */
    if (e->pn == m->probe_pn || (m->probe_bytes != 0 && m->acked >= m->probe_bytes)) retarget(m, now_ns);
}

void pl_pmtu_on_lost(pl_sender *s, const pl_sent *e, uint64_t now_ns) {
    pl_pmtu *m = &s->pmtu;
    m->ack_quiet_bytes = 0;  /* the next packet acknowledged above the base clears big_losses */
    if (!e->size_probe) {
        /* A small packet lost as well (losses come in packet-number order, so the PTO probes
         * of an outage come after the packets they follow) says the path lost everything
         * for a while: an outage, not a size it stopped carrying. */
        m->big_losses = e->bytes > PL_DATAGRAM_BASE ? m->big_losses + 1 : 0;
        return;
    }
    s->stats.pmtu_probes_lost++;
    if (e->pn != m->probe_pn) return;
    m->probe_pn = PL_NONE;
    probe_at(m);
    if (++m->probe_losses < PL_PMTU_PROBES_MOST) return;
    m->failed = m->probe_bytes;
    if (m->bytes >= m->failed) m->bytes = m->acked;     /* a hinted size that did not pass */
    retarget(m, now_ns);
}

/* A black hole (pl_pmtu_ack_done): back to the base, and search again from the top. */
void pl_pmtu_black_hole(pl_sender *s, uint64_t now_ns) {
    pl_pmtu *m = &s->pmtu;
    s->stats.pmtu_black_holes++;
    fall_to_base(m, NO_FAILURE, s->pn_next, now_ns);
}

void pl_pmtu_hint(pl_sender *s, uint32_t kind, uint32_t bytes, uint64_t now_ns) {
    pl_pmtu *m = &s->pmtu;
    if (kind == PURE_LINK_HINT_UNREACHABLE) {
        s->stats.path_unreachable_hints++;
        return;
    }
    assert(kind == PURE_LINK_HINT_TOO_BIG);
    s->stats.path_too_big_hints++;
    if (bytes != 0 && bytes < PL_DATAGRAM_BASE) return;  /* the base is the floor */
    if (bytes == 0 || bytes == m->bytes) {
        /* The size in use did not go (or something did not, and the host cannot say what). */
        if (m->bytes > PL_DATAGRAM_BASE) fall_to_base(m, m->bytes, s->pn_next, now_ns);
    } else if (bytes == m->probe_bytes) {
        m->failed = bytes;                               /* the probe cannot pass */
        retarget(m, now_ns);
    } else if (bytes < m->bytes) {
        /* Lower at once; the hinted size is tried by the next probe, and the search is below
         * it: the path changed, so what it carried before counts no more. */
        m->path_pn = s->pn_next;
        m->bytes = bytes;
        m->acked = PL_DATAGRAM_BASE;
        m->failed = bytes + 1;
        m->big_losses = 0;
        retarget(m, now_ns);
    } else if (bytes < PL_DATAGRAM_MOST && bytes + 1 < m->failed) {
        /* Above the size now: a candidate (RFC 8899 §4.6.2).  The next probe is of it, and
         * the search stays at or below it; only the probe's acknowledgement raises the size. */
        m->failed = bytes + 1;
        m->hinted = bytes;
        retarget(m, now_ns);
    }
}
