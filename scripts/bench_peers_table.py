#!/usr/bin/env python3
"""The table of scripts/bench_peers.sh: Gbit of payload per CPU-second (sender + receiver)
per configuration and record size, min / median / max over rounds, and ratios taken within
each round (pure-link's best backend against each peer; each tool build against the first).

    bench_peers_table.py RESULTS.tsv [CEILING_GBIT_PER_CPU_S]
RESULTS.tsv: config, size, round, payload bytes, CPU seconds, wall seconds (tab separated).
"""
import statistics, sys
from collections import defaultdict

def mmm(xs):
    return "%6.2f %6.2f %6.2f" % (min(xs), statistics.median(xs), max(xs))

def main():
    per = defaultdict(dict)    # (config, size) -> round -> Gbit per CPU-s
    wall = defaultdict(list)   # (config, size) -> Gbit/s
    for line in open(sys.argv[1]):
        config, size, rnd, nbytes, cpu, secs = line.rstrip("\n").split("\t")
        bits = int(nbytes) * 8 / 1e9
        per[(config, int(size))][int(rnd)] = bits / float(cpu)
        wall[(config, int(size))].append(bits / max(float(secs), 1e-9))
    ceiling = float(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else None
    sizes = sorted({s for _, s in per})
    configs = []
    for c, _ in per:
        if c not in configs:
            configs.append(c)
    tools = [c for c in configs if " " in c]            # "label io" rows of pure-link
    labels = []
    for c in tools:
        if c.split(" ")[0] not in labels:
            labels.append(c.split(" ")[0])
    peers = [c for c in configs if " " not in c]
    print("Gbit of payload per CPU-second (sender + receiver, user + system), %d rounds" %
          max(len(v) for v in per.values()))
    print("%-24s %6s  %6s %6s %6s  %s" % ("config", "record", "min", "median", "max", "Gbit/s (median, wall)"))
    for size in sizes:
        for c in configs:
            if (c, size) not in per:
                continue
            xs = list(per[(c, size)].values())
            print("%-24s %6s  %s  %6.2f" % (c, size, mmm(xs), statistics.median(wall[(c, size)])))
    print()
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

main()
