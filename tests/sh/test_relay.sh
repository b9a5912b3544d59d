#!/bin/sh
# pure-link-sim relay: the simulator's path model in real time between two real processes on
# loopback.  The real sender (build/interop_sender, the core over UDP) sends 200 records
# through a relay of 20 Mbit/s, RTT 10 ms, jitter 1 ms, 5 % loss and 1 % duplication to the
# independent receiver (tests/interop/receiver.py): every record arrives, the same bytes,
# and the relay's counters show the path dropped, duplicated and carried datagrams both ways.
set -eu
. tests/interop/env.sh
ports=$(udp_ports 2)
rport=${ports% *}
lport=${ports#* }
out=$(mktemp -d)
trap 'kill $relay 2>/dev/null || true; rm -rf "$out"' EXIT
python3 tests/interop/receiver.py --port "$rport" --secret "$rsec" --peer "$spub" --records $records \
    --out "$out/r.json" --timeout 30 > "$out/receiver.log" 2>&1 &
rpid=$!
${B:-build}/pure-link-sim relay "$lport" "$rport" --seed 1 --duration 40s --set 'path.rate: 20Mbit' \
    --set 'path.delay: 5ms' --set 'path.jitter: 1ms' --set 'path.loss: 5%' --set 'path.dup: 1%' > "$out/relay.json" &
relay=$!
sleep 0.5
if ! sent=$(${B:-build}/interop_sender send $seed "$lport" $records); then
    echo "sender: $sent"; cat "$out/receiver.log"; exit 1
fi
wait $rpid || { echo "receiver failed"; cat "$out/receiver.log"; exit 1; }
kill -TERM $relay
wait $relay || { echo "relay failed"; exit 1; }
echo "sender: $sent"
python3 - "$out/r.json" "$out/relay.json" "$sent" $records <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
relay = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
sent = sys.argv[3].split()
want = int(sys.argv[4])
up, down = relay["paths"]
print("receiver: stored %d; relay client>server %s" % (r["records_stored"], up))
print("relay server>client %s" % down)
assert r["records_stored"] == want, "records stored"
assert r["records_sha256"] == sent[sent.index("sha256") + 1], "record bytes differ"
assert up["dropped_loss"] >= 1, "the path dropped datagrams"
assert up["sent"] == up["datagrams_in"] - up["dropped_loss"] - up["dropped_queue"] + up["duplicated"], "every other copy delivered"
assert down["datagrams_in"] >= 1 and down["sent"] >= 1, "replies came back through the relay"
assert relay["send_errors"] == 0 and relay["held_dropped"] == 0
PY
