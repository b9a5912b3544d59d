#!/usr/bin/env python3
"""against_recv.py -- the independent sender (sender.py) against the real receiver
(`pure-link recv`) over UDP on loopback.  Each case checks the receiver's store
(shims/store/STORE.md format, read by store_read.py) byte for byte.

Usage: python3 tests/interop/against_recv.py [--tool build/pure-link] [--keep DIR] [-v] CASE
CASE: amplification | black_hole | bulk | epochs | move | mtu | one_record | refused |
      restart_memo | restart_nomemo | resume_kill9 | resume_replay | resume_sigint |
      resume_stop_restart | sizes
Exit 0 when the case passes; every failed check is printed.
"""

import argparse
import os
import random
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pl_spec as pl  # noqa: E402
import real_tool  # noqa: E402
import sender as sndm  # noqa: E402
import store_read  # noqa: E402
from udp_path import Capped  # noqa: E402

CASE_SECONDS = 16.0             # each case stops by itself well under 20 s
SOURCE = b"py.sender"
INPUT = "logs"
SHAPE = 7


class Check:
    def __init__(self, name):
        self.name = name
        self.problems = []
        self.facts = []

    def expect(self, what, cond, detail=""):
        if not cond:
            self.problems.append(what + (": " + str(detail) if detail != "" else ""))

    def fact(self, text):
        self.facts.append(text)

    def finish(self):
        for f in self.facts:
            print("  " + f)
        for p in self.problems:
            print("  PROBLEM: " + p)
        print("%s %s" % (self.name, "PASS" if not self.problems else "FAIL"))
        return not self.problems


def mixed_records(rng, n, big=4 << 20):
    """n records of mixed sizes: the edges of the varint prefix and of a datagram's
    payload, many small ones, some tens of KiB, and one of `big` bytes in the middle."""
    edges = [0, 1, 62, 63, 64, 65, 1400, 1415, 1416, 1421, 1452, 1453, 16383, 16384,
             16385, 65536, 200000]
    out = []
    for i in range(n):
        if i < len(edges):
            ln = edges[i]
        elif i == n // 2 and big:
            ln = big
        else:
            x = rng.random()
            ln = (rng.randint(0, 200) if x < 0.5 else rng.randint(200, 3000) if x < 0.95
                  else rng.randint(3000, 40000))
        out.append(rng.randbytes(ln))
    return out


def small_records(rng, n, lo, hi):
    return [rng.randbytes(rng.randint(lo, hi)) for _ in range(n)]


def check_store(chk, rx, spub, run, records):
    """Every record of the run stored exactly once, byte for byte, in order."""
    d = rx.inputs[INPUT]
    name = store_read.store_file_name(spub, SOURCE)
    files = store_read.read_input_dir(d) if os.path.isdir(d) else {}
    chk.expect("one record file named as STORE.md says", list(files) == [name], list(files))
    if name not in files:
        return
    hdr, frames = files[name]
    chk.expect("file header names the sender key and source",
               hdr["key"] == spub and hdr["source"] == SOURCE, hdr)
    chk.expect("no torn tail", hdr["tail_cut"] == 0, hdr["tail_cut"])
    ours = [(num, rec) for r, num, rec in frames if r == run]
    chk.expect("every frame is of the sender's run", len(ours) == len(frames))
    nums = [num for num, _ in ours]
    dup = len(nums) - len(set(nums))
    chk.expect("no record stored twice", dup == 0, dup)
    chk.expect("record numbers 0..n-1 in order", nums == list(range(len(records))),
               (len(nums), nums[:5], nums[-5:]))
    bad = [num for num, rec in ours if num < len(records) and rec != records[num]]
    chk.expect("every record byte for byte", not bad, bad[:10])
    chk.fact("store: %d frames, %d CRC32C-checked, %d B of records" % (
        len(frames), hdr["crc_checked"], sum(len(r) for _, r in ours)))


def setup(tool, tmp, inputs=((INPUT, SHAPE),), memo=True):
    skey, ssec, spub = real_tool.new_keypair(tmp, "send")
    rx = real_tool.Recv(tool, tmp, [(spub, [SOURCE.decode()])], list(inputs), memo=memo)
    rx.start()
    return rx, ssec, spub


def new_sender(rx, ssec, records, log, **kw):
    return sndm.Sender(("127.0.0.1", rx.port), rx.public, ssec, records, SOURCE,
                       kw.pop("input_name", INPUT).encode(), kw.pop("shape", SHAPE), log=log, **kw)


# ------------------------------------------------------------------------------ cases
def case_bulk(tool, tmp, log):
    """1,000 records of mixed sizes, one of 4 MiB, stored exactly once."""
    chk = Check("bulk")
    rng = random.Random(1)
    records = mixed_records(rng, 1000)
    rx, ssec, spub = setup(tool, tmp)
    s = new_sender(rx, ssec, records, log)
    t0 = time.monotonic()
    ok = s.run_until(s.done, t0 + CASE_SECONDS)
    chk.fact("sender: %d/%d stored in %.2f s, %d packets, epoch %d, largest record %d B" % (
        s.S, s.n, time.monotonic() - t0, s.pn, s.epoch, max(map(len, records))))
    chk.expect("the sender heard every record stored", ok, s.S)
    rc, st = rx.stop()
    chk.expect("receiver exits 0 on SIGTERM", rc == 0, rc)
    check_store(chk, rx, spub, s.run, records)
    big = max(range(len(records)), key=lambda i: len(records[i]))
    chk.expect("the 4 MiB record went over many packets",
               len(records[big]) == 4 << 20 and s.pn > (4 << 20) // pl.PAYLOAD_MOST)
    if st:
        ep = st["endpoint"]
        chk.expect("receiver counts 1,000 records stored", ep["records_stored"] == 1000,
                   ep["records_stored"])
        chk.expect("no LOST", ep["lost_notices_sent"] == 0)
        chk.fact("receiver: %d packets received, %d dropped malformed, %d no room, %d auth" % (
            ep["packets_received"], ep["dropped_malformed"], ep["dropped_no_room"],
            ep["dropped_auth"]))
        chk.expect("nothing malformed or failing to open", ep["dropped_malformed"] == 0 and
                   ep["dropped_auth"] == 0, (ep["dropped_malformed"], ep["dropped_auth"]))
    return chk.finish()


def case_epochs(tool, tmp, log):
    """A new epoch every 16 packets (a limit set on the Python side), through epoch 16
    and beyond, where the 4-bit field wraps (wire.md §4)."""
    chk = Check("epochs")
    rng = random.Random(2)
    records = small_records(rng, 3000, 100, 600)
    # Paced at 150 packets/s: the receiver answers at most 4 OFFERs a second after a
    # burst of 4 (its X25519 rate, protocol.md §3), so 17 epochs take about 3.5 s.
    rx, ssec, spub = setup(tool, tmp)
    s = new_sender(rx, ssec, records, log, epoch_packets=16, pace_pps=150)
    t0 = time.monotonic()
    ok = s.run_until(s.done, t0 + CASE_SECONDS)
    chk.expect("the sender heard every record stored", ok, s.S)
    chk.fact("sender: %d packets, reached epoch %d" % (s.pn, s.epochs_reached))
    chk.expect("past epoch 16 (the 4-bit field wrapped)", s.epochs_reached >= 17,
               s.epochs_reached)
    per_epoch = {}
    for _, _, e, _, _, _, _ in s.sent_log:
        per_epoch[e] = per_epoch.get(e, 0) + 1
    e0 = [x for x in s.sent_log if x[2] == 0]
    chk.expect("every epoch-0 packet carried the OFFER (protocol.md §3)",
               e0 and all("OFFER" in x[5] for x in e0), e0)
    chk.fact("epoch-0 packets: %d" % len(e0))
    rc, st = rx.stop()
    check_store(chk, rx, spub, s.run, records)
    if st:
        ep = st["endpoint"]
        chk.expect("the receiver counted the epochs", ep["epochs"] >= s.epochs_reached,
                   ep["epochs"])
        chk.expect("no LOST", ep["lost_notices_sent"] == 0)
    # the receiver's key log holds the same E(n) as the sender
    lines = pl.parse_keylog(open(os.path.join(tmp, "recv.keylog")).read())
    logged = {(x["run"], x["epoch"]): x["secret"] for x in lines}
    chk.expect("the receiver's key log has the sender's current epoch secret",
               logged.get((s.run, s.epoch)) == s.secrets[s.epoch])
    return chk.finish()


def case_move(tool, tmp, log):
    """The sender's port changes mid-transfer; the receiver answers with a CHALLENGE at
    the new address, the sender's RESPONSE validates it, and the transfer completes."""
    chk = Check("move")
    rng = random.Random(3)
    records = small_records(rng, 400, 500, 3000)
    rx, ssec, spub = setup(tool, tmp)
    # Paced (about 1.3 s in all), so that the move falls well inside the transfer.
    s = new_sender(rx, ssec, records, log, pace_pps=400)
    t0 = time.monotonic()
    s.run_until(lambda: s.S >= 100, t0 + CASE_SECONDS / 2)
    chk.expect("the move comes mid-transfer", s.S < 300, s.S)
    old_port = s.port()
    ch_before = len(s.challenges)
    s.move()
    new_port = s.port()
    ok = s.run_until(s.done, t0 + CASE_SECONDS)
    chk.expect("the sender heard every record stored", ok, s.S)
    chk.expect("a CHALLENGE at the first address", ch_before >= 1 and
               s.challenges[0][2] == old_port)
    new = [c for c in s.challenges[ch_before:] if c[2] == new_port]
    chk.expect("a CHALLENGE at the new port", len(new) >= 1, s.challenges)
    if new:
        chk.expect("with a new token", new[0][1] != s.challenges[0][1])
    answered = [t for t, pn, e, L, size, kinds, port in s.sent_log
                if "RESPONSE" in kinds and port == new_port]
    chk.expect("answered with a RESPONSE from the new port", answered)
    chk.fact("moved %d -> %d at record %d; challenges %d" % (old_port, new_port, 100,
                                                             len(s.challenges)))
    rc, st = rx.stop()
    check_store(chk, rx, spub, s.run, records)
    if st:
        ep = st["endpoint"]
        chk.fact("receiver: address_moves %d, addresses_validated %d, dropped_amplification %d"
                 % (ep["address_moves"], ep["addresses_validated"], ep["dropped_amplification"]))
        chk.expect("the receiver saw the move", ep["address_moves"] >= 1)
        chk.expect("and validated both addresses", ep["addresses_validated"] >= 2)
    return chk.finish()


def case_refused(tool, tmp, log):
    """A stream for an input the receiver does not have: REFUSED (reason 1) and the
    sender's backoff (protocol.md §4.1): wait 1 s, one trial, then 2 s, 4 s ... with
    nothing else sent, asserted from the times of the packets sent."""
    chk = Check("refused")
    rng = random.Random(4)
    records = small_records(rng, 50, 10, 100)
    rx, ssec, spub = setup(tool, tmp)
    s = new_sender(rx, ssec, records, log, input_name="nosuch")
    t0 = time.monotonic()
    s.run_until(lambda: len([e for e in s.events if e[1] == "trial"]) >= 3 and
                s.trial_pn is None, t0 + 11.5)
    refused = [e for e in s.events if e[1] == "refused"]
    chk.expect("REFUSED heard", refused)
    if not refused:
        rx.stop()
        return chk.finish()
    first = refused[0][0]
    chk.expect("reason 1 (no input of that name)", all(r == 1 for e in refused for r in e[2][0]),
               [e[2] for e in refused])
    after = [x for x in s.sent_log if x[0] > first]
    trials = [x for x in after if "STREAM" in x[5]]
    chk.fact("REFUSED heard %d times; packets after the first: %s" % (
        len(refused), ["%.2f %s" % (x[0] - first, "+".join(x[5])) for x in after]))
    chk.expect("after REFUSED, only trial packets (STREAM and the first record bytes)",
               len(after) == len(trials) and all("RECORDS" in x[5] for x in trials), after)
    times = [first] + [x[0] for x in trials]
    gaps = [b - a for a, b in zip(times, times[1:])]
    chk.expect("at least three trials", len(gaps) >= 3, gaps)
    for i, g in enumerate(gaps[:3]):
        want = 2.0 ** i
        # loose: the machine is shared; early is a real fault, late within 0.8 s is load
        chk.expect("wait %d is %.0f s" % (i + 1, want), want - 0.02 <= g <= want + 0.8, g)
    acked_refusals = [e for e in refused if e[2][1]]
    chk.expect("each trial's own reply acknowledged it and carried REFUSED",
               len(acked_refusals) >= len(trials) - (1 if s.trial_pn is not None else 0),
               (len(acked_refusals), len(trials)))
    chk.expect("one REFUSED per reply", all(len(e[2][0]) == 1 for e in refused))
    chk.expect("nothing stored", s.S == 0)
    rc, st = rx.stop()
    if st:
        ep = st["endpoint"]
        chk.fact("receiver: listener_refused %d, refusals_logged %d" % (
            ep["listener_refused"], st["refusals_logged"]))
        chk.expect("the receiver counted every REFUSED it sent",
                   ep["listener_refused"] == s.refused_heard, (ep["listener_refused"],
                                                               s.refused_heard))
        chk.expect("one log line for the refused run", st["refusals_logged"] == 1,
                   st["refusals_logged"])
    chk.expect("the refusal is logged", "refus" in rx.log(), rx.log())
    return chk.finish()


def case_restart(tool, tmp, log, memo):
    """kill -9 of the receiver mid-transfer, restarted on the same port with its memo
    (no LOST: the run goes on in its epoch) or without it (LOST, the sender starts over
    at epoch 0, the receiver builds the run anew); nothing lost, nothing twice."""
    chk = Check("restart_" + ("memo" if memo else "nomemo"))
    rng = random.Random(5)
    records = small_records(rng, 800, 200, 2500)
    rx, ssec, spub = setup(tool, tmp)
    # Paced (about 1.5 s in all), so that the kill falls well inside the transfer.
    s = new_sender(rx, ssec, records, log, pace_pps=600)
    t0 = time.monotonic()
    s.run_until(lambda: s.S >= 250 and s.epoch >= 1, t0 + CASE_SECONDS / 2)
    chk.expect("a quarter stored before the kill, and most still to go", 250 <= s.S < 600, s.S)
    rx.kill()
    stored_at_kill = s.S
    if not memo:
        os.unlink(rx.memo)
    s.run_until(lambda: False, time.monotonic() + 0.2)   # the sender goes on meanwhile
    rx.start(port=rx.port)
    ok = s.run_until(s.done, t0 + CASE_SECONDS)
    chk.expect("the sender heard every record stored", ok, s.S)
    kinds = [e[1] for e in s.events]
    chk.fact("killed at %d records stored; sender events: %s" % (
        stored_at_kill, sorted(set(kinds))))
    chk.expect("the restarted receiver is a new build (new reply run)",
               "new_reply_run" in kinds)
    if memo:
        chk.expect("no LOST", s.lost_honoured == 0 and s.lost_ignored == 0,
                   (s.lost_honoured, s.lost_ignored))
        chk.expect("the run went on in its epoch", s.epochs_reached == 1 and s.epoch == 1)
        chk.expect("rebound on stream unknown", "stream_unknown" in kinds)
    else:
        chk.expect("a LOST, honoured", s.lost_honoured >= 1, s.lost_honoured)
        chk.expect("then epoch 1 again", s.epoch == 1)
    rc, st = rx.stop()
    check_store(chk, rx, spub, s.run, records)
    if st:
        ep = st["endpoint"]
        chk.fact("second receiver: memo_runs_restored %d, lost_notices_sent %d" % (
            ep["memo_runs_restored"], ep["lost_notices_sent"]))
        if memo:
            chk.expect("the run restored from the memo", ep["memo_runs_restored"] >= 1)
            chk.expect("no LOST sent", ep["lost_notices_sent"] == 0)
        else:
            chk.expect("LOST sent", ep["lost_notices_sent"] >= 1)
    return chk.finish()


def check_resumed(chk, got, records):
    """protocol.md §4.3 seen in a store, either receiver's ([(run, number, bytes)] in
    storage order): records numbered as places in the one input over every run of the
    source, each exactly once, byte for byte; each run a contiguous piece, the next
    starting where the one before stopped.  Returns the runs in order of their first
    record: [(run, first number, count)]."""
    nums = sorted(n for _, n, _ in got)
    dup = len(nums) - len(set(nums))
    chk.expect("no record stored twice", dup == 0, dup)
    chk.expect("every record of the input stored", set(nums) == set(range(len(records))),
               (len(nums), sorted(set(range(len(records))) - set(nums))[:10]))
    bad = [n for _, n, rec in got if n >= len(records) or rec != records[n]]
    chk.expect("byte for byte, each at its place in the input", not bad, bad[:10])
    runs = []
    for r, n, _ in got:
        if not runs or runs[-1][0] != r:
            runs.append([r, n, 0])
        runs[-1][2] += 1
    chk.expect("each run's records follow the one before's",
               all(b[1] == a[1] + a[2] for a, b in zip(runs, runs[1:])) and
               (not runs or runs[0][1] == 0), runs)
    return [tuple(x) for x in runs]


def store_frames(rx, spub):
    """The frames of the sender's record file as they stand (a torn tail left out)."""
    path = os.path.join(rx.inputs[INPUT], store_read.store_file_name(spub, SOURCE))
    return store_read.read_plr(path)[1] if os.path.exists(path) else []


def resume_sender(rx, ssec, tmp, tag, pace=None):
    """sender.py --resume as a process, its records --framed from the input file."""
    cmd = [sys.executable, os.path.join(HERE, "sender.py"), "--to", "127.0.0.1:%d" % rx.port,
           "--secret", ssec.hex(), "--peer", rx.public.hex(), "--input", INPUT,
           "--source", SOURCE.decode(), "--shape", str(SHAPE), "--resume", "--framed",
           "--timeout", str(CASE_SECONDS)] + (["--pace", str(pace)] if pace else [])
    err = open(os.path.join(tmp, "py-send-%s.err" % tag), "w")
    p = subprocess.Popen(cmd, stdin=open(os.path.join(tmp, "input.framed"), "rb"),
                         stdout=subprocess.DEVNULL, stderr=err)
    real_tool._RUNNING.append(p)
    p.err_path = err.name
    return p


def case_resume(tool, tmp, log, how):
    """protocol.md §4.3 with the real receiver: sender.py --resume A sends 1,200 records,
    paced over about 4 s (the record file lags what the receiver took by its commits,
    which a loaded disk makes long); once the file holds 250 of them A is stopped by
    SIGINT, or by kill -9
    (and pure-link recv killed with it and started again on its port); B, sender.py
    --resume on the same input, asks where the source stands, skips the m records the
    receiver holds and sends the rest from record m, at stream offset m.  Every record
    once in the record file, the runs one after the other."""
    chk = Check("resume_" + how)
    records = small_records(random.Random(21), 1200, 200, 2500)
    with open(os.path.join(tmp, "input.framed"), "wb") as f:
        f.write(b"".join(struct.pack(">I", len(r)) + r for r in records))
    rx, ssec, spub = setup(tool, tmp)
    a = resume_sender(rx, ssec, tmp, "a", pace=300)
    t0 = time.monotonic()
    n = 0
    while time.monotonic() < t0 + CASE_SECONDS / 2 and n < 250:
        time.sleep(0.02)
        n = len(store_frames(rx, spub))
    chk.expect("250 records stored before A stops, most still to come", 250 <= n < 900, n)
    if how == "sigint":
        a.send_signal(signal.SIGINT)
        chk.expect("A exits 130 on SIGINT", a.wait(timeout=5) == 130, a.returncode)
    else:
        a.send_signal(signal.SIGKILL)
        a.wait(timeout=5)
        rx.kill()
        rx.start(port=rx.port)
    at_stop = len(store_frames(rx, spub))
    b = resume_sender(rx, ssec, tmp, "b")
    try:
        rc = b.wait(timeout=CASE_SECONDS + 2)
    except subprocess.TimeoutExpired:
        b.kill()
        rc = b.wait()
    err = open(b.err_path).read()
    chk.expect("B exits 0 (every record stored)", rc == 0, err)
    said = [int(w.split()[-1].rstrip(")")) for w in err.split(",") if "resumed at" in w]
    rrc, st = rx.stop()
    chk.expect("receiver exits 0 on SIGTERM", rrc == 0, rrc)
    frames = store_frames(rx, spub)
    runs = check_resumed(chk, frames, records)
    chk.fact("A stopped (%s) with %d stored; runs in the file (first record, count): %s; B "
             "said: %s" % (how, at_stop, [("%016x" % r, f, c) for r, f, c in runs],
                           err.strip().splitlines()[-1:]))
    chk.expect("two runs, B's from where the store stood when it asked", len(runs) == 2 and
               runs[0][1] == 0 and runs[1][1] == runs[0][2] and runs[1][1] >= at_stop, runs)
    chk.expect("B was answered m and sent from record m", len(runs) == 2 and
               said == [runs[1][1]], (said, runs))
    if st:
        chk.fact("receiver: records_stored %s, lost_notices_sent %s" % (
            st["endpoint"]["records_stored"], st["endpoint"]["lost_notices_sent"]))
    return chk.finish()


class _Keeping:
    """A sender's socket that keeps a copy of every datagram sent (the test's own tap:
    what a party on the path could capture)."""

    def __init__(self, sock, kept):
        self._sock, self._kept = sock, kept

    def sendto(self, d, to):
        self._kept.append(d)
        return self._sock.sendto(d, to)

    def __getattr__(self, name):
        return getattr(self._sock, name)


def resuming(rx, ssec, records, log, **kw):
    """sender.py's Sender, resuming (protocol.md §4.3), its datagrams kept in s.kept."""
    s = new_sender(rx, ssec, records, log, resume=True, **kw)
    s.kept = []
    s.sock = _Keeping(s.sock, s.kept)
    return s


def case_resume_replay(tool, tmp, log):
    """protocol.md §4.3 "Why the proof and not the ask": A, resuming, sends records 0..299
    of an 800-record input and ends, its first datagram (its ask) kept; B, resuming on the
    whole input, is answered 300 and sends the rest, paced.  Mid-way pure-link recv is
    killed by kill -9 and started again without its memo; once B (after its LOST) has heard
    50 more stored, A's ask is replayed to it from another port.  The receiver builds A's
    run again from it and may answer it, but a replay is never proven live: B is not cut
    off, finishes, and every record is in the record file once (tests/interop/README.md
    item 60)."""
    chk = Check("resume_replay")
    records = small_records(random.Random(31), 800, 200, 2500)
    rx, ssec, spub = setup(tool, tmp)
    a = resuming(rx, ssec, records[:300], log)
    t0 = time.monotonic()
    chk.expect("A stores its 300 records", a.run_until(a.done, t0 + CASE_SECONDS / 4), a.S)
    ask = a.kept[0] if a.kept else None
    a.sock.close()
    chk.expect("A's first datagram was an ask (STREAM, no record bytes)", ask is not None and
               a.sent_log[0][5] and "STREAM" in a.sent_log[0][5] and
               "RECORDS" not in a.sent_log[0][5], a.sent_log[:1])
    b = resuming(rx, ssec, records, log, pace_pps=300)
    b.run_until(lambda: b.S >= 400 and b.epoch >= 1, t0 + CASE_SECONDS / 2)
    chk.expect("B answered 300", b.resumed_at == 300, b.resumed_at)
    chk.expect("B mid-way at the kill", 400 <= b.S < 700, b.S)
    rx.kill()
    os.unlink(rx.memo)
    rx.start(port=rx.port)
    at_restart = b.S
    b.run_until(lambda: b.S >= at_restart + 50 and b.lost_honoured >= 1, t0 + 3 * CASE_SECONDS / 4)
    chk.expect("B heard a LOST and stored 50 more before the replay",
               b.lost_honoured >= 1 and b.S >= at_restart + 50, (b.lost_honoured, b.S))
    replayer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if ask is not None:
        replayer.sendto(ask, ("127.0.0.1", rx.port))
    at_replay = b.S
    ok = b.run_until(b.done, t0 + CASE_SECONDS)
    replayer.close()
    chk.expect("B is not cut off: it hears every record stored", ok, (at_replay, b.S))
    rrc, st = rx.stop()
    chk.expect("receiver exits 0 on SIGTERM", rrc == 0, rrc)
    runs = check_resumed(chk, store_frames(rx, spub), records)
    chk.fact("killed at %d stored, replayed at %d, B ended at %d; runs (first, count): %s" % (
        at_restart, at_replay, b.S, [("%016x" % r, f, c) for r, f, c in runs]))
    chk.expect("A's run from 0, then B's from 300", [(r, f) for r, f, _ in runs] ==
               [(a.run, 0), (b.run, 300)], runs)
    return chk.finish()


def case_resume_stop_restart(tool, tmp, log):
    """protocol.md §4.3 "Why durable": A, resuming, paced, is paused (no more steps, its
    records in flight left as they are) once it heard 300 of 800 stored; B, resuming on the
    same input, is answered m, takes the source over and sends it to the end.  pure-link
    recv is killed by kill -9 and started again with its memo, then A goes on: its run
    comes back from the memo and it sends its records from its stored mark, none of which
    may be stored again (tests/interop/README.md item 61), and is told so, REFUSED reason 5
    (§4.3 "The cut-off run is told"), on which it ends its run within 5 s."""
    chk = Check("resume_stop_restart")
    records = small_records(random.Random(32), 800, 200, 2500)
    rx, ssec, spub = setup(tool, tmp)
    a = resuming(rx, ssec, records, log, pace_pps=300)
    t0 = time.monotonic()
    a.run_until(lambda: a.S >= 300 and a.epoch >= 1, t0 + CASE_SECONDS / 3)
    chk.expect("A paused mid-way, in epoch 1", 300 <= a.S < 700 and a.epoch >= 1, (a.S, a.epoch))
    at_pause = a.S
    b = resuming(rx, ssec, records, log)
    ok = b.run_until(b.done, t0 + 2 * CASE_SECONDS / 3)
    chk.expect("B hears every record stored", ok, b.S)
    chk.expect("B answered at least where A was heard stored",
               b.resumed_at is not None and b.resumed_at >= at_pause, (b.resumed_at, at_pause))
    rx.kill()
    rx.start(port=rx.port)
    sent_before = a.pn
    a.run_until(a.failed, time.monotonic() + 5.0)
    chk.expect("A sent again after the restart", a.pn > sent_before, (sent_before, a.pn))
    told = [e for e in a.events if e[1] in ("refused", "cut_off")]
    chk.expect("A heard REFUSED reason 5 and ended its run, nothing stored beyond B's answer",
               a.cut_off and told and told[0][1] == "cut_off" and a.S <= b.resumed_at,
               (a.cut_off, told, a.S))
    sent_cut = a.pn
    a.run_until(lambda: False, time.monotonic() + 1.5)
    chk.expect("A sends nothing once cut off", a.pn == sent_cut, (sent_cut, a.pn))
    rrc, st = rx.stop()
    chk.expect("receiver exits 0 on SIGTERM", rrc == 0, rrc)
    frames = store_frames(rx, spub)
    chk.expect("one frame per record", len(frames) == len(records), len(frames))
    runs = check_resumed(chk, frames, records)
    chk.fact("A paused at %d stored, B answered %s; A sent %d packets after the restart, "
             "heard %d stored; runs (first, count): %s" % (
                 at_pause, b.resumed_at, a.pn - sent_before, a.S,
                 [("%016x" % r, f, c) for r, f, c in runs]))
    if st:
        chk.fact("second receiver: memo_runs_restored %d, records_stored %d" % (
            st["endpoint"]["memo_runs_restored"], st["endpoint"]["records_stored"]))
    return chk.finish()


def _log(verbose):
    return (lambda m: sys.stderr.write(m + "\n")) if verbose else None


def case_amplification(tool, tmp, log):
    """protocol.md §6 on the wire: a sender that never answers the CHALLENGE sends the
    smallest packets (PING alone, 32 B) with every other number skipped, so each one
    arrives out of order and draws an ACK at once, its ranges growing; the receiver must
    never have sent more than 3x what it received.  Counted here: every reply byte that
    arrived against every byte sent before it arrived, which can only flatter the
    receiver's own count (its bytes in lag ours, its bytes out lead ours)."""
    chk = Check("amplification")
    rx, ssec, spub = setup(tool, tmp)
    s = new_sender(rx, ssec, [b"x"], log, answer_challenges=False)
    t0 = time.monotonic()
    sent = sum(x[4] for x in s.sent_log)
    s.run_until(lambda: s.epoch >= 1 and s.done(), t0 + CASE_SECONDS / 2)
    chk.expect("epoch 1 and the one record stored without a RESPONSE", s.epoch == 1 and s.done())
    sent = sum(x[4] for x in s.sent_log)
    got = 0
    worst = 0.0
    replies = 0
    key = pl.data_key(s.secrets[1], s.spub, s.rpub, s.run, 1)
    end = time.monotonic() + 3.0
    i = 0
    while time.monotonic() < end:
        if i < 400:
            pn = s.pn + 1                        # skip one: every packet out of order
            s.pn = pn + 1
            header = pl.sender_header(1, s.kid, s.run, pn, 4)
            d = key.seal(header, pl.enc_ping(), pn)
            s.sock.sendto(d, s.rx_addr)
            sent += len(d)
            i += 1
        r, _, _ = select.select([s.sock], [], [], 0.002)
        while r:
            try:
                d, _ = s.sock.recvfrom(65535)
            except BlockingIOError:
                break
            got += len(d)
            replies += 1
            worst = max(worst, got / sent)
    chk.fact("sent %d B in %d packets; %d replies, %d B; worst ratio %.2f" % (
        sent, len(s.sent_log) + i, replies, got, worst))
    chk.expect("never more than 3x before validation", worst <= pl.AMPLIFICATION, worst)
    chk.expect("it did answer", replies >= 10, replies)
    rc, st = rx.stop()
    if st:
        ep = st["endpoint"]
        chk.fact("receiver: dropped_amplification %d, addresses_validated %d" % (
            ep["dropped_amplification"], ep["addresses_validated"]))
        chk.expect("the address was never validated", ep["addresses_validated"] == 0)
    return chk.finish()


def events(s, kind):
    return [e for e in s.events if e[1] == kind]


def check_sizes(chk, s, cap=None):
    """What protocol.md §5.1 asks of every packet the sender sent: epoch-0 packets and PTO
    probes at most the base; a size probe is a PING padded to its size; any other packet
    above the base only once a probe of at least its size was acknowledged since the last
    drop to the base (here: in the sender's own record of acknowledged probes)."""
    acked = [(e[0], e[2]) for e in events(s, "size_probe_acked")]
    drops = [e[0] for e in events(s, "black_hole")]
    bad = []
    for t, pn, epoch, L, size, kinds, port in s.sent_log:
        probe = kinds == ("PING", "PADDING")
        chk.expect("no datagram above 1,452 B", size <= pl.DATAGRAM_MOST, size)
        if epoch == 0 and size > pl.DATAGRAM_BASE:
            bad.append(("epoch 0 above the base", pn, size))
        if pn in s.pto_probes and size > pl.DATAGRAM_BASE:
            bad.append(("PTO probe above the base", pn, size))
        if probe or size <= pl.DATAGRAM_BASE:
            continue
        since = max([d for d in drops if d <= t], default=-1.0)
        if not any(since < ta <= t and sa >= size for ta, sa in acked):
            bad.append(("above the base with no probe of its size acknowledged", pn, size))
        if cap is not None and size > cap:
            bad.append(("a packet of record bytes above the path's size", pn, size))
    chk.expect("every packet within the size rules of §5.1", not bad, bad[:5])
    probes = [x for x in s.sent_log if x[5] == ("PING", "PADDING")]
    chk.expect("size probes sent", probes, len(probes))
    chk.expect("the first size probe is 1,452 B", probes and probes[0][4] == pl.DATAGRAM_MOST,
               probes[:1])
    chk.expect("every probe after epoch 0", all(x[2] >= 1 for x in probes))
    chk.fact("PTO probes: %d, the largest %d B" % (len(s.pto_probes), max(
        [x[4] for x in s.sent_log if x[1] in s.pto_probes], default=0)))
    return probes


def case_sizes(tool, tmp, log):
    """On loopback (it carries 64 KiB) the sender's first probe, 1,452 B, is acknowledged
    in one round trip: the search ends at the most the spec allows, full packets go at
    1,452 B, and pure-link recv stores every record once."""
    chk = Check("sizes")
    rng = random.Random(6)
    records = mixed_records(rng, 600, big=1 << 20)
    rx, ssec, spub = setup(tool, tmp)
    s = new_sender(rx, ssec, records, log)
    t0 = time.monotonic()
    ok = s.run_until(s.done, t0 + CASE_SECONDS)
    chk.expect("the sender heard every record stored", ok, s.S)
    probes = check_sizes(chk, s)
    sz = s.search
    chk.fact("sender: %d packets in %.2f s; probes sent %d, acked %d, lost %d; size %d B; %s" % (
        s.pn, time.monotonic() - t0, sz.probes_sent, sz.probes_acked, sz.probes_lost, sz.size,
        [(round(t - t0, 3), w, n) for t, w, n in sz.history]))
    chk.expect("the search ended at 1,452 B", sz.size == pl.DATAGRAM_MOST and not sz.searching,
               (sz.size, sz.searching))
    chk.expect("with one probe", len(probes) == 1 and sz.probes_acked == 1, len(probes))
    # a packet is full within a RECORD frame's head (7 B): the last piece may need more
    full = [x for x in s.sent_log if x[4] > pl.DATAGRAM_MOST - 8 and "RECORDS" in x[5]]
    chk.expect("most packets went full at 1,452 B", len(full) > s.pn // 2, (len(full), s.pn))
    chk.expect("no packet lost (but to a PTO on a loaded machine)",
               s.packets_lost == 0 or s.ptos > 0, (s.packets_lost, s.ptos))
    rc, st = rx.stop()
    check_store(chk, rx, spub, s.run, records)
    if st:
        ep = st["endpoint"]
        chk.expect("the receiver took every packet: none malformed, too long or failing",
                   ep["packets_received"] == s.pn and ep["dropped_malformed"] == 0 and
                   ep["dropped_auth"] == 0, (ep["packets_received"], s.pn))
        chk.expect("receiver counts every record stored", ep["records_stored"] == len(records),
                   ep["records_stored"])
    return chk.finish()


def capped_transfer(tool, tmp, log, cap, records, chk, **kw):
    """The sender through a forwarder that drops datagrams above `cap`; returns the
    sender, the forwarder, the receiver and the sender's public key, transfer done."""
    rx, ssec, spub = setup(tool, tmp)
    fw = Capped(("127.0.0.1", rx.port), cap)
    fw.start()
    s = sndm.Sender(("127.0.0.1", fw.port), rx.public, ssec, records, SOURCE, INPUT.encode(),
                    SHAPE, log=log, **kw)
    return s, fw, rx, spub


def case_mtu(tool, tmp, log):
    """A path that drops every datagram above a size, without a word (ICMP filtered), at
    the base itself, at 1,372 B (an IPv4 MTU of 1,400) and one byte below the most: the
    search ends within 8 B at or below the size, the lost probes cost no data and count
    as no lost packet, and every record is stored once."""
    chk = Check("mtu")
    rng = random.Random(7)
    for cap in (pl.DATAGRAM_BASE, 1372, pl.DATAGRAM_MOST - 1):
        records = mixed_records(rng, 400, big=1 << 20)
        sub = os.path.join(tmp, "cap%d" % cap)
        os.makedirs(sub)
        s, fw, rx, spub = capped_transfer(tool, sub, log, cap, records, chk)
        t0 = time.monotonic()
        ok = s.run_until(s.done, t0 + CASE_SECONDS / 3)
        fw.stopping = True
        sz = s.search
        chk.fact("cap %d: %d packets in %.2f s; probes %s; size %d B; searching %s; "
                 "path dropped %d" % (cap, s.pn, time.monotonic() - t0,
                                      [x[4] for x in s.sent_log if x[5] == ("PING", "PADDING")],
                                      sz.size, sz.searching, len(fw.dropped)))
        chk.expect("cap %d: the sender heard every record stored" % cap, ok, s.S)
        check_sizes(chk, s, cap)
        chk.expect("cap %d: the search ended within 8 B at or below it" % cap,
                   not sz.searching and cap - 8 <= sz.size <= cap, (sz.size, sz.searching))
        chk.expect("cap %d: it failed 1,452 B after 3 probes" % cap,
                   [x[4] for x in s.sent_log if x[5] == ("PING", "PADDING")][:3] ==
                   [pl.DATAGRAM_MOST] * 3)
        chk.expect("cap %d: the path dropped only size probes" % cap,
                   all(way == "up" and n > cap for _, way, n in fw.dropped) and
                   len(fw.dropped) == sz.probes_lost, (len(fw.dropped), sz.probes_lost))
        # on a loaded machine a PTO may fire (it declares all in flight lost): then the
        # count says nothing of the probes
        chk.expect("cap %d: a lost probe is no lost packet" % cap,
                   s.packets_lost == 0 or s.ptos > 0, (s.packets_lost, s.ptos))
        chk.expect("cap %d: no black hole" % cap, sz.black_holes == 0)
        rc, st = rx.stop()
        check_store(chk, rx, spub, s.run, records)
    return chk.finish()


def case_black_hole(tool, tmp, log):
    """The path carries 1,452 B, then mid-transfer drops everything above 1,300 B (a route
    change with ICMP filtered): the sender's full packets vanish while its PTO probes (at
    most the base) pass, so it drops to the base, searches again and finds 1,300 B within
    8 B.  The path then carries 1,452 B again: after the raise time (1 s here, 600 s by
    default) the search starts again and finds 1,452 B.  Every record stored once."""
    chk = Check("black_hole")
    rng = random.Random(8)
    records = small_records(rng, 6000, 500, 1500)
    s, fw, rx, spub = capped_transfer(tool, tmp, log, None, records, chk, pace_pps=1500,
                                      pmtu_raise=1.0)
    t0 = time.monotonic()
    s.run_until(lambda: s.search.size == pl.DATAGRAM_MOST and s.S >= 500, t0 + 3)
    chk.expect("1,452 B found first", s.search.size == pl.DATAGRAM_MOST, s.search.size)
    fw.cap = 1300
    t_cap = time.monotonic()
    s.run_until(lambda: not s.search.searching and s.search.black_holes, t_cap + 4)
    sz = s.search
    chk.expect("a black hole seen", sz.black_holes == 1, sz.black_holes)
    chk.expect("the new search ended within 8 B at or below 1,300 B",
               not sz.searching and 1292 <= sz.size <= 1300, (sz.size, sz.searching))
    fw.cap = None
    t_open = time.monotonic()
    ok = s.run_until(s.done, t0 + CASE_SECONDS)
    fw.stopping = True
    hist = [(round(t - t0, 3), w, n) for t, w, n in sz.history]
    bh = [t for t, w, n in sz.history if w == "black_hole"]
    chk.fact("cap 1,300 at %.3f s, lifted at %.3f s; %s" % (t_cap - t0, t_open - t0, hist))
    chk.fact("sender: %d packets, %d lost; probes sent %d, lost %d; path dropped %d" % (
        s.pn, s.packets_lost, sz.probes_sent, sz.probes_lost, len(fw.dropped)))
    if bh:
        chk.fact("black hole left %.3f s after the path changed" % (bh[0] - t_cap))
    chk.expect("the sender heard every record stored", ok, s.S)
    check_sizes(chk, s)
    chk.expect("after the raise time the search found 1,452 B again",
               [w for _, w, _ in sz.history][-3:] == ["raise", "acked", "done"] and
               [n for _, _, n in sz.history][-2:] == [pl.DATAGRAM_MOST] * 2 and
               sz.size == pl.DATAGRAM_MOST, hist)
    raised = [t for t, w, n in sz.history if w == "raise"]
    done = [t for t, w, n in sz.history if w == "done" and t > t_cap]
    chk.expect("not before the raise time", raised and done and raised[0] - done[0] >= 1.0,
               (raised, done))
    rc, st = rx.stop()
    check_store(chk, rx, spub, s.run, records)
    return chk.finish()


def case_one_record(tool, tmp, log):
    """protocol.md §4.2 "the proof comes at once": one small record goes in the first
    packet (epoch 0), pure-link recv (with a memo: its ACCEPT waits for the memo write)
    acknowledges it but hands it over only once a packet of epoch 1 opens; the sender,
    taking the ACCEPT with the record not yet stored, sends a packet of epoch 1 at once, a
    PING since nothing else is due.  Four runs in turn, each stored with no record byte
    sent twice and without the 1 s resend rule."""
    chk = Check("one_record")
    rx, ssec, spub = setup(tool, tmp)
    stored = 0
    for i in range(4):
        s = new_sender(rx, ssec, [b"record %d" % i], log)
        ok = s.run_until(s.done, time.monotonic() + CASE_SECONDS / 4)
        s.sock.close()
        stored += ok
        kinds = [(x[2], x[5]) for x in s.sent_log]
        proof = [e for e in s.events if e[1] == "proof"]
        chk.fact("run %d: %s" % (i, kinds))
        chk.expect("run %d: stored" % i, ok)
        chk.expect("run %d: the record went once, in epoch 0" % i,
                   [e for e, k in kinds if "RECORDS" in k] == [0], kinds)
        chk.expect("run %d: at the ACCEPT a packet of epoch 1 at once, a PING" % i,
                   len(proof) == 1 and any(x[1] == proof[0][2] and x[2] == 1 and
                                           "PING" in x[5] for x in s.sent_log), proof)
        chk.expect("run %d: not by the 1 s resend rule" % i,
                   not [e for e in s.events if e[1] == "resend_rule"])
    rc, st = rx.stop()
    if st:
        chk.expect("the receiver stored the four records", st["endpoint"]["records_stored"] == 4,
                   st["endpoint"]["records_stored"])
    return chk.finish()


CASES = {
    "resume_sigint": lambda t, d, v: case_resume(t, d, _log(v), "sigint"),
    "resume_kill9": lambda t, d, v: case_resume(t, d, _log(v), "kill9"),
    "resume_replay": lambda t, d, v: case_resume_replay(t, d, _log(v)),
    "resume_stop_restart": lambda t, d, v: case_resume_stop_restart(t, d, _log(v)),
    "amplification": lambda t, d, v: case_amplification(t, d, _log(v)),
    "one_record": lambda t, d, v: case_one_record(t, d, _log(v)),
    "black_hole": lambda t, d, v: case_black_hole(t, d, _log(v)),
    "mtu": lambda t, d, v: case_mtu(t, d, _log(v)),
    "sizes": lambda t, d, v: case_sizes(t, d, _log(v)),
    "bulk": lambda t, d, v: case_bulk(t, d, _log(v)),
    "epochs": lambda t, d, v: case_epochs(t, d, _log(v)),
    "move": lambda t, d, v: case_move(t, d, _log(v)),
    "refused": lambda t, d, v: case_refused(t, d, _log(v)),
    "restart_memo": lambda t, d, v: case_restart(t, d, _log(v), True),
    "restart_nomemo": lambda t, d, v: case_restart(t, d, _log(v), False),
}


def run_cases(cases, prefix):
    """The command line of against_recv.py and against_send.py: one case, in a fresh
    directory (kept with --keep)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", default=os.path.join(os.environ.get("B", "build"), "pure-link"))
    ap.add_argument("--keep")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("case", choices=sorted(cases))
    a = ap.parse_args()
    tmp = a.keep or tempfile.mkdtemp(prefix=prefix)
    os.makedirs(tmp, exist_ok=True)
    try:
        ok = cases[a.case](a.tool, tmp, a.verbose)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(run_cases(CASES, "pl-against-recv-"))
