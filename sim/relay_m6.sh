#!/bin/sh
# relay_m6.sh: the M6 bulk rows at RTT 20 ms through `pure-link-sim relay` with the real
# pure-link tool (its send and recv, the POSIX sockets and the real store), beside the
# virtual-time figures of the same path model.  Each row: COUNT records of 1 KiB
# (--generate), goodput = record bytes stored x 8 / the sender's wall time.
# Usage: sim/relay_m6.sh [COUNT]   (default 40000, about 7 s at 47 Mbit/s; PURE_LINK=path of the
#        tool, default build/pure-link)
set -eu
cd "$(dirname "$0")/.."
P=${PURE_LINK:-${B:-build}/pure-link}
S=${B:-build}/pure-link-sim
count=${1:-40000}
[ -x "$P" ] || { echo "relay_m6.sh: no pure-link tool at $P (set PURE_LINK)"; exit 0; }
w=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$w"' EXIT
RP=$($P keygen "$w/r.key")
SP=$($P keygen "$w/s.key")
ports=$(python3 -c '
import socket
ss = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')
rport=${ports% *}
lport=${ports#* }
echo "M6 bulk, RTT 20 ms, 50 Mbit/s, $count records of 1 KiB; relay (real time, the tool) beside virtual time (BBR)"
echo "  loss  jitter | relay Mbit/s  wall s  dropped loss/queue  reordered | virtual Mbit/s (30 s)"
for loss in 0 1 5; do
  for jitter in 0 3; do
    rm -rf "$w/store" "$w/memo"
    printf 'peer %s *\ninput sink 1 %s\nmemo %s\n' "$SP" "$w/store" "$w/memo" > "$w/r.conf"
    $P recv --key "$w/r.key" --no-progress --config "$w/r.conf" --listen 127.0.0.1:$rport 2> "$w/recv.log" &
    rpid=$!; pids="$pids $rpid"
    $S relay $lport $rport --duration 120s --set 'path.rate: 50Mbit' --set 'path.delay: 10ms' \
        --set "path.loss: $loss%" --set "path.jitter: ${jitter}ms" > "$w/relay.json" &
    xpid=$!; pids="$pids $xpid"
    i=0; while ! grep -q 'listening on' "$w/recv.log" 2>/dev/null && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.05; done
    sleep 0.2
    t0=$(date +%s%N)
    timeout 150 $P send --key "$w/s.key" --to 127.0.0.1:$lport --peer "$RP" --input sink --shape 1 \
        --generate "$count" --size 1KiB --deadline 120s --no-progress --stats="$w/send.json" 2> "$w/send.log" || true
    t1=$(date +%s%N)
    kill -INT $rpid; kill -TERM $xpid; wait $rpid 2>/dev/null || true; wait $xpid 2>/dev/null || true
    virt=$($S sim/scenarios/m6_bulk.conf --json --set 'path.delay: 10ms' --set "path.loss: $loss%" \
        --set "path.jitter: ${jitter}ms" | tail -1)
    python3 - "$w/send.json" "$w/relay.json" "$t0" "$t1" "$loss" "$jitter" "$virt" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
r = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
wall = (int(sys.argv[4]) - int(sys.argv[3])) / 1e9
up = r["paths"][0]
v = json.loads(sys.argv[7])
print("  %3s %%  %4s ms | %12.2f  %6.2f  %8d/%-8d  %9d | %8.2f" % (sys.argv[5], sys.argv[6], s["records_stored"] * 1024 * 8 / wall / 1e6,
      wall, up["dropped_loss"], up["dropped_queue"], up["reordered"], v["goodput_mbit"]))
PY
  done
done
