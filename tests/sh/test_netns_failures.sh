#!/bin/sh
# The sender names what is wrong with the path within seconds, between network namespaces
# (netns_lib.sh): a sender, a router with NAT and a receiver on real kernel links.  Each case
# starts two senders (the POSIX and the io_uring backend) with --qlog, checks the whole text
# of the one line each writes and its exit code, and reads from each sender's own trace how
# soon the line came after its cause (one clock, and the order of its events: no wall clock
# is asserted):
#  1. no receiver running: ICMP port unreachable, "the receiver's port is closed";
#  2. the router rejects with ICMP host unreachable: "the receiver's host is unreachable";
#     for both, the cause is the first ICMP error the sender read, and the line comes before
#     the sender's second datagram (its first PTO probe);
#  3. a firewall that drops everything: "nothing came back from ...";
#  4. a wrong receiver key (--peer): the same line (a receiver answers nothing to a wrong
#     key), and the receiver tells of the key id whose datagrams do not open in one line;
#     for both, the cause is the sender's first datagram, and the line comes before its third
#     PTO (at most 5 datagrams: the first and two probes at each of two PTOs);
#  5. only small datagrams get through (the router's MTU 1,280 from the start, its ICMP
#     dropped) behind a 20 Mbit/s bottleneck, 5,000 records of 1 KiB from each sender: "only
#     datagrams of up to N B get through", N within 8 B of 1,252, told after the sender's
#     search ended (its trace's datagram size), and every record stored.
# Every line is also checked to be in README.md's "Real networks", word for word.
# Cases 1-4 send 100 records with --deadline 3s and keep the deadline's exit code, 5.
set -u
. tests/sh/tool_lib.sh
. tests/sh/netns_lib.sh
netns_bed
to=$RECV_V4:$RECV_PORT

# told NAME KIND: from $work/NAME.qlog, "FIRST HINT TOLD SENT_AT_TOLD": the times (ns from the
# sender's start) of its first datagram, of the first ICMP error it read and of its line KIND,
# and how many datagrams it had sent when it told it ("-" for what is not there).
told() {
    tr '\036' '\n' < "$work/$1.qlog" | awk -v kind="\"kind\":\"$2\"" '
        match($0, /"time":[0-9]+/) { t = substr($0, RSTART + 7, RLENGTH - 7) }
        /"transport:packet_sent"/ { sent++; if (first == "") first = t }
        /"transport:path_hint"/ && hint == "" { hint = t }
        /"app:path_told"/ && index($0, kind) && told == "" { told = t; at = sent }
        END { printf "%s %s %s %s\n", first == "" ? "-" : first, hint == "" ? "-" : hint, told == "" ? "-" : told, at == "" ? "-" : at }'
}

# expect NAME KIND CAUSE MOST LINE: each of the two senders NAME_posix and NAME_uring exits 5
# and wrote LINE (its number of seconds, if any, read as N.N) once; its trace has the line KIND
# after at most MOST datagrams, and the seconds from CAUSE (first: its first datagram; hint:
# the first ICMP error) to the line are printed.
expect() {
    name=$1 kind=$2 cause=$3 most=$4 want=$5
    for b in posix uring; do
        eval "wait \$p_$b"; code=$?
        n=${name}_$b
        [ "$code" = 5 ] || fail "$n: exit $code, want 5 (--deadline)"
        got=$(grep "pure-link send: " "$work/$n.log" | sed 's/^[0-9TZ:.-]* //; s/ in [0-9][0-9]*\.[0-9] s:/ in N.N s:/')
        [ "$(printf '%s\n' "$got" | grep -cxF "$want")" = 1 ] || fail "$n: want the line once: $want
got: $got"
        set -- $(told "$n" "$kind")
        first=$1 hint=$2 at=$3 sent=$4
        [ "$at" != - ] || fail "$n: no app:path_told $kind in its trace"
        eval "from=\$$cause"
        [ "$from" != - ] || fail "$n: no $cause in its trace"
        [ "$sent" -le "$most" ] || fail "$n: the line came after $sent datagrams, want at most $most"
        [ "$at" -ge "$from" ] || fail "$n: the line came before its cause"
        readme "$want" "$to"
        printf '  %s (%s): %s s after the first datagram, %s datagrams sent: %s...\n' "$name" $b "$(secs $((at - first)))" \
            "$sent" "$(echo "$want" | cut -c17-80)"
    done
}


# both NAME TO ARGS...: senders NAME_posix and NAME_uring at once, of 100 records to TO.
both() {
    case_name=$1 case_to=$2; shift 2
    io=posix netns_send ${case_name}_posix "$case_to" --qlog "$work/${case_name}_posix.qlog" "$@"; p_posix=$spid
    io=uring netns_send ${case_name}_uring "$case_to" --qlog "$work/${case_name}_uring.qlog" "$@"; p_uring=$spid
}
few="--input small --generate 100 --deadline 3s"

both closed "$to" $few
expect closed port_closed hint 1 "pure-link send: the receiver's port is closed: 10.9.2.2 answered ICMP port unreachable for $to (is pure-link recv running there, listening on that port?); still trying"

netns_filter plreject 'chain forward_reject { type filter hook forward priority 0; reject with icmpx host-unreachable; }'
both unreachable "$to" $few
expect unreachable host_unreachable hint 1 "pure-link send: the receiver's host is unreachable: 10.9.1.1 answered ICMP unreachable for $to (no route or no link to it, or a firewall that rejects; check --to); still trying"
netns_unfilter plreject

silent="pure-link send: nothing came back from $to in N.N s: check the address (--to), that no firewall drops UDP to port $RECV_PORT or its answers, and that --peer is the receiver's public key (pure-link pub RECEIVER.key): a receiver answers nothing to a wrong key; still trying"
netns_start_recv recv_fw
netns_filter pldrop 'chain forward_drop { type filter hook forward priority 0; policy drop; }'
both firewall "$to" $few
expect firewall nothing_back first 5 "$silent"
netns_unfilter pldrop
stop_recv

netns_start_recv recv_key --stats="$work/recv_key.json"
PEER=$SP both wrongkey "$to" $few   # the sender's own key, not the receiver's
expect wrongkey nothing_back first 5 "$silent"
stop_recv
n=$(grep -c "key id .* that did not open" "$work/recv_key.log")
[ "$n" = 1 ] || fail "receiver: $n lines for the wrong key's datagrams, want 1: $(cat "$work/recv_key.log")"
dropped=$(json "$work/recv_key.json" "j['endpoint']['dropped_auth']")
sent=$(json "$work/wrongkey_posix.json" "j['io']['datagrams_out']")
sent=$((sent + $(json "$work/wrongkey_uring.json" "j['io']['datagrams_out']")))
[ "$dropped" = "$sent" ] || fail "receiver counted $dropped datagrams that did not open, the senders sent $sent"
echo "  receiver: one line, $dropped datagrams counted: $(grep 'did not open' "$work/recv_key.log" | cut -c26-110)..."

# 5. Only small datagrams get through, nothing said by ICMP.
netns_filter plicmp 'chain out { type filter hook output priority 0; icmp type destination-unreachable drop; icmpv6 type packet-too-big drop; }'
netns_mtu 1280
nsx "$NS_R" tc qdisc replace dev r1 root tbf rate 20mbit burst 64kb latency 100ms || fail "tbf"
rm -rf "$work/store"
netns_start_recv recv_small
both small "$to" --input small --generate 5000 --size 1KiB --deadline 30s
for b in posix uring; do
    eval "wait \$p_$b" || fail "small_$b: exit $?: $(tail -3 "$work/small_$b.log")"
    line=$(grep "pure-link send: only datagrams" "$work/small_$b.log" | sed 's/^[0-9TZ:.-]* //')
    size=$(echo "$line" | sed -n 's/.* of up to \([0-9]*\) B .*/\1/p')
    [ "$line" = "pure-link send: only datagrams of up to $size B get through to $to (larger ones were lost): going on at that size" ] ||
        fail "small_$b: want the line once: $line"
    [ "$size" -le 1252 ] && [ "$size" -ge 1244 ] || fail "small_$b: $size B, want 1244..1252"
    readme "$line" "$to"
    set -- $(told small_$b size_found)
    # When the size the sender went on at was first in its trace (metrics every 100 ms).
    found=$(tr '\036' '\n' < "$work/small_$b.qlog" | sed -n 's/.*"time":\([0-9]*\),"name":"recovery:metrics_updated".*"datagram_bytes":\([0-9]*\).*/\1 \2/p' |
        awk -v size=$size '$2 != size { found = "" } $2 == size && found == "" { found = $1 } END { print found }')
    [ -n "$found" ] && [ "$3" -ge "$found" ] || fail "small_$b: the line before the size was found (${found:-never})"
    printf '  small (%s): %s s after the first datagram, %s s after the search ended at %s B\n' $b "$(secs $(($3 - $1)))" \
        "$(secs $(($3 - found)))" "$size"
done
stop_recv
out=$(python3 tests/sh/plr_check.py "$work/store/small" 5000 1024 --runs 2 2>&1) || fail "store check: $out"
