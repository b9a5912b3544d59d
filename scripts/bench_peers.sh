#!/bin/sh
# pure-link beside other bulk transports on loopback, in Gbit of payload per CPU-second of
# sender and receiver together (user + system, all threads: the tool's --stats, getrusage
# of the peers' processes).  Rounds are interleaved (every configuration once per round), so
# the machine's noise falls on all of them alike; each ratio is taken within its round.
#
#   pure-link   `pure-link send --generate` to `pure-link recv` with its store, records of
#               1 KiB and 16 KiB, each io backend (posix, uring)
#   quinn       build/bench/quinn/quinn-bulk (tests/bench/quinn_bulk/): one stream, written
#               in pieces of the record size, counted by the server (when built)
#   ngtcp2      Debian's ngtcp2 examples (gtlsserver, gtlsclient): one HTTP/3 GET of a file
#               of the same bytes, discarded by the client (when installed)
#   ceiling     build/bench/bench_udp_ceiling --sealed-best: 1,452 B datagrams sealed and
#               opened with the core's AES-GCM, no protocol; pure-link's fraction of it
# pure-link's figure includes its receiver's store (every record written and fdatasync'ed
# before it is acknowledged); the peers keep nothing.  PEERS=0 leaves the peers out.
#
#   scripts/bench_peers.sh             ROUNDS (3) rounds of MIB (256) MiB per transfer
#   PL_BINS="before=/path after=build/pure-link" compares builds of the tool, interleaved
#   SIZES="1024 16384"  IOS="posix uring"  PEERS=1
#   RELAY=1: every transfer through `pure-link-sim relay` (sim/sim_relay.c: the simulator's
#               path model at real time, its own process, whose CPU counts for nobody),
#               RELAY_RATE (50Mbit) and RELAY_RTT_MS (20), MIB 32 unless set (make
#               bench-relay).  The table is then CPU per delivered byte (CPU-s per GB = ms
#               per MB) and pure-link's CPU over each peer's within the round (at most 1 is
#               the goal), and a second one counts pure-link's system calls per MB.
# A figure, not a test: the machine may be shared.  Certificates for the QUIC peers are made
# at run time in the work folder (removed at exit).
set -eu
name=peers; . scripts/bench_lib.sh
relay=${RELAY:-}; rate=${RELAY_RATE:-50Mbit}; rtt_ms=${RELAY_RTT_MS:-20}
if [ -n "$relay" ]; then mib=${MIB:-32}; else mib=${MIB:-256}; fi
S=$B/pure-link-sim
rounds=${ROUNDS:-3}; sizes=${SIZES:-"1024 16384"}; ios=${IOS:-"posix uring"}
pl_bins=${PL_BINS:-"pure-link=$P"}
peers=${PEERS:-1}
Q=$B/bench/quinn/quinn-bulk
results="$work/results.tsv"; : > "$results"
counts="$work/counts.tsv"; : > "$counts"
# The relay's command line, {front} its port for the client and {port} the server's (as
# scripts/bench_cpu_pair.py --via takes it): one way delay = RTT / 2, the queue one BDP.
via="$S relay {front} {port} --duration 600s --set 'path.rate: $rate' --set 'path.delay: $((rtt_ms * 500))us'"
free_port() { python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

RP=$($P keygen "$work/r.key"); SP=$($P keygen "$work/s.key")
printf 'peer %s *\ninput logs 1 %s\n' "$SP" "$work/store" > "$work/r.conf"

# json FILE EXPR
json() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
# record CONFIG SIZE ROUND BYTES CPU_SECONDS WALL_SECONDS
record() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" >> "$results"; }

# pl_round LABEL BIN IO SIZE ROUND
pl_round() {
    count=$((mib * 1048576 / $4))
    rm -rf "$work/store"
    own=$P; P=$2; RECV_IO=$3; start_recv "$work/r.conf"; P=$own
    to=$port
    if [ -n "$relay" ]; then
        to=$(free_port)
        eval "$(echo "$via" | sed "s/{front}/$to/; s/{port}/$port/")" > "$work/relay.json" 2> "$work/relay.log" &
        xpid=$!; pids="$pids $xpid"
        sleep 0.2
    fi
    t0=$(date +%s%N)
    $2 send --io "$3" --key "$work/s.key" --to 127.0.0.1:$to --peer "$RP" --input logs --shape 1 \
        --generate $count --size $4 --deadline 300s --no-progress --stats="$work/send.json" 2> "$work/send.log" ||
        die "$1 send exited $?"
    t1=$(date +%s%N)
    stop_recv
    if [ -n "$relay" ]; then kill -TERM $xpid; waitfor $xpid 10; fi
    python3 - "$work/send.json" "$work/recv.json" "$1 $3" "$4" "$5" $((count * $4)) >> "$counts" <<'PY'
import json, sys
s, r = (json.load(open(f)) for f in sys.argv[1:3])
st = r.get("store", {})
print("\t".join(sys.argv[3:7] + [str(x) for x in (s["io"]["wait_calls"], s["io"]["send_calls"], s["io"]["recv_calls"],
      r["io"]["wait_calls"], r["io"]["send_calls"], r["io"]["recv_calls"], st.get("fdatasyncs", 0), s["seconds"])]))
PY
    cpu=$(python3 -c "import json; print(json.load(open('$work/send.json'))['cpu_seconds'] + json.load(open('$work/recv.json'))['cpu_seconds'])")
    record "$1 $3" "$4" "$5" $((count * $4)) "$cpu" "$(( (t1 - t0) / 1000000 ))e-3"
}

# A peer's server and client: "CPU_SECONDS WALL_SECONDS" (scripts/bench_cpu_pair.py).
cpu_pair() { python3 scripts/bench_cpu_pair.py "$@"; }

quinn_round() {
    [ -x "$Q" ] || return 0
    bytes=$((mib * 1048576))
    out=$(cpu_pair ${relay:+--via "$via"} --server "$Q server 127.0.0.1:0 $work/cert.der $work/key.der" --received $bytes \
                   --client "$Q client 127.0.0.1:{port} $work/cert.der $bytes $1") || die "quinn: $out"
    record quinn "$1" "$2" "$bytes" $out
}

# The client downloads one file of the same bytes and discards it (as quinn's server does).
ngtcp2_round() {
    [ -x /usr/sbin/gtlsserver ] && command -v gtlsclient >/dev/null 2>&1 || return 0
    bytes=$((mib * 1048576))
    out=$(cpu_pair ${relay:+--via "$via"} --port-free --server "/usr/sbin/gtlsserver -q -d $work/htdocs 127.0.0.1 {port} $work/key.pem $work/cert.pem" \
                   --client "gtlsclient -q --exit-on-all-streams-close 127.0.0.1 {port} https://127.0.0.1:{port}/blob") ||
        die "ngtcp2: $out"
    record ngtcp2 "$1" "$2" "$bytes" $out
}

if [ "$peers" = 1 ]; then
    # A certificate for localhost and 127.0.0.1 that is no CA (rustls refuses a CA as the
    # server's own), made here and removed with the work folder.
    printf '[req]\ndistinguished_name=dn\nprompt=no\n[dn]\nCN=localhost\n[ee]\nbasicConstraints=critical,CA:FALSE\nsubjectAltName=DNS:localhost,IP:127.0.0.1\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n' > "$work/req.cnf"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -config "$work/req.cnf" \
        -extensions ee -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null || die "openssl req"
    openssl pkcs8 -topk8 -nocrypt -in "$work/key.pem" -outform DER -out "$work/key.der"
    openssl x509 -in "$work/cert.pem" -outform DER -out "$work/cert.der"
    mkdir -p "$work/htdocs"
    head -c $((mib * 1048576)) /dev/zero > "$work/htdocs/blob"
    [ -x "$Q" ] || echo "bench_peers: $Q not built (make bench-peers builds it): no quinn rows" >&2
    command -v gtlsclient >/dev/null 2>&1 || echo "bench_peers: no gtlsclient (scripts/deps.sh bench): no ngtcp2 rows" >&2
fi

r=1
while [ $r -le "$rounds" ]; do
    for size in $sizes; do
        for pb in $pl_bins; do
            for io in $ios; do pl_round "${pb%%=*}" "${pb#*=}" "$io" "$size" $r; done
        done
        if [ "$peers" = 1 ]; then quinn_round "$size" $r; ngtcp2_round "$size" $r; fi
    done
    r=$((r + 1))
done

ceiling=""
if [ -z "$relay" ] && [ -x "$B/bench/bench_udp_ceiling" ]; then
    ceiling=$("$B/bench/bench_udp_ceiling" --sealed-best 2>/dev/null || true)
fi
if [ -n "$relay" ]; then
    echo "Through pure-link-sim relay: $rate, RTT $rtt_ms ms, $mib MiB per transfer"
    python3 scripts/bench_peers_table.py --cpu "$results" "$counts"
else
    python3 scripts/bench_peers_table.py "$results" "$ceiling"
fi
