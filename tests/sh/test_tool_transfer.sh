#!/bin/sh
# The tool end to end on loopback over each socket backend (--io posix, --io uring) and the
# real store:
#  1. 20,000 records stored exactly once, contents checked from the store's files;
#  2. the receiver killed with SIGKILL mid-transfer and restarted with its memo: the
#     sender completes, every record is in the store once, and the sender never heard LOST.
set -u
. tests/sh/tool_lib.sh
make_keys
for io in posix uring; do
echo "== --io $io"
rm -rf "$work/store" "$work/memo" "$work"/*.log "$work"/*.json  # the last backend's, not to be read again
printf 'peer %s *\ninput logs 1 %s\nmemo %s\n' "$SP" "$work/store" "$work/memo" > "$work/r.conf"

# 1. exactly once, bytes checked
start_recv recv1 --config "$work/r.conf" --listen 127.0.0.1:0 --stats="$work/recv1.json"
timeout 60 $P send --io $io --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 \
    --generate 20000 --size 1500 --deadline 50s --no-progress --stats="$work/send1.json" 2> "$work/send1.log" ||
    fail "send 1 exited $?"
stop_recv
[ "$rstatus" = 0 ] || fail "receiver exit $rstatus"
python3 tests/sh/plr_check.py "$work/store" 20000 1500 || fail "store check 1"
[ "$(json "$work/send1.json" "j['records_stored']")" = 20000 ] || fail "sender did not see 20000 stored"
[ "$(json "$work/recv1.json" "j['store']['records_durable']")" = 20000 ] || fail "receiver durable count"
grep -q 'stopped: 20000 records' "$work/recv1.log" || fail "exit statistics line"
echo "1. 20000 records stored once, bytes as sent"

# 2. kill -9 in the middle, restart from the memo
rm -rf "$work/store" "$work/memo"
start_recv recv2 --config "$work/r.conf" --listen 127.0.0.1:0
timeout 60 $P send --io $io --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 \
    --generate 150000 --size 1500 --deadline 50s --no-progress --stats="$work/send2.json" 2> "$work/send2.log" &
spid=$!
pids="$pids $spid"
i=0
while [ "$(cat "$work"/store/*.plr 2>/dev/null | wc -c)" -lt 20000000 ]; do
    i=$((i + 1)); [ $i -gt 400 ] && fail "no records arrived"
    sleep 0.02
done
kill -9 $rpid
wait $rpid 2>/dev/null
before=$(cat "$work"/store/*.plr | wc -c)
sleep 0.3
start_recv recv3 --config "$work/r.conf" --listen 127.0.0.1:$port --stats="$work/recv3.json"
wait $spid || fail "send 2 exited $?"
stop_recv
echo "killed at $before bytes of record files; restarted"
python3 tests/sh/plr_check.py "$work/store" 150000 1500 || fail "store check after kill -9"
[ "$(json "$work/send2.json" "j['records_stored']")" = 150000 ] || fail "sender did not see 150000 stored"
[ "$(json "$work/send2.json" "j['sender']['lost_notices_received']")" = 0 ] || fail "the sender heard LOST"
[ "$(json "$work/recv3.json" "j['endpoint']['memo_runs_restored']")" -ge 1 ] || fail "the memo restored no run"
echo "2. kill -9 and restart: 150000 records stored once, no LOST"
done
