#!/bin/sh
# recv rereads its config on SIGHUP while a transfer runs: a bad config is refused in one
# line and the old one stays; a peer added mid-transfer sends; a peer removed gets nothing
# more stored; the run of the peer that did not change goes on in the same slot, with
# nothing lost; an input added takes streams.
set -u
. tests/sh/tool_lib.sh
make_keys
S2=$($P keygen "$work/s2.key"); S3=$($P keygen "$work/s3.key")
conf="$work/r.conf"
printf 'peer %s *\npeer %s *\ninput logs 1 %s/store\n' "$SP" "$S3" "$work" > "$conf"
start_recv r --config "$conf" --listen 127.0.0.1:0 --control "$work/c.sock"
send() {   # send KEY INPUT SHAPE COUNT LOG [ARGS...]; with BG=1 in the background, its pid in $bg
    k=$1 in=$2 sh=$3 n=$4 log=$5; shift 5
    if [ "${BG:-}" = 1 ]; then
        $P send --key "$work/$k" --to 127.0.0.1:$port --peer "$RP" --input "$in" --shape "$sh" --generate "$n" \
            --size 512 --no-progress "$@" 2> "$work/$log" &
        bg=$!; pids="$pids $bg"; return 0
    fi
    $P send --key "$work/$k" --to 127.0.0.1:$port --peer "$RP" --input "$in" --shape "$sh" --generate "$n" \
        --size 512 --no-progress "$@" 2> "$work/$log"
}
hup() {   # hup WANT: SIGHUP, then wait for the log's count of WANT to grow
    before=$(grep -c "$1" "$work/r.log")
    kill -HUP $rpid
    i=0
    while [ "$(grep -c "$1" "$work/r.log")" = "$before" ]; do
        i=$((i + 1)); [ $i -gt 100 ] && fail "no '$1' after SIGHUP"
        sleep 0.05
    done
}
run_of() { json "$2" "[r['run'] + ' ' + str(r['stream']) for p in j['peers'] if p['key'] == '$1' for r in p['runs']]"; }

BG=1
send s.key logs 1 400000 s.log; spid=$bg
send s3.key logs 1 100000000 s3.log; s3pid=$bg
BG=0
i=0
until $P show --json "$work/c.sock" > "$work/a.json" && [ "$(run_of "$SP" "$work/a.json")" != "[]" ] &&
      [ "$(run_of "$S3" "$work/a.json")" != "[]" ]; do
    i=$((i + 1)); [ $i -gt 100 ] && fail "the runs did not start"; sleep 0.05
done

# A bad config: one line, the old config stays (the senders go on).
cp "$conf" "$work/good.conf"
printf 'peer %s *\npear x\n' "$SP" > "$conf"
hup "reload refused"
[ "$(grep -c "reload refused" "$work/r.log")" = 1 ] || fail "more than one line: $(grep reload "$work/r.log")"
grep -q "reload refused, the old config stays: $conf:2: unknown directive" "$work/r.log" || fail "refusal: $(tail -1 "$work/r.log")"

# S3 removed, S2 added with an input of its own; SP unchanged.
printf 'peer %s *\npeer %s out\ninput logs 1 %s/store\ninput other 2 %s/other\n' "$SP" "$S2" "$work" "$work" > "$conf"
hup "reloaded $conf"
grep -q "reloaded $conf: 2 peers (1 added, 1 removed or changed, 1 kept), 2 inputs" "$work/r.log" || fail "$(tail -1 "$work/r.log")"
$P show --json "$work/c.sock" > "$work/b.json"
[ "$(run_of "$SP" "$work/a.json")" = "$(run_of "$SP" "$work/b.json")" ] || fail "the unchanged peer's run moved: $(run_of "$SP" "$work/a.json") then $(run_of "$SP" "$work/b.json")"
[ "$(json "$work/b.json" 'j["reloads"]')" = 1 ] || fail "reloads"
[ "$(json "$work/b.json" '[p["key"] for p in j["peers"]]')" = "['$SP', '$S2']" ] || fail "peers after reload: $(cat "$work/b.json")"
send s2.key other 2 1000 s2.log --deadline 20s || fail "the added peer's send exited $?: $(cat "$work/s2.log")"
wait $spid || fail "the unchanged peer's send exited $?"
# The removed peer's file grows no more (its sender, told nothing, keeps trying).
f3="$work/store/$(printf %.24s "$S3")_out.plr"
[ -f "$f3" ] || fail "no stream file $f3: $(ls "$work/store")"
size3=$(stat -c %s "$f3")
sleep 0.5
[ "$(stat -c %s "$f3")" = "$size3" ] || fail "the removed peer's file grew after the reload"
kill -0 $s3pid || fail "the removed peer's sender stopped"
kill -INT $s3pid; wait $s3pid   # stopped before every record was stored: exit 6
stop_recv
[ "$rstatus" = 0 ] || fail "receiver exit $rstatus"
python3 tests/sh/plr_check.py "$work/other" 1000 512 > "$work/plr.txt" || fail "the new input's records: $(cat "$work/plr.txt")"
echo "reload ok: a bad config refused in one line; a peer added that sent 1000 records to an input added; a peer removed whose file stayed at $size3 B; the kept peer's run stayed where it was ($(run_of "$SP" "$work/b.json"))"
