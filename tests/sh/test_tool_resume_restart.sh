#!/bin/sh
# send --resume, a cut-off run across a restart of the receiver (spec/protocol.md §4.3): a
# sender paused by SIGSTOP mid-transfer, a second one that resumes the source and sends it
# to the end, the receiver killed with -9 and started again on its store and memo, then the
# paused sender let go.  Its run was cut off by the second one and stays cut off: every
# record of the input is in the store once (plr_check --resumed), none of it twice.
set -u
. tests/sh/tool_lib.sh
make_keys
N=300000 Z=200
resume_recv
# The first run reads gated records (tool_lib.sh): it cannot have sent all of them before
# it is paused, however loaded the machine.
echo 20000 > "$work/gate"
resume_send_gated "$work/s1.log"; apid=$spid
# Paused as soon as the store holds its first records (the file is named at the first commit).
i=0; until [ "$(stored_now)" -gt 0 ]; do i=$((i + 1)); [ $i -gt 1000 ] && fail "nothing stored in 10 s"; sleep 0.01; done
kill -STOP $apid
a=$(stored_now)
[ "$a" -lt $N ] || fail "the first run stored all $N before it was paused"
(resume_send --deadline 60s) 2> "$work/s2.log" || fail "the second run exited $?: $(tail -3 "$work/s2.log")"
python3 tests/sh/plr_check.py "$work/logs" $N $Z --resumed > "$work/plr.txt" || fail "store: $(cat "$work/plr.txt")"
kill -9 $rpid; wait $rpid 2>/dev/null
start_recv r2 --config "$work/r.conf" --listen 127.0.0.1:$port
kill -CONT $apid
# The paused run comes back (its epoch from the memo, or after LOST) and binds again with
# the records it holds: 4 s of trying, more than enough to append them when it was not cut.
end=$(($(date +%s) + 4)); while [ "$(date +%s)" -lt $end ] && [ "$(stored_now)" -le $N ]; do sleep 0.1; done
kill -9 $apid; wait $apid 2>/dev/null
b=$(stored_now)
[ "$b" = $N ] || fail "$b frames in the store for $N records: the cut-off run appended again after the restart"
python3 tests/sh/plr_check.py "$work/logs" $N $Z --resumed > "$work/plr.txt" || fail "store: $(cat "$work/plr.txt")"
stop_recv
echo "resume restart ok: first run paused at $a of $N, cut off across the receiver's restart; $(cat "$work/plr.txt")"
