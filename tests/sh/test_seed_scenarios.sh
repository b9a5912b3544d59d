#!/bin/sh
# The seed's scenarios (BRIEF §4), each a file sim/scenarios/seed-*.conf, run through the
# simulator; their --json summaries must show the seed's figures (protocol properties in
# virtual time, not timings of this machine).
set -eu
sim=${B:-build}/pure-link-sim
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for f in sim/scenarios/seed-*.conf; do
    name=$(basename "$f" .conf)
    $sim "$f" --json > "$out/$name.txt" 2>&1 || { echo "$name: simulator failed"; tail -5 "$out/$name.txt"; exit 1; }
    tail -1 "$out/$name.txt" > "$out/$name.json"
done
python3 - "$out" <<'PY'
import json, os, sys
d = sys.argv[1]
def load(name): return json.load(open(os.path.join(d, name + ".json")))
def link(s, frm, inp=None):
    return next(l for l in s["links"] if l["from"] == frm and (inp is None or l["input"] == inp))
failed = []
def check(what, ok, got=""):
    print("%-4s %s %s" % ("ok" if ok else "FAIL", what, got))
    if not ok: failed.append(what)

s = load("seed-refused")
for node in ("no-input", "other-shape", "not-allowed"):
    n, l = s["nodes"][node], link(s, node)
    check("refused/%s: REFUSED 7 times in 90 s" % node, n["link_refused"] == 7, n["link_refused"])
    check("refused/%s: 7 datagrams in 90 s" % node, n["packets_sent"] == 7, n["packets_sent"])
    check("refused/%s: one log line" % node, l["refused_events"] == 1, l["refused_events"])
    check("refused/%s: nothing delivered" % node, l["records_delivered"] == 0)
late = link(s, "late")
check("refused/late: all 200 stored", late["records_stored"] == 200, late["records_stored"])
check("refused/late: released at the first trial after 10 s (15 s)", 15000 <= late["done_ms"] < 16000, late["done_ms"])
check("refused/late: one refusal episode, one release", late["refused_events"] == 1 and late["released_events"] == 1)
check("refused: no duplicates", s["duplicates_delivered"] == 0)

s = load("seed-refused-missing-input")
n = s["nodes"]["sender"]
check("missing input: 2 datagrams in 2.5 s", n["packets_sent"] == 2, n["packets_sent"])
check("missing input: logs once", s["refused_events"] == 1, s["refused_events"])

s = load("seed-16mib")
whole, over = link(s, "sender", "blobs"), s["links"][1]
check("16 MiB: one record stored", whole["records_stored"] == 1, whole["records_stored"])
check("16 MiB: sent in one go (nothing resent by the 1 s rule)", whole["records_resent"] == 0, whole["records_resent"])
check("16 MiB + 1 B: refused at enqueue", over["send_too_big"] >= 1 and over["records_sent"] == 0)
check("16 MiB: stored within 100 ms virtual", whole["done_ms"] < 100, whole["done_ms"])

s = load("seed-three-outputs")
check("three outputs: 3 run-key builds", s["nodes"]["receiver"]["run_key_builds"] == 3, s["nodes"]["receiver"]["run_key_builds"])
check("three outputs: 3000 stored", s["records_stored"] == 3000, s["records_stored"])
slowest = max(l["done_ms"] for l in s["links"])
check("three outputs: stored within a few RTTs (< 50 ms, RTT 2 ms)", slowest < 50, slowest)
check("three outputs: no misrouted reply (no drops)", all(v["dropped_auth"] == 0 for v in s["nodes"].values()))

s = load("seed-memo-restart")
r = s["nodes"]["receiver"]
check("memo restart: the receiver restarted", r["restarts"] == 1, r["restarts"])
check("memo restart: 0 LOST", s["lost_notices"] == 0, s["lost_notices"])
check("memo restart: 0 X25519 after the restart", r["current_incarnation"]["x25519_ops"] == 0, r["current_incarnation"]["x25519_ops"])
check("memo restart: 3000 stored, 0 duplicates", s["records_stored"] == 3000 and s["duplicates_delivered"] == 0)

for name, floor in (("seed-credit-61b-100ms", 56296), ("seed-credit-61b-10ms", 56296)):
    s = load(name)
    check("%s: >= %d records/s" % (name, floor), s["records_per_s"] >= floor, round(s["records_per_s"]))
    check("%s: 0 duplicates" % name, s["duplicates_delivered"] == 0)

# Every seed scenario: no (key, nonce) sealed twice (the nonce oracle sees every seal of
# every node, keyed on the key bytes and the nonce).
for f in sorted(os.listdir(d)):
    if f.endswith(".json"):
        s = load(f[:-5])
        check("%s: 0 (key, nonce) reuses in %d seals" % (f[:-5], s["aead_seals"]), s["nonce_reuses"] == 0, s["nonce_reuses"])

print("%d failed" % len(failed))
sys.exit(1 if failed else 0)
PY
