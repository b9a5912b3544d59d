#!/bin/sh
# The receiver's lines for datagrams it drops by their key: a datagram that claims a key id no
# peer line has, or a wired key id whose datagram does not open, is counted (dropped_unknown_key,
# dropped_auth: `show --json` and --stats) and told in at most one line per key id a minute,
# and in at most 16 lines a minute for all ids together.  The datagrams come from a script on
# loopback, each a sender packet header (spec/wire.md §3.1) and 17 random bytes:
#  1. a burst of 10 for the wired sender's key id: one line ("did not open"), 10 counted;
#  2. bursts of 5 for two other key ids: one line each ("no peer line"), 10 counted;
#  3. 3 each for 20 more key ids: 13 lines more (16 in all this minute), 60 counted.
# Each line names the key id as the packet carries it (FNV-1a-32 of the sender's public key).
set -u
. tests/sh/tool_lib.sh
make_keys
printf 'peer %s *\ninput logs 1 %s/store\n' "$SP" "$work" > "$work/r.conf"
start_recv r --config "$work/r.conf" --listen 127.0.0.1:0 --control "$work/c.sock" --stats="$work/r.json"

# burst PORT FIRST_ID IDS EACH: EACH datagrams for each of IDS key ids from FIRST_ID (hex).
burst() {
    python3 - "$@" <<'PY'
import os, socket, sys
port, first, ids, each = int(sys.argv[1]), int(sys.argv[2], 16), int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(ids):
    for _ in range(each):
        head = bytes([1, 0]) + ((first + i) & 0xffffffff).to_bytes(4, "big") + os.urandom(8) + b"\x00"
        s.sendto(head + os.urandom(17), ("127.0.0.1", port))
PY
}
# wait_dropped KIND N: until `show --json` counts N datagrams dropped as KIND (5 s at most).
wait_dropped() {
    i=0
    while :; do
        $P show --json "$work/c.sock" > "$work/show.json" 2>/dev/null &&
            [ "$(json "$work/show.json" "j['dropped']['$1']")" = "$2" ] && return 0
        i=$((i + 1)); [ $i -gt 100 ] && fail "show counts $1 $(json "$work/show.json" "j['dropped']['$1']"), want $2"
        sleep 0.05
    done
}
lines() { grep -c "$1" "$work/r.log"; }

sid=$(python3 -c "
import sys
h = 0x811c9dc5
for b in bytes.fromhex(sys.argv[1]):
    h = ((h ^ b) * 0x01000193) & 0xffffffff
print('%08x' % h)" "$SP")

burst $port $sid 1 10
wait_dropped auth 10
n=$(lines "with key id $sid that did not open")
[ "$n" = 1 ] || fail "a burst of 10 for the wired key id $sid: $n lines, want 1"
grep -q "pure-link recv: dropped 1 datagram from 127.0.0.1:[0-9]* with key id $sid that did not open: the sender's --peer is not this receiver's public key (pure-link pub), or they were damaged or forged$" "$work/r.log" ||
    fail "the line for $sid: $(grep "$sid" "$work/r.log")"

burst $port 0a000001 2 5
wait_dropped unknown_key 10
for id in 0a000001 0a000002; do
    n=$(lines "with key id $id: no peer line")
    [ "$n" = 1 ] || fail "a burst of 5 for key id $id: $n lines, want 1"
done
grep -q "pure-link recv: dropped 1 datagram from 127.0.0.1:[0-9]* with key id 0a000001: no peer line of the config has that key (add the sender's public key, pure-link pub, as a peer line)$" "$work/r.log" ||
    fail "the line for 0a000001: $(grep 0a000001 "$work/r.log")"

burst $port 0b000001 20 3
wait_dropped unknown_key 70
n=$(lines "with key id 0b0000")
[ "$n" = 13 ] || fail "20 more key ids: $n lines, want 13 (16 a minute in all)"
[ "$(lines "pure-link recv: dropped ")" = 16 ] || fail "$(lines "pure-link recv: dropped ") lines in all, want 16"
[ "$(json "$work/show.json" "j['dropped']['auth']")" = 10 ] || fail "dropped auth: $(cat "$work/show.json")"

stop_recv
[ "$rstatus" = 0 ] || fail "receiver exit $rstatus"
[ "$(json "$work/r.json" "j['endpoint']['dropped_unknown_key'], j['endpoint']['dropped_auth'], j['drop_lines_logged']")" = "70 10 16" ] ||
    fail "--stats: $(cat "$work/r.json")"
echo "  90 datagrams of 23 key ids dropped: 16 lines, counted in show --json and --stats (unknown_key 70, auth 10)"
