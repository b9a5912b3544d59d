#!/bin/sh
# A 16 MiB record through a 5 s outage on a 20 Mbit/s path, beside a bulk link, in virtual
# time (sim/scenarios/outage-16mib-20mbit.conf), with the scenario's seed and three more.
# After the outage the sender resends what it had heard of the record before it; at
# 20 Mbit/s that takes seconds, all of it below the highest acknowledged offset.  The 1 s
# resend rule must wait while those bytes are acknowledged: a sender that did not wait resent the
# record from its start every second and never stored it (0 of 1 in 40 s, 37 resends).
# Bounds: one resend per second of the outage and a few more (10), the record stored by 25 s
# (the outage ends at 7 s; the rest of both links takes 17.5 s of virtual time at most).
set -eu
sim=${B:-build}/pure-link-sim
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for seed in 1 2 3 4; do
    $sim sim/scenarios/outage-16mib-20mbit.conf --seed "$seed" --json --quiet > "$out/$seed.txt" 2>&1 || {
        echo "seed $seed: simulator failed"; tail -5 "$out/$seed.txt"; exit 1; }
    tail -1 "$out/$seed.txt" > "$out/$seed.json"
done
python3 - "$out" <<'PY'
import json, os, sys
failed = []
def check(what, ok, got=""):
    print("%-4s %s %s" % ("ok" if ok else "FAIL", what, got))
    if not ok: failed.append(what)

for seed in (1, 2, 3, 4):
    s = json.load(open(os.path.join(sys.argv[1], "%d.json" % seed)))
    small, big = s["links"]
    name = "seed %d:" % seed
    check(name + " done, every record stored once", s["end"] == "done" and small["records_stored"] == 10000
          and big["records_stored"] == 1 and s["duplicates_delivered"] == 0,
          (s["end"], small["records_stored"], big["records_stored"], s["duplicates_delivered"]))
    check(name + " the 16 MiB record resent at most 10 times", big["records_resent"] <= 10, big["records_resent"])
    check(name + " the 16 MiB record stored by 25 s", 0 < big.get("done_ms", 0) <= 25000, big.get("done_ms"))
if failed: sys.exit(1)
PY
