#!/bin/sh
# Hostile load on a live receiver, on loopback: `pure-link send` transfers 1 KiB records to
# `pure-link recv` while build/bench/load_hostile (tests/bench/load_hostile.c says what it
# sends) throws COUNT datagrams at RATE per second at both.  Prints the bytes answered to
# anything unauthenticated, the LOSTs drawn, the X25519 operations the attack caused (from
# the receiver's --stats), the receiver's RSS before and after, and the transfer's goodput
# in the attack's phases as a fraction of the quiet phases between them.  Needs root (the
# capture on lo).
#
#   scripts/bench_hostile.sh [COUNT [RATE [PHASE_MS [RECORDS]]]]
#       defaults 1000000 datagrams, 50000 per second, in phases of 500 ms each followed by
#       as long a quiet one; records: until the attack ends (RECORDS > 0 sends that many and
#       waits for them instead)
#   WARMUP_MS (default 2000): the transfer alone first, before the RSS it starts from.
#   HOSTILE_JSON=FILE also writes every figure as one JSON object (tests/sh/test_hostile.sh).
set -eu
count=${1:-1000000}; rate=${2:-50000}; phase=${3:-500}; records=${4:-0}
name=hostile; . scripts/bench_lib.sh
G=$B/bench/load_hostile

RP=$($P keygen "$work/r.key"); SP=$($P keygen "$work/s.key"); QP=$($P keygen "$work/q.key")
# Two wired peers: the live sender, and one that never sends (its key id is attacked too).
printf 'peer %s *\npeer %s *\ninput logs 1 %s\n' "$SP" "$QP" "$work/store" > "$work/r.conf"
start_recv "$work/r.conf"

$G --to 127.0.0.1:$port --pid $rpid --store "$work/store" --live-pub "$SP" --silent-pub "$QP" \
    --receiver-pub "$RP" --count "$count" --rate "$rate" --phase-ms "$phase" --warmup-ms "${WARMUP_MS:-2000}" > "$work/gen.out" 2> "$work/gen.log" &
gpid=$!; pids="$pids $gpid"
i=0
until grep -q capturing "$work/gen.out" 2>/dev/null; do
    i=$((i + 1)); [ $i -gt 200 ] && die "the generator did not start"
    kill -0 $gpid 2>/dev/null || die "the generator exited"; sleep 0.05
done
generate=$records; [ "$records" -gt 0 ] || generate=1000000000
$P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 --generate "$generate" \
    --size 1024 --no-progress --stats="$work/send.json" 2> "$work/send.log" &
spid=$!; pids="$pids $spid"

waitfor $gpid $((2 * count / rate + 60))
[ "$st" = 0 ] || die "the generator exited $st"
if [ "$records" -gt 0 ]; then waitfor $spid 120; [ "$st" = 0 ] || die "send exited $st"
else kill -INT $spid; waitfor $spid 30; fi
stop_recv
# Datagrams of unknown keys or that do not open are told, but a flood of random key ids is
# not a line each: at most 16 lines a minute (the attack lasts less), and one summary.
drop_lines=$(grep -c 'pure-link recv: dropped' "$work/recv.log")
echo "receiver: $drop_lines log lines about dropped datagrams"
[ "$drop_lines" -le 17 ] || die "the receiver logged $drop_lines lines about dropped datagrams"
# A transfer of a known count must be in the store exactly once, byte for byte.
[ "$records" -gt 0 ] && { python3 tests/sh/plr_check.py "$work/store" "$records" 1024 || die "store check"; }

grep -v '^hostile ' "$work/gen.out"
python3 - "$work/gen.out" "$work/recv.json" "$work/send.json" "${HOSTILE_JSON:-}" <<'PY'
import json, sys
gen = json.loads([l for l in open(sys.argv[1]) if l.startswith("hostile ")][-1][8:])
rx, tx = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
ep = rx["endpoint"]
# The receiver's X25519s without an attack: the live peer's static one, made at its first
# packet, and one per epoch its run entered (an authentic OFFER each).
caused = ep["x25519_ops"] - 1 - ep["epochs"]
gen.update(x25519_ops=ep["x25519_ops"], receiver_epochs=ep["epochs"], x25519_caused=caused,
           x25519_bound=1, sender_lost_honoured=tx["sender"]["lost_notices_received"],
           sender_epochs=tx["sender"]["epochs"], records_stored=tx["records_stored"],
           dropped={k: ep[k] for k in ep if k.startswith("dropped_")}, lost_sent=ep["lost_notices_sent"],
           packets_received=ep["packets_received"])
print("X25519 at the receiver: %d, of which the transfer's own %d (1 static + %d epochs): %d caused by the "
      "attack (bound 1: the silent wired peer's static X25519, made once in a receiver's life; "
      "X25519 for an OFFER runs only once the packet authenticates, 4 per second per peer at most)"
      % (ep["x25519_ops"], 1 + ep["epochs"], ep["epochs"], caused))
print("receiver: receive pool peak %.1f MiB of %.1f MiB (record bytes held; its pages count in RSS once touched)"
      % (ep["receive_memory_bytes_peak"] / 2**20, ep["receive_memory_bytes"] / 2**20))
print("receiver drops: " + ", ".join("%s %d" % (k[8:], v) for k, v in gen["dropped"].items() if v))
print("sender: %d records stored, %d packets sent, %d declared lost, %d LOST honoured, %d epochs"
      % (tx["records_stored"], tx["sender"]["packets_sent"], tx["sender"]["packets_lost"],
         tx["sender"]["lost_notices_received"], tx["sender"]["epochs"]))
if sys.argv[4]:
    json.dump(gen, open(sys.argv[4], "w"))
PY
