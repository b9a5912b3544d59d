#!/bin/sh
# Recovery from a receiver restart, in virtual time (sim/scenarios/restart-recovery*.conf:
# a bulk link whose receiver is killed twice, restarted with its memo and without).  After
# each restart, the records the sender had sent before the crash must be stored within
# 5 RTT (100 ms; with a memo) or 6 RTT (120 ms; without: one more for the LOST) of the
# first datagram the restarted receiver gets — links[0].restart_recovery_ms_max.  The bound
# is one RTT for the receiver's first reply (an ACK without a binding, or a LOST) to reach
# the sender and its resend to come, one to three for the resend of the window it lost,
# paced, with a loss on the way, and the host's store latency (5 ms).  A sender that took
# the bytes of packets acknowledged without a binding as received waited for the 1 s resend
# rule (1,063 ms); one that left its packets of the old epoch in flight after LOST waited
# for a PTO backed off through the outage (421-621 ms).  Each scenario runs with its own
# seed and three more; the 1 s resend rule must never fire, nothing is stored twice, and
# the resend is paced (below).
# The bound holds with one loss on the way.  The path loses 1 % of the datagrams either way,
# and a recovery may meet more (a resent packet and its resend, or the ACCEPT after a LOST
# and a data packet): each loss beyond the first can cost the sender at most one PTO more
# (spec/protocol.md §5; RFC 9002 §6.2: srtt + max(4 rttvar, 1 ms) + the 25 ms the receiver
# may hold an ACK), the wait for a reply that never comes, or RACK's declaration of a lost
# packet, which comes sooner.  The losses that count are the sender's datagrams and the
# replies after which the sender fell silent for more than a round trip (it waited for one:
# a lost ACK among many costs nothing), during the recovery and within the time it was
# allowed so far (a loss after that cannot be what made it late).  So each recovery (sim:restart_recovered in
# the trace) is held to the bound plus one PTO, at the sender's RTT before the crash, per
# such loss beyond the first.  A PTO doubled through the outage is not what the rule
# allows: a single lost reply that costs one still fails.
# Then the distribution: seeds 1-64 of each scenario (every seed is one draw of where the
# losses fall), each recovery within a flat bound derived from the protocol's timers on
# this path (one-way delay d = 10 ms, 20 Mbit/s, store latency 5 ms), whatever the losses:
#   resend volume W: everything the sender had sent past the stored mark it had heard —
#     its window in flight (BBR's, 2 BDP and 3 quanta: 112 KB, its largest in these runs)
#     and what was acknowledged but not yet heard stored (the store latency, a hole's
#     repair and STORED's way back: at most one srtt, 40 ms with the queue, of the path's
#     rate: 100 KB) — 212 KB, 85 ms at the path's rate;
#   with a memo: d for the receiver's ACK (stream unknown) to reach the sender, d for the
#     resend's first packet, W, the store latency, and one loss not repaired while the
#     resend goes on: a resent packet lost shows when a later one is acknowledged, a
#     reordering window (min RTT / 4) after its RTT, and its resend takes d: 30 ms; a lost
#     ACK of the probe, the second probe 25 ms after the first (spec/protocol.md §5):
#     10 + 10 + 85 + 5 + 30 = 140 ms;
#   without: d for the LOST, an RTT for epoch 0's OFFER and ACCEPT, d, W, the store
#     latency, and one such loss: a lost OFFER or ACCEPT is shown by nothing but the PTO
#     (epoch 0 carries one packet at a time), srtt + 4 rttvar + 25 ms ack delay, 60 ms with
#     the srtt of 35 ms the queue gives before the crash: 10 + 20 + 10 + 85 + 5 + 60 = 190 ms.
# Seed 6 without a memo took 439 ms while a PTO's two probes went together: they drew one
# LOST (one per 5 ms per run and address), it was lost, and the next probe came after the
# PTO doubled through the outage (379 ms).  Seed 58 took 204 ms while the packets in flight
# at a LOST counted as congestion losses: BBR took the 82 of them as one lossy round and
# resent at 10 Mbit/s (spec/protocol.md §7).  Every run is done with each record stored
# once, and the 1 s resend rule never fires in any of them: a lost last STORED, with
# nothing more to send, is asked for by a PING one PTO after the last packet (spec/
# protocol.md §4.2; before, seed 52 with a memo and seed 17 without waited for the rule at
# the tail of the transfer).
set -eu
sim=${B:-build}/pure-link-sim
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for conf in restart-recovery restart-recovery-no-memo; do
    for seed in 7 1 2 3; do
        trace="$out/$conf-$seed.trace"
        $sim "sim/scenarios/$conf.conf" --seed "$seed" --json --quiet --trace "$trace" > "$out/$conf-$seed.txt" 2>&1 || {
            echo "$conf seed $seed: simulator failed"; tail -5 "$out/$conf-$seed.txt"; exit 1; }
        tail -1 "$out/$conf-$seed.txt" > "$out/$conf-$seed.json"
    done
    for seed in $(seq 1 64); do
        [ -f "$out/$conf-$seed.json" ] && continue
        $sim "sim/scenarios/$conf.conf" --seed "$seed" --json --quiet > "$out/$conf-$seed.txt" 2>&1 || {
            echo "$conf seed $seed: simulator failed"; tail -5 "$out/$conf-$seed.txt"; exit 1; }
        tail -1 "$out/$conf-$seed.txt" > "$out/$conf-$seed.json"
    done
done
# A longer round trip (60 ms) and 3 % loss: a PTO's two probes, 25 ms apart, both reach the
# restarted receiver before the sender hears its stream is unknown; at seed 29 the flagged
# ACK of the second is lost and the receiver, bound again, covers it without the flag.
$sim sim/scenarios/restart-recovery.conf --seed 29 --set 'path.delay: 30ms' --set 'path.loss: 3%' \
    --json --quiet > "$out/rtt60.txt" 2>&1 || { echo "rtt60 seed 29: simulator failed"; tail -5 "$out/rtt60.txt"; exit 1; }
tail -1 "$out/rtt60.txt" > "$out/rtt60.json"
python3 - "$out" <<'PY'
import json, os, sys
d = sys.argv[1]
failed = []
def check(what, ok, got=""):
    print("%-4s %s %s" % ("ok" if ok else "FAIL", what, got))
    if not ok: failed.append(what)

for conf, bound_ms, memo in (("restart-recovery", 100, True), ("restart-recovery-no-memo", 120, False)):
    for seed in (7, 1, 2, 3):
        s = json.load(open(os.path.join(d, "%s-%d.json" % (conf, seed))))
        l, r = s["links"][0], s["nodes"]["r"]
        name = "%s seed %d:" % (conf, seed)
        check(name + " done, all 10,000 stored once", s["end"] == "done" and l["records_stored"] == 10000
              and s["duplicates_delivered"] == 0, (s["end"], l["records_stored"], s["duplicates_delivered"]))
        check(name + " two restarts, each measured", r["restarts"] == 2 and l["restart_recoveries"] == 2,
              (r["restarts"], l["restart_recoveries"]))
        check(name + " a recovery took time", l["restart_recovery_ms_max"] > 0, l["restart_recovery_ms_max"])
        # Each recovery against the bound, one PTO more per datagram lost in it beyond the first.
        metrics, sent, lost_data, lost_replies, done = [], [], [], [], []
        for line in open(os.path.join(d, "%s-%d.trace" % (conf, seed))):
            rec = json.loads(line.strip("\x1e\n"))
            n, x, t = rec["name"], rec.get("data", {}), rec["time"]
            if n == "recovery:metrics_updated" and x.get("node") == "a": metrics.append((t, x))
            elif n == "transport:packet_sent" and x.get("from") == "a": sent.append(t)
            elif n == "transport:packet_dropped" and (x.get("from"), x.get("to")) == ("a", "r"): lost_data.append(t)
            elif n == "transport:packet_dropped" and (x.get("from"), x.get("to")) == ("r", "a"): lost_replies.append(t)
            elif n == "sim:restart_recovered": done.append((t, x["took_ns"]))
        check(name + " each recovery in the trace", len(done) == 2 and
              abs(max(t for _, t in done) / 1e6 - l["restart_recovery_ms_max"]) < 0.001, done)
        for end, took in done:
            start = end - took
            m = [x for t, x in metrics if t <= start][-1]
            rtt_ns = m["rtt_ns_smoothed"]
            pto_ms = (rtt_ns + max(4 * m["rtt_ns_variance"], 1000000)) / 1e6 + 25
            def silent_after(t):
                later = [u for u in sent if u > t]
                return not later or later[0] - t > rtt_ns
            costly = lost_data + [t for t in lost_replies if silent_after(t)]
            allowed = bound_ms
            while True:
                lost = sum(1 for t in costly if start <= t <= min(end, start + allowed * 1e6))
                wider = bound_ms + max(0, lost - 1) * pto_ms
                if wider <= allowed: break
                allowed = wider
            check(name + " back where it was within %d ms of the first datagram, one PTO (%.1f ms) more per "
                  "loss beyond the first (%d): %.1f ms" % (bound_ms, pto_ms, lost, allowed),
                  took / 1e6 <= allowed, took / 1e6)
        check(name + " the 1 s resend rule never fired", l["records_resent"] == 0, l["records_resent"])
        if memo: check(name + " no LOST", s["lost_notices"] == 0, s["lost_notices"])
        else: check(name + " a LOST per restart", s["lost_notices"] >= 2, s["lost_notices"])

    # Pacing, in the trace of the scenario's own seed: after a restart the sender's
    # datagrams leave at most 10 at one instant (the pacer's burst) and at most 10 plus
    # twice the path's rate (the pacer's largest gain, in slow start) in any 10 ms: 20 Mbit/s
    # carries 16.9 datagrams of 1,480 B (with their IPv4 and UDP headers) in 10 ms.
    restarts, sends = [], []
    for line in open(os.path.join(d, conf + "-7.trace")):
        rec = json.loads(line.strip("\x1e\n"))
        if rec["name"] == "sim:node_restart": restarts.append(rec["time"])
        elif rec["name"] == "transport:packet_sent" and rec["data"]["from"] == "a" and restarts:
            sends.append(rec["time"])
    def most_within(window_ns):
        most, lo = 0, 0
        for hi in range(len(sends)):
            while sends[hi] - sends[lo] >= window_ns: lo += 1
            most = max(most, hi - lo + 1)
        return most
    at_once, in_10ms = most_within(1), most_within(10 * 1000000)
    check("%s: after a restart, at most 10 datagrams at once" % conf, 0 < at_once <= 10, at_once)
    check("%s: after a restart, at most 10 + 2 x 16.9 datagrams in 10 ms" % conf, in_10ms <= 10 + 2 * 16.9, in_10ms)

# The distribution over seeds 1-64, each against its flat bound (above).
for conf, bound_ms, memo in (("restart-recovery", 140, True), ("restart-recovery-no-memo", 190, False)):
    took, over, bad = [], [], []
    for seed in range(1, 65):
        s = json.load(open(os.path.join(d, "%s-%d.json" % (conf, seed))))
        l, r = s["links"][0], s["nodes"]["r"]
        ms = l["restart_recovery_ms_max"]
        took.append(ms)
        if not 0 < ms <= bound_ms: over.append((seed, ms))
        # A LOST without a memo (at least one: at seed 30 the first ACCEPT was lost and the
        # sender was still in epoch 0 at the first crash), none with one.
        if not (s["end"] == "done" and l["records_stored"] == 10000 and s["duplicates_delivered"] == 0
                and r["restarts"] == 2 and l["restart_recoveries"] == 2 and l["records_resent"] == 0
                and (s["lost_notices"] == 0 if memo else s["lost_notices"] >= 1)):
            bad.append((seed, s["end"], l["records_stored"], s["duplicates_delivered"], r["restarts"],
                        l["restart_recoveries"], l["records_resent"], s["lost_notices"]))
    took.sort()
    check("%s, seeds 1-64: done, all 10,000 stored once, two restarts measured, the 1 s resend rule never fired, %s" %
          (conf, "no LOST" if memo else "LOST drawn"), not bad, bad)
    check("%s, seeds 1-64: back where it was within %d ms of the first datagram (median %.1f, max %.1f)" %
          (conf, bound_ms, took[len(took) // 2], took[-1]), not over, over)

# The probe sent before the sender heard of the loss delivers no byte (spec/protocol.md §4.1):
# its bytes go with the resend (taken as received, they waited for the 1 s resend rule:
# back 1,230 ms after the restarted receiver's first datagram, 217 ms with the rule).
s = json.load(open(os.path.join(d, "rtt60.json")))
l = s["links"][0]
check("restart-recovery, RTT 60 ms, 3 % loss, seed 29: done, all stored once, the 1 s resend rule never fired, "
      "each recovery within 400 ms", s["end"] == "done" and l["records_stored"] == 10000 and
      s["duplicates_delivered"] == 0 and l["records_resent"] == 0 and 0 < l["restart_recovery_ms_max"] <= 400,
      (s["end"], l["records_stored"], s["duplicates_delivered"], l["records_resent"], l["restart_recovery_ms_max"]))
sys.exit(1 if failed else 0)
PY
