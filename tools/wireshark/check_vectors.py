#!/usr/bin/env python3
"""The dissector against spec/vectors/ and against packets made at the edges of wire.md's
rules.  Writes one pcap of: every sealed packet of spec/vectors/packets.txt; epoch-1
packets sealed with keys.txt's E(1) (a nonzero E field); and payloads on both sides of
each limit and each malformed reason (wire.md §6, §9), sealed under E(0) of keys.txt.
Then runs tshark with a key log of those secrets and checks, per packet, that it opens,
its frame types, the reason it is malformed (or none), and chosen field values.

    check_vectors.py --tshark 'tshark' --dir DIR
"""
import argparse
import hashlib
import hmac
import os
import shlex
import struct
import sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from check_capture import dissect

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = os.path.join(HERE, "..", "..", "spec", "vectors")
PORT = 4433


def read_lines(path):
    values = {}
    with open(path) as f:
        for line in f:
            if " = " in line and not line.startswith("#"):
                k, v = line.split(" = ", 1)
                values[k.strip()] = v.strip()
    return values


KEYS = read_lines(os.path.join(SPEC, "keys.txt"))
SENDER = bytes.fromhex(KEYS["sender_static_public"])
RECEIVER = bytes.fromhex(KEYS["receiver_static_public"])
RUN = int(KEYS["run"], 16)
REPLY_RUN = int(KEYS["reply_run"], 16)
KEY_ID = bytes.fromhex(KEYS["sender_key_id"])
SECRETS = {0: bytes.fromhex(KEYS["epoch0_secret"]), 1: bytes.fromhex(KEYS["epoch1_secret"])}
# Later epochs with made-up secrets: the reader takes a logged secret as it is.
for _n in (4, 11, 18, 19, 20, 25):
    SECRETS[_n] = hashlib.sha256(b"epoch %d" % _n).digest()

# wire.md §4 and §5 worked at their edges, in capture order after the cases above: each
# (epoch, reply, pn, pn bytes) must open by the key-log rule alone with that epoch and pn.
# Epochs climb by at most 7 so that each is the nearest candidate to the one before;
# then E = 4 read after 20 and after 25 gives 19 (wire.md §4's example).  Numbers: with
# L = 1 after 0x1ff, T = 0x80 gives 0x280 and T = 0x81 gives 0x181 (wire.md §5).
RECOVERY = [(4, False, 300, 2), (11, False, 301, 2), (18, False, 302, 2), (19, False, 303, 2),
            (20, False, 304, 2), (19, False, 305, 2), (25, False, 306, 2), (19, False, 307, 2),
            (19, False, 0x1FF, 2), (19, False, 0x280, 1),
            (19, True, 0x1FF, 2), (19, True, 0x181, 1)]


def packet_key(epoch, reply):
    """crypto.md §7: key || iv = T(1) of HKDF-Expand, cut to 28 B."""
    if reply:
        info = b"pure-link 1 reply" + RECEIVER + SENDER + struct.pack(">QQI", RUN, REPLY_RUN, epoch)
    else:
        info = b"pure-link 1 data" + SENDER + RECEIVER + struct.pack(">QI", RUN, epoch)
    t1 = hmac.new(SECRETS[epoch], info + b"\x01", hashlib.sha256).digest()
    return t1[:16], t1[16:28]


def header(reply, epoch, pn, pn_bytes=2, flags_extra=0):
    field = 0 if epoch == 0 else 1 + (epoch - 1) % 15
    flags = (0x80 if reply else 0) | (pn_bytes - 1) << 4 | field | flags_extra
    ids = struct.pack(">QQ", RUN, REPLY_RUN) if reply else KEY_ID + struct.pack(">Q", RUN)
    return bytes([1, flags]) + ids + (pn & ((1 << 8 * pn_bytes) - 1)).to_bytes(pn_bytes, "big")


def seal(reply, epoch, pn, plain, **kw):
    key, iv = packet_key(epoch, reply)
    nonce = iv[:4] + (int.from_bytes(iv[4:], "big") ^ pn).to_bytes(8, "big")
    h = header(reply, epoch, pn, **kw)
    return h + AESGCM(key).encrypt(nonce, plain, h)


def varint(v, n=None):
    n = n or (1 if v < 64 else 2 if v < 16384 else 4 if v < 1 << 30 else 8)
    return (v | {1: 0, 2: 1, 4: 2, 8: 3}[n] << (8 * n - 2)).to_bytes(n, "big")


def stream(source=b"src", inp=b"in", base_record=0, base_offset=0):
    return (b"\x01" + varint(base_record) + varint(base_offset) + bytes(8) +
            bytes([len(source)]) + source + bytes([len(inp)]) + inp)


def stored(stored_count, credit):
    return b"\x0a" + varint(stored_count) + varint(credit)


PING, TOKEN = b"\x06", bytes(range(16))

# (name, reply, payload, frame types shown, malformed reason or None).  Each pair of
# cases sits on the two sides of one rule.
EDGES = [
    ("16 frames", False, PING * 16, ["0x06"] * 16, None),
    ("17 frames", False, PING * 17, ["0x06"] * 16, "too_many_frames"),
    ("a PADDING run counts once", False, bytes(5) + PING * 15, ["0x00"] + ["0x06"] * 15, None),
    ("unknown type 0x0d", False, b"\x0d", ["0x0d"], "unknown_frame"),
    ("a reply frame in a sender packet", False, b"\x07" + TOKEN, ["0x07"], "wrong_direction"),
    ("a sender frame in a reply", True, PING, ["0x06"], "wrong_direction"),
    ("credit 65,536", True, stored(2, 65536), ["0x0a"], None),
    ("credit 65,537", True, stored(2, 65537), ["0x0a"], "out_of_range"),
    ("credit 0", True, stored(2, 0), ["0x0a"], "out_of_range"),
    ("a 2 B varint for 2", True, b"\x0a\x40\x02\x44\x00", ["0x0a"], None),
    ("STORED cut short", True, b"\x0a\x02", ["0x0a"], "truncated"),
    ("a name of 64 B", False, stream(b"s" * 64), ["0x01"], None),
    ("a name of 65 B", False, stream(b"s" * 65), ["0x01"], "out_of_range"),
    ("a name with 0x0a", False, stream(b"a\nb"), ["0x01"], "out_of_range"),
    ("base_record = base_offset", False, stream(base_record=7, base_offset=7), ["0x01"], None),
    ("base_record > base_offset", False, stream(base_record=8, base_offset=7), ["0x01"], "out_of_range"),
    ("RECORD of 1 B", False, b"\x03" + bytes(4) + b"\x00\x01x" + PING, ["0x03", "0x06"], None),
    ("RECORD of 0 B", False, b"\x03" + bytes(4) + b"\x00\x00" + PING, ["0x03"], "out_of_range"),
    ("RECORDS of 1 B", False, b"\x02" + bytes(4) + b"x", ["0x02"], None),
    ("RECORDS of 0 B", False, b"\x02" + bytes(4), ["0x02"], "out_of_range"),
    ("OFFER for epoch 1", False, b"\x04\x00\x00\x00\x01" + bytes(32), ["0x04"], None),
    ("OFFER for epoch 0", False, b"\x04\x00\x00\x00\x00" + bytes(32), ["0x04"], "out_of_range"),
    ("ACK flags 0x01", True, b"\x09\x05\x00\x01\x00\x05", ["0x09"], None),
    ("ACK flags 0x02", True, b"\x09\x05\x00\x02\x00\x05", ["0x09"], "reserved_bit"),
    ("ACK flags 0x02, then cut short", True, b"\x09\x05\x00\x02\x00", ["0x09"], "truncated"),
    ("ACK first range = largest", True, b"\x09\x05\x00\x00\x00\x05", ["0x09"], None),
    ("ACK first range > largest", True, b"\x09\x05\x00\x00\x00\x06", ["0x09"], "out_of_range"),
    ("ACK of 32 more ranges", True, b"\x09" + varint(200) + b"\x00\x00\x20\x00" + b"\x00\x00" * 32,
     ["0x09"], None),
    ("ACK of 33 more ranges", True, b"\x09" + varint(200) + b"\x00\x00\x21\x00" + b"\x00\x00" * 33,
     ["0x09"], "out_of_range"),
    ("ACK range down to 0", True, b"\x09\x05\x00\x00\x01\x00\x00\x03", ["0x09"], None),
    ("ACK range below 0", True, b"\x09\x05\x00\x00\x01\x00\x00\x04", ["0x09"], "out_of_range"),
    ("LOST field 15", True, b"\x0b\x00\x00\x00\x0f\x00\x00\x00\xff\x01" + bytes(8), ["0x0b"], None),
    ("LOST field 16", True, b"\x0b\x00\x00\x00\x10\x00\x00\x00\xff\x01" + bytes(8), ["0x0b"], "out_of_range"),
    ("LOST number 0x100 in 1 B", True, b"\x0b\x00\x00\x00\x01\x00\x00\x01\x00\x01" + bytes(8), ["0x0b"],
     "out_of_range"),
    ("REFUSED reason 3", True, b"\x0c\x03", ["0x0c"], None),
    ("REFUSED reason 4", True, b"\x0c\x04", ["0x0c"], None),
    ("REFUSED reason 5", True, b"\x0c\x05", ["0x0c"], "out_of_range"),
    ("unknown type, then a frame cut short", False, PING + b"\x0d" + b"\x05", ["0x06", "0x0d"],
     "unknown_frame"),
    ("16 frames, then an unknown type", False, PING * 16 + b"\x0d", ["0x06"] * 16, "too_many_frames"),
]


def cases():
    """(name, datagram, types, reason, {field: value}) in capture order."""
    packets = read_lines(os.path.join(SPEC, "packets.txt"))
    out = []
    for k in packets:
        if k.endswith("_sealed"):
            name = k[: -len("_sealed")]
            plain = bytes.fromhex(packets[name + "_plaintext"])
            out.append(("vector " + name, bytes.fromhex(packets[k]), [f"0x{plain[0]:02x}"], None))
    pn = {False: 100, True: 100}
    for name, reply, payload, types, reason in EDGES:
        pn[reply] += 1
        out.append((name, seal(reply, 0, pn[reply], payload), types, reason))
    out.append(("epoch 1 sender packet, E = 1", seal(False, 1, 200, PING), ["0x06"], None))
    out.append(("epoch 1 reply, E = 1, 4 B pn", seal(True, 1, 201, b"\x0c\x01", pn_bytes=4),
                ["0x0c"], None))
    for epoch, reply, n, n_bytes in RECOVERY:
        name = f"recovery: epoch {epoch}, {'reply' if reply else 'sender'} pn {n:#x} in {n_bytes} B"
        VECTOR_FIELDS[name] = {"pure_link.epoch": str(epoch), "pure_link.pn": str(n),
                               "pure_link.by_rule": "1"}
        out.append((name, seal(reply, epoch, n, PING if not reply else b"\x0c\x01",
                               pn_bytes=n_bytes), ["0x0c" if reply else "0x06"], None))
    out.append(("header: reserved bit", seal(False, 1, 202, PING, flags_extra=0x40), [], "reserved_bit"))
    out.append(("header: version 2", b"\x02" + seal(False, 1, 203, PING)[1:], [], "bad_version"))
    out.append(("header: 31 B", seal(False, 1, 204, PING)[:31], [], "truncated"))
    out.append(("header: 1,453 B", seal(False, 1, 205, bytes(1452 - 16 - 16 + 1)), [], "too_long"))
    return out


# Field values the vectors fix (wire.md §6 and packets.txt).
VECTOR_FIELDS = {
    "vector stream": {"pure_link.stream.source": "sensor-out", "pure_link.stream.input": "archive-in"},
    "vector ack": {"pure_link.ack.acked": "7..9,0..4", "pure_link.ack.delay_us": "1250"},
    "vector stored": {"pure_link.stored.stored": "2", "pure_link.stored.credit": "1024"},
    "vector refused": {"pure_link.refused.reason": "2"},
    "vector lost": {"pure_link.lost.epoch_field": "1", "pure_link.lost.pn_len": "1"},
    "epoch 1 sender packet, E = 1": {"pure_link.epoch": "1", "pure_link.pn": "200"},
    "epoch 1 reply, E = 1, 4 B pn": {"pure_link.epoch": "1", "pure_link.pn": "201"},
}


def write_pcap(path, datagrams):
    """Classic pcap, LINKTYPE_RAW (101): IPv4 + UDP (checksum 0) + datagram."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 101))
        for i, (reply, d) in enumerate(datagrams):
            src, dst = (b"\x7f\x00\x00\x02", b"\x7f\x00\x00\x01") if reply else \
                       (b"\x7f\x00\x00\x01", b"\x7f\x00\x00\x02")
            ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 28 + len(d), i, 0x4000, 64, 17, 0, src, dst)
            csum = sum(struct.unpack(">10H", ip))
            csum = (csum & 0xFFFF) + (csum >> 16)
            csum = ~((csum & 0xFFFF) + (csum >> 16)) & 0xFFFF
            ip = ip[:10] + struct.pack(">H", csum) + ip[12:]
            pkt = ip + struct.pack(">HHHH", PORT, PORT, 8 + len(d), 0) + d
            f.write(struct.pack("<IIII", i, 0, len(pkt), len(pkt)) + pkt)


def write_keylog(path):
    with open(path, "w") as f:
        f.write("# keys.txt's secrets\n")
        for epoch, secret in SECRETS.items():
            f.write(f"PURE_LINK_EPOCH {SENDER.hex()} {RECEIVER.hex()} {RUN:016x} {epoch} "
                    f"{secret.hex()}\n")


FIELDS = ["pure_link.decrypted", "pure_link.frame_type", "_ws.expert.message", "pure_link.by_rule",
          "pure_link.epoch", "pure_link.pn"] + \
    sorted({f for v in VECTOR_FIELDS.values() for f in v})


def reason_of(row):
    for m in row["_ws.expert.message"].split(","):
        if m.startswith("Malformed"):
            return m.split("(", 1)[1].split(")", 1)[0]
    return None


def check(name, row, types, reason):
    problems = []
    if not name.startswith("header:") and row["pure_link.decrypted"] != "1":
        problems.append("not decrypted")
    got_types = [t for t in row["pure_link.frame_type"].split(",") if t]
    if got_types != types:
        problems.append(f"frames {got_types}, want {types}")
    if reason_of(row) != reason:
        problems.append(f"reason {reason_of(row)}, want {reason}")
    for field, want in VECTOR_FIELDS.get(name, {}).items():
        if row.get(field) != want:
            problems.append(f"{field} {row.get(field)!r}, want {want!r}")
    return problems


def sealer_matches_vectors():
    """Our own sealing reproduces every sealed vector (so its keys are the spec's)."""
    packets = read_lines(os.path.join(SPEC, "packets.txt"))
    for k in packets:
        if k.endswith("_sealed"):
            name = k[: -len("_sealed")]
            h = bytes.fromhex(packets[name + "_header"])
            reply = bool(h[1] & 0x80)
            pn = int(packets[name + "_pn"], 16)
            again = seal(reply, 0, pn, bytes.fromhex(packets[name + "_plaintext"]),
                         pn_bytes=((h[1] >> 4) & 3) + 1)
            if again != bytes.fromhex(packets[k]):
                return name
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tshark", default="tshark")
    p.add_argument("--dir", required=True)
    args = p.parse_args()
    bad = sealer_matches_vectors()
    if bad:
        print(f"FAIL this checker's sealing differs from packets.txt at {bad}")
        return 1
    all_cases = cases()
    pcap, keylog = os.path.join(args.dir, "edges.pcap"), os.path.join(args.dir, "edges.keys")
    write_pcap(pcap, [(bool(d[1] & 0x80), d) for _, d, _, _ in all_cases])
    write_keylog(keylog)
    rows = dissect(shlex.split(args.tshark), pcap, keylog, FIELDS)
    failed = 0
    for (name, _, types, reason), row in zip(all_cases, rows):
        problems = check(name, row, types, reason)
        failed += bool(problems)
        if problems:
            print(f"FAIL {name}: {'; '.join(problems)}")
    if len(rows) != len(all_cases):
        print(f"FAIL tshark showed {len(rows)} packets of {len(all_cases)}")
        failed += 1
    print(f"{'ok  ' if not failed else 'FAIL'} {len(all_cases)} vector and edge packets, "
          f"{failed} wrong")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
