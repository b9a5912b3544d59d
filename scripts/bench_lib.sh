# bench_lib.sh: what scripts/bench_hostile.sh and scripts/bench_many.sh share (sourced after
# they set $name): a work folder under /tmp removed at exit (KEEP=1 keeps it), every process
# they start ended by its id, bounded waits, and a receiver of build/pure-link on loopback.
B=${B:-build}; P=$B/pure-link
work=$(mktemp -d "/tmp/pl-$name.XXXXXX")
pids=""
cleanup() { for p in $pids; do kill -9 "$p" 2>/dev/null || true; done; [ -n "${KEEP:-}" ] || rm -rf "$work"; }
trap cleanup EXIT
die() { echo "bench_$name: $*" >&2; for f in "$work"/*.log; do echo "--- $f" >&2; tail -5 "$f" >&2; done; exit 1; }

# waitfor PID SECONDS: a bounded wait for a process to end; its status in $st.
waitfor() {
    i=0
    while kill -0 "$1" 2>/dev/null; do
        i=$((i + 1)); [ $i -gt $(($2 * 20)) ] && die "pid $1 still running after $2 s"
        sleep 0.05
    done
    st=0; wait "$1" || st=$?
}

# start_recv CONFIG: `pure-link recv` on 127.0.0.1 with its key $work/r.key, logging to
# $work/recv.log and its statistics to $work/recv.json; sets $rpid and $port.  RECV_IO
# names its backend (--io: auto, posix or uring; default auto).
start_recv() {
    rm -f "$work/recv.log"  # the shell truncates it in the child: the last one could be read first
    $P recv --key "$work/r.key" --config "$1" --listen 127.0.0.1:0 --no-progress --io "${RECV_IO:-auto}" \
        --stats="$work/recv.json" 2> "$work/recv.log" &
    rpid=$!; pids="$pids $rpid"
    i=0; port=""
    # The whole line: a half-written one would give no port yet.
    until [ -n "$port" ]; do
        i=$((i + 1)); [ $i -gt 200 ] && die "the receiver did not start"; sleep 0.05
        port=$(sed -n 's/.*listening on .*:\([0-9][0-9]*\)$/\1/p' "$work/recv.log" 2>/dev/null | head -1)
    done
}

# stop_recv: SIGINT, and its clean exit.
stop_recv() { kill -INT $rpid; waitfor $rpid 30; [ "$st" = 0 ] || die "recv exited $st"; }
