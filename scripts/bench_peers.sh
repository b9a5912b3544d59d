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
# A figure, not a test: the machine may be shared.  Certificates for the QUIC peers are made
# at run time in the work folder (removed at exit).
set -eu
name=peers; . scripts/bench_lib.sh
rounds=${ROUNDS:-3}; mib=${MIB:-256}; sizes=${SIZES:-"1024 16384"}; ios=${IOS:-"posix uring"}
pl_bins=${PL_BINS:-"pure-link=$P"}
peers=${PEERS:-1}
Q=$B/bench/quinn/quinn-bulk
results="$work/results.tsv"; : > "$results"

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
    t0=$(date +%s%N)
    $2 send --io "$3" --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 \
        --generate $count --size $4 --deadline 300s --no-progress --stats="$work/send.json" 2> "$work/send.log" ||
        die "$1 send exited $?"
    t1=$(date +%s%N)
    stop_recv
    cpu=$(python3 -c "import json; print(json.load(open('$work/send.json'))['cpu_seconds'] + json.load(open('$work/recv.json'))['cpu_seconds'])")
    record "$1 $3" "$4" "$5" $((count * $4)) "$cpu" "$(( (t1 - t0) / 1000000 ))e-3"
}

# A peer's server and client: "CPU_SECONDS WALL_SECONDS" (scripts/bench_cpu_pair.py).
cpu_pair() { python3 scripts/bench_cpu_pair.py "$@"; }

quinn_round() {
    [ -x "$Q" ] || return 0
    bytes=$((mib * 1048576))
    out=$(cpu_pair --server "$Q server 127.0.0.1:0 $work/cert.der $work/key.der" --received $bytes \
                   --client "$Q client 127.0.0.1:{port} $work/cert.der $bytes $1") || die "quinn: $out"
    record quinn "$1" "$2" "$bytes" $out
}

# The client downloads one file of the same bytes and discards it (as quinn's server does).
ngtcp2_round() {
    [ -x /usr/sbin/gtlsserver ] && command -v gtlsclient >/dev/null 2>&1 || return 0
    bytes=$((mib * 1048576))
    out=$(cpu_pair --port-free --server "/usr/sbin/gtlsserver -q -d $work/htdocs 127.0.0.1 {port} $work/key.pem $work/cert.pem" \
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
if [ -x "$B/bench/bench_udp_ceiling" ]; then
    ceiling=$("$B/bench/bench_udp_ceiling" --sealed-best 2>/dev/null || true)
fi
python3 scripts/bench_peers_table.py "$results" "$ceiling"
