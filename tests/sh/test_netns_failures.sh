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

netns_both closed "$to" 3s
netns_expect closed "the receiver's port is closed"

netns_filter plreject 'chain forward_reject { type filter hook forward priority 0; reject with icmpx host-unreachable; }'
netns_both unreachable "$to" 3s
netns_expect unreachable "the receiver's host is unreachable"
netns_unfilter plreject

netns_start_recv recv_fw
netns_filter pldrop 'chain forward_drop { type filter hook forward priority 0; policy drop; }'
netns_both firewall "$to" 3s
netns_expect firewall "nothing came back from $to in .*firewall.*--peer"
netns_unfilter pldrop
stop_recv

netns_start_recv recv_key --stats="$work/recv_key.json"
PEER=$SP netns_both wrongkey "$to" 3s   # the sender's own key, not the receiver's
netns_expect wrongkey "nothing came back from $to in .*a wrong key"
stop_recv
n=$(grep -c "key id .* did not open" "$work/recv_key.log")
[ "$n" = 1 ] || fail "receiver: $n lines for the wrong key's datagrams in 3 s, want 1: $(cat "$work/recv_key.log")"
dropped=$(json "$work/recv_key.json" "j['endpoint']['dropped_auth']")
[ "$dropped" -ge 2 ] || fail "receiver counted $dropped datagrams that did not open"
echo "  receiver: $(grep 'did not open' "$work/recv_key.log" | cut -c1-100)... ($dropped counted)"
