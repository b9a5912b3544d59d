#!/usr/bin/env python3
"""selftest.py -- exercise receiver.py and pcap_open.py without the real implementation.

A minimal pure-link SENDER, written here from spec/ like the rest of this directory,
sends records to receiver.py (run as a subprocess) through an impaired path (loss both
ways, reordering, duplicates, forged and replayed datagrams, an address move, an epoch-2
rekey).  Everything on the path is written to pcap files and a key log, which pcap_open.py
must then open.  The sender shares the author's reading of the spec, so this checks the
machinery -- not the reading; the interop runs against the real sender do that.

Usage: python3 tests/interop/selftest.py [--records N] [--loss P] [--seed S] [--keep DIR]
Exit 0 when every scenario passes.
"""

import argparse
import hashlib
import json
import os
import random
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pl_spec as pl  # noqa: E402


# --------------------------------------------------------------------------------------
# pcap writing (link types 101 raw IPv4 and 1 Ethernet; little- or big-endian)
# --------------------------------------------------------------------------------------
def ip_udp(src, dst, payload):
    """An IPv4 + UDP packet around payload (checksums computed for the IP header)."""
    (sip, sport), (dip, dport) = src, dst
    udp = struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload
    ihdr = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                       socket.inet_aton(sip), socket.inet_aton(dip))
    s = sum(struct.unpack(">10H", ihdr))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    ihdr = ihdr[:10] + struct.pack(">H", ~s & 0xFFFF) + ihdr[12:]
    return ihdr + udp


def write_pcap(path, items, linktype=101, endian="<", nano=False):
    magic = 0xA1B23C4D if nano else 0xA1B2C3D4
    with open(path, "wb") as f:
        f.write(struct.pack(endian + "IHHiIII", magic, 2, 4, 0, 0, 65535, linktype))
        for ts, src, dst, payload in items:
            pkt = ip_udp(src, dst, payload)
            if linktype == 1:
                pkt = b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + pkt
            sec = int(ts)
            frac = int((ts - sec) * (1e9 if nano else 1e6))
            f.write(struct.pack(endian + "IIII", sec, frac, len(pkt), len(pkt)))
            f.write(pkt)


# --------------------------------------------------------------------------------------
# A minimal sender (protocol.md §3-§6 from the sender's side)
# --------------------------------------------------------------------------------------
class MiniSender:
    def __init__(self, rx_addr, rx_public, secret, records, rng, loss, migrate, rekey,
                 keylog, log):
        self.rng = rng
        self.loss = loss
        self.rx_addr = rx_addr
        self.rpub = rx_public
        self.secret = secret
        self.spub = pl.x25519_public(secret)
        self.kid = pl.key_id(self.spub)
        self.run = struct.unpack(">Q", os.urandom(8))[0] | 1
        self.socks = [self._sock(), self._sock()]
        self.sock_i = 0
        self.migrate = migrate
        self.rekey = rekey
        self.keylog = keylog
        self.log = log
        self.capture = []           # what went on the wire: (ts, src, dst, payload)
        self.dirty = []             # forged datagrams (kept out of the clean capture)
        # keys
        self.secrets = {0: pl.epoch0_secret(pl.static_shared(secret, rx_public))}
        self._log_epoch(0)
        self.epoch = 0              # epoch we seal in
        self.offer = None           # (epoch, eph secret, eph public) while offering
        self._new_offer(1)
        # packet numbers
        self.pn = 0
        self.acked_largest = None
        self.inflight = {}          # pn -> dict(time, pieces, stream, response, offer, data)
        self.reply_seen = {}        # reply_run -> set of pns (replay window, simplified)
        self.reply_largest = {}
        self.reply_keys = {}
        # stream
        self.stream = b"".join(pl.varint_encode(len(r)) + r for r in records)
        self.starts = []
        o = 0
        for r in records:
            self.starts.append(o)
            o += len(pl.varint_encode(len(r))) + len(r)
        self.nrec = len(records)
        self.stored = 0             # S: highest STORED count heard
        self.credit = pl.CREDIT_BEFORE_DELIVERY
        self.sent_end = 0           # highest stream offset sent + 1
        self.resend = []            # ranges (off, end) to send again
        self.need_stream = True
        self.response = None        # token to echo
        self.last_progress = time.monotonic()
        self.sent_packets = 0
        self.first_packets = []     # epoch-0 datagrams (for a replay later)
        self.held = None            # a datagram held back for reordering

    def _sock(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        s.setblocking(False)
        return s

    def _log_epoch(self, n):
        with open(self.keylog, "a") as f:
            f.write(pl.keylog_line(self.spub, self.rpub, self.run, n, self.secrets[n]))

    def _new_offer(self, n):
        eph = os.urandom(32)
        self.offer = (n, eph, pl.x25519_public(eph))

    def stored_off(self):
        return self.starts[self.stored] if self.stored < self.nrec else len(self.stream)

    def credit_end(self):
        k = self.stored + self.credit
        return self.starts[k] if k < self.nrec else len(self.stream)

    # -- sending --------------------------------------------------------------------
    def wire_send(self, dgram, now):
        """The impaired path, sender -> receiver: loss, reordering, duplicates."""
        sock = self.socks[self.sock_i]
        src = sock.getsockname()
        if self.rng.random() < self.loss:
            return
        if self.held is None and self.rng.random() < self.loss / 2:
            self.held = (dgram, sock)          # send it after the next one
            return
        sock.sendto(dgram, self.rx_addr)
        self.capture.append((time.time(), src, self.rx_addr, dgram))
        if self.rng.random() < self.loss / 3:  # network duplicate (a replay)
            sock.sendto(dgram, self.rx_addr)
            self.capture.append((time.time(), src, self.rx_addr, dgram))
        if self.held is not None:
            d, s2 = self.held
            self.held = None
            s2.sendto(d, self.rx_addr)
            self.capture.append((time.time(), s2.getsockname(), self.rx_addr, d))

    def build_packet(self, now):
        """One sender packet; returns False when there is nothing to send."""
        pn = self.pn
        L = pl.pn_length(pn, self.acked_largest)
        room = pl.DATAGRAM_BASE - (14 + L) - pl.TAG_BYTES  # protocol.md §5.1: no search
        frames = []
        info = {"time": now, "pieces": [], "stream": False, "response": None,
                "offer": None, "data": False}
        if self.offer is not None and (self.epoch == self.offer[0] - 1):
            frames.append(pl.enc_offer(self.offer[0], self.offer[2]))
            info["offer"] = self.offer[0]
        if self.response is not None:
            frames.append(pl.enc_response(self.response))
            info["response"] = self.response
        used = sum(map(len, frames))
        pieces = []
        limit = self.credit_end()
        stream_frame = pl.enc_stream(self.stored, self.stored_off(), 0x5E1F7E57, b"selftest",
                                     b"interop")
        if self.need_stream:
            used += len(stream_frame)
        # resends first, then new bytes, within the credit (protocol.md §4.2)
        while room - used > 8:
            if self.resend:
                off, end = self.resend[0]
                off = max(off, self.stored_off())
                if off >= end:
                    self.resend.pop(0)
                    continue
            elif self.sent_end < min(limit, len(self.stream)):
                off, end = self.sent_end, min(limit, len(self.stream))
            else:
                break
            n = min(end - off, room - used - 7)
            pieces.append((off, self.stream[off:off + n]))
            used += 7 + n
            if self.resend and off + n >= self.resend[0][1]:
                self.resend.pop(0)
            elif self.resend:
                self.resend[0] = (off + n, self.resend[0][1])
            else:
                self.sent_end = off + n
        if pieces and self.need_stream:
            frames.insert(0, stream_frame)
            info["stream"] = True
        for i, (off, data) in enumerate(pieces):
            last = i == len(pieces) - 1
            frames.append(pl.enc_records(off, data) if last else pl.enc_record(off, data))
            info["pieces"].append((off, off + len(data)))
            info["data"] = True
        if not frames:
            return False
        header = pl.sender_header(self.epoch, self.kid, self.run, pn, L)
        key = pl.data_key(self.secrets[self.epoch], self.spub, self.rpub, self.run, self.epoch)
        dgram = key.seal(header, b"".join(frames), pn)
        self.inflight[pn] = info
        self.pn += 1
        self.sent_packets += 1
        if self.epoch == 0:
            self.first_packets.append(dgram)
        self.wire_send(dgram, now)
        return True

    def send_ping(self, now):
        pn = self.pn
        L = pl.pn_length(pn, self.acked_largest)
        header = pl.sender_header(self.epoch, self.kid, self.run, pn, L)
        key = pl.data_key(self.secrets[self.epoch], self.spub, self.rpub, self.run, self.epoch)
        frames = [pl.enc_ping(), pl.enc_padding(3)]
        if self.response is not None:
            frames.append(pl.enc_response(self.response))
        self.inflight[pn] = {"time": now, "pieces": [], "stream": False,
                             "response": self.response, "offer": None, "data": False}
        self.pn += 1
        self.wire_send(key.seal(header, b"".join(frames), pn), now)

    # -- receiving ------------------------------------------------------------------
    def on_reply(self, dgram, via, now):
        if self.rng.random() < self.loss:            # the impaired path, replies
            return
        self.capture.append((time.time(), self.rx_addr, via.getsockname(), dgram))
        h = pl.parse_header(dgram)
        if not h.reply or h.run != self.run:
            return
        largest = self.reply_largest.get(h.reply_run)
        pn = pl.recover_pn(largest, h.pn_trunc, h.pn_len)
        epoch = pl.recover_epoch(h.E, self.epoch)
        if epoch not in self.secrets:
            self.log("reply in unknown epoch %d" % epoch)
            return
        ck = (h.reply_run, epoch)
        if ck not in self.reply_keys:
            self.reply_keys[ck] = pl.reply_key(self.secrets[epoch], self.spub, self.rpub,
                                               self.run, h.reply_run, epoch)
        pt = self.reply_keys[ck].open(h.raw, dgram[h.length:], pn)
        if pt is None:
            self.log("reply failed to open (epoch %d pn %d)" % (epoch, pn))
            return
        seen = self.reply_seen.setdefault(h.reply_run, set())
        if pn in seen:
            return
        seen.add(pn)
        if largest is None or pn > largest:
            self.reply_largest[h.reply_run] = pn
        for t, f in pl.decode_frames(pt, reply=True):
            if t == pl.ACK:
                self.on_ack(f, now)
            elif t == pl.STORED:
                if f["stored"] > self.stored or f["stored"] == self.stored:
                    if f["stored"] > self.stored:
                        self.last_progress = now
                    self.stored = min(f["stored"], self.nrec)
                    self.credit = f["credit"]
            elif t == pl.ACCEPT:
                self.on_accept(f)
            elif t == pl.CHALLENGE:
                self.response = f["token"]
            elif t == pl.LOST:
                self.log("LOST received (not handled by the mini sender)")
            elif t == pl.REFUSED:
                self.log("REFUSED %d" % f["reason"])

    def on_ack(self, f, now):
        acked = set()
        for lo, hi in f["ranges"]:
            for p in list(self.inflight):
                if lo <= p <= hi:
                    acked.add(p)
        if self.acked_largest is None or f["largest"] > self.acked_largest:
            self.acked_largest = f["largest"]
        for p in acked:
            info = self.inflight.pop(p)
            if info["stream"]:
                self.need_stream = False
            if info["response"] is not None and info["response"] == self.response:
                self.response = None
        if f["stream_unknown"]:
            self.need_stream = True
            self.resend = [(self.stored_off(), self.sent_end)]
        # loss: 3 packets below the largest acknowledged
        for p in sorted(self.inflight):
            if p + 3 <= f["largest"]:
                self.declare_lost(p)

    def declare_lost(self, p):
        info = self.inflight.pop(p)
        for off, end in info["pieces"]:
            if end > self.stored_off():
                self.resend.append((off, end))
        self.resend.sort()

    def on_accept(self, f):
        if self.offer is None or f["epoch"] != self.offer[0] or \
                f["echo"] != self.offer[2][:4]:
            return
        n, eph, pub = self.offer
        dh = pl.x25519(eph, f["public"])
        self.secrets[n] = pl.next_epoch_secret(self.secrets[n - 1], dh, pub, f["public"], n)
        self._log_epoch(n)
        self.offer = None
        self.epoch = n
        self.log("epoch %d (E=%s)" % (n, self.secrets[n].hex()[:16]))

    # -- main loop ------------------------------------------------------------------
    def run_until_done(self, deadline):
        window = 48
        migrated = False
        replayed = False
        while time.monotonic() < deadline:
            now = time.monotonic()
            if self.stored >= self.nrec:
                return True
            # timeouts: anything in flight 250 ms is lost
            for p in sorted(self.inflight):
                if now - self.inflight[p]["time"] > 0.25:
                    self.declare_lost(p)
            # resend rule (protocol.md §4.2): acknowledged but not stored within 1 s
            if now - self.last_progress > 1.0 and self.sent_end > self.stored_off():
                self.resend = [(self.stored_off(), self.sent_end)]
                self.last_progress = now
            # address move after a third of the records; rekey after half
            if self.migrate and not migrated and self.stored >= self.nrec // 3:
                migrated = True
                self.sock_i = 1
                self.log("moving to %s" % (self.socks[1].getsockname(),))
            if self.rekey and self.offer is None and self.epoch == 1 and \
                    self.stored >= self.nrec // 2:
                self._new_offer(2)
                self.log("offering epoch 2")
            if self.migrate and not replayed and self.stored >= (2 * self.nrec) // 3:
                replayed = True
                # a replayed first packet and two forgeries: no effect expected
                junk = bytearray(self.first_packets[0])
                junk[-1] ^= 1
                forged = [self.first_packets[0], bytes(junk), bytes([1, 0]) + os.urandom(60)]
                for d in forged:
                    self.socks[0].sendto(d, self.rx_addr)
                    self.dirty.append((time.time(), self.socks[0].getsockname(),
                                       self.rx_addr, d))
            # send
            if self.epoch == 0:
                if not self.inflight:
                    self.build_packet(now)
            else:
                while len(self.inflight) < window:
                    if not self.build_packet(now):
                        break
                if not self.inflight and self.response is not None:
                    self.send_ping(now)
            r, _, _ = select.select(self.socks, [], [], 0.01)
            for s in r:
                while True:
                    try:
                        d, _ = s.recvfrom(65535)
                    except (BlockingIOError, ConnectionRefusedError):
                        break
                    self.on_reply(d, s, time.monotonic())
        return False


# --------------------------------------------------------------------------------------
def make_records(rng, n):
    sizes = [0, 1, 63, 64, 1400, 1452, 3000, 16383, 16384, 20000]
    out = []
    for i in range(n):
        ln = sizes[i] if i < len(sizes) else rng.choice([rng.randint(0, 80),
                                                          rng.randint(100, 1200),
                                                          1024, rng.randint(1500, 5000)])
        out.append(bytes(rng.getrandbits(8) for _ in range(min(ln, 64))) * (ln // 64 + 1))
        out[-1] = out[-1][:ln]
    return out


def scenario(name, args, loss, migrate, rekey, tmp, log):
    rng = random.Random(args.seed + hash(name) % 1000)
    rsec, ssec = os.urandom(32), os.urandom(32)
    rpub, spub = pl.x25519_public(rsec), pl.x25519_public(ssec)
    records = make_records(rng, args.records)
    port_sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    port_sock.bind(("127.0.0.1", 0))
    port = port_sock.getsockname()[1]
    port_sock.close()
    out = os.path.join(tmp, name + ".json")
    rx_keylog = os.path.join(tmp, name + ".rx.keylog")
    keylog = os.path.join(tmp, name + ".keylog")
    cmd = [sys.executable, os.path.join(HERE, "receiver.py"), "--port", str(port),
           "--secret", rsec.hex(), "--peer", spub.hex(), "--records", str(len(records)),
           "--out", out, "--timeout", "30", "--keylog", rx_keylog]
    if args.verbose:
        cmd.append("-v")
    proc = subprocess.Popen(cmd)
    time.sleep(0.4)
    snd = MiniSender(("127.0.0.1", port), rpub, ssec, records, rng, loss, migrate, rekey,
                     keylog, log)
    ok_send = snd.run_until_done(time.monotonic() + 30)
    rc = proc.wait(timeout=40)
    res = json.load(open(out))
    want_sha = hashlib.sha256(b"".join(records)).hexdigest()
    problems = []
    if not ok_send:
        problems.append("sender did not hear every record stored")
    if rc != 0:
        problems.append("receiver exit code %d" % rc)
    if res["records_sha256"] != want_sha:
        problems.append("records_sha256 differs")
    if res["record_lengths"] != [len(r) for r in records]:
        problems.append("record_lengths differ")
    if res["epoch1_secret"] != snd.secrets[1].hex():
        problems.append("epoch1_secret differs from the sender's E(1)")
    if rekey and "2" not in res["opened_by_epoch"]:
        problems.append("no epoch-2 packet opened")
    # the receiver's key log must agree with the sender's
    rx_lines = set(open(rx_keylog).read().splitlines())
    tx_lines = set(open(keylog).read().splitlines())
    if not tx_lines <= rx_lines:
        problems.append("key logs disagree: %s" % (tx_lines - rx_lines))
    # captures
    clean = os.path.join(tmp, name + ".pcap")
    write_pcap(clean, snd.capture, 101, "<")
    eth_be = os.path.join(tmp, name + ".eth-be.pcap")
    write_pcap(eth_be, snd.capture, 1, ">", nano=True)
    dirty = os.path.join(tmp, name + ".dirty.pcap")
    write_pcap(dirty, sorted(snd.capture + snd.dirty), 228, "<")
    for path, want_rc in ((clean, 0), (eth_be, 0), (dirty, 1 if snd.dirty else 0)):
        p = subprocess.run([sys.executable, os.path.join(HERE, "pcap_open.py"), "--pcap", path,
                            "--keylog", keylog, "--json"], capture_output=True, text=True)
        summary = json.loads(p.stdout.strip().splitlines()[-1])
        if p.returncode != want_rc:
            problems.append("pcap_open %s: exit %d, want %d\n%s" % (
                os.path.basename(path), p.returncode, want_rc, p.stdout))
        if path == clean:
            if summary["packets"] != len(snd.capture) or summary["opened"] != len(snd.capture):
                problems.append("pcap_open: %s" % summary)
            if summary.get("fallback_opens"):
                problems.append("pcap_open needed fallbacks: %d" % summary["fallback_opens"])
            pc = summary
    print("%-8s %s  records %d/%d, receiver opened %d failed %d by epoch %s; "
          "sender sent %d packets; pcap %d/%d opened, frames %s" % (
              name, "PASS" if not problems else "FAIL", res["records_stored"], len(records),
              res["packets_opened"], res["packets_failed"], res["opened_by_epoch"],
              snd.sent_packets, pc["opened"], pc["packets"], pc["frames"]))
    print("         receiver counters: %s" % res["counters"])
    for pr in problems:
        print("         PROBLEM: " + pr)
    return not problems


# --------------------------------------------------------------------------------------
# In-process checks of receiver rules that a well-behaved sender does not reach
# --------------------------------------------------------------------------------------
class FakeSock:
    def __init__(self):
        self.sent = []

    def sendto(self, data, addr):
        self.sent.append((data, addr))


def fresh_pair():
    """New receiver and sender keys: both secrets and public keys, E(0) and the key id."""
    rsec, ssec = os.urandom(32), os.urandom(32)
    rpub, spub = pl.x25519_public(rsec), pl.x25519_public(ssec)
    return rsec, ssec, rpub, spub, pl.epoch0_secret(pl.static_shared(ssec, rpub)), \
        pl.key_id(spub)


def unit_checks():
    import receiver as rxm
    problems = []
    checks = [0]

    def expect(name, cond):
        checks[0] += 1
        if not cond:
            problems.append(name)

    rsec, ssec, rpub, spub, e0, kid = fresh_pair()
    sock = FakeSock()
    rx = rxm.Receiver(sock, rsec, spub, goal=10)
    A = ("127.0.0.1", 40000)
    t0 = 1000.0

    def spkt(run, epoch, pn, frames, secret=e0, L=None, k=kid):
        L = L or pl.pn_length(pn, None)
        hdr = pl.sender_header(epoch, k, run, pn, L)
        return pl.data_key(secret, spub, rpub, run, epoch).seal(hdr, b"".join(frames), pn)

    def open_reply(d, secret, epoch):
        h = pl.parse_header(d)
        key = pl.reply_key(secret, spub, rpub, h.run, h.reply_run, epoch)
        pt = key.open(h.raw, d[h.length:], pl.recover_pn(None, h.pn_trunc, h.pn_len))
        return h, (pl.decode_frames(pt, True) if pt is not None else None)

    # 1. LOST: unknown run, epoch field 1, >= 64 B -> one 53 B LOST; rate limit; size
    trigger = bytes([1, 0x11]) + pl.u32(kid) + pl.u64(77) + b"\x05" + bytes(64) + bytes(range(16))
    rx.handle_datagram(trigger, A, t0)
    expect("LOST sent for unknown run in epoch 1", len(sock.sent) == 1)
    if sock.sent:
        d = sock.sent[0][0]
        h, fr = open_reply(d, e0, 0)
        expect("LOST is 53 B", len(d) == 53)
        expect("LOST opens with the epoch-0 reply key of its fresh reply run, echoing its trigger",
               fr == [(pl.LOST, {"epoch_field": 1, "pn_trunc": 0x0500, "pn_len": 2, "tag": bytes(range(8))})])
        expect("LOST has pn 0 in 1 B and a fresh reply run",
               h.pn_len == 1 and h.pn_trunc == 0 and h.reply_run not in [r.reply_run for r in rx.runs.values()])
    rx.handle_datagram(trigger, A, t0 + 0.05)
    expect("LOST rate limit 100 ms per (run, address)", len(sock.sent) == 1)
    rx.handle_datagram(bytes([1, 0x11]) + pl.u32(kid) + pl.u64(78) + b"\x05" + bytes(80), A,
                       t0 + 0.05)
    expect("another run has an allowance of its own", len(sock.sent) == 2)
    del sock.sent[1:]
    rx.handle_datagram(bytes([1, 0x11]) + pl.u32(kid) + pl.u64(79) + b"\x05" + bytes(48), A,
                       t0 + 0.5)
    expect("no LOST for a 63 B datagram", len(sock.sent) == 1)
    rx.handle_datagram(bytes([1, 0x11]) + pl.u32(kid ^ 1) + pl.u64(80) + b"\x05" + bytes(80),
                       A, t0 + 1)
    expect("no LOST for an unknown key id", len(sock.sent) == 1)
    del sock.sent[:]

    # 2. First packet: PING only, 32 B -> reply within 3x, with ACK and CHALLENGE
    run = 0x1111
    p0 = spkt(run, 0, 0, [pl.enc_ping()])
    expect("smallest sender packet is 32 B", len(p0) == 32)
    rx.handle_datagram(p0, A, t0 + 2)
    expect("reply to the first packet", len(sock.sent) == 1)
    if sock.sent:
        d = sock.sent[0][0]
        h, fr = open_reply(d, e0, 0)
        types = [t for t, _ in fr]
        expect("reply <= 3x the bytes received", len(d) <= 3 * 32)
        expect("reply has ACK without stream unknown (no record bytes yet, protocol.md §4) "
               "and CHALLENGE", types == [pl.ACK, pl.CHALLENGE] and not fr[0][1]["stream_unknown"])
        expect("reply pn written in 4 B", h.pn_len == 4)
    r = rx.runs[run]
    # amplification: pretend much was sent already
    r.bytes_out = 3 * r.bytes_in - 10
    n = len(sock.sent)
    rx.send_reply(r, t0 + 2.01)
    expect("amplification limit blocks a reply", len(sock.sent) == n and
           rx.counters.get("amplification_blocked"))
    r.bytes_out = 0
    # replay of the same packet: no answer
    rx.handle_datagram(p0, A, t0 + 2.02)
    rx.timers(t0 + 2.1)
    expect("replay gets no answer", len(sock.sent) == n and rx.counters.get("replay_dropped"))

    # 3. OFFERs: wrong epoch ignored; all-zero key ignored; rate limit 4 per second
    rx.handle_datagram(spkt(run, 0, 1, [pl.enc_offer(3, pl.x25519_public(os.urandom(32)))]), A,
                       t0 + 3)
    expect("OFFER for epoch 3 under 0 ignored", rx.counters.get("offer_not_next_epoch") == 1
           and 1 not in r.secrets)
    rx.handle_datagram(spkt(run, 0, 2, [pl.enc_offer(1, bytes(32))]), A, t0 + 3)
    expect("all-zero OFFER key refused", rx.counters.get("offer_zero_dh") == 1 and
           1 not in r.secrets)
    effs = []
    for i in range(5):
        eph = os.urandom(32)
        effs.append(eph)
        rx.handle_datagram(spkt(run, 0, 3 + i, [pl.enc_offer(1, pl.x25519_public(eph))]), A,
                           t0 + 3.01)
    # 1 X25519 spent on the zero key, then 3 accepted, then rate-limited
    expect("X25519 rate limit (burst 4)", rx.counters.get("x25519_rate_limited", 0) >= 1)
    offered = pl.x25519_public(effs[2])
    expect("a new offer replaces an unused accepted epoch",
           r.accepted is not None and r.accepted[1] == offered)
    del sock.sent[:]
    # repeated OFFER (same key) -> same ACCEPT, no key work
    rx.handle_datagram(spkt(run, 0, 20, [pl.enc_offer(1, offered)]), A, t0 + 3.5)
    rx.timers(t0 + 3.6)
    acc = [f for d, _ in sock.sent for t, f in open_reply(d, e0, 0)[1] if t == pl.ACCEPT]
    expect("repeated OFFER gets the same ACCEPT", acc and acc[0]["public"] == r.accepted[2]
           and acc[0]["echo"] == offered[:4])
    # the sender derives E(1); an epoch-1 packet opens and moves the run
    e1 = pl.next_epoch_secret(e0, pl.x25519(effs[2], acc[0]["public"]), offered,
                              acc[0]["public"], 1)
    rx.handle_datagram(spkt(run, 1, 21, [pl.enc_ping()], secret=e1), A, t0 + 4)
    expect("epoch-1 packet opens", r.current == 1 and rx.opened_by_epoch.get("1") == 1)
    # epoch-0 keys kept 10 s, then wiped
    before = rx.opened_by_epoch.get("0")
    rx.handle_datagram(spkt(run, 0, 22, [pl.enc_ping()]), A, t0 + 5)
    expect("epoch-0 packet opens within 10 s", rx.opened_by_epoch.get("0") == before + 1)
    rx.timers(t0 + 14.5)
    f0 = rx.failed
    rx.handle_datagram(spkt(run, 0, 23, [pl.enc_ping()]), A, t0 + 15)
    expect("epoch-0 keys wiped 10 s after the first epoch-1 packet", rx.failed == f0 + 1)
    # old OFFER replayed under epoch 0 cannot roll back (and is not even opened now)
    expect("still epoch 1", r.current == 1)

    # 4. Stream: a prefix above 16 MiB stops the stream
    rx.handle_datagram(spkt(run, 1, 24, [pl.enc_stream(0, 0, 1, b"s", b"i"),
                                         pl.enc_records(0, pl.varint_encode(pl.RECORD_MOST + 1)
                                                        + b"x")], secret=e1), A, t0 + 16)
    expect("prefix above 16 MiB stops the stream", r.stream is not None and r.stream.broken)

    # 5. Address move only on the highest packet number; new address unvalidated
    B = ("127.0.0.1", 40001)
    r.validated = True
    rx.handle_datagram(spkt(run, 1, 30, [pl.enc_ping()], secret=e1), A, t0 + 17)
    rx.handle_datagram(spkt(run, 1, 28, [pl.enc_ping()], secret=e1), B, t0 + 17)
    expect("older packet from another address moves nothing", r.addr == A and r.validated)
    rx.handle_datagram(spkt(run, 1, 31, [pl.enc_ping()], secret=e1), B, t0 + 17)
    expect("highest packet from another address moves the run", r.addr == B and
           not r.validated)
    rx.handle_datagram(spkt(run, 1, 29, [pl.enc_response(r.token)], secret=e1), A, t0 + 17)
    expect("RESPONSE from another address does not validate (nor move)",
           not r.validated and r.addr == B)
    rx.handle_datagram(spkt(run, 1, 32, [pl.enc_response(r.token)], secret=e1), B, t0 + 17)
    expect("RESPONSE from the address validates", r.validated)

    # 6. Run slots: 64 per peer; a 65th live slot is dropped; idle ones are reused
    for i in range(70):
        rx.handle_datagram(spkt(0x9000 + i, 0, 0, [pl.enc_ping()]), A, t0 + 20)
    expect("at most 64 run slots", len(rx.runs) == 64 and
           rx.counters.get("slots_full_dropped") == 70 - 63)
    rx.handle_datagram(spkt(0xABC, 0, 0, [pl.enc_ping()]), A, t0 + 200)
    expect("an idle slot is reused", 0xABC in rx.runs and len(rx.runs) == 64)

    # 7. Malformed payloads and wrong-direction frames get nothing
    n = len(sock.sent)
    rx.handle_datagram(spkt(0xABC, 0, 1, [pl.enc_stored(1, 1)]), A, t0 + 201)
    rx.handle_datagram(spkt(0xABC, 0, 2, [b"\x0d"]), A, t0 + 201)
    rx.timers(t0 + 202)
    expect("malformed payloads get no answer", len(sock.sent) == n and
           rx.counters.get("malformed_payload_wrong_direction") == 1 and
           rx.counters.get("malformed_payload_unknown_frame") == 1)

    # 8. Stream reassembly: out of order, duplicates, credit
    st = rxm.Stream(0, 0, b"s", b"i", 1, 0)
    recs = [os.urandom(n) for n in (0, 5, 70, 3000, 17000, 1)]
    data = b"".join(pl.varint_encode(len(x)) + x for x in recs)
    cuts = list(range(0, len(data), 700))
    random.Random(5).shuffle(cuts)
    for c in cuts + cuts[:3]:
        st.insert(c, data[c:c + 700])
    got = [x for _, x in st.take_records()]
    expect("reassembly in any order", got == recs)
    expect("credit after delivery", st.credit() == min(
        pl.CREDIT_MOST, rxm.RUN_MEMORY * len(recs) // len(data)))
    epoch_checks(rxm, expect)
    size_checks(rxm, expect)
    search_checks(expect)
    source_checks(expect)
    cut_off_checks(expect)
    print("unit     %s  %d rule checks (receiver, sizes, size search, resuming, cut-off)" % ("PASS" if not problems else "FAIL",
                                                    checks[0]))
    for p in problems:
        print("         PROBLEM: " + p)
    return not problems


def epoch_checks(rxm, expect):
    """A run's epoch changes at the receiver (protocol.md §3, §9, crypto.md §6, §10):
    epochs in a row faster than 10 s, which keys are held, repeated and other OFFERs, the
    reply-key limit, and a memo-restored run in epoch 2 whose sender is still in epoch 1."""
    rsec, ssec, rpub, spub, e0, kid = fresh_pair()
    A = ("127.0.0.1", 40002)
    t0 = 5000.0
    run = 0x2222

    def spkt(epoch, pn, frames, secret):
        hdr = pl.sender_header(epoch, kid, run, pn, 4)
        return pl.data_key(secret, spub, rpub, run, epoch).seal(hdr, b"".join(frames), pn)

    def replies(sock, secret, epoch):
        """Frames of every reply sent so far that opens under (secret, epoch)."""
        out = []
        for d, _ in sock.sent:
            h = pl.parse_header(d)
            key = pl.reply_key(secret, spub, rpub, h.run, h.reply_run, epoch)
            pt = key.open(h.raw, d[h.length:], pl.recover_pn(None, h.pn_trunc, h.pn_len))
            if pt is not None:
                out.append((h, pl.decode_frames(pt, True)))
        return out

    class Side:
        """The sender's half of the exchange, as protocol.md §3 has it."""
        def __init__(self, rx, sock):
            self.rx, self.sock, self.pn = rx, sock, 0
            self.secrets, self.epoch = {0: e0}, 0

        def send(self, frames, t, epoch=None):
            e = self.epoch if epoch is None else epoch
            self.rx.handle_datagram(spkt(e, self.pn, frames, self.secrets[e]), A, t)
            self.pn += 1
            self.rx.timers(t + 0.01)

        def turn(self, t, pad=False):
            """OFFER epoch n+1 under n, take the ACCEPT, then one packet of n+1."""
            n1 = self.epoch + 1
            eph = os.urandom(32)
            pub = pl.x25519_public(eph)
            del self.sock.sent[:]
            self.send([pl.enc_offer(n1, pub)] + ([pl.enc_padding(40)] if pad else []), t)
            acc = [f for _, fr in replies(self.sock, self.secrets[self.epoch], self.epoch)
                   for ty, f in fr if ty == pl.ACCEPT]
            if not acc or acc[0]["echo"] != pub[:4]:
                return None
            self.secrets[n1] = pl.next_epoch_secret(
                self.secrets[self.epoch], pl.x25519(eph, acc[0]["public"]), pub,
                acc[0]["public"], n1)
            self.epoch = n1
            self.send([pl.enc_ping()], t + 0.001)
            return pub

    # 1. Epochs 1, 2, 3 within a second: at epoch 3 only epochs 2 and 3 are held; the
    #    previous epoch's keys 10 s from its successor's first packet, then epoch 3 alone.
    sock = FakeSock()
    rx = rxm.Receiver(sock, rsec, spub, goal=10)
    s = Side(rx, sock)
    s.send([pl.enc_ping()], t0)
    for i in range(3):
        s.turn(t0 + 0.3 * (i + 1))
    r = rx.runs[run]
    expect("three epochs in a second reach epoch 3", r.current == 3 and s.epoch == 3)
    expect("at epoch 3 the keys of epochs 2 and 3 only (older ones wiped at once)",
           sorted(r.secrets) == [2, 3])
    expect("the epochs entered are logged in order", [e for e, _ in r.entered] == [1, 2, 3])
    before = rx.opened_by_epoch.get("2")
    s.send([pl.enc_ping()], t0 + 5, epoch=2)
    expect("a late epoch-2 packet opens within 10 s", rx.opened_by_epoch.get("2") == before + 1)
    rx.timers(t0 + 0.9 + rxm.OLD_EPOCH_KEEP + 0.1)
    expect("10 s after epoch 3 began only its keys are held", sorted(r.secrets) == [3])
    # 2. Replies go in the highest epoch received; after the ACCEPT of epoch 4 and before
    #    an epoch-4 packet, a repeated OFFER gets the same ACCEPT, another key gets nothing.
    t1 = t0 + 20
    del sock.sent[:]
    eph = os.urandom(32)
    pub = pl.x25519_public(eph)
    s.send([pl.enc_offer(4, pub)], t1)
    acc = [f for _, fr in replies(sock, s.secrets[3], 3) for ty, f in fr if ty == pl.ACCEPT]
    expect("OFFER of epoch 4 under 3 answered by an ACCEPT sealed in epoch 3",
           len(acc) == 1 and acc[0]["epoch"] == 4 and len(replies(sock, s.secrets[3], 3)) ==
           len(sock.sent))
    del sock.sent[:]
    s.send([pl.enc_offer(4, pl.x25519_public(os.urandom(32)))], t1 + 0.5)
    again = [f for _, fr in replies(sock, s.secrets[3], 3) for ty, f in fr if ty == pl.ACCEPT]
    expect("another key for epoch 4 is ignored (no new proposal, no ACCEPT)",
           not again and r.accepted[1] == pub and
           rx.counters.get("offer_other_key_ignored") == 1)
    del sock.sent[:]
    s.send([pl.enc_offer(4, pub)], t1 + 0.6)
    again = [f for _, fr in replies(sock, s.secrets[3], 3) for ty, f in fr if ty == pl.ACCEPT]
    expect("a repeated OFFER gets the same ACCEPT", again and again[0] == acc[0])
    s.secrets[4] = pl.next_epoch_secret(s.secrets[3], pl.x25519(eph, acc[0]["public"]), pub,
                                        acc[0]["public"], 4)
    s.epoch = 4
    s.send([pl.enc_ping()], t1 + 0.7)
    del sock.sent[:]
    s.send([pl.enc_offer(4, pub)], t1 + 0.8, epoch=3)
    expect("once epoch 4 is in use a repeated OFFER needs nothing",
           all(ty != pl.ACCEPT for _, fr in replies(sock, s.secrets[4], 4) for ty, _ in fr)
           and rx.counters.get("offer_epoch_in_use") == 1)
    expect("replies in epoch 4 once a packet of it opened",
           sock.sent and len(replies(sock, s.secrets[4], 4)) == len(sock.sent))
    # 3. Epochs past 15: the 4-bit field wraps and the reader follows (wire.md §4).
    for i in range(14):
        s.turn(t1 + 1 + 0.3 * i)
    expect("epoch 18 reached through the wrap of the field", r.current == 18 == s.epoch)
    # 4. The reply-key limit (crypto.md §10), at a small limit: replies stop at it, the
    #    last KEPT of them only with an ACCEPT; the next epoch's key starts from 0.
    most, kept = rxm.KEY_PACKETS_MOST, rxm.KEY_PACKETS_KEPT
    rxm.KEY_PACKETS_MOST, rxm.KEY_PACKETS_KEPT = r.sealed[18] + 6, 3
    try:
        del sock.sent[:]
        for i in range(12):
            s.send([pl.enc_ping()], t1 + 10 + 0.001 * i)
        expect("replies under one key stop KEPT before the limit without an ACCEPT",
               len(sock.sent) == 3 and r.sealed[18] == rxm.KEY_PACKETS_MOST - 3)
        s.turn(t1 + 11)
        expect("the ACCEPT still goes in the kept room, and the new key replies",
               s.epoch == 19 and r.sealed[18] == rxm.KEY_PACKETS_MOST - 2 and
               r.sealed.get(19, 0) >= 1)
    finally:
        rxm.KEY_PACKETS_MOST, rxm.KEY_PACKETS_KEPT = most, kept

    # 5. Memo: restored in epoch 2 while the sender still seals in epoch 1 (the receiver
    #    died after the memo write of epoch 2, before its ACCEPT): an epoch-1 packet above
    #    the recorded number draws LOST; the sender's epoch-0 packet with a new OFFER
    #    rebuilds the run with a new reply run (§9); a replayed one does not.
    import rx_store
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "rx.memo")
        sock = FakeSock()
        rx = rxm.Receiver(sock, rsec, spub, goal=10, memo=rx_store.Memo(path, [spub]))
        s = Side(rx, sock)
        s.send([pl.enc_ping()], t0)
        s.turn(t0 + 0.1)
        epoch1 = s.pn
        s.send([pl.enc_offer(2, pl.x25519_public(os.urandom(32)))], t0 + 0.2)
        recorded = s.pn - 1
        first = spkt(0, 0, [pl.enc_ping()], e0)
        sock = FakeSock()
        rx = rxm.Receiver(sock, rsec, spub, goal=10, memo=rx_store.Memo(path, [spub]))
        r = rx.runs.get(run)
        expect("restored in epoch 2 from the memo, not live",
               r is not None and r.current == 2 and not r.live and r.recorded == recorded)
        rx.handle_datagram(spkt(1, epoch1, [pl.enc_ping()] + [pl.enc_padding(40)],
                                s.secrets[1]), A, t0 + 1)
        expect("an epoch-1 packet at or below the recorded number draws no LOST",
               not sock.sent)
        s.rx = rx
        s.sock = sock
        s.send([pl.enc_ping(), pl.enc_padding(40)], t0 + 1.1)
        lost = [f for _, fr in replies(sock, e0, 0) for ty, f in fr if ty == pl.LOST]
        expect("an epoch-1 packet above it draws LOST", len(lost) == 1)
        rx.handle_datagram(first, A, t0 + 1.2)
        expect("a replayed epoch-0 packet (below the recorded number) changes nothing",
               rx.runs[run] is r and not rx.counters.get("restored_run_rebuilt"))
        del sock.sent[:]
        s.epoch, s.secrets = 0, {0: e0}
        old_reply_run = r.reply_run
        pub = s.turn(t0 + 1.3)
        r2 = rx.runs[run]
        expect("the sender's new epoch-0 OFFER rebuilds the run with a new reply run",
               rx.counters.get("restored_run_rebuilt") == 1 and r2 is not r and
               r2.reply_run != old_reply_run)
        expect("and epoch 1 is made again, its packets open", pub is not None and
               r2.current == 1 and r2.live)


def size_checks(rxm, expect):
    """protocol.md §2, §5.1, wire.md §2: a receiver takes a packet of any length up to
    1,452 B, whatever a sender's size search settles on; 1,453 B is too long.  Every size
    from the smallest packet (32 B) up, as a size probe would make it (PING and PADDING)
    and carrying record bytes (a RECORDS frame to the end of the packet)."""
    rsec, ssec, rpub, spub, e0, kid = fresh_pair()
    A = ("127.0.0.1", 40003)
    t0 = 9000.0
    sock = FakeSock()
    rx = rxm.Receiver(sock, rsec, spub, goal=10)

    def spkt(run, pn, payload):
        hdr = pl.sender_header(0, kid, run, pn, 2)
        return pl.data_key(e0, spub, rpub, run, 0).seal(hdr, payload, pn)

    head = pl.SENDER_HEADER_BASE + 2 + pl.TAG_BYTES
    sizes = list(range(head + 1, pl.DATAGRAM_MOST + 1))
    for pn, n in enumerate(sizes):
        pad = n - head - 1
        payload = pl.enc_ping() + (pl.enc_padding(pad) if pad else b"")
        rx.handle_datagram(spkt(0x3333, pn, payload), A, t0 + pn * 1e-3)
    rx.timers(t0 + 5)                          # the ACK delay runs out
    r = rx.runs.get(0x3333)
    expect("a PING padded to every size 32..1,452 B opens and counts",
           r is not None and all(rx.sizes.get(n) == 1 for n in sizes) and
           r.largest == len(sizes) - 1 and pl.DATAGRAM_MOST == sizes[-1] == 1452)
    acked = [f for d, _ in sock.sent for t, f in open_reply_any(d, spub, rpub, e0)
             if t == pl.ACK]
    expect("the largest of them acknowledged", any(f["largest"] == len(sizes) - 1
                                                    for f in acked))
    expect("every reply within the base (§5.1)",
           sock.sent and all(len(d) <= pl.DATAGRAM_BASE for d, _ in sock.sent))
    # record bytes at every size: STREAM first, then RECORDS filling each packet
    stream = bytes(range(256)) * 8000           # more than the packets below carry
    first = pl.enc_stream(0, 0, 1, b"s", b"i") + pl.enc_records(0, stream[:100])
    rx.handle_datagram(spkt(0x4444, 0, first), A, t0 + 10)
    off = 100
    for pn, n in enumerate(range(head + 6, pl.DATAGRAM_MOST + 1), start=1):
        k = n - head - 5
        rx.handle_datagram(spkt(0x4444, pn, pl.enc_records(off, stream[off:off + k])), A,
                           t0 + 10 + pn * 1e-3)
        off += k
    r = rx.runs.get(0x4444)
    assert off < len(stream)
    expect("RECORDS filling every size up to 1,452 B: every byte kept in order",
           r is not None and r.stream is not None and r.stream.contiguous_end() == off and
           bytes(r.stream.buf[:off]) == stream[:off])
    n = rx.failed
    too = spkt(0x3333, len(sizes), pl.enc_ping() + pl.enc_padding(pl.DATAGRAM_MOST + 1 - head - 1))
    rx.handle_datagram(too, A, t0 + 20)
    expect("1,453 B is too long, dropped before any decryption",
           len(too) == pl.DATAGRAM_MOST + 1 and rx.failed == n + 1 and
           rx.counters.get("malformed_header_too_long") == 1)


def open_reply_any(d, spub, rpub, e0):
    """The frames of an epoch-0 reply, [] if it does not open."""
    h = pl.parse_header(d)
    key = pl.reply_key(e0, spub, rpub, h.run, h.reply_run, 0)
    pt = key.open(h.raw, d[h.length:], pl.recover_pn(None, h.pn_trunc, h.pn_len))
    return pl.decode_frames(pt, True) if pt is not None else []


def source_checks(expect):
    """protocol.md §4.3 at receiver.py's host (rx_store.SourceBook): the answer to a run
    that asks where to resume, and the cut-off of the source's earlier runs once the asking
    run is proven live -- never by an ask alone (a replay) -- the same after a restart (the
    book read back from its file, a torn last entry cut)."""
    import rx_store
    d = tempfile.mkdtemp(prefix="pl-sources-")
    marks = {}

    def mark(r):
        return marks.get(r, 0)
    b = rx_store.SourceBook(d)
    src, other = b"sensor", b"other"
    b.bound(1, src)                                  # run 1 never asked: another input
    marks[1] = 40
    expect("a first ask of a source is answered 0 (runs that never asked do not count)",
           b.ask(2, src, mark) == 0)
    expect("an ask alone cuts nothing off", not b.cut(1) and not b.cut(2))
    b.owns(2)
    marks[2] = 300
    expect("the asking run proven live owns the source: the runs before it are cut off",
           b.cut(1) and not b.cut(2))
    expect("a second ask: the records of the source held, 300", b.ask(3, src, mark) == 300
           and not b.cut(2) and not b.cut(3))
    marks[2] = 310                                   # run 2 went on until run 3's proof
    b.owns(3)
    expect("run 3 owns it: run 2 cut off; the count is 310", b.cut(2) and not b.cut(3) and
           b.count(src, mark) == 310)
    expect("an answer given counts before its run stored anything",
           b.ask(4, src, mark) == 310)
    b.owns(4)
    expect("a replayed ask of run 2 (never proven live) takes nothing back",
           b.ask(2, src, mark) == 310 and b.cut(2) and b.cut(3) and not b.cut(4))
    b.bound(9, other)
    b.ask(10, other, mark)
    b.owns(10)
    expect("another source stands on its own", not b.cut(4) and not b.cut(10) and b.cut(9))
    b.bound(5, src)                                  # bound after the owner: not cut
    expect("a run first seen after the owner is not cut off", not b.cut(5))
    with open(os.path.join(d, "streams.bin"), "ab") as f:
        f.write(b"\x03" + bytes(9))                   # a torn entry (a crash mid-write)
    r = rx_store.SourceBook(d)
    expect("after a restart: the torn entry cut, the same cut-offs", r.cut_bytes == 10 and
           [x for x in (1, 2, 3, 4, 5, 9, 10) if r.cut(x)] == [1, 2, 3, 9])
    marks[4] = 420
    expect("and the same count, from the marks of the runs that asked",
           r.ask(6, src, mark) == 420)
    r.owns(6)
    expect("the next owner cuts the runs before it", r.cut(4) and r.cut(5) and not r.cut(6))
    r.owns(4)
    expect("a run proven live again (it asked again after a LOST) owns it again",
           not r.cut(4) and r.cut(6))
    m = rx_store.SourceBook(None)
    m.bound(1, src)
    expect("in memory (no store) the same rules", m.ask(2, src, lambda x: 7) == 0 and
           m.ask(3, src, lambda x: 7) == 7 and not m.cut(1))
    m.owns(3)
    expect("in memory: the owner cuts the runs before it", m.cut(1) and m.cut(2))
    shutil.rmtree(d, ignore_errors=True)


def cut_off_checks(expect):
    """protocol.md §4.3 "The cut-off run is told": receiver.py refuses a run cut off by a
    newer asking run with REFUSED reason 5 -- at once when the takeover finds it bound (its
    next reply to record bytes carries REFUSED and no STORED, and nothing of it is stored),
    at each later STREAM of it, and after a restart with the same store -- while the newer
    run goes on; one REFUSED per reply, only in answer to STREAM or record bytes.  And
    sender.py ends its run on a REFUSED 5 that counts (§4.1), and on no other."""
    import receiver as rxm
    import rx_store
    import sender as txm
    rsec, ssec, rpub, spub, e0, kid = fresh_pair()
    d = tempfile.mkdtemp(prefix="pl-cutoff-")
    A, B = ("127.0.0.1", 40010), ("127.0.0.1", 40011)
    ra, rb = 0xA1, 0xB2
    t0 = 7000.0
    stream = pl.enc_stream(0, 0, 0, b"sensor", b"in")

    def spkt(run, pn, frames):
        hdr = pl.sender_header(0, kid, run, pn, 4)
        return pl.data_key(e0, spub, rpub, run, 0).seal(hdr, b"".join(frames), pn)

    def send(rx, run, pn, frames, addr, t):
        """One packet, and the reply it is due (at once, not after the ack delay)."""
        rx.handle_datagram(spkt(run, pn, frames), addr, t)
        r = rx.runs.get(run)
        if r is not None and r.ack_due is not None:
            rx.send_reply(r, t)

    def last_reply(sock):
        return dict(open_reply_any(sock.sent[-1][0], spub, rpub, e0)) if sock.sent else {}

    def prove(rx, run):
        """The run proven live (§4.2: a packet of epoch >= 1 opened), as process() does."""
        r = rx.runs[run]
        r.live = True
        rx.take_source(r)

    def records(first, n):
        return b"".join(pl.varint_encode(3) + b"r%02d" % k for k in range(first, first + n))

    sock = FakeSock()
    rx = rxm.Receiver(sock, rsec, spub, goal=100, store=rx_store.RecordStore(d))
    send(rx, ra, 0, [stream], A, t0)          # A asks: answered 0
    prove(rx, ra)
    send(rx, ra, 1, [pl.enc_records(0, records(0, 5))], A, t0 + 0.1)
    expect("cut-off: A, the owner, stores 5 records", rx.store.mark(ra) == 5 and
           last_reply(sock).get(pl.STORED, {}).get("stored") == 5)
    send(rx, ra, 2, [pl.enc_records(24, records(6, 1))], A, t0 + 0.2)   # held: 5 missing
    send(rx, rb, 0, [stream], B, t0 + 1)      # B asks: answered 5
    prove(rx, rb)
    expect("cut-off: B's proof cuts A off, told at once: refused with reason 5, its held "
           "record bytes dropped", rx.runs[ra].refused == pl.REFUSED_CUT_OFF and
           rx.runs[ra].stream is None and not rx.runs[rb].refused)
    n = len(sock.sent)
    send(rx, ra, 3, [pl.enc_ping()], A, t0 + 1.1)
    send(rx, ra, 4, [pl.enc_ping()], A, t0 + 1.2)
    expect("cut-off: A's PINGs draw no REFUSED and no STORED", len(sock.sent) > n and
           pl.REFUSED not in last_reply(sock) and pl.STORED not in last_reply(sock))
    send(rx, ra, 5, [pl.enc_records(20, records(5, 1))], A, t0 + 1.3)
    send(rx, ra, 6, [pl.enc_records(28, records(7, 1))], A, t0 + 1.3)
    fr = last_reply(sock)
    expect("cut-off: A's record bytes draw REFUSED reason 5, no STORED, nothing stored",
           fr.get(pl.REFUSED) == {"reason": 5} and pl.STORED not in fr and
           rx.store.mark(ra) == 5 and rx.counters.get("listener_refused") == 2)
    send(rx, ra, 7, [pl.enc_stream(5, 25, 0, b"sensor", b"in"),
                                    pl.enc_records(25, records(5, 1))], A, t0 + 2)
    send(rx, ra, 8, [stream], A, t0 + 3)
    expect("cut-off: A's later STREAM and its ask again: REFUSED 5 each, nothing stored",
           last_reply(sock).get(pl.REFUSED) == {"reason": 5} and rx.store.mark(ra) == 5 and
           rx.counters.get("listener_refused") == 4 and rx.sources.asked.get(ra) == 0)
    send(rx, rb, 1, [pl.enc_records(5, records(5, 3))], B, t0 + 3)
    expect("cut-off: B, the new owner, stores on from 5", rx.store.mark(rb) == 8 and
           last_reply(sock).get(pl.STORED, {}).get("stored") == 8)
    # the receiver restarted (no memo) with its store: A's run is built again and binds
    sock2 = FakeSock()
    rx2 = rxm.Receiver(sock2, rsec, spub, goal=100, store=rx_store.RecordStore(d))
    send(rx2, ra, 20, [pl.enc_stream(5, 5, 0, b"sensor", b"in"),
                                      pl.enc_records(5, records(5, 2))], A, t0 + 10)
    send(rx2, rb, 20, [pl.enc_stream(8, 8, 0, b"sensor", b"in"),
                                      pl.enc_records(8, records(8, 1))], B, t0 + 10)
    prove(rx2, rb)
    send(rx2, rb, 21, [pl.enc_ping()], B, t0 + 10.1)
    expect("cut-off after a restart: A binding again is refused with 5, B binds and stores",
           dict(open_reply_any(sock2.sent[0][0], spub, rpub, e0)).get(pl.REFUSED) ==
           {"reason": 5} and rx2.store.mark(ra) == 5 and rx2.store.mark(rb) == 9)
    shutil.rmtree(d, ignore_errors=True)

    # sender.py: a REFUSED 5 that counts ends the run; one that does not counts for nothing
    def sender():
        s = txm.Sender(("127.0.0.1", 9), rpub, ssec, [b"x" * 10] * 3)
        s.send_some(time.monotonic())                     # pn 0: OFFER, STREAM, records
        return s

    def reply(s, acked, reason):
        frames = pl.enc_ack([(acked, acked)], 0, False) + pl.enc_refused(reason)
        s.on_reply(pl.decode_frames(frames, True), time.monotonic())

    s = sender()
    reply(s, 0, 5)
    pn = s.pn
    s.send_some(time.monotonic() + 5)
    s.timers(time.monotonic() + 100)
    s.send_some(time.monotonic() + 100)
    expect("sender: REFUSED 5 acknowledging its record packet ends the run, nothing more "
           "sent", s.cut_off and s.failed() and s.pn == pn and not s.done())
    s = sender()
    s.build(time.monotonic(), ping=True)                  # pn 1: a PING
    reply(s, 1, 5)
    expect("sender: REFUSED 5 in a reply acknowledging only a PING does not count",
           not s.cut_off and not s.refused)
    reply(s, 0, 1)
    reply(s, 0, 5)
    expect("sender: during a refusal of reason 1, a REFUSED 5 not acknowledging the trial "
           "does not count", s.refused and not s.cut_off)
    s.send_some(s.trial_at + 0.01)
    reply(s, s.trial_pn, 5)
    expect("sender: REFUSED 5 acknowledging the trial ends the run", s.cut_off)


def search_checks(expect):
    """sender.py's size search (protocol.md §5.1) against a path that carries every size up
    to a cap, for each cap from the base to 1,452 B: it ends within 8 B at or below the cap;
    then the black-hole rule on patterns of losses and acknowledgements."""
    import sender as sndm
    worst = 0
    wrong = []
    for cap in range(pl.DATAGRAM_BASE, pl.DATAGRAM_MOST + 1):
        sz = sndm.SizeSearch()
        pn = 0
        while sz.next_probe() is not None and pn < 100:
            size = sz.next_probe()
            if size <= cap:
                sz.probe_acked(pn, size, 0.0)
            else:
                sz.probe_lost(pn, size, 0.0)
            pn += 1
        worst = max(worst, pn)
        if not cap - 8 <= sz.size <= cap or sz.searching:
            wrong.append((cap, sz.size))
    expect("the search ends within 8 B at or below every cap from 1,232 to 1,452 B", not wrong)
    expect("in at most 18 probes (%d): 3 per size that fails, 6 of them at most" % worst,
           worst <= 18)
    # black hole: 6 losses above the base, then an ACK of a small packet only
    sz = sndm.SizeSearch()
    sz.probe_acked(0, pl.DATAGRAM_MOST, 0.0)
    for i in range(5):
        sz.packet_lost(10 + i, pl.DATAGRAM_MOST)
    expect("5 large losses then a small ACK: no black hole",
           not sz.packets_acked([100], 20, 1.0) and sz.size == pl.DATAGRAM_MOST)
    sz.packet_lost(15, pl.DATAGRAM_MOST)
    expect("a large ACK among them clears the count",
           not sz.packets_acked([pl.DATAGRAM_MOST, 100], 21, 1.0) and sz.big_lost == 0)
    for i in range(6):
        sz.packet_lost(30 + i, pl.DATAGRAM_MOST)
    sz.packet_lost(36, 200)
    expect("a small loss since: no black hole", not sz.packets_acked([100], 40, 1.0))
    for i in range(6):
        sz.packet_lost(50 + i, pl.DATAGRAM_MOST)
    expect("6 large losses, none small, then only small ACKed: back to the base",
           sz.packets_acked([60, 1232], 70, 2.0) and sz.size == pl.DATAGRAM_BASE and
           sz.next_probe() == pl.DATAGRAM_MOST and sz.black_holes == 1)
    sz.probe_acked(65, pl.DATAGRAM_MOST, 2.1)
    sz.packet_lost(66, pl.DATAGRAM_MOST)
    expect("an ACK of a probe or a loss sent before the drop raises or counts nothing",
           sz.size == pl.DATAGRAM_BASE and sz.big_lost == 0)
    for i in range(3):
        sz.probe_lost(71 + i, sz.next_probe(), 2.2)
    expect("3 lost probes fail the size; a lost probe is no lost packet",
           sz.failed == pl.DATAGRAM_MOST and sz.big_lost == 0 and
           sz.next_probe() == (pl.DATAGRAM_BASE + pl.DATAGRAM_MOST) // 2)
    # in the sender: a PTO that fires early declares every packet in flight lost; the ACK
    # that then covers its probe (at most the base) and the large packets, which did
    # arrive, is no black hole; an ACK of the probe alone is
    for late_too, want in ((True, pl.DATAGRAM_MOST), (False, pl.DATAGRAM_BASE)):
        snd = sndm.Sender(("127.0.0.1", 9), os.urandom(32), os.urandom(32),
                          [os.urandom(20000)])
        try:
            snd.epoch, snd.secrets[1] = 1, os.urandom(32)
            snd.search.probe_acked(0, pl.DATAGRAM_MOST, 0.0)
            snd.size_probe_due = lambda: False
            snd.pn = 1
            for _ in range(8):
                snd.build(0.0)
            snd.timers(10.0)                     # the PTO: all 8 taken for lost
            probe = snd.build(10.0, probe=True)
            lo = 1 if late_too else probe.pn
            snd.on_ack({"largest": probe.pn, "ack_delay_us": 0, "stream_unknown": False,
                        "ranges": [(lo, probe.pn)]}, 10.01)
            expect("8 full packets lost at a PTO, then %s acknowledged: size %d" % (
                "they and the PTO probe" if late_too else "the PTO probe alone", want),
                snd.ptos == 1 and probe.size <= pl.DATAGRAM_BASE and
                snd.search.size == want)
        finally:
            snd.sock.close()
    # raise: a search that ended below 1,452 B starts again after raise_after
    sz = sndm.SizeSearch(raise_after=600.0)
    for i in range(3):
        sz.probe_lost(i, pl.DATAGRAM_MOST, 0.0)
    while sz.next_probe() is not None:
        p = sz.next_probe()
        (sz.probe_acked if p <= 1400 else sz.probe_lost)(p, p, 1.0)
    sz.tick(600.9)
    expect("ended below 1,452 B: no new search before 600 s", not sz.searching)
    sz.tick(601.0)
    expect("then one from 1,452 B", sz.searching and sz.next_probe() == pl.DATAGRAM_MOST and
           1392 <= sz.size <= 1400)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=300)
    ap.add_argument("--loss", type=float, default=0.08)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", help="keep captures, key logs and JSON here")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    tmp = args.keep or tempfile.mkdtemp(prefix="pl-selftest-")
    os.makedirs(tmp, exist_ok=True)

    def log(msg):
        if args.verbose:
            sys.stderr.write("[sender] %s\n" % msg)

    ok = unit_checks()
    ok &= scenario("clean", args, 0.0, False, False, tmp, log)
    ok &= scenario("impaired", args, args.loss, True, True, tmp, log)
    print("files in %s" % tmp)
    print("selftest %s" % ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
