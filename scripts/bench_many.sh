#!/bin/sh
# Many senders, one receiver, on loopback: build/bench/load_many runs SENDERS sender
# endpoints in one process (a key, a run and a UDP port each; tests/bench/load_many.c),
# each sending RECORDS records of SIZE bytes to one `pure-link recv`.  REFUSED of them are
# refused (half name an input the receiver lacks, half are wired for another source) and
# keep asking.  Checked from the receiver's store (shims/store/STORE.md): every record of every
# accepted sender stored exactly once, byte for byte, nothing of a refused one; from its
# log: one "refused a stream" line per refused sender, however many REFUSED it heard.
# Printed: the time, CPU per record and memory of the receiver and of the generator.
#
#   scripts/bench_many.sh [SENDERS [RECORDS [SIZE [REFUSED]]]]   (default 1000 100 200 20)
#   MANY_JSON=FILE also writes every figure as one JSON object (tests/sh/test_many_senders.sh).
# Exit 1 when a check fails.
set -eu
senders=${1:-1000}; records=${2:-100}; size=${3:-200}; refused=${4:-20}
name=many; . scripts/bench_lib.sh
G=$B/bench/load_many

refused_input=$((refused / 2)); refused_source=$((refused - refused_input))
RP=$($P keygen "$work/r.key")
$G keys 1 "$senders" > "$work/keys.txt"
# The last refused_source senders may send only as source "other"; they send as "out".
awk -v n="$senders" -v o="$refused_source" '{ print "peer " $1 " " (NR > n - o ? "other" : "*") }' \
    "$work/keys.txt" > "$work/r.conf"
printf 'input logs 1 %s\n' "$work/store" >> "$work/r.conf"
start_recv "$work/r.conf"

gst=0
$G send --to 127.0.0.1:$port --receiver-pub "$RP" --seed 1 --senders "$senders" --records "$records" \
    --size "$size" --refused-input "$refused_input" --refused-source "$refused_source" --pid $rpid \
    --deadline-s "${DEADLINE_S:-120}" > "$work/gen.out" 2> "$work/gen.log" || gst=$?
stop_recv
grep -v '^many ' "$work/gen.out" || true
[ "$gst" = 0 ] || die "the generator exited $gst"

python3 - "$work" "$senders" "$records" "$size" "$refused" "${MANY_JSON:-}" <<'PY'
import glob, json, os, struct, sys
work, n, records, size, refused, out = sys.argv[1], *map(int, sys.argv[2:6]), sys.argv[6]
keys = [l.strip() for l in open(os.path.join(work, "keys.txt"))]
index = {bytes.fromhex(k): i for i, k in enumerate(keys)}
gen = json.loads([l for l in open(os.path.join(work, "gen.out")) if l.startswith("many ")][-1][5:])
rx = json.load(open(os.path.join(work, "recv.json")))

def expected(k, j):
    body = bytes((7 * k + 13 * j + i) & 0xff for i in range(size))
    head = struct.pack("<II", k, j)
    return head[:size] + body[len(head):] if size > len(head) else head[:size]

seen, problems = {}, []
for path in glob.glob(os.path.join(work, "store", "*.plr")):
    data = open(path, "rb").read()
    k = index.get(data[16:48])
    if data[:8] != b"PLRECS1\n" or k is None:
        problems.append("%s: not a record file of a known sender" % path); continue
    at = struct.unpack_from("<I", data, 8)[0]
    while at < len(data):
        if data[at:at + 4] != b"PLF1" or len(data) - at < 28:
            problems.append("%s: a frame broken at %d" % (path, at)); break
        length, run, rec = struct.unpack_from("<IQQ", data, at + 4)
        body = data[at + 28:at + 28 + length]
        if body != expected(k, rec):
            problems.append("sender %d record %d: bytes differ" % (k, rec))
        seen.setdefault(k, []).append(rec)
        at += 28 + length
accepted = n - refused
twice = sum(len(v) - len(set(v)) for v in seen.values())
missing = sum(len(set(range(records)) - set(seen.get(k, []))) for k in range(accepted))
from_refused = sum(len(seen.get(k, [])) for k in range(accepted, n))
lines = [l for l in open(os.path.join(work, "recv.log")) if "refused a stream" in l]
per_sender = [sum(1 for l in lines if ("peer %s..." % keys[k][:16]) in l) for k in range(accepted, n)]
stored = sum(len(set(v)) for v in seen.values())
gen.update(store_records=stored, store_twice=twice, store_missing=missing, store_from_refused=from_refused,
           store_problems=problems[:5], refusal_lines=len(lines), refusal_lines_per_sender=sorted(set(per_sender)),
           listener_refused=rx["endpoint"]["listener_refused"], dropped_no_slot=rx["endpoint"]["dropped_no_slot"])
print("store: %d records of %d accepted senders, %d stored twice, %d missing, %d from refused senders%s"
      % (stored, accepted, twice, missing, from_refused, "" if not problems else "; " + problems[0]))
print("refusal log: %d lines for %d refused senders (lines per sender: %s); %d REFUSED notices sent"
      % (len(lines), refused, sorted(set(per_sender)), rx["endpoint"]["listener_refused"]))
if out:
    json.dump(gen, open(out, "w"))
ok = not problems and twice == 0 and missing == 0 and from_refused == 0 and len(lines) == refused \
     and all(c == 1 for c in per_sender)
sys.exit(0 if ok else 1)
PY
