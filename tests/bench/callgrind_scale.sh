#!/bin/sh
# Instructions of the receiver's work per data packet, and per deadline query, with 1, 1,000
# and 10,000 wired peers: first keys wired and no other run, then each key with a live run.
# Counted by callgrind on a fixed run of bench_scale (tests/bench/bench_scale.c), the same
# every time, so the count does not move with the machine's load.  make bench runs it.
# Usage: tests/bench/callgrind_scale.sh [BUILD_DIR] [PACKETS]
set -eu
b=${1:-${B:-build}}
packets=${2:-3000}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
echo "receiver instructions per data packet and per deadline query (callgrind, bench_scale, AEAD a copy):"
for mode in wired runs; do
    for peers in 1 1000 10000; do
        out="$t/$mode-$peers"
        valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no --callgrind-out-file="$out" \
            "$b/bench/bench_scale" "$peers" "$mode" "$packets" > "$out.txt" 2> "$out.err"
        traffic=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$out.1")
        deadline=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$out.2")
        sent=$(sed -n 's/^\([0-9]*\) data packets, \([0-9]*\) deadline queries.*/\1/p' "$out.txt")
        queries=$(sed -n 's/^\([0-9]*\) data packets, \([0-9]*\) deadline queries.*/\2/p' "$out.txt")
        [ -n "$traffic" ] && [ -n "$deadline" ] && [ -n "$sent" ] && [ -n "$queries" ] ||
            { echo "callgrind_scale: no count for $peers $mode"; cat "$out.err"; exit 1; }
        if [ "$mode" = wired ]; then what="keys wired, no other run"; else what="each with a live run"; fi
        printf '  %5d peers (%-24s) %8d per data packet  %8d per deadline query\n' \
            "$peers" "$what" $((traffic / sent)) $((deadline / queries))
    done
done
