#!/bin/sh
# Option values as getopt's users expect them, and every bad one refused before the first
# datagram:
#  1. --stats FILE (a space, not '=') takes FILE as its value, on send (where FILE was sent
#     as a record before) and recv; --stats alone, or followed by another option, is stdout;
#  2. a --stats, --qlog or --keylog path that cannot be written fails at start (exit 1, one
#     line naming it), not at exit after everything was sent;
#  3. --deadline 0 needs a unit like every duration; --to HOST:0 is refused; --io bogus is
#     a usage error: each exit 2 in one line.
set -u
. tests/sh/tool_lib.sh
make_keys
printf 'peer %s *\ninput logs 1 %s\n' "$SP" "$work/store" > "$work/r.conf"

# expect CODE PATTERN CMD...: CMD exits CODE and says PATTERN in exactly one stderr line.
expect() {
    code=$1 pattern=$2; shift 2
    timeout -s KILL 20 "$@" > "$work/out" 2> "$work/err" < /dev/null
    got=$?
    [ "$got" = "$code" ] || fail "$* exited $got, want $code: $(cat "$work/err")"
    n=$(grep -c -- "$pattern" "$work/err")
    [ "$n" = 1 ] && [ "$(wc -l < "$work/err")" = 1 ] || fail "$*: want one line with '$pattern', got: $(cat "$work/err")"
    echo "exit $got: $(cat "$work/err")"
}

# 1.
start_recv r --config "$work/r.conf" --listen 127.0.0.1:0 --stats "$work/recv.json"
S="$P send --key $work/s.key --to 127.0.0.1:$port --peer $RP --input logs --shape 1 --deadline 20s"
printf 'one\ntwo\n' | timeout -s KILL 30 $S --stats "$work/send.json" --no-progress 2> "$work/send.log" ||
    fail "send --stats FILE: $(cat "$work/send.log")"
[ "$(json "$work/send.json" "j['records_stored']")" = 2 ] || fail "send --stats FILE: not 2 records in it"
printf 'three\n' | timeout -s KILL 30 $S --stats --no-progress > "$work/stdout.json" 2> "$work/send.log" ||
    fail "send --stats --no-progress: $(cat "$work/send.log")"
[ "$(json "$work/stdout.json" "j['records_stored']")" = 1 ] || fail "send --stats OPTION: no JSON on stdout"
stop_recv
[ "$rstatus" = 0 ] || fail "receiver exit $rstatus"
[ "$(json "$work/recv.json" "j['store']['records_durable']")" = 3 ] || fail "recv --stats FILE: not 3 records"
python3 - "$work/store" <<'PY' || fail "the store holds other records than one, two, three"
import glob, struct, sys
recs = []
for name in glob.glob(sys.argv[1] + "/*.plr"):
    data = open(name, "rb").read()
    at = struct.unpack_from("<I", data, 8)[0]
    while at < len(data):
        n = struct.unpack_from("<I", data, at + 4)[0]
        recs.append(data[at + 28:at + 28 + n]); at += 28 + n
assert sorted(recs) == [b"one", b"three", b"two"], recs
PY
echo "1. --stats FILE with a space: the statistics in FILE, the records one, two, three stored"

# 2. (the receiver is gone: a check made only at exit would come after --deadline, exit 5)
S="$P send --key $work/s.key --to 127.0.0.1:$port --peer $RP --input logs --shape 1 --generate 5 --deadline 3s"
expect 1 "--stats $work/no/s.json: No such file" $S --stats "$work/no/s.json"
expect 1 "--stats $work/no/s.json: No such file" $S --stats="$work/no/s.json"
expect 1 "--qlog $work/no/q: No such file" $S --qlog "$work/no/q"
expect 1 "--keylog $work/no/k: No such file" $S --keylog "$work/no/k"
expect 1 "--stats $work/no/r.json: No such file" \
    $P recv --key "$work/r.key" --config "$work/r.conf" --listen 127.0.0.1:0 --stats "$work/no/r.json"

# 3.
expect 2 "--deadline '0': want a duration" $S --deadline 0
expect 2 "port must be 1..65535" $S --to 127.0.0.1:0
expect 2 "--io bogus: want auto, posix or uring" $S --io bogus
expect 2 "--io bogus: want auto, posix or uring" $P recv --key "$work/r.key" --config "$work/r.conf" --io bogus
