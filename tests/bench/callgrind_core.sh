#!/bin/sh
# Instructions of core work per full data packet and side, counted by callgrind on a fixed
# run of bench_core (the same run every time, so the count does not move with the machine's
# load the way the time does).  make bench runs it; valgrind comes from scripts/deps.sh bench.
# Usage: tests/bench/callgrind_core.sh [BUILD_DIR] [PACKETS]
set -eu
b=${1:-${B:-build}}
packets=${2:-50000}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
echo "core instructions per full data packet (callgrind, bench_core $packets packets, AEAD a copy):"
for side in sender receiver; do
    valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$t/$side.out" \
        "$b/bench/bench_core" "$packets" "$side" > "$t/$side.txt" 2> "$t/$side.err"
    ir=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$t/$side.out")
    sent=$(sed -n 's/^ *\([0-9]*\) data packets.*/\1/p' "$t/$side.txt")
    [ -n "$ir" ] && [ -n "$sent" ] || { echo "callgrind_core: no count for $side"; cat "$t/$side.err"; exit 1; }
    printf '  %-8s %6d instructions  (%s in %s data packets)\n' "$side" $((ir / sent)) "$ir" "$sent"
done
