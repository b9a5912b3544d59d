#!/usr/bin/env python3
"""The table of scripts/bench_peers.sh: Gbit of payload per CPU-second (sender + receiver)
per configuration and record size, min / median / max over rounds, and ratios taken within
each round (pure-link's best backend against each peer; each tool build against the first).

    bench_peers_table.py RESULTS.tsv [CEILING_GBIT_PER_CPU_S]
    bench_peers_table.py --cpu RESULTS.tsv COUNTS.tsv
RESULTS.tsv: config, size, round, payload bytes, CPU seconds, wall seconds (tab separated).
--cpu (a rate-limited path, where every transport moves the same bytes per second): CPU
seconds per GB delivered instead, and pure-link's CPU over each peer's (at most 1: as
cheap); COUNTS.tsv: pure-link's system calls per round (config, size, round, bytes, then
the sender's waits, sends, receives, the receiver's waits, sends, receives, fdatasyncs,
and the sender's seconds), printed per MB and fdatasyncs per second.
"""
import statistics, sys
from collections import defaultdict

def mmm(xs):
    return "%6.2f %6.2f %6.2f" % (min(xs), statistics.median(xs), max(xs))

def read_results(path, figure, rate):
    """(config, size) -> round -> figure(bytes, cpu), (config, size) -> [rate(bytes, secs)],
    the record sizes, the configs in their first order, pure-link's ("label io") and the peers'."""
    per = defaultdict(dict)
    wall = defaultdict(list)
    for line in open(path):
        config, size, rnd, nbytes, cpu, secs = line.rstrip("\n").split("\t")
        per[(config, int(size))][int(rnd)] = figure(int(nbytes), float(cpu))
        wall[(config, int(size))].append(rate(int(nbytes), max(float(secs), 1e-9)))
    configs = []
    for c, _ in per:
        if c not in configs:
            configs.append(c)
    return (per, wall, sorted({s for _, s in per}), configs, [c for c in configs if " " in c],
            [c for c in configs if " " not in c])

def print_figures(title, unit, per, wall, sizes, configs):
    print("%s, %d rounds" % (title, max(len(v) for v in per.values())))
    print("%-24s %6s  %6s %6s %6s  %s" % ("config", "record", "min", "median", "max", unit))
    for size in sizes:
        for c in configs:
            if (c, size) in per:
                print("%-24s %6s  %s  %6.2f" % (c, size, mmm(list(per[(c, size)].values())),
                                               statistics.median(wall[(c, size)])))
    print()

def main():
    per, wall, sizes, configs, tools, peers = read_results(
        sys.argv[1], lambda nbytes, cpu: nbytes * 8 / 1e9 / cpu, lambda nbytes, secs: nbytes * 8 / 1e9 / secs)
    ceiling = float(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else None
    labels = []
    for c in tools:
        if c.split(" ")[0] not in labels:
            labels.append(c.split(" ")[0])
    print_figures("Gbit of payload per CPU-second (sender + receiver, user + system)", "Gbit/s (median, wall)",
                  per, wall, sizes, configs)
    for size in sizes:
        for label in labels:
            mine = [c for c in tools if c.split(" ")[0] == label and (c, size) in per]
            if not mine:
                continue
            best = max(mine, key=lambda c: statistics.median(per[(c, size)].values()))
            line = "%s at %d B records, best backend %s:" % (label, size, best.split(" ")[1])
            for p in peers:
                if (p, size) not in per:
                    continue
                rounds = sorted(set(per[(best, size)]) & set(per[(p, size)]))
                ratios = [per[(best, size)][r] / per[(p, size)][r] for r in rounds]
                line += "  / %s %s" % (p, mmm(ratios))
            if ceiling:
                line += "  / ceiling %.2f" % (statistics.median(per[(best, size)].values()) / ceiling)
            print(line + "   (min median max)")
        if len(labels) > 1:
            base = labels[0]
            for label in labels[1:]:
                for c in tools:
                    if c.split(" ")[0] != label or (c, size) not in per:
                        continue
                    b = base + " " + c.split(" ")[1]
                    if (b, size) not in per:
                        continue
                    rounds = sorted(set(per[(b, size)]) & set(per[(c, size)]))
                    ratios = [per[(c, size)][r] / per[(b, size)][r] for r in rounds]
                    print("%s / %s at %d B records: %s   (min median max)" % (c, b, size, mmm(ratios)))
    if ceiling:
        print("UDP + AES-GCM ceiling (bench_udp_ceiling --sealed-best): %.2f Gbit per CPU-second" % ceiling)

def cpu_main(results, counts):
    per, wall, sizes, configs, tools, peers = read_results(
        results, lambda nbytes, cpu: cpu / (nbytes / 1e9), lambda nbytes, secs: nbytes * 8 / 1e6 / secs)
    print_figures("CPU-seconds per GB delivered (sender + receiver, user + system; = ms per MB)",
                  "Mbit/s (median, wall)", per, wall, sizes, configs)
    for size in sizes:
        labels = []
        for c in tools:
            if (c, size) in per and c.split(" ")[0] not in labels:
                labels.append(c.split(" ")[0])
        for label in labels:
            for c in [t for t in tools if t.split(" ")[0] == label and (t, size) in per]:
                line = "%s at %d B records: CPU over" % (c, size)
                for p in peers:
                    if (p, size) not in per:
                        continue
                    rounds = sorted(set(per[(c, size)]) & set(per[(p, size)]))
                    line += "  %s %s" % (p, mmm([per[(c, size)][r] / per[(p, size)][r] for r in rounds]))
                print(line + "   (min median max)")
    rows = defaultdict(list)
    for line in open(counts):
        f = line.rstrip("\n").split("\t")
        rows[(f[0], int(f[1]))].append(f[3:])
    if rows:
        print()
        print("pure-link's system calls per MB delivered (medians): sender wait / sendmsg / recvmsg,"
              " receiver wait / sendmsg / recvmsg / fdatasync; fdatasyncs per second")
        for (c, size), rs in rows.items():
            mb = [int(r[0]) / 1e6 for r in rs]
            med = lambda k: statistics.median(float(r[k]) / m for r, m in zip(rs, mb))
            syncs_s = statistics.median(float(r[7]) / max(float(r[8]), 1e-9) for r in rs)
            print("%-24s %6s  %8.0f %8.0f %8.0f  %8.0f %8.0f %8.0f %8.0f  %6.0f/s" %
                  (c, size, med(1), med(2), med(3), med(4), med(5), med(6), med(7), syncs_s))

if sys.argv[1] == "--cpu":
    cpu_main(sys.argv[2], sys.argv[3])
else:
    main()
