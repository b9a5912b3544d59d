#!/bin/sh
# One receiver per store directory and per memo: two that shared them appended to one
# stream file each at its own end and lost records they had claimed stored.
#  1. a second recv on the same config fails at start (exit 1) in one line that names the
#     process holding the store directory's lock;
#  2. one with its own directory but the same memo fails the same way, naming the memo;
#  3. after the first is killed (-9) the lock is free: the second starts, and a transfer
#     to it is stored whole.
set -u
. tests/sh/tool_lib.sh
make_keys
printf 'peer %s *\ninput logs 1 %s\nmemo %s\n' "$SP" "$work/store" "$work/memo" > "$work/a.conf"
printf 'peer %s *\ninput logs 1 %s\nmemo %s\n' "$SP" "$work/store2" "$work/memo" > "$work/b.conf"
start_recv a --config "$work/a.conf" --listen 127.0.0.1:0
apid=$rpid

# second CONF WHAT: a second receiver on CONF fails in one line naming $apid and WHAT.
second() {
    timeout -s KILL 10 $P recv --key "$work/r.key" --config "$1" --listen 127.0.0.1:0 --no-progress 2> "$work/err"
    got=$?
    [ "$got" = 1 ] || fail "a second receiver ($1) exited $got, want 1: $(cat "$work/err")"
    [ "$(wc -l < "$work/err")" = 1 ] || fail "a second receiver: want one line, got: $(cat "$work/err")"
    grep -q "$2.* is locked by process $apid: another receiver uses" "$work/err" ||
        fail "a second receiver: the line does not name $2 and process $apid: $(cat "$work/err")"
    echo "exit 1: $(cat "$work/err")"
}

# 1.
second "$work/a.conf" "store/pure-link.lock"
# 2.
second "$work/b.conf" "memo.lock"

# 3.
kill -9 $apid; wait $apid 2>/dev/null
start_recv b --config "$work/a.conf" --listen 127.0.0.1:0 --stats="$work/b.json"
timeout -s KILL 30 $P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 \
    --generate 2000 --size 100 --deadline 20s --no-progress 2> "$work/send.log" || fail "send: $(cat "$work/send.log")"
stop_recv
[ "$rstatus" = 0 ] || fail "receiver exit $rstatus"
python3 tests/sh/plr_check.py "$work/store" 2000 100 > /dev/null || fail "store check"
echo "3. after kill -9 of the holder: a new receiver starts and stores 2000 records"
