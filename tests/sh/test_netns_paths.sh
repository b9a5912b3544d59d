#!/bin/sh
# Paths that change under a transfer, between network namespaces (netns_lib.sh).  Each case
# sends 10,000 records of 1 KiB and one of 16 MiB through the router, checks every record
# once in the store and prints the time and the datagram size the senders reached:
#  1. a 20 Mbit/s bottleneck (tbf on the router's link to the receiver);
#  2. the router's NAT mapping changed mid-transfer: conntrack flushed and the masquerade
#     moved to a new port range (the receiver sees the sender at a new address);
#  3. the router's link to the receiver down for 5 s and up again, behind 20 Mbit/s;
#  4. the router's MTU lowered from 1,500 to 1,280 mid-transfer with its ICMP dropped (a
#     black hole), then raised back after 3 s, behind 20 Mbit/s, the senders with
#     --pmtu-raise 1s: each leaves the black hole by a smaller datagram size and says so,
#     within 3 s of the first datagram the hole swallowed, and once the MTU is back each
#     searches again and ends within 8 B of 1,452 B.  The time comes from the sender's own
#     trace: the hook's clock reading when the MTU fell is placed in it by the line's stamp
#     in the log beside the line's event in the trace.
# The mid-transfer cases shape the link (20 Mbit/s: for the NAT change, so that it surely
# comes mid-transfer, for the link down, and for the black hole, so that the transfer outlasts the hole
# and the search after it).  The NAT change and the link down come once 3 MB are in the store; the
# black hole once 3 MB have passed the bottleneck: at most 3 MB + 3 s at 20 Mbit/s (10.6 MB) of the
# 27.3 MB have passed when the MTU comes back, so at least 6.6 s of transfer follow it however the
# two senders share the link (the store alone cannot bound it: the 16 MiB record lands whole, so the
# big sender may have taken most of the link before the small one's 3 MB are in).
set -u
. tests/sh/tool_lib.sh
. tests/sh/netns_lib.sh
netns_bed
to=$RECV_V4:$RECV_PORT

# The router's link to the receiver through a token bucket of RATE.
shape() { nsx "$NS_R" tc qdisc replace dev r1 root tbf rate "$1" burst 64kb latency 100ms || fail "tbf $1"; }
unshape() { nsx "$NS_R" tc qdisc del dev r1 root 2>/dev/null; }
# stored_bytes: the bytes of the store's record files now (their sizes: reading 26 MB
# every 20 ms costs a loaded machine more than the transfer).  STORE_WHOLE_BYTES: no fewer
# once every record of netns_transfer is in (10,000 of 1 KiB and one of 16 MiB, framed).
stored_bytes() { find "$work"/store -name '*.plr*' -printf '%s\n' 2>/dev/null | awk '{ n += $1 } END { print n + 0 }'; }
STORE_WHOLE_BYTES=$((10000 * (1024 + 28) + 16777216 + 28))
# passed_bytes: the bytes the bottleneck (the router's tbf on r1) has sent since it was set.
passed_bytes() {
    v=$(nsx "$NS_R" tc -s qdisc show dev r1 | sed -n 's/^ *Sent \([0-9]*\) bytes.*/\1/p' | head -1)
    echo "${v:-0}"
}
# count_past COUNT BYTES WHAT: waits until the command COUNT prints BYTES or more (10 s at most).
count_past() {
    i=0
    while [ "$($1)" -lt "$2" ]; do
        i=$((i + 1)); [ $i -gt 500 ] && fail "$3 did not reach $2 bytes"
        sleep 0.02
    done
}
passed_past() { count_past passed_bytes "$1" "the bottleneck's count"; }
stored_past() { count_past stored_bytes "$1" "the store"; }

shape 20mbit
netns_transfer "$to" 40s
echo "1. 20 Mbit/s bottleneck: every record once in $took s; datagram size reached $dgram"

# At 20 Mbit/s the transfer takes about 11 s and the change comes at about 1.2 s: the test
# asserts that the store was still short of the whole when it came (at 100 Mbit/s a loaded
# machine's hook came after the end).
shape 20mbit
netns_transfer "$to" 40s 'stored_past 3000000; netns_nat 20000-20999; nsx "$NS_R" conntrack -F 2>/dev/null; echo $(stored_bytes) > "$work/nat_at"'
moves=$(json "$work/recv.json" "j['endpoint']['address_moves']")
nat_at=$(cat "$work/nat_at")
[ "$nat_at" -lt $STORE_WHOLE_BYTES ] || fail "the NAT change came after the transfer ended ($nat_at B stored)"
[ "$moves" -ge 1 ] || fail "the receiver saw no address move"
echo "2. NAT mapping changed mid-transfer ($nat_at B stored): every record once in $took s, $moves address moves; datagram size reached $dgram"
netns_nat ""

# Behind 20 Mbit/s, where resending the 16 MiB record takes about 7 s: a sender that took its
# resend (all below the highest offset heard) for no progress started it again every second
# and never finished (sim: outage-16mib-20mbit.conf).
shape 20mbit
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
unshape; shape 20mbit   # afresh: the counter passed_past reads starts at 0
hole='passed_past 3000000; netns_filter plicmp "chain out { type filter hook output priority 0; icmp type destination-unreachable drop; icmpv6 type packet-too-big drop; }"; netns_mtu 1280; date +%s%N > "$work/low"; sleep 3; netns_mtu 1500; date +%s%N > "$work/high"'
QLOG=1 SEND_ARGS="--pmtu-raise 1s" netns_transfer "$to" 40s "$hole"
echo "4. black hole (MTU 1,280, ICMP dropped) for 3 s: every record once in $took s; datagram size reached $dgram"
for n in small big; do
    line=$(sed -n 's/^[0-9TZ:.-]* \(pure-link send: full-size datagrams to .*\)/\1/p' "$work/$n.log")
    [ -n "$line" ] && [ "$(echo "$line" | wc -l)" = 1 ] || fail "$n: want one line that it left a black hole: $line"
    readme "$line" "$to"
    # The trace's clock at the line, less the log's stamp of it: the hook's reading in the trace.
    stamp=$(date -d "$(grep "pure-link send: full-size datagrams" "$work/$n.log" | cut -d' ' -f1)" +%s%N)
    set -- $(tr '\036' '\n' < "$work/$n.qlog" | awk -v stamp="$stamp" -v low="$(cat "$work/low")" -v high="$(cat "$work/high")" '
        function field(name) { return match($0, "\"" name "\":[0-9]+") ? substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 3) + 0 : 0 }
        { t = field("time"); at[++n] = t; len[n] = /"transport:packet_sent"/ ? field("len") : 0
          size[n] = /"recovery:metrics_updated"/ ? field("datagram_bytes") : 0 }
        /"app:path_told"/ && /"black_hole"/ && told == "" { told = t; low_t = t - (stamp - low); high_t = t - (stamp - high) }
        END { for (i = 1; i <= n; i++) {
                  if (hit == "" && at[i] >= low_t && len[i] > 1252) hit = at[i]
                  if (back == "" && told != "" && at[i] >= high_t && size[i] >= 1444) back = at[i] }
              printf "%s %s %s %.0f\n", told == "" ? "-" : sprintf("%.0f", told), hit == "" ? "-" : sprintf("%.0f", hit),
                  back == "" ? "-" : sprintf("%.0f", back), high_t }')
    told=$1 hit=$2 back=$3 high_t=$4
    [ "$told" != - ] && [ "$hit" != - ] || fail "$n: no black_hole event or no datagram above 1,252 B after the MTU fell in its trace"
    [ "$told" -ge "$hit" ] && [ $((told - hit)) -le 3000000000 ] ||
        fail "$n: left the black hole $(secs $((told - hit))) s after the first datagram it swallowed, want at most 3 s"
    size=$(netns_dgram $n)
    [ "$size" -ge 1444 ] && [ "$size" -le 1452 ] || fail "$n: ended at $size B after the MTU came back, want 1,444..1,452"
    [ "$back" != - ] || fail "$n: its trace never shows 1,444 B or more after the MTU came back"
    echo "   $n: left the black hole $(secs $((told - hit))) s after its first datagram lost in it; $size B again" \
        "$(secs $((back - high_t))) s after the MTU came back"
done
