#!/usr/bin/env python3
"""sender.py -- an independent pure-link version 1 SENDER over UDP, written from spec/
alone (protocol.md §2-§7, wire.md, crypto.md).  Codec and keys are in pl_spec.py.

One Sender is one output of a node: one run, one record stream, to one input of one
receiver.  The caller gives it every record up front and drives it with step() (or
run_until()); the test scenarios of against_recv.py reach into it to move its port or
to watch what it heard.

Usage (one transfer, records from files, or from stdin with --framed):
  python3 tests/interop/sender.py --to 127.0.0.1:PORT --secret HEX64 --peer HEX64 \
      --input NAME [--source NAME] [--shape N] [--epoch-packets N] [--timeout S] \
      [--pace PPS] [--resume] [--framed | FILE...]
Exit 0 once every record is stored; 1 at --timeout; 3 when --resume finds the receiver
holding more records of the source than the input has; 8 when the receiver cut the run
off (REFUSED reason 5: a newer run of the source took it over, protocol.md §4.3); 130 on
SIGINT.

Local choices (each one the spec leaves to the sender), named here:
  - a fixed window of WINDOW_PACKETS packets in flight, no pacing (loopback tests);
  - loss: 3 packets below the largest acknowledged, or 9/8 RTT older than an
    acknowledged packet; PTO = srtt + 4 rttvar + 25 ms (the receiver's ack delay
    bound), doubled per expiry; a PTO declares what is in flight lost and the next
    packet is a probe (4-byte number, protocol.md §2);
  - RESPONSE and a later OFFER in one packet at a time (protocol.md §6, §3);
  - at each ACCEPT of epoch 1 with records not yet stored, a packet of epoch 1 at once,
    a PING when nothing is due (§4.2 "the proof comes at once");
  - a new epoch after epoch_packets packets (default 2^22, protocol.md §3) or 120 s, or
    after as many replies opened under the epoch's reply key (at most 2^22, crypto.md §10);
  - a PING probe is padded to 64 B, so that a receiver that forgot the run can answer
    it with LOST (protocol.md §7 size condition);
  - the datagram size search of protocol.md §5.1 with the values it names (SizeSearch):
    first probe 1,452 B, then halving, 3 lost probes fail a size, done within 8 B, a black
    hole after 6 losses above the base, the search again 600 s after it ended below
    1,452 B; PTO probes stay at the base; a port change starts again from the base.
    Not done: hints from the host (this sender reads no ICMP errors).
"""

import errno

import argparse
import os
import select
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pl_spec as pl  # noqa: E402

WINDOW_PACKETS = 64
INITIAL_RTT = 0.1               # protocol.md §10 local choice
EPOCH_SECONDS = 120.0           # §3 local choice
EPOCH_PACKETS_DEFAULT = 1 << 22  # §3: the default offers at 2^22
EPOCH_REPLIES_MOST = 1 << 22    # crypto.md §10: replies opened under one reply key, at most
OLD_REPLY_KEEP = 10.0           # guess: the receiver's 10 s (§3) applied to the sender too
RESEND_AFTER = 1.0              # §4.2 resend rule
REFUSED_WAIT_FIRST = 1.0        # §4.1
REFUSED_WAIT_MOST = 64.0
EXIT_CUT_OFF = 8                # §4.3: the run was cut off (pure-link send's code too)
PROBE_LEAST = 64                # §7: LOST only for a trigger of at least 64 B
PROBE_TRIES = 3                 # §5.1: 3 probes of one size lost in a row fail it
SEARCH_STEP = 8                 # §5.1: done when acknowledged and failed are within 8 B
BLACK_HOLE_LOSSES = 6           # §5.1: packets above the base lost before a black hole
PMTU_RAISE = 600.0              # §5.1: search again after this, if it ended below the most
PROBES_GONE_KEPT = 8            # probes taken for lost whose late ACK still counts
LOST_SIZES_KEPT = 128           # packets taken for lost whose late ACK still counts (§5.1)


class SizeSearch:
    """protocol.md §5.1: which datagram size this sender may use on its path, and which
    size it probes next.  Pure bookkeeping (no socket, no clock of its own): the sender
    tells it what was acknowledged and what was lost.

    size      the size in use: the base, or the largest probe acknowledged on the path as
              it is now (since the last drop to the base)
    failed    the smallest size that failed (3 probes of it lost in a row), or None
    """

    def __init__(self, raise_after=PMTU_RAISE):
        self.raise_after = raise_after
        self.size = pl.DATAGRAM_BASE
        self.failed = None
        self.losses = 0                 # probes of the size probed now lost in a row
        self.searching = True
        self.raise_at = None
        self.first_pn = 0               # acknowledgements of packets below it raise nothing
        self.big_lost = 0               # packets above the base lost since one was acked
        self.probes_sent = 0
        self.probes_acked = 0
        self.probes_lost = 0
        self.black_holes = 0
        self.history = []               # (time, what, size)

    def next_probe(self):
        """The size to probe, or None when the search has ended."""
        if not self.searching:
            return None
        if self.failed is None:
            return pl.DATAGRAM_MOST     # §5.1: first at 1,452 B, one round trip on most paths
        return (self.size + self.failed) // 2

    def _settle(self, now):
        """§5.1: the search ends at 1,452 B, or when acknowledged and failed are within
        8 B; below 1,452 B it starts again after the raise time."""
        if self.size >= pl.DATAGRAM_MOST or (
                self.failed is not None and self.failed - self.size <= SEARCH_STEP):
            self.searching = False
            self.raise_at = now + self.raise_after if self.size < pl.DATAGRAM_MOST else None
            self.history.append((now, "done", self.size))

    def probe_acked(self, pn, size, now):
        self.probes_acked += 1
        self.big_lost = 0
        if pn < self.first_pn or size <= self.size:
            return                      # sent before the last drop, or nothing new
        self.size = size
        if self.failed is not None and self.failed <= size:
            self.failed = None          # a late ACK: the size thought failed passes
        self.losses = 0
        self.history.append((now, "acked", size))
        self._settle(now)

    def probe_lost(self, pn, size, now):
        """§5.1: a lost probe is no lost packet (no congestion event, nothing resent)."""
        self.probes_lost += 1
        if pn < self.first_pn or not self.searching or size != self.next_probe():
            return
        self.losses += 1
        if self.losses >= PROBE_TRIES:
            self.failed = size
            self.losses = 0
            self.history.append((now, "failed", size))
            self._settle(now)

    def packet_lost(self, pn, size):
        """A packet (not a size probe) declared lost: §5.1 black-hole count."""
        if pn < self.first_pn:
            return                      # sent before the last drop: it says nothing new
        if size > pl.DATAGRAM_BASE:
            self.big_lost += 1
        else:
            self.big_lost = 0           # a small packet lost: loss, not a black hole

    def packets_acked(self, sizes, next_pn, now):
        """Newly acknowledged packets' sizes.  §5.1 black hole: after 6 packets above the
        base lost, with none above it acknowledged and none at most the base lost since,
        an ACK of packets at most the base and none larger drops to the base at once and
        searches again from 1,452 B.  Returns True on a drop."""
        if not sizes:
            return False
        if max(sizes) > pl.DATAGRAM_BASE:
            self.big_lost = 0
            return False
        if self.big_lost < BLACK_HOLE_LOSSES or self.size <= pl.DATAGRAM_BASE:
            return False
        self.black_holes += 1
        self.history.append((now, "black_hole", self.size))
        self.restart(next_pn, now)
        return True

    def restart(self, next_pn, now):
        """Back to the base, search again from 1,452 B; what was sent before raises nothing."""
        self.size = pl.DATAGRAM_BASE
        self.failed = None
        self.losses = 0
        self.searching = True
        self.raise_at = None
        self.first_pn = next_pn
        self.big_lost = 0

    def tick(self, now):
        """§5.1 raise: a search that ended below 1,452 B starts again after raise_after."""
        if not self.searching and self.raise_at is not None and now >= self.raise_at:
            self.searching = True
            self.failed = None
            self.losses = 0
            self.raise_at = None
            self.history.append((now, "raise", self.size))


def random_run():
    while True:
        r = struct.unpack(">Q", os.urandom(8))[0]
        if r:
            return r                    # protocol.md §1: a run is never 0


class Flight:
    """What one sent packet carried (for loss recovery and the rules that depend on
    which packet an ACK names)."""
    __slots__ = ("pn", "time", "epoch", "pieces", "stream", "response", "offer", "trial",
                 "tag8", "size", "probe", "size_probe", "ask")

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))


class Sender:
    def __init__(self, rx_addr, rx_public, secret, records, source=b"out", input_name=b"in",
                 shape=0, epoch_packets=EPOCH_PACKETS_DEFAULT, log=None, bind_host="127.0.0.1",
                 pace_pps=None, answer_challenges=True, search_sizes=True,
                 pmtu_raise=PMTU_RAISE, resume=False):
        self.rx_addr = rx_addr
        self.rpub = rx_public
        self.secret = secret
        self.spub = pl.x25519_public(secret)
        self.kid = pl.key_id(self.spub)
        self.source, self.input, self.shape = source, input_name, shape
        self.epoch_packets = epoch_packets
        self.answer_challenges = answer_challenges   # False: a sender that cannot prove
                                                      # its address (tests of §6)
        self.pace_gap = 1.0 / pace_pps if pace_pps else 0.0   # pacing (local choice)
        self.pace_next = 0.0
        self.logf = log
        self.bind_host = bind_host
        self.sock = self._new_sock()
        self.run = random_run()
        self.e0 = pl.epoch0_secret(pl.static_shared(secret, rx_public))
        # records and the stream (wire.md §7)
        for r in records:
            if len(r) > pl.RECORD_MOST:
                raise ValueError("record above 16 MiB refused at enqueue (§4)")
        self.records = records
        self.n = len(records)
        self._lay_out(0)
        # resuming (§4.3): ask where to resume, queue no record until the answer
        self.asking = resume
        self.resumed_at = None          # m, the receiver's answer
        self.resume_refused = False     # the input has fewer than m records
        self.cut_off = False            # §4.3: REFUSED reason 5 counted, the run is over
        self.acked_bytes_packet = False # the reply in hand newly acknowledged such a packet
        # epochs (§3)
        self.secrets = {0: self.e0}
        self.epoch = 0
        self.epoch_first_pn = 0
        self.epoch_started = time.monotonic()
        self.epoch_sent = 0
        self.replies_opened = {}        # (reply run, epoch) -> replies opened under its key
        self.offer = None               # (n, eph secret, eph public)
        self.wipe_at = []               # (deadline, epoch)
        self._new_offer(1)
        # packet numbers (§2, wire.md §5)
        self.pn = 0
        self.acked_largest = None
        self.force4 = False             # after LOST, until a reply acknowledges a packet
        self.lost_base_pn = None
        self.flights = {}               # pn -> Flight, in flight
        self.unacked_tags = {}          # pn -> first 8 tag bytes, current epoch, never ACKed
        # replies
        self.reply_windows = {}         # reply run -> [largest, set of numbers]
        self.reply_keys = {}            # (reply run, epoch) -> PacketKey
        self.reply_run = None           # the build of the run we hear now
        # RTT / PTO
        self.srtt = None
        self.rttvar = INITIAL_RTT / 2
        self.pto_count = 0
        self.last_eliciting = None
        self.probe_due = False
        self.proof_due = False          # a packet of epoch 1 due at once (§4.2)
        # stream state (§4)
        self.S = 0                      # highest STORED count heard
        self.C = pl.CREDIT_BEFORE_DELIVERY
        self.sent_end = 0               # highest stream byte sent + 1
        self.resend = []                # [(off, end)] sorted
        self.need_stream = True
        self.rebind_pn = 0              # a stream-unknown ACK of packets below this is stale
        self.acked_pending = []         # [(time acked, stream end)] acked but not stored
        # address validation (§6)
        self.response = None
        # REFUSED (§4.1)
        self.refused = False
        self.refused_wait = REFUSED_WAIT_FIRST
        self.trial_at = None
        self.trial_pn = None
        # what happened (for the tests)
        self.sent_log = []              # (time, pn, epoch, L, size, kinds, local port)
        self.events = []                # (time, kind, detail)
        self.lost_honoured = 0
        self.lost_ignored = 0
        self.refused_heard = 0
        self.epochs_reached = 0
        self.challenges = []            # (time, token, local port)
        self.packets_lost = 0           # packets declared lost, size probes not counted
        self.pto_probes = set()         # numbers of the PTO probes sent
        self.ptos = 0                   # PTOs that fired (each declares all in flight lost)
        # datagram size (§5.1); search_sizes=False keeps every packet at the base
        self.search = SizeSearch(pmtu_raise) if search_sizes else None
        self.size_probe = None          # the one size probe in flight (a Flight)
        self.probes_gone = {}           # pn -> size of probes taken for lost (late ACKs)
        self.lost_sizes = {}            # pn -> size of packets taken for lost (late ACKs)

    # ---------------------------------------------------------------- helpers
    def _new_sock(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        s.bind((self.bind_host, 0))
        s.setblocking(False)
        return s

    def log(self, msg):
        if self.logf:
            self.logf("[sender %.3f] %s" % (time.monotonic(), msg))

    def event(self, kind, detail=None):
        self.events.append((time.monotonic(), kind, detail))
        self.log("%s %s" % (kind, detail if detail is not None else ""))

    def port(self):
        return self.sock.getsockname()[1]

    def move(self):
        """Change the sender's port mid-transfer: a new socket, the old one closed.  The
        path may differ from the new port (§5.1 "the path as it is now"): the size goes
        back to the base and is searched again."""
        old = self.sock
        self.sock = self._new_sock()
        old.close()
        if self.search is not None:
            self.search.restart(self.pn, time.monotonic())
            self.size_probe = None
        self.event("moved", self.port())

    def datagram_size(self):
        """§5.1: the size packets are made up to now."""
        return self.search.size if self.search is not None else pl.DATAGRAM_BASE

    def _new_offer(self, n):
        eph = os.urandom(32)
        self.offer = (n, eph, pl.x25519_public(eph))

    def _lay_out(self, m):
        """The record stream (wire.md §7) with record k at self.starts[k].  Resuming at m
        (§4.3), records 0..m-1 are the receiver's already and record m starts at offset m:
        laid out as if each skipped record were an empty one (its 1 B prefix), bytes that
        are below the stored mark and so never sent."""
        self.starts = list(range(m))
        chunks = [bytes(m)]
        off = m
        for r in self.records[m:]:
            self.starts.append(off)
            p = pl.varint_encode(len(r))
            chunks.append(p)
            chunks.append(r)
            off += len(p) + len(r)
        self.stream = b"".join(chunks)
        self.starts.append(off)

    def take_answer(self, m):
        """§4.3: the first STORED of a resuming run is the answer, whatever its count: skip
        m records of the input, number the next one m at stream offset m.  An input of
        fewer than m records is not the one the receiver holds: refused (local choice)."""
        self.asking = False
        self.resumed_at = m
        if m > self.n:
            self.resume_refused = True
            self.event("resume_refused", (m, self.n))
            return
        self._lay_out(m)
        self.sent_end = m
        self.resend = []
        self.acked_pending = []
        self.event("resumed", m)

    def stored_off(self):
        return self.starts[min(self.S, self.n)]

    def credit_end(self):
        """§4.2 heard number: bytes of record k only when k < S + C."""
        k = min(self.S + self.C, self.n)
        return min(self.starts[k], self.stored_off() + pl.STREAM_LEAD_MOST)

    def done(self):
        return not self.asking and self.S >= self.n

    def failed(self):
        return self.resume_refused or self.cut_off

    def pto(self):
        srtt = self.srtt if self.srtt is not None else INITIAL_RTT
        return (srtt + 4 * self.rttvar + pl.ACK_DELAY_MOST) * (2 ** min(self.pto_count, 6))

    def add_resend(self, off, end):
        off = max(off, self.stored_off())
        if off < end:
            self.resend.append((off, end))
            self.resend.sort()

    # ---------------------------------------------------------------- sending
    def may_send(self, now):
        if self.refused or self.failed() or now < self.pace_next:
            return False
        if self.epoch == 0:
            # §3: one epoch-0 packet per offer, until it is ACKed or declared lost
            return not any(f.epoch == 0 for f in self.flights.values())
        return len(self.flights) + (self.size_probe is not None) < WINDOW_PACKETS

    def build(self, now, probe=False, trial=False, ping=False):
        """One sender packet; None when there is nothing to say (ping: a PING then)."""
        pn = self.pn
        L = 4 if (probe or self.force4) else pl.pn_length(pn, self.acked_largest)
        # §5.1: epoch-0 packets and PTO probes at most the base (they must pass every path,
        # and a black hole shows when they pass and the larger packets do not); the others
        # up to the size the search has shown the path carries
        size = pl.DATAGRAM_BASE if (probe or self.epoch == 0) else self.datagram_size()
        room = size - (pl.SENDER_HEADER_BASE + L) - pl.TAG_BYTES
        head = []
        kinds = []
        offer = None
        # §3: the OFFER in one packet at a time (and in every probe) until its ACCEPT;
        # in epoch 0 that is every packet, one in flight at a time
        if self.offer is not None and self.offer[0] == self.epoch + 1 and (probe or not any(
                f.offer == self.offer[0] for f in self.flights.values())):
            head.append(pl.enc_offer(self.offer[0], self.offer[2]))
            offer = self.offer[0]
            kinds.append("OFFER")
        response = None
        # §6: the newest CHALLENGE's token, one packet carrying it in flight at a time
        if self.response is not None and not any(
                f.response == self.response for f in self.flights.values()):
            head.append(pl.enc_response(self.response))
            response = self.response
            kinds.append("RESPONSE")
        stream_frame = pl.enc_stream(min(self.S, self.n), self.stored_off(), self.shape,
                                     self.source, self.input)
        with_stream = self.need_stream or trial
        used = sum(map(len, head)) + (len(stream_frame) if with_stream else 0)
        pieces = []
        ask = self.asking and (probe or trial or not any(
            f.ask for f in self.flights.values()))
        if self.asking:
            # §4.3: the ask is a STREAM (base 0, 0) in a packet without record bytes, sent
            # again as any packet is (lost, a probe, a trial); no record before the answer
            if ask:
                head.append(pl.enc_stream(0, 0, self.shape, self.source, self.input))
                kinds.append("STREAM")
        elif trial:
            off = self.stored_off()
            end = min(self.starts[self.n], off + room - used - 5)
            if off < end:
                pieces.append((off, end))
        else:
            so = self.stored_off()
            self.resend = [(max(o, so), e) for o, e in self.resend if e > so]
            while room - used > 8 and len(pieces) < 8:
                if self.resend:
                    off, end = self.resend[0]
                elif self.sent_end < self.credit_end():
                    off, end = self.sent_end, self.credit_end()
                else:
                    break
                n = min(end - off, room - used - 7)
                pieces.append((off, off + n))
                used += 7 + n
                if self.resend:
                    if off + n >= self.resend[0][1]:
                        self.resend.pop(0)
                    else:
                        self.resend[0] = (off + n, self.resend[0][1])
                else:
                    self.sent_end = off + n
        frames = list(head)
        if pieces and with_stream:
            frames.insert(0, stream_frame)     # §4: OFFER, RESPONSE, STREAM before bytes
            kinds.insert(0, "STREAM")
        for i, (off, end) in enumerate(pieces):
            data = self.stream[off:end]
            last = i == len(pieces) - 1
            frames.append(pl.enc_records(off, data) if last else pl.enc_record(off, data))
            kinds.append("RECORDS" if last else "RECORD")
        if not frames and not (probe or ping):
            return None
        if (probe or ping) and not pieces:
            frames.append(pl.enc_ping())
            kinds.append("PING")
            short = PROBE_LEAST - (pl.SENDER_HEADER_BASE + L + sum(map(len, frames)) +
                                   pl.TAG_BYTES)
            if short > 0:
                frames.append(pl.enc_padding(short))
        f = self._seal_send(now, pn, L, frames, kinds, pieces=pieces,
                            stream=bool(pieces and with_stream) or ask, response=response,
                            offer=offer, trial=trial, probe=probe, size_probe=False, ask=ask)
        assert f.size <= size
        self.flights[pn] = f
        if probe:
            self.pto_probes.add(pn)
        self.last_eliciting = now
        return f

    def _seal_send(self, now, pn, L, frames, kinds, **what):
        """Seals one packet in the current epoch, sends it and logs it; its Flight."""
        header = pl.sender_header(self.epoch, self.kid, self.run, pn, L)
        key = pl.data_key(self.secrets[self.epoch], self.spub, self.rpub, self.run, self.epoch)
        dgram = key.seal(header, b"".join(frames), pn)
        self.pn += 1
        self.epoch_sent += 1
        f = Flight(pn=pn, time=now, epoch=self.epoch, tag8=dgram[-16:-8], size=len(dgram),
                   **what)
        self.unacked_tags[pn] = f.tag8
        self.pace_next = max(self.pace_next, now - 0.01) + self.pace_gap
        try:
            self.sock.sendto(dgram, self.rx_addr)
        except (BlockingIOError, ConnectionRefusedError):
            pass                                # counted as sent; loss recovery repairs it
        except OSError as e:
            if e.errno != errno.EMSGSIZE:
                raise
            self.event("emsgsize", len(dgram))  # a path the host will not send on: lost
        self.sent_log.append((now, pn, self.epoch, L, len(dgram), tuple(kinds), self.port()))
        return f

    def size_probe_due(self):
        """§5.1: one probe in flight at a time, after epoch 0, only while record bytes wait
        to be sent (the path is measured while it is used), never during a refusal."""
        return (self.search is not None and self.size_probe is None and self.epoch >= 1
                and not self.refused and not self.asking
                and self.search.next_probe() is not None
                and (bool(self.resend) or self.sent_end < self.starts[self.n]))

    def send_size_probe(self, now):
        """§5.1: a PING, then PADDING up to the size probed (header and tag included); no
        record bytes, no control frame."""
        size = self.search.next_probe()
        pn = self.pn
        L = 4 if self.force4 else pl.pn_length(pn, self.acked_largest)
        pad = size - (pl.SENDER_HEADER_BASE + L) - pl.TAG_BYTES - 1
        f = self._seal_send(now, pn, L, [pl.enc_ping(), pl.enc_padding(pad)],
                            ("PING", "PADDING"), pieces=[], size_probe=True)
        assert f.size == size
        self.size_probe = f
        self.search.probes_sent += 1
        return f

    def send_some(self, now):
        if self.cut_off:
            return                              # §4.3: the run is over, nothing more goes
        if self.refused:
            if self.trial_at is not None and now >= self.trial_at:
                f = self.build(now, trial=True)
                self.trial_pn = f.pn
                self.trial_at = None
                self.event("trial", f.pn)
            return
        if self.probe_due:
            self.probe_due = False
            self.build(now, probe=True)
            return
        if self.proof_due:
            # §4.2 "the proof comes at once": records sent in epoch 0 wait at the receiver
            # for a packet of epoch 1; the bytes due go now, or a PING when none are
            self.proof_due = False
            self.event("proof", self.build(now, ping=True).pn)
        # §3: a new epoch after epoch_packets packets or 120 s in an epoch, or as many
        # replies opened under its reply key (crypto.md §10: the receiver cannot ask)
        replies = self.replies_opened.get((self.reply_run, self.epoch), 0)
        if self.epoch >= 1 and self.offer is None and (
                self.epoch_sent >= self.epoch_packets or
                replies >= min(self.epoch_packets, EPOCH_REPLIES_MOST) or
                now - self.epoch_started >= EPOCH_SECONDS):
            self._new_offer(self.epoch + 1)
            self.event("offer", self.epoch + 1)
        while self.may_send(now):
            if self.size_probe_due():
                self.send_size_probe(now)
                continue
            if self.build(now) is None:
                break
            if self.epoch == 0:
                break

    # ---------------------------------------------------------------- timers
    def timers(self, now):
        for deadline, e in list(self.wipe_at):
            if now >= deadline:
                self.wipe_at.remove((deadline, e))
                if e != self.epoch and e != 0:
                    self.secrets.pop(e, None)
                    for k in [k for k in self.reply_keys if k[1] == e]:
                        del self.reply_keys[k]
        if self.refused:
            t = self.flights.get(self.trial_pn)
            # §4.1: during a refusal the PTO sends no probe but declares the trial lost
            if t is not None and now - t.time >= self.pto():
                del self.flights[t.pn]
                self.event("trial_lost", t.pn)
                self.trial_at = now
            return
        if self.search is not None:
            self.search.tick(now)
        p = self.size_probe
        if p is not None and now - p.time >= self.pto():
            self.size_probe_lost(now)           # nothing after it was acknowledged
        if self.flights and self.last_eliciting is not None and \
                now - self.last_eliciting >= self.pto():
            self.pto_count += 1
            self.ptos += 1
            for p in sorted(self.flights):
                self.declare_lost(p)
            self.probe_due = True
        # §4.2 resend rule: acknowledged but not stored within 1 s
        if self.acked_pending and now - self.acked_pending[0][0] >= RESEND_AFTER:
            end = max(e for _, e in self.acked_pending)
            self.acked_pending = []
            self.add_resend(self.stored_off(), end)
            self.event("resend_rule", (self.stored_off(), end))

    def next_deadline(self, now):
        t = now + 0.05
        if self.flights and self.last_eliciting is not None:
            t = min(t, self.last_eliciting + self.pto())
        if self.trial_at is not None:
            t = min(t, self.trial_at)
        if self.pace_gap and self.pace_next > now:
            t = min(t, self.pace_next)
        if self.size_probe is not None:
            t = min(t, self.size_probe.time + self.pto())
        return max(now, t)

    def declare_lost(self, p):
        f = self.flights.pop(p)
        self.packets_lost += 1
        if self.search is not None:
            self.search.packet_lost(f.pn, f.size)
            self.lost_sizes[f.pn] = f.size
            while len(self.lost_sizes) > LOST_SIZES_KEPT:
                del self.lost_sizes[min(self.lost_sizes)]
        for off, end in f.pieces:
            if not f.trial:
                self.add_resend(off, end)

    def size_probe_lost(self, now):
        """§5.1: a lost probe costs no data and is no lost packet; kept a while in case
        its ACK was only late."""
        f = self.size_probe
        self.size_probe = None
        self.probes_gone[f.pn] = f.size
        while len(self.probes_gone) > PROBES_GONE_KEPT:
            del self.probes_gone[min(self.probes_gone)]
        self.search.probe_lost(f.pn, f.size, now)
        self.event("size_probe_lost", f.size)

    # ---------------------------------------------------------------- replies
    def receive(self, now):
        while True:
            try:
                d, addr = self.sock.recvfrom(65535)
            except (BlockingIOError, InterruptedError, ConnectionRefusedError):
                return
            self.on_datagram(d, now)

    def on_datagram(self, d, now):
        try:
            h = pl.parse_header(d)
        except pl.Malformed:
            return
        if not h.reply or h.run != self.run:
            return
        epoch = pl.recover_epoch(h.E, self.epoch)
        win = self.reply_windows.get(h.reply_run)
        pn = pl.recover_pn(win[0] if win else None, h.pn_trunc, h.pn_len)
        secret = self.e0 if epoch == 0 else self.secrets.get(epoch)
        if secret is None:
            return
        k = (h.reply_run, epoch)
        key = self.reply_keys.get(k)
        if key is None:
            # crypto.md §12: a reply of an unseen reply run opens under a key derived aside
            key = pl.reply_key(secret, self.spub, self.rpub, self.run, h.reply_run, epoch)
        pt = key.open(h.raw, d[h.length:], pn)
        if pt is None:
            return
        try:
            frames = pl.decode_frames(pt, reply=True)
        except pl.Malformed:
            return
        if len(frames) == 1 and frames[0][0] == pl.LOST:
            self.on_lost(frames[0][1], now)     # §7: a LOST opens no window
            return
        if win is None:
            win = self.reply_windows[h.reply_run] = [None, set()]
            if self.reply_run is not None:
                self.event("new_reply_run", "%016x" % h.reply_run)
            self.reply_run = h.reply_run
        self.reply_keys[k] = key
        if pn in win[1] or (win[0] is not None and win[0] - pn >= pl.REPLAY_WINDOW):
            return                               # §2: the sender's window over replies
        win[1].add(pn)
        self.replies_opened[k] = self.replies_opened.get(k, 0) + 1
        if win[0] is None or pn > win[0]:
            win[0] = pn
            if len(win[1]) > 4 * pl.REPLAY_WINDOW:
                win[1] = {x for x in win[1] if pn - x < pl.REPLAY_WINDOW}
        self.on_reply(frames, now)

    def on_reply(self, frames, now):
        if self.cut_off:
            return                              # §4.3: the run is over
        self.acked_bytes_packet = False
        acked = []
        refused = []
        stored = None
        for t, f in frames:
            if t == pl.ACK:
                acked += self.on_ack(f, now)
            elif t == pl.STORED:
                stored = f
            elif t == pl.ACCEPT:
                self.on_accept(f, now)
            elif t == pl.CHALLENGE:
                if self.response != f["token"]:
                    self.challenges.append((now, f["token"], self.port()))
                    self.event("challenge", f["token"].hex())
                if self.answer_challenges:
                    self.response = f["token"]
            elif t == pl.REFUSED:
                refused.append(f["reason"])
        progress = False
        if stored is not None and self.asking:
            self.take_answer(stored["stored"])   # §4.3: the first STORED is the answer
        if stored is not None and not self.resume_refused:
            if stored["stored"] > self.S:
                progress = True
                self.S = min(stored["stored"], self.n)
                self.C = stored["credit"]
                so = self.stored_off()
                self.acked_pending = [(t, e) for t, e in self.acked_pending if e > so]
                self.resend = [(max(o, so), e) for o, e in self.resend if e > so]
            elif stored["stored"] == self.S:
                self.C = stored["credit"]       # guess: the latest credit for the same S
        self.refused_heard += len(refused)
        acks_trial = self.trial_pn is not None and self.trial_pn in acked
        if refused and not (acks_trial if self.refused else self.acked_bytes_packet):
            # §4.1 "which REFUSED counts": outside a refusal only in a reply that newly
            # acknowledges a packet carrying STREAM or record bytes (a replayed reply
            # acknowledges nothing new), during one only in the reply to the trial
            self.event("refused_not_counted", refused)
            refused = []
        if pl.REFUSED_CUT_OFF in refused:
            self.end_cut_off()
            return
        if refused:
            self.event("refused", (refused, acks_trial))
            if not self.refused:
                self.refused = True             # §4.1: stop, drop what is in flight, wait
                self.refused_wait = REFUSED_WAIT_FIRST
                self.flights.clear()
                self.size_probe = None
                self.resend = []
                self.sent_end = self.stored_off()
                self.acked_pending = []
                self.trial_at = now + self.refused_wait
                self.trial_pn = None
            elif acks_trial:
                for _ in refused:
                    self.refused_wait = min(REFUSED_WAIT_MOST, self.refused_wait * 2)
                self.trial_at = now + self.refused_wait
                self.trial_pn = None
        elif self.refused and ((self.trial_pn is not None and self.trial_pn in acked)
                               or progress):
            self.refused = False                # §4.1: the refusal is lifted
            self.refused_wait = REFUSED_WAIT_FIRST   # guess: the wait starts at 1 s again
            self.trial_at = None
            self.trial_pn = None
            self.need_stream = True
            self.sent_end = self.stored_off()
            self.event("refusal_lifted")

    def end_cut_off(self):
        """§4.3 "What the sender does": REFUSED reason 5, counted as §4.1 says (in the reply
        that newly acknowledges a packet carrying STREAM or record bytes, or, during a
        refusal, the trial), ends the run for good: a newer run of the source took it over
        and sends what this one did not hear stored.  Nothing more is sent."""
        self.cut_off = True
        self.refused = True
        self.flights.clear()
        self.size_probe = None
        self.resend = []
        self.acked_pending = []
        self.trial_at = None
        self.probe_due = self.proof_due = False
        self.event("cut_off", (min(self.S, self.n), self.n))

    def on_ack(self, f, now):
        """ACK ranges (wire.md §6.10); returns the numbers it newly acknowledges."""
        acked = []
        largest = f["largest"]
        if largest >= self.pn:
            return []                            # names a number never sent: ignored
        for lo, hi in f["ranges"]:
            if hi - lo < len(self.flights):
                for p in range(lo, hi + 1):
                    if p in self.flights:
                        acked.append(p)
            else:
                acked += [p for p in self.flights if lo <= p <= hi]
            for p in [p for p in self.unacked_tags if lo <= p <= hi]:
                del self.unacked_tags[p]
        if self.acked_largest is None or largest > self.acked_largest:
            self.acked_largest = largest
        sizes = [self.flights[p].size for p in acked]
        if self.search is not None:
            sizes += self.on_ack_sizes(f["ranges"], now)
        if largest in self.flights:
            sample = now - self.flights[largest].time - f["ack_delay_us"] / 1e6
            sample = max(sample, 1e-4)
            if self.srtt is None:
                self.srtt, self.rttvar = sample, sample / 2
            else:
                self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - sample)
                self.srtt = 0.875 * self.srtt + 0.125 * sample
        if acked:
            self.pto_count = 0
        if self.search is not None and self.search.packets_acked(sizes, self.pn, now):
            self.size_probe = None              # sent before the drop: it raises nothing
            self.probes_gone = {}
            self.lost_sizes = {}
            self.event("black_hole", self.pn)
        stream_end = 0
        for p in acked:
            fl = self.flights.pop(p)
            if fl.stream or fl.pieces or fl.trial:
                self.acked_bytes_packet = True   # §4.1: a REFUSED in this reply counts
            if fl.stream:
                self.need_stream = False
            if fl.response is not None and fl.response == self.response:
                self.response = None             # §6: RESPONSE until a packet carrying it is ACKed
            if self.force4 and p >= self.lost_base_pn:
                self.force4 = False              # §2: a reply acknowledged a packet after LOST
            for _, end in fl.pieces:
                stream_end = max(stream_end, end)
        if stream_end > self.stored_off():
            self.acked_pending.append((now, stream_end))
        if f["stream_unknown"] and not self.refused and largest >= self.rebind_pn:
            # §4: bind again and resend every byte from the stored mark
            self.need_stream = True
            self.rebind_pn = self.pn
            self.add_resend(self.stored_off(), self.sent_end)
            self.acked_pending = []
            self.event("stream_unknown", largest)
        # loss detection (local choice)
        srtt = self.srtt if self.srtt is not None else INITIAL_RTT
        for p in sorted(self.flights):
            if p >= largest:
                break
            if p + 3 <= largest or now - self.flights[p].time > 1.125 * srtt + 0.002:
                self.declare_lost(p)
        p = self.size_probe
        if p is not None and p.pn < largest and (
                p.pn + 3 <= largest or now - p.time > 1.125 * srtt + 0.002):
            self.size_probe_lost(now)
        return acked

    def on_ack_sizes(self, ranges, now):
        """§5.1: the size probe an ACK covers (or one taken for lost, late) raises the size
        in use.  Returns its size and those of packets taken for lost that the ACK covers,
        for the black-hole rule (a packet above the base acknowledged)."""
        got = []
        p = self.size_probe
        for lo, hi in ranges:
            if p is not None and lo <= p.pn <= hi:
                self.size_probe = None
                got.append((p.pn, p.size))
            for pn in [x for x in self.probes_gone if lo <= x <= hi]:
                got.append((pn, self.probes_gone.pop(pn)))
        for pn, size in got:
            self.search.probe_acked(pn, size, now)
            self.event("size_probe_acked", size)
        # a packet taken for lost and acknowledged late did pass (a PTO that fired early
        # declares all in flight lost): the black-hole rule counts it as acknowledged
        late = [pn for pn in self.lost_sizes if any(lo <= pn <= hi for lo, hi in ranges)]
        return [size for _, size in got] + [self.lost_sizes.pop(pn) for pn in late]

    def on_accept(self, f, now):
        if self.offer is None or f["epoch"] != self.offer[0] or \
                f["echo"] != self.offer[2][:pl.ECHO_BYTES]:
            return                               # wire.md §6.9: not an answer to our offer
        n, eph, pub = self.offer
        if n != self.epoch + 1:
            return
        try:
            dh = pl.x25519(eph, f["public"])
        except pl.ZeroOutput:
            return                               # crypto.md §9: ignored
        self.secrets[n] = pl.next_epoch_secret(self.secrets[n - 1], dh, pub, f["public"], n)
        self.offer = None                        # the ephemeral secret is forgotten
        self.wipe_at.append((now + OLD_REPLY_KEEP, self.epoch))
        self.epoch = n
        self.epoch_first_pn = self.pn
        self.epoch_started = now
        self.epoch_sent = 0
        self.unacked_tags = {}
        self.epochs_reached = max(self.epochs_reached, n)
        # §4.2: with records not yet stored, a packet of epoch 1 goes at once (the receiver
        # hands nothing over before one opens); during a refusal it keeps none anyway
        self.proof_due = n == 1 and not self.done() and not self.refused and not self.asking
        self.event("epoch", n)

    def on_lost(self, f, now):
        """§7: honour a LOST only when it names a packet of the current epoch >= 1 that
        no ACK covered and whose tag begins with the echoed bytes."""
        p = pl.recover_pn(self.pn - 1, f["pn_trunc"], f["pn_len"])
        ok = (self.epoch >= 1 and f["epoch_field"] == pl.epoch_field(self.epoch)
              and p >= self.epoch_first_pn and self.unacked_tags.get(p) == f["tag"])
        if not ok:
            self.lost_ignored += 1
            self.event("lost_ignored", p)
            return
        self.lost_honoured += 1
        self.event("lost", p)
        self.epoch = 0
        self.epoch_first_pn = self.pn
        self.epoch_sent = 0
        self.secrets = {0: self.e0}
        self.reply_keys = {}
        self.wipe_at = []
        self._new_offer(1)
        self.unacked_tags = {}
        self.flights.clear()
        self.size_probe = None                  # its ACK could not come: the run is new
        self.proof_due = False
        self.force4 = True
        self.lost_base_pn = self.pn
        self.need_stream = True
        self.rebind_pn = self.pn
        self.resend = []
        self.sent_end = self.stored_off()
        self.acked_pending = []
        self.response = None

    # ---------------------------------------------------------------- loop
    def step(self, timeout=None):
        now = time.monotonic()
        self.timers(now)
        self.send_some(now)
        wait = self.next_deadline(now) - now
        if timeout is not None:
            wait = min(wait, timeout)
        r, _, _ = select.select([self.sock], [], [], max(0.0, wait))
        if r:
            self.receive(time.monotonic())

    def run_until(self, cond, deadline):
        while time.monotonic() < deadline:
            if cond():
                return True
            self.step(max(0.0, min(0.05, deadline - time.monotonic())))
        return cond()


def main():
    ap = argparse.ArgumentParser(description="pure-link v1 independent sender")
    ap.add_argument("--to", required=True)
    ap.add_argument("--secret", required=True)
    ap.add_argument("--peer", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--source", default="out")
    ap.add_argument("--shape", type=int, default=0)
    ap.add_argument("--epoch-packets", type=int, default=EPOCH_PACKETS_DEFAULT)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--pace", type=float, metavar="PPS", help="at most PPS packets a second")
    ap.add_argument("--resume", action="store_true",
                    help="ask the receiver where the source stands and skip as many records "
                         "of the input (protocol.md §4.3)")
    ap.add_argument("--framed", action="store_true",
                    help="records from stdin, each a 4-byte big-endian length and its bytes")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    host, port = a.to.rsplit(":", 1)
    records = read_framed(sys.stdin.buffer) if a.framed else [open(p, "rb").read()
                                                                for p in a.files]
    s = Sender((host, int(port)), bytes.fromhex(a.peer), bytes.fromhex(a.secret), records,
               a.source.encode(), a.input.encode(), a.shape, a.epoch_packets,
               log=(lambda m: sys.stderr.write(m + "\n")) if a.verbose else None,
               pace_pps=a.pace, resume=a.resume)
    try:
        ok = s.run_until(lambda: s.done() or s.failed(), time.monotonic() + a.timeout)
    except KeyboardInterrupt:
        sys.stderr.write("sender: stopped by SIGINT, %d/%d records stored\n" % (s.S, s.n))
        sys.exit(130)
    if s.cut_off:
        sys.stderr.write("sender: cut off by the receiver (REFUSED reason 5: %s); stopping: "
                         "%d of %d records stored by this run\n" % (
                             pl.REFUSED_REASON_NAMES[pl.REFUSED_CUT_OFF], s.S, s.n))
        sys.exit(EXIT_CUT_OFF)
    if s.resume_refused:
        sys.stderr.write("sender: the receiver holds %d records of source %s, the input has "
                         "only %d: not the input it holds\n" % (s.resumed_at, a.source, s.n))
        sys.exit(3)
    sys.stderr.write("sender: %d/%d records stored%s, %d packets, epoch %d, datagrams %d B\n" % (
        s.S, s.n, "" if s.resumed_at is None else " (resumed at %d)" % s.resumed_at, s.pn,
        s.epoch, s.datagram_size()))
    sys.exit(0 if ok else 1)


def read_framed(f):
    """Records as `pure-link send --framed` reads them: a 4-byte big-endian length, bytes."""
    data = f.read()
    out, pos = [], 0
    while pos + 4 <= len(data):
        ln = struct.unpack_from(">I", data, pos)[0]
        if pos + 4 + ln > len(data):
            break
        out.append(data[pos + 4:pos + 4 + ln])
        pos += 4 + ln
    if pos != len(data):
        sys.exit("sender: --framed input ends inside a record")
    return out


if __name__ == "__main__":
    main()
