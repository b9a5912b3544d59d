#!/bin/sh
# The tool never takes 0, 1 or 2 for a socket or a file of its own: started with any of them
# closed it opens /dev/null there first.  Before that, a sender with stdin closed got its
# UDP socket as fd 0, read its own replies as records and hung past --deadline and SIGTERM.
#  1. send with stdin closed: no records (an empty input), exit 0, within its deadline;
#  2. send --generate with 0, 1 and 2 closed stores every record;
#  3. recv with 0, 1 and 2 closed stores and stops cleanly on SIGINT.
set -u
. tests/sh/tool_lib.sh
make_keys
printf 'peer %s *\ninput logs 1 %s\n' "$SP" "$work/store" > "$work/r.conf"
start_recv r --config "$work/r.conf" --listen 127.0.0.1:0 --stats="$work/recv.json"
S="$P send --key $work/s.key --to 127.0.0.1:$port --peer $RP --input logs --shape 1 --no-progress"

# 1.
timeout -s KILL 10 $S --deadline 3s --stats="$work/s1.json" <&- 2> "$work/s1.log"
got=$?
[ "$got" = 0 ] || fail "send with stdin closed exited $got: $(cat "$work/s1.log")"
[ "$(json "$work/s1.json" "j['records_queued']")" = 0 ] || fail "send with stdin closed queued records"
echo "1. send <&-: exit 0, 0 records"

# 2.
timeout -s KILL 20 $S --deadline 10s --generate 50 --stats="$work/s2.json" <&- >&- 2>&-
got=$?
[ "$got" = 0 ] || fail "send --generate with 0, 1, 2 closed exited $got"
[ "$(json "$work/s2.json" "j['records_stored']")" = 50 ] || fail "send with 0, 1, 2 closed: not all stored"
stop_recv
[ "$rstatus" = 0 ] || fail "receiver exit $rstatus"
echo "2. send --generate 50 <&- >&- 2>&-: exit 0, 50 stored"

# 3.
rm -rf "$work/store"
$P recv --key "$work/r.key" --config "$work/r.conf" --listen 127.0.0.1:0 --no-progress \
    --stats="$work/r3.json" --qlog "$work/r3.qlog" <&- >&- 2>&- &
rpid=$!; pids="$pids $rpid"
# its UDP port, from the socket among its fds as /proc/net/udp lists it
udp_port() {
    python3 - "$1" <<'PY'
import os, sys
pid = sys.argv[1]
inodes = set()
for fd in os.listdir("/proc/%s/fd" % pid):
    t = os.readlink("/proc/%s/fd/%s" % (pid, fd))
    if t.startswith("socket:["): inodes.add(t[8:-1])
for line in open("/proc/net/udp").read().splitlines()[1:]:
    f = line.split()
    if f[9] in inodes: print(int(f[1].split(":")[1], 16)); break
PY
}
i=0; port=""
while [ -z "$port" ]; do
    i=$((i + 1)); [ $i -gt 100 ] && break
    kill -0 $rpid 2>/dev/null || fail "recv with 0, 1, 2 closed exited"
    sleep 0.05; port=$(udp_port $rpid 2>/dev/null)
done
[ -n "$port" ] || fail "recv with 0, 1, 2 closed: no UDP socket"
for fd in 0 1 2; do
    t=$(readlink /proc/$rpid/fd/$fd)
    [ "$t" = /dev/null ] || fail "recv with $fd closed has $t there, want /dev/null"
done
timeout -s KILL 20 $P send --key "$work/s.key" --to 127.0.0.1:$port --peer "$RP" --input logs --shape 1 \
    --no-progress --deadline 10s --generate 20 2> "$work/s3.log" || fail "send to recv with 0, 1, 2 closed: $(cat "$work/s3.log")"
stop_recv
[ "$rstatus" = 0 ] || fail "recv with 0, 1, 2 closed exited $rstatus"
[ "$(json "$work/r3.json" "j['store']['records_durable']")" = 20 ] || fail "recv with 0, 1, 2 closed: not 20 stored"
echo "3. recv <&- >&- 2>&-: fds 0-2 on /dev/null, 20 stored, exit 0"
