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
set -eu
sim=${B:-build}/pure-link-sim
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for conf in restart-recovery restart-recovery-no-memo; do
    for seed in 7 1 2 3; do
        trace=/dev/null
        [ "$seed" = 7 ] && trace="$out/$conf.trace"
        $sim "sim/scenarios/$conf.conf" --seed "$seed" --json --quiet --trace "$trace" > "$out/$conf-$seed.txt" 2>&1 || {
            echo "$conf seed $seed: simulator failed"; tail -5 "$out/$conf-$seed.txt"; exit 1; }
        tail -1 "$out/$conf-$seed.txt" > "$out/$conf-$seed.json"
    done
done
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
        check(name + " back where it was within %d ms of the first datagram" % bound_ms,
              0 < l["restart_recovery_ms_max"] <= bound_ms, l["restart_recovery_ms_max"])
        check(name + " the 1 s resend rule never fired", l["records_resent"] == 0, l["records_resent"])
        if memo: check(name + " no LOST", s["lost_notices"] == 0, s["lost_notices"])
        else: check(name + " a LOST per restart", s["lost_notices"] >= 2, s["lost_notices"])

    # Pacing, in the trace of the scenario's own seed: after a restart the sender's
    # datagrams leave at most 10 at one instant (the pacer's burst) and at most 10 plus
    # twice the path's rate (the pacer's largest gain, in slow start) in any 10 ms: 20 Mbit/s
    # carries 16.9 datagrams of 1,480 B (with their IPv4 and UDP headers) in 10 ms.
    restarts, sends = [], []
    for line in open(os.path.join(d, conf + ".trace")):
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
sys.exit(1 if failed else 0)
PY
