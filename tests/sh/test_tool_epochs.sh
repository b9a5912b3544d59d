#!/bin/sh
# pure-link send --epoch-packets and --epoch-time on loopback against pure-link recv:
#  1. with --epoch-packets 100 a 5,000-record transfer turns several epochs on both sides
#     (the receiver's first 4 new keys come at once, its rate bucket's burst, so the count
#     does not hang on speed), and every record is stored once, bytes as sent; the same
#     transfer without the option stays in epoch 1;
#  2. with --epoch-time 100ms, records 300 ms apart each start in a later epoch;
#  3. values the tool refuses: exit 2 and one line naming the option, for these two and for
#     the sender's other interval, --pmtu-raise (1s..24h; test_netns_paths sees it honoured
#     after a black hole); the edges themselves are taken.
set -u
. tests/sh/tool_lib.sh
make_keys
printf 'peer %s *\ninput logs 1 %s\n' "$SP" "$work/store" > "$work/r.conf"

# send_to NAME ARGS...: pure-link send of 5,000 generated records to the receiver at $port.
send_to() {
    name=$1; shift
    timeout 60 $P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 \
        --deadline 50s --no-progress --stats="$work/$name.json" --keylog "$work/$name.keylog" "$@" \
        2> "$work/$name.log" || fail "send $name exited $?"
}

# 1. by packets
start_recv recv1 --config "$work/r.conf" --listen 127.0.0.1:0 --stats="$work/recv1.json"
send_to small --generate 5000 --size 1000 --epoch-packets 100
stop_recv
[ "$rstatus" = 0 ] || fail "receiver exit $rstatus"
python3 tests/sh/plr_check.py "$work/store" 5000 1000 || fail "store check"
[ "$(json "$work/small.json" "j['records_stored']")" = 5000 ] || fail "sender did not see 5000 stored"
[ "$(json "$work/recv1.json" "j['store']['records_durable']")" = 5000 ] || fail "receiver durable count"
tx=$(json "$work/small.json" "j['sender']['epochs']")
rx=$(json "$work/recv1.json" "j['endpoint']['epochs']")
logged=$(grep -c PURE_LINK_EPOCH "$work/small.keylog")
# (the sender counts epoch 0 as well: epochs 0..4 are 5; the receiver's run enters 1..4)
[ "$tx" -ge 5 ] || fail "--epoch-packets 100: the sender moved to $tx epochs, want at least 5"
[ "$rx" -ge 4 ] || fail "--epoch-packets 100: the receiver's run entered $rx epochs, want at least 4"
[ "$logged" -ge "$tx" ] || fail "the key log holds $logged epochs, the sender moved to $tx"
echo "1. --epoch-packets 100: 5000 records stored once; sender $tx epochs, receiver $rx, key log $logged"

rm -rf "$work/store"
start_recv recv2 --config "$work/r.conf" --listen 127.0.0.1:0 --stats="$work/recv2.json"
send_to plain --generate 5000 --size 1000
stop_recv
plain=$(json "$work/recv2.json" "j['endpoint']['epochs']")
[ "$plain" = 1 ] || fail "without --epoch-packets the receiver's run entered $plain epochs, want 1 (epoch 1 only)"
echo "   without it: the receiver's run entered $plain epoch, the sender moved to $(json "$work/plain.json" "j['sender']['epochs']")"

# 2. by time: 6 lines 300 ms apart (a loaded machine only spaces them further)
rm -rf "$work/store"
start_recv recv3 --config "$work/r.conf" --listen 127.0.0.1:0 --stats="$work/recv3.json"
for i in 1 2 3 4 5 6; do echo "line $i"; sleep 0.3; done |
    timeout 60 $P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 \
        --deadline 50s --no-progress --stats="$work/timed.json" --epoch-time 100ms 2> "$work/timed.log" ||
    fail "timed send exited $?"
stop_recv
[ "$(json "$work/timed.json" "j['records_stored']")" = 6 ] || fail "timed: the sender did not see 6 stored"
[ "$(json "$work/recv3.json" "j['store']['records_durable']")" = 6 ] || fail "timed: receiver durable count"
timed=$(json "$work/timed.json" "j['sender']['epochs']")
[ "$timed" -ge 5 ] || fail "--epoch-time 100ms over 1.8 s: the sender moved to $timed epochs, want at least 5"
echo "2. --epoch-time 100ms: 6 records stored, $timed epochs"

# 3. refused values
refuse() {
    pattern=$1; shift
    $P send --key "$work/s.key" --to 127.0.0.1:9 --peer "$RP" --input logs --generate 1 --deadline 1s \
        --no-progress "$@" > /dev/null 2> "$work/err"
    got=$?
    [ "$got" = 2 ] || fail "$* exited $got, want 2: $(cat "$work/err")"
    [ "$(wc -l < "$work/err")" = 1 ] && grep -q -- "$pattern" "$work/err" ||
        fail "$*: want one line with '$pattern', got: $(cat "$work/err")"
    echo "refused $*: $(cat "$work/err")"
}
refuse "want 1..8323072" --epoch-packets 0
refuse "want 1..8323072" --epoch-packets 8323073
refuse "want a whole number below 2^64" --epoch-packets 99999999999999999999999
refuse "want a whole number" --epoch-packets 10k
refuse "want a whole number" --epoch-packets -5
refuse "want 1ms..24h" --epoch-time 0s
refuse "want 1ms..24h" --epoch-time 999us
refuse "want 1ms..24h" --epoch-time 25h
refuse "want a duration" --epoch-time 5
refuse "want a duration" --epoch-time 2parsecs
refuse "needs a value" --epoch-time
refuse "want 1s..24h" --pmtu-raise 0s
refuse "want 1s..24h" --pmtu-raise 999ms
refuse "want 1s..24h" --pmtu-raise 86400000000001ns
refuse "want a duration" --pmtu-raise 600
refuse "needs a value" --pmtu-raise
# the edges themselves are taken: each run gets as far as --deadline with nobody listening (5)
for edge in "--epoch-packets 1" "--epoch-packets 8323072" "--epoch-time 1ms" "--epoch-time 24h" \
    "--pmtu-raise 1s" "--pmtu-raise 24h"; do
    $P send --key "$work/s.key" --to 127.0.0.1:9 --peer "$RP" --input logs --generate 1 --deadline 200ms \
        --no-progress $edge 2> "$work/err"
    got=$?
    [ "$got" = 5 ] || fail "$edge exited $got, want 5 (the deadline): $(cat "$work/err")"
done
echo "edges taken: --epoch-packets 1, 8323072; --epoch-time 1ms, 24h; --pmtu-raise 1s, 24h"
