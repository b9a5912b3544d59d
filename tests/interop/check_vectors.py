#!/usr/bin/env python3
"""check_vectors.py -- recompute every file of spec/vectors/ (keys.txt, packets.txt,
numbers.txt, refused.txt) and the worked examples of spec/wire.md from the spec text alone
(through pl_spec.py), and report each match.

Usage: python3 tests/interop/check_vectors.py [--vectors DIR] [--wire FILE] [-v]
Exit 0 only if every check matches: a vector file that is missing, holds no vector, or
that this script has no check for is a failure too.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pl_spec as pl  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_VECTORS = os.path.normpath(os.path.join(HERE, "..", "..", "spec", "vectors"))
DEFAULT_WIRE = os.path.normpath(os.path.join(HERE, "..", "..", "spec", "wire.md"))


class Checker:
    def __init__(self, verbose):
        self.verbose = verbose
        self.ok = 0
        self.bad = []

    def check(self, name, got, want):
        if isinstance(got, (bytes, bytearray)):
            got = bytes(got).hex()
        if isinstance(want, (bytes, bytearray)):
            want = bytes(want).hex()
        if got == want:
            self.ok += 1
            if self.verbose:
                print("ok    %s" % name)
        else:
            self.bad.append(name)
            print("FAIL  %s\n      got  %s\n      want %s" % (name, got, want))


def load_keys(path):
    """keys.txt: 'name = hex' lines, '#' comments."""
    kv = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or "=" not in line:
                continue
            k, v = line.split("=", 1)
            kv[k.strip()] = v.strip()
    return kv


def load_titles(path):
    """The comment line that opens each vector's block ('# <title>' just before its first
    'name = hex' line), by vector name (the text before the last '_')."""
    titles, comment = {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("#"):
                comment = line[1:].strip()
            elif "=" in line:
                titles.setdefault(line.split("=", 1)[0].strip().rsplit("_", 1)[0], comment)
    return titles


def check_keys(c, kv):
    """crypto.md §3-§8 against vectors/keys.txt.  Every line of keys.txt that is not an
    input is recomputed; lines left unchecked are reported."""
    checked = set()

    def want(name):
        checked.add(name)
        return kv[name]

    h = bytes.fromhex
    s_sec = h(kv["sender_static_secret"])
    r_sec = h(kv["receiver_static_secret"])
    run = int(kv["run"], 16)
    reply_run = int(kv["reply_run"], 16)
    inputs = {"sender_static_secret", "receiver_static_secret", "run", "reply_run"}

    s_pub = pl.x25519_public(s_sec)
    r_pub = pl.x25519_public(r_sec)
    c.check("sender_static_public", s_pub, want("sender_static_public"))
    c.check("receiver_static_public", r_pub, want("receiver_static_public"))
    c.check("sender_key_id", "%08x" % pl.key_id(s_pub), want("sender_key_id"))
    S_sender = pl.static_shared(s_sec, r_pub)
    S_receiver = pl.static_shared(r_sec, s_pub)
    c.check("static_shared (sender side)", S_sender, want("static_shared"))
    c.check("static_shared (receiver side)", S_receiver, want("static_shared"))
    secrets = {0: pl.epoch0_secret(S_sender)}
    c.check("epoch0_secret", secrets[0], want("epoch0_secret"))

    epoch = 0
    while "epoch%d_data_info" % epoch in kv:
        n = epoch
        if n >= 1:
            es = h(kv["epoch%d_sender_ephemeral_secret" % n])
            er = h(kv["epoch%d_receiver_ephemeral_secret" % n])
            inputs.add("epoch%d_sender_ephemeral_secret" % n)
            inputs.add("epoch%d_receiver_ephemeral_secret" % n)
            offer_pub = pl.x25519_public(es)
            accept_pub = pl.x25519_public(er)
            c.check("epoch%d_offer_public" % n, offer_pub, want("epoch%d_offer_public" % n))
            c.check("epoch%d_accept_public" % n, accept_pub, want("epoch%d_accept_public" % n))
            dh_s = pl.x25519(es, accept_pub)
            dh_r = pl.x25519(er, offer_pub)
            c.check("epoch%d_dh (sender side)" % n, dh_s, want("epoch%d_dh" % n))
            c.check("epoch%d_dh (receiver side)" % n, dh_r, want("epoch%d_dh" % n))
            c.check("epoch%d_ikm" % n, pl.epoch_ikm(dh_s, offer_pub, accept_pub, n),
                    want("epoch%d_ikm" % n))
            secrets[n] = pl.next_epoch_secret(secrets[n - 1], dh_s, offer_pub, accept_pub, n)
            c.check("epoch%d_secret" % n, secrets[n], want("epoch%d_secret" % n))
        E = secrets[n]
        for direction in ("data", "reply"):
            if direction == "data":
                info = pl.data_info(s_pub, r_pub, run, n)
                key = pl.data_key(E, s_pub, r_pub, run, n)
            else:
                info = pl.reply_info(s_pub, r_pub, run, reply_run, n)
                key = pl.reply_key(E, s_pub, r_pub, run, reply_run, n)
            p = "epoch%d_%s_" % (n, direction)
            c.check(p + "info", info, want(p + "info"))
            c.check(p + "info length", len(info), 92 if direction == "data" else 101)
            c.check(p + "key", key.key, want(p + "key"))
            c.check(p + "iv", key.iv, want(p + "iv"))
            for name in kv:
                if name.startswith(p + "nonce_pn_"):
                    pn = int(name[len(p + "nonce_pn_"):])
                    c.check(name, key.nonce(pn), want(name))
        epoch += 1

    left = [k for k in kv if k not in checked and k not in inputs]
    if left:
        print("NOTE  lines of keys.txt not recomputed: %s" % ", ".join(left))
        for k in left:
            c.bad.append("unchecked " + k)
    return len(checked)


def reencode(t, f):
    """Encode one decoded frame again (for the round trip of packets.txt)."""
    if t == pl.PADDING:
        return pl.enc_padding(f["length"])
    if t == pl.STREAM:
        return pl.enc_stream(f["base_record"], f["base_offset"], f["shape"], f["source"],
                             f["input"])
    if t == pl.RECORDS:
        return pl.enc_records(f["offset32"], f["data"])
    if t == pl.RECORD:
        return pl.enc_record(f["offset32"], f["data"])
    if t == pl.OFFER:
        return pl.enc_offer(f["epoch"], f["public"])
    if t == pl.RESPONSE:
        return pl.enc_response(f["token"])
    if t == pl.PING:
        return pl.enc_ping()
    if t == pl.CHALLENGE:
        return pl.enc_challenge(f["token"])
    if t == pl.ACCEPT:
        return pl.enc_accept(f["epoch"], f["echo"], f["public"])
    if t == pl.ACK:
        return pl.enc_ack(f["ranges"], f["ack_delay_us"], f["stream_unknown"])
    if t == pl.STORED:
        return pl.enc_stored(f["stored"], f["credit"])
    if t == pl.LOST:
        return pl.enc_lost(f["epoch_field"], f["pn_trunc"], f["pn_len"], f["tag"])
    if t == pl.REFUSED:
        return pl.enc_refused(f["reason"])
    raise ValueError(t)


def epoch0_keys(kv):
    """The epoch-0 data and reply keys of the keys.txt inputs (crypto.md §6-§7)."""
    h = bytes.fromhex
    s_sec = h(kv["sender_static_secret"])
    r_sec = h(kv["receiver_static_secret"])
    run = int(kv["run"], 16)
    reply_run = int(kv["reply_run"], 16)
    s_pub, r_pub = pl.x25519_public(s_sec), pl.x25519_public(r_sec)
    e0 = pl.epoch0_secret(pl.static_shared(r_sec, s_pub))
    return {"s_pub": s_pub, "run": run, "reply_run": reply_run,
            "data": pl.data_key(e0, s_pub, r_pub, run, 0),
            "reply": pl.reply_key(e0, s_pub, r_pub, run, reply_run, 0)}


def check_epoch0_packet(c, keys, name, pv):
    """One sealed epoch-0 packet of the keys.txt inputs (packets.txt, refused.txt): build
    the header from its fields (wire.md §3), parse it back, recover the packet number (§5),
    seal the plaintext (crypto.md §8) and compare with the sealed bytes, open the sealed
    bytes, and see the other direction's key fail.  Returns (header, frames decoded, key);
    raises pl.Malformed if the bytes break a rule of wire.md."""
    h = bytes.fromhex
    pn = int(pv[name + "_pn"], 16)
    header = h(pv[name + "_header"])
    plaintext = h(pv[name + "_plaintext"])
    sealed = h(pv[name + "_sealed"])
    hd = pl.parse_header(sealed)
    c.check(name + ": header is the sealed prefix", sealed[:hd.length], header)
    c.check(name + ": epoch field 0", hd.E, 0)
    if hd.reply:
        built = pl.reply_header(0, hd.run, hd.reply_run, pn, hd.pn_len)
        c.check(name + ": reply header fields", (hd.run, hd.reply_run),
                (keys["run"], keys["reply_run"]))
    else:
        built = pl.sender_header(0, hd.key_id, hd.run, pn, hd.pn_len)
        c.check(name + ": sender header fields", (hd.key_id, hd.run),
                (pl.key_id(keys["s_pub"]), keys["run"]))
    c.check(name + ": header rebuilt", built, header)
    c.check(name + ": pn recovered", pl.recover_pn(pn - 1, hd.pn_trunc, hd.pn_len), pn)
    key, other = (keys["reply"], keys["data"]) if hd.reply else (keys["data"], keys["reply"])
    c.check(name + ": sealed", key.seal(header, plaintext, pn), sealed)
    c.check(name + ": opened", key.open(header, sealed[hd.length:], pn), plaintext)
    c.check(name + ": does not open with the other direction's key",
            other.open(header, sealed[hd.length:], pn), None)
    frames = pl.decode_frames(plaintext, hd.reply)
    c.check(name + ": frames re-encoded", b"".join(reencode(t, f) for t, f in frames),
            plaintext)
    if c.verbose:
        print("      %s: %s" % (name, frames))
    return hd, frames, key


def vector_names(pv):
    """The vectors of a file, in the order of their packet numbers."""
    return sorted({k.rsplit("_", 1)[0] for k in pv}, key=lambda n: int(pv[n + "_pn"], 16))


def guarded(c, name, check):
    """Runs one vector's checks; bytes that break a rule of the spec fail that vector
    instead of stopping the script."""
    try:
        check()
    except (pl.Malformed, KeyError, ValueError) as e:
        c.bad.append(name)
        print("FAIL  %s: %s: %s" % (name, type(e).__name__, e))


def check_packets(c, kv, pv):
    """vectors/packets.txt: epoch-0 packets of the keys.txt inputs, one per frame type
    (check_epoch0_packet), each of the type its name says."""
    keys = epoch0_keys(kv)
    names = vector_names(pv)
    for name in names:
        def one(name=name):
            _, frames, _ = check_epoch0_packet(c, keys, name, pv)
            c.check(name + ": frame type", [pl.FRAME_NAMES[t] for t, _ in frames][:1],
                    [name.upper()])
        guarded(c, name, one)
    c.check("packets.txt: every frame type once", sorted(n.upper() for n in names),
            sorted(pl.FRAME_NAMES.values()))
    return len(names)


def wire_refused_reasons(wire_text):
    """wire.md §6.13 read as text: ({reason: its words}, the last valid reason).  Each
    reason is a bold number followed by its words up to the first ';' or '('."""
    sec = wire_text.split("### 6.13 REFUSED", 1)[1].split("\n## ", 1)[0]
    sec = " ".join(sec.split())
    names = {int(n): words.strip()
             for n, words in re.findall(r"\*\*(\d+)\*\* ([^;(]+)", sec)}
    last = re.search(r"Valid when the reason is 1\.\.(\d+)", sec)
    return names, int(last.group(1)) if last else None


def check_refused(c, kv, rv, titles, wire_text):
    """vectors/refused.txt: one sealed reply per REFUSED reason (wire.md §6.13).  Each is
    checked as packets.txt's are (check_epoch0_packet); its one frame is REFUSED with the
    reason its name and title give, a reason wire.md §6.13 names, and the file holds every
    valid reason once.  Then, the same reply with reason 0, last + 1 or 255 sealed instead
    opens but is malformed (out_of_range), as wire.md §6.13 says."""
    names_spec, last = wire_refused_reasons(wire_text)
    c.check("wire.md §6.13: valid reasons 1..%s" % last, last, pl.REFUSED_REASON_MAX)
    c.check("wire.md §6.13: each valid reason named once", sorted(names_spec),
            list(range(1, (last or 0) + 1)))
    c.check("wire.md §6.13: reason names", pl.REFUSED_REASON_NAMES, names_spec)
    keys = epoch0_keys(kv)
    names = vector_names(rv)
    reasons = []
    for name in names:
        def one(name=name):
            hd, frames, key = check_epoch0_packet(c, keys, name, rv)
            want = int(name[len("refused"):]) if re.fullmatch(r"refused\d+", name) else None
            c.check(name + ": a reply", hd.reply, True)
            c.check(name + ": title", titles.get(name), "REFUSED reason %s (reply packet)" % want)
            c.check(name + ": one REFUSED frame of reason %s" % want, frames,
                    [(pl.REFUSED, {"reason": want})])
            reason = frames[0][1].get("reason") if frames else None
            reasons.append(reason)
            c.check(name + ": reason %s named by wire.md §6.13" % reason,
                    names_spec.get(reason), pl.REFUSED_REASON_NAMES.get(reason))
            c.check(name + ": reason %s has a name" % reason, reason in names_spec, True)
            if c.verbose:
                print("      %s: reason %s, %s" % (name, reason, names_spec.get(reason)))
            check_refused_unknown(c, name, rv, hd, key, (last or 0) + 1)
        guarded(c, name, one)
    c.check("refused.txt: one reply per valid reason", sorted(reasons),
            list(range(1, (last or 0) + 1)))
    return len(names)


def check_refused_unknown(c, name, rv, hd, key, first_unknown):
    """A vector's reply with an unknown reason sealed instead: it opens (the AEAD does not
    read frames) and is malformed, out_of_range (wire.md §6.13, §9)."""
    pn = int(rv[name + "_pn"], 16)
    plaintext = bytes.fromhex(rv[name + "_plaintext"])
    for bad in (0, first_unknown, 255):
        changed = plaintext[:-1] + bytes([bad])
        body = key.seal(hd.raw, changed, pn)[hd.length:]
        c.check(name + ": reason %d opens" % bad, key.open(hd.raw, body, pn), changed)
        try:
            pl.decode_frames(key.open(hd.raw, body, pn), True)
            got = "accepted"
        except pl.Malformed as e:
            got = e.reason
        c.check(name + ": reason %d is malformed" % bad, got, "out_of_range")


def check_numbers(c, kv, nv):
    """vectors/numbers.txt: packets with 1- to 4-byte numbers sealed in epochs >= 1.  For
    each: recover the epoch from E against the expected epoch (wire.md §4) and the number
    against the largest received (§5, none when absent), derive the key from the given
    E(epoch) (E(1), E(2) must be keys.txt's), open, seal again, decode the frames."""
    h = bytes.fromhex
    s_pub = pl.x25519_public(h(kv["sender_static_secret"]))
    r_pub = pl.x25519_public(h(kv["receiver_static_secret"]))
    names = sorted({k[:-len("_sealed")] for k in nv if k.endswith("_sealed")})
    for name in names:
        def one(name=name):
            secret = h(nv[name + "_secret"])
            epoch = int(nv[name + "_epoch"], 16)
            pn = int(nv[name + "_pn"], 16)
            largest = int(nv[name + "_largest"], 16) if name + "_largest" in nv else None
            header, plaintext = h(nv[name + "_header"]), h(nv[name + "_plaintext"])
            sealed = h(nv[name + "_sealed"])
            if "epoch%d_secret" % epoch in kv:
                c.check(name + ": secret is keys.txt's", secret,
                        h(kv["epoch%d_secret" % epoch]))
            hd = pl.parse_header(sealed)
            c.check(name + ": header is the sealed prefix", sealed[:hd.length], header)
            c.check(name + ": E field nonzero", hd.E != 0, True)
            c.check(name + ": epoch recovered",
                    pl.recover_epoch(hd.E, int(nv[name + "_expected_epoch"], 16)), epoch)
            c.check(name + ": pn recovered", pl.recover_pn(largest, hd.pn_trunc, hd.pn_len),
                    pn)
            if hd.reply:
                key = pl.reply_key(secret, s_pub, r_pub, hd.run, hd.reply_run, epoch)
            else:
                key = pl.data_key(secret, s_pub, r_pub, hd.run, epoch)
            c.check(name + ": sealed", key.seal(header, plaintext, pn), sealed)
            c.check(name + ": opened", key.open(header, sealed[hd.length:], pn), plaintext)
            frames = pl.decode_frames(plaintext, hd.reply)
            c.check(name + ": frames re-encoded",
                    b"".join(reencode(t, f) for t, f in frames), plaintext)
        guarded(c, name, one)
    guarded(c, "numbers.txt: lengths", lambda: c.check(
        "numbers.txt: lengths 1..4 all present",
        sorted({pl.parse_header(h(nv[n + "_sealed"])).pn_len for n in names}), [1, 2, 3, 4]))
    return len(names)


def check_wire_examples(c):
    """The worked examples in spec/wire.md and spec/crypto.md text."""
    h = bytes.fromhex
    # §1 varints
    c.check("varint 40 25 reads as 37", pl.varint_decode(h("4025"), 0)[0], 37)
    c.check("varint 25 reads as 37", pl.varint_decode(h("25"), 0)[0], 37)
    # §3.3 header examples
    sh = h("0113deadbeef0102030405060708abcd")
    c.check("header example: sender bytes", pl.sender_header(3, 0xDEADBEEF, 0x0102030405060708,
                                                              0xABCD, 2), sh)
    hd = pl.parse_header(sh + bytes(17))
    c.check("header example: sender parse",
            (hd.reply, hd.pn_len, hd.E, hd.key_id, hd.run, hd.pn_trunc, hd.length),
            (False, 2, 3, 0xDEADBEEF, 0x0102030405060708, 0xABCD, 16))
    rh = h("01810102030405060708111213141516171807")
    c.check("header example: reply bytes", pl.reply_header(1, 0x0102030405060708,
                                                            0x1112131415161718, 7, 1), rh)
    hd = pl.parse_header(rh + bytes(17))
    c.check("header example: reply parse",
            (hd.reply, hd.pn_len, hd.E, hd.run, hd.reply_run, hd.pn_trunc, hd.length),
            (True, 1, 1, 0x0102030405060708, 0x1112131415161718, 7, 19))
    # §2 / §3.3 malformed headers
    for name, dg, reason in [
            ("bad_version", h("02") + bytes(40), "bad_version"),
            ("reserved bit", h("0140") + bytes(40), "reserved_bit"),
            ("too long", h("0100") + bytes(1451), "too_long"),
            ("sender shorter than 32 B", h("0100") + bytes(29), "truncated"),
            ("reply shorter than 36 B", h("0180") + bytes(33), "truncated")]:
        try:
            pl.parse_header(dg)
            got = "accepted"
        except pl.Malformed as e:
            got = e.reason
        c.check("header malformed: " + name, got, reason)
    c.check("smallest sender packet accepted", pl.parse_header(h("0100") + bytes(30)).length, 15)
    # §4 epoch field
    c.check("epoch field table", [pl.epoch_field(e) for e in (0, 1, 2, 15, 16, 17, 30, 31)],
            [0, 1, 2, 15, 1, 2, 15, 1])
    c.check("epoch recovery E=4 X=20", pl.recover_epoch(4, 20), 19)
    c.check("epoch recovery E=4 X=25", pl.recover_epoch(4, 25), 19)
    ok = all(pl.recover_epoch(pl.epoch_field(e), x) == e
             for x in range(0, 200) for e in range(max(1, x - 7), x + 8))
    c.check("epoch recovery: every epoch within 7 of X", ok, True)
    # §5 packet numbers
    c.check("pn length 0xac5c02 acked 0xabe8b3", pl.pn_length(0xAC5C02, 0xABE8B3), 2)
    c.check("pn length 0xace8fe acked 0xabe8b3", pl.pn_length(0xACE8FE, 0xABE8B3), 3)
    c.check("pn recovery RFC 9000 A.3", pl.recover_pn(0xA82F30EA, 0x9B32, 2), 0xA82F9B32)
    c.check("pn recovery edge T=0x80", pl.recover_pn(0x1FF, 0x80, 1), 0x280)
    c.check("pn recovery edge T=0x81", pl.recover_pn(0x1FF, 0x81, 1), 0x181)
    c.check("pn recovery, none received", pl.recover_pn(None, 0, 1), 0)
    # §6.2 STREAM example
    st = h("0143e8800fa7d00123456789abcdef0b73656e736f722e74656d700761726368697665")
    c.check("STREAM example encode", pl.enc_stream(1000, 1026000, 0x0123456789ABCDEF,
                                                   b"sensor.temp", b"archive"), st)
    c.check("STREAM example size", len(st), 35)
    fr = pl.decode_frames(st, reply=False)
    c.check("STREAM example decode", fr, [(pl.STREAM, {
        "base_record": 1000, "base_offset": 1026000, "shape": 0x0123456789ABCDEF,
        "source": b"sensor.temp", "input": b"archive"})])
    # §6.10 ACK example
    ack = h("09800f424044d201010a050a")
    c.check("ACK example encode", pl.enc_ack([(999990, 1000000), (999973, 999983)], 1234, True),
            ack)
    fr = pl.decode_frames(ack, reply=True)
    c.check("ACK example decode", fr, [(pl.ACK, {
        "largest": 1000000, "ack_delay_us": 1234, "stream_unknown": True,
        "ranges": [(999990, 1000000), (999973, 999983)]})])
    # §6.11 STORED example
    c.check("STORED example", pl.enc_stored(200, 1024), h("0a40c84400"))
    # §7 record prefixes
    c.check("prefix of 1,024 B record", pl.varint_encode(1024), h("4400"))
    c.check("prefix of 16 MiB record", pl.varint_encode(16 * 1024 * 1024), h("81000000"))
    # §7 offset recovery: exact on (D - 2^31, D + 2^31]
    D = (5 << 32) + 123
    ok = all(pl.recover_offset(D, t & 0xFFFFFFFF) == t
             for t in (D - (1 << 31) + 1, D, D + 1, D + (1 << 31), D - 5, D + 1000))
    c.check("offset recovery window", ok, True)
    # §6 frame sizes of the table
    sizes = {
        "OFFER": len(pl.enc_offer(1, bytes(32))), "RESPONSE": len(pl.enc_response(bytes(16))),
        "CHALLENGE": len(pl.enc_challenge(bytes(16))),
        "ACCEPT": len(pl.enc_accept(1, bytes(4), bytes(32))), "LOST": len(pl.enc_lost(1, 0, 1, bytes(8))),
        "REFUSED": len(pl.enc_refused(1)), "RECORDS head": len(pl.enc_records(0, b"")),
        "RECORD head": len(pl.enc_record(0, b"")),
    }
    c.check("frame sizes (wire.md §6 table)", sizes, {
        "OFFER": 37, "RESPONSE": 17, "CHALLENGE": 17, "ACCEPT": 41, "LOST": 18, "REFUSED": 2,
        "RECORDS head": 5, "RECORD head": 7})
    # §6.12 LOST datagram size (wire.md says 19 + 18 + 16 = 53 B)
    c.check("LOST datagram size (wire.md §6.12)", 19 + len(pl.enc_lost(1, 0, 1, bytes(8))) + 16, 53)
    # §6 malformed payloads
    for name, payload, reply, reason in [
            ("empty payload", b"", False, "no_frames"),
            ("unknown type 0x0d", h("0d"), False, "unknown_frame"),
            ("ACK in sender packet", h("0900000000"), False, "wrong_direction"),
            ("PING in reply", h("06"), True, "wrong_direction"),
            ("empty RECORDS", h("0200000000"), False, "out_of_range"),
            ("RECORD length 0", h("030000000000000000"), False, "out_of_range"),
            ("RECORD length 1453", h("030000000005ad") + bytes(10), False, "out_of_range"),
            ("OFFER epoch 0", h("0400000000") + bytes(32), False, "out_of_range"),
            ("STORED credit 0", h("0a0000"), True, "out_of_range"),
            ("STORED credit 65537", h("0a00") + pl.varint_encode(65537), True, "out_of_range"),
            ("LOST field 16", h("0b00000010000000000100000000000000000000"), True, "out_of_range"),
            ("REFUSED reason 6", h("0c06"), True, "out_of_range"),
            ("ACK flags bit 1", h("0900000200"), True, "reserved_bit"),
            ("ACK first_range > largest", h("090500000006"), True, "out_of_range"),
            ("ACK range_count 33", h("0905000021"), True, "out_of_range"),
            ("STREAM name length 0", h("01000000000000000000000000"), False, "out_of_range"),
            ("STREAM base_record > base_offset",
             h("01020100000000000000000161 0162".replace(" ", "")), False, "out_of_range"),
            ("STREAM name with newline",
             h("0100000000000000000000010a0162"), False, "out_of_range"),
            ("truncated OFFER", h("0400000001") + bytes(31), False, "truncated")]:
        try:
            pl.decode_frames(payload, reply)
            got = "accepted"
        except pl.Malformed as e:
            got = e.reason
        c.check("frame malformed: " + name, got, reason)
    fr = pl.decode_frames(h("000000060000"), reply=False)
    c.check("PADDING runs count as one step", [t for t, _ in fr], [0, 6, 0])


# Every file of spec/vectors/ and how it is checked; one missing, empty or not listed fails.
VECTOR_FILES = ("keys.txt", "packets.txt", "numbers.txt", "refused.txt")


def check_files(c, vectors, wire_text):
    files = sorted(os.listdir(vectors))
    print("vector files: %s" % ", ".join(files))
    for f in VECTOR_FILES:
        if f not in files:
            c.bad.append("missing " + f)
            print("FAIL  %s is missing" % os.path.join(vectors, f))
    for f in files:
        if f not in VECTOR_FILES:
            c.bad.append("no check for " + f)
            print("FAIL  no check for %s" % os.path.join(vectors, f))
    path = {f: os.path.join(vectors, f) for f in VECTOR_FILES if f in files}
    if "keys.txt" not in path:
        return
    kv = load_keys(path["keys.txt"])
    counts = {"keys.txt": check_keys(c, kv)}
    print("keys.txt: %d lines recomputed" % counts["keys.txt"])
    if "packets.txt" in path:
        counts["packets.txt"] = check_packets(c, kv, load_keys(path["packets.txt"]))
        print("packets.txt: %d packets sealed, opened and decoded" % counts["packets.txt"])
    if "numbers.txt" in path:
        counts["numbers.txt"] = check_numbers(c, kv, load_keys(path["numbers.txt"]))
        print("numbers.txt: %d packets recovered, sealed, opened and decoded"
              % counts["numbers.txt"])
    if "refused.txt" in path:
        counts["refused.txt"] = check_refused(c, kv, load_keys(path["refused.txt"]),
                                              load_titles(path["refused.txt"]), wire_text)
        print("refused.txt: %d replies sealed, opened, decoded and their reasons named"
              % counts["refused.txt"])
    for f, n in counts.items():
        c.check(f + " holds vectors", n > 0, True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vectors", default=DEFAULT_VECTORS)
    ap.add_argument("--wire", default=DEFAULT_WIRE)
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    c = Checker(a.verbose)
    with open(a.wire) as f:
        wire_text = f.read()
    check_files(c, a.vectors, wire_text)
    check_wire_examples(c)
    print("%d checks matched, %d failed" % (c.ok, len(c.bad)))
    if c.bad:
        print("failed: " + "; ".join(c.bad))
    return 0 if not c.bad else 1


if __name__ == "__main__":
    sys.exit(main())
