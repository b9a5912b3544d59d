#!/bin/sh
# The Wireshark dissector (tools/wireshark/) over simulator captures: tshark opens every
# packet with the key log, and the frames it shows agree with the simulator's JSON summary
# (packets, per-node datagrams, LOST and the packet each names, REFUSED, STORED marks,
# STREAM names, epochs; forged datagrams from an attacker are the only ones not opened); and
# one -V print shows decrypted frames by name.
set -eu
. tests/sh/wireshark_env.sh

# Three outputs on port 39871, where only the heuristic (a run of the key log) finds them.
sed 's/^node: .*$/&\nport: 39871/' sim/scenarios/seed-three-outputs.conf > "$dir/out/port-39871.conf"
grep -q '^port: 39871' "$dir/out/port-39871.conf"

# One check (a simulation, then tshark over its capture) takes 1-2 s of CPU, most of it
# tshark's start and its decryption, and 6-10 s on a loaded 2-core machine: each scenario
# gets its own bound, so the test's bound grows with its list (one bound of 60 s for all
# eight ran out under load).
for scenario in "$dir/out/port-39871.conf" sim/scenarios/keys-epoch-change.conf \
  sim/scenarios/keys-no-memo-restart.conf sim/scenarios/seed-refused.conf \
  sim/scenarios/keys-replay-after-restart.conf sim/scenarios/keys-spoofed-address.conf \
  sim/scenarios/attack-lost-starvation.conf sim/scenarios/attack-drawn-lost.conf; do
  timeout 60 python3 tools/wireshark/check_capture.py --sim "$sim" --tshark "$tshark" \
    --dir "$dir/out" "$scenario" || { echo "FAIL: check_capture.py $scenario exited $?"; exit 1; }
done

# -V shows the frames by name with their fields (the first packets of a run).
out=$(cd /tmp && timeout 30 $tshark -n -r "$dir/out/port-39871.pcap" -c 7 -V \
  -o "pure_link.keylog:$dir/out/port-39871.keys" 2>/dev/null)
for want in 'Frame: OFFER (0x04)' 'Frame: STREAM (0x01)' 'Frame: RECORDS (0x02)' \
            'Frame: ACCEPT (0x08)' 'Frame: ACK (0x09)' 'Frame: STORED (0x0a)' \
            'Frame: CHALLENGE (0x07)' 'Source: out1' '[Decrypted: True]'; do
  printf '%s\n' "$out" | grep -qF "$want" || { echo "FAIL: -V does not show '$want'"; exit 1; }
done
# Without the key log (and so given the port by Decode As) the header is still shown, and
# nothing is decrypted.
out=$(cd /tmp && timeout 30 $tshark -n -r "$dir/out/port-39871.pcap" -c 1 -V \
  -d udp.port==39871,pure_link 2>/dev/null)
printf '%s\n' "$out" | grep -qF 'Key id: 0x' && printf '%s\n' "$out" | grep -qF '[Decrypted: False]' ||
  { echo "FAIL: without a key log the header is not shown"; exit 1; }
echo "ok   tshark -V shows the decrypted frames by name"

