#!/usr/bin/env python3
"""receiver.py -- an independent pure-link version 1 RECEIVER over UDP, written from
spec/ alone (protocol.md, wire.md, crypto.md).  Codec and keys are in pl_spec.py.

Usage:
  python3 tests/interop/receiver.py --port P --secret HEX64 --peer HEX64 --records N \
      --out FILE.json [--timeout SECONDS] [--host 127.0.0.1] [--keylog FILE] [-v]

--secret  the receiver's static X25519 secret key (32 B hex)
--peer    the one wired sender static public key; wired as source '*' (any source);
          the host accepts any input name and shape with its stored mark of the run (or,
          for a run that asks where to resume, protocol.md §4.3, the records of the
          source it holds) and stores each record at once (in memory, or --store DIR).

Exit when N records are stored and ~0.5 s have passed since the last STORED was sent (or
at --timeout, default 20 s, or on SIGTERM); write FILE.json; exit 0 if all N records were
stored.
"""

import argparse
import bisect
import hashlib
import json
import os
import select
import signal
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pl_spec as pl  # noqa: E402
import rx_store  # noqa: E402

# Local choices (protocol.md §10 "Local choices"), each within what the spec allows.
ACK_DELAY = 0.005                  # §5: max ack delay, local (must be <= 25 ms)
ACK_AFTER_PACKETS = 2              # §5: ACK after 2 ack-eliciting packets
RUN_MEMORY = 16 * 1024 * 1024 + 64 * 1024   # §4.2: per run, >= 16 MiB + 8 B
IDLE_TIME = 60.0                   # §8
OLD_EPOCH_KEEP = 10.0              # §3: previous epoch's keys kept 10 s (spec value)
X25519_RATE = 4.0                  # §3: per peer per second, burst 4 (local)
X25519_BURST = 4.0
LOST_INTERVAL = 0.1                # §7: at most one LOST per 100 ms per (run, address) (local)
LOST_TRIGGER_LEAST = 64            # §7: spec value
QUIET_AFTER_STORED = 0.5           # brief: exit after ~0.5 s quiet after the last STORED
REPLY_PN_BYTES = 4                 # wire.md §5: a receiver writes all 4 B
KEY_PACKETS_MOST = 1 << 23         # crypto.md §10, protocol.md §3: packets sealed under a key
KEY_PACKETS_KEPT = 1 << 16         # protocol.md §3: the last 2^16 under a key are kept for
                                   # the exchange; for replies (local choice, crypto.md §10
                                   # names the need): only replies carrying an ACCEPT


def random_run():
    """A 64-bit random run id, never 0 (protocol.md §1 says so of sender runs; we apply
    the same to reply runs)."""
    while True:
        r = struct.unpack(">Q", os.urandom(8))[0]
        if r:
            return r


class PnRanges:
    """Packet numbers received in one run: disjoint inclusive ranges, ascending, pruned
    to the replay window (protocol.md §2).  Gives the replay check and the ACK ranges."""

    def __init__(self):
        self.los = []          # range starts, ascending
        self.his = []          # range ends

    def __contains__(self, p):
        i = bisect.bisect_right(self.los, p) - 1
        return i >= 0 and self.his[i] >= p

    def add(self, p):
        i = bisect.bisect_right(self.los, p) - 1       # range starting at or below p
        if i >= 0 and self.his[i] >= p:
            return
        if i >= 0 and self.his[i] == p - 1:
            self.his[i] = p
        else:
            i += 1
            self.los.insert(i, p)
            self.his.insert(i, p)
        if i + 1 < len(self.los) and self.los[i + 1] == self.his[i] + 1:   # join the next
            self.his[i] = self.his[i + 1]
            del self.los[i + 1], self.his[i + 1]

    def prune(self, floor):
        """Forget numbers below floor (outside the window)."""
        while self.los and self.his[0] < floor:
            del self.los[0], self.his[0]
        if self.los and self.los[0] < floor:
            self.los[0] = floor

    def newest(self, count):
        """Up to count ranges, newest (highest) first, as (lo, hi)."""
        n = len(self.los)
        return [(self.los[i], self.his[i]) for i in range(n - 1, max(-1, n - 1 - count), -1)]


class Stream:
    """The record stream of one bound run (protocol.md §4, wire.md §7).

    pos      the parse boundary: the offset of the first record not yet handed over.
             Because the host stores every record at once, this is also the delivered
             offset D (wire.md §7) and the stored mark's offset (protocol.md §4.2).
    buf      the bytes [pos, pos + len(buf)) that are contiguous from pos.
    pieces   out-of-order bytes beyond the contiguous end: start offset -> bytes.
    """

    def __init__(self, base_record, base_offset, source, input_name, shape, host_mark):
        self.source, self.input, self.shape = source, input_name, shape
        self.next_record = base_record       # number of the record that starts at pos
        self.pos = base_offset
        self.buf = bytearray()
        self.pieces = {}
        self.highest = base_offset           # highest byte received + 1
        self.host_mark = host_mark           # records the host already has (here 0)
        self.delivered_records = 0           # in this binding (for the credit average)
        self.delivered_bytes = 0             # prefix included
        self.broken = False                  # wire.md §7: prefix above 16 MiB

    def contiguous_end(self):
        return self.pos + len(self.buf)

    def held(self):
        """protocol.md §4.2: bytes held from the stored mark to the highest byte received."""
        return max(0, self.highest - self.pos)

    def insert(self, offset, data):
        """Add record-stream bytes at a full offset.  Bytes below what is already held
        are duplicates; bytes beyond the run's memory are not accepted (§4.2).
        Returns the number of new bytes taken."""
        end = offset + len(data)
        limit = self.pos + RUN_MEMORY
        lo = max(offset, self.contiguous_end())
        hi = min(end, limit)
        if lo >= hi:
            return 0
        chunk = data[lo - offset:hi - offset]
        self.highest = max(self.highest, hi)
        if lo == self.contiguous_end():
            self.buf += chunk
            self._merge()
        else:
            old = self.pieces.get(lo)
            if old is None or len(old) < len(chunk):
                self.pieces[lo] = chunk
        return len(chunk)

    def move_up(self, base_record, base_offset):
        """protocol.md §4: a STREAM on a bound run whose base_record is beyond the next
        record to hand over moves delivery up to it (never back): the sender holds nothing
        before its base.  Bytes below the new base are dropped."""
        if base_record <= self.next_record or base_offset < self.pos:
            return False
        cut = base_offset - self.pos
        self.buf = self.buf[cut:] if cut < len(self.buf) else bytearray()
        self.pos = base_offset
        self.next_record = base_record
        kept = {}
        for start, piece in self.pieces.items():
            if start + len(piece) > base_offset:
                kept[max(start, base_offset)] = piece[max(0, base_offset - start):]
        self.pieces = kept
        self.highest = max(self.highest, base_offset)
        self._merge()
        return True

    def _merge(self):
        """Move out-of-order pieces that now touch the contiguous end into buf."""
        while self.pieces:
            cend = self.contiguous_end()
            ready = [s for s in self.pieces if s <= cend]
            if not ready:
                return
            for s in sorted(ready):
                piece = self.pieces.pop(s)
                cend = self.contiguous_end()
                if s + len(piece) > cend:
                    self.buf += piece[cend - s:]

    def take_records(self):
        """Parse whole records from the boundary (wire.md §7): varint length, bytes.
        Returns a list of (record number, bytes) to hand to the host, in order."""
        out = []
        while not self.broken:
            pv = pl.varint_peek(self.buf, 0)
            if pv is None:
                break
            length, plen = pv
            if length > pl.RECORD_MOST:
                # wire.md §7: malformed prefix -- stop reading this run's stream
                self.broken = True
                break
            if len(self.buf) < plen + length:
                break
            rec = bytes(self.buf[plen:plen + length])
            del self.buf[:plen + length]
            self.pos += plen + length
            number = self.next_record
            self.next_record += 1
            self.delivered_records += 1
            self.delivered_bytes += plen + length
            if number >= self.host_mark:     # §4.2: never hand over below the host's mark
                out.append((number, rec))
        return out

    def stored_count(self):
        """STORED 'stored': records of the run stored = the next record number to store.
        While the parse is below the host's stored mark (a rebind from a base the host has
        passed) this says the parse position, not the host's mark: a sender that heard the
        mark would let go of records whose bytes the parse still needs to find the next
        record's start, and would not send them again (nor a STREAM moving the base up),
        so the run would stall.  The records below the mark are skipped, not handed over."""
        return self.next_record

    def credit(self):
        """protocol.md §4.2 'Credit': room / average, clamped to 1..65,536; 1,024 before
        any delivery.  room = run memory - bytes held; average = bytes per record
        (prefix included) of all records delivered in this binding.  Integer division
        (the spec does not say how to round; floor is assumed)."""
        if self.delivered_records == 0:
            return pl.CREDIT_BEFORE_DELIVERY
        room = max(0, RUN_MEMORY - self.held())
        c = room * self.delivered_records // self.delivered_bytes if self.delivered_bytes else \
            pl.CREDIT_MOST
        return min(pl.CREDIT_MOST, max(pl.CREDIT_LEAST, c))


class Run:
    """Receiver state of one sender run (one run slot, protocol.md §8)."""

    def __init__(self, run_id, now):
        self.run = run_id
        self.reply_run = random_run()  # protocol.md §1: a reply run of its own per build
        self.created = now
        self.last_heard = now
        # Epochs (protocol.md §3, crypto.md §6-§7)
        self.secrets = {}            # epoch -> E(n) (epoch 0 is filled at creation)
        self.data_keys = {}          # epoch -> PacketKey (sender -> receiver)
        self.reply_keys = {}         # epoch -> PacketKey (receiver -> sender)
        self.current = 0             # the highest epoch a packet has been received in
        self.wipes = []              # [(deadline, epoch)] the previous epoch, to wipe
        self.entered = []            # [(epoch, time)] each epoch entered by a packet
        self.sealed = {}             # epoch -> replies sealed under this build's reply key
        self.accepted = None         # (epoch, offer_public, accept_public) last accepted
        self.accept_queued = False   # ACCEPT to put into the next reply
        self.live = False            # §4.2: a packet of epoch >= 1 has opened
        # Packet numbers (protocol.md §2, wire.md §5)
        self.largest = None
        self.largest_time = now
        self.received = PnRanges()   # packet numbers in the replay window
        # Acknowledgements (§5)
        self.unacked_eliciting = 0
        self.ack_due = None
        # Replies
        self.reply_pn = 0
        # Address (§6)
        self.addr = None
        self.validated = False
        self.token = None
        self.bytes_in = 0
        self.bytes_out = 0
        self.amplification_blocked = False
        self.amp = None              # this address's accounting record (results)
        # Stream (§4)
        self.stream = None
        self.unbound_dropped = False # §4: record bytes dropped while unbound
        self.refused = 0             # §4.1: the reason the host refused the stream
        self.refuse_pending = False  # a turn to answer with REFUSED
        self.turns = []              # times of packets carrying a refused stream's bytes
        self.refusal = None          # its record in the results
        self.asked = False           # §4.3: bound by an ask (numbers places in the input)
        # Memo (§9): a restored run is not proven live; numbers above `recorded` are new
        self.restored = False
        self.recorded = None
        self.restored_epoch = None


class Receiver:
    def __init__(self, sock, secret, peer_public, goal, verbose=False, keylog=None,
                 inputs=None, store=None, memo=None, die_at_epoch=None):
        self.sock = sock
        self.die_at_epoch = die_at_epoch
        self.inputs = inputs         # {input name: shape}; None accepts every input
        self.store = store           # rx_store.RecordStore, or None (in memory)
        # protocol.md §4.3: where each source stands, beside the store (in memory without)
        self.sources = rx_store.SourceBook(store.directory if store is not None else None)
        self.resume_answers = []     # (run, source, m) per answer given in this life
        self.memo = memo             # rx_store.Memo, or None
        self.secret = secret
        self.public = pl.x25519_public(secret)
        self.peer = peer_public
        self.peer_kid = pl.key_id(peer_public)
        # crypto.md §3: an all-zero S -> the receiver refuses to wire the peer
        self.e0 = pl.epoch0_secret(pl.static_shared(secret, peer_public))
        self.runs = {}                                 # run id -> Run (slots of our peer)
        self.goal = goal
        self.verbose = verbose
        self.keylog = keylog
        self.x_tokens = X25519_BURST
        self.x_last = None
        self.last_lost = {}                            # (run, address) -> time of the last LOST
        # results
        self.records = []                              # (run, number, bytes)
        self.opened = 0
        self.failed = 0
        self.sizes = {}                                # datagram bytes -> packets opened
        self.opened_by_epoch = {}
        self.epoch1_secret = None
        self.last_stored_sent = None                   # time of the last reply with STORED
        self.last_stored_total = 0                     # records stored when it was sent
        self.counters = {}
        self.notes = []
        self.amp_log = []                              # one per (run, address) taken
        self.refusals = []                             # per refused run: reason, turn times
        self.memo_restored = 0
        if memo is not None:
            for e in memo.restored():
                self.restore(e, time.monotonic())

    # ------------------------------------------------------------------ helpers
    def count(self, name, n=1):
        self.counters[name] = self.counters.get(name, 0) + n

    def log(self, msg):
        if self.verbose:
            sys.stderr.write("[receiver %.3f] %s\n" % (time.monotonic(), msg))

    def note(self, msg):
        if msg not in self.notes:
            self.notes.append(msg)
            self.log("note: " + msg)

    def write_keylog(self, run, epoch, secret):
        if self.keylog:
            with open(self.keylog, "a") as f:
                f.write(pl.keylog_line(self.peer, self.public, run.run, epoch, secret))

    def secret_of(self, run, epoch):
        return run.secrets.get(epoch)

    def data_key(self, run, epoch):
        """crypto.md §7 data key of (run, epoch), derived once per epoch."""
        k = run.data_keys.get(epoch)
        if k is None and epoch in run.secrets:
            k = pl.data_key(run.secrets[epoch], self.peer, self.public, run.run, epoch)
            run.data_keys[epoch] = k
        return k

    def reply_key(self, run, epoch):
        """crypto.md §7 reply key of (run, our reply run, epoch)."""
        k = run.reply_keys.get(epoch)
        if k is None and epoch in run.secrets:
            k = pl.reply_key(run.secrets[epoch], self.peer, self.public, run.run,
                             run.reply_run, epoch)
            run.reply_keys[epoch] = k
        return k

    def x25519_allowed(self, now):
        """protocol.md §3: X25519 at most 4 times per second per peer, burst 4."""
        if self.x_last is not None:
            self.x_tokens = min(X25519_BURST,
                                self.x_tokens + max(0.0, now - self.x_last) * X25519_RATE)
        self.x_last = now
        if self.x_tokens >= 1.0:
            self.x_tokens -= 1.0
            return True
        return False

    def stored_total(self):
        return self.store.count if self.store is not None else len(self.records)

    def restore(self, e, now):
        """memo.md "Loading": a run slot in epoch n with E(n), unbound, not proven live,
        decoding against the recorded packet number, with a new reply run."""
        r = Run(e["run"], now)
        n = e["epoch"]
        r.secrets[n] = e["secret"]
        if n == 1:
            r.secrets[0] = self.e0       # §9: a repeated epoch-0 OFFER gets its ACCEPT again
        r.current = n
        r.accepted = (n, e["offer"], e["accept"])
        r.largest = e["pn"]
        r.restored = True
        r.recorded = e["pn"]
        r.restored_epoch = n
        self.runs[r.run] = r
        self.memo_restored += 1
        self.count("memo_runs_restored")

    @staticmethod
    def way_back(run, pn):
        """§9: a restored run not yet proven live takes packets of an older epoch only
        when their number is above the one recorded with its epoch (replays are not)."""
        return run.restored and not run.live and pn > run.recorded

    # ------------------------------------------------------------------ run slots
    def take_slot(self, run_id, now):
        """protocol.md §8: a packet of a new run takes the slot of the peer's
        longest-quiet run if that one is idle; otherwise a new slot while fewer than 64
        are held; a 65th live slot -> drop without an answer (returns None)."""
        if self.runs:
            quiet = min(self.runs.values(), key=lambda r: r.last_heard)
            if now - quiet.last_heard >= IDLE_TIME:
                del self.runs[quiet.run]
                self.count("slots_reused")
                return self._new_run(run_id, now)
        if len(self.runs) < pl.RUN_SLOTS_PER_PEER:
            return self._new_run(run_id, now)
        self.count("slots_full_dropped")
        return None

    def _new_run(self, run_id, now):
        r = Run(run_id, now)
        r.secrets[0] = self.e0
        self.runs[run_id] = r
        return r

    # ------------------------------------------------------------------ input
    def handle_datagram(self, data, addr, now):
        self.count("datagrams")
        # wire.md §2-§3: the clear header and the size rules
        try:
            h = pl.parse_header(data)
        except pl.Malformed as e:
            self.count("malformed_header_" + e.reason)
            self.failed += 1
            return
        if h.reply:
            # A receiver takes sender packets only (R = 0).
            self.count("reply_packet_ignored")
            self.failed += 1
            return
        # crypto.md §4: the key id names at most one wired key; ours is the only one.
        if h.key_id != self.peer_kid:
            self.count("unknown_key_id")
            self.failed += 1
            return
        run = self.runs.get(h.run)
        body = data[h.length:]
        if run is None:
            if h.E != 0:
                # protocol.md §7: a wired key, no state for the run, epoch != 0
                self.count("no_state_for_run")
                self.failed += 1
                self.maybe_lost(h, data, addr, now)
                return
            # Epoch 0 of a run never seen: keys from wiring alone (wire.md §4 "Why").
            epoch = 0
            key = pl.data_key(self.e0, self.peer, self.public, h.run, 0)
            pn = pl.recover_pn(None, h.pn_trunc, h.pn_len)
        else:
            epoch = pl.recover_epoch(h.E, run.current)       # wire.md §4
            key = self.data_key(run, epoch)
            pn = pl.recover_pn(run.largest, h.pn_trunc, h.pn_len)   # wire.md §5
            if key is None and epoch == 0 and self.way_back(run, pn):
                # §9: a restored run in epoch m >= 2 holds no epoch-0 key; an epoch-0
                # packet above the recorded number (the sender after LOST) is opened under
                # a key derived aside, and rebuilds the run below if it authenticates.
                key = pl.data_key(self.e0, self.peer, self.public, h.run, 0)
            if key is None:
                self.count("no_key_for_epoch")
                self.failed += 1
                if run.restored and not run.live and epoch >= 1 and \
                        epoch == run.current - 1 and pn > run.recorded:
                    self.maybe_lost(h, data, addr, now)       # §9: the way back for m >= 2
                return
        # crypto.md §8: open with the header as associated data, before any use
        plaintext = key.open(h.raw, body, pn)
        if plaintext is None:
            self.count("dropped_auth")
            self.failed += 1
            return
        self.opened += 1
        self.sizes[len(data)] = self.sizes.get(len(data), 0) + 1   # §5.1: any size to 1,452 B
        k = str(epoch)
        self.opened_by_epoch[k] = self.opened_by_epoch.get(k, 0) + 1

        # protocol.md §2: replay window of 2,048 below the largest, packet age 2^19
        if run is not None and run.largest is not None:
            if pn in run.received:
                self.count("replay_dropped")
                return
            if run.largest - pn >= pl.REPLAY_WINDOW or run.largest - pn >= pl.PN_AGE_MOST:
                self.count("too_old_dropped")
                return
        # wire.md §6: the payload is checked whole before any frame acts
        try:
            frames = pl.decode_frames(plaintext, reply=False)
        except pl.Malformed as e:
            self.count("malformed_payload_" + e.reason)
            return

        if run is not None and epoch == 0 and self.way_back(run, pn) and not (
                run.restored_epoch == 1 and
                all(f["public"] == run.accepted[1] for t, f in frames if t == pl.OFFER)):
            # §9: an authentic epoch-0 packet above the recorded number that does not
            # repeat the OFFER of a restored epoch 1 (a new OFFER, after LOST): the run is
            # built again in its slot, with a new reply run.
            self.log("run %016x: restored in epoch %d, built again from epoch 0" % (
                h.run, run.restored_epoch))
            self.count("restored_run_rebuilt")
            del self.runs[h.run]
            run = self._new_run(h.run, now)
            run.data_keys[0] = key
        if run is None:
            run = self.take_slot(h.run, now)
            if run is None:
                return
            self.log("new run %016x from %s" % (h.run, addr))
            self.write_keylog(run, 0, self.e0)
            run.data_keys[0] = key

        self.process(run, h, epoch, pn, frames, len(data), addr, now)

    def process(self, run, h, epoch, pn, frames, size, addr, now):
        """protocol.md §2-§6 for one authentic, fresh, well-formed sender packet."""
        run.last_heard = now
        prev_largest = run.largest
        # Packet number bookkeeping and ordering (§2, §5)
        highest = prev_largest is None or pn > prev_largest
        out_of_order = (prev_largest is not None and pn != prev_largest + 1) or \
            (prev_largest is None and pn != 0)
        run.received.add(pn)
        if highest:
            run.largest = pn
            run.largest_time = now
            run.received.prune(pn - pl.REPLAY_WINDOW + 1)
        if out_of_order:
            self.count("out_of_order")

        # Address (§6): taken from the first authentic packet; moves only on the
        # highest-numbered authentic packet; a new address starts unvalidated.
        if run.addr is None or (addr != run.addr and highest):
            if run.addr is not None:
                self.count("address_moved")
                self.log("run %016x moves %s -> %s" % (run.run, run.addr, addr))
            run.addr = addr
            run.validated = False
            run.token = os.urandom(pl.TOKEN_BYTES)
            run.bytes_in = 0
            run.bytes_out = 0
            run.amp = {"run": "%016x" % run.run, "addr": "%s:%d" % addr, "taken": now,
                       "validated": None, "bytes_in": 0, "bytes_out": 0, "replies": 0}
            self.amp_log.append(run.amp)
        if addr == run.addr:
            run.bytes_in += size          # amplification: bytes received from the address
            run.amplification_blocked = False

        # Epochs (§3): reply in the highest epoch received; keep the previous epoch's keys
        # 10 s after the first packet of the new one.
        if self.way_back(run, pn) and epoch < run.current:
            run.current = epoch          # §9: restored in epoch 1, the sender still in 0
        if epoch > run.current:
            self.enter_epoch(run, epoch, now)
        elif epoch < run.current:
            self.count("opened_in_previous_epoch")   # a late packet: its keys still held
        if epoch >= 1 and not run.live:
            run.live = True               # §4.2: the run is proven live
            self.take_source(run)

        # Frames.  STREAM frames act first so that record bytes in the same packet find
        # the binding whatever the frame order (the spec does not fix an order).
        # §4.3: a STREAM in a packet that carries no record bytes asks where to resume
        asks = not any(t in (pl.RECORDS, pl.RECORD) for t, _ in frames)
        for t, f in frames:
            if t == pl.STREAM:
                self.on_stream(run, f, asks)
        if run.refused and any(t in (pl.STREAM, pl.RECORDS, pl.RECORD) for t, _ in frames):
            run.refuse_pending = True                 # §4.1: a turn
            run.turns.append(now)
        elif run.refused:
            run.refusal["others"] += 1                # packets of a refused run, not turns
        for t, f in frames:
            if t in (pl.RECORDS, pl.RECORD):
                self.on_record_bytes(run, f)
            elif t == pl.OFFER:
                self.on_offer(run, epoch, f, now)
            elif t == pl.RESPONSE:
                if (not run.validated and addr == run.addr and run.token is not None
                        and f["token"] == run.token):
                    run.validated = True
                    run.amp["validated"] = now
                    self.log("run %016x address %s validated" % (run.run, addr))
            # PING and PADDING: nothing beyond the ACK.
        self.deliver(run)

        # §5: every sender packet is ack-eliciting.  ACK after 2, at once out of order,
        # else within the ack delay.  An ACCEPT goes out at once too.
        run.unacked_eliciting += 1
        if run.unacked_eliciting >= ACK_AFTER_PACKETS or out_of_order or run.accept_queued \
                or prev_largest is None:
            self.send_reply(run, now)
        elif run.ack_due is None:
            run.ack_due = now + ACK_DELAY

    def enter_epoch(self, run, epoch, now):
        """protocol.md §3 "Old keys", crypto.md §6 "Erasure": the receiver keeps the keys
        of the previous epoch, and its secret, for 10 s from the first packet of the new
        epoch, then wipes them (epoch 0's too).  Only the previous one: an epoch older than
        that is wiped at once, even when epochs turn faster than every 10 s, so that at most
        two epochs of a run are exposed at any moment."""
        self.log("run %016x enters epoch %d" % (run.run, epoch))
        prev = run.current
        for e in [e for e in run.secrets if e < prev]:
            self.wipe(run, e)
        run.wipes = [(now + OLD_EPOCH_KEEP, prev)] if prev in run.secrets else []
        run.current = epoch
        run.entered.append((epoch, now))
        self.count("epochs_entered")

    def wipe(self, run, e):
        run.secrets.pop(e, None)
        run.data_keys.pop(e, None)
        run.reply_keys.pop(e, None)
        self.count("epochs_wiped")
        self.log("run %016x: epoch %d keys wiped" % (run.run, e))

    def on_stream(self, run, f, asks=False):
        """protocol.md §4, §4.1: bind an unbound run.  Wiring: our one peer may send as
        any source ('*').  Host: accepts any input and shape with its stored mark of the
        run -- or, when the run asks where to resume (§4.3), with m, the records of the
        source it holds durably: the stream then starts at record m, stream offset m."""
        if run.stream is not None:
            s = run.stream
            if (f["source"], f["input"], f["shape"]) != (s.source, s.input, s.shape):
                self.count("stream_changed_on_bound_run")
                self.note("a STREAM with other names/shape arrived on a bound run; ignored")
            elif s.move_up(f["base_record"], f["base_offset"]):
                self.count("stream_moved_up")
            else:
                self.count("stream_repeated")
            return
        # §4.3: a cut-off run is refused with reason 5 at each STREAM of it, every binding
        # (after a restart too: streams.bin keeps the cut-off), its ask included
        reason = pl.REFUSED_CUT_OFF if self.sources.cut(run.run) else \
            self.host_answer(f["input"], f["shape"])
        if reason:
            self.refuse(run, reason)
            return
        run.refused = 0
        if asks:
            if self.store is not None:
                self.store.commit()      # §4.3: the count is of records held durably
            m = self.sources.ask(run.run, f["source"], self.run_mark)
            self.resume_answers.append(("%016x" % run.run,
                                        f["source"].decode(errors="replace"), m))
            self.count("resume_answered")
            run.stream = Stream(m, m, f["source"], f["input"], f["shape"], host_mark=m)
            run.asked = True
            self.take_source(run)
        else:
            self.sources.bound(run.run, f["source"])
            # a run that asked in an earlier build (a restart, a lost slot) binds again with
            # record bytes from its stored mark: its records are still places in the input
            run.asked = run.run in self.sources.asked
            run.stream = Stream(f["base_record"], f["base_offset"], f["source"], f["input"],
                                f["shape"], host_mark=self.run_mark(run.run))
        self.log("run %016x bound: source=%r input=%r shape=%016x base=%d@%d%s" % (
            run.run, f["source"], f["input"], f["shape"], run.stream.next_record,
            run.stream.pos, " (asked where to resume)" if asks else ""))

    def refuse(self, run, reason):
        """§4.1: the run's stream is refused with `reason`; a REFUSED goes in its reply to
        each packet carrying STREAM or record bytes (process)."""
        if run.refused != reason:
            run.refusal = {"run": "%016x" % run.run, "reason": reason, "turns": run.turns,
                           "others": 0}
            self.refusals.append(run.refusal)
            sys.stderr.write("receiver: stream of run %016x refused, reason %d\n" % (
                run.run, reason))
        run.refused = reason

    def cut_off(self, run):
        """§4.3 "The cut-off run is told": a bound run whose source a newer asking run took
        over is refused with reason 5, for good.  The record bytes held for it above its
        mark were neither stored nor reported and are dropped with its stream, so its
        replies carry no STORED."""
        run.stream = None
        self.count("runs_refused_cut_off")
        self.refuse(run, pl.REFUSED_CUT_OFF)

    def take_source(self, run):
        """§4.3: an asking run proven live takes its source over (the earlier runs are cut
        off from then on).  Records they appended since its answer are the host's already:
        the run skips them as records below its stored mark (§4.2)."""
        if not (run.live and run.asked and run.stream is not None):
            return
        if self.store is not None:
            self.store.commit()
        self.sources.owns(run.run)
        for other in list(self.runs.values()):
            if other.stream is not None and self.sources.cut(other.run):
                self.cut_off(other)            # §4.3: told at once, at its next turn
        s = run.stream
        s.host_mark = max(s.host_mark, self.sources.count(s.source, self.run_mark))

    def run_mark(self, run_id):
        """The host's stored mark of a run: one past its highest record stored."""
        if self.store is not None:
            return self.store.mark(run_id)
        return max((n + 1 for r, n, _ in self.records if r == run_id), default=0)

    def host_answer(self, input_name, shape):
        """§4.1: 0 accepts, 1 no input of that name, 2 the input's shape differs."""
        if self.inputs is None:
            return 0
        want = self.inputs.get(input_name)
        if want is None:
            return 1
        return 0 if want == shape else 2

    def on_record_bytes(self, run, f):
        """RECORDS / RECORD (wire.md §6.3-6.4, §7): recover the full offset nearest the
        delivered offset D, keep the bytes within the run's memory."""
        s = run.stream
        if s is None:
            if not run.refused:
                run.unbound_dropped = True            # §4: ACK flag stream unknown from now
            self.count("record_bytes_unbound")
            return
        if s.broken:
            return
        offset = pl.recover_offset(s.pos, f["offset32"])
        got = s.insert(offset, f["data"])
        if got == 0:
            self.count("fragments_without_new_bytes")

    def on_offer(self, run, epoch, f, now):
        """protocol.md §3, crypto.md §6: answer an OFFER for epoch n+1 made under epoch n
        with a fresh key pair and ACCEPT (sealed in the reply epoch)."""
        n1 = f["epoch"]
        offer_pub = f["public"]
        if n1 != epoch + 1:
            self.count("offer_not_next_epoch")
            return
        acc = run.accepted
        if n1 <= run.current:
            # §3: once a packet of epoch n+1 has arrived a repeated OFFER needs nothing
            # (and an OFFER for an epoch at or below the current one can never roll back).
            self.count("offer_epoch_in_use")
            return
        if acc is not None and acc[0] == n1 and acc[1] == offer_pub:
            run.accept_queued = True          # repeated OFFER: same ACCEPT, no key work
            self.count("offer_repeated")
            return
        if epoch != run.current:
            # An OFFER under an older epoch that is not the one just accepted.
            self.count("offer_under_old_epoch")
            return
        if acc is not None and acc[0] == n1 and not (n1 == 1 and not run.live):
            # §3, §4 "Repeated frames": another key for an epoch already answered replaces
            # only an unproven epoch-1 proposal (the sender after LOST); else it is ignored.
            self.count("offer_other_key_ignored")
            return
        prev = run.secrets.get(epoch)
        if prev is None:
            self.count("offer_no_secret")
            return
        if not self.x25519_allowed(now):
            self.count("x25519_rate_limited")
            return
        eph = os.urandom(32)
        accept_pub = pl.x25519_public(eph)
        try:
            dh = pl.x25519(eph, offer_pub)
        except pl.ZeroOutput:
            self.count("offer_zero_dh")          # crypto.md §9: ignored, no epoch made
            return
        finally:
            eph = None                            # "wipe" (best effort in Python)
        secret = pl.next_epoch_secret(prev, dh, offer_pub, accept_pub, n1)
        if acc is not None and acc[0] == n1:
            # A new offer (new key) for epoch 1 of a run not proven live: the new answer
            # replaces the old proposal (§3).
            self.count("offer_replaced")
        if self.memo is not None:
            # §9: ACCEPT only after the memo holds the new epoch durably
            self.memo.record(self.peer, run.run, n1, secret, offer_pub, accept_pub,
                             run.largest or 0,
                             lambda r: r not in self.runs or
                             now - self.runs[r].last_heard >= IDLE_TIME)
            if n1 == self.die_at_epoch:
                # test knob: die as kill -9 would, after the memo holds the epoch durably
                # and before its ACCEPT goes (the window protocol.md §9 gives a way back)
                os.kill(os.getpid(), signal.SIGKILL)
        run.secrets[n1] = secret
        run.data_keys.pop(n1, None)
        run.reply_keys.pop(n1, None)
        run.accepted = (n1, offer_pub, accept_pub)
        run.accept_queued = True
        self.count("epochs_derived")
        self.log("run %016x: epoch %d derived" % (run.run, n1))
        if n1 == 1 and self.epoch1_secret is None:
            self.epoch1_secret = secret.hex()
        self.write_keylog(run, n1, secret)

    def deliver(self, run):
        """protocol.md §4.2: hand records over in order once the run is live; the host
        stores each at once (in memory)."""
        s = run.stream
        if s is None or not run.live:
            return
        if self.sources.cut(run.run):
            # §4.3: a later run of the source asked where to resume and was proven live;
            # this one appends nothing more: a record of it handed over is refused (take_source
            # refuses every bound run it cuts off, so this guards the rule only)
            self.count("cut_off_deliveries")
            self.cut_off(run)
            return
        got = s.take_records()
        for number, rec in got:
            if self.store is not None:
                self.store.append(run.run, number, rec)
            else:
                self.records.append((run.run, number, rec))
        if got and self.store is not None:
            self.store.commit()          # §4.2: STORED only once the host's write is durable
        if s.broken:
            self.note("run %016x: record prefix above 16 MiB; stream reading stopped" % run.run)

    # ------------------------------------------------------------------ LOST
    def maybe_lost(self, h, data, addr, now):
        """protocol.md §7: MAY answer with LOST -- only a datagram >= 64 B, at most one
        per 100 ms per (run, address), sealed in epoch 0 with the reply key of (peer, run)
        under a fresh random reply run with packet number 0 (1 B), echoing the trigger's
        packet number and the first 8 bytes of its tag."""
        key_ = (h.run, addr)
        if len(data) < LOST_TRIGGER_LEAST or now - self.last_lost.get(key_, -1e9) < LOST_INTERVAL:
            return
        self.last_lost[key_] = now
        fresh = random_run()
        key = pl.reply_key(self.e0, self.peer, self.public, h.run, fresh, 0)
        header = pl.reply_header(0, h.run, fresh, 0, 1)
        pkt = key.seal(header, pl.enc_lost(h.E, h.pn_trunc, h.pn_len, data[-16:]), 0)
        self.sock.sendto(pkt, addr)
        self.count("lost_sent")
        self.log("LOST for run %016x field %d to %s (%d B)" % (h.run, h.E, addr, len(pkt)))

    # ------------------------------------------------------------------ replies
    def ack_frame(self, run, now):
        """wire.md §6.10: ranges newest first, at most 33."""
        ranges = run.received.newest(pl.ACK_RANGES_MOST + 1)
        delay_us = max(0, int((now - run.largest_time) * 1e6))
        return pl.enc_ack(ranges, delay_us, run.stream is None and run.unbound_dropped and
                          not run.refused)

    def send_reply(self, run, now):
        """Build, seal and send one reply of the run: ACK, STORED, ACCEPT, CHALLENGE.
        Sealed in the highest epoch a packet was received in (§3), with 4 B packet
        numbers (wire.md §5), within the 3x amplification limit before validation (§6)."""
        run.ack_due = None
        if run.largest is None or run.addr is None:
            return
        frames = [self.ack_frame(run, now)]
        stored = None
        if run.stream is not None:
            stored = run.stream.stored_count()
            frames.append(pl.enc_stored(stored, run.stream.credit()))
        accept_sent = False
        if run.accept_queued and run.accepted is not None:
            n1, offer_pub, accept_pub = run.accepted
            frames.append(pl.enc_accept(n1, offer_pub[:pl.ECHO_BYTES], accept_pub))
            accept_sent = True
        if run.refuse_pending:
            frames.append(pl.enc_refused(run.refused))
        if not run.validated:
            frames.append(pl.enc_challenge(run.token))
        key = self.reply_key(run, run.current)
        if key is None:
            self.count("no_reply_key")
            return
        sealed = run.sealed.get(run.current, 0)
        if sealed >= KEY_PACKETS_MOST or (sealed >= KEY_PACKETS_MOST - KEY_PACKETS_KEPT
                                          and not accept_sent):
            # crypto.md §10: no more than 2^23 replies under one key; until the sender's
            # next epoch only an ACCEPT (room kept for it, as the sender keeps its last
            # 2^16 packets for the OFFER) goes, then nothing.
            self.count("reply_key_spent")
            return
        header = pl.reply_header(run.current, run.run, run.reply_run, run.reply_pn,
                                 REPLY_PN_BYTES)
        pkt = key.seal(header, b"".join(frames), run.reply_pn)
        if len(pkt) > pl.DATAGRAM_BASE:
            # §5.1: a reply never exceeds the base (every reply fits: at most 650 B)
            self.count("reply_too_long")
            return
        if not run.validated and run.bytes_out + len(pkt) > pl.AMPLIFICATION * run.bytes_in:
            # §6: wait for more bytes from the address (or its RESPONSE)
            run.amplification_blocked = True
            self.count("amplification_blocked")
            return
        try:
            self.sock.sendto(pkt, run.addr)
        except OSError as e:
            self.count("send_error")
            self.note("sendto failed: %s" % e)
            return
        run.reply_pn += 1
        run.sealed[run.current] = sealed + 1
        run.bytes_out += len(pkt)
        if run.refuse_pending:
            run.refuse_pending = False
            self.count("listener_refused")
        if not run.validated and run.amp is not None:
            run.amp["bytes_in"], run.amp["bytes_out"] = run.bytes_in, run.bytes_out
            run.amp["replies"] += 1
        run.unacked_eliciting = 0
        if accept_sent:
            run.accept_queued = False
        self.count("replies_sent")
        if stored is not None:
            self.last_stored_sent = now
            self.last_stored_total = self.stored_total()

    # ------------------------------------------------------------------ timers
    def timers(self, now):
        """Due ACKs and the wiping of old epochs; returns the next deadline."""
        nxt = now + 0.05
        for run in list(self.runs.values()):
            if run.ack_due is not None:
                if now >= run.ack_due:
                    self.send_reply(run, now)
                else:
                    nxt = min(nxt, run.ack_due)
            if run.wipes:
                keep = []
                for deadline, e in run.wipes:
                    if now >= deadline and e < run.current:
                        self.wipe(run, e)
                    else:
                        keep.append((deadline, e))
                        nxt = min(nxt, deadline)
                run.wipes = keep
        return nxt

    def done(self, now):
        return (self.stored_total() >= self.goal and self.last_stored_sent is not None
                and self.last_stored_total >= self.goal
                and now - self.last_stored_sent >= QUIET_AFTER_STORED)

    # ------------------------------------------------------------------ results
    def result(self):
        c = self.counters
        for name, text in (
                ("dropped_auth", "%d datagrams did not authenticate"),
                ("no_key_for_epoch", "%d packets named an epoch we have no keys for"),
                ("no_state_for_run", "%d packets of unknown runs in epoch != 0"),
                ("lost_sent", "%d LOST notices sent"),
                ("replay_dropped", "%d replayed packets dropped"),
                ("too_old_dropped", "%d packets below the replay window dropped"),
                ("amplification_blocked", "%d replies held back by the 3x limit"),
                ("x25519_rate_limited", "%d OFFERs not answered (X25519 rate)"),
                ("record_bytes_unbound", "%d record frames for unbound runs dropped")):
            if c.get(name):
                self.note(text % c[name])
        for k, v in c.items():
            if k.startswith("malformed_"):
                self.note("%d packets malformed (%s)" % (v, k))
        h = hashlib.sha256()
        for _, _, rec in self.records:
            h.update(rec)
        return {
            "records_stored": self.stored_total(),
            "records_sha256": h.hexdigest(),
            "record_lengths": [len(rec) for _, _, rec in self.records],
            "packets_opened": self.opened,
            "packets_failed": self.failed,
            "datagram_sizes": {str(n): c for n, c in sorted(self.sizes.items())},
            "opened_by_epoch": dict(sorted(self.opened_by_epoch.items(), key=lambda kv:
                                           int(kv[0]))),
            "epoch1_secret": self.epoch1_secret,
            "notes": self.notes,
            "counters": dict(sorted(self.counters.items())),
            "runs": ["%016x" % r for r in self.runs],
            "reply_runs": ["%016x" % r.reply_run for r in self.runs.values()],
            "streams": {"%016x" % r.run: None if r.stream is None else {
                "next_record": r.stream.next_record, "pos": r.stream.pos,
                "contiguous": len(r.stream.buf), "pieces": len(r.stream.pieces),
                "highest": r.stream.highest, "host_mark": r.stream.host_mark,
                "broken": r.stream.broken, "live": r.live, "epoch": r.current}
                for r in self.runs.values()},
            # per run: each epoch entered by a packet (epoch, seconds since the build),
            # the epochs whose keys are held now, replies sealed per reply-key epoch
            "epochs": {"%016x" % r.run: {
                "entered": [[e, round(t - r.created, 3)] for e, t in r.entered],
                "current": r.current, "held": sorted(r.secrets),
                "replies_sealed": {str(e): n for e, n in sorted(r.sealed.items())}}
                for r in self.runs.values()},
            "amplification": self.amp_log,
            "refusals": self.refusals,
            "memo_runs_restored": self.memo_restored,
            "resume_answers": self.resume_answers,
            "runs_cut_off": ["%016x" % r for r in self.sources.source_of
                             if self.sources.cut(r)],
            "store_cut_bytes": self.store.cut if self.store is not None else 0,
        }


def main():
    ap = argparse.ArgumentParser(description="pure-link v1 independent receiver")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--secret", required=True, help="receiver static secret, 64 hex")
    ap.add_argument("--peer", required=True, help="wired sender static public key, 64 hex")
    ap.add_argument("--records", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--keylog", help="append PURE_LINK_EPOCH lines (keylog.md) here")
    ap.add_argument("--input", action="append", metavar="NAME:SHAPE",
                    help="an input the host has (repeatable); without any, every input "
                         "and shape is accepted")
    ap.add_argument("--store", metavar="DIR", help="keep records durably in DIR "
                    "(records.bin); the host's stored marks survive a restart")
    ap.add_argument("--memo", metavar="FILE", help="keep the memo (spec/memo.md) in FILE")
    ap.add_argument("--die-at-epoch", type=int, metavar="N",
                    help="with --memo: die (SIGKILL) once the memo holds epoch N of a run, "
                         "before its ACCEPT goes")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()

    secret = bytes.fromhex(a.secret)
    peer = bytes.fromhex(a.peer)
    if len(secret) != 32 or len(peer) != 32:
        sys.exit("--secret and --peer must be 32 bytes (64 hex digits)")

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 * 1024 * 1024)
    except OSError:
        pass
    sock.bind((a.host, a.port))
    sock.setblocking(False)
    try:
        inputs = None
        if a.input:
            inputs = {}
            for spec in a.input:
                name, shape = spec.rsplit(":", 1)
                inputs[name.encode()] = int(shape, 0)
        store = rx_store.RecordStore(a.store) if a.store else None
        memo = rx_store.Memo(a.memo, [peer]) if a.memo else None
        rx = Receiver(sock, secret, peer, a.records, a.verbose, a.keylog, inputs, store, memo,
                      a.die_at_epoch)
    except pl.ZeroOutput:
        sys.exit("static shared secret is all zero: peer refused (crypto.md §3)")
    sys.stderr.write("receiver: listening on %s:%d\n" % sock.getsockname())
    sys.stderr.flush()

    start = time.monotonic()
    deadline = start + a.timeout
    stopped = []
    signal.signal(signal.SIGTERM, lambda *_: stopped.append(True))
    while True:
        now = time.monotonic()
        if rx.done(now):
            break
        if stopped:
            rx.note("stopped by SIGTERM")
            break
        if now >= deadline:
            rx.note("timeout after %.1f s" % a.timeout)
            break
        nxt = min(rx.timers(now), deadline)
        if rx.stored_total() >= rx.goal and rx.last_stored_sent is not None:
            nxt = min(nxt, rx.last_stored_sent + QUIET_AFTER_STORED)
        wait = max(0.0, nxt - time.monotonic())
        r, _, _ = select.select([sock], [], [], wait)
        if r:
            for _ in range(256):
                try:
                    data, addr = sock.recvfrom(65535)
                except (BlockingIOError, InterruptedError):
                    break
                except ConnectionRefusedError:
                    continue
                rx.handle_datagram(data, addr, time.monotonic())
        rx.timers(time.monotonic())

    res = rx.result()
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    ok = res["records_stored"] >= a.records
    sys.stderr.write("receiver: %d/%d records stored, %d opened, %d failed, epochs %s\n" % (
        res["records_stored"], a.records, res["packets_opened"], res["packets_failed"],
        res["opened_by_epoch"]))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
