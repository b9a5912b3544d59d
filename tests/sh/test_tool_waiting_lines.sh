#!/bin/sh
# A sender says "no answer ... the path or the receiver is down" only when packets it sent
# went unanswered, and a resuming sender that heard the receiver but not yet its answer to
# the ask says it waits for that answer:
#  1. refused (no such input) until --deadline: between its trials, 1, 2 and 4 s apart, it
#     sends nothing and awaits nothing, so no line about the path (before, each wait longer
#     than 1.5 s logged "no answer from ... (0 of 10 records stored): the path or the
#     receiver is down" and "answers ... again" at the next trial: 3 of each in 8 s);
#  2. send --resume refused the same way, then the receiver paused (SIGSTOP) so that its
#     trial goes unanswered: one line "waiting for the receiver's answer to resume source
#     'gen'", not "no answer ... (0 of 0 records stored)"; with the receiver let go and the
#     input added (SIGHUP), it resumes and stores every record once.
set -u
. tests/sh/tool_lib.sh
make_keys
conf="$work/r.conf"
printf 'peer %s *\ninput other 1 %s/other\nmemo %s/memo\n' "$SP" "$work" "$work" > "$conf"
start_recv r --config "$conf" --listen 127.0.0.1:0
sender() { $P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 --generate 10 \
    --size 100 --no-progress "$@"; }
path_lines() { grep -E "no answer from|nothing came back|answers from" "$1"; }

# 1. Refused until the deadline: trials 1, 2 and 4 s apart, no line about the path.
sender --deadline 8s 2> "$work/s1.log"; st=$?
[ $st = 4 ] || fail "the refused sender exited $st, not 4"
grep -q "the receiver refused the stream: no such input" "$work/s1.log" || fail "no refusal line"
path_lines "$work/s1.log" > "$work/lines1" && fail "lines about the path while refused: $(cat "$work/lines1")"

# 2. Resuming, refused, then its trial unanswered.
sender --source gen --resume --deadline 60s 2> "$work/s2.log" & spid=$!; pids="$pids $spid"
i=0; until grep -q "refused the stream: no such input" "$work/s2.log"; do
    i=$((i + 1)); [ $i -gt 200 ] && fail "the resuming sender was not refused in 10 s"; sleep 0.05
done
kill -STOP $rpid
i=0; until grep -q "waiting for the receiver's answer" "$work/s2.log"; do
    i=$((i + 1)); [ $i -gt 200 ] && { kill -CONT $rpid; fail "no waiting line 10 s after the receiver paused"; }
    sleep 0.05
done
grep -q "waiting for the receiver's answer to resume source 'gen' for [0-9.]* s (it answered the handshake; it answers once its records of the source are durable: a busy disk, or another sender still appending to it); still trying" \
    "$work/s2.log" || fail "the waiting line: $(grep waiting "$work/s2.log")"
printf 'peer %s *\ninput other 1 %s/other\ninput logs 1 %s/logs\nmemo %s/memo\n' "$SP" "$work" "$work" "$work" > "$conf"
kill -CONT $rpid
kill -HUP $rpid
wait $spid || fail "the resuming sender exited $?: $(cat "$work/s2.log")"
grep -q "resuming source 'gen' after record 0" "$work/s2.log" || fail "no resuming line"
path_lines "$work/s2.log" > "$work/lines2" && fail "lines about the path while resuming: $(cat "$work/lines2")"
[ "$(grep -c "waiting for the receiver's answer" "$work/s2.log")" = 1 ] || fail "more than one waiting line"
stop_recv
python3 tests/sh/plr_check.py "$work/logs" 10 100 > "$work/plr.txt" || fail "store: $(cat "$work/plr.txt")"
echo "ok: $(grep -c refused "$work/s1.log") refusal lines and none about the path in 8 s; resuming: $(grep -o "waiting for the receiver's answer[^(]*" "$work/s2.log"); $(cat "$work/plr.txt")"
