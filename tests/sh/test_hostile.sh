#!/bin/sh
# Hostile load on a live receiver, bounded (scripts/bench_hostile.sh, tests/bench/load_hostile.c
# say what is sent): 20,000 datagrams at 20,000 per second, in 500 ms phases, while
# `pure-link send` transfers 200,000 records of 1 KiB.  Asserted, none of it timed:
#  - not one byte comes back to any attacking address but the LOSTs the bait may draw;
#  - those LOSTs stay within their allowances (spec/protocol.md §7): one per 5 ms per (peer,
#    run, address) for the bait's 4 runs, and one per 2 ms after 4 for their one address,
#    over the attack's wall time;
#  - the sender honoured none of the LOSTs forwarded to it, nor any forged one;
#  - the X25519 operations the attack caused are within the bound (1: the static X25519 of
#    the wired peer that never sent, made once; none for anything else);
#  - every record of the transfer is in the store exactly once (the script checks).
# Needs root for the capture on lo; without it, says so and passes.
set -eu
if [ "$(id -u)" != 0 ]; then echo "skipped: the capture on lo needs root"; exit 77; fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
HOSTILE_JSON=$out WARMUP_MS=0 sh scripts/bench_hostile.sh 20000 20000 500 200000
python3 - "$out" <<'PY'
import json, math, sys
j = json.load(open(sys.argv[1]))
fail = []
if j["datagrams"] != 20000: fail.append("sent %d datagrams, not 20000" % j["datagrams"])
if j["answered_bytes"] != 0: fail.append("%d bytes answered to unauthenticated input" % j["answered_bytes"])
lost_most = min(j["bait_runs"] * (math.floor(j["wall_seconds"] / 0.005) + 1),
                4 + math.floor(j["wall_seconds"] / 0.002))
if j["lost_received"] > lost_most: fail.append("%d LOSTs, allowance %d" % (j["lost_received"], lost_most))
if j["lost_received"] == 0: fail.append("the bait drew no LOST: the forwarding went untested")
if j["sender_lost_honoured"] != 0: fail.append("the sender honoured %d LOSTs" % j["sender_lost_honoured"])
if j["x25519_caused"] > j["x25519_bound"]: fail.append("%d X25519 caused, bound %d" % (j["x25519_caused"], j["x25519_bound"]))
if j["records_stored"] != 200000: fail.append("the sender saw %d records stored" % j["records_stored"])
print("hostile: 0 bytes answered, %d LOSTs (allowance %d), %d X25519 caused (bound %d)"
      % (j["lost_received"], lost_most, j["x25519_caused"], j["x25519_bound"]))
if fail: sys.exit("FAIL: " + "; ".join(fail))
PY
