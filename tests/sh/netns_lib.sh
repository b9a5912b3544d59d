# netns_lib.sh: a real network for the tool's tests (sourced, after tool_lib.sh): three
# network namespaces of this test's own, joined by veth pairs,
#
#     sender  s0 ---- r0  router  r1 ---- d0  receiver
#     10.9.1.2        10.9.1.1    10.9.2.1    10.9.2.2
#     fd09:1::2       fd09:1::1   fd09:2::1   fd09:2::2
#
# the router forwarding both families and masquerading what leaves r1 (nftables NAT, so the
# receiver sees the router's address), and every link at MTU 1,500 to begin with.  Names
# end in the shell's pid, so runs side by side never meet, and an exit trap removes the
# namespaces (and with them every link, address and rule) however the test ends.
#
# Without root, `ip netns`, nftables or tc the test says why in one line, "skipped: why",
# and exits 77 without running a case: tests/run.sh counts it skipped, never passed.
NS_S=pl$$s; NS_R=pl$$r; NS_D=pl$$d
SEND_V4=10.9.1.2; ROUTER_V4=10.9.1.1; RECV_V4=10.9.2.2
ROUTER_V6=fd09:1::1; RECV_V6=fd09:2::2
RECV_PORT=4433

netns_skip() { echo "skipped: $*"; exit 77; }

netns_cleanup() {
    for p in $pids; do kill -9 "$p" 2>/dev/null; done
    for p in $pids; do wait "$p" 2>/dev/null; done
    pids=""
    for ns in $NS_S $NS_R $NS_D; do ip netns del "$ns" 2>/dev/null; done
    [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap netns_cleanup EXIT
trap 'exit 1' INT TERM HUP

# Says why and skips when this machine cannot build the bed.
netns_require() {
    [ "$(id -u)" = 0 ] || netns_skip "network namespaces need root (CI runs as root)"
    for tool in ip nft tc conntrack; do
        command -v $tool >/dev/null 2>&1 || netns_skip "no '$tool' here (scripts/deps.sh installs it)"
    done
    ip netns add "$NS_S" 2>/dev/null || netns_skip "this kernel or container gives no network namespaces"
    ip netns del "$NS_S"
}

nsx() { ns=$1; shift; ip netns exec "$ns" "$@"; }

# Builds the three namespaces as drawn above.
netns_up() {
    for ns in $NS_S $NS_R $NS_D; do
        ip netns add "$ns" || fail "ip netns add $ns"
        ip -n "$ns" link set lo up
        # No duplicate address detection (2 s before an address works), IPv6 addresses kept
        # while a link is down (the link-down case), forwarding on the router.
        nsx "$ns" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
            net.ipv6.conf.all.keep_addr_on_down=1 net.ipv6.conf.default.keep_addr_on_down=1 || fail "sysctl"
    done
    nsx "$NS_R" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 || fail "router sysctl"
    ip link add s0 netns "$NS_S" type veth peer name r0 netns "$NS_R" || fail "veth s0-r0"
    ip link add r1 netns "$NS_R" type veth peer name d0 netns "$NS_D" || fail "veth r1-d0"
    ip -n "$NS_S" addr add 10.9.1.2/24 dev s0 && ip -n "$NS_S" addr add fd09:1::2/64 dev s0 nodad &&
    ip -n "$NS_R" addr add 10.9.1.1/24 dev r0 && ip -n "$NS_R" addr add fd09:1::1/64 dev r0 nodad &&
    ip -n "$NS_R" addr add 10.9.2.1/24 dev r1 && ip -n "$NS_R" addr add fd09:2::1/64 dev r1 nodad &&
    ip -n "$NS_D" addr add 10.9.2.2/24 dev d0 && ip -n "$NS_D" addr add fd09:2::2/64 dev d0 nodad || fail "addresses"
    for l in "$NS_S s0" "$NS_R r0" "$NS_R r1" "$NS_D d0"; do
        set -- $l; ip -n "$1" link set "$2" up || fail "link $2 up"
    done
    ip -n "$NS_S" route add default via 10.9.1.1 && ip -n "$NS_S" -6 route add default via fd09:1::1 &&
    ip -n "$NS_D" route add default via 10.9.2.1 && ip -n "$NS_D" -6 route add default via fd09:2::1 || fail "routes"
    netns_nat ""
}

# netns_nat RANGE: the router's masquerade on r1, UDP source ports from RANGE ("" lets the
# kernel choose); the rules replace the last ones.
netns_nat() {
    nat_to=""; [ -n "$1" ] && nat_to="to :$1"
    nsx "$NS_R" nft -f - <<EOF || fail "nft nat"
table inet plnat
delete table inet plnat
table inet plnat {
    chain post {
        type nat hook postrouting priority srcnat;
        oifname "r1" meta l4proto udp masquerade $nat_to
        oifname "r1" masquerade
    }
}
EOF
}

# netns_mtu MTU: the MTU of the router's link to the receiver (both ends): a path of that
# MTU, which the router tells senders of larger packets about by ICMP (unless blocked).
netns_mtu() {
    ip -n "$NS_R" link set r1 mtu "$1" && ip -n "$NS_D" link set d0 mtu "$1" || fail "mtu $1"
}

# netns_filter NAME RULES: an nftables filter table of the router (e.g. a chain that drops
# everything); netns_unfilter NAME removes it.
netns_filter() {
    nsx "$NS_R" nft -f - <<EOF || fail "nft filter $1"
table inet $1 {
$2
}
EOF
}
netns_unfilter() { nsx "$NS_R" nft delete table inet "$1" || fail "nft delete $1"; }

# netns_bed: everything a test needs first: the checks (or a skip), keys, the namespaces
# and the receiver's config.
netns_bed() {
    netns_require
    make_keys
    netns_up
    netns_recv_conf
}

# netns_recv_conf: the receiver's config (in $work/r.conf): the sender's key, inputs
# "small" and "big" storing under $work/store/.
netns_recv_conf() {
    printf 'peer %s *\ninput small 1 %s\ninput big 1 %s\n' "$SP" "$work/store/small" "$work/store/big" > "$work/r.conf"
}

# netns_start_recv NAME ARGS...: the receiver in its namespace on port 4433 (both families),
# logging to $work/NAME.log; sets $rpid.
netns_start_recv() {
    name=$1; shift
    rm -f "$work/$name.log"
    # `ip netns exec` becomes the program (same pid): $! is the receiver itself.
    ip netns exec "$NS_D" $P recv --key "$work/r.key" --config "$work/r.conf" --listen "[::]:$RECV_PORT" --no-progress \
        --io "${io:-auto}" "$@" 2> "$work/$name.log" &
    rpid=$!
    pids="$pids $rpid"
    wait_listening "$work/$name.log" $rpid "receiver $name"
}

# netns_send NAME TO ARGS...: a sender in its namespace to TO, in the background, logging to
# $work/NAME.log and writing $work/NAME.json; sets $spid.
netns_send() {
    name=$1 to=$2; shift 2
    rm -f "$work/$name.log" "$work/$name.json"
    ip netns exec "$NS_S" $P send --key "$work/s.key" --to "$to" --peer "${PEER:-$RP}" --shape 1 --no-progress \
        --io "${io:-auto}" --stats="$work/$name.json" "$@" 2> "$work/$name.log" &
    spid=$!
    pids="$pids $spid"
}

# netns_transfer TO DEADLINE [HOOK]: the test's standard load, 10,000 records of 1 KiB to
# input "small" and one record of 16 MiB to input "big", from two senders at once, to a
# fresh receiver; HOOK (a shell command) runs while they send; $SEND_ARGS (default none) go
# to both senders, and with QLOG=1 each writes its trace to $work/small.qlog and big.qlog.
# Then every record must be in the store once, bytes as sent.  Sets $took (seconds) and
# $dgram (the datagram size the senders reached, from their --stats).
netns_transfer() {
    to=$1 deadline=$2 hook=${3:-}
    rm -rf "$work/store"
    netns_start_recv recv --stats="$work/recv.json"
    t0=$(date +%s%N)
    netns_send small "$to" --input small --generate 10000 --size 1KiB --deadline "$deadline" ${SEND_ARGS:-} \
        ${QLOG:+--qlog "$work/small.qlog"}; small=$spid
    netns_send big "$to" --input big --generate 1 --size 16MiB --deadline "$deadline" ${SEND_ARGS:-} \
        ${QLOG:+--qlog "$work/big.qlog"}; big=$spid
    [ -z "$hook" ] || eval "$hook"
    wait $small; s1=$?
    wait $big; s2=$?
    took=$(( ($(date +%s%N) - t0) / 1000000 ))
    stop_recv
    [ "$s1" = 0 ] || fail "small sender exited $s1: $(tail -3 "$work/small.log")"
    [ "$s2" = 0 ] || fail "big sender exited $s2: $(tail -3 "$work/big.log")"
    out=$(python3 tests/sh/plr_check.py "$work/store/small" 10000 1024 "$work/store/big" 1 16777216 2>&1) ||
        fail "store check: $out"
    dgram=$(netns_dgram small big)
    took=$(printf '%d.%03d' $((took / 1000)) $((took % 1000)))
}

# netns_dgram NAME...: the datagram size each sender NAME ended at (its --stats), joined by
# "/": the sender's datagram_bytes where the core reports it, else the largest datagram its
# socket sent.  Read with sed: a Python start costs seconds on a loaded machine.
netns_dgram() {
    sizes=""
    for n in "$@"; do
        v=$(sed -n 's/.*"sender":{[^}]*"datagram_bytes":\([0-9]*\).*/\1/p' "$work/$n.json")
        [ -n "$v" ] || v="largest-sent:$(sed -n 's/.*"datagram_bytes_most":\([0-9]*\).*/\1/p' "$work/$n.json")"
        sizes="$sizes${sizes:+/}$v"
    done
    echo "$sizes"
}

# readme LINE TO: README.md's "Real networks" gives the tool's LINE, its values named (ADDR for
# TO, H, T, N, PORT).  secs NS: NS nanoseconds as seconds with 3 decimals.
readme() {
    named=$(echo "$1" | sed "s/^pure-link send: //; s/$2/ADDR/g; s/10\.9\.[12]\.1 answered/H answered/; s/10\.9\.2\.2 answered/H answered/;
        s/ in [0-9N.]* s:/ in T s:/; s/ for [0-9.]* s / for T s /; s/ after [0-9.]* s$/ after T s/;
        s/(\([0-9]*\) of \([0-9]*\) records/(N of M records/; s/ going on at [0-9]* B$/ going on at N B/; s/port $RECV_PORT /port PORT /; s/ up to [0-9]* B / up to N B /")
    grep -qF "\`$named\`" README.md || fail "README.md lacks the line \`$named\`"
}
secs() { printf '%d.%03d' $(($1 / 1000000000)) $(($1 / 1000000 % 1000)); }
