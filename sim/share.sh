#!/bin/sh
# share.sh: the share next to one TCP CUBIC flow (BRIEF §6); a wrapper of `pure-link-sim share`
# (sim/README.md, "Experiments").
# Usage: sim/share.sh [SEEDS] [FIRST_SEED]   (default 3 seeds from 1)
#   DURATION=240s FROM=60s sim/share.sh 5   a longer run and window over seeds 1..5
set -eu
cd "$(dirname "$0")/.."
exec "${SIM:-build/pure-link-sim}" share --seeds "${1:-3}" --seed "${2:-1}" --duration "${DURATION:-60s}" --from "${FROM:-5s}"
