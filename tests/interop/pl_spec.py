"""pl_spec.py -- pure-link version 1 codec and key schedule, written from spec/ alone.

Every function names the section of spec/wire.md or spec/crypto.md it implements.
Only the Python standard library and the `cryptography` package are used.

Nothing here is taken from the project's own code: the only sources are
spec/protocol.md, spec/wire.md, spec/crypto.md, spec/keylog.md, spec/memo.md and
spec/vectors/keys.txt (plus RFC 9000 for the varint / packet-number rules it cites).
"""

import hashlib
import hmac
import struct

from cryptography.hazmat.primitives.asymmetric.x25519 import (
    X25519PrivateKey,
    X25519PublicKey,
)
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.exceptions import InvalidTag

# --------------------------------------------------------------------------------------
# Values (protocol.md §10, wire.md §10)
# --------------------------------------------------------------------------------------
VERSION = 1
DATAGRAM_MOST = 1452            # UDP payload
DATAGRAM_BASE = 1232            # protocol.md §5.1: a sender's packets without a search, every reply
TAG_BYTES = 16
SENDER_HEADER_BASE = 14         # wire.md §3.1: bytes before the packet number
REPLY_HEADER_BASE = 18          # wire.md §3.2
PAYLOAD_MOST = 1421             # 1452 - 15 - 16
NAME_MOST = 64
TOKEN_BYTES = 16
ECHO_BYTES = 4
ACK_RANGES_MOST = 32            # after the first range
CREDIT_LEAST = 1
CREDIT_MOST = 65536
CREDIT_BEFORE_DELIVERY = 1024   # protocol.md §4.2
RECORD_MOST = 16777216
FRAGMENT_MOST = 1452
VARINT_MOST = (1 << 62) - 1
STREAM_LEAD_MOST = 1 << 30
PN_AGE_MOST = 1 << 19
REPLAY_WINDOW = 2048
AMPLIFICATION = 3
RUN_SLOTS_PER_PEER = 64
ACK_DELAY_MOST = 0.025          # seconds (spec value)

# Frame types (wire.md §6)
PADDING, STREAM, RECORDS, RECORD, OFFER, RESPONSE, PING = range(0, 7)
CHALLENGE, ACCEPT, ACK, STORED, LOST, REFUSED = range(7, 13)
REFUSED_REASON_MAX = 5                  # wire.md §6.13: reasons 1..5
# wire.md §6.13 names each reason in words, not by a short name: these are its words, up
# to the first ";" or "(" after the reason's number (check_vectors.py reads them back from
# the spec's text).  A sender reports the reason by this name; any other value of the
# byte is out_of_range (decode_frames).
REFUSED_REASON_NAMES = {
    1: "no input of that name",
    2: "the input exists but its shape differs",
    3: "this sender key may not send as that source",
    4: "the receiver's host cannot store this input now",
    5: "a newer run of this sender key took the source over",
}
REFUSED_CUT_OFF = 5                     # protocol.md §4.3: the run is over for good
FRAME_NAMES = {
    PADDING: "PADDING", STREAM: "STREAM", RECORDS: "RECORDS", RECORD: "RECORD",
    OFFER: "OFFER", RESPONSE: "RESPONSE", PING: "PING", CHALLENGE: "CHALLENGE",
    ACCEPT: "ACCEPT", ACK: "ACK", STORED: "STORED", LOST: "LOST", REFUSED: "REFUSED",
}
SENDER_FRAMES = {STREAM, RECORDS, RECORD, OFFER, RESPONSE, PING}      # + PADDING
REPLY_FRAMES = {CHALLENGE, ACCEPT, ACK, STORED, LOST, REFUSED}        # + PADDING


class Malformed(Exception):
    """wire.md §9: a malformed packet; .reason is one of the names of §9."""

    def __init__(self, reason, detail=""):
        super().__init__(reason + (": " + detail if detail else ""))
        self.reason = reason


# --------------------------------------------------------------------------------------
# Varints (wire.md §1; RFC 9000 §16)
# --------------------------------------------------------------------------------------
def varint_encode(v):
    """Shortest QUIC varint for v (wire.md §1: a writer uses the shortest length)."""
    if v < 0 or v > VARINT_MOST:
        raise ValueError("varint out of range: %r" % v)
    if v < 1 << 6:
        return bytes([v])
    if v < 1 << 14:
        return struct.pack(">H", v | 0x4000)
    if v < 1 << 30:
        return struct.pack(">I", v | 0x80000000)
    return struct.pack(">Q", v | 0xC000000000000000)


def varint_decode(buf, pos):
    """Read a varint at buf[pos]; returns (value, new_pos).  Any length accepted."""
    if pos >= len(buf):
        raise Malformed("truncated", "varint")
    first = buf[pos]
    n = 1 << (first >> 6)
    if pos + n > len(buf):
        raise Malformed("truncated", "varint")
    v = first & 0x3F
    for i in range(1, n):
        v = (v << 8) | buf[pos + i]
    return v, pos + n


def varint_peek(buf, pos):
    """Like varint_decode but returns None when the bytes are not all there yet
    (used by the record-stream parser, where a prefix may straddle fragments)."""
    if pos >= len(buf):
        return None
    n = 1 << (buf[pos] >> 6)
    if pos + n > len(buf):
        return None
    return varint_decode(buf, pos)


# --------------------------------------------------------------------------------------
# Key id (crypto.md §4): FNV-1a-32 over the 32 B sender static public key
# --------------------------------------------------------------------------------------
FNV = {32: (0x811C9DC5, 0x01000193), 64: (0xCBF29CE484222325, 0x100000001B3)}


def fnv1a(data, bits=32):
    """FNV-1a: 32-bit for the key id (crypto.md §4), 64-bit for memo side slots
    (memo.md "Which slot")."""
    h, prime = FNV[bits]
    mask = (1 << bits) - 1
    for b in data:
        h ^= b
        h = (h * prime) & mask
    return h


def fnv1a32(data):
    return fnv1a(data, 32)


def key_id(sender_public):
    return fnv1a32(sender_public)


# --------------------------------------------------------------------------------------
# Primitives (crypto.md §2)
# --------------------------------------------------------------------------------------
class ZeroOutput(Exception):
    """crypto.md §9: an all-zero X25519 output is refused."""


def x25519_public(secret):
    return X25519PrivateKey.from_private_bytes(secret).public_key().public_bytes_raw()


def x25519(secret, public):
    """X25519(secret, public) with the all-zero rule of crypto.md §9.
    (OpenSSL itself refuses an all-zero result and `cryptography` raises ValueError
    then; both paths end in ZeroOutput.)"""
    try:
        out = X25519PrivateKey.from_private_bytes(secret).exchange(
            X25519PublicKey.from_public_bytes(public))
    except ValueError as e:
        raise ZeroOutput(str(e))
    if hmac.compare_digest(out, bytes(32)):
        raise ZeroOutput("all-zero X25519 output")
    return out


def hkdf_extract(salt, ikm):
    """crypto.md §2: HKDF-Extract(salt, IKM) = HMAC-SHA-256(key=salt, msg=IKM)."""
    return hmac.new(salt, ikm, hashlib.sha256).digest()


def hkdf_expand(prk, info, length):
    """crypto.md §2 / RFC 5869: T(i) = HMAC(PRK, T(i-1) || info || i)."""
    out, t, i = b"", b"", 1
    while len(out) < length:
        t = hmac.new(prk, t + info + bytes([i]), hashlib.sha256).digest()
        out += t
        i += 1
    return out[:length]


# --------------------------------------------------------------------------------------
# Key schedule (crypto.md §3, §5, §6, §7)
# --------------------------------------------------------------------------------------
SALT0 = b"pure-link 1"
DATA_LABEL = b"pure-link 1 data"
REPLY_LABEL = b"pure-link 1 reply"


def u32(x):
    return struct.pack(">I", x)


def u64(x):
    return struct.pack(">Q", x)


def static_shared(own_secret, peer_public):
    """crypto.md §3: S = X25519(own static secret, peer static public); zero refused."""
    return x25519(own_secret, peer_public)


def epoch0_secret(S):
    """crypto.md §6: E(0) = HKDF-Extract(salt0, S)."""
    return hkdf_extract(SALT0, S)


def epoch_ikm(dh, offer_public, accept_public, n):
    """crypto.md §6: IKM = DH(n) || offer_public || accept_public || u32(n) (100 B)."""
    return dh + offer_public + accept_public + u32(n)


def next_epoch_secret(prev_secret, dh, offer_public, accept_public, n):
    """crypto.md §6: E(n) = HKDF-Extract(salt = E(n-1), IKM)."""
    return hkdf_extract(prev_secret, epoch_ikm(dh, offer_public, accept_public, n))


def data_info(sender_public, receiver_public, run, n):
    """crypto.md §7, 92 B."""
    return DATA_LABEL + sender_public + receiver_public + u64(run) + u32(n)


def reply_info(sender_public, receiver_public, run, reply_run, n):
    """crypto.md §7, 101 B (note the order: receiver_public first)."""
    return REPLY_LABEL + receiver_public + sender_public + u64(run) + u64(reply_run) + u32(n)


class PacketKey:
    """One AES-128-GCM packet key: key || iv = HKDF-Expand(E(n), info, 28) (crypto.md §7),
    nonce = iv XOR (00000000 || u64(pn)) (crypto.md §8)."""

    def __init__(self, secret, info):
        okm = hkdf_expand(secret, info, 28)
        self.key = okm[:16]
        self.iv = okm[16:28]
        self._aead = AESGCM(self.key)
        self.failed_opens = 0       # crypto.md §10: failures are counted per key

    def nonce(self, pn):
        pad = bytes(4) + u64(pn)
        return bytes(a ^ b for a, b in zip(self.iv, pad))

    def seal(self, header, plaintext, pn):
        """Returns header || ciphertext || tag (crypto.md §8)."""
        return header + self._aead.encrypt(self.nonce(pn), plaintext, header)

    def open(self, header, body, pn):
        """body = ciphertext || tag.  Returns the plaintext, or None if it does not open."""
        try:
            return self._aead.decrypt(self.nonce(pn), body, header)
        except InvalidTag:
            self.failed_opens += 1
            return None


def data_key(secret, sender_public, receiver_public, run, n):
    return PacketKey(secret, data_info(sender_public, receiver_public, run, n))


def reply_key(secret, sender_public, receiver_public, run, reply_run, n):
    return PacketKey(secret, reply_info(sender_public, receiver_public, run, reply_run, n))


# --------------------------------------------------------------------------------------
# Epoch field (wire.md §4)
# --------------------------------------------------------------------------------------
def epoch_field(epoch):
    return 0 if epoch == 0 else 1 + ((epoch - 1) % 15)


def recover_epoch(E, expected):
    """wire.md §4 'Recovery': the epoch with field E nearest to the expected epoch X."""
    if E == 0:
        return 0
    X = expected
    if X <= E:
        return E
    B = E + 15 * ((X - E) // 15)          # largest candidate <= X
    if X - B <= 7:
        return B
    return B if B + 15 > 0xFFFFFFFF else B + 15


# --------------------------------------------------------------------------------------
# Packet numbers (wire.md §5)
# --------------------------------------------------------------------------------------
def pn_length(pn, acked):
    """Writer: smallest L in 1..4 with u <= 2^(8L-1); u = pn - acked, or pn + 1."""
    u = pn + 1 if acked is None else pn - acked
    for L in (1, 2, 3, 4):
        if u <= 1 << (8 * L - 1):
            return L
    raise ValueError("unacknowledged span above 2^31")


def recover_pn(largest, truncated, length):
    """Reader: wire.md §5 -- the value nearest expected = largest + 1 (0 when none)."""
    expected = 0 if largest is None else largest + 1
    win = 1 << (8 * length)
    half = win // 2
    mask = win - 1
    c = (expected & ~mask) | truncated
    if c + half <= expected and c < (1 << 62) - win:
        return c + win
    if c > expected + half and c >= win:
        return c - win
    if c >= 1 << 62:
        return c - win
    return c


def recover_offset(delivered, offset32):
    """wire.md §7 'Offsets on the wire': nearest to the delivered offset D, 32 bits."""
    win, half = 1 << 32, 1 << 31
    c = (delivered & ~(win - 1)) | offset32
    if c + half <= delivered and c < (1 << 62) - win:
        return c + win
    if c > delivered + half and c >= win:
        return c - win
    return c


# --------------------------------------------------------------------------------------
# Header (wire.md §2, §3)
# --------------------------------------------------------------------------------------
class Header:
    __slots__ = ("reply", "P", "E", "key_id", "run", "reply_run", "pn_trunc", "pn_len",
                 "length", "raw")

    def __repr__(self):
        return ("Header(%s E=%d run=%016x%s pn_trunc=%x/%dB)" % (
            "reply" if self.reply else "sender", self.E, self.run,
            (" reply_run=%016x" % self.reply_run) if self.reply else
            (" key_id=%08x" % self.key_id), self.pn_trunc, self.pn_len))


def parse_header(dgram):
    """wire.md §2-§3: parse and check a datagram's clear header.  Raises Malformed.
    Also applies the size rules of §2 (too_long, header + 17 B)."""
    if len(dgram) > DATAGRAM_MOST:
        raise Malformed("too_long")
    if len(dgram) < 1:
        raise Malformed("truncated")
    if dgram[0] != VERSION:
        raise Malformed("bad_version")
    if len(dgram) < 2:
        raise Malformed("truncated")
    flags = dgram[1]
    if flags & 0x40:
        raise Malformed("reserved_bit")
    h = Header()
    h.reply = bool(flags & 0x80)
    h.P = (flags >> 4) & 3
    h.E = flags & 0x0F
    h.pn_len = h.P + 1
    base = REPLY_HEADER_BASE if h.reply else SENDER_HEADER_BASE
    h.length = base + h.pn_len
    if len(dgram) < h.length:
        raise Malformed("truncated", "header")
    if h.reply:
        h.key_id = None
        h.run, h.reply_run = struct.unpack_from(">QQ", dgram, 2)
    else:
        h.key_id, h.run = struct.unpack_from(">IQ", dgram, 2)
        h.reply_run = None
    h.pn_trunc = int.from_bytes(dgram[base:h.length], "big")
    if len(dgram) < h.length + 1 + TAG_BYTES:
        raise Malformed("truncated", "shorter than header + 17 B")
    h.raw = bytes(dgram[:h.length])
    return h


def _flags(reply, L, E):
    return (0x80 if reply else 0) | ((L - 1) << 4) | (E & 0x0F)


def sender_header(epoch, kid, run, pn, L):
    """wire.md §3.1."""
    return (bytes([VERSION, _flags(False, L, epoch_field(epoch))]) + u32(kid) + u64(run)
            + (pn & ((1 << (8 * L)) - 1)).to_bytes(L, "big"))


def reply_header(epoch, run, reply_run, pn, L):
    """wire.md §3.2."""
    return (bytes([VERSION, _flags(True, L, epoch_field(epoch))]) + u64(run) + u64(reply_run)
            + (pn & ((1 << (8 * L)) - 1)).to_bytes(L, "big"))


# --------------------------------------------------------------------------------------
# Frames (wire.md §6): decoding with every validity rule, and encoding
# --------------------------------------------------------------------------------------
def _need(buf, pos, n):
    if pos + n > len(buf):
        raise Malformed("truncated")


def decode_frames(payload, reply):
    """wire.md §6: parse the whole payload; returns a list of (type, dict).
    reply=True for a reply packet (receiver -> sender).  Raises Malformed on any bad
    frame -- the payload is checked whole before any frame acts."""
    if len(payload) == 0:
        raise Malformed("no_frames")
    if len(payload) > PAYLOAD_MOST:
        raise Malformed("too_long", "payload")
    frames = []
    pos = 0
    n = len(payload)
    while pos < n:
        t = payload[pos]
        if t > REFUSED:
            raise Malformed("unknown_frame", "type 0x%02x" % t)
        if t != PADDING and ((t in SENDER_FRAMES) == reply):
            raise Malformed("wrong_direction", FRAME_NAMES[t])
        pos += 1
        if t == PADDING:
            # A run of zeros is one step (wire.md §6.1)
            start = pos - 1
            while pos < n and payload[pos] == 0:
                pos += 1
            frames.append((PADDING, {"length": pos - start}))
        elif t == STREAM:
            base_record, pos = varint_decode(payload, pos)
            base_offset, pos = varint_decode(payload, pos)
            _need(payload, pos, 8)
            shape = struct.unpack_from(">Q", payload, pos)[0]
            pos += 8
            names = []
            for _ in range(2):
                _need(payload, pos, 1)
                ln = payload[pos]
                pos += 1
                if ln < 1 or ln > NAME_MOST:              # checked as each is read
                    raise Malformed("out_of_range", "name length")
                _need(payload, pos, ln)
                name = bytes(payload[pos:pos + ln])
                pos += ln
                if 0x00 in name or 0x0A in name:
                    raise Malformed("out_of_range", "name byte")
                names.append(name)
            if base_record > base_offset:
                raise Malformed("out_of_range", "base_record > base_offset")
            frames.append((STREAM, {"base_record": base_record, "base_offset": base_offset,
                                    "shape": shape, "source": names[0], "input": names[1]}))
        elif t == RECORDS:
            _need(payload, pos, 4)
            off32 = struct.unpack_from(">I", payload, pos)[0]
            pos += 4
            data = bytes(payload[pos:])
            if len(data) < 1 or len(data) > FRAGMENT_MOST:
                raise Malformed("out_of_range", "RECORDS data length")
            pos = n
            frames.append((RECORDS, {"offset32": off32, "data": data}))
        elif t == RECORD:
            _need(payload, pos, 6)
            off32, ln = struct.unpack_from(">IH", payload, pos)
            pos += 6
            if ln < 1 or ln > FRAGMENT_MOST:                # checked before the data
                raise Malformed("out_of_range", "RECORD length")
            _need(payload, pos, ln)
            frames.append((RECORD, {"offset32": off32, "data": bytes(payload[pos:pos + ln])}))
            pos += ln
        elif t == OFFER:
            _need(payload, pos, 36)
            ep = struct.unpack_from(">I", payload, pos)[0]
            if ep < 1:
                raise Malformed("out_of_range", "OFFER epoch 0")
            frames.append((OFFER, {"epoch": ep, "public": bytes(payload[pos + 4:pos + 36])}))
            pos += 36
        elif t == RESPONSE or t == CHALLENGE:
            _need(payload, pos, TOKEN_BYTES)
            frames.append((t, {"token": bytes(payload[pos:pos + TOKEN_BYTES])}))
            pos += TOKEN_BYTES
        elif t == PING:
            frames.append((PING, {}))
        elif t == ACCEPT:
            _need(payload, pos, 40)
            ep = struct.unpack_from(">I", payload, pos)[0]
            if ep < 1:
                raise Malformed("out_of_range", "ACCEPT epoch 0")
            frames.append((ACCEPT, {"epoch": ep, "echo": bytes(payload[pos + 4:pos + 8]),
                                    "public": bytes(payload[pos + 8:pos + 40])}))
            pos += 40
        elif t == ACK:
            largest, pos = varint_decode(payload, pos)
            delay, pos = varint_decode(payload, pos)
            _need(payload, pos, 1)
            flags = payload[pos]
            pos += 1
            if flags & 0xFE:
                raise Malformed("reserved_bit", "ACK flags")
            count, pos = varint_decode(payload, pos)
            if count > ACK_RANGES_MOST:                      # checked as soon as read
                raise Malformed("out_of_range", "ACK range_count")
            first, pos = varint_decode(payload, pos)
            if first > largest:
                raise Malformed("out_of_range", "ACK first_range")
            ranges = [(largest - first, largest)]
            smallest = largest - first
            for _ in range(count):
                gap, pos = varint_decode(payload, pos)
                rng, pos = varint_decode(payload, pos)
                hi = smallest - gap - 2
                lo = hi - rng
                if hi < 0 or lo < 0:
                    raise Malformed("out_of_range", "ACK range below 0")
                ranges.append((lo, hi))
                smallest = lo
            frames.append((ACK, {"largest": largest, "ack_delay_us": delay,
                                 "stream_unknown": bool(flags & 1), "ranges": ranges}))
        elif t == STORED:
            stored, pos = varint_decode(payload, pos)
            credit, pos = varint_decode(payload, pos)
            if credit < CREDIT_LEAST or credit > CREDIT_MOST:
                raise Malformed("out_of_range", "STORED credit")
            frames.append((STORED, {"stored": stored, "credit": credit}))
        elif t == LOST:
            _need(payload, pos, 9 + LOST_TAG_BYTES)
            ep, pn_trunc, pn_len = struct.unpack_from(">IIB", payload, pos)
            if ep < 1 or ep > 15:
                raise Malformed("out_of_range", "LOST epoch field")
            if pn_len < 1 or pn_len > 4 or pn_trunc >> (8 * pn_len):
                raise Malformed("out_of_range", "LOST packet number")
            tag = bytes(payload[pos + 9:pos + 9 + LOST_TAG_BYTES])
            frames.append((LOST, {"epoch_field": ep, "pn_trunc": pn_trunc, "pn_len": pn_len, "tag": tag}))
            pos += 9 + LOST_TAG_BYTES
        elif t == REFUSED:
            _need(payload, pos, 1)
            reason = payload[pos]
            if reason < 1 or reason > REFUSED_REASON_MAX:
                raise Malformed("out_of_range", "REFUSED reason")
            frames.append((REFUSED, {"reason": reason}))
            pos += 1
    return frames


# Encoders ------------------------------------------------------------------------------
def enc_padding(n=1):
    return bytes(n)


def enc_stream(base_record, base_offset, shape, source, input_name):
    for nm in (source, input_name):
        if not 1 <= len(nm) <= NAME_MOST or 0 in nm or 0x0A in nm:
            raise ValueError("bad name")
    if base_record > base_offset:
        raise ValueError("base_record > base_offset")
    return (bytes([STREAM]) + varint_encode(base_record) + varint_encode(base_offset)
            + u64(shape) + bytes([len(source)]) + source + bytes([len(input_name)])
            + input_name)


def enc_records(offset, data):
    return bytes([RECORDS]) + u32(offset & 0xFFFFFFFF) + data


def enc_record(offset, data):
    return bytes([RECORD]) + u32(offset & 0xFFFFFFFF) + struct.pack(">H", len(data)) + data


def enc_offer(epoch, public):
    return bytes([OFFER]) + u32(epoch) + public


def enc_response(token):
    return bytes([RESPONSE]) + token


def enc_ping():
    return bytes([PING])


def enc_challenge(token):
    return bytes([CHALLENGE]) + token


def enc_accept(epoch, echo, public):
    return bytes([ACCEPT]) + u32(epoch) + echo + public


def enc_ack(ranges, ack_delay_us, stream_unknown):
    """ranges: list of (lo, hi) inclusive, newest (highest) first, disjoint and separated
    by at least one number (wire.md §6.10).  At most 33 ranges are written (the oldest
    are dropped)."""
    ranges = ranges[:ACK_RANGES_MOST + 1]
    lo0, hi0 = ranges[0]
    out = bytearray([ACK])
    out += varint_encode(hi0)
    out += varint_encode(ack_delay_us)
    out.append(1 if stream_unknown else 0)
    out += varint_encode(len(ranges) - 1)
    out += varint_encode(hi0 - lo0)
    smallest = lo0
    for lo, hi in ranges[1:]:
        gap = smallest - hi - 2
        assert gap >= 0
        out += varint_encode(gap)
        out += varint_encode(hi - lo)
        smallest = lo
    return bytes(out)


def enc_stored(stored, credit):
    return bytes([STORED]) + varint_encode(stored) + varint_encode(credit)


LOST_TAG_BYTES = 8   # wire.md §6.12: LOST echoes this much of its trigger's tag


def enc_lost(efield, pn_trunc, pn_len, tag):
    """wire.md §6.12: the trigger's epoch field, packet number as carried, its length,
    and the first 8 bytes of its tag."""
    return bytes([LOST]) + u32(efield) + u32(pn_trunc) + bytes([pn_len]) + bytes(tag[:LOST_TAG_BYTES])


def enc_refused(reason):
    return bytes([REFUSED, reason])


# --------------------------------------------------------------------------------------
# Key log (keylog.md)
# --------------------------------------------------------------------------------------
def parse_keylog(text):
    """Returns a list of dicts {sender_public, receiver_public, run, epoch, secret}.
    Lines of other types and lines starting with '#' are skipped (keylog.md)."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        parts = line.split(" ")
        if parts[0] != "PURE_LINK_EPOCH" or len(parts) != 6:
            continue
        try:
            out.append({
                "sender_public": bytes.fromhex(parts[1]),
                "receiver_public": bytes.fromhex(parts[2]),
                "run": int(parts[3], 16),
                "epoch": int(parts[4], 10),
                "secret": bytes.fromhex(parts[5]),
            })
        except ValueError:
            continue
    return out


def keylog_line(sender_public, receiver_public, run, epoch, secret):
    return "PURE_LINK_EPOCH %s %s %016x %d %s\n" % (
        sender_public.hex(), receiver_public.hex(), run, epoch, secret.hex())
