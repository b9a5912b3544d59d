#!/bin/sh
# Log lines carry the time (ISO 8601, UTC, milliseconds) when the tool runs outside systemd,
# and none when JOURNAL_STREAM says journald reads stderr (it stamps each line itself).
set -u
. tests/sh/tool_lib.sh
make_keys
stamp='^[0-9]\{4\}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\.[0-9]\{3\}Z pure-link '

env -u JOURNAL_STREAM $P send --key "$work/s.key" 2> "$work/plain.err"
grep -q "${stamp}send: missing --to" "$work/plain.err" || fail "no time on a log line: $(cat "$work/plain.err")"
# The stamp is now, not a constant: within a minute of the shell's clock.
then=$(date -u -d "$(cut -c1-19 "$work/plain.err")" +%s) || fail "the stamp is not a date date(1) reads"
now=$(date -u +%s)
[ $((now - then)) -ge 0 ] && [ $((now - then)) -lt 60 ] || fail "the stamp says $then, the clock $now"

JOURNAL_STREAM=8:12345 $P send --key "$work/s.key" 2> "$work/journal.err"
grep -qx "pure-link send: missing --to .*" "$work/journal.err" || fail "under journald: $(cat "$work/journal.err")"

# A receiver's lines, from start to stop, all stamped.
printf 'peer %s *\ninput logs 1 %s/store\n' "$SP" "$work" > "$work/r.conf"
unset JOURNAL_STREAM
start_recv r --config "$work/r.conf" --listen 127.0.0.1:0
stop_recv
[ "$rstatus" = 0 ] || fail "receiver exit $rstatus"
n=$(wc -l < "$work/r.log")
[ "$n" -ge 2 ] && [ "$(grep -c "${stamp}recv: " "$work/r.log")" = "$n" ] || fail "unstamped receiver lines: $(cat "$work/r.log")"
echo "log time ok: $(head -1 "$work/plain.err"); under journald: $(cat "$work/journal.err")"
