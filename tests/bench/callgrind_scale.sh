#!/bin/sh
# Instructions of the receiver's work as wired peers and live runs grow: per data packet of
# one bulk run, per quiet run brought up, per pure_link_memo_written and per deadline query;
# first with keys wired and no other run, then with each key holding a live run (the memo
# on, each run's epoch written and made durable).  Counted by callgrind on a fixed run of
# bench_scale (tests/bench/bench_scale.c), the same every time, so the count does not move
# with the machine's load.  The ratios are to one run: flat cost in live runs keeps the
# data packet's within 1.2 and a run's bring-up near 1 (N runs cost N, not N^2).
# make bench runs it.
# Usage: tests/bench/callgrind_scale.sh [BUILD_DIR] [PACKETS] [COUNTS]
set -eu
b=${1:-${B:-build}}
packets=${2:-3000}
counts=${3:-1 100 1000 10000}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

# count MODE PEERS: runs bench_scale under callgrind; sets traffic, setup, memo (the
# inclusive count of pure_link_memo_written in the setup), deadline, sent, queries, writes.
count() {
    out="$t/$1-$2"
    valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no --callgrind-out-file="$out" \
        "$b/bench/bench_scale" "$2" "$1" "$packets" > "$out.txt" 2> "$out.err"
    setup=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$out.1")
    traffic=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$out.2")
    deadline=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$out.3")
    line='^\([0-9]*\) data packets, \([0-9]*\) deadline queries, .* \([0-9]*\) memo writes in the setup$'
    sent=$(sed -n "s/$line/\\1/p" "$out.txt")
    queries=$(sed -n "s/$line/\\2/p" "$out.txt")
    writes=$(sed -n "s/$line/\\3/p" "$out.txt")
    memo=$(callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$out.1" |
        sed -n 's/^ *\([0-9,]*\) .*:pure_link_memo_written .*/\1/p' | tr -d , | head -n 1)
    [ -n "$traffic" ] && [ -n "$setup" ] && [ -n "$deadline" ] && [ -n "$sent" ] && [ -n "$queries" ] ||
        { echo "callgrind_scale: no count for $2 $1"; cat "$out.err"; exit 1; }
    memo=${memo:-0}
}

echo "receiver instructions (callgrind, bench_scale $packets packets, AEAD a copy):"
echo "  keys wired, no other run:"
for peers in 1 1000 10000; do
    count wired "$peers"
    printf '    %5d peers  %8d per data packet  %8d per deadline query\n' \
        "$peers" $((traffic / sent)) $((deadline / queries))
done
echo "  each peer with a live run (one bulk run beside quiet ones, memo on):"
printf '    %5s  %15s %7s  %14s %7s  %16s  %14s\n' runs "per data packet" "÷ 1" "per run up" "÷ 1" \
    "per memo_written" "per deadline"
one_packet=0 one_up=0
for runs in $counts; do
    count memo "$runs"
    per_packet=$((traffic / sent))
    up=0 per_memo=0
    [ "$runs" -gt 1 ] && up=$(((setup - memo) / (runs - 1)))
    [ "$writes" -gt 0 ] && per_memo=$((memo / writes))
    [ "$one_packet" -eq 0 ] && one_packet=$per_packet
    [ "$one_up" -eq 0 ] && one_up=$up
    packet_ratio=$(awk "BEGIN { printf \"%.2f\", $per_packet / $one_packet }")
    up_ratio=-
    [ "$one_up" -gt 0 ] && up_ratio=$(awk "BEGIN { printf \"%.2f\", $up / $one_up }")
    printf '    %5d  %15d %7s  %14d %7s  %16d  %14d\n' "$runs" "$per_packet" "$packet_ratio" "$up" "$up_ratio" \
        "$per_memo" $((deadline / queries))
done
echo "  (÷ 1: to the first row that has the figure; goal: per data packet within 1.20 at 10,000 runs, per run up flat)"
