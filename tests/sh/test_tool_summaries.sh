#!/bin/sh
# The summaries of send and recv count the same thing in the same units, and the progress
# line says what it shows:
#  1. for one transfer both summaries say the records' own bytes (not the store's frames)
#     in the same words, and recv counts runs;
#  2. the send progress line says "input open" (no bare '+') while stdin may bring more,
#     and shows the rate of the last second or two: during a stall of the input it falls
#     to 0 instead of showing an average since the start.
set -u
. tests/sh/tool_lib.sh
make_keys
printf 'peer %s *\ninput logs 1 %s\n' "$SP" "$work/store" > "$work/r.conf"
start_recv r --config "$work/r.conf" --listen 127.0.0.1:0 --progress
S="$P send --key $work/s.key --to 127.0.0.1:$port --peer $RP --input logs --shape 1 --deadline 30s --progress"

# 1.
timeout -s KILL 40 $S --generate 1000 --size 1KiB 2> "$work/s1.log" || fail "send: $(cat "$work/s1.log")"
# 2.
(for i in $(seq 1 20); do echo "line $i"; done; sleep 3; echo last) | timeout -s KILL 40 $S 2> "$work/s2.log" ||
    fail "send: $(cat "$work/s2.log")"
stop_recv
[ "$rstatus" = 0 ] || fail "recv exit $rstatus"

sent=$(grep -o '1000 records (1000.0 KiB of records) stored in' "$work/s1.log")
[ -n "$sent" ] || fail "send summary: $(tr '\r' '\n' < "$work/s1.log" | tail -2)"
# 1000 KiB and the 21 short lines (135 B in all): 1000.1 KiB
grep -q 'stopped: 1021 records (1000.1 KiB of records) stored of 2 runs' "$work/r.log" ||
    fail "recv summary: $(grep stopped "$work/r.log")"
echo "1. send: $sent; recv: $(grep -o 'stopped: [^;]*' "$work/r.log")"

tr '\r' '\n' < "$work/s2.log" > "$work/s2.lines"
grep -q 'stored .*+' "$work/s2.lines" && fail "a '+' in the progress line: $(grep '+' "$work/s2.lines" | head -1)"
grep -q 'stored 20/20 records (.*), input open' "$work/s2.lines" || fail "no 'input open' while stdin is open"
grep -q 'stored 20/20 records (.*), input open  0.0 kbit/s' "$work/s2.lines" ||
    fail "during the stall the rate is not 0: $(grep 'stored 20/20' "$work/s2.lines" | tail -1)"
echo "2. during the stall: $(grep 'stored 20/20' "$work/s2.lines" | tail -1)"
