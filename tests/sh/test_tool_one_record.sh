#!/bin/sh
# A one-record send to a receiver with a memo is done within a few round trips: the record
# goes whole in epoch 0, the receiver's ACCEPT waits for its memo write, and the sender
# sends a packet of epoch 1 as soon as it takes that ACCEPT (spec/protocol.md §4.2), so the
# record is stored without the 1 s resend rule.  Asserted from the sender's counts, not
# from wall time: no record and no packet sent twice, in each of four sends (before, each
# was stored only by the resend: records_resent 1).  The packets sent are printed, not
# bounded: PTO probes and datagram-size probes add some on a loaded machine.
set -u
. tests/sh/tool_lib.sh
make_keys
printf 'peer %s *\ninput logs 1 %s\nmemo %s\n' "$SP" "$work/store" "$work/memo" > "$work/r.conf"
start_recv recv --config "$work/r.conf" --listen 127.0.0.1:0 --stats="$work/recv.json"
for i in 1 2 3 4; do
    timeout 20 $P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 \
        --generate 1 --deadline 10s --no-progress --stats="$work/send$i.json" 2> "$work/send$i.log" ||
        fail "send $i exited $?"
    counts=$(json "$work/send$i.json" \
        "j['records_stored'], j['sender']['records_resent'], j['sender']['packets_retransmitted'], j['sender']['packets_sent']")
    echo "send $i: stored, records resent, packets resent, packets sent: $counts"
    set -- $(echo "$counts" | tr -d '(),')
    [ "$1" = 1 ] || fail "send $i: $1 records stored"
    [ "$2" = 0 ] || fail "send $i: the record went twice (the 1 s resend rule stored it)"
    [ "$3" = 0 ] || fail "send $i: a packet went twice"
done
stop_recv
[ "$rstatus" = 0 ] || fail "receiver exit $rstatus"
[ "$(json "$work/recv.json" "j['store']['records_durable']")" = 4 ] || fail "receiver durable count"
echo "4 one-record sends, each stored without a resend"
