#!/bin/sh
# make demo, first part: a real receiver and sender of the `pure-link` tool on loopback,
# 100,000 records of 1 KiB through the POSIX shim and the durable store (fdatasync), with
# the sender's progress line and both summaries.  Everything lives in a temporary
# directory that is removed at the end.
set -eu
P=build/pure-link
dir=$(mktemp -d)
rpid=""
trap '[ -n "$rpid" ] && kill "$rpid" 2>/dev/null; rm -rf "$dir"' EXIT
rpub=$($P keygen "$dir/receiver.key")
spub=$($P keygen "$dir/sender.key")
printf 'peer %s *\ninput demo 1 %s/store\nmemo %s/memo\n' "$spub" "$dir" "$dir" > "$dir/recv.conf"
echo "== pure-link on loopback: 100,000 records of 1 KiB, each stored durably (fdatasync) before it counts"
echo "   receiver: $P recv --key receiver.key --config recv.conf --listen 127.0.0.1:0"
$P recv --key "$dir/receiver.key" --config "$dir/recv.conf" --listen 127.0.0.1:0 --no-progress 2> "$dir/recv.log" &
rpid=$!
i=0
until grep -qs 'listening on' "$dir/recv.log"; do
    i=$((i + 1)); [ $i -le 100 ] || { cat "$dir/recv.log"; exit 1; }; sleep 0.05
done
port=$(sed -n 's/.*listening on .*:\([0-9]*\)$/\1/p' "$dir/recv.log")
echo "   sender:   $P send --key sender.key --to 127.0.0.1:$port --peer $(echo $rpub | cut -c1-12)... --input demo --shape 1 --generate 100000 --size 1KiB"
$P send --key "$dir/sender.key" --to 127.0.0.1:$port --peer "$rpub" --input demo --shape 1 \
    --generate 100000 --size 1KiB --deadline 60s --progress
kill -INT $rpid
wait $rpid || true
rpid=""
sed 's/^/   /' "$dir/recv.log"
echo "   store: $(ls "$dir/store" | tr '\n' ' ')($(du -sh "$dir/store" | cut -f1))"
echo
