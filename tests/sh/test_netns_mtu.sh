#!/bin/sh
# Path MTUs between network namespaces (netns_lib.sh):
#  - the router's link to the receiver at 1,500, 1,450, 1,400 and 1,280 B, over IPv4 and
#    IPv6, the router telling senders of larger packets by ICMP;
#  - the sender's own link at 1,280 B (IPv4): this host refuses larger datagrams itself
#    (EMSGSIZE, or EINVAL for a whole GSO train), no ICMP crosses the network.
# Each case sends 10,000 records of 1 KiB and one of 16 MiB, checks every record once in the
# store and prints the datagram size the senders reached, which must be within 8 B of the
# most the path carries (the MTU less 28 B for IPv4, 48 B for IPv6; at most 1,452 B).
set -u
. tests/sh/tool_lib.sh
. tests/sh/netns_lib.sh
netns_bed

# mtu_case LABEL TO OVERHEAD: a transfer, and the size reached (each sender's) checked.
mtu_case() {
    netns_transfer "$2" 30s
    best=$((mtu - $3)); [ $best -gt 1452 ] && best=1452
    for got in $(echo "$dgram" | tr / ' '); do
        [ "$got" -le $best ] && [ "$got" -ge $((best - 8)) ] || fail "$1: datagram size $got, want $((best - 8))..$best"
    done
    echo "$1: every record once in $took s; datagram size reached $dgram (best $best)"
}

for mtu in 1500 1450 1400 1280; do
    netns_mtu $mtu
    mtu_case "MTU $mtu IPv4" $RECV_V4:$RECV_PORT 28
    mtu_case "MTU $mtu IPv6" "[$RECV_V6]:$RECV_PORT" 48
done
netns_mtu 1500

mtu=1280
ip -n "$NS_S" link set s0 mtu $mtu && ip -n "$NS_R" link set r0 mtu $mtu || fail "sender's link mtu"
mtu_case "sender's own link MTU 1280 IPv4" $RECV_V4:$RECV_PORT 28
for n in small big; do
    refused=$(json "$work/$n.json" "j['io']['send_too_big'] + j['io']['hints_too_big']")
    [ "$refused" -ge 1 ] || fail "$n: this host refused no datagram and gave no size hint"
done
