#!/bin/sh
# What each signal does (one table, shims/tool/tool_util.c; pure-link help says the same):
#  1. recv: SIGHUP and SIGUSR1 each log one line and stop nothing, SIGUSR2 and SIGPIPE are
#     ignored, while a transfer goes on; SIGTERM then ends it cleanly: the "stopped:" line,
#     --stats written, exit 0 (before, SIGHUP and SIGUSR1 killed it with neither);
#  2. send: SIGUSR1 logs how far it is and goes on; SIGHUP (its terminal hung up) stops it
#     like SIGINT: one line and exit 6.
set -u
. tests/sh/tool_lib.sh
make_keys
printf 'peer %s *\ninput logs 1 %s\n' "$SP" "$work/store" > "$work/r.conf"

# 1.
start_recv r --config "$work/r.conf" --listen 127.0.0.1:0 --stats="$work/recv.json"
# the records come slowly (a line every 20 ms) so that the signals land mid-transfer
(for i in $(seq 1 100); do echo "record $i"; sleep 0.02; done) |
    timeout -s KILL 60 $P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 \
        --deadline 50s --no-progress 2> "$work/send.log" &
spid=$!; pids="$pids $spid"
sleep 0.5
for sig in HUP USR1 USR2 PIPE; do
    kill -$sig $rpid; sleep 0.2
    kill -0 $rpid 2>/dev/null || fail "recv died of SIG$sig"
done
wait $spid || fail "send: $(cat "$work/send.log")"
grep -q "SIGUSR1: [0-9]* records .* stored of 1 runs" "$work/r.log" || fail "recv: no line for SIGUSR1"
grep -q "SIGHUP: " "$work/r.log" || fail "recv: no line for SIGHUP"
kill -TERM $rpid; wait $rpid; got=$?
[ "$got" = 0 ] || fail "recv exit $got on SIGTERM"
grep -q "stopped: 100 records" "$work/r.log" || fail "recv: no stopped line"
[ "$(json "$work/recv.json" "j['store']['records_durable']")" = 100 ] || fail "recv: --stats"
echo "1. recv: $(grep -c 'SIG' "$work/r.log") lines for SIGHUP and SIGUSR1, SIGUSR2 and SIGPIPE ignored; SIGTERM: exit 0"

# 2. (to a port nobody listens on: nothing is stored)
$P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 \
    --generate 10 --deadline 20s --no-progress 2> "$work/send2.log" &
spid=$!; pids="$pids $spid"
sleep 0.5
kill -USR1 $spid; sleep 0.2
kill -0 $spid 2>/dev/null || fail "send died of SIGUSR1"
kill -HUP $spid; wait $spid; got=$?
[ "$got" = 6 ] || fail "send exit $got on SIGHUP, want 6: $(cat "$work/send2.log")"
grep -q "SIGUSR1: 0 of 10 records" "$work/send2.log" || fail "send: no line for SIGUSR1: $(cat "$work/send2.log")"
grep -q "stopped by a signal" "$work/send2.log" || fail "send: no line for SIGHUP: $(cat "$work/send2.log")"
echo "2. send: SIGUSR1 a line, SIGHUP exit 6"
