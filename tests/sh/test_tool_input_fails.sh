#!/bin/sh
# One input's directory fills up mid-transfer (a 2 MiB tmpfs) while another input takes a
# 300,000-record transfer: the receiver logs one line naming the failed input, its directory
# and the cause, refuses that input's streams (REFUSED reason 4: its sender says so and
# retries; a sender with a --deadline exits 4), and keeps serving the other input to the
# end.  show --json and --stats count the failure.  Once the file system has room again
# (a remount), the failed input is tried again, says so in one line, and its sender's
# transfer completes: both directories hold every record once (plr_check).
set -u
. tests/sh/tool_lib.sh
[ "$(id -u)" = 0 ] || { echo "skipped: mounting a small tmpfs needs root"; exit 77; }
mkdir -p "$work/small"
mount -t tmpfs -o size=2m tmpfs "$work/small" 2> "$work/mount.err" ||
    { echo "skipped: mount of a small tmpfs not permitted ($(cat "$work/mount.err"))"; exit 77; }
unmount() { umount "$work/small" 2>/dev/null; cleanup; }
trap unmount EXIT
make_keys
N=300000 Z=64      # the healthy input's transfer
M=60000 Y=100      # the failing input's: 7.7 MB, past the 2 MiB that fill up
printf 'peer %s *\ninput good 1 %s/good\ninput small 1 %s/small/in\nmemo %s/memo\n' \
    "$SP" "$work" "$work" "$work" > "$work/r.conf"
start_recv r --config "$work/r.conf" --listen 127.0.0.1:0 --control "$work/c.sock" --stats="$work/r.json"
send() {
    input=$1 source=$2 count=$3 size=$4; shift 4
    exec $P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input "$input" --source "$source" --shape 1 \
        --generate "$count" --size "$size" --no-progress "$@"
}
send good ga $N $Z 2> "$work/ga.log" & gpid=$!; pids="$pids $gpid"
send small sb $M $Y 2> "$work/sb.log" & bpid=$!; pids="$pids $bpid"

# The small input fails: one line with its name, its directory and the cause.
i=0
until grep -q "input small ($work/small/in) cannot store: .*No space left on device" "$work/r.log"; do
    i=$((i + 1)); [ $i -gt 600 ] && fail "no line says the input failed"
    kill -0 $rpid 2>/dev/null || fail "the receiver exited"
    sleep 0.05
done
# Its sender hears REFUSED with reason 4 and keeps trying.
i=0
until grep -q "the receiver refused the stream: the receiver cannot store this input now" "$work/sb.log"; do
    i=$((i + 1)); [ $i -gt 200 ] && fail "the failing input's sender was not told: $(cat "$work/sb.log")"
    sleep 0.05
done
kill -0 $bpid 2>/dev/null || fail "the failing input's sender ended: $(cat "$work/sb.log")"
$P show --json "$work/c.sock" > "$work/show.json" 2> "$work/show.err" || fail "show: $(cat "$work/show.err")"
[ "$(json "$work/show.json" 'j["inputs_failing"], j["inputs_failed"]')" = "1 1" ] ||
    fail "show --json while it fails: $(cat "$work/show.json")"
# A new sender to the failed input is refused until its deadline: exit 4.
(send small sc 10 $Y --deadline 3s) 2> "$work/sc.log"; st=$?
[ $st = 4 ] || fail "a sender to the failed input: exit $st, want 4: $(cat "$work/sc.log")"
grep -q "cannot store this input now" "$work/sc.log" || fail "sender sc: $(cat "$work/sc.log")"

# The healthy input's transfer runs to its end meanwhile.
wait $gpid || fail "the healthy input's sender exited $?: $(tail -3 "$work/ga.log")"
kill -0 $rpid 2>/dev/null || fail "the receiver exited"

# Room again: the input is tried again, says so, and its sender completes.
mount -o remount,size=64m "$work/small" || fail "remount"
i=0
while kill -0 $bpid 2>/dev/null; do
    i=$((i + 1)); [ $i -gt 1800 ] && fail "the failed input's sender did not complete after the remount"
    sleep 0.05
done
wait $bpid || fail "the failed input's sender exited $?: $(tail -3 "$work/sb.log")"
grep -q "input small ($work/small/in) stores again" "$work/r.log" || fail "no line says the input stores again"
[ "$(grep -c "input small .* cannot store" "$work/r.log")" = 1 ] || fail "the failure was told more than once"
stop_recv
[ $rstatus = 0 ] || fail "receiver exit $rstatus"
[ "$(json "$work/r.json" 'j["store"]["inputs_failed"], j["store"]["inputs_recovered"], j["store"]["inputs_failing"]')" = "1 1 0" ] ||
    fail "--stats: $(cat "$work/r.json")"
python3 tests/sh/plr_check.py "$work/good" $N $Z "$work/small/in" $M $Y > "$work/plr.txt" || fail "store: $(cat "$work/plr.txt")"
echo "input fails ok: $(grep -o 'input small .*' "$work/r.log" | head -2 | tr '\n' ' '); $(cat "$work/plr.txt")"
