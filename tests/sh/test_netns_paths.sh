#!/bin/sh
# Paths that change under a transfer, between network namespaces (netns_lib.sh).  Each case
# sends 10,000 records of 1 KiB and one of 16 MiB through the router, checks every record
# once in the store and prints the time and the datagram size the senders reached:
#  1. a 20 Mbit/s bottleneck (tbf on the router's link to the receiver);
#  2. the router's NAT mapping changed mid-transfer: conntrack flushed and the masquerade
#     moved to a new port range (the receiver sees the sender at a new address);
#  3. the router's link to the receiver down for 5 s and up again;
#  4. the router's MTU lowered from 1,500 to 1,280 mid-transfer with its ICMP dropped (a
#     black hole), then raised back after 3 s: the senders leave the black hole by a smaller
#     datagram size and say so.
# The mid-transfer cases shape the link to 100 Mbit/s so that the transfer outlasts the change,
# which comes once 3 MB are in the store.
set -u
. tests/sh/tool_lib.sh
. tests/sh/netns_lib.sh
netns_bed
to=$RECV_V4:$RECV_PORT

# The router's link to the receiver through a token bucket of RATE.
shape() { nsx "$NS_R" tc qdisc replace dev r1 root tbf rate "$1" burst 64kb latency 100ms || fail "tbf $1"; }
unshape() { nsx "$NS_R" tc qdisc del dev r1 root 2>/dev/null; }
# Waits until the store holds BYTES (10 s at most).
stored_past() {
    i=0
    while [ "$(cat "$work"/store/*/*.plr* 2>/dev/null | wc -c)" -lt "$1" ]; do
        i=$((i + 1)); [ $i -gt 500 ] && fail "the store did not reach $1 bytes"
        sleep 0.02
    done
}

shape 20mbit
netns_transfer "$to" 40s
echo "1. 20 Mbit/s bottleneck: every record once in $took s; datagram size reached $dgram"

shape 100mbit
netns_transfer "$to" 30s 'stored_past 3000000; netns_nat 20000-20999; nsx "$NS_R" conntrack -F 2>/dev/null'
moves=$(json "$work/recv.json" "j['endpoint']['address_moves']")
[ "$moves" -ge 1 ] || fail "the receiver saw no address move"
echo "2. NAT mapping changed mid-transfer: every record once in $took s, $moves address moves; datagram size reached $dgram"
netns_nat ""

netns_transfer "$to" 40s 'stored_past 3000000; ip -n "$NS_R" link set r1 down; sleep 5; ip -n "$NS_R" link set r1 up; date +%s%N > "$work/up"'
echo "3. link down 5 s: every record once in $took s; datagram size reached $dgram"
# Each sender says that the answers stopped (the router, its route gone with the link, may
# answer ICMP host unreachable first; a sender that started late on a loaded machine may have
# had no answer yet), then once that they came back, as README.md has it; how long after the
# link came up is printed (from the log's stamps; the virtual-time bound is test_sim's
# link_down_5s_resumes_within_a_probe).
for n in small big; do
    down=$(sed -n 's/^[0-9TZ:.-]* \(pure-link send: \(no answer from\|the receiver.s host is unreachable:\|nothing came back from\) .*\)/\1/p' "$work/$n.log")
    back=$(sed -n 's/^[0-9TZ:.-]* \(pure-link send: answers from [^ ]* \(again \)\{0,1\}after .*\)/\1/p' "$work/$n.log")
    [ -n "$down" ] && [ "$(echo "$down" | wc -l)" = 1 ] || fail "$n: want one line that the answers stopped: $down"
    [ -n "$back" ] && [ "$(echo "$back" | wc -l)" = 1 ] || fail "$n: want one line that they came back: $back"
    readme "$down" "$to"
    readme "$back" "$to"
    at=$(date -d "$(grep "pure-link send: answers from" "$work/$n.log" | cut -d' ' -f1)" +%s%N)
    echo "   $n: $(echo "$down" | cut -c17-60)...; $(echo "$back" | cut -c17-)," \
        "$(secs $((at - $(cat "$work/up")))) s after the link came up"
done
hole='stored_past 3000000; netns_filter plicmp "chain out { type filter hook output priority 0; icmp type destination-unreachable drop; icmpv6 type packet-too-big drop; }"; netns_mtu 1280; sleep 3; netns_mtu 1500'
netns_transfer "$to" 30s "$hole"
echo "4. black hole (MTU 1,280, ICMP dropped) for 3 s: every record once in $took s; datagram size reached $dgram"
hole=$(sed -n 's/^[0-9TZ:.-]* \(pure-link send: full-size datagrams to .*\)/\1/p' "$work/small.log" "$work/big.log")
[ -n "$hole" ] || fail "neither sender said it left a black hole"
echo "$hole" | while read -r line; do readme "$line" "$to"; echo "   $(echo "$line" | cut -c1-120)"; done
