#!/bin/sh
# The options send and recv share (shims/tool/tool_options.c), each doing on both commands what
# `pure-link help` says:
#  1. -k for --key; --qlog (a JSON-SEQ trace of each side's packets and epochs); --progress
#     (the progress line and, for send, its summary); --stats with no FILE (JSON on stdout);
#     --keylog (each side logs the epochs of the run it shares with the other);
#  2. --no-gso --no-gro: no batched datagrams on either side, where the same transfer
#     without them has some (loopback has UDP GSO and GRO), on each socket backend;
#  3. the last of --progress and --no-progress wins;
#  4. errors of the shared parser on recv too: unknown option, a missing value, an argument
#     that is not an option, a missing --key.
set -u
. tests/sh/tool_lib.sh
make_keys
printf 'peer %s *\ninput logs 1 %s\n' "$SP" "$work/store" > "$work/r.conf"

# run NAME SEND_ARGS -- RECV_ARGS: one transfer of 3,000 records; the receiver's stderr
# in $work/NAME-recv.log and --stats in $work/NAME-recv.json, the sender's stderr in
# $work/NAME-send.log and its stdout in $work/NAME-send.out.
run() {
    name=$1; shift
    sargs=""
    while [ "$1" != -- ]; do sargs="$sargs $1"; shift; done
    shift
    rm -rf "$work/store" "$work/$name-recv.log"  # an old log could be read before the child truncates it
    $P recv -k "$work/r.key" --config "$work/r.conf" --listen 127.0.0.1:0 --stats="$work/$name-recv.json" "$@" \
        2> "$work/$name-recv.log" &
    rpid=$!; pids="$pids $rpid"
    wait_listening "$work/$name-recv.log" $rpid "$name: the receiver"
    # shellcheck disable=SC2086
    timeout 60 $P send -k "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 \
        --generate 3000 --size 1200 --deadline 50s $sargs > "$work/$name-send.out" 2> "$work/$name-send.log" ||
        fail "$name: send exited $?"
    stop_recv
    [ "$rstatus" = 0 ] || fail "$name: receiver exit $rstatus"
    python3 tests/sh/plr_check.py "$work/store" 3000 1200 > /dev/null || fail "$name: store check"
}

# 1.
run report --qlog "$work/send.qlog" --keylog "$work/send.keylog" --progress --stats -- \
    --qlog "$work/recv.qlog" --keylog "$work/recv.keylog" --progress
[ "$(json "$work/report-send.out" "j['records_stored']")" = 3000 ] || fail "--stats: no JSON on stdout"
grep -q 'stored 3000/3000' "$work/report-send.log" || fail "send --progress: no progress line"
grep -q '3000 records (.*) stored in' "$work/report-send.log" || fail "send --progress: no summary"
grep -q 'stored 3000 records' "$work/report-recv.log" || fail "recv --progress: no progress line"
python3 - "$work/send.qlog" "$work/recv.qlog" <<'PY' || fail "--qlog"
import json, sys
for path, title in zip(sys.argv[1:], ("pure-link send", "pure-link recv")):
    events = [json.loads(r) for r in open(path, encoding="utf-8").read().split("\x1e") if r.strip()]
    names = [e["name"] for e in events]
    start = [e for e in events if e["name"] == "app:start"]
    assert len(start) == 1 and start[0]["data"]["title"] == title, (path, start)
    for want in ("transport:packet_sent", "transport:packet_received", "security:epoch"):
        assert want in names, "%s has no %s" % (path, want)
    print("%s: %d events, %d packets sent" % (title, len(events), names.count("transport:packet_sent")))
PY
sort "$work/send.keylog" > "$work/s.sorted"; sort "$work/recv.keylog" > "$work/r.sorted"
shared=$(comm -12 "$work/s.sorted" "$work/r.sorted" | grep -c PURE_LINK_EPOCH)
[ "$shared" -ge 1 ] || fail "--keylog: the two sides log no epoch in common"
echo "1. -k, --qlog, --progress, --stats, --keylog ($shared epochs in both key logs) on send and recv"

# 2.
for io in posix uring; do
    run batched --io $io --no-progress -- --io $io --no-progress
    run single --io $io --no-progress --no-gso --no-gro --stats="$work/single-send.json" -- \
        --io $io --no-progress --no-gso --no-gro
    gso=$(json "$work/single-send.json" "j['io']['gso_batches']")
    gro=$(json "$work/single-recv.json" "j['io']['gro_batches']")
    [ "$gso" = 0 ] && [ "$gro" = 0 ] || fail "--io $io --no-gso --no-gro: $gso GSO and $gro GRO batches"
    gro=$(json "$work/batched-recv.json" "j['io']['gro_batches']")
    [ "$gro" -gt 0 ] || fail "--io $io without --no-gso --no-gro: no GRO batch (is GSO on loopback gone?)"
    echo "2. --io $io: --no-gso --no-gro, no batches; without them $gro GRO batches"
done

# 3.
run last --progress --no-progress -- --no-progress --progress
[ ! -s "$work/last-send.log" ] || fail "send --progress --no-progress wrote: $(cat "$work/last-send.log")"
grep -q 'stored 3000 records' "$work/last-recv.log" || fail "recv --no-progress --progress: no progress line"
echo "3. the last of --progress and --no-progress wins"

# 4.
expect_usage() {
    pattern=$1; shift
    $P recv "$@" > /dev/null 2> "$work/err"
    got=$?
    [ "$got" = 2 ] || fail "recv $* exited $got, want 2: $(cat "$work/err")"
    [ "$(wc -l < "$work/err")" = 1 ] && grep -q -- "$pattern" "$work/err" ||
        fail "recv $*: want one line with '$pattern', got: $(cat "$work/err")"
    echo "4. exit 2: $(cat "$work/err")"
}
expect_usage "unknown option --colour (see pure-link help recv)" --colour
expect_usage "option --qlog needs a value (see pure-link help recv)" -k "$work/r.key" --config "$work/r.conf" --qlog
expect_usage "unexpected argument 'extra'" -k "$work/r.key" --config "$work/r.conf" extra
expect_usage "missing --key FILE (see pure-link help recv)" --config "$work/r.conf"
expect_usage "missing --config FILE" -k "$work/r.key"
