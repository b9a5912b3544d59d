#!/usr/bin/env python3
"""against_send.py -- the independent receiver (receiver.py) against the real sender
(`pure-link send --framed`) over UDP on loopback.

Usage: python3 tests/interop/against_send.py [--tool build/pure-link] [--keep DIR] [-v] CASE
CASE: bulk | move | refused | restart_memo | restart_nomemo
Every case also checks, from receiver.py's accounting, that no unvalidated address got
more than 3x the bytes it sent; `move` checks it again from the bytes a forwarder saw.
"""

import argparse
import json
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
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pl_spec as pl  # noqa: E402
import real_tool  # noqa: E402
import rx_store  # noqa: E402
from against_recv import Check, mixed_records, run_cases, small_records  # noqa: E402

INPUT = "logs"
SHAPE = 7
SOURCE = "real.sender"
CASE_SECONDS = 16.0


class PyRecv:
    """receiver.py as a process, restartable on the same port."""

    def __init__(self, tmp, peer_public, goal, extra=(), verbose=False):
        self.tmp = tmp
        self.secret = os.urandom(32)
        self.public = pl.x25519_public(self.secret)
        self.peer = peer_public
        self.goal = goal
        self.extra = list(extra)
        self.verbose = verbose
        self.port = 0
        self.lives = 0
        self.proc = None

    def start(self, port=None, timeout=CASE_SECONDS):
        self.lives += 1
        self.out = os.path.join(self.tmp, "rx-%d.json" % self.lives)
        self.errpath = os.path.join(self.tmp, "rx-%d.err" % self.lives)
        self.err = open(self.errpath, "w")
        cmd = [sys.executable, os.path.join(HERE, "receiver.py"),
               "--port", str(self.port if port is None else port), "--secret", self.secret.hex(),
               "--peer", self.peer.hex(), "--records", str(self.goal), "--out", self.out,
               "--timeout", str(timeout)] + self.extra + (["-v"] if self.verbose else [])
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.err)
        real_tool._RUNNING.append(self.proc)
        self.port = real_tool.wait_listening(self.proc, self.errpath, "receiver.py")
        return self.port

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=5)
        self.err.close()

    def wait(self, timeout):
        rc = self.proc.wait(timeout=timeout)
        self.err.close()
        res = json.load(open(self.out)) if os.path.exists(self.out) else None
        return rc, res


class Forwarder(threading.Thread):
    """A UDP forwarder: the sender sends to `port`; datagrams go on to the receiver from
    one of two upstream sockets (switch() changes which), replies come back to the
    sender.  It logs (monotonic time, 'up' | 'down', upstream index, bytes)."""

    def __init__(self, rx_addr):
        super().__init__(daemon=True)
        self.rx_addr = rx_addr
        self.front = self._sock()
        self.port = self.front.getsockname()[1]
        self.ups = [self._sock(), self._sock()]
        self.cur = 0
        self.client = None
        self.wire = []
        self.stopping = False

    @staticmethod
    def _sock():
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        s.bind(("127.0.0.1", 0))
        s.setblocking(False)
        return s

    def up_addr(self, i):
        return "127.0.0.1:%d" % self.ups[i].getsockname()[1]

    def switch(self):
        self.cur = 1

    def run(self):
        socks = [self.front] + self.ups
        while not self.stopping:
            r, _, _ = select.select(socks, [], [], 0.05)
            for s in r:
                while True:
                    try:
                        d, addr = s.recvfrom(65535)
                    except (BlockingIOError, ConnectionRefusedError):
                        break
                    now = time.monotonic()
                    try:
                        if s is self.front:
                            self.client = addr
                            self.ups[self.cur].sendto(d, self.rx_addr)
                            self.wire.append((now, "up", self.cur, len(d)))
                        elif self.client is not None:
                            i = self.ups.index(s)
                            self.wire.append((now, "down", i, len(d)))
                            self.front.sendto(d, self.client)
                    except (BlockingIOError, ConnectionRefusedError):
                        pass


class Feeder(threading.Thread):
    """Writes framed records (4-byte big-endian length, bytes) to the sender's stdin in
    batches, `pause` seconds apart, then closes it.  `at(i)` is called before batch i."""

    def __init__(self, pipe, records, batch, pause, at=None):
        super().__init__(daemon=True)
        self.pipe, self.records, self.batch, self.pause, self.at = pipe, records, batch, pause, at
        self.written = 0

    def run(self):
        try:
            for i in range(0, len(self.records), self.batch):
                if self.at:
                    self.at(i)
                buf = b"".join(struct.pack(">I", len(r)) + r
                               for r in self.records[i:i + self.batch])
                self.pipe.write(buf)
                self.pipe.flush()
                self.written = i + self.batch
                if self.pause:
                    time.sleep(self.pause)
            self.pipe.close()
        except (BrokenPipeError, ValueError):
            pass


def start_sender(tool, tmp, skey, rx, input_name=INPUT, deadline=CASE_SECONDS, to_port=None):
    stats = os.path.join(tmp, "send.stats.json")
    cmd = [tool, "send", "--key", skey, "--to", "127.0.0.1:%d" % (to_port or rx.port),
           "--peer", rx.public.hex(), "--input", input_name, "--source", SOURCE,
           "--shape", str(SHAPE), "--framed", "--deadline", "%ds" % int(deadline),
           "--no-progress", "--stats=" + stats, "--keylog", os.path.join(tmp, "send.keylog")]
    errf = open(os.path.join(tmp, "send.err"), "w")
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=errf)
    real_tool._RUNNING.append(p)
    p.stats_path, p.err_path = stats, errf.name
    return p


def sender_result(p, timeout):
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
    st = json.load(open(p.stats_path)) if os.path.exists(p.stats_path) else None
    return rc, st, open(p.err_path).read()


def check_amplification(chk, res):
    """protocol.md §6: before validation at most 3x the bytes received from the address,
    from receiver.py's own accounting (UDP payload bytes both ways)."""
    eps = res.get("amplification", [])
    chk.expect("accounting recorded", eps)
    worst = 0.0
    for ep in eps:
        if ep["bytes_in"]:
            worst = max(worst, ep["bytes_out"] / ep["bytes_in"])
        chk.expect("at most 3x before validation at %s" % ep["addr"],
                   ep["bytes_out"] <= pl.AMPLIFICATION * ep["bytes_in"], ep)
    chk.fact("amplification before validation: worst %.2fx over %d address(es)" % (
        worst, len(eps)))


def check_records(chk, got, records, what):
    """got: [(run, number, bytes)] in storage order."""
    runs = sorted({r for r, _, _ in got})
    chk.expect("%s: one run" % what, len(runs) == 1, ["%016x" % r for r in runs])
    nums = [n for _, n, _ in got]
    chk.expect("%s: no record twice" % what, len(nums) == len(set(nums)),
               len(nums) - len(set(nums)))
    chk.expect("%s: records 0..n-1 in order" % what, nums == list(range(len(records))),
               (len(nums), nums[:3], nums[-3:]))
    bad = [n for _, n, rec in got if n >= len(records) or rec != records[n]]
    chk.expect("%s: byte for byte" % what, not bad, bad[:10])


def keys(tmp):
    skey, ssec, spub = real_tool.new_keypair(tmp, "send")
    return skey, spub


# ------------------------------------------------------------------------------ cases
def case_bulk(tool, tmp, verbose):
    chk = Check("bulk")
    records = mixed_records(random.Random(11), 1000)
    skey, spub = keys(tmp)
    rx = PyRecv(tmp, spub, len(records), verbose=verbose)
    rx.start()
    p = start_sender(tool, tmp, skey, rx)
    f = Feeder(p.stdin, records, len(records), 0)
    t0 = time.monotonic()
    f.start()
    rc, st, err = sender_result(p, CASE_SECONDS + 2)
    chk.fact("sender exit %d after %.2f s" % (rc, time.monotonic() - t0))
    chk.expect("pure-link send exits 0 (every record stored)", rc == 0, err)
    rrc, res = rx.wait(5)
    chk.expect("receiver.py exits 0", rrc == 0, rrc)
    if res:
        import hashlib
        chk.expect("1,000 records", res["records_stored"] == len(records), res["records_stored"])
        chk.expect("lengths in order", res["record_lengths"] == [len(r) for r in records])
        chk.expect("bytes", res["records_sha256"] ==
                   hashlib.sha256(b"".join(records)).hexdigest())
        chk.expect("the 4 MiB record among them", max(res["record_lengths"]) == 4 << 20)
        chk.fact("receiver.py: opened %d, failed %d, epochs %s" % (
            res["packets_opened"], res["packets_failed"], res["opened_by_epoch"]))
        check_amplification(chk, res)
    return chk.finish()


def case_move(tool, tmp, verbose):
    """The sender's port changes mid-transfer: a forwarder switches its upstream socket.
    receiver.py must move the run, challenge the new address and be validated by the
    real sender's RESPONSE; the 3x limit is checked from the forwarder's byte counts."""
    chk = Check("move")
    records = small_records(random.Random(12), 400, 200, 2500)
    skey, spub = keys(tmp)
    rx = PyRecv(tmp, spub, len(records), verbose=verbose)
    rx.start()
    fw = Forwarder(("127.0.0.1", rx.port))
    fw.start()
    p = start_sender(tool, tmp, skey, rx, to_port=fw.port)
    f = Feeder(p.stdin, records, 20, 0.06, at=lambda i: i == 200 and fw.switch())
    f.start()
    rc, st, err = sender_result(p, CASE_SECONDS + 2)
    chk.expect("pure-link send exits 0", rc == 0, err)
    rrc, res = rx.wait(5)
    fw.stopping = True
    chk.expect("receiver.py exits 0", rrc == 0, rrc)
    if not res:
        return chk.finish()
    eps = res["amplification"]
    chk.fact("addresses: %s" % [(e["addr"], e["validated"] is not None) for e in eps])
    chk.expect("the run moved", res["counters"].get("address_moved", 0) >= 1, res["counters"])
    chk.expect("first address then the new one, each validated",
               [e["addr"] for e in eps] == [fw.up_addr(0), fw.up_addr(1)] and
               all(e["validated"] is not None for e in eps), eps)
    check_amplification(chk, res)
    # the same limit from the bytes on the wire: every reply an upstream socket got
    # before its validation fits 3x what was sent from it before the reply arrived
    for i, ep in enumerate(eps[:2]):
        sent_up = 0
        got_down = 0
        worst = 0.0
        until = ep["validated"] or float("inf")
        for t, d, j, n in fw.wire:
            if j != i:
                continue
            if d == "up":
                sent_up += n
            elif t < until:
                got_down += n
                worst = max(worst, got_down / max(1, sent_up))
        chk.expect("wire: at most 3x to %s before validation" % ep["addr"],
                   worst <= pl.AMPLIFICATION, worst)
        chk.fact("wire: to %s before validation %d B for %d B, worst %.2fx" % (
            ep["addr"], got_down, sent_up, worst))
    chk.expect("records", res["records_stored"] == len(records), res["records_stored"])
    import hashlib
    chk.expect("bytes", res["records_sha256"] == hashlib.sha256(b"".join(records)).hexdigest())
    return chk.finish()


def case_refused(tool, tmp, verbose):
    """receiver.py has no input 'nosuch': it answers each turn with REFUSED; the real
    sender waits 1 s, then sends trials 2 s and 4 s apart, and nothing else."""
    chk = Check("refused")
    records = small_records(random.Random(13), 20, 10, 100)
    skey, spub = keys(tmp)
    rx = PyRecv(tmp, spub, 0, extra=["--input", "%s:%d" % (INPUT, SHAPE)], verbose=verbose)
    rx.start(timeout=9.5)
    p = start_sender(tool, tmp, skey, rx, input_name="nosuch", deadline=9)
    Feeder(p.stdin, records, len(records), 0).start()
    rc, st, err = sender_result(p, 12)
    chk.expect("pure-link send exits 4 (refused until --deadline)", rc == 4, (rc, err))
    chk.expect("the refusal is logged once (and the give-up at exit)",
               err.count("refused the stream") == 1, err)
    rrc, res = rx.wait(5)
    if not res:
        return chk.finish()
    refs = res["refusals"]
    chk.expect("one refused run, reason 1", len(refs) == 1 and refs[0]["reason"] == 1, refs)
    if refs:
        turns = refs[0]["turns"]
        chk.fact("turns at %s" % ["%.2f" % (t - turns[0]) for t in turns])
        # the first flight (packets sent before the first REFUSED arrived) is one episode
        # start; then one trial per wait
        flight = [t for t in turns if t - turns[0] < 0.5]
        trials = turns[len(flight):]
        times = [flight[-1]] + trials
        gaps = [b - a for a, b in zip(times, times[1:])]
        chk.expect("at least three trials after the first flight", len(gaps) >= 3, gaps)
        for i, g in enumerate(gaps[:3]):
            want = 2.0 ** i
            chk.expect("wait %d is %.0f s" % (i + 1, want), want - 0.05 <= g <= want + 0.8, g)
        n = res["counters"].get("listener_refused", 0)
        # one REFUSED per reply: the packets of the first flight may share one or not
        chk.expect("a REFUSED for the first flight and one per trial",
                   1 + len(trials) <= n <= len(turns), (n, len(trials)))
        chk.expect("nothing but the turns once refused (no PINGs, probes)",
                   refs[0]["others"] == 0, refs[0]["others"])
    if st:
        chk.fact("sender: link_refused %s" % st.get("endpoint", {}).get("link_refused"))
    check_amplification(chk, res)
    return chk.finish()


def case_restart(tool, tmp, verbose, memo):
    """kill -9 of receiver.py mid-transfer, restarted on its port with its store and with
    (or without) its memo: no LOST with it, LOST without; nothing lost, nothing twice."""
    chk = Check("restart_" + ("memo" if memo else "nomemo"))
    records = small_records(random.Random(14), 800, 200, 2500)
    skey, spub = keys(tmp)
    store = os.path.join(tmp, "store")
    memo_path = os.path.join(tmp, "rx.memo")
    rx = PyRecv(tmp, spub, len(records), extra=["--store", store, "--memo", memo_path],
                verbose=verbose)
    rx.start()
    p = start_sender(tool, tmp, skey, rx)
    f = Feeder(p.stdin, records, 20, 0.05)
    t0 = time.monotonic()
    f.start()
    n = 0
    while time.monotonic() < t0 + CASE_SECONDS / 2:
        if os.path.exists(os.path.join(store, "records.bin")):
            n = len(rx_store.read_records(store))
            if n >= 250:
                break
        time.sleep(0.02)
    chk.expect("250 records stored before the kill, most still to come", 250 <= n < 600, n)
    rx.kill()
    if not memo:
        os.unlink(memo_path)
    time.sleep(0.2)
    rx.start(port=rx.port)
    rc, st, err = sender_result(p, CASE_SECONDS)
    chk.expect("pure-link send exits 0", rc == 0, err)
    rrc, res = rx.wait(5)
    chk.expect("receiver.py exits 0", rrc == 0, rrc)
    check_records(chk, rx_store.read_records(store), records, "store")
    if res:
        c = res["counters"]
        chk.fact("killed at %d stored; second life: memo runs %d, LOST sent %d, store cut %d B" % (
            n, res["memo_runs_restored"], c.get("lost_sent", 0), res["store_cut_bytes"]))
        if memo:
            chk.expect("the run restored from the memo", res["memo_runs_restored"] == 1)
            chk.expect("no LOST", c.get("lost_sent", 0) == 0, c)
        else:
            chk.expect("no memo", res["memo_runs_restored"] == 0)
            chk.expect("LOST sent", c.get("lost_sent", 0) >= 1, c)
            chk.expect("the run built anew from epoch 0", res["opened_by_epoch"].get("0", 0) >= 1,
                       res["opened_by_epoch"])
        check_amplification(chk, res)
    if st:
        ep = st.get("endpoint", {})
        chk.fact("sender: lost_notices_received %s, epochs %s" % (
            ep.get("lost_notices_received"), ep.get("epochs")))
        if not memo:
            chk.expect("the sender heard the LOST", ep.get("lost_notices_received", 0) >= 1)
    return chk.finish()


CASES = {
    "bulk": case_bulk,
    "move": case_move,
    "refused": case_refused,
    "restart_memo": lambda t, d, v: case_restart(t, d, v, True),
    "restart_nomemo": lambda t, d, v: case_restart(t, d, v, False),
}


if __name__ == "__main__":
    sys.exit(run_cases(CASES, "pl-against-send-"))
