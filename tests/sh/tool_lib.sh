# tool_lib.sh: helpers of the tool's shell tests (sourced).  Every process a test starts
# is remembered and ended by its id at exit; every wait is bounded.
P=${B:-build}/pure-link
work=$(mktemp -d)
pids=""
cleanup() { for p in $pids; do kill -9 "$p" 2>/dev/null; done; [ -n "${KEEP:-}" ] || rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "work: $work"; for f in "$work"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done; exit 1; }

# keys: r.key, s.key and their public keys in $RP, $SP.
make_keys() {
    RP=$($P keygen "$work/r.key") || fail "keygen r.key"
    SP=$($P keygen "$work/s.key") || fail "keygen s.key"
}

# start_recv NAME ARGS...: a receiver in the background, logging to $work/NAME.log; sets
# $rpid and $port (from its "listening on" line).
start_recv() {
    name=$1; shift
    rm -f "$work/$name.log"  # the shell truncates it in the child: an old one could be read first
    $P recv --key "$work/r.key" --no-progress --io "${io:-auto}" "$@" 2> "$work/$name.log" &
    rpid=$!
    pids="$pids $rpid"
    wait_listening "$work/$name.log" $rpid "receiver $name"
}

# wait_listening LOG PID WHAT: waits (5 s at most) until LOG holds a "listening on ADDR:PORT"
# line, and sets $port to its port.  LOG must be the new process's own: remove an old one
# before starting it, since the shell truncates it only in the background child.
wait_listening() {
    i=0; port=""
    while :; do
        port=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$1" 2>/dev/null | head -1)
        [ -n "$port" ] && return 0
        i=$((i + 1)); [ $i -gt 100 ] && fail "$3 did not start"
        kill -0 "$2" 2>/dev/null || fail "$3 exited: $(cat "$1")"
        sleep 0.05
    done
}

# stop_recv: SIGINT, and wait for its clean exit (status in $rstatus).
stop_recv() {
    kill -INT $rpid
    i=0
    while kill -0 $rpid 2>/dev/null; do
        i=$((i + 1)); [ $i -gt 100 ] && fail "receiver did not stop on SIGINT"
        sleep 0.05
    done
    wait $rpid; rstatus=$?
}

# json FILE EXPR: a value from a --stats file (EXPR in Python over `j`).
json() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

# Resuming (send --resume of source "gen", $N records of $Z bytes each, into input "logs"):
# resume_recv starts a receiver with a memo that stores in $work/logs; resume_send ARGS...
# becomes such a sender (call it in a subshell or in the background), resume_sender ARGS...
# one whose input ARGS name; stored_now says the records in the store now (every frame has
# the same size: the file's length says).
resume_recv() {
    printf 'peer %s *\ninput logs 1 %s/logs\nmemo %s/memo\n' "$SP" "$work" "$work" > "$work/r.conf"
    start_recv r --config "$work/r.conf" --listen 127.0.0.1:0
}
resume_send() { resume_sender --generate $N --size $Z "$@"; }
resume_sender() { exec env --default-signal=INT $P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" \
    --input logs --source gen --shape 1 --resume --no-progress "$@"; }
# resume_send_gated LOG [ARGS...]: such a sender in the background ($spid) of the same records from
# tests/sh/gen_gated.py ($gpid), which writes them at once up to number $(cat $work/gate)
# and 1,000 a second past it: a run the test stops mid-transfer cannot have sent everything
# first, however loaded the machine, and has records on their way when it is stopped.
resume_send_gated() {
    rm -f "$work/fifo"; mkfifo "$work/fifo"
    python3 tests/sh/gen_gated.py $N $Z "$work/gate" > "$work/fifo" & gpid=$!
    log=$1; shift
    resume_sender --framed "$@" < "$work/fifo" 2> "$log" & spid=$!
    pids="$pids $gpid $spid"
}
# resume_taken_over [ARGS...]: a receiver (resume_recv), a first run of the source ($apid,
# with ARGS, logging to $work/s1.log) paused by SIGSTOP once the store holds its first
# records ($a of them), and a second run that resumes the source and stores it to the end.
resume_taken_over() {
    make_keys
    resume_recv
    # The first run reads gated records: it cannot have sent all of them before it is
    # paused, however loaded the machine.
    echo 20000 > "$work/gate"
    resume_send_gated "$work/s1.log" "$@"; apid=$spid
    # Paused as soon as the store holds its first records (the file is named at the first commit).
    i=0; until [ "$(stored_now)" -gt 0 ]; do i=$((i + 1)); [ $i -gt 1000 ] && fail "nothing stored in 10 s"; sleep 0.01; done
    kill -STOP $apid
    a=$(stored_now)
    [ "$a" -lt $N ] || fail "the first run stored all $N before it was paused"
    (resume_send --deadline 60s) 2> "$work/s2.log" || fail "the second run exited $?: $(tail -3 "$work/s2.log")"
    python3 tests/sh/plr_check.py "$work/logs" $N $Z --resumed > "$work/plr.txt" || fail "store: $(cat "$work/plr.txt")"
}
# cut_off_told: the first run, let go, is told it is cut off (REFUSED reason 5) and exits 8
# with its line, within 10 s: far more than that takes on a loaded machine.
cut_off_told() {
    i=0; while kill -0 $apid 2>/dev/null && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.1; done
    if kill -0 $apid 2>/dev/null; then
        kill -INT $apid; wait $apid
        fail "the cut-off run still runs 10 s after it was let go (then SIGINT: exit $?); its log: $(cat "$work/s1.log")"
    fi
    wait $apid; st=$?
    [ $st = 8 ] || fail "the cut-off run exited $st, not 8"
    grep -q "cut off by the receiver: a newer run of source 'gen' took it over" "$work/s1.log" ||
        fail "the cut-off run's log has not its line"
}
stored_now() {
    f=$(ls "$work"/logs/*.plr 2>/dev/null | head -1)
    [ -n "$f" ] && echo $(( ($(stat -c %s "$f") - 192) / (28 + Z) )) || echo 0
}
