#!/bin/sh
# A thousand senders on a thousand nodes write to one receiver whose receive pool is 64 MiB
# (spec/protocol.md §4.2 "Receive memory"): 996 send 100 records of 1 KiB, 4 send one 16 MiB
# record each, every path 100 Mbit/s with a 20 ms RTT, the host storing in 2 ms.  Asserted
# from --json: every record stored exactly once, the receiver's record bytes never above its
# pool, every sender done within the bound below, and Jain's fairness index over the
# senders of equal demand (printed) at least 0.9.
#
# The bound: a 16 MiB record waits for the ticket at most behind the long records queued
# before it, each holding it for its transfer (16 MiB at 100 Mbit/s: 1.34 s, plus a round
# trip); with 4 of them every sender is done within 4 x 1.5 s + 2 s = 8 s.
set -eu
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 - "$out/pool1000.conf" <<'PY'
import sys
nodes, every, small = 1000, 250, 100
with open(sys.argv[1], "w") as f:
    f.write("duration: 60s\nseed: 1\nmetrics_interval: 0\npath.rate: 100Mbit\npath.delay: 10ms\n\n")
    f.write("node: rx\nstore_latency: 2ms\nruns_most: %d\nreceive_memory_bytes: 64MiB\nmemo: no\n\n" % (nodes + 24))
    for i in range(nodes):
        f.write("node: s%d\npackets_in_flight_most: 256\nmemo: no\n" % i)
    for i in range(nodes):
        f.write("link: s%d > rx\nsource: out\n" % i)
        f.write("record_bytes: 16MiB\ncount: 1\n" if i % every == 0 else "record_bytes: 1KiB\ncount: %d\n" % small)
PY
${B:-build}/pure-link-sim "$out/pool1000.conf" --json --quiet > "$out/run.json"
python3 - "$out/run.json" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
links, rx = d["links"], d["nodes"]["rx"]
written = sum(l["records_written"] for l in links)
small = [l["goodput_mbit"] for l in links if l["records_written"] > 1]
jain = sum(small) ** 2 / (len(small) * sum(g * g for g in small))
done_ms = max(l["done_ms"] for l in links)
big_ms = sorted(l["done_ms"] for l in links if l["records_written"] == 1)
print("1,000 senders -> 1 receiver, 64 MiB pool: %d records stored of %d, duplicates %d, pool peak %.1f of %.1f MiB"
      % (d["records_stored"], written, d["duplicates_delivered"], rx["receive_memory_bytes_peak"] / 2**20,
         rx["receive_memory_bytes"] / 2**20))
print("  longest sender %.0f ms (bound 8000), 16 MiB records done at %s ms; Jain's index %.4f over %d senders; "
      "virtual %.2f s, wall %.1f s" % (done_ms, ", ".join("%.0f" % t for t in big_ms), jain, len(small),
                                       d["virtual_s"], d["wall_s"]))
assert d["end"] == "done", d["error"]
assert len(links) == 1000 and len(d["nodes"]) == 1001
assert d["records_stored"] == written and d["duplicates_delivered"] == 0 and d["out_of_order"] == 0
assert all(l["records_stored"] == l["records_written"] and l["done"] for l in links)
assert rx["receive_memory_bytes"] == 64 * 2**20
assert 16 * 2**20 < rx["receive_memory_bytes_peak"] <= rx["receive_memory_bytes"]
assert done_ms <= 8000, done_ms
assert jain >= 0.9, jain
PY
