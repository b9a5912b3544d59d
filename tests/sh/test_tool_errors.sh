#!/bin/sh
# Each bad input of the tool gets one line on stderr and its exit code (pure-link help),
# with nothing half-written left; a refused input logs exactly one line at the receiver.
set -u
. tests/sh/tool_lib.sh
make_keys

# expect CODE PATTERN CMD...: CMD exits CODE and says PATTERN in exactly one stderr line.
expect() {
    code=$1 pattern=$2; shift 2
    "$@" > "$work/out" 2> "$work/err"
    got=$?
    [ "$got" = "$code" ] || fail "$* exited $got, want $code: $(cat "$work/err")"
    n=$(grep -c -- "$pattern" "$work/err")
    [ "$n" = 1 ] && [ "$(wc -l < "$work/err")" = 1 ] || fail "$*: want one line with '$pattern', got: $(cat "$work/err")"
    echo "exit $got: $(cat "$work/err")"
}

# usage (2)
expect 2 "unknown option --colour" $P send --colour
expect 2 "missing --to" $P send --key "$work/s.key"
expect 2 "want a duration" $P send --key "$work/s.key" --to 127.0.0.1:9 --peer "$RP" --input x --deadline 5
expect 2 "want a size" $P send --key "$work/s.key" --to 127.0.0.1:9 --peer "$RP" --input x --generate 1 --size 3parsecs
expect 2 "unknown command" $P frobnicate
expect 2 "the port must be" $P send --key "$work/s.key" --to 127.0.0.1:70000 --peer "$RP" --input x

# key files (3): missing, malformed, readable by others, and keygen never overwrites
expect 3 "No such file" $P pub "$work/none.key"
printf 'not a key\n' > "$work/bad.key"; chmod 600 "$work/bad.key"
expect 3 "not a pure-link key" $P pub "$work/bad.key"
cp "$work/s.key" "$work/open.key"; chmod 644 "$work/open.key"
expect 3 "chmod 600" $P send --key "$work/open.key" --to 127.0.0.1:9 --peer "$RP" --input x
before=$(cat "$work/s.key")
expect 3 "never overwritten" $P keygen "$work/s.key"
[ "$(cat "$work/s.key")" = "$before" ] || fail "keygen changed an existing key"
[ -z "$(ls -a "$work" | grep pure-link-key)" ] || fail "keygen left a temporary file"
[ "$(stat -c %a "$work/r.key")" = 600 ] || fail "keygen mode"

# config errors (3) name the line
printf '# receiver\npeer %s *\npear %s *\n' "$SP" "$SP" > "$work/c1.conf"
expect 3 "c1.conf:3: unknown directive" $P recv --key "$work/r.key" --config "$work/c1.conf"
printf 'peer %s *\ninput logs one %s\n' "$SP" "$work/st" > "$work/c2.conf"
expect 3 "c2.conf:2: the shape is a number" $P recv --key "$work/r.key" --config "$work/c2.conf"
printf 'peer abc *\n' > "$work/c3.conf"
expect 3 "c3.conf:1: not a public key" $P recv --key "$work/r.key" --config "$work/c3.conf"
printf 'peer %s *\n' "$SP" > "$work/c4.conf"
expect 3 "no 'input' line" $P recv --key "$work/r.key" --config "$work/c4.conf"

# address in use (1)
printf 'peer %s *\ninput logs 1 %s\n' "$SP" "$work/store" > "$work/r.conf"
start_recv busy --config "$work/r.conf" --listen 127.0.0.1:0
printf 'peer %s *\ninput logs 1 %s\n' "$SP" "$work/store-busy" > "$work/r-busy.conf"  # the store is locked
$P recv --key "$work/r.key" --config "$work/r-busy.conf" --listen 127.0.0.1:$port --no-progress > /dev/null 2> "$work/err"
got=$?
[ "$got" = 1 ] || fail "address in use exited $got"
grep -q "Address already in use (still, after 2" "$work/err" || fail "address in use: $(cat "$work/err")"
# the line that it waits for the port (tests/sh/test_tool_port_wait.sh), then the error
[ "$(grep -vc 'stopped:' "$work/err")" = 2 ] || fail "address in use: not two lines: $(cat "$work/err")"
echo "exit 1: $(tail -1 "$work/err")"

# a refused input: the sender gives up at --deadline (4), the receiver logs one line
$P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input nope --shape 1 --generate 10 \
    --deadline 2s --no-progress 2> "$work/refused.log"
got=$?
[ "$got" = 4 ] || fail "refused send exited $got: $(cat "$work/refused.log")"
grep -q "gave up at --deadline" "$work/refused.log" || fail "refused: $(cat "$work/refused.log")"
stop_recv
n=$(grep -c "refused a stream" "$work/busy.log")
[ "$n" = 1 ] || fail "the receiver logged $n refusal lines, want 1"
grep -q "1 runs refused" "$work/busy.log" || fail "exit statistics miss the refusal"
echo "refused: $(grep 'refused a stream' "$work/busy.log")"

# a source this key may not use: the core refuses it without asking the host (reason 3),
# and the receiver logs one line for it all the same
printf 'peer %s only-this\ninput logs 1 %s\n' "$SP" "$work/store3" > "$work/r3.conf"
start_recv source --config "$work/r3.conf" --listen 127.0.0.1:0
$P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 --source other \
    --generate 10 --deadline 2s --no-progress 2> "$work/source-send.log"
got=$?
[ "$got" = 4 ] || fail "send from a source not allowed exited $got: $(cat "$work/source-send.log")"
stop_recv
n=$(grep -c "refused a stream.*may not send as that source" "$work/source.log")
[ "$n" = 1 ] || fail "source not allowed: the receiver logged $n refusal lines, want 1: $(cat "$work/source.log")"
grep -q "1 runs refused" "$work/source.log" || fail "exit statistics miss the source refusal"
echo "refused: $(grep 'refused a stream' "$work/source.log")"

# no receiver at all: --deadline passes (5)
$P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --generate 10 --deadline 500ms \
    --no-progress 2> "$work/err"
[ $? = 5 ] || fail "send to nobody: $(cat "$work/err")"
echo "exit 5: $(cat "$work/err")"

# a full disk: the store's files may not grow past 1 MiB (RLIMIT_FSIZE); the receiver
# says so once, refuses the input's stream (the sender exits 4 at its deadline) and goes
# on; what it kept is whole frames only, all claimed ones durable
rm -rf "$work/store"
(ulimit -f 2048; exec $P recv --key "$work/r.key" --config "$work/r.conf" --listen 127.0.0.1:0 --no-progress) \
    2> "$work/full.log" &
rpid=$!; pids="$pids $rpid"
wait_listening "$work/full.log" $rpid "full: the receiver"
$P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 --generate 5000 --size 1KiB \
    --deadline 3s --no-progress --stats="$work/full-send.json" 2> "$work/full-send.log"
got=$?
[ "$got" = 4 ] || fail "full disk: sender exited $got: $(cat "$work/full-send.log")"
grep -q "cannot store this input now" "$work/full-send.log" || fail "full disk: sender: $(cat "$work/full-send.log")"
kill -0 $rpid || fail "full disk: the receiver exited: $(cat "$work/full.log")"
stop_recv
[ "$rstatus" = 0 ] || fail "full disk: receiver exited $rstatus: $(cat "$work/full.log")"
grep -q "input logs ($work/store) cannot store: .*File too large" "$work/full.log" || fail "full disk: $(cat "$work/full.log")"
[ "$(grep -vc 'listening on\|stopped:' "$work/full.log")" = 1 ] || fail "full disk: more than one line: $(cat "$work/full.log")"
stored=$(json "$work/full-send.json" "j['records_stored']")
python3 - "$work/store" "$stored" <<'PY' || fail "full disk: store"
import glob, struct, sys
# A new stream's file is renamed into place once its first bytes are durable, and its
# records are claimed only after that: a disk full before it leaves only <name>.plr.tmp.
name = (glob.glob(sys.argv[1] + "/*.plr") or glob.glob(sys.argv[1] + "/*.plr.tmp"))[0]
assert name.endswith(".plr") or int(sys.argv[2]) == 0, "%s heard stored of an unnamed file" % sys.argv[2]
data = open(name, "rb").read()
at, n = struct.unpack_from("<I", data, 8)[0], 0
while at < len(data):
    assert data[at:at + 4] == b"PLF1" and len(data) - at >= 28, "a frame cut short at %d" % at
    at += 28 + struct.unpack_from("<I", data, at + 4)[0]
    assert at <= len(data), "a frame cut short"
    n += 1
assert n >= int(sys.argv[2]), "%d frames, but the sender heard %s stored" % (n, sys.argv[2])
print("full disk: %d whole frames kept, %s heard stored" % (n, sys.argv[2]))
PY
echo "full disk, exit 4: $(grep -v 'listening on\|stopped:' "$work/full.log")"
