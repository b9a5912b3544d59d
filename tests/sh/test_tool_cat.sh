#!/bin/sh
# `pure-link cat` and `pure-link verify` over a store filled by a real send/recv on loopback:
#  1. lines, --framed and --json give back byte for byte what was sent (text and binary
#     records: newlines, zero bytes, an empty record, records of 200 KiB and 1.5 MiB);
#     cat --framed | send --framed stores the same records again; a record with a newline
#     is refused in the line format (exit 2); --from, --source, --peer, a directory's order;
#  2. --follow: a file that does not exist yet, records appended by two runs while it runs,
#     a torn frame waited for until its bytes come, SIGINT ends it with 0;
#  3. verify: a clean store is 0; one byte flipped in the middle is the exact offset and
#     exit 7 (cat stops there with 7 too); a file cut mid-frame is a torn tail (exit 0);
#  4. beside a live transfer: cat --follow writes every record once, verify sees no damage;
#  5. bad arguments: exit 2 with one line.
set -u
. tests/sh/tool_lib.sh
make_keys
store="$work/store"
printf 'peer %s *\ninput logs 1 %s\n' "$SP" "$store" > "$work/r.conf"
start_recv recv --config "$work/r.conf" --listen 127.0.0.1:0
send() { $P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 --no-progress \
    --deadline 30s "$@"; }
key24=$(printf %.24s "$SP")

# Text: 1,000 lines (one empty); binary: 300 records with every byte value, one empty.
awk 'BEGIN { for (i = 0; i < 1000; i++) print (i == 7 ? "" : "line " i " " substr("abcdefghijklmnopqrstuvwxyz", 1, i % 27)) }' \
    > "$work/text.txt"
python3 - "$work/bin.framed" <<'EOF'
import random, struct, sys
rnd = random.Random(28)
recs = [bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 700))) for _ in range(300)]
recs[:10] = [r.replace(b"\n", b"") for r in recs[:10]]           # the first newline is record 10's
recs[3] = b""
recs[10] = b"\n\n\x00x\n"
recs[100] = bytes(rnd.randrange(256) for _ in range(200 << 10))   # over the store's 64 KiB buffered frame
recs[200] = bytes(range(256)) * (6 << 10)                         # 1.5 MiB: over cat's 1 MiB read
open(sys.argv[1], "wb").write(b"".join(struct.pack(">I", len(r)) + r for r in recs))
EOF
send --source text < "$work/text.txt" 2> "$work/s1.log" || fail "send text exited $?"
send --source bin --framed < "$work/bin.framed" 2> "$work/s2.log" || fail "send bin exited $?"

# 1. Each format, byte for byte.
$P cat --source text "$store" > "$work/text.out" 2> "$work/cat.log" || fail "cat text exited $?"
cmp "$work/text.txt" "$work/text.out" || fail "cat (lines) differs from what was sent"
$P cat --framed --source bin "$store" > "$work/bin.out" || fail "cat --framed exited $?"
cmp "$work/bin.framed" "$work/bin.out" || fail "cat --framed differs from what was sent"
# cat only reads: no crypto set-up, whose blocking getrandom would hold it until the kernel's
# random pool is ready (early in a boot).  glibc's own asks do not block (GRND_NONBLOCK).
if command -v strace > /dev/null && strace -o /dev/null true 2> /dev/null; then
    # LeakSanitizer will not run under ptrace (make test-asan): leaks are left to the other runs.
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    strace -f -qq -e trace=getrandom -o "$work/cat.strace" $P cat --framed --source bin "$store" > "$work/bin.out2" ||
        fail "cat --framed under strace exited $?"
    cmp "$work/bin.framed" "$work/bin.out2" || fail "cat --framed under strace differs"
    ! grep getrandom "$work/cat.strace" | grep -qv GRND_NONBLOCK || fail "cat waits for random bytes: $(cat "$work/cat.strace")"
    echo "1. cat asks for no random bytes that could block ($(grep -c getrandom "$work/cat.strace") getrandom calls, each GRND_NONBLOCK)"
else
    echo "1. (no strace here: not checked that cat asks for no random bytes)"
fi
$P cat --json --source bin "$store" > "$work/bin.json" || fail "cat --json exited $?"
python3 - "$work/bin.framed" "$work/bin.json" "$SP" <<'EOF' || fail "cat --json"
import base64, json, struct, sys
raw = open(sys.argv[1], "rb").read()
want, at = [], 0
while at < len(raw):
    n = struct.unpack_from(">I", raw, at)[0]; want.append(raw[at + 4:at + 4 + n]); at += 4 + n
got = [json.loads(l) for l in open(sys.argv[2])]
assert len(got) == len(want), (len(got), len(want))
offset = 192
for i, (j, w) in enumerate(zip(got, want)):
    assert base64.b64decode(j["base64"]) == w, "record %d's bytes" % i
    assert (j["index"], j["record"], j["len"], j["offset"]) == (i, i, len(w), offset), j
    assert j["source"] == "bin" and j["input"] == "logs" and j["peer"] == sys.argv[3], j
    assert len(j["run"]) == 16 and j["run"] == got[0]["run"] and j["file"].endswith("_bin.plr"), j
    offset += 28 + len(w)
EOF
$P cat --framed --source bin "$store" | send --source again --framed 2> "$work/s3.log" || fail "cat | send exited $?"
$P cat --framed --source again "$store" | cmp "$work/bin.framed" - || fail "cat --framed | send --framed did not store the same"
$P cat --source bin "$store" > "$work/lines.out" 2> "$work/nl.log"; st=$?
[ $st = 2 ] || fail "a record with a newline in the line format: exit $st, want 2"
[ "$(wc -l < "$work/nl.log")" = 1 ] && grep -q "_bin.plr: record 10 (offset [0-9]*) holds a newline.*--framed or --json" \
    "$work/nl.log" || fail "the newline refusal: $(cat "$work/nl.log")"
[ "$(wc -l < "$work/lines.out")" = 10 ] || fail "records before the refused one: $(wc -l < "$work/lines.out") lines, want 10"
echo "1. lines, --framed, --json byte for byte; cat --framed | send --framed the same; a newline refused"

$P cat --from 500 --source text "$store" | cmp - "$(tail -n +501 "$work/text.txt" > "$work/tail.txt"; echo "$work/tail.txt")" ||
    fail "--from 500"
[ "$($P cat --from 1000 --source text "$store" | wc -c)" = 0 ] || fail "--from past the end wrote something"
$P cat --json "$store" | python3 -c '
import json, sys
files = [json.loads(l)["file"].rsplit("/", 1)[1] for l in sys.stdin]
order = [f for i, f in enumerate(files) if i == 0 or files[i - 1] != f]
assert order == sorted(set(files)) and len(order) == 3, order
assert len(files) == 1000 + 300 + 300, len(files)' || fail "a directory: every file once, in name order"
[ "$($P cat --json --peer "$(printf %.10s "$SP")" "$store" | wc -l)" = 1600 ] || fail "--peer with the sender's key prefix"
other=$(printf %.12s "$RP")
[ "$other" != "$(printf %.12s "$SP")" ] && [ "$($P cat --peer "$other" "$store" | wc -c)" = 0 ] || fail "--peer of another key"
echo "   --from, --peer, a directory in name order"

# 2. --follow: the file is made later, two runs append while cat runs; SIGINT is exit 0.
ffile="$store/${key24}_follow.plr"
$P cat --follow "$ffile" > "$work/follow.out" 2> "$work/follow.log" &
cpid=$!; pids="$pids $cpid"
seq 1 300 > "$work/f1.txt"; seq 301 500 > "$work/f2.txt"
sleep 0.3
send --source follow < "$work/f1.txt" 2> "$work/s4.log" || fail "send follow 1"
# SIGINT to a cat --follow and its exit status in $st (5 s at most: the shell starts
# background jobs with SIGINT ignored, and a cat that did not take it back would not stop).
stop_cat() {
    kill -INT $1
    i=0
    while kill -0 $1 2>/dev/null; do i=$((i + 1)); [ $i -gt 100 ] && fail "cat --follow did not stop on SIGINT"; sleep 0.05; done
    wait $1; st=$?
}
waitlines() {
    i=0
    until [ "$(cat "$1" 2>/dev/null | wc -l)" -ge "$2" ]; do i=$((i + 1)); [ $i -gt 200 ] && fail "cat --follow: $(wc -l < "$1") of $2"; sleep 0.05; done
}
waitlines "$work/follow.out" 300
send --source follow < "$work/f2.txt" 2> "$work/s5.log" || fail "send follow 2"
waitlines "$work/follow.out" 500
stop_cat $cpid
[ $st = 0 ] || fail "cat --follow stopped by SIGINT exited $st"
seq 1 500 | cmp - "$work/follow.out" || fail "cat --follow wrote other records"
grep -q "waiting for it" "$work/follow.log" || fail "cat --follow said nothing of the missing file: $(cat "$work/follow.log")"

# A torn frame at the end is not written out; --follow writes it once its bytes come.
tfile="$store/${key24}_text.plr"
last=$($P cat --json --source text "$store" | tail -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["offset"])')
head -c $((last + 20)) "$tfile" > "$work/torn.plr"
$P cat "$work/torn.plr" | cmp - "$(head -n 999 "$work/text.txt" > "$work/999.txt"; echo "$work/999.txt")" ||
    fail "cat of a file cut mid-frame: not the 999 whole records"
$P cat --follow "$work/torn.plr" > "$work/torn.out" 2> "$work/torn.log" &
cpid=$!; pids="$pids $cpid"
waitlines "$work/torn.out" 999
sleep 0.3
[ "$(wc -l < "$work/torn.out")" = 999 ] || fail "cat --follow wrote the torn frame"
tail -c +$((last + 21)) "$tfile" >> "$work/torn.plr"
waitlines "$work/torn.out" 1000
stop_cat $cpid
[ $st = 0 ] && cmp "$work/text.txt" "$work/torn.out" || fail "cat --follow after the torn frame came whole: exit $st"
# A frame appended wakes cat --follow through inotify, not its 100 ms poll: while it waits,
# it holds a watch of the file's directory (its inotify descriptor's fdinfo names the
# directory's inode), and the record appended is written after the 999 before it.
head -c $last "$tfile" > "$work/ino.plr"
$P cat --follow "$work/ino.plr" > "$work/ino.out" 2> "$work/ino.log" &
cpid=$!; pids="$pids $cpid"
waitlines "$work/ino.out" 999
dino=$(printf '%x' "$(stat -c %i "$work")"); i=0
until cat /proc/$cpid/fdinfo/* 2>/dev/null | grep -q "^inotify wd:[0-9]* ino:$dino "; do
    i=$((i + 1)); [ $i -gt 100 ] && fail "cat --follow watches no directory of $work (inotify)"; sleep 0.05
done
tail -c +$((last + 1)) "$tfile" >> "$work/ino.plr"
waitlines "$work/ino.out" 1000
stop_cat $cpid
[ $st = 0 ] && cmp "$work/text.txt" "$work/ino.out" || fail "cat --follow of a record appended under inotify: exit $st"
echo "2. --follow: a file made later, two runs appended, a torn frame waited for, a record appended seen by inotify; SIGINT exit 0"

# 3. verify
$P verify "$store" > "$work/v.out"; st=$?
[ $st = 0 ] || fail "verify of a clean store exited $st: $(cat "$work/v.out")"
[ "$(grep -c ': ok, ' "$work/v.out")" = 4 ] && grep -q '^verified 4 files: 2100 records, .* 0 with a bad frame, 0 with a torn tail$' \
    "$work/v.out" || fail "verify's lines: $(cat "$work/v.out")"
# One byte flipped inside record 600's bytes: its offset, exit 7; cat stops there with 7.
offsets=$($P cat --json --source text --from 600 "$store" | head -2 | python3 -c 'import json,sys; print(*(json.loads(l)["offset"] for l in sys.stdin))')
bad=${offsets% *} next=${offsets#* }
cp "$tfile" "$work/bad.plr"
printf 'X' | dd of="$work/bad.plr" bs=1 seek=$((bad + 29)) conv=notrunc 2>/dev/null
$P verify "$work/bad.plr" > "$work/v.out"; st=$?
[ $st = 7 ] || fail "verify of a flipped byte exited $st, want 7"
grep -q "^$work/bad.plr: bad frame at offset $bad: CRC32C mismatch (a valid frame follows at offset $next; 600 records before it)$" \
    "$work/v.out" || fail "verify's line for a flipped byte (frame at $bad): $(cat "$work/v.out")"
$P cat "$work/bad.plr" > "$work/bad.out" 2> "$work/bad.log"; st=$?
[ $st = 7 ] && [ "$(wc -l < "$work/bad.out")" = 600 ] && grep -q "bad frame at offset $bad" "$work/bad.log" ||
    fail "cat of a flipped byte: exit $st, $(wc -l < "$work/bad.out") records: $(cat "$work/bad.log")"
# A length byte flipped: the same offset, damage and not a tail, though the frame now seems
# to run past the end of the file (a valid one follows).
for at in "6 the file ends inside its record" "7 its length is over 16 MiB"; do
    cp "$tfile" "$work/bad2.plr"
    printf '\377' | dd of="$work/bad2.plr" bs=1 seek=$((bad + ${at%% *})) conv=notrunc 2>/dev/null
    $P verify "$work/bad2.plr" > "$work/v.out"; st=$?
    [ $st = 7 ] && grep -q "bad frame at offset $bad: ${at#* } (a valid frame follows at offset $next;" "$work/v.out" ||
        fail "length byte ${at%% *} flipped: $st $(cat "$work/v.out")"
done
$P verify "$work/torn.plr" "$work/bad.plr" > /dev/null; [ $? = 7 ] || fail "verify of a good and a bad file: not 7"
head -c $((last + 20)) "$tfile" > "$work/torn.plr"
$P verify "$work/torn.plr" > "$work/v.out"; st=$?
[ $st = 0 ] && grep -q "^$work/torn.plr: torn tail at offset $last: the file ends inside its header (20 bytes after 999 whole records" \
    "$work/v.out" && grep -q "0 with a bad frame, 1 with a torn tail$" "$work/v.out" || fail "a torn tail: exit $st, $(cat "$work/v.out")"
head -c $((last + 30)) "$tfile" > "$work/torn.plr"
$P verify "$work/torn.plr" | grep -q "torn tail at offset $last: the file ends inside its record" || fail "a tail cut in its record"
# The checkpoint index beside a record file (STORE.md): one that holds (its CRC32C, and a
# whole frame of the length it names ends where it says) is reported ok; one that ends a byte
# short of that frame, or has a byte flipped, is reported bad in its own line; the records
# are whole all the same (the receiver reads the file instead), so the exit stays 0.
cp "$tfile" "$work/idx.plr"
index() {  # SHIFT: an index of no runs for idx.plr, its end SHIFT bytes off its last frame's
    python3 - "$work/idx.plr" "$work/idx.pli" "$1" <<'PY'
import struct, sys
sys.path.insert(0, "tests/sh")
from plr_check import crc32c
data = open(sys.argv[1], "rb").read()
at, last = struct.unpack_from("<I", data, 8)[0], 0
while at + 28 <= len(data):
    last = 28 + struct.unpack_from("<I", data, at + 4)[0]
    at += last
b = b"PLINDEX1" + struct.pack("<QQQ", 0, at + int(sys.argv[3]), last)
open(sys.argv[2], "wb").write(b + struct.pack("<I", crc32c(b)))
PY
}
size=$(stat -c %s "$work/idx.plr")
index 0
$P verify "$work/idx.plr" > "$work/v.out"; st=$?
[ $st = 0 ] && grep -q "^$work/idx.pli: index ok: 0 runs, to offset $size$" "$work/v.out" &&
    grep -q "1 indexes (0 bad); 0 with a bad frame" "$work/v.out" || fail "a good index: exit $st, $(cat "$work/v.out")"
index -1
$P verify "$work/idx.plr" > "$work/v.out"; st=$?
[ $st = 0 ] && grep -q "^$work/idx.pli: bad index: no whole frame of the length it names ends where it says (the receiver ignores it" \
    "$work/v.out" && grep -q "1 indexes (1 bad)" "$work/v.out" || fail "an index that ends mid-frame: exit $st, $(cat "$work/v.out")"
index 0
printf '\001' | dd of="$work/idx.pli" bs=1 seek=20 conv=notrunc 2>/dev/null
$P verify "$work/idx.plr" > "$work/v.out"; st=$?
[ $st = 0 ] && grep -q "^$work/idx.pli: bad index: CRC32C (the receiver ignores it" "$work/v.out" ||
    fail "an index with a flipped byte: exit $st, $(cat "$work/v.out")"
echo "3. verify: clean 0; a flipped byte at offset $bad, exit 7; a torn tail at $last, exit 0; an index ok, one a byte short, one flipped"

# 4. Beside a live transfer: cat --follow from before the first record writes every record
# once, byte for byte; verify while frames are being appended never calls them damage.
$P cat --follow --framed --source live "$store" > "$work/live.out" 2> "$work/live.log" &
cpid=$!; pids="$pids $cpid"
send --source live --generate 50000 --size 1000 2> "$work/s6.log" &
spid=$!; pids="$pids $spid"
verifies=0
while kill -0 $spid 2>/dev/null && [ $verifies -lt 400 ]; do
    $P verify "$store" > "$work/v.out"; st=$?
    [ $st = 0 ] || fail "verify beside a transfer exited $st: $(cat "$work/v.out")"
    verifies=$((verifies + 1))
done
wait $spid || fail "send live exited $?"
i=0
until [ "$(stat -c %s "$work/live.out")" -ge $((50000 * 1004)) ]; do
    i=$((i + 1)); [ $i -gt 200 ] && fail "cat --follow of a live transfer: $(stat -c %s "$work/live.out") bytes"; sleep 0.05
done
stop_cat $cpid
[ $st = 0 ] || fail "cat --follow of a live transfer exited $st"
python3 tests/sh/plr_check.py --framed 50000 1000 < "$work/live.out" > "$work/live.txt" || fail "$(cat "$work/live.txt")"
echo "4. beside a live transfer: cat --follow wrote 50000 records once; $verifies verify runs said no damage"

# 5. Bad arguments: exit 2, one line.
usage() {
    "$@" > /dev/null 2> "$work/u.log"; st=$?
    [ $st = 2 ] && [ "$(wc -l < "$work/u.log")" = 1 ] || fail "'$*' exited $st: $(cat "$work/u.log")"
}
usage $P cat
usage $P cat --bogus "$store"
usage $P cat --framed --json "$store"
usage $P cat --from x "$store"
usage $P cat --from
usage $P cat --peer zz "$store"
usage $P cat --source "" "$store"
usage $P verify
usage $P verify --bogus "$store"
$P cat "$work/nothing" 2> "$work/u.log"; st=$?
[ $st = 1 ] && grep -q "nothing: No such file or directory" "$work/u.log" || fail "cat of a missing file: $st"
# TOOL_CAT_FILES_MOST: a directory of 4,097 files named *.plr is refused in one line, exit 1.
mkdir "$work/many" && (cd "$work/many" && seq -f '%.0f.plr' 1 4097 | xargs touch)
for cmd in cat verify; do
    $P $cmd "$work/many" > /dev/null 2> "$work/u.log"; st=$?
    [ $st = 1 ] && [ "$(wc -l < "$work/u.log")" = 1 ] && grep -q "more than 4096 record files" "$work/u.log" ||
        fail "$cmd of 4097 files: exit $st, $(cat "$work/u.log")"
done
rm "$work/many/4097.plr"
$P verify "$work/many" 2> /dev/null | grep -q '^verified 4096 files: 0 records, .*4096 with a bad frame' || fail "verify of 4096 files"
$P help cat | grep -q -- "--follow" && $P help verify | grep -q "torn tail" || fail "help cat, help verify"
stop_recv
echo "5. bad arguments: exit 2 with one line"
