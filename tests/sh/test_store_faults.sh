#!/bin/sh
# The receiver's record store failing as the shims' store does (sim/sim_store_fault.h), in
# sim/scenarios/store-faults.conf: a failed fdatasync, a full disk that stops the receiver at
# each restart while it lasts, and a crash after which the record file holds more than the
# core was told.  Every record is stored, none handed over twice (a record below the stored
# mark a restart answers would count as a duplicate), and each fault happened.
set -eu
${B:-build}/pure-link-sim sim/scenarios/store-faults.conf --json --quiet | tail -1 | python3 -c '
import json, sys
d = json.load(sys.stdin)
r, link = d["nodes"]["r"], d["links"][0]
print("store faults: %d crashes, %d fdatasync failure, %d disk-full stops, %d records kept in a tail; %d of %d stored, %d duplicates"
      % (r["crashes"], r["store_sync_failures"], r["store_full_stops"], r["store_tail_records_kept"],
         link["records_stored"], link["records_written"], d["duplicates_delivered"]))
assert d["end"] == "done" and d["error"] is None, d["error"]
assert link["records_stored"] == link["records_written"] == 10000
assert d["duplicates_delivered"] == 0 and d["out_of_order"] == 0
assert r["store_sync_failures"] == 1 and r["store_full_stops"] >= 2 and r["store_tail_records_kept"] > 0
assert r["crashes"] == r["restarts"] >= 4'
