#!/bin/sh
# pure-link-sim m6 | share | credit | sweep | plot on short runs (1-2 s virtual each, so
# bounded): the JSON lines have every field the README names, one per case; the figures do
# not depend on how many worker processes ran them; the sweep's CSV has its columns; the
# plots are SVG and PNG files (without gnuplot the case ends skipped, exit 77, after the rest).
set -eu
sim=${B:-build}/pure-link-sim
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
$sim m6 --json --seeds 2 --duration 1s --jobs 2 > "$out/m6.json" 2> "$out/m6.err"
$sim m6 --json --seeds 2 --duration 1s --jobs 1 > "$out/m6_one.json" 2> /dev/null
$sim share --json --duration 2s --from 1s > "$out/share.json" 2> /dev/null
$sim credit --json --duration 1s --seeds 2 > "$out/credit.json" 2> /dev/null
$sim sweep --cc newreno --duration 1s --csv "$out/sweep.csv" 2> /dev/null
$sim m6 --duration 1s > "$out/m6.txt"
grep -q "wall: .* load average" "$out/m6.err" || { echo "m6 --json: no wall line on stderr"; exit 1; }
python3 - "$out" <<'PY'
import csv, json, os, sys
d = sys.argv[1]
failed = []
def check(what, ok, got=""):
    print("%-4s %s %s" % ("ok" if ok else "FAIL", what, got))
    if not ok: failed.append(what)
def lines(name): return [json.loads(l) for l in open(os.path.join(d, name))]

m6 = lines("m6.json")
check("m6: 16 cases", len(m6) == 16, len(m6))
fields = ["rtt_ms", "loss", "jitter_ms", "mode", "goodput_mbit", "p50_ms", "p99_ms", "max_ms",
          "framing_bytes_per_full_packet", "packets_sent", "replies_sent", "seed", "cc", "seeds", "spread", "goal", "met", "anchors", "error"]
for c in m6:
    missing = [f for f in fields if f not in c]
    check("m6 %s %s ms %s jitter %s: every field" % (c["mode"], c["rtt_ms"], c["loss"], c["jitter_ms"]), not missing, missing)
    check("m6: no error", c["error"] is None, c["error"])
    lo, hi = c["spread"]["goodput_mbit"]
    check("m6: mean goodput within its spread", lo <= c["goodput_mbit"] <= hi, (lo, c["goodput_mbit"], hi))
    paced = c["mode"] == "paced"
    check("m6: latency only for paced cases", (c["p99_ms"] is not None) == paced, c["p99_ms"])
    check("m6: seeds 2", c["seeds"] == 2 and c["packets_sent"] > 0)
    check("m6: the receiver replied", 0 < c["replies_sent"] < 3 * c["packets_sent"], c["replies_sent"])
modes = [(c["mode"], c["rtt_ms"], c["loss"], c["jitter_ms"]) for c in m6]
check("m6: the seed's 12 bulk and 4 paced cells", len(set(modes)) == 16 and sum(m[0] == "bulk" for m in modes) == 12)
bulk0 = [c for c in m6 if c["mode"] == "bulk" and c["loss"] == 0]
# Header and tag alone are 32 B; 1 s runs spend a few bytes more on the handshake and probes
# than the 30 s grid does (38.8..39.8 B there, the core's figure is at most 41 B).
check("m6: framing of loss-free rows 32..48 B", all(32 < c["framing_bytes_per_full_packet"] < 48 for c in bulk0),
      [round(c["framing_bytes_per_full_packet"], 1) for c in bulk0])
one = lines("m6_one.json")
check("m6: one worker or two, the same figures", [c["goodput_mbit"] for c in one] == [c["goodput_mbit"] for c in m6])

share = lines("share.json")
check("share: cubic, bbr and TCP against TCP at two RTTs", len(share) == 6, len(share))
for c in share:
    check("share %s %s ms: a share in [0, 1]" % (c["cc"], c["rtt_ms"]), 0 <= c["share"] <= 1 and c["error"] is None, c["share"])
tcp = [c for c in share if c["first"] == "tcp-cubic"]
check("share: TCP against TCP carries TCP only", all(c["goodput_mbit"] is None and c["tcp_goodput_mbit"] > 0 for c in tcp))

credit = lines("credit.json")
check("credit: RTT 100 and 10 ms", [c["rtt_ms"] for c in credit] == [100, 10])
check("credit: records/s with the seed's anchors", all(c["records_per_s"] > 0 and "after_fix" in c["anchors"] for c in credit))

rows = list(csv.DictReader(open(os.path.join(d, "sweep.csv"))))
check("sweep: newreno, 4 RTTs x (8 losses + 7 bursts)", len(rows) == 60 and {r["cc"] for r in rows} == {"newreno"}, len(rows))
r = next(r for r in rows if r["rtt_ms"] == "10" and r["loss"] == "0.0100" and r["model"] == "random")
check("sweep: the Mathis bound at 10 ms, 1 %", abs(float(r["mathis_mbit"]) - 14.23) < 0.01, r["mathis_mbit"])
text = open(os.path.join(d, "m6.txt")).read()
check("m6 text: the seed's figures beside ours", "45.4 / 45.4" in text and "10.0/ 40.1/ 53.2" in text)
if failed:
    print("failed:", failed); sys.exit(1)
PY
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "skipped: the plots (gnuplot is not installed and scripts/deps.sh could not install it)"
    exit 77
fi
$sim sim/scenarios/plot-lossy-bulk.conf --quiet --set "duration: 2s" --trace "$out/t.qlog" > /dev/null
$sim plot "$out/t.qlog" 2> /dev/null
$sim m6 --duration 1s --plot "$out/grid" > /dev/null 2>&1
for f in t.svg t.png grid.svg grid.png; do
    [ -s "$out/$f" ] || { echo "FAIL plot: no $f"; exit 1; }
done
head -c 8 "$out/t.png" | od -An -tx1 | grep -q "89 50 4e 47" || { echo "FAIL plot: t.png is not a PNG"; exit 1; }
grep -q "<svg" "$out/grid.svg" || { echo "FAIL plot: grid.svg is not SVG"; exit 1; }
$sim plot /dev/null 2> "$out/bad.err" && { echo "FAIL plot: an empty trace was drawn"; exit 1; }
grep -q "no recovery:metrics_updated" "$out/bad.err" || { echo "FAIL plot: no clear error for an empty trace"; exit 1; }
echo "ok   plots: a trace and the grid as SVG and PNG"
