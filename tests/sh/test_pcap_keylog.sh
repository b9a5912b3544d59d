#!/bin/sh
# Issue 3: a simulated transfer written as pcap with a key log is read back and every packet
# is opened by tests/interop/pcap_open.py — a decoder written from spec/ alone.  Two runs:
# the lossy demo, and one where both ends crash and restart (new runs, LOST, new epochs).
set -eu
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for conf in demo crash_restart; do
    ${B:-build}/pure-link-sim sim/scenarios/$conf.conf --quiet --set 'duration: 3s' \
        --pcap "$out/$conf.pcap" --keylog "$out/$conf.keys" > "$out/$conf.log" 2>&1
    test -s "$out/$conf.pcap" && test -s "$out/$conf.keys"
    python3 tests/interop/pcap_open.py --pcap "$out/$conf.pcap" --keylog "$out/$conf.keys" --json > "$out/$conf.json" || {
        tail -20 "$out/$conf.json"; exit 1; }
    tail -1 "$out/$conf.json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("%s: %d packets, %d opened, %d failed, by epoch %s" % (sys.argv[1], d["packets"], d["opened"], d["failed"], d["by_epoch"]))
assert d["packets"] > 100 and d["opened"] == d["packets"] and d["failed"] == 0' "$conf"
done
if command -v tcpdump >/dev/null 2>&1; then
    tcpdump -nn -r "$out/demo.pcap" 2>/dev/null | head -2
fi
