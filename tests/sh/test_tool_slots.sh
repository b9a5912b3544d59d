#!/bin/sh
# The receiver's run slots and pool shared between its peers, with the real tools on
# loopback (spec/protocol.md §4.2 "Stopped runs", §8): `pure-link recv` wired to two
# peers (its default shape: 8 run slots, a 20 MiB pool).  Peer a runs 70 short transfers,
# each its own run (so a's finished runs hold every slot), then starts a 16 MiB record and
# is killed (kill -9) in the middle of it, leaving a run that holds most of the pool and the
# long-record ticket.  Peer b then sends 1,000 records: it must find a slot and room, and
# store every record once.  The deadlines are generous bounds on a wait, not timings.
set -u
. tests/sh/tool_lib.sh
make_keys
AP=$SP
BP=$($P keygen "$work/b.key") || fail "keygen b.key"
printf 'peer %s *\npeer %s *\ninput a 1 %s\ninput big 1 %s\ninput b 1 %s\n' \
    "$AP" "$BP" "$work/store_a" "$work/store_big" "$work/store_b" > "$work/r.conf"
start_recv recv --config "$work/r.conf" --listen 127.0.0.1:0 --stats="$work/recv.json"

send() {  # send KEY INPUT COUNT SIZE LOG [more options]
    key=$1 input=$2 count=$3 size=$4 log=$5; shift 5
    timeout 60 $P send --key "$work/$key" --to 127.0.0.1:$port --peer "$RP" --input "$input" --shape 1 \
        --generate "$count" --size "$size" --no-progress "$@" 2> "$work/$log.log"
}

k=0
while [ $k -lt 70 ]; do
    send s.key a 1 100 a$k --deadline 20s || fail "a's transfer $k exited $?"
    k=$((k + 1))
done
echo "a: 70 short transfers stored (each its own run; 8 slots)"

# a's 16 MiB record, killed mid-record.  It goes through the project's relay at 100 Mbit/s,
# so the record takes more than 1.3 s to cross and a kill 0.4 s in always lands in its middle,
# however fast the loopback and the store are.
rport=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
${B:-build}/pure-link-sim relay "$rport" "$port" --seed 1 --duration 30s \
    --set 'path.rate: 100Mbit' --set 'path.delay: 1ms' > "$work/relay.json" 2> "$work/relay.log" &
relay=$!
pids="$pids $relay"
sleep 0.3
stored_big() { [ -n "$(ls "$work"/store_big/*.plr 2>/dev/null)" ] && [ "$(cat "$work"/store_big/*.plr | wc -c)" -ge 16777216 ]; }
port_recv=$port; port=$rport
send s.key big 1 16777216 big --deadline 20s &
spid=$!
pids="$pids $spid"
sleep 0.4
kill -9 $spid 2>/dev/null
wait $spid 2>/dev/null
kill $relay 2>/dev/null; wait $relay 2>/dev/null
port=$port_recv
sleep 0.2  # what the receiver had of it is committed by now
! stored_big || fail "a's 16 MiB record went through whole within 0.4 s at 100 Mbit/s: no crash mid-record"
crashed=0.4
echo "a: killed $crashed s into a 16 MiB record"

t0=$(date +%s%N)
send b.key b 1000 1000 b --deadline 30s --stats="$work/b.json" || fail "b's transfer exited $?"
t1=$(date +%s%N)
stop_recv
[ "$rstatus" = 0 ] || fail "receiver exit $rstatus"
python3 tests/sh/plr_check.py "$work/store_b" 1000 1000 || fail "b's store"
python3 tests/sh/plr_check.py "$work/store_a" 1 100 --runs 70 || fail "a's store"
[ "$(json "$work/b.json" "j['records_stored']")" = 1000 ] || fail "b did not hear 1000 stored"
echo "b: 1000 records stored once after a's crash, in $(( (t1 - t0) / 1000000 )) ms (a figure, not a check)"
