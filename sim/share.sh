#!/bin/sh
# share.sh: the fairness goal of BRIEF §6 in the simulator, printed as a table.
#   One pure-link bulk link beside one TCP CUBIC flow (sim/scenarios/share_tcp.conf), its
#   controller CUBIC or BBR, and the baseline of two TCP CUBIC flows (share_tcp_tcp.conf):
#   50 Mbit/s bottleneck, drop-tail queue of one BDP, jitter 1 ms, RTT 20 and 100 ms, 60 s,
#   bytes counted from share_from (5 s).  The figure is the first flow's share of the bytes
#   delivered; the goal is 0.5 +- 0.125.
# Usage: sim/share.sh [SEED...]   (default seeds 1 2 3; needs build/pure-link-sim: `make`, or SIM=path)
#   DURATION=240s FROM=60s sim/share.sh   a longer run and window (at RTT 100 ms CUBIC
#   takes tens of seconds to converge, so 60 s runs vary from seed to seed)
set -eu
cd "$(dirname "$0")/.."
sim="${SIM:-build/pure-link-sim}"
[ -x "$sim" ] || { echo "share.sh: build $sim first (make)" >&2; exit 1; }
seeds="${*:-1 2 3}"
duration="${DURATION:-60s}"
from="${FROM:-5s}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The link's controller is a node key, so each variant is its own copy of the scenario.
for cc in cubic bbr; do
  sed "s/^congestion: .*/congestion: $cc/" sim/scenarios/share_tcp.conf > "$tmp/share_$cc.conf"
done
start=$(date +%s%N)
{
  for rtt in 20 100; do
    for case in cubic bbr tcp; do
      if [ "$case" = tcp ]; then conf=sim/scenarios/share_tcp_tcp.conf; else conf="$tmp/share_$case.conf"; fi
      for seed in $seeds; do
        printf '%s %s %s ' "$rtt" "$case" "$seed"
        # A controller the core does not accept yet makes the run stop at setup (exit 2).
        if out=$("$sim" "$conf" --json --seed "$seed" --set "path.delay: $((rtt / 2))ms" \
               --set "duration: $duration" --set "share_from: $from" 2>"$tmp/err"); then
          printf '%s\n' "$out" | tail -1
        elif [ -s "$tmp/err" ] && [ -z "$out" ]; then
          printf 'n/a %s\n' "$(head -1 "$tmp/err")"
        else
          printf '%s\n' "$out" | tail -1
        fi
      done
    done
  done
} | python3 -c '
import json, sys
seed_tcp = {20: "0.53 / 0.50", 100: "0.47 / 0.49"}
names = {"cubic": "pure-link CUBIC", "bbr": "pure-link BBR", "tcp": "TCP CUBIC"}
rows = {}
for line in sys.stdin:
    rtt, case, seed, rest = line.rstrip("\n").split(" ", 3)
    rows.setdefault((int(rtt), case), []).append((seed, rest))
print("Share next to one TCP CUBIC flow: 50 Mbit/s, drop-tail queue of one BDP, jitter 1 ms, %s," % sys.argv[2])
print("bytes from %s on; the first flow'"'"'s share, mean and range over seeds %s; goal 0.375 .. 0.625" % (sys.argv[3], sys.argv[1]))
print("  RTT ms  first flow        second flow   share   min    max    goal   seed (TCP vs TCP)")
for (rtt, case), runs in rows.items():
    shares, note = [], ""
    for seed, rest in runs:
        if rest.startswith("n/a"):
            note = rest
            continue
        d = json.loads(rest)
        if d["error"]:
            note = "seed %s: ERROR %s" % (seed, d["error"])
            continue
        s = d["share"]
        shares.append(s["links"][0] if s["links"] else s["tcp"][0])
    head = "  %6d  %-16s  %-12s" % (rtt, names[case], "TCP CUBIC")
    if not shares:
        why = note[4:].replace("pure-link-sim: ", "") if note.startswith("n/a") else note
        print("%s  n/a    (%s)" % (head, why))
        continue
    mean = sum(shares) / len(shares)
    ok = "ok" if all(0.375 <= x <= 0.625 for x in shares) else "--"
    extra = seed_tcp[rtt] if case == "tcp" else ""
    print("%s  %.3f   %.3f  %.3f  %s     %s%s" % (head, mean, min(shares), max(shares), ok, extra,
          ("  (" + note + ")") if note else ""))
print("seed (BRIEF §6): Pure 0.47-0.58 and ngtcp2 0.47-0.61 next to TCP CUBIC")
' "$seeds" "$duration" "$from"
echo "wall: $(( ($(date +%s%N) - start) / 1000000 )) ms"
