#!/bin/sh
# send --resume: a sender stopped mid-transfer (SIGINT, kill -9) and started again on the
# same input goes on where the receiver stands, and a receiver killed with -9 and started
# again does too: every record of the input is in the store once (plr_check --resumed).
# An input shorter than what the receiver holds is refused in one line.
set -u
. tests/sh/tool_lib.sh
make_keys
N=300000 Z=200
resume_recv
send() { resume_sender "$@"; }
# wait_stored K: until the store holds at least K records (10 s at most).
wait_stored() {
    i=0; until [ "$(stored_now)" -ge "$1" ]; do i=$((i + 1)); [ $i -gt 500 ] && fail "store stuck at $(stored_now)"; sleep 0.02; done
}
# A sender stopped by SIGINT, then killed with -9, each mid-transfer, then run to the end.
echo 20000 > "$work/gate"
resume_send_gated "$work/s1.log"
wait_stored 5000
kill -INT $spid; wait $spid; st=$?
kill $gpid 2>/dev/null; wait $gpid 2>/dev/null
[ $st = 6 ] || fail "SIGINT: exit $st, want 6 (stopped)"
grep -q "stopped by a signal" "$work/s1.log" || fail "SIGINT: $(cat "$work/s1.log")"
a=$(stored_now)
[ "$a" -lt $N ] || fail "the first run stored all $N before it was stopped"
echo $((a + 20000)) > "$work/gate"
resume_send_gated "$work/s2.log"
wait_stored $((a + 5000))
kill -9 $spid; wait $spid 2>/dev/null
kill $gpid 2>/dev/null; wait $gpid 2>/dev/null
b=$(stored_now)
grep -q "resuming source 'gen' after record $a:" "$work/s2.log" || fail "second run: $(cat "$work/s2.log")"
# The receiver killed with -9 mid-transfer, started again on its store and memo; the rest
# of the input follows once it is back.
echo $((b + 20000)) > "$work/gate"
resume_send_gated "$work/s3.log"
wait_stored $((b + 5000))
kill -9 $rpid; wait $rpid 2>/dev/null
c=$(stored_now)
[ "$c" -lt $N ] || fail "the receiver was killed after every record was stored"
start_recv r2 --config "$work/r.conf" --listen 127.0.0.1:$port
echo $N > "$work/gate"
wait $spid || fail "the third run exited $? after the receiver's restart: $(tail -3 "$work/s3.log")"
wait $gpid || fail "the generator of the third run exited $?"
python3 tests/sh/plr_check.py "$work/logs" $N $Z --resumed > "$work/plr.txt" || fail "store: $(cat "$work/plr.txt")"
# Run again: nothing is left to send, nothing is stored twice.
(send --generate $N --size $Z --deadline 20s) 2> "$work/s4.log" || fail "a rerun of a finished input exited $?: $(cat "$work/s4.log")"
grep -q "after record $N:" "$work/s4.log" || fail "rerun: $(cat "$work/s4.log")"
python3 tests/sh/plr_check.py "$work/logs" $N $Z --resumed > "$work/plr.txt" || fail "after the rerun: $(cat "$work/plr.txt")"
# A shorter input than the receiver holds is refused in one line.
$P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --source gen --shape 1 \
    --generate 10 --size $Z --resume --no-progress --deadline 20s 2> "$work/s5.log"; st=$?
[ $st != 0 ] && grep -q "holds $N records of source 'gen', the input has only 10" "$work/s5.log" ||
    fail "a short input: exit $st: $(cat "$work/s5.log")"
stop_recv
echo "resume ok: SIGINT at $a, kill -9 of the sender at $b, kill -9 of the receiver at $c of $N; $(cat "$work/plr.txt")"
