#!/bin/sh
# Issue 4: on every combination of RTT 20/100 ms, loss 0/1/5 %, jitter 0/3 ms (the M6 bulk
# grid, 30 s of virtual time each, and the paced cases) every record handed over is handed
# over exactly once, in order, and stored; the run ends without an error.
set -eu
sim=${B:-build}/pure-link-sim
fail=0
for rtt in 20 100; do
  for loss in 0 1 5; do
    for jitter in 0 3; do
      for conf in m6_bulk m6_paced; do
        [ "$conf" = m6_paced ] && [ "$jitter" = 3 ] && continue
        line=$("$sim" sim/scenarios/$conf.conf --json --set "path.delay: $((rtt / 2))ms" \
                 --set "path.loss: ${loss}%" --set "path.jitter: ${jitter}ms" | tail -1)
        if ! echo "$line" | python3 -c '
import json, sys
d = json.load(sys.stdin)
ok = d["error"] is None and d["duplicates_delivered"] == 0 and d["out_of_order"] == 0 \
     and d["records_stored"] > 0 and d["records_stored"] <= d["records_delivered"]
print("%-4s %-8s rtt %3s loss %s%% jitter %s ms: %7d stored, %d duplicates, %d out of order, %.2f Mbit/s" % (
    "ok" if ok else "FAIL", sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], d["records_stored"],
    d["duplicates_delivered"], d["out_of_order"], d["goodput_mbit"]))
sys.exit(0 if ok else 1)' "$conf" "$rtt" "$loss" "$jitter"; then fail=1; fi
      done
    done
  done
done
exit $fail
