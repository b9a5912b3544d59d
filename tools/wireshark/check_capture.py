#!/usr/bin/env python3
"""Runs a simulator scenario with --pcap and --keylog, reads the capture with tshark and
the pure-link dissector, and checks what the dissector shows against the simulator's JSON
summary (sim/README.md names each field).  Exit 0 when every check holds.

    check_capture.py --sim build/pure-link-sim --tshark 'tshark' --dir DIR SCENARIO...
"""
import argparse
import collections
import json
import os
import shlex
import subprocess
import sys

FIELDS = ["ip.src", "pure_link.reply_run", "pure_link.decrypted", "pure_link.by_rule", "pure_link.run",
          "pure_link.epoch", "pure_link.frame_type", "pure_link.stored.stored",
          "pure_link.stream.source", "pure_link.stream.input", "pure_link.lost.answers"]
LOST, REFUSED = "0x0b", "0x0c"


def simulate(sim, scenario, pcap, keylog):
    out = subprocess.run([sim, scenario, "--pcap", pcap, "--keylog", keylog, "--json",
                          "--quiet"], check=False, capture_output=True, text=True,
                         timeout=60)
    return json.loads(out.stdout.strip().splitlines()[-1])


def dissect(tshark, pcap, keylog, fields=FIELDS):
    """One dict per packet: field -> its values joined by commas."""
    cmd = tshark + ["-n", "-r", pcap, "-o", "pure_link.keylog:" + keylog, "-T", "fields",
                    "-E", "occurrence=a", "-E", "aggregator=,"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=60)
    return [dict(zip(fields, line.split("\t"))) for line in out.stdout.splitlines()]


def values(row, field):
    return [v for v in row.get(field, "").split(",") if v]


def keylog_pairs(keylog):
    pairs = set()
    with open(keylog) as f:
        for line in f:
            w = line.split()
            if len(w) == 6 and w[0] == "PURE_LINK_EPOCH":
                pairs.add((int(w[3], 16), int(w[4])))
    return pairs


ATTACKS = ["replayed_datagrams", "spoofed_datagrams", "forged_datagrams", "forwarded_datagrams"]


def packets_ok(j, took):
    """Datagrams in the pcap: every one an endpoint pulled, plus the attacker's.  Of those
    that found no node (datagrams_no_route), the ones sent to an address no node held are
    not in it, those whose node left while they were on their way are: a range then."""
    most = j["packets_sent"] + sum(j.get(a, 0) for a in ATTACKS)
    return most - j["datagrams_no_route"] <= took <= most


def per_node_ok(j, rows):
    """Without attackers or moves, the datagrams from each node's address are its own."""
    if any(j.get(a, 0) for a in ATTACKS) or j["datagrams_no_route"]:
        return True
    by_src = collections.Counter(r["ip.src"] for r in rows)
    return all(by_src[n["addr"].split(":")[0]] == n["datagrams_sent"]
               for n in j["nodes"].values())


def stored_sum(rows):
    """Σ over runs of the highest STORED count: the hosts' stored marks."""
    best = collections.defaultdict(int)
    for r in rows:
        for v in values(r, "pure_link.stored.stored"):
            best[r["pure_link.run"]] = max(best[r["pure_link.run"]], int(v))
    return sum(best.values())


def checks(j, rows, keylog):
    types = collections.Counter(t for r in rows for t in values(r, "pure_link.frame_type"))
    names = {(r["pure_link.stream.source"], r["pure_link.stream.input"]) for r in rows
             if r["pure_link.stream.source"]}
    logged = keylog_pairs(keylog)
    logged_runs = {run for run, _ in logged}
    opened = {(int(r["pure_link.run"], 16), int(r["pure_link.epoch"])) for r in rows
              if r["pure_link.decrypted"] == "1"}
    opened_logged = {p for p in opened if p[0] in logged_runs}
    # A copy (replay, relay) of a LOST is the same notice: count each reply run once.
    lost_notices = {r["pure_link.reply_run"] for r in rows if LOST in values(r, "pure_link.frame_type")}
    listener_refused = sum(n["listener_refused"] for n in j["nodes"].values())
    took = sum(1 for r in rows if r["pure_link.run"])
    answered = sum(len(values(r, "pure_link.lost.answers")) for r in rows)
    return [
        ("packets", packets_ok(j, took), True),
        ("decrypted (all but the forgeries)", sum(r["pure_link.decrypted"] == "1" for r in rows),
         took - j.get("forged_datagrams", 0)),
        ("per-node datagrams", per_node_ok(j, rows), True),
        ("LOST notices", len(lost_notices), j["lost_notices"]),
        ("LOST frames naming a packet of the capture", answered, types[LOST]),
        ("REFUSED frames", types[REFUSED], listener_refused),
        ("highest STORED per run, summed", stored_sum(rows), j["records_stored"]),
        ("STREAM names", sorted(names), sorted({(l["source"], l["input"]) for l in j["links"]})),
        ("(run, epoch) opened, of the runs logged", sorted(opened_logged), sorted(logged)),
        ("runs opened beside them: only LOSTs to forgeries, under the pair's E(0)",
         sorted({run for run, e in opened - opened_logged if e != 0}), []),
    ]


def run_one(args, tshark, scenario):
    base = os.path.join(args.dir, os.path.basename(scenario).rsplit(".", 1)[0])
    pcap, keylog = base + ".pcap", base + ".keys"
    j = simulate(args.sim, scenario, pcap, keylog)
    rows = dissect(tshark, pcap, keylog)
    failed = 0
    for what, got, want in checks(j, rows, keylog):
        ok = got == want
        failed += not ok
        if not ok or args.verbose:
            print(f"  {'ok  ' if ok else 'FAIL'} {what}: dissector {str(got)[:200]}, "
                  f"simulator {str(want)[:200]}")
    fallback = sum(r["pure_link.by_rule"] == "0" for r in rows)
    print(f"{'ok  ' if not failed else 'FAIL'} {os.path.basename(scenario)}: {len(rows)} "
          f"packets, all checks {'hold' if not failed else 'do not hold'}; "
          f"{fallback} opened beside the key-log rule")
    return failed


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sim", required=True)
    p.add_argument("--tshark", default="tshark", help="command line that runs tshark")
    p.add_argument("--dir", required=True, help="where the captures and key logs go")
    p.add_argument("-v", "--verbose", action="store_true")
    p.add_argument("scenarios", nargs="+")
    args = p.parse_args()
    tshark = shlex.split(args.tshark)
    failed = sum(run_one(args, tshark, s) for s in args.scenarios)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
