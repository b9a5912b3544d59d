#!/bin/sh
# make.sh: remakes every file of sim/results/ (README.md says what each shows).  Each step is
# one command of pure-link-sim; run from anywhere after `make`.  Under `nice`, since the
# machine is shared; the wall times it prints depend on the load it reports.
set -eu
cd "$(dirname "$0")/../.."
sim="nice build/pure-link-sim"
r=sim/results
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# One lossy bulk run over time (RTT 20 ms, 1 % loss, 3 ms jitter, a new epoch every 20,000 packets).
$sim sim/scenarios/plot-lossy-bulk.conf --quiet --trace "$tmp/lossy-bulk.qlog" > /dev/null
$sim plot "$tmp/lossy-bulk.qlog" --out $r/lossy-bulk
# The M6 grid, 3 seeds, BBR (the default) and CUBIC: tables and charts; BBR's as JSON lines too.
for cc in bbr cubic; do
  $sim m6 --seeds 3 --cc $cc --plot $r/m6-$cc > $r/m6-$cc.txt
done
$sim m6 --seeds 3 --cc bbr --json > $r/m6-bbr.json
# Goodput against loss, RTT and bursts for the three controllers.
$sim sweep --duration 20s --csv $r/sweep.csv --plot $r/sweep
# The share next to TCP CUBIC and the credit rows.
$sim share --seeds 3 > $r/share.txt
for cc in bbr cubic; do
  $sim share --cc $cc --seeds 5 --duration 240s --from 60s > $r/share-240s-$cc.txt
done
$sim credit --seeds 3 > $r/credit.txt
