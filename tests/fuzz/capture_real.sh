#!/bin/sh
# A real capture for the fuzz corpora (make fuzz-corpus): pure-link recv and send on
# loopback over real sockets (the POSIX backend, no GSO, so that the capture holds one
# datagram a packet), records of mixed sizes, the receiver killed and restarted once (new
# run keys, a STREAM_OPEN with a stored mark), dumpcap on lo; then the packets opened with
# the tool's key log and written in clear (tools/capture_plain.py) to OUT.
# Usage: tests/fuzz/capture_real.sh B OUT.pcap   (needs dumpcap and the right to capture)
set -eu
b="$1"; out="$2"
P="$b/pure-link"
work=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
RP=$($P keygen "$work/r.key"); SP=$($P keygen "$work/s.key")
printf 'peer %s *\ninput logs 1 %s\nmemo %s\n' "$SP" "$work/store" "$work/memo" >"$work/r.conf"
recv() {
  $P recv --io posix --no-gso --no-gro --key "$work/r.key" --config "$work/r.conf" --listen "127.0.0.1:$1" \
    --no-progress --keylog "$work/recv-$2.keys" 2>"$work/recv-$2.log" &
  rpid=$!; pids="$pids $rpid"
  i=0
  until grep -q 'listening on' "$work/recv-$2.log"; do i=$((i + 1)); [ $i -le 100 ] || exit 1; sleep 0.05; done
}
recv 0 1
port=$(sed -n 's/.*listening on .*:\([0-9]*\)$/\1/p' "$work/recv-1.log" | head -1)
dumpcap -q -P -i lo -f "udp port $port" -w "$work/wire.pcap" 2>"$work/dumpcap.log" &
cpid=$!; pids="$pids $cpid"
i=0
until grep -q 'File:' "$work/dumpcap.log" 2>/dev/null || [ -s "$work/wire.pcap" ]; do i=$((i + 1)); [ $i -le 100 ] || exit 1; sleep 0.05; done
sleep 0.2
timeout 60 $P send --io posix --no-gso --key "$work/s.key" --to "127.0.0.1:$port" --peer "$RP" --input logs --shape 1 \
  --generate 3000 --size 1500 --deadline 50s --no-progress --keylog "$work/send.keys" 2>"$work/send.log" &
spid=$!; pids="$pids $spid"
sleep 0.3
kill -9 $rpid; wait $rpid 2>/dev/null || true
recv "$port" 2
wait $spid
kill -INT $rpid; wait $rpid 2>/dev/null || true
sleep 0.3
kill -INT $cpid; wait $cpid 2>/dev/null || true
cat "$work"/*.keys >"$work/all.keys"
python3 tools/capture_plain.py "$work/wire.pcap" "$work/all.keys" "$out"
