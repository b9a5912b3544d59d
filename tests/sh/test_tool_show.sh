#!/bin/sh
# pure-link show over a receiver's control socket (owner-only), as text and JSON, while a
# transfer runs; SIGUSR1 writes the same status to the log and the receiver goes on; the
# default socket place ($RUNTIME_DIRECTORY) and a dead socket.
set -u
. tests/sh/tool_lib.sh
make_keys
printf 'peer %s *\ninput logs 1 %s/store\n' "$SP" "$work" > "$work/r.conf"
start_recv r --config "$work/r.conf" --listen 127.0.0.1:0 --control "$work/c.sock"
[ "$(stat -c %a "$work/c.sock")" = 600 ] || fail "control socket mode $(stat -c %a "$work/c.sock")"
grep -q "control socket $work/c.sock (pure-link show); listening on 127.0.0.1:$port$" "$work/r.log" || fail "no log line names the control socket"

# A transfer slowed by its epochs so that show meets it running.
$P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 --generate 400000 \
    --size 512 --no-progress 2> "$work/s.log" &
spid=$!; pids="$pids $spid"
i=0
until $P show --json "$work/c.sock" > "$work/show.json" 2> "$work/show.err" &&
      [ "$(json "$work/show.json" 'len(j["peers"][0]["runs"])')" = 1 ] &&
      [ "$(json "$work/show.json" 'j["peers"][0]["runs"][0]["records_stored"] > 0')" = True ]; do
    i=$((i + 1)); [ $i -gt 100 ] && fail "show never saw the run: $(cat "$work/show.json" "$work/show.err")"
    sleep 0.05
done
[ "$(json "$work/show.json" 'j["command"]')" = recv ] || fail "json: $(cat "$work/show.json")"
[ "$(json "$work/show.json" 'j["peers"][0]["key"]')" = "$SP" ] || fail "json peer key"
[ "$(json "$work/show.json" 'j["peers"][0]["runs"][0]["input"]')" = logs ] || fail "json run input"
[ "$(json "$work/show.json" 'j["peers"][0]["runs"][0]["address"].startswith("127.0.0.1:")')" = True ] || fail "json address"
json "$work/show.json" 'j["dropped"]["unknown_key"], j["records_stored"], j["peers"][0]["runs"][0]["epoch"]' >/dev/null ||
    fail "json lacks a figure"
$P show "$work/c.sock" > "$work/show.txt" || fail "show text"
grep -q "^receiver 127.0.0.1:$port" "$work/show.txt" || fail "text head: $(cat "$work/show.txt")"
grep -q "^peer $SP" "$work/show.txt" && grep -q "^  run [0-9a-f]\{16\}  stream 0  source out  input logs" "$work/show.txt" ||
    fail "text peer and run: $(cat "$work/show.txt")"
grep -q "dropped: bad_header [0-9]* unknown_key" "$work/show.txt" || fail "text drops"

# SIGUSR1: the same block in the log, the receiver and the transfer go on.
kill -USR1 $rpid
i=0
until grep -q "recv: peer $SP" "$work/r.log"; do
    i=$((i + 1)); [ $i -gt 100 ] && fail "SIGUSR1 logged no status"
    sleep 0.05
done
kill -0 $rpid || fail "SIGUSR1 ended the receiver"
wait $spid || fail "send exited $?"
n=$(json "$work/show.json" 'j["records_stored"]')
$P show --json "$work/c.sock" > "$work/end.json"
[ "$(json "$work/end.json" 'j["records_stored"]')" = 400000 ] || fail "after the transfer: $(cat "$work/end.json")"
stop_recv
[ "$rstatus" = 0 ] || fail "receiver exit $rstatus"
[ ! -e "$work/c.sock" ] || fail "the control socket outlived its receiver"

# Nobody answers on a dead socket: one line, exit 1.  The default place: $RUNTIME_DIRECTORY.
$P show "$work/c.sock" 2> "$work/dead.err"; st=$?
[ $st = 1 ] && [ "$(wc -l < "$work/dead.err")" = 1 ] || fail "show of a dead socket: exit $st, $(cat "$work/dead.err")"
mkdir -m 700 "$work/rt"
RUNTIME_DIRECTORY="$work/rt" start_recv r2 --config "$work/r.conf" --listen 127.0.0.1:0
[ -S "$work/rt/recv-$rpid.sock" ] || fail "no default socket: $(ls "$work/rt")"
RUNTIME_DIRECTORY="$work/rt" $P show > "$work/default.txt" || fail "show in the default place"
grep -q "^receiver 127.0.0.1:$port (pid $rpid)" "$work/default.txt" || fail "default: $(cat "$work/default.txt")"
stop_recv
echo "show ok: $n records stored when first seen running; $(grep -c . "$work/show.txt") lines of text"
