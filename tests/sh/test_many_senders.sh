#!/bin/sh
# Many senders, bounded (scripts/bench_many.sh, tests/bench/load_many.c): 100 sender
# endpoints in one process, each its own key and UDP port, write 50 records of 200 B each
# to one `pure-link recv`; 10 of them are refused (5 name no such input, 5 may not send as
# their source) and keep asking until each heard REFUSED twice.  100 senders are more than
# the 64 run slots the tool once gave any receiver.  Asserted from the receiver's store and
# log (none of it timed): every record of the 90 accepted senders stored exactly once, byte
# for byte, nothing of a refused one, and exactly one "refused a stream" line per refused
# sender although each heard REFUSED at least twice.
set -eu
out=$(mktemp)
trap 'rm -f "$out"' EXIT
MANY_JSON=$out DEADLINE_S=40 sh scripts/bench_many.sh 100 50 200 10
python3 - "$out" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
fail = []
if j["store_records"] != 90 * 50 or j["store_twice"] or j["store_missing"] or j["store_from_refused"] or j["store_problems"]:
    fail.append("store: %d records, %d twice, %d missing, %d from refused, %s" % (j["store_records"], j["store_twice"],
                j["store_missing"], j["store_from_refused"], j["store_problems"]))
if j["refusal_lines"] != 10 or j["refusal_lines_per_sender"] != [1]:
    fail.append("%d refusal lines, per sender %s" % (j["refusal_lines"], j["refusal_lines_per_sender"]))
if j["refused_heard"] < 2 * 10: fail.append("the refused senders heard REFUSED only %d times" % j["refused_heard"])
if j["dropped_no_slot"]: fail.append("%d packets found no run slot" % j["dropped_no_slot"])
if fail: sys.exit("FAIL: " + "; ".join(fail))
print("many: 4500 records once from 90 senders; 10 refused senders, %d REFUSED heard, one log line each" % j["refused_heard"])
PY
