#!/bin/sh
# m6.sh: the M6 grid of BRIEF §6 beside the seed's figures; a wrapper of `pure-link-sim m6`
# (sim/README.md, "Experiments"), which takes --seeds N, --json, --plot PREFIX and more.
# Usage: sim/m6.sh [SEED] [CONGESTION]   (CONGESTION: cubic, newreno or bbr; default: the core's)
set -eu
cd "$(dirname "$0")/.."
exec "${SIM:-build/pure-link-sim}" m6 --seed "${1:-1}" ${2:+--cc "$2"}
