#!/usr/bin/env python3
"""against_send.py -- the independent receiver (receiver.py) against the real sender
(`pure-link send --framed`) over UDP on loopback.

Usage: python3 tests/interop/against_send.py [--tool build/pure-link] [--keep DIR] [-v] CASE
CASE: bulk | move | refused | restart_memo | restart_nomemo | epochs | epochs_lossy |
      restart_epoch1 | restart_epoch5 | sizes | mtu | black_hole | resume_sigint |
      resume_kill9 | resume_replay | resume_stop
Every case also checks, from receiver.py's accounting, that no unvalidated address got
more than 3x the bytes it sent; `move` checks it again from the bytes a forwarder saw.
"""

import hashlib
import json
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pl_spec as pl  # noqa: E402
import real_tool  # noqa: E402
import rx_store  # noqa: E402
from against_recv import Check, check_resumed, mixed_records, run_cases, small_records  # noqa: E402
from udp_path import Capped, Forwarder, Impairer  # noqa: E402

INPUT = "logs"
SHAPE = 7
SOURCE = "real.sender"
CASE_SECONDS = 16.0
EPOCH_PACKETS = 32              # case epochs: --epoch-packets, far below the default 2^22
MIN_EPOCHS = {False: 16, True: 16}   # epochs the run must reach: clean, lossy
LOSS = 0.05                     # case epochs_lossy: the forwarder's loss both ways


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


def start_sender(tool, tmp, skey, rx, input_name=INPUT, deadline=CASE_SECONDS, to_port=None,
                 extra=(), tag=""):
    stats = os.path.join(tmp, "send%s.stats.json" % tag)
    cmd = [tool, "send", "--key", skey, "--to", "127.0.0.1:%d" % (to_port or rx.port),
           "--peer", rx.public.hex(), "--input", input_name, "--source", SOURCE,
           "--shape", str(SHAPE), "--framed", "--deadline", "%ds" % int(deadline),
           "--no-progress", "--stats=" + stats, "--keylog", os.path.join(tmp, "send.keylog")
           ] + list(extra)
    errf = open(os.path.join(tmp, "send%s.err" % tag), "w")
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


def feed_and_wait(chk, p, feeder, rx):
    """Feeds the sender, waits for it to exit 0 and for receiver.py's result."""
    t0 = time.monotonic()
    feeder.start()
    rc, st, err = sender_result(p, CASE_SECONDS + 2)
    chk.fact("sender exit %d after %.2f s" % (rc, time.monotonic() - t0))
    chk.expect("pure-link send exits 0 (every record stored)", rc == 0, err)
    rrc, res = rx.wait(5)
    chk.expect("receiver.py exits 0", rrc == 0, rrc)
    return st, res


def check_delivered(chk, res, records):
    """receiver.py's own result: every record once, in order, byte for byte."""
    chk.expect("%d records" % len(records), res["records_stored"] == len(records),
               res["records_stored"])
    chk.expect("lengths in order", res["record_lengths"] == [len(r) for r in records])
    chk.expect("bytes", res["records_sha256"] == hashlib.sha256(b"".join(records)).hexdigest())


def via_path(tool, tmp, verbose, records, fw):
    """receiver.py, the forwarder `fw` in front of it (made with no address yet) and
    pure-link send to the forwarder; the forwarder is started."""
    skey, spub = keys(tmp)
    rx = PyRecv(tmp, spub, len(records), verbose=verbose)
    rx.start()
    fw.rx_addr = ("127.0.0.1", rx.port)
    fw.start()
    return rx, fw, start_sender(tool, tmp, skey, rx, to_port=fw.port)


def size_stats(chk, st):
    """The sender's size search as its statistics report it (the `sender` object)."""
    e = st.get("sender", {})
    chk.fact("sender stats: %s" % {k: v for k, v in e.items() if "pmtu" in k or
                                   "datagram" in k})
    return e


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
    st, res = feed_and_wait(chk, p, Feeder(p.stdin, records, len(records), 0), rx)
    if res:
        check_delivered(chk, res, records)
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
    rx, fw, p = via_path(tool, tmp, verbose, records, Forwarder(None))
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


def second_life(chk, rx, p, store, records):
    """Restarts receiver.py on its port; the sender must then finish, and every record
    be in the store once."""
    rx.start(port=rx.port)
    rc, st, err = sender_result(p, CASE_SECONDS)
    chk.expect("pure-link send exits 0", rc == 0, err)
    rrc, res = rx.wait(5)
    chk.expect("receiver.py exits 0", rrc == 0, rrc)
    check_records(chk, rx_store.read_records(store), records, "store")
    return st, res


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
    st, res = second_life(chk, rx, p, store, records)
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


def case_restart_epoch(tool, tmp, verbose, die_at):
    """receiver.py dies (SIGKILL, as kill -9) right after its memo holds epoch `die_at`
    and before that epoch's ACCEPT goes, while pure-link send turns epochs every 32
    packets; it is restarted on its port with its memo and store.  The sender never heard
    the ACCEPT and still seals in epoch die_at - 1 (protocol.md §9, memo.md "Loading").
    die_at >= 2: those packets, above the recorded number, draw LOST; the sender starts
    over at epoch 0 with a new OFFER, which builds the run again with a new reply run.
    die_at = 1: the restored run takes epoch 0 and repeats its ACCEPT.  Either way the
    run goes on turning epochs and every record is stored once."""
    chk = Check("restart_epoch%d" % die_at)
    records = small_records(random.Random(17), 800, 200, 2500)
    skey, spub = keys(tmp)
    store = os.path.join(tmp, "store")
    memo_args = ["--store", store, "--memo", os.path.join(tmp, "rx.memo")]
    rx = PyRecv(tmp, spub, len(records), extra=memo_args + ["--die-at-epoch", str(die_at)],
                verbose=verbose)
    rx.start()
    p = start_sender(tool, tmp, skey, rx, extra=["--epoch-packets", str(EPOCH_PACKETS)])
    f = Feeder(p.stdin, records, 20, 0.05)
    f.start()
    try:
        first = rx.proc.wait(timeout=CASE_SECONDS / 2)
    except subprocess.TimeoutExpired:
        first = None
    rx.err.close()
    chk.expect("the first life died at its memo write of epoch %d" % die_at,
               first == -signal.SIGKILL, first)
    n = len(rx_store.read_records(store)) if os.path.exists(
        os.path.join(store, "records.bin")) else 0
    rx.extra = memo_args
    st, res = second_life(chk, rx, p, store, records)
    if res:
        c = res["counters"]
        eps = list(res["epochs"].values())
        entered = [e for e, _ in eps[0]["entered"]] if len(eps) == 1 else None
        chk.fact("died with %d stored; second life: memo runs %d, LOST sent %d, rebuilt %d, "
                 "epochs entered %s" % (n, res["memo_runs_restored"], c.get("lost_sent", 0),
                                        c.get("restored_run_rebuilt", 0), entered))
        chk.expect("the run restored from the memo", res["memo_runs_restored"] == 1)
        if die_at >= 2:
            chk.expect("LOST for the sender's epoch %d" % (die_at - 1),
                       c.get("lost_sent", 0) >= 1, c)
            chk.expect("the run built again from the sender's epoch 0, once",
                       c.get("restored_run_rebuilt", 0) == 1, c)
            chk.expect("then epochs 1, 2, ... again", entered and
                       entered == list(range(1, len(entered) + 1)) and len(entered) >= 4,
                       entered)
        else:
            chk.expect("no LOST", c.get("lost_sent", 0) == 0, c)
            chk.expect("the restored run took epoch 0 and repeated its ACCEPT",
                       res["opened_by_epoch"].get("0", 0) >= 1 and
                       not c.get("restored_run_rebuilt"), (res["opened_by_epoch"], c))
            chk.expect("then epochs 1, 2, ... again", entered and
                       entered == list(range(1, len(entered) + 1)) and len(entered) >= 4,
                       entered)
        check_amplification(chk, res)
    if st:
        ep = st.get("endpoint", {})
        chk.fact("sender: lost_notices_received %s, epochs %s" % (
            ep.get("lost_notices_received"), ep.get("epochs")))
        if die_at >= 2:
            chk.expect("the sender heard the LOST", ep.get("lost_notices_received", 0) >= 1)
    return chk.finish()


def keylog_epochs(path):
    """{epoch: set of secrets} of a key log's lines (keylog.md) for epochs >= 1."""
    out = {}
    if os.path.exists(path):
        for line in open(path).read().splitlines():
            f = line.split()
            if len(f) == 6 and f[0] == "PURE_LINK_EPOCH" and int(f[4]) >= 1:
                out.setdefault(int(f[4]), set()).add(f[5])
    return out


def case_epochs(tool, tmp, verbose, loss=0.0):
    """pure-link send offers a new epoch every EPOCH_PACKETS packets; receiver.py answers
    at its X25519 rate (4 a second), so the run turns epochs as fast as the receiver lets
    it, past epoch 16 where the 4-bit field wraps.  Every epoch is entered in turn, each
    one's secret is the same at both ends, replies go under each new epoch's key, at the
    end only two epochs' keys are held, and every record arrives once, byte for byte --
    with `loss`, through a forwarder that drops, reorders and copies datagrams both ways."""
    chk = Check("epochs" + ("_lossy" if loss else ""))
    records = mixed_records(random.Random(15), 600, big=1 << 20)
    skey, spub = keys(tmp)
    rx_keylog = os.path.join(tmp, "rx.keylog")
    rx = PyRecv(tmp, spub, len(records), extra=["--keylog", rx_keylog], verbose=verbose)
    rx.start()
    fw = None
    if loss:
        fw = Impairer(("127.0.0.1", rx.port), loss, 16)
        fw.start()
    p = start_sender(tool, tmp, skey, rx, to_port=fw and fw.port,
                     extra=["--epoch-packets", str(EPOCH_PACKETS)])
    st, res = feed_and_wait(chk, p, Feeder(p.stdin, records, 20, 0.15), rx)
    if fw:
        fw.stopping = True
        chk.fact("path: dropped %s, reordered %s, copied %s" % (fw.dropped, fw.reordered,
                                                                fw.copied))
        chk.expect("the path dropped datagrams both ways",
                   fw.dropped["up"] > 0 and fw.dropped["down"] > 0, fw.dropped)
    if not res:
        return chk.finish()
    check_delivered(chk, res, records)
    chk.expect("the 1 MiB record among them (over 700 packets)",
               max(res["record_lengths"]) == 1 << 20)
    eps = res["epochs"]
    chk.expect("one run", len(eps) == 1, list(eps))
    if len(eps) != 1:
        return chk.finish()
    ep = list(eps.values())[0]
    entered = [e for e, _ in ep["entered"]]
    top = entered[-1] if entered else 0
    chk.fact("receiver.py: epochs entered %s at %s s; opened %d, failed %d; counters %s" % (
        entered, [t for _, t in ep["entered"]], res["packets_opened"], res["packets_failed"],
        {k: v for k, v in res["counters"].items() if "offer" in k or "epoch" in k or
         "x25519" in k or "key" in k or "previous" in k}))
    chk.expect("every epoch entered once, in turn, from 1", entered == list(range(1, top + 1)),
               entered)
    chk.expect("at least %d epochs (past the wrap of the field at 16)" % MIN_EPOCHS[bool(loss)],
               top >= MIN_EPOCHS[bool(loss)], top)
    chk.expect("packets opened in every epoch",
               all(res["opened_by_epoch"].get(str(e), 0) > 0 for e in range(top + 1)),
               res["opened_by_epoch"])
    chk.expect("replies sealed under every epoch's key",
               all(ep["replies_sealed"].get(str(e), 0) > 0 for e in range(top + 1)),
               ep["replies_sealed"])
    chk.expect("at the end only the keys of the last two epochs (and a proposal)",
               set(ep["held"]) - {top + 1} == {top - 1, top}, ep["held"])
    # crypto.md §6: both ends computed the same E(n) for every epoch the sender moved to
    tx = keylog_epochs(os.path.join(tmp, "send.keylog"))
    rxk = keylog_epochs(rx_keylog)
    chk.expect("the sender moved to every epoch the receiver entered",
               set(range(1, top + 1)) <= set(tx) <= set(range(1, top + 2)), sorted(tx))
    chk.expect("each epoch's secret the same at both ends",
               all(len(tx[e]) == 1 and tx[e] <= rxk.get(e, set()) for e in tx),
               [e for e in tx if not tx[e] <= rxk.get(e, set())])
    if not loss:
        chk.expect("nothing failed to open on a clean path", res["packets_failed"] == 0,
                   res["counters"])
    chk.expect("stats from the sender", st)
    if st:
        e = st.get("endpoint", {})
        chk.fact("sender: epochs %s, replies received %s, opened %s, replays %s, dropped_auth %s"
                 % (e.get("epochs"), e.get("packets_received"), e.get("packets_opened"),
                    e.get("dropped_replay", 0), e.get("dropped_auth", 0)))
        # every reply opened under the key of its epoch (copies on the path aside)
        chk.expect("the sender opened every reply but the copies",
                   e.get("packets_received") == e.get("packets_opened", 0) +
                   e.get("dropped_replay", 0) and not e.get("dropped_auth"), e)
    check_amplification(chk, res)
    return chk.finish()


def case_sizes(tool, tmp, verbose, cap=None):
    """pure-link send searches its datagram size (protocol.md §5.1); receiver.py must take
    every size it settles on, up to the most the spec allows.  On loopback the search ends
    at 1,452 B; through a forwarder that drops every datagram above `cap` without a word,
    within 8 B at or below the cap.  Every record once, byte for byte."""
    chk = Check("sizes" if cap is None else "mtu")
    records = mixed_records(random.Random(18), 600, big=1 << 20)
    skey, spub = keys(tmp)
    rx = PyRecv(tmp, spub, len(records), verbose=verbose)
    rx.start()
    fw = None
    if cap is not None:
        fw = Capped(("127.0.0.1", rx.port), cap)
        fw.start()
    p = start_sender(tool, tmp, skey, rx, to_port=fw and fw.port)
    st, res = feed_and_wait(chk, p, Feeder(p.stdin, records, len(records), 0), rx)
    if fw:
        fw.stopping = True
    if not res:
        return chk.finish()
    check_delivered(chk, res, records)
    sizes = {int(n): c for n, c in res["datagram_sizes"].items()}
    most = max(sizes)
    limit = pl.DATAGRAM_MOST if cap is None else cap
    chk.fact("receiver.py opened %d packets, %d failed; largest %d B (%d of them); %d above "
             "the base; sizes above the base: %s" % (
                 res["packets_opened"], res["packets_failed"], most, sizes[most],
                 sum(c for n, c in sizes.items() if n > pl.DATAGRAM_BASE),
                 sorted(n for n in sizes if n > pl.DATAGRAM_BASE)[:12]))
    chk.expect("nothing failed to open", res["packets_failed"] == 0, res["counters"])
    chk.expect("the largest packets within 8 B at or below %d B" % limit,
               limit - 8 <= most <= limit, most)
    chk.expect("many of them: full packets go at the size found", sizes[most] >= 100,
               sizes[most])
    if fw:
        chk.fact("path dropped %d datagrams: %s" % (len(fw.dropped), sorted(
            {n for _, _, n in fw.dropped})))
        chk.expect("the path dropped only datagrams above the cap, going up",
                   all(way == "up" and n > cap for _, way, n in fw.dropped))
    if st:
        e = size_stats(chk, st)
        chk.expect("the size the sender reports is the largest receiver.py opened",
                   e.get("datagram_bytes") == most, e.get("datagram_bytes"))
    check_amplification(chk, res)
    return chk.finish()


def case_black_hole(tool, tmp, verbose):
    """The real sender finds 1,452 B on loopback; mid-transfer a forwarder starts dropping
    every datagram above 1,300 B without a word (protocol.md §5.1 "Black hole").  The
    sender must see the black hole, drop to the base and find 1,300 B within 8 B again;
    receiver.py takes every size it sends and stores every record once."""
    chk = Check("black_hole")
    records = small_records(random.Random(19), 800, 500, 2500)
    rx, fw, p = via_path(tool, tmp, verbose, records, Capped(None))
    capped = []

    def at(i):
        if i == 300:
            capped.append(time.monotonic())
            fw.cap = 1300
    st, res = feed_and_wait(chk, p, Feeder(p.stdin, records, 20, 0.05, at=at), rx)
    fw.stopping = True
    if not res:
        return chk.finish()
    check_delivered(chk, res, records)
    chk.expect("the limit came mid-transfer", capped)
    before = [n for t, way, i, n in fw.wire if way == "up" and capped and t < capped[0]]
    after = [n for t, way, i, n in fw.wire if way == "up" and capped and t >= capped[0]]
    chk.fact("before the limit: largest %d B; after: %d datagrams, sizes above the base %s; "
             "the path dropped %d" % (max(before, default=0), len(after),
                                      sorted({n for n in after if n > pl.DATAGRAM_BASE}),
                                      len(fw.dropped)))
    chk.expect("1,452 B in use before the limit", max(before, default=0) == pl.DATAGRAM_MOST)
    late = after[len(after) // 2:]
    chk.expect("in the second half of the transfer after it, packets within 8 B at or below "
               "1,300 B", late and 1292 <= max(late) <= 1300, max(late, default=0))
    sizes = {int(n) for n in res["datagram_sizes"]}
    chk.expect("receiver.py opened both sizes", pl.DATAGRAM_MOST in sizes and
               any(1292 <= n <= 1300 for n in sizes))
    chk.expect("nothing failed to open", res["packets_failed"] == 0, res["counters"])
    if st:
        e = size_stats(chk, st)
        chk.expect("the sender counted one black hole", e.get("pmtu_black_holes") == 1,
                   e.get("pmtu_black_holes"))
    check_amplification(chk, res)
    return chk.finish()


def stored_records(store):
    return rx_store.read_records(store) if os.path.exists(
        os.path.join(store, "records.bin")) else []


def wait_stored(store, count):
    """How many records the store holds once it holds `count`, or after half a case's time."""
    t0 = time.monotonic()
    n = 0
    while time.monotonic() < t0 + CASE_SECONDS / 2 and n < count:
        time.sleep(0.02)
        n = len(stored_records(store))
    return n


def case_resume(tool, tmp, verbose, how):
    """protocol.md §4.3 with the real sender: `pure-link send --resume` A sends a source,
    fed in batches; once receiver.py's store holds 250 of its 800 records A is stopped --
    SIGINT, or kill -9 (and receiver.py killed with it and started again from its store),
    or SIGSTOP (A lives on) -- and B, `--resume` on the same input, asks where to go on:
    receiver.py answers the records of the source it holds durably, m; B skips m records
    of its input and sends the rest, numbered from m.  Every record once in the store.
    With SIGSTOP, A is let go again once B is done: its run was cut off when B's run was
    proven live, so nothing it sends after is stored, and it is told so, REFUSED reason 5,
    on which it stops with exit 8 (protocol.md §4.3 "The cut-off run is told")."""
    chk = Check("resume_" + how)
    records = small_records(random.Random(20), 800, 200, 2500)
    skey, spub = keys(tmp)
    store = os.path.join(tmp, "store")
    goal = len(records) + (1 if how == "stop" else 0)   # with A alive, stopped by the test
    rx = PyRecv(tmp, spub, goal, verbose=verbose,
                extra=["--store", store, "--memo", os.path.join(tmp, "rx.memo")])
    rx.start(timeout=CASE_SECONDS * 2)
    a = start_sender(tool, tmp, skey, rx, extra=["--resume"], tag="-a",
                     deadline=CASE_SECONDS * 2)
    Feeder(a.stdin, records, 20, 0.05).start()
    n = wait_stored(store, 250)
    chk.expect("250 records stored before A stops, most still to come", 250 <= n < 600, n)
    if how == "sigint":
        a.send_signal(signal.SIGINT)
        rc, _, err = sender_result(a, 5)
        chk.expect("A exits 6 (stopped by SIGINT before every record was stored)", rc == 6,
                   (rc, err))
    elif how == "kill9":
        a.send_signal(signal.SIGKILL)
        a.wait()
        rx.kill()
        rx.start(port=rx.port, timeout=CASE_SECONDS * 2)
    else:
        a.send_signal(signal.SIGSTOP)
    at_stop = len(stored_records(store))
    b = start_sender(tool, tmp, skey, rx, extra=["--resume"], tag="-b")
    Feeder(b.stdin, records, len(records), 0).start()
    rc, st, err = sender_result(b, CASE_SECONDS + 2)
    chk.expect("B exits 0 (every record stored)", rc == 0, err)
    after_b = stored_records(store)
    if how == "stop":
        a.send_signal(signal.SIGCONT)    # A goes on: PTO probes, its next records
        a_rc, _, a_err = sender_result(a, 5)
        chk.expect("A, let go, is told REFUSED reason 5 and exits 8 with its line",
                   a_rc == 8 and "cut off by the receiver" in a_err, (a_rc, a_err))
        rx.proc.send_signal(signal.SIGTERM)
    rrc, res = rx.wait(10)
    got = stored_records(store)
    runs = check_resumed(chk, got, records)
    chk.fact("A stopped (%s) with %d stored; runs in the store (first record, count): %s" % (
        how, at_stop, [("%016x" % r, f, c) for r, f, c in runs]))
    chk.expect("two runs: A's, then B's from where the store stood", len(runs) == 2 and
               runs[1][1] >= at_stop, runs)
    if not res:
        return chk.finish()
    answers = res["resume_answers"]
    chk.fact("receiver.py's last life: answers %s, runs cut off %s, counters %s" % (
        answers, res["runs_cut_off"], {k: v for k, v in res["counters"].items()
                                       if "cut" in k or "resume" in k or "lost" in k}))
    if len(runs) == 2:
        chk.expect("B asked and was answered the records held, m: its first record is m",
                   answers and answers[-1][0] == "%016x" % runs[1][0] and
                   answers[-1][2] == runs[1][1], (answers, runs))
    if how == "stop":
        chk.expect("B's ask cut A's run off", runs and "%016x" % runs[0][0] in
                   res["runs_cut_off"], res["runs_cut_off"])
        told = [r for r in res["refusals"] if r["run"] == "%016x" % runs[0][0]] if runs else []
        chk.expect("A went on after B was done, was refused with reason 5 at its record "
                   "bytes, and nothing of it was stored",
                   [r["reason"] for r in told] == [5] and told[0]["turns"] and
                   len(got) == len(after_b), (told, len(got), len(after_b)))
    else:
        chk.expect("receiver.py exits 0", rrc == 0, rrc)
    if st:
        chk.fact("B: records_queued %s, records_stored %s" % (st.get("records_queued"),
                                                             st.get("records_stored")))
    check_amplification(chk, res)
    return chk.finish()


def case_resume_replay(tool, tmp, verbose):
    """protocol.md §4.3 against a replay: A, `pure-link send --resume`, sends 300 records
    through a forwarder that keeps its first datagram (the ask: epoch 0, OFFER and STREAM)
    and exits; B, `--resume`, is answered 300 and sends the rest of 800, fed in batches.
    Mid-way receiver.py is killed (kill -9), its memo deleted, and started again; B goes
    on (LOST, epoch 0 again, bound again), and once it has stored 50 more records A's
    first datagram is sent to the receiver once more: it authenticates, so the receiver
    builds A's run anew -- but A's run was cut off when B's was proven live, durably, so
    its ask is refused with reason 5 before the host is asked (§4.3 "The cut-off run is
    told"), and a replay is never proven live anyway: it takes nothing over, B stores
    every record once.  A host that cut the source's other runs off at the answer would
    stall B."""
    chk = Check("resume_replay")
    records = small_records(random.Random(22), 800, 200, 2500)
    skey, spub = keys(tmp)
    store = os.path.join(tmp, "store")
    memo = os.path.join(tmp, "rx.memo")
    rx = PyRecv(tmp, spub, len(records), verbose=verbose,
                extra=["--store", store, "--memo", memo])
    rx.start(timeout=CASE_SECONDS * 2)
    fw = Forwarder(("127.0.0.1", rx.port))
    fw.start()
    a = start_sender(tool, tmp, skey, rx, extra=["--resume"], tag="-a", to_port=fw.port)
    Feeder(a.stdin, records[:300], 300, 0).start()
    rc, _, err = sender_result(a, CASE_SECONDS)
    fw.stopping = True
    chk.expect("A exits 0 (its 300 records stored)", rc == 0, err)
    b = start_sender(tool, tmp, skey, rx, extra=["--resume"], tag="-b")
    Feeder(b.stdin, records, 20, 0.2).start()     # the rest over about 5 s
    t0 = time.monotonic()
    n = wait_stored(store, 400)
    chk.expect("B mid-way when receiver.py is killed", 400 <= n < 650, n)
    rx.kill()
    os.unlink(memo)
    rx.start(port=rx.port, timeout=CASE_SECONDS * 2)
    again = n
    while time.monotonic() < t0 + CASE_SECONDS * 0.75 and again < n + 50:
        time.sleep(0.02)
        again = len(stored_records(store))
    chk.expect("B bound again and storing before the replay", n + 50 <= again < 780,
               (n, again))
    replay = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    replay.sendto(fw.first_up, ("127.0.0.1", rx.port))
    replay.close()
    rc, st, err = sender_result(b, CASE_SECONDS + 2)
    chk.expect("B exits 0 (every record stored)", rc == 0, err)
    if rc != 0:
        rx.proc.send_signal(signal.SIGTERM)     # it waits for records that will not come
    rrc, res = rx.wait(10)
    chk.expect("receiver.py exits 0", rrc == 0, rrc)
    runs = check_resumed(chk, stored_records(store), records)
    chk.fact("killed with %d stored, replayed with %d; runs in the store (first record, "
             "count): %s" % (n, again, [("%016x" % r, f, c) for r, f, c in runs]))
    chk.expect("two runs: A's 300, then B's from 300", [(f, c) for _, f, c in runs] ==
               [(0, 300), (300, 500)], runs)
    if res and len(runs) == 2:
        answers = res["resume_answers"]
        chk.fact("receiver.py's second life: answers %s, runs cut off %s, LOST sent %s" % (
            answers, res["runs_cut_off"], res["counters"].get("lost_sent", 0)))
        told = [r["reason"] for r in res["refusals"] if r["run"] == "%016x" % runs[0][0]]
        chk.expect("the replayed ask of A's cut-off run was refused with reason 5, not "
                   "answered", told == [5] and
                   not any(x[0] == "%016x" % runs[0][0] for x in answers), (told, answers))
        chk.expect("A's run stays cut off, B's is not",
                   res["runs_cut_off"] == ["%016x" % runs[0][0]], res["runs_cut_off"])
        check_amplification(chk, res)
    return chk.finish()


CASES = {
    "resume_replay": case_resume_replay,
    "resume_sigint": lambda t, d, v: case_resume(t, d, v, "sigint"),
    "resume_kill9": lambda t, d, v: case_resume(t, d, v, "kill9"),
    "resume_stop": lambda t, d, v: case_resume(t, d, v, "stop"),
    "black_hole": case_black_hole,
    "bulk": case_bulk,
    "sizes": case_sizes,
    "mtu": lambda t, d, v: case_sizes(t, d, v, 1372),
    "move": case_move,
    "refused": case_refused,
    "restart_memo": lambda t, d, v: case_restart(t, d, v, True),
    "restart_nomemo": lambda t, d, v: case_restart(t, d, v, False),
    "epochs": case_epochs,
    "epochs_lossy": lambda t, d, v: case_epochs(t, d, v, LOSS),
    "restart_epoch1": lambda t, d, v: case_restart_epoch(t, d, v, 1),
    "restart_epoch5": lambda t, d, v: case_restart_epoch(t, d, v, 5),
}


if __name__ == "__main__":
    sys.exit(run_cases(CASES, "pl-against-send-"))
