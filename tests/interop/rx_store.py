"""rx_store.py -- what receiver.py keeps on disk: its host's record store (a local
format of this implementation) and the memo (spec/memo.md, format PLM3, layout 1).

Record store: one append-only file `records.bin` of frames
    u64 run | u64 record number | u32 length | bytes | u32 CRC-32 (zlib) of all before it
each made durable (fsync) before the receiver reports it in STORED (protocol.md §4.2).
A torn tail (short frame, bad CRC) was never reported stored and is cut at open.
The host's stored mark of a run is one more than its highest record number.

Sources (protocol.md §4.3, resuming): one append-only file `streams.bin` beside it, of
entries
    u8 kind | u64 run | u64 m | u8 source length | source | u32 CRC-32 of all before it
kind 1: the run was bound to the source (m = 0); kind 2: the run asked where to resume
the source and was answered m; kind 3: the asking run was proven live and took the source
over (m = 0).  Each is durable (fsync) before the binding acts, the answer goes or the run
hands a record over.  The receiver has one wired key, so (sender key, source) is the source.

Memo: exactly memo.md's layout, written slot copy by slot copy with fsync between the two
copies, ACCEPT only after the first is durable (memo.md "Writing").
"""

import hashlib
import hmac
import os
import struct
import zlib

import pl_spec as pl

FRAME_HEAD = struct.Struct(">QQI")


def read_log(data, head):
    """The entries of an append-only file of `head` (its last field the body's length),
    the body and a u32 CRC-32 of both: [(fields, body)] while each is whole and true, and
    the bytes after them -- a torn tail, never reported durable."""
    out, pos = [], 0
    while pos + head.size + 4 <= len(data):
        fields = head.unpack_from(data, pos)
        end = pos + head.size + fields[-1]
        if end + 4 > len(data) or \
                zlib.crc32(data[pos:end]) != struct.unpack_from(">I", data, end)[0]:
            break
        out.append((fields, data[pos + head.size:end]))
        pos = end + 4
    return out, len(data) - pos


def open_log(path, head):
    """Reads an append-only file and opens it to append, its torn tail cut first:
    (file, entries, bytes cut)."""
    data = open(path, "rb").read() if os.path.exists(path) else b""
    entries, cut = read_log(data, head)
    f = open(path, "ab")
    if cut:
        f.truncate(len(data) - cut)
    f.seek(0, os.SEEK_END)
    return f, entries, cut


def append_log(f, head, fields, body):
    e = head.pack(*fields) + body
    f.write(e + struct.pack(">I", zlib.crc32(e)))


class RecordStore:
    def __init__(self, directory):
        os.makedirs(directory, exist_ok=True)
        self.directory = directory
        self.path = os.path.join(directory, "records.bin")
        self.marks = {}                 # run -> next record number to store
        self.f, entries, self.cut = open_log(self.path, FRAME_HEAD)
        for (run, num, _), _ in entries:
            self.marks[run] = max(self.marks.get(run, 0), num + 1)
        self.count = len(entries)
        self.pending = False

    def mark(self, run):
        return self.marks.get(run, 0)

    def append(self, run, number, rec):
        """Appends one record; durable only after commit().  A run that resumed a source
        starts at the record number it was answered (protocol.md §4.3), then goes in order."""
        assert run not in self.marks or number == self.marks[run], \
            "records of a run are stored in order"
        append_log(self.f, FRAME_HEAD, (run, number, len(rec)), rec)
        self.marks[run] = number + 1
        self.count += 1
        self.pending = True

    def commit(self):
        if self.pending:
            self.f.flush()
            os.fsync(self.f.fileno())
            self.pending = False


SOURCE_HEAD = struct.Struct(">BQQB")
SOURCE_BOUND = 1
SOURCE_ASKED = 2
SOURCE_OWNS = 3


class SourceBook:
    """protocol.md §4.3: where each source stands, for the host's answer to a run that asks
    where to resume, kept in `streams.bin` of the store's directory (in memory without one).

    The answer for a source is the number of its records held durably in the order of the
    source's input: records of a resuming run are numbered as places in that input, so it
    is one past the highest record number of any run that asked for the source, and never
    below an answer already given (a run answered m that stored nothing yet).  Runs that
    never asked numbered another input from 0 and do not count.

    A source has one run that appends: the latest asking run to be proven live (a packet of
    an epoch >= 1 opened, §4.2) -- not the latest to ask, since an ask is an epoch-0 packet
    that anyone who saw it can replay once the receiver has forgotten its run, and a replay
    is never proven live.  From then on every other run of the source whose latest claim
    (owning it, or else its first binding) came before is cut off: its records are neither
    stored nor reported stored, across restarts too, since the entries are kept in the
    order they happened.  Records the cut runs appended between the answer and the proof
    are skipped by the owner (the receiver raises its stored mark to the count then)."""

    def __init__(self, directory=None):
        self.path = os.path.join(directory, "streams.bin") if directory else None
        self.source_of = {}             # run -> source
        self.claim = {}                 # run -> index of its latest claim (first seen, owns)
        self.asked = {}                 # run -> the m it was last answered
        self.last_owner = {}            # source -> (index, run) of its latest owner
        self.entries = 0
        self.cut_bytes = 0
        self.f = None
        if self.path is not None:
            self.f, entries, self.cut_bytes = open_log(self.path, SOURCE_HEAD)
            for (kind, run, m, _), source in entries:
                self._apply(kind, run, m, source)

    def _apply(self, kind, run, m, source):
        i = self.entries
        self.entries += 1
        self.source_of[run] = source
        if run not in self.claim or kind == SOURCE_OWNS:
            self.claim[run] = i
        if kind == SOURCE_ASKED:
            self.asked[run] = m
        elif kind == SOURCE_OWNS:
            self.last_owner[source] = (i, run)

    def _write(self, kind, run, m, source):
        self._apply(kind, run, m, source)
        if self.f is not None:
            append_log(self.f, SOURCE_HEAD, (kind, run, m, len(source)), source)
            self.f.flush()
            os.fsync(self.f.fileno())

    def count(self, source, mark):
        """The records of the source held, in the order of its input; mark(run) gives the
        host's stored mark of a run."""
        m = 0
        for r, src in self.source_of.items():
            if src == source and r in self.asked:
                m = max(m, self.asked[r], mark(r))
        return m

    def bound(self, run, source):
        """A run bound to a source (its first binding is written, durably)."""
        if run not in self.source_of:
            self._write(SOURCE_BOUND, run, 0, source)

    def ask(self, run, source, mark):
        """The host's answer to a run that asks where to resume `source`, durable before
        it is returned."""
        m = self.count(source, mark)
        self._write(SOURCE_ASKED, run, m, source)
        return m

    def owns(self, run):
        """An asking run proven live takes the source over: the runs before it are cut off.
        Durable before the run hands anything over."""
        src = self.source_of[run]
        if self.last_owner.get(src, (0, None))[1] != run:
            self._write(SOURCE_OWNS, run, 0, src)

    def cut(self, run):
        """Whether a later owner of the run's source cut this one off."""
        src = self.source_of.get(run)
        if src is None or src not in self.last_owner:
            return False
        i, owner = self.last_owner[src]
        return owner != run and self.claim[run] < i


def read_records(directory):
    """[(run, number, bytes)] of a store, for the tests."""
    data = open(os.path.join(directory, "records.bin"), "rb").read()
    return [(run, num, rec) for (run, num, _), rec in read_log(data, FRAME_HEAD)[0]]


# ------------------------------------------------------------------------------ memo
SIDE_SLOTS = 1024
SLOT_BYTES = 192
HEADER_BYTES = 64


class Memo:
    """memo.md: header, then (1024 + P) slots of two 192 B copies (A, B)."""

    def __init__(self, path, peers):
        self.path = path
        self.peers = list(peers)        # wired sender public keys, in wiring order
        self.P = len(self.peers)
        self.size = HEADER_BYTES + (SIDE_SLOTS + self.P) * 2 * SLOT_BYTES
        self.slots = {}                 # slot index -> (sequence, dict or None)
        self.where = {}                 # (peer, run) -> slot index
        data = open(path, "rb").read() if os.path.exists(path) else b""
        self.loaded = self._load(data)
        if not self.loaded:
            self.generation = os.urandom(8)
            self.slots = {}
            with open(path, "wb") as f:
                f.write(self._header())
                f.truncate(self.size)
                f.flush()
                os.fsync(f.fileno())
        self.fd = os.open(path, os.O_RDWR)

    def _mac(self, data):
        return hmac.new(self.generation, data, hashlib.sha256).digest()[:16]

    def _header(self):
        h = (b"PLM3" + pl.u32(1) + pl.u32(self.P) + pl.u32(SIDE_SLOTS) + pl.u32(SLOT_BYTES)
             + bytes(4) + self.generation + bytes(16))
        return h + self._mac(h)

    def _load(self, data):
        """memo.md "Loading": a file of the wrong size, tag or layout is not a memo."""
        if len(data) != self.size or data[:4] != b"PLM3" or data[4:8] != pl.u32(1) or \
                data[8:12] != pl.u32(self.P) or data[12:16] != pl.u32(SIDE_SLOTS) or \
                data[16:20] != pl.u32(SLOT_BYTES):
            return False
        self.generation = data[24:32]
        if not hmac.compare_digest(self._mac(data[:48]), data[48:64]):
            return False
        for i in range(SIDE_SLOTS + self.P):
            best = None
            for c in (0, 1):
                o = HEADER_BYTES + (2 * i + c) * SLOT_BYTES
                cp = data[o:o + SLOT_BYTES]
                seq = struct.unpack_from(">Q", cp, 0)[0]
                if seq == 0 or not hmac.compare_digest(self._mac(cp[:176]), cp[176:192]):
                    continue
                if best is None or seq > best[0]:
                    best = (seq, cp)
            if best is None:
                continue
            seq, cp = best
            entry = None
            if cp[8] == 1:
                entry = {"epoch": struct.unpack_from(">I", cp, 12)[0], "peer": cp[16:48],
                         "run": struct.unpack_from(">Q", cp, 48)[0], "secret": cp[56:88],
                         "offer": cp[88:120], "accept": cp[120:152],
                         "pn": struct.unpack_from(">Q", cp, 152)[0]}
                self.where[(entry["peer"], entry["run"])] = i
            self.slots[i] = (seq, entry)
        return True

    def restored(self):
        """Full slots whose key is wired (memo.md "Loading")."""
        return [e for _, e in self.slots.values() if e is not None and e["peer"] in self.peers]

    def _image(self, seq, e):
        b = bytearray(SLOT_BYTES)
        struct.pack_into(">Q", b, 0, seq)
        if e is not None:
            b[8] = 1
            struct.pack_into(">I", b, 12, e["epoch"])
            b[16:48] = e["peer"]
            struct.pack_into(">Q", b, 48, e["run"])
            b[56:88] = e["secret"]
            b[88:120] = e["offer"]
            b[120:152] = e["accept"]
            struct.pack_into(">Q", b, 152, e["pn"])
        b[176:192] = self._mac(bytes(b[:176]))
        return bytes(b)

    def _write_slot(self, i, e):
        """memo.md "Writing": copy q mod 2 first, durable, then the other copy."""
        seq = self.slots.get(i, (0, None))[0] + 1
        img = self._image(seq, e)
        for c in (seq % 2, 1 - seq % 2):
            os.pwrite(self.fd, img, HEADER_BYTES + (2 * i + c) * SLOT_BYTES)
            os.fsync(self.fd)
        self.slots[i] = (seq, e)

    def _slot_for(self, peer, run, idle):
        """memo.md "Which slot"; idle(run) says whether a run is no longer sending."""
        k = self.P and self.peers.index(peer)
        ps = SIDE_SLOTS + k
        cur = self.slots.get(ps, (0, None))[1]
        if cur is None or cur["run"] == run or idle(cur["run"]):
            side = self.where.get((peer, run))
            if side is not None and side != ps:
                self._write_slot(side, None)          # no copy keeps the superseded secret
            return ps
        h = pl.fnv1a(peer + pl.u64(run), 64)
        c1, c2 = h % SIDE_SLOTS, (h >> 32) % SIDE_SLOTS
        for c in (c1, c2):
            e = self.slots.get(c, (0, None))[1]
            if e is not None and e["peer"] == peer and e["run"] == run:
                return c
        for c in (c1, c2):
            if self.slots.get(c, (0, None))[1] is None:
                return c
        return c1

    def record(self, peer, run, epoch, secret, offer, accept, pn, idle):
        """Records a run's new epoch durably (before its ACCEPT goes)."""
        i = self._slot_for(peer, run, idle)
        old = self.slots.get(i, (0, None))[1]
        if old is not None:
            self.where.pop((old["peer"], old["run"]), None)
        self._write_slot(i, {"epoch": epoch, "peer": peer, "run": run, "secret": secret,
                             "offer": offer, "accept": accept, "pn": pn})
        self.where[(peer, run)] = i
