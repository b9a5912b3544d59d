#!/bin/sh
# send --resume, the run cut off is told so (spec/protocol.md §4.3, wire.md §6.13 reason 5):
# a sender paused by SIGSTOP mid-transfer, a second one that resumes the source and sends
# it to the end, then the paused one let go.  The receiver answers its next packets with
# REFUSED reason 5; it stops within a few seconds with its one line and exit 8, and every
# record of the input is in the store once (plr_check --resumed).  A sender without
# --resume on that source is refused so at once.  The receiver logs the takeover in one
# line naming both runs (before, it logged nothing of it).
set -u
. tests/sh/tool_lib.sh
N=300000 Z=200
resume_taken_over --stats "$work/s1.json"
t0=$(date +%s%N)
kill -CONT $apid
cut_off_told
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$(grep -c "cut off by the receiver" "$work/s1.log")" = 1 ] || fail "the cut-off line is not said once"
# A sender without --resume on the resumed source is refused (reason 5) at its first STREAM.
$P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --source gen --shape 1 --no-progress \
    --generate 10 --size $Z --deadline 20s 2> "$work/s3.log"
st=$?
[ $st = 8 ] || fail "a sender without --resume exited $st, not 8"
grep -q "took it over (it is sent with --resume: send it with --resume every time)" "$work/s3.log" ||
    fail "the sender without --resume has not its line"
[ "$(stored_now)" = $N ] || fail "$(stored_now) frames in the store for $N records"
python3 tests/sh/plr_check.py "$work/logs" $N $Z --resumed > "$work/plr.txt" || fail "store: $(cat "$work/plr.txt")"
# The receiver told the takeover in one line: the second run (the last record's) took the
# source over from the first (record 0's), at the place it resumed.
$P cat --json "$work/logs" | python3 -c 'import json, sys
r = [json.loads(l) for l in sys.stdin]
print(r[0]["run"], r[-1]["run"])' > "$work/runs" || fail "cat --json"
read first second < "$work/runs"
[ "$(grep -c "and took it over" "$work/r.log")" = 1 ] || fail "not one takeover line: $(grep "and took it over" "$work/r.log")"
grep -q "input logs ($work/logs): run $second of peer ${SP%????????????????????????????????????????????????}... resumed source 'gen' and took it over at record [0-9]*; run $first of the source is cut off: refused (REFUSED reason 5) if it sends again" \
    "$work/r.log" || fail "the takeover line, runs $first then $second: $(grep "and took it over" "$work/r.log")"
stop_recv
echo "resume cut-off ok: first run paused at $a of $N, told and gone ${ms} ms after it was let go, exit 8; $(cat "$work/plr.txt")"
