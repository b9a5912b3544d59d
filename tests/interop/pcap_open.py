#!/usr/bin/env python3
"""pcap_open.py -- open the pure-link version 1 packets of a capture with a key log,
written from spec/ alone (wire.md, crypto.md, keylog.md).  Codec and keys: pl_spec.py.

Usage: python3 tests/interop/pcap_open.py --pcap FILE --keylog FILE [--json] [-v]

Reads a classic pcap (either byte order, microsecond or nanosecond magic) with link type
1 (Ethernet), 101 (LINKTYPE_RAW), 228 (IPv4) -- and also 0 (BSD loopback), 113 (Linux
SLL), 229 (IPv6), 276 (Linux SLL2) -- and takes every UDP payload as a pure-link packet.
Each is opened per keylog.md "Opening a captured packet": sender packets with the data key,
replies with the reply key of the reply run in their header.  Exit 0 only if every packet
opened.
"""

import argparse
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pl_spec as pl  # noqa: E402


# --------------------------------------------------------------------------------------
# pcap reading (not part of pure-link)
# --------------------------------------------------------------------------------------
class PcapError(Exception):
    pass


def read_pcap(path):
    """Yields (index, timestamp, link_type, frame bytes, truncated)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise PcapError("file shorter than a pcap header")
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        e = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        e = ">"
    elif magic == b"\x0a\x0d\x0d\x0a":
        raise PcapError("pcapng is not supported; convert with: editcap -F pcap IN OUT")
    else:
        raise PcapError("not a pcap file (magic %s)" % magic.hex())
    nano = magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    _, _, _, _, _, linktype = struct.unpack(e + "HHiIII", data[4:24])
    linktype &= 0x0FFFFFFF          # upper bits may carry FCS info
    pos, i = 24, 0
    while pos + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack(e + "IIII", data[pos:pos + 16])
        pos += 16
        frame = data[pos:pos + incl]
        pos += incl
        ts = sec + frac / (1e9 if nano else 1e6)
        yield i, ts, linktype, frame, incl < orig or len(frame) < incl
        i += 1


def ip_payload(linktype, frame):
    """Returns (ip version, ip packet bytes) or None for frames that carry no IP."""
    if linktype == 1:                      # Ethernet II, with optional VLAN tags
        if len(frame) < 14:
            return None
        et = struct.unpack(">H", frame[12:14])[0]
        off = 14
        while et in (0x8100, 0x88A8) and len(frame) >= off + 4:
            et = struct.unpack(">H", frame[off + 2:off + 4])[0]
            off += 4
        ip = frame[off:]
        return {0x0800: (4, ip), 0x86DD: (6, ip)}.get(et)
    if linktype in (101, 228, 229):        # raw IP
        if not frame:
            return None
        v = frame[0] >> 4
        return (v, frame) if v in (4, 6) else None
    if linktype == 0:                      # BSD loopback: 4 B family in host order
        if len(frame) < 4:
            return None
        fam = struct.unpack("<I", frame[:4])[0]
        if fam > 0xFFFF:
            fam = struct.unpack(">I", frame[:4])[0]
        v = 4 if fam == 2 else 6 if fam in (10, 24, 28, 30) else None
        return (v, frame[4:]) if v else None
    if linktype == 113:                    # Linux cooked (SLL)
        if len(frame) < 16:
            return None
        et = struct.unpack(">H", frame[14:16])[0]
        return {0x0800: (4, frame[16:]), 0x86DD: (6, frame[16:])}.get(et)
    if linktype == 276:                    # Linux cooked v2 (SLL2)
        if len(frame) < 20:
            return None
        et = struct.unpack(">H", frame[0:2])[0]
        return {0x0800: (4, frame[20:]), 0x86DD: (6, frame[20:])}.get(et)
    return None


def udp_of(version, ip):
    """Returns (src, dst, udp payload), 'fragment', or None (not UDP)."""
    if version == 4:
        if len(ip) < 20:
            return None
        ihl = (ip[0] & 0x0F) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        frag = struct.unpack(">H", ip[6:8])[0]
        if ip[9] != 17:
            return None
        if frag & 0x3FFF:
            return "fragment"
        src = "%d.%d.%d.%d" % tuple(ip[12:16])
        dst = "%d.%d.%d.%d" % tuple(ip[16:20])
        ip = ip[:total] if total >= ihl else ip
        udp = ip[ihl:]
    else:
        if len(ip) < 40:
            return None
        nxt = ip[6]
        plen = struct.unpack(">H", ip[4:6])[0]
        src = "[%s]" % ip[8:24].hex()
        dst = "[%s]" % ip[24:40].hex()
        udp = ip[40:40 + plen]
        if nxt != 17:
            return None                    # extension headers are not followed
    if len(udp) < 8:
        return None
        # (a UDP header cut short is not a packet we can take)
    sport, dport, ulen = struct.unpack(">HHH", udp[:6])
    payload = udp[8:ulen] if 8 <= ulen <= len(udp) else udp[8:]
    return ("%s:%d" % (src, sport), "%s:%d" % (dst, dport), payload)


# --------------------------------------------------------------------------------------
# Opening (keylog.md "Opening a captured packet")
# --------------------------------------------------------------------------------------
class Opener:
    def __init__(self, keylog_entries):
        # run -> epoch -> list of (sender_public, receiver_public, secret), no duplicates
        self.keys = {}
        for e in keylog_entries:
            lst = self.keys.setdefault(e["run"], {}).setdefault(e["epoch"], [])
            item = (e["sender_public"], e["receiver_public"], e["secret"])
            if item not in lst:
                lst.append(item)
        self.last_epoch = {}       # run -> last epoch seen (either direction)
        self.largest = {}          # (run, 'S') or (run, 'R', reply_run) -> largest pn
        self._cache = {}           # derived PacketKeys

    def _key(self, reply, spub, rpub, secret, run, reply_run, epoch):
        ck = (reply, spub, rpub, secret, run, reply_run, epoch)
        k = self._cache.get(ck)
        if k is None:
            if reply:
                k = pl.reply_key(secret, spub, rpub, run, reply_run, epoch)
            else:
                k = pl.data_key(secret, spub, rpub, run, epoch)
            self._cache[ck] = k
        return k

    def open(self, dgram):
        """Returns (header, epoch, pn, plaintext, how) or raises ValueError(reason).
        how = 'spec' when the spec's recovery rules found the key and number, or
        'fallback' when another candidate epoch / packet number had to be tried."""
        try:
            h = pl.parse_header(dgram)
        except pl.Malformed as e:
            raise ValueError("malformed header: " + e.reason)
        per_run = self.keys.get(h.run)
        if not per_run:
            raise ValueError("no key log lines for run %016x" % h.run)
        space = (h.run, "R", h.reply_run) if h.reply else (h.run, "S")
        largest = self.largest.get(space)
        body = dgram[h.length:]

        # Step 2: the epoch nearest the last seen for the run; the pn nearest the last
        # seen in that run and direction (per reply run for replies).
        x = self.last_epoch.get(h.run, 0)
        primary_epoch = pl.recover_epoch(h.E, x)
        primary_pn = pl.recover_pn(largest, h.pn_trunc, h.pn_len)
        # Fallbacks (not in the spec): every logged epoch with this field, and the
        # neighbouring packet-number candidates.
        epochs = [primary_epoch] + sorted(
            (e for e in per_run if e != primary_epoch and pl.epoch_field(e) == h.E),
            key=lambda e: abs(e - primary_epoch))
        win = 1 << (8 * h.pn_len)
        pns = [primary_pn] + [p for p in (primary_pn - win, primary_pn + win) if p >= 0]
        for ei, epoch in enumerate(epochs):
            for pi, pn in enumerate(pns):
                for spub, rpub, secret in per_run.get(epoch, []):
                    if not h.reply and pl.key_id(spub) != h.key_id:
                        continue
                    key = self._key(h.reply, spub, rpub, secret, h.run, h.reply_run, epoch)
                    pt = key.open(h.raw, body, pn)
                    if pt is not None:
                        self.last_epoch[h.run] = epoch
                        if largest is None or pn > largest:
                            self.largest[space] = pn
                        return h, epoch, pn, pt, ("spec" if ei == 0 and pi == 0
                                                  else "fallback")
        if primary_epoch not in per_run:
            raise ValueError("no secret for run %016x epoch %d" % (h.run, primary_epoch))
        raise ValueError("did not authenticate (run %016x epoch %d pn %d)" % (
            h.run, primary_epoch, primary_pn))


def main():
    ap = argparse.ArgumentParser(description="open pure-link v1 packets of a pcap")
    ap.add_argument("--pcap", required=True)
    ap.add_argument("--keylog", required=True)
    ap.add_argument("--json", action="store_true", help="print one JSON object last")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per packet")
    a = ap.parse_args()

    with open(a.keylog) as f:
        entries = pl.parse_keylog(f.read())
    opener = Opener(entries)

    packets = opened = failed = 0
    by_dir = {"sender": {"packets": 0, "opened": 0, "failed": 0},
              "reply": {"packets": 0, "opened": 0, "failed": 0}}
    by_epoch = {}
    frames = {}
    malformed_payloads = {}
    fallbacks = 0
    skipped = {"not_ip_udp": 0, "ip_fragment": 0}
    failures = {}
    truncated_frames = 0
    try:
        for i, ts, lt, frame, trunc in read_pcap(a.pcap):
            ipp = ip_payload(lt, frame)
            if ipp is None:
                skipped["not_ip_udp"] += 1
                continue
            u = udp_of(*ipp)
            if u is None:
                skipped["not_ip_udp"] += 1
                continue
            if u == "fragment":
                skipped["ip_fragment"] += 1
                continue
            src, dst, payload = u
            packets += 1
            direction = "reply" if len(payload) > 1 and payload[1] & 0x80 else "sender"
            by_dir[direction]["packets"] += 1
            if trunc:
                truncated_frames += 1
            try:
                h, epoch, pn, pt, how = opener.open(payload)
            except ValueError as e:
                failed += 1
                by_dir[direction]["failed"] += 1
                reason = str(e).split(" (")[0].split(" run ")[0]
                failures[reason] = failures.get(reason, 0) + 1
                if a.verbose:
                    print("#%d %s -> %s %d B: FAILED %s" % (i, src, dst, len(payload), e))
                continue
            opened += 1
            by_dir[direction]["opened"] += 1
            if how != "spec":
                fallbacks += 1
            k = str(epoch)
            by_epoch[k] = by_epoch.get(k, 0) + 1
            try:
                fl = pl.decode_frames(pt, h.reply)
            except pl.Malformed as e:
                malformed_payloads[e.reason] = malformed_payloads.get(e.reason, 0) + 1
                fl = []
            for t, _ in fl:
                name = pl.FRAME_NAMES[t]
                frames[name] = frames.get(name, 0) + 1
            if a.verbose:
                print("#%d %s -> %s %d B: %s run %016x%s epoch %d pn %d%s: %s" % (
                    i, src, dst, len(payload), "reply" if h.reply else "sender", h.run,
                    (" reply_run %016x" % h.reply_run) if h.reply else "", epoch, pn,
                    "" if how == "spec" else " [fallback]",
                    " ".join(pl.FRAME_NAMES[t] for t, _ in fl) or "(malformed)"))
    except PcapError as e:
        sys.stderr.write("pcap_open: %s\n" % e)
        return 2

    print("packets: %d  opened: %d  failed: %d" % (packets, opened, failed))
    for d in ("sender", "reply"):
        s = by_dir[d]
        print("  %-6s packets %d, opened %d, failed %d" % (d, s["packets"], s["opened"],
                                                          s["failed"]))
    print("by epoch: " + ", ".join("%s: %d" % (k, v) for k, v in
                                   sorted(by_epoch.items(), key=lambda kv: int(kv[0]))))
    print("frames: " + ", ".join("%s: %d" % (k, v) for k, v in sorted(frames.items())))
    if malformed_payloads:
        print("malformed payloads (opened, frames rejected): %s" % malformed_payloads)
    if failures:
        print("failures: %s" % failures)
    if fallbacks:
        print("opened only with a fallback candidate (not the spec's nearest rule): %d"
              % fallbacks)
    if truncated_frames:
        print("frames cut short by the capture's snap length: %d" % truncated_frames)
    if any(skipped.values()):
        print("skipped (not pure-link packets): %s" % skipped)
    if a.json:
        print(json.dumps({
            "packets": packets, "opened": opened, "failed": failed,
            "by_epoch": dict(sorted(by_epoch.items(), key=lambda kv: int(kv[0]))),
            "frames": dict(sorted(frames.items())),
            "by_direction": by_dir, "fallback_opens": fallbacks,
            "malformed_payloads": malformed_payloads,
        }, sort_keys=False))
    return 0 if packets > 0 and failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
