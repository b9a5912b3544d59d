#!/bin/sh
# send --resume, a cut-off run across a restart of the receiver (spec/protocol.md §4.3): a
# sender paused by SIGSTOP mid-transfer, a second one that resumes the source and sends it
# to the end, the receiver killed with -9 and started again on its store and memo, then the
# paused sender let go.  Its run was cut off by the second one and stays cut off: it binds
# again, is refused with reason 5 (one line at the receiver) and exits 8 with its line, and
# every record of the input is in the store once (plr_check --resumed), none of it twice.
set -u
. tests/sh/tool_lib.sh
N=300000 Z=200
resume_taken_over
kill -9 $rpid; wait $rpid 2>/dev/null
start_recv r2 --config "$work/r.conf" --listen 127.0.0.1:$port
kill -CONT $apid
# The paused run comes back (its epoch from the memo, or after LOST) and binds again with
# the records it holds; the receiver refuses it (reason 5) and it stops.
cut_off_told
grep -q "source 'gen', input 'logs': run [0-9a-f]* is cut off" "$work/r2.log" || fail "the receiver's log has not its line"
b=$(stored_now)
[ "$b" = $N ] || fail "$b frames in the store for $N records: the cut-off run appended again after the restart"
python3 tests/sh/plr_check.py "$work/logs" $N $Z --resumed > "$work/plr.txt" || fail "store: $(cat "$work/plr.txt")"
stop_recv
echo "resume restart ok: first run paused at $a of $N, cut off across the receiver's restart and told (exit 8); $(cat "$work/plr.txt")"
