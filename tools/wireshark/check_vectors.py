#!/usr/bin/env python3
"""The dissector against spec/vectors/ and against packets made at the edges of wire.md's
rules.  Writes one pcap of: every sealed packet of spec/vectors/packets.txt and
refused.txt; epoch-1 packets sealed with keys.txt's E(1) (a nonzero E field); and payloads
on both sides of each limit and each malformed reason (wire.md §6, §9), sealed under E(0)
of keys.txt.  Then runs tshark with a key log of those secrets and checks, per packet,
that it opens, its frame types, the reason it is malformed (or none), chosen field values,
and the name it gives each REFUSED reason (wire.md §6.13's words).  Last, each packet of
numbers.txt in a capture of its own, after packets that bring the key-log rule's state to
the vector's expected epoch and largest number: it must open by the rule alone, with the
vector's epoch and number.  A file of spec/vectors/ that is missing, or that this checker
does not read, fails.

    check_vectors.py --tshark 'tshark' --dir DIR [--vectors DIR] [--wire FILE]
"""
import argparse
import hashlib
import hmac
import os
import re
import shlex
import struct
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from check_capture import dissect

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = os.path.join(HERE, "..", "..", "spec", "vectors")
WIRE = os.path.join(HERE, "..", "..", "spec", "wire.md")
PORT = 4433
# Every file of spec/vectors/, each read below; one missing or not listed is a failure.
VECTOR_FILES = ("keys.txt", "packets.txt", "numbers.txt", "refused.txt")


def read_lines(path):
    values = {}
    with open(path) as f:
        for line in f:
            if " = " in line and not line.startswith("#"):
                k, v = line.split(" = ", 1)
                values[k.strip()] = v.strip()
    return values


def made_up_secret(epoch):
    """A secret for an epoch no vector gives: the reader takes a logged secret as it is."""
    return hashlib.sha256(b"epoch %d" % epoch).digest()


def use_vectors(spec):
    """Reads keys.txt of the vectors directory `spec` into the names below."""
    global SPEC, SENDER, RECEIVER, RUN, REPLY_RUN, KEY_ID, SECRETS
    SPEC = spec
    keys = read_lines(os.path.join(SPEC, "keys.txt"))
    SENDER = bytes.fromhex(keys["sender_static_public"])
    RECEIVER = bytes.fromhex(keys["receiver_static_public"])
    RUN = int(keys["run"], 16)
    REPLY_RUN = int(keys["reply_run"], 16)
    KEY_ID = bytes.fromhex(keys["sender_key_id"])
    SECRETS = {0: bytes.fromhex(keys["epoch0_secret"]), 1: bytes.fromhex(keys["epoch1_secret"]),
               2: bytes.fromhex(keys["epoch2_secret"])}
    for n in (4, 11, 18, 19, 20, 25):
        SECRETS[n] = made_up_secret(n)

# wire.md §4 and §5 worked at their edges, in capture order after the cases above: each
# (epoch, reply, pn, pn bytes) must open by the key-log rule alone with that epoch and pn.
# Epochs climb by at most 7 so that each is the nearest candidate to the one before;
# then E = 4 read after 20 and after 25 gives 19 (wire.md §4's example).  Numbers: with
# L = 1 after 0x1ff, T = 0x80 gives 0x280 and T = 0x81 gives 0x181 (wire.md §5).
RECOVERY = [(4, False, 300, 2), (11, False, 301, 2), (18, False, 302, 2), (19, False, 303, 2),
            (20, False, 304, 2), (19, False, 305, 2), (25, False, 306, 2), (19, False, 307, 2),
            (19, False, 0x1FF, 2), (19, False, 0x280, 1),
            (19, True, 0x1FF, 2), (19, True, 0x181, 1)]


def packet_key(epoch, reply, secrets=None):
    """crypto.md §7: key || iv = T(1) of HKDF-Expand, cut to 28 B."""
    if reply:
        info = b"pure-link 1 reply" + RECEIVER + SENDER + struct.pack(">QQI", RUN, REPLY_RUN, epoch)
    else:
        info = b"pure-link 1 data" + SENDER + RECEIVER + struct.pack(">QI", RUN, epoch)
    t1 = hmac.new((secrets or SECRETS)[epoch], info + b"\x01", hashlib.sha256).digest()
    return t1[:16], t1[16:28]


def header(reply, epoch, pn, pn_bytes=2, flags_extra=0):
    field = 0 if epoch == 0 else 1 + (epoch - 1) % 15
    flags = (0x80 if reply else 0) | (pn_bytes - 1) << 4 | field | flags_extra
    ids = struct.pack(">QQ", RUN, REPLY_RUN) if reply else KEY_ID + struct.pack(">Q", RUN)
    return bytes([1, flags]) + ids + (pn & ((1 << 8 * pn_bytes) - 1)).to_bytes(pn_bytes, "big")


def seal(reply, epoch, pn, plain, secrets=None, **kw):
    key, iv = packet_key(epoch, reply, secrets)
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
    ("REFUSED reason 5", True, b"\x0c\x05", ["0x0c"], None),
    ("REFUSED reason 6", True, b"\x0c\x06", ["0x0c"], "out_of_range"),
    ("REFUSED reason 0", True, b"\x0c\x00", ["0x0c"], "out_of_range"),
    ("REFUSED reason 255", True, b"\x0c\xff", ["0x0c"], "out_of_range"),
    ("unknown type, then a frame cut short", False, PING + b"\x0d" + b"\x05", ["0x06", "0x0d"],
     "unknown_frame"),
    ("16 frames, then an unknown type", False, PING * 16 + b"\x0d", ["0x06"] * 16, "too_many_frames"),
]


def sealed_vectors(file):
    """(name, values) of each sealed packet of a vector file, in the file's order."""
    values = read_lines(os.path.join(SPEC, file))
    return [(k[: -len("_sealed")], values) for k in values if k.endswith("_sealed")]


def cases():
    """(name, datagram, types, reason, {field: value}) in capture order."""
    out = []
    for file in ("packets.txt", "refused.txt"):
        for name, values in sealed_vectors(file):
            plain = bytes.fromhex(values[name + "_plaintext"])
            out.append(("vector " + name, bytes.fromhex(values[name + "_sealed"]),
                        [f"0x{plain[0]:02x}"], None))
            if file == "refused.txt":
                VECTOR_FIELDS["vector " + name] = {
                    "pure_link.refused.reason": str(plain[1]), "pure_link.epoch": "0",
                    "pure_link.pn": str(int(values[name + "_pn"], 16)), "pure_link.by_rule": "1"}
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


def write_keylog(path, secrets=None):
    with open(path, "w") as f:
        f.write("# keys.txt's secrets\n")
        for epoch, secret in (secrets or SECRETS).items():
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
    """Our own sealing reproduces every sealed vector (so its keys are the spec's): those
    of packets.txt and refused.txt under E(0), those of numbers.txt under their E(n)."""
    for file in VECTOR_FILES[1:]:
        for name, values in sealed_vectors(file):
            h = bytes.fromhex(values[name + "_header"])
            epoch = int(values.get(name + "_epoch", "0"), 16)
            secrets = {epoch: bytes.fromhex(values.get(name + "_secret", SECRETS[0].hex()))}
            again = seal(bool(h[1] & 0x80), epoch, int(values[name + "_pn"], 16),
                         bytes.fromhex(values[name + "_plaintext"]), secrets,
                         pn_bytes=((h[1] >> 4) & 3) + 1)
            if again != bytes.fromhex(values[name + "_sealed"]) or not again.startswith(h):
                return f"{file} {name}"
    return None


def wire_reason_names(path):
    """wire.md §6.13 read as text: each REFUSED reason, a bold number, named by its words
    up to the first ';' or '(' (the dissector shows them so)."""
    with open(path) as f:
        text = f.read()
    section = " ".join(text.split("### 6.13 REFUSED", 1)[1].split("\n## ", 1)[0].split())
    return {int(n): words.strip() for n, words in re.findall(r"\*\*(\d+)\*\* ([^;(]+)", section)}


def shown_reasons(tshark, pcap, keylog):
    """Per packet, the REFUSED reasons as tshark -T pdml shows them ('Reason: NAME (N)')."""
    cmd = tshark + ["-n", "-r", pcap, "-o", "pure_link.keylog:" + keylog, "-T", "pdml"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=60)
    return [[f.get("showname") for f in packet.iter("field")
             if f.get("name") == "pure_link.refused.reason"]
            for packet in ElementTree.fromstring(out.stdout).iter("packet")]


def check_reason_names(tshark, pcap, keylog, all_cases, names):
    """Each refused.txt vector's reason shown by its wire.md name; the vectors hold one
    reply per reason wire.md names."""
    problems, seen = [], []
    for (name, _, _, _), shown in zip(all_cases, shown_reasons(tshark, pcap, keylog)):
        if not name.startswith("vector refused") or name == "vector refused":
            continue
        reason = int(VECTOR_FIELDS[name]["pure_link.refused.reason"])
        seen.append(reason)
        want = [f"Reason: {names.get(reason, '(no name in wire.md)')} ({reason})"]
        if shown != want:
            problems.append(f"FAIL {name}: shown {shown}, want {want}")
    if sorted(seen) != sorted(names):
        problems.append(f"FAIL refused.txt reasons {sorted(seen)}, wire.md names {sorted(names)}")
    return problems


def climb(epoch):
    """Epochs that bring the key-log rule from 0 to `epoch`, each at most 7 above the one
    before, so each is recovered exactly (wire.md §4)."""
    return list(range(7, epoch, 7)) + [epoch] if epoch else []


def number_case(name, v):
    """One numbers.txt vector after the packets that set the reader's state: the run's
    current epoch climbs to <name>_expected_epoch and, when the vector gives one, the
    largest number in its space is <name>_largest (4 B numbers, exact from none).  With no
    largest, the climbing packets go in the other space.  Returns the packets (name,
    datagram, epoch, pn, types) and the secrets they need."""
    reply = bool(bytes.fromhex(v[name + "_header"])[1] & 0x80)
    epoch, pn = int(v[name + "_epoch"], 16), int(v[name + "_pn"], 16)
    largest = int(v[name + "_largest"], 16) if name + "_largest" in v else None
    steps = climb(int(v[name + "_expected_epoch"], 16))
    secrets = {n: SECRETS.get(n, made_up_secret(n)) for n in steps}
    secrets[epoch] = bytes.fromhex(v[name + "_secret"])
    space = reply if largest is not None else not reply
    packets = []
    for i, n in enumerate(steps):
        n_pn = largest if largest is not None and i == len(steps) - 1 else i
        packets.append((f"{name}: state, epoch {n} pn {n_pn:#x}",
                        seal(space, n, n_pn, b"\x0c\x01" if space else PING, secrets,
                             pn_bytes=4), n, n_pn, ["0x0c" if space else "0x06"]))
    plain = bytes.fromhex(v[name + "_plaintext"])
    packets.append((name, bytes.fromhex(v[name + "_sealed"]), epoch, pn, [f"0x{plain[0]:02x}"]))
    return packets, secrets


def check_numbers(tshark, out_dir):
    """Each numbers.txt vector in a capture of its own (the reader's state only climbs):
    every packet opens by the key-log rule with its epoch, number and frames."""
    problems, count = [], 0
    for name, v in sealed_vectors("numbers.txt"):
        packets, secrets = number_case(name, v)
        pcap, keylog = os.path.join(out_dir, name + ".pcap"), os.path.join(out_dir, name + ".keys")
        write_pcap(pcap, [(bool(d[1] & 0x80), d) for _, d, _, _, _ in packets])
        write_keylog(keylog, secrets)
        rows = dissect(tshark, pcap, keylog, FIELDS)
        for (what, _, epoch, pn, types), row in zip(packets, rows):
            want = {"pure_link.decrypted": "1", "pure_link.by_rule": "1",
                    "pure_link.epoch": str(epoch), "pure_link.pn": str(pn),
                    "pure_link.frame_type": ",".join(types)}
            bad = [f"{f} {row.get(f)!r}, want {w!r}" for f, w in want.items() if row.get(f) != w]
            if bad:
                problems.append(f"FAIL numbers.txt {what}: {'; '.join(bad)}")
        if len(rows) != len(packets):
            problems.append(f"FAIL numbers.txt {name}: tshark showed {len(rows)} packets of "
                            f"{len(packets)}")
        count += 1
    if not count:
        problems.append("FAIL numbers.txt holds no vector")
    return problems, count


def files_problems():
    """Each file of VECTOR_FILES is there and nothing else is."""
    present = sorted(os.listdir(SPEC))
    missing = [f for f in VECTOR_FILES if f not in present]
    unread = [f for f in present if f not in VECTOR_FILES]
    return ([f"FAIL {os.path.join(SPEC, f)} is missing" for f in missing] +
            [f"FAIL no check for {os.path.join(SPEC, f)}" for f in unread])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tshark", default="tshark")
    p.add_argument("--dir", required=True)
    p.add_argument("--vectors", default=SPEC)
    p.add_argument("--wire", default=WIRE)
    args = p.parse_args()
    tshark = shlex.split(args.tshark)
    use_vectors(args.vectors)
    missing = files_problems()
    if missing:
        print("\n".join(missing))
        return 1
    bad = sealer_matches_vectors()
    if bad:
        print(f"FAIL this checker's sealing differs from {bad}")
        return 1
    all_cases = cases()
    pcap, keylog = os.path.join(args.dir, "edges.pcap"), os.path.join(args.dir, "edges.keys")
    write_pcap(pcap, [(bool(d[1] & 0x80), d) for _, d, _, _ in all_cases])
    write_keylog(keylog)
    rows = dissect(tshark, pcap, keylog, FIELDS)
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
    names = check_reason_names(tshark, pcap, keylog, all_cases, wire_reason_names(args.wire))
    print("\n".join(names) or "ok   REFUSED reasons of refused.txt shown by their wire.md names")
    numbers, count = check_numbers(tshark, args.dir)
    print("\n".join(numbers) or f"ok   {count} numbers.txt vectors placed by the key-log rule")
    return 1 if failed or names or numbers else 0


if __name__ == "__main__":
    sys.exit(main())
