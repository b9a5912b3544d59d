#!/bin/sh
# "Keys over time" (BRIEF §3 properties 1, 2, 5): each sim/scenarios/keys-*.conf runs
# through the simulator, and its --json summary must show the property.  The figures come
# from the simulator's oracles, which watch the real core from outside: nonce_reuses (every
# (key, nonce) sealed, all nodes, all incarnations), amplification per (node, address),
# epoch_rollbacks (receiver EPOCH events); and from its attacker: address changes, replays,
# spoofed copies.  Virtual time only: nothing here depends on this machine's speed.
set -eu
sim=${B:-build}/pure-link-sim
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for f in sim/scenarios/keys-*.conf; do
    name=$(basename "$f" .conf)
    $sim "$f" --json --pcap "$out/$name.pcap" > "$out/$name.txt" 2>&1 || {
        echo "$name: simulator failed"; tail -5 "$out/$name.txt"; exit 1; }
    tail -1 "$out/$name.txt" > "$out/$name.json"
done
python3 - "$out" <<'PY'
import json, os, struct, sys
d = sys.argv[1]
def load(name): return json.load(open(os.path.join(d, name + ".json")))
failed = []
def check(what, ok, got=""):
    print("%-4s %s %s" % ("ok" if ok else "FAIL", what, got))
    if not ok: failed.append(what)

def pcap_sources(name):
    """(source ip, source port) of every datagram in the scenario's pcap (raw IPv4 + UDP)."""
    data = open(os.path.join(d, name + ".pcap"), "rb").read()
    at, seen = 24, set()
    while at + 16 <= len(data):
        incl = struct.unpack_from("<I", data, at + 8)[0]
        pkt = data[at + 16: at + 16 + incl]
        at += 16 + incl
        seen.add(("%d.%d.%d.%d" % tuple(pkt[12:16]), struct.unpack_from(">H", pkt, 20)[0]))
    return seen

def common(name, s, records):
    check("%s: no error" % name, s["error"] is None and s["end"] == "done", s["error"] or s["end"])
    check("%s: all %d records stored" % (name, records), s["records_stored"] == records, s["records_stored"])
    check("%s: 0 duplicates" % name, s["duplicates_delivered"] == 0, s["duplicates_delivered"])
    check("%s: 0 (key, nonce) reuses" % name, s["nonce_reuses"] == 0 and s["aead_seals"] > 0,
          "%d of %d seals" % (s["nonce_reuses"], s["aead_seals"]))
    check("%s: every seal's key known to the oracle" % name, s["aead_seals_unknown_key"] == 0, s["aead_seals_unknown_key"])
    check("%s: 0 epoch rollbacks" % name, s["epoch_rollbacks"] == 0, s["epoch_rollbacks"])
    check("%s: <= 3x to addresses that never answered" % name, s["amplification_unanswered_max_x1000"] <= 3000,
          s["amplification_unanswered_max_x1000"])

s = load("keys-no-memo-restart")
r = s["nodes"]["receiver"]
common("no memo restart", s, 3000)
check("no memo restart: the receiver restarted without a memo", r["restarts"] == 1 and r["memo_loads"] == 0)
check("no memo restart: LOST >= 1", s["lost_notices"] >= 1, s["lost_notices"])

s = load("keys-address-change")
n = s["nodes"]["sender"]
common("address change", s, 1500)
check("address change: two changes, now 10.0.0.77:4434", n["address_changes"] == 2 and n["addr"] == "10.0.0.77:4434",
      "%d %s" % (n["address_changes"], n["addr"]))
check("address change: replies to an old address find no node", s["datagrams_no_route"] > 0, s["datagrams_no_route"])
src = pcap_sources("keys-address-change")
check("address change: the pcap shows all three sender addresses",
      {("10.0.0.1", 4433), ("10.0.0.1", 4434), ("10.0.0.77", 4434)} <= src, sorted(src))
moved = [p for p in s["nodes"]["receiver"]["amplification_pairs"] if p["addr"] == "10.0.0.77:4434"]
check("address change: the receiver heard and answered the new address",
      len(moved) == 1 and moved[0]["received_bytes"] > 0 and moved[0]["sent_bytes"] > 0, moved)

s = load("keys-spoofed-address")
v, r = s["nodes"]["victim"], s["nodes"]["receiver"]
common("spoofed address", s, 1000)
check("spoofed address: two copies raced", s["spoofed_datagrams"] == 2, s["spoofed_datagrams"])
check("spoofed address: the victim never answers", v["datagrams_sent"] == 0, v["datagrams_sent"])
pair = [p for p in r["amplification_pairs"] if p["addr"] == v["addr"]]
check("spoofed address: the receiver wrote to the victim (the run moved), unanswered",
      len(pair) == 1 and pair[0]["sent_bytes"] > 0 and not pair[0]["answered"], pair)
check("spoofed address: at most 3x to the victim", pair and pair[0]["max_x1000"] <= 3000, pair and pair[0]["max_x1000"])
check("spoofed address: the pcap shows the victim's address as a source to the receiver",
      (v["addr"].split(":")[0], int(v["addr"].split(":")[1])) in pcap_sources("keys-spoofed-address"))

s = load("keys-replay-after-restart")
r = s["nodes"]["receiver"]
common("replay after restart", s, 600)
check("replay after restart: restarted from the memo", r["restarts"] == 1 and r["memo_loads"] == 1 and r["memo_rejected"] == 0)
check("replay after restart: datagrams replayed", s["replayed_datagrams"] > 100, s["replayed_datagrams"])
# A replayed copy of the run's first packet is newer than the number the memo recorded, so
# the restored run opens it (the sender might still seal in epoch 0, protocol.md §9): that
# costs the peer's static X25519 for E(0), once, and never an X25519 for an OFFER.
check("replay after restart: no X25519 for an OFFER in the restarted receiver (E(0) at most)",
      r["current_incarnation"]["x25519_ops"] <= 1 and r["current_incarnation"]["epochs"] == 0,
      r["current_incarnation"]["x25519_ops"])
check("replay after restart: 0 LOST", s["lost_notices"] == 0, s["lost_notices"])
check("replay after restart: no new run key in the restarted receiver (the same run goes on)",
      r["current_incarnation"]["run_key_builds"] == 0, r["current_incarnation"]["run_key_builds"])
check("replay after restart: the second batch on the same run is stored",
      s["links"][0]["records_confirmed"] == 600 and r["current_incarnation"]["records_delivered"] == 300,
      "%d confirmed, %d handed over after the restart" % (s["links"][0]["records_confirmed"],
                                                          r["current_incarnation"]["records_delivered"]))

s = load("keys-epoch-change")
n = s["nodes"]["sender"]
common("epoch change", s, 6000)
check("epoch change: several epochs mid-transfer (>= 5)", n["epochs"] >= 5, n["epochs"])
check("epoch change: loss on the path", n["packets_lost"] > 0, n["packets_lost"])

print("%d failed" % len(failed))
sys.exit(1 if failed else 0)
PY
