#!/bin/sh
# m6.sh: the M6 grid of BRIEF §6 in the simulator, printed as a table beside the goals.
#   bulk:  50 Mbit/s bottleneck, RTT 20 / 100 ms, loss 0 / 1 / 5 %, jitter 0 / 3 ms, 30 s each
#   paced: 50 records/s, RTT 20 / 100 ms, loss 1 / 5 %: latency write -> hand-over
# Usage: sim/m6.sh [SEED] [CONGESTION]   (CONGESTION: cubic, newreno or bbr; default: the
#        core's default)   (needs build/pure-link-sim: `make`)
set -eu
cd "$(dirname "$0")/.."
sim=build/pure-link-sim
seed="${1:-1}"
cc="${2:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for conf in m6_bulk m6_paced; do
  if [ -n "$cc" ]; then
    sed "s/^node: sender\$/node: sender\ncongestion: $cc/" sim/scenarios/$conf.conf > "$tmp/$conf.conf"
  else
    cp sim/scenarios/$conf.conf "$tmp/$conf.conf"
  fi
done
[ -x "$sim" ] || { echo "m6.sh: build $sim first (make)" >&2; exit 1; }
start=$(date +%s%N)
{
  for rtt in 20 100; do
    for loss in 0 1 5; do
      for jitter in 0 3; do
        printf 'bulk %s %s %s ' "$rtt" "$loss" "$jitter"
        "$sim" "$tmp/m6_bulk.conf" --json --seed "$seed" --set "path.delay: $((rtt / 2))ms" \
          --set "path.loss: ${loss}%" --set "path.jitter: ${jitter}ms" | tail -1
      done
    done
  done
  for rtt in 20 100; do
    for loss in 1 5; do
      printf 'paced %s %s 0 ' "$rtt" "$loss"
      "$sim" "$tmp/m6_paced.conf" --json --seed "$seed" --set "path.delay: $((rtt / 2))ms" \
        --set "path.loss: ${loss}%" | tail -1
    done
  done
} | python3 -c '
import json, sys
goal_bulk = {(20,0,0):47.5,(20,0,3):47.5,(20,1,0):7.6,(20,1,3):26.2,(20,5,0):3.3,(20,5,3):9.3,
             (100,0,0):47.5,(100,0,3):47.5,(100,1,0):1.7,(100,1,3):2.5,(100,5,0):0.7,(100,5,3):1.2}
goal_p99 = {(20,1):40.1,(20,5):61.7,(100,1):130.1,(100,5):292.0}
print("M6 bulk: goodput Mbit/s of record bytes (50 Mbit/s bottleneck, 30 s virtual; congestion: %s)" % (sys.argv[1] or "default"))
print("  RTT ms  loss %  jitter ms   goodput    goal  lost   retx   wall s")
paced = []
for line in sys.stdin:
    kind, rtt, loss, jit, js = line.split(" ", 4)
    d = json.loads(js)
    key = (int(rtt), int(loss), int(jit))
    if kind == "paced":
        paced.append((key, d)); continue
    g = goal_bulk[key]
    mark = "ok" if d["goodput_mbit"] >= g else "  "
    err = "  ERROR: " + d["error"] if d["error"] else ""
    print("  %6d  %6d  %9d  %8.2f  %6.1f %s %6d %6d  %6.2f%s" % (key[0], key[1], key[2], d["goodput_mbit"], g, mark,
          d["packets_lost"], d["packets_retransmitted"], d["wall_s"], err))
print("M6 paced: 50 records/s, latency write -> hand-over, ms")
print("  RTT ms  loss %     p50     p99    max   p99 goal")
for key, d in paced:
    g = goal_p99[(key[0], key[1])]
    p99 = d.get("latency_ms_p99", float("nan"))
    mark = "ok" if p99 <= g else "  "
    err = "  ERROR: " + d["error"] if d["error"] else ""
    print("  %6d  %6d  %6.1f  %6.1f  %6.1f  %8.1f %s%s" % (key[0], key[1], d.get("latency_ms_p50", 0), p99,
          d.get("latency_ms_max", 0), g, mark, err))
' "$cc"
echo "wall: $(( ($(date +%s%N) - start) / 1000000 )) ms for 16 runs"
