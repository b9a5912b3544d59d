#!/bin/sh
# The receiver's line for datagrams of new runs that find every run slot held (dropped_no_slot,
# spec/protocol.md §8): such a sender waits unanswered and cannot tell why, so `pure-link recv`
# says it, in one line a minute at most.  One peer holds PURE_LINK_RUNS_PER_PEER (64) live runs:
# 64 senders of one key, each fed a record every 20 ms from its stdin, so none falls quiet and
# none can be taken over.  A 65th sender of the same key then finds no slot: the receiver counts
# its datagrams (`show --json`) and tells them in exactly one line while the 64 go on.  Once the
# 64 end, the 65th gets a slot and every record of all 65 is stored once.  The waits are
# bounds, not timings.
set -u
. tests/sh/tool_lib.sh
make_keys
printf 'peer %s *\ninput logs 1 %s/store\n' "$SP" "$work" > "$work/r.conf"
start_recv r --config "$work/r.conf" --listen 127.0.0.1:0 --control "$work/c.sock"

show() { $P show --json "$work/c.sock" > "$work/show.json" 2>/dev/null; }
no_slot() { show && json "$work/show.json" "j['dropped']['no_slot']"; }
slot_lines() { grep -c "datagrams\? of new runs.*every run slot is held by a live run" "$work/r.log"; }

# feed.py: starts the senders given after "--" with a pipe as stdin each, the first 64 at
# once and the last when the file "go" appears; writes "NAME-N" to each every 20 ms until the
# file "stop" appears, then closes their stdin and waits for them.  Each sender dies with it
# (the test's exit kills it) and has a --deadline besides.  It prints each sender's
# records written and its exit status.
cat > "$work/feed.py" <<'PY'
import ctypes, os, subprocess, sys, time
work, cmd = sys.argv[1], sys.argv[2:]
procs, sent = [], []
libc = ctypes.CDLL(None, use_errno=True)
def die_with_feeder():  # the test's exit kills the feeder: its senders go with it (PR_SET_PDEATHSIG)
    libc.prctl(1, 9, 0, 0, 0)
def start(i):
    log = open(os.path.join(work, "s%d.log" % i), "w")
    procs.append(subprocess.Popen(cmd + ["--source", "s%d" % i], stdin=subprocess.PIPE, stderr=log,
                                  preexec_fn=die_with_feeder))
    sent.append(0)
for i in range(64): start(i)
deadline = time.time() + 300
while not os.path.exists(os.path.join(work, "stop")) and time.time() < deadline:
    if len(procs) == 64 and os.path.exists(os.path.join(work, "go")): start(64)
    for i, p in enumerate(procs):
        try: p.stdin.write(b"s%d-%d\n" % (i, sent[i])); p.stdin.flush(); sent[i] += 1
        except BrokenPipeError: sys.exit("sender %d ended early: %s" % (i, p.wait()))
    time.sleep(0.02)
for p in procs: p.stdin.close()  # each then sends what it has read and exits
for i, p in enumerate(procs): print(i, sent[i], p.wait(timeout=120))
PY
python3 "$work/feed.py" "$work" $P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 \
    --no-progress --deadline 5min > "$work/feed.out" 2> "$work/feed.err" &
fpid=$!
pids="$pids $fpid"

# The 64 live: the receiver counts 64 runs opened.
i=0
until show && [ "$(json "$work/show.json" "j['streams_opened']" 2>/dev/null)" = 64 ]; do
    i=$((i + 1)); [ $i -gt 600 ] && fail "64 runs did not open: $(json "$work/show.json" "j['streams_opened']")"
    sleep 0.1
done
[ "$(slot_lines)" = 0 ] || fail "a slot line before any run found no slot: $(grep 'run slot' "$work/r.log")"
[ "$(no_slot)" = 0 ] || fail "datagrams found no slot with 64 runs: $(no_slot)"
touch "$work/go"
i=0
until [ "$(no_slot)" -gt 0 ] 2>/dev/null; do
    i=$((i + 1)); [ $i -gt 300 ] && fail "the 65th run's datagrams were not counted as no_slot"
    sleep 0.1
done
i=0
until [ "$(slot_lines)" = 1 ]; do
    i=$((i + 1)); [ $i -gt 50 ] && fail "no line for the datagrams that found no slot"
    sleep 0.1
done
grep -q "pure-link recv: dropped [0-9]* datagrams\? of new runs: every run slot is held by a live run (68 slots, at most 64 a peer); those senders wait unanswered until a run ends or falls quiet$" "$work/r.log" ||
    fail "the line: $(grep 'run slot' "$work/r.log")"
# The 65th goes on asking (its PTO probes), and more are counted: still one line in the minute.
n=$(no_slot)
i=0
until [ "$(no_slot)" -gt "$n" ] 2>/dev/null; do
    i=$((i + 1)); [ $i -gt 300 ] && fail "the waiting 65th run sent nothing more in 30 s"
    sleep 0.1
done
sleep 1.2   # past the next once-a-second read of the count
[ "$(slot_lines)" = 1 ] || fail "$(slot_lines) slot lines within a minute, want 1"
echo "65th run of one peer: $(no_slot) datagrams found no slot, one line"

touch "$work/stop"
wait $fpid || fail "the senders' feeder failed: $(cat "$work/feed.err")"
while read -r i sent code; do
    [ "$code" = 0 ] || fail "sender $i exited $code: $(cat "$work/s$i.log")"
    got=$($P cat --source "s$i" "$work/store" 2>/dev/null | wc -l)
    [ "$got" = "$sent" ] || fail "sender $i: $got of $sent records stored"
    $P cat --source "s$i" "$work/store" | awk -v s="s$i" '$0 != s "-" NR - 1 { exit 1 }' ||
        fail "sender $i: records out of order or twice"
done < "$work/feed.out"
[ "$(wc -l < "$work/feed.out")" = 65 ] || fail "$(wc -l < "$work/feed.out") senders reported, want 65"
echo "all 65 senders' records stored once, in order"
