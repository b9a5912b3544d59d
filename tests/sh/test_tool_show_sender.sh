#!/bin/sh
# pure-link show of a running sender over its control socket (send --control PATH, by default
# send-PID.sock beside the receivers'): its run, stream, state, how far it is, RTT, flight
# and window, as text and JSON, while a transfer runs (before, only a receiver answered
# show, and the RTT, which only the sender measures, was shown nowhere live):
#  1. text and JSON; the run id is the one the receiver's show lists for the peer;
#  2. the socket is owner-only and gone when the sender ends;
#  3. the default place ($RUNTIME_DIRECTORY) lists it; --control none makes none;
#  4. a --control PATH that cannot be made fails before the first datagram (exit 1).
set -u
. tests/sh/tool_lib.sh
make_keys
N=200000 Z=200
printf 'peer %s *\ninput logs 1 %s/logs\n' "$SP" "$work" > "$work/r.conf"
start_recv r --config "$work/r.conf" --listen 127.0.0.1:0 --control "$work/r.sock"
# A sender of gated records (tool_lib.sh): 1,000 a second past the gate, so show meets it sending.
echo 2000 > "$work/gate"
rm -f "$work/fifo"; mkfifo "$work/fifo"
python3 tests/sh/gen_gated.py $N $Z "$work/gate" > "$work/fifo" & gpid=$!
$P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --source gen --shape 1 --framed \
    --no-progress --control "$work/s.sock" < "$work/fifo" 2> "$work/s.log" & spid=$!
pids="$pids $gpid $spid"
i=0
until $P show --json "$work/s.sock" > "$work/s.json" 2> "$work/show.err" &&
      [ "$(json "$work/s.json" 'j["records_stored"] > 0')" = True ]; do
    i=$((i + 1)); [ $i -gt 200 ] && fail "show never saw the sender store: $(cat "$work/s.json" "$work/show.err")"
    sleep 0.05
done
[ "$(stat -c %a "$work/s.sock")" = 600 ] || fail "control socket mode $(stat -c %a "$work/s.sock")"
python3 - "$work/s.json" $spid $port <<'PY' || fail "show --json: $(cat "$work/s.json")"
import json, sys
j = json.load(open(sys.argv[1]))
want = [j["command"] == "send", j["pid"] == int(sys.argv[2]), j["to"] == "127.0.0.1:" + sys.argv[3],
        j["source"] == "gen", j["input"] == "logs", j["state"] == "sending", j["refused"] is None,
        j["rtt_s"] > 0, j["epochs"] >= 1, j["records_queued"] >= j["records_stored"] > 0,
        j["last_answer_s"] < 5, j["datagram_bytes"] >= 1232]
sys.exit(0 if all(want) else "not as wanted: %s" % want)
PY
run=$(json "$work/s.json" 'j["run"]')
$P show --json "$work/r.sock" > "$work/r.json" || fail "the receiver's show"
[ "$(json "$work/r.json" '[r["run"] for r in j["peers"][0]["runs"]]')" = "['$run']" ] ||
    fail "the sender's run $run is not the receiver's: $(cat "$work/r.json")"
$P show "$work/s.sock" > "$work/s.txt" || fail "show text"
grep -q "^sender to 127.0.0.1:$port (pid $spid)$" "$work/s.txt" &&
    grep -q "^run $run  source gen  input logs  sending$" "$work/s.txt" &&
    grep -q "^  stored [0-9]* of [0-9]* records (.*), input open  rate " "$work/s.txt" &&
    grep -q "^  epochs [0-9]*  rtt [0-9.]* ms (min [0-9.]*)  in flight " "$work/s.txt" ||
    fail "show text: $(cat "$work/s.txt")"
echo $N > "$work/gate"
wait $spid || fail "send exited $?: $(cat "$work/s.log")"
[ ! -e "$work/s.sock" ] || fail "the control socket outlived its sender"

# The default place lists a sender beside the receivers; --control none makes no socket.
mkdir -m 700 "$work/rt"
sender() { src=$1; shift; $P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --source "$src" \
    --shape 1 --no-progress "$@"; }
(sleep 3; echo one) | RUNTIME_DIRECTORY="$work/rt" sender rt 2> "$work/rt.log" & bpid=$!; pids="$pids $bpid"
i=0; until [ -S "$(ls "$work"/rt/send-*.sock 2>/dev/null | head -1)" ]; do
    i=$((i + 1)); [ $i -gt 100 ] && fail "no default socket: $(ls "$work/rt")"; sleep 0.05
done
RUNTIME_DIRECTORY="$work/rt" $P show > "$work/default.txt" || fail "show in the default place"
grep -q "^run [0-9a-f]\{16\}  source rt  input logs  sending$" "$work/default.txt" || fail "default: $(cat "$work/default.txt")"
wait $bpid || fail "the sender in the default place exited $?"
[ -z "$(ls "$work/rt")" ] || fail "a socket left in the default place: $(ls "$work/rt")"
(sleep 1; echo two) | RUNTIME_DIRECTORY="$work/rt" sender none --control none 2> "$work/none.log" & bpid=$!; pids="$pids $bpid"
sleep 0.5
[ -z "$(ls "$work/rt")" ] || fail "--control none made a socket: $(ls "$work/rt")"
wait $bpid || fail "the sender without a socket exited $?"

# A path that cannot be made: exit 1 in one line, nothing sent.
sender bad --generate 5 --control "$work/no/such/dir/s.sock" 2> "$work/bad.log"; st=$?
[ $st = 1 ] || fail "--control in a missing directory exited $st, not 1"
grep -q "control socket $work/no/such/dir/s.sock" "$work/bad.log" || fail "its line: $(cat "$work/bad.log")"
[ ! -e "$work"/logs/*_bad.plr ] || fail "the sender with a bad --control sent"
stop_recv
echo "ok: sender show text and JSON (run $run, the receiver's), owner-only, default place, none, a bad path"
