#!/bin/sh
# The sender names what is wrong with the path within seconds, between network namespaces
# (netns_lib.sh): a sender, a router with NAT and a receiver on real kernel links.  Each
# case starts `pure-link send` of 100 records with --deadline 4s and prints when its one
# line came (the time from the sender's start; the bound asserted, 5 s, is a generous check
# of behaviour, the lines come in about 2 s):
#  1. no receiver running: ICMP port unreachable, "the receiver's port is closed";
#  2. the router rejects with ICMP host unreachable: "the receiver's host is unreachable";
#  3. a firewall that drops everything: "nothing came back ... firewall ... --peer";
#  4. a wrong receiver key (--peer): the same line (the receiver answers nothing to a wrong
#     key), and the receiver logs one line for the key id whose datagrams do not open.
# Each case keeps the deadline's exit code, 5.
set -u
. tests/sh/tool_lib.sh
. tests/sh/netns_lib.sh
netns_bed
to=$RECV_V4:$RECV_PORT

# both NAME ARGS...: senders NAME_posix and NAME_uring at once (the two socket backends),
# from $t0, with --deadline 3s.
both() {
    case_name=$1; shift
    t0=$(date +%s%N)
    io=posix netns_send ${case_name}_posix "$to" --input small --generate 100 --deadline 3s "$@"; p_posix=$spid
    io=uring netns_send ${case_name}_uring "$to" --input small --generate 100 --deadline 3s "$@"; p_uring=$spid
}
# expect NAME PATTERN: each of the two logs PATTERN within 5 s (the time each line was first
# seen is printed), and each exits 5.
expect() {
    seen_posix=""; seen_uring=""
    while [ -z "$seen_posix" ] || [ -z "$seen_uring" ]; do
        ms=$(( ($(date +%s%N) - t0) / 1000000 ))
        for b in posix uring; do
            eval "seen=\$seen_$b"
            [ -z "$seen" ] && grep -q "$2" "$work/$1_$b.log" 2>/dev/null && eval "seen_$b=$ms"
        done
        [ $ms -lt 5000 ] || fail "no line '$2' in 5 s from $1 (posix: ${seen_posix:-none}, uring: ${seen_uring:-none})"
        sleep 0.02
    done
    for b in posix uring; do
        eval "wait \$p_$b"; code=$?
        [ "$code" = 5 ] || fail "$1 ($b): exit $code, want 5 (--deadline)"
        eval "ms=\$seen_$b"
        printf '  %s (%s): after %d.%03d s: %s...\n' "$1" $b $((ms / 1000)) $((ms % 1000)) \
            "$(grep "$2" "$work/$1_$b.log" | head -1 | cut -c1-100)"
    done
}

both closed
expect closed "the receiver's port is closed"

netns_filter plreject 'chain forward_reject { type filter hook forward priority 0; reject with icmpx host-unreachable; }'
both unreachable
expect unreachable "the receiver's host is unreachable"
netns_unfilter plreject

netns_start_recv recv_fw
netns_filter pldrop 'chain forward_drop { type filter hook forward priority 0; policy drop; }'
both firewall
expect firewall "nothing came back from $to in .*firewall.*--peer"
netns_unfilter pldrop
stop_recv

netns_start_recv recv_key --stats="$work/recv_key.json"
PEER=$SP both wrongkey   # the sender's own key, not the receiver's
expect wrongkey "nothing came back from $to in .*a wrong key"
stop_recv
n=$(grep -c "key id .* did not open" "$work/recv_key.log")
[ "$n" = 1 ] || fail "receiver: $n lines for the wrong key's datagrams in 3 s, want 1: $(cat "$work/recv_key.log")"
dropped=$(json "$work/recv_key.json" "j['endpoint']['dropped_auth']")
[ "$dropped" -ge 2 ] || fail "receiver counted $dropped datagrams that did not open"
echo "  receiver: $(grep 'did not open' "$work/recv_key.log" | cut -c1-100)... ($dropped counted)"
