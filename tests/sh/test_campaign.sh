#!/bin/sh
# A short invariant campaign in the simulator (tools/campaign.py): 200 seeds of random paths,
# controllers, record sizes, crashes and memo tears; every run must end without an error,
# hand over no record twice or out of order, and store all it finished sending.
# `make campaign SEEDS=10000` runs the long one.
set -eu
PURE_LINK_SIM=${B:-build}/pure-link-sim python3 tools/campaign.py --seeds 200 --first 1 | tail -3
