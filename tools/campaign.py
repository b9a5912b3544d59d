#!/usr/bin/env python3
"""campaign.py: many short simulator runs with random conditions, each checked against the
protocol's invariants.  A seed fixes everything, so any failure is replayed exactly with
its printed command.

    python3 tools/campaign.py [--seeds N] [--first S] [--jobs J]

Conditions drawn per seed: RTT 2-200 ms, loss 0-10 %, Gilbert-Elliott bursts, jitter 0-10 ms,
duplication and corruption 0-3 %, record sizes 0 B-64 KiB, bulk or paced, 1-3 senders of one
or two nodes, CUBIC/NewReno/BBR, copies on or off, crashes and restarts of the receiver (with
or without a memo, torn memo writes, a crash between a memo write and its ACCEPT) and of a
sender; and an attacker who knows only what travels in clear: forged epoch-0/1/2 packets
with the sender's key id and a seen or random run, its answers (LOST) forwarded to the
sender, replays of either direction after the receiver's runs went idle.

Invariants (from the --json summary): the run ends without an error (no livelock, no API
misuse, no assertion), no record is handed over twice or out of order, every record handed
over was stored, and a run whose nodes never crash stores every record it finished sending
(an attack does not excuse a stall); no (key, nonce) is sealed twice (the nonce oracle sees
every seal), no epoch rolls back, nothing goes to a silent address beyond 3x, and every
datagram an endpoint is fed is in packets_opened or one dropped_* reason.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

SIM = os.environ.get("PURE_LINK_SIM") or os.path.join(os.path.dirname(__file__), "..", "build", "pure-link-sim")


def scenario(seed):
    r = random.Random(seed)
    rtt_ms = r.choice([2, 10, 20, 50, 100, 200])
    lines = [f"duration: {r.choice([2, 3, 5])}s", f"seed: {seed}", "stop_when_done: yes",
             f"path.rate: {r.choice([5, 20, 50, 200])}Mbit", f"path.delay: {rtt_ms // 2}ms"]
    if r.random() < 0.7:
        lines.append(f"path.loss: {r.choice([0.1, 0.5, 1, 2, 5, 10])}%")
    if r.random() < 0.2:
        lines += ["path.ge_p: 0.01", "path.ge_r: 0.3", "path.ge_loss_bad: 50%"]
    if r.random() < 0.5:
        lines.append(f"path.jitter: {r.choice([1, 3, 10])}ms")
    if r.random() < 0.3:
        lines.append(f"path.dup: {r.choice([0.5, 1, 3])}%")
    if r.random() < 0.3:
        lines.append(f"path.corrupt: {r.choice([0.5, 1, 3])}%")
    crashes = False
    senders = ["a"] if r.random() < 0.7 else ["a", "b"]
    for name in senders:
        lines.append(f"node: {name}")
        lines.append(f"congestion: {r.choice(['cubic', 'newreno', 'bbr'])}")
        lines.append(f"copies: {r.choice([1, 2])}")
        if r.random() < 0.1:
            lines.append("crash: 1s restart 1200ms")
            crashes = True
        if r.random() < 0.2:
            lines.append(f"epoch_packets: {r.choice([100, 300])}")  # epochs mid-transfer
    lines.append("node: r")
    lines.append(f"store_latency: {r.choice([0, 1, 5])}ms")
    replay = r.random() < 0.15
    if replay or r.random() < 0.3:
        lines.append("idle: 300ms")  # runs go idle within the run: replays, forgeries and `more` meet idle slots
    if r.random() < 0.5:
        lines.append("memo: yes")
        lines.append("memo_sync: 1ms")
        if r.random() < 0.5:
            lines.append(f"memo_crash: {r.choice(['drop', 'tear_last', 'tear_first'])}")
        if r.random() < 0.15:
            # The memo keeps everything: the run must still finish, so it is no excuse.
            lines.append(f"crash_at_memo: {r.randint(2, 5)} restart {r.choice([1, 100])}ms")
    if r.random() < 0.3:
        at = r.choice([500, 1000, 1500])
        lines.append(f"crash: {at}ms restart {at + r.choice([1, 100, 500])}ms")
        crashes = True
    n_links = r.choice([1, 1, 2, 3])
    for i in range(n_links):
        lines.append(f"link: {r.choice(senders)} > r")
        lines.append(f"source: out{i}")
        lines.append(f"input: in{i}")
        paced = r.random() < 0.4
        sizes = [8, 61, 1024, 1400, 3000, 65536] if paced else [0, 1, 61, 1024, 1400, 3000, 65536]
        lines.append(f"record_bytes: {r.choice(sizes)}")
        if paced:
            lines.append("mode: paced")
            lines.append(f"rate: {r.choice([10, 50, 500])}/s")
        lines.append(f"count: {r.choice([10, 200, 2000])}")
        if not paced and r.random() < 0.3:
            lines.append(f"more: {r.choice([10, 200])} at {r.choice([1500, 2500])}ms")  # after an idle time
    if replay:
        src, dst = r.choice([("a", "r"), ("r", "a")])
        lines.append(f"replay: {src} > {dst} at {r.choice([500, 1000, 1500])}ms")
    if r.random() < 0.25:
        lines.append("node: x")  # the attacker: sends nothing of its own
        forward = r.random() < 0.5
        # Forwarding: just after the first packet reaches the receiver (the run not yet proven).
        at_us = (rtt_ms // 2) * 1000 + 500 if forward else r.choice([10, 30, 300, 1000, 2000]) * 1000
        lines.append(f"forge: a > r as x at {at_us}us epoch {r.choice([0, 1, 1, 2])} "
                     f"len {r.choice([64, 80, 200])} count {r.choice([1, 50, 500])} every {r.choice([2, 10])}ms "
                     f"run {r.choice(['seen', 'random'])}")
        if forward:
            lines.append("forward: x > a at 0")
    return "\n".join(lines) + "\n", crashes


DATAGRAM_DROPS = ("dropped_bad_header", "dropped_unknown_key", "dropped_auth", "dropped_replay",
                  "dropped_malformed", "dropped_no_slot", "dropped_stale_epoch", "dropped_no_run")


def check(d, crashes):
    bad = []
    if d.get("error"):
        bad.append("error: " + d["error"])
    if d["duplicates_delivered"] != 0:
        bad.append("duplicates %d" % d["duplicates_delivered"])
    if d["out_of_order"] != 0:
        bad.append("out of order %d" % d["out_of_order"])
    if d["records_stored"] > d["records_delivered"]:
        bad.append("stored more than handed over")
    for k in ("nonce_reuses", "epoch_rollbacks", "aead_seals_unknown_key"):
        if d.get(k):
            bad.append("%s %d" % (k, d[k]))
    # The 3x rule binds what the receiver sends to an address that never answered (a sender
    # speaks first to its wired receiver: its figure is only informative).
    amp = d.get("nodes", {}).get("r", {}).get("amplification_unanswered_max_x1000", 0)
    if amp > 3000:
        bad.append("amplification %d/1000 to a silent address" % amp)
    for name, n in d.get("nodes", {}).items():
        total = n["packets_opened"] + sum(n[k] for k in DATAGRAM_DROPS)
        if total != n["packets_received"]:
            bad.append("node %s: %d datagrams in, %d opened or dropped" % (name, n["packets_received"], total))
    if not crashes and d.get("end") == "done":
        for link in d["links"]:
            if link["records_stored"] != link["records_written"]:
                bad.append("link %s: %d of %d stored" % (link["source"], link["records_stored"], link["records_written"]))
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=1000)
    ap.add_argument("--first", type=int, default=1)
    args = ap.parse_args()
    failed = 0
    start = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.first, args.first + args.seeds):
            text, crashes = scenario(seed)
            path = os.path.join(tmp, f"s{seed}.conf")
            with open(path, "w") as f:
                f.write(text)
            p = subprocess.run([SIM, path, "--json", "--quiet"], capture_output=True, text=True)
            try:
                d = json.loads(p.stdout.strip().splitlines()[-1])
                bad = check(d, crashes)
            except Exception as e:  # noqa: BLE001 - any failure to run is a finding
                bad = ["no summary (exit %d): %s %s" % (p.returncode, e, p.stderr[-300:])]
            if bad:
                failed += 1
                keep = f"/tmp/campaign-{seed}.conf"
                with open(keep, "w") as f:
                    f.write(text)
                print(f"FAIL seed {seed}: {'; '.join(bad)}  (replay: {SIM} {keep} --json)")
    n = args.seeds
    print(f"campaign: {n} seeds in {time.time() - start:.0f} s, {failed} broke an invariant")
    print(f"{n - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
