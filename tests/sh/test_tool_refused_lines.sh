#!/bin/sh
# The receiver's line for a stream its store refuses says the store's reason (before, every
# refusal of an input that exists was told as a shape mismatch, "shape 1, the input's (line
# 3) is 1"):
#  1. an input whose directory holds PL_STORE_STREAMS_PER_INPUT_MOST (1,024) stream files:
#     the line names the directory and the limit;
#  2. a file of another key with the same first 96 bits and the same source: the line says
#     the file name is taken;
#  3. a shape that differs keeps its line, and each sender exits 4 at its --deadline.
# The record files are header-only ones written here (shims/store/STORE.md "Record file").
set -u
. tests/sh/tool_lib.sh
make_keys
# plr_files DIR COUNT KEYHEX SOURCE: COUNT header-only record files (source SOURCE0.. or, for
# COUNT 1, SOURCE itself) of the key KEYHEX, or of random keys when KEYHEX is '-'.
plr_files() {
    python3 - "$@" <<'PY'
import os, struct, sys
sys.path.insert(0, "tests/sh")
from plr_check import crc32c
d, count, keyhex, source = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
os.makedirs(d, exist_ok=True)
for i in range(count):
    key = os.urandom(32) if keyhex == "-" else bytes.fromhex(keyhex)
    src = (source if count == 1 else "%s%d" % (source, i)).encode()
    h = b"PLRECS1\n" + struct.pack("<II", 192, 0) + key + bytes([len(src)]) + src.ljust(64, b"\0")
    h += bytes([2]) + b"in".ljust(64, b"\0")
    h = h.ljust(188, b"\0")
    h += struct.pack("<I", crc32c(h))
    with open(os.path.join(d, "%s_%s.plr" % (key[:12].hex(), src.decode())), "wb") as f:
        f.write(h)
PY
}
plr_files "$work/full" 1024 - s
# SP with its 13th byte changed: the same file name for source 'gen'.
other=$(printf '%s' "$SP" | cut -c1-24)$(printf '%s' "$SP" | cut -c25-26 | tr '0-9a-f' '1-9a-f0')$(printf '%s' "$SP" | cut -c27-)
[ "$other" != "$SP" ] || fail "the other key is the same"
plr_files "$work/logs" 1 "$other" gen
printf 'peer %s *\ninput full 1 %s/full\ninput logs 1 %s/logs\ninput shaped 2 %s/shaped\n' "$SP" "$work" "$work" "$work" > "$work/r.conf"
start_recv r --config "$work/r.conf" --listen 127.0.0.1:0
$P verify "$work/full" > /dev/null || fail "the files written here do not verify: $($P verify "$work/full" | tail -2)"
sender() { $P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --shape 1 --generate 3 --no-progress \
    --deadline 2s "$@"; }
sender --input full --source one-more 2> "$work/s1.log"; st=$?
[ $st = 4 ] || fail "the sender to the full input exited $st, not 4"
sender --input logs --source gen 2> "$work/s2.log"; st=$?
[ $st = 4 ] || fail "the sender whose file name is taken exited $st, not 4"
sender --input shaped --source x 2> "$work/s3.log"; st=$?
[ $st = 4 ] || fail "the sender of another shape exited $st, not 4"
stop_recv
grep -q "source 'one-more', input 'full': the input's directory $work/full holds 1024 streams, the most one input takes: move the files of sources that ended out of it, or send this source to another input; told as no such input (REFUSED reason 1)$" \
    "$work/r.log" || fail "the full input's line: $(grep "input 'full'" "$work/r.log")"
grep -q "source 'gen', input 'logs': another key whose first 96 bits are this one's ($(printf '%s' "$SP" | cut -c1-24)) sends source 'gen' to this input, and the stream's file name (key prefix and source) is taken: send it under another source name; told as no such input (REFUSED reason 1)$" \
    "$work/r.log" || fail "the taken name's line: $(grep "input 'logs'" "$work/r.log")"
grep -q "source 'x', input 'shaped': shape 1, the input's (line 4) is 2$" "$work/r.log" ||
    fail "the shape's line: $(grep "input 'shaped'" "$work/r.log")"
[ "$(grep -c "refused a stream" "$work/r.log")" = 3 ] || fail "not one line per refused run: $(grep "refused a stream" "$work/r.log")"
echo "ok: $(grep -c "refused a stream" "$work/r.log") lines, each with its reason"
