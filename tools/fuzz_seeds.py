#!/usr/bin/env python3
"""fuzz_seeds.py: seed inputs for the fuzz targets (tests/fuzz/) from simulator captures.

    python3 tools/fuzz_seeds.py OUT CAPTURE.pcap...

The captures come from `pure-link-sim SCENARIO --set 'crypto: null' --pcap F`, so payloads
are the frames in clear (the null cipher only appends a checksum tag).  Written under OUT:
  codec/     each distinct datagram, as it was on the wire;
  endpoint/  scripts of SCRIPT_DATAGRAMS consecutive datagrams of both directions, in
             fuzz_endpoint's format ([u8 op][u16 len][bytes]; op bit 0: a reply, bits 1-7:
             milliseconds since the previous one);
  sequence/  scripts of the frames of SCRIPT_DATAGRAMS consecutive sender packets, in
             fuzz_sequence's format (op bits 2-7: milliseconds; bits 0-1: 0, the next
             packet number).
The fuzzers' own keys differ from the simulator's, so the endpoint scripts' headers are
starting points for mutation; fuzz_sequence writes its own headers and takes the frames as
they are.  tests/fuzz/seed.sh then minimises everything into tests/fuzz/corpus/.
"""
import hashlib
import os
import struct
import sys

SCRIPT_DATAGRAMS = 8      # datagrams per endpoint/sequence script
SCRIPTS_PER_CAPTURE = 64  # scripts taken from each capture, spread over it
CODEC_PER_CAPTURE = 512   # datagrams taken from each capture, spread over it
FLAG_REPLY = 0x80         # spec/wire.md: header flags
SENDER_FIXED, TAG = 14, 16


def datagrams(path):
    """(time_ns, udp payload) of every packet: pcap, LINKTYPE_RAW, IPv4 + UDP."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack_from("<I", data, 0)[0]
    scale = 1 if magic == 0xA1B23C4D else 1000
    at, out = 24, []
    while at + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack_from("<IIII", data, at)
        pkt = data[at + 16:at + 16 + incl]
        at += 16 + incl
        ihl = (pkt[0] & 0x0F) * 4
        out.append((sec * 10**9 + frac * scale, pkt[ihl + 8:]))
    return out


def script(entries):
    return b"".join(struct.pack(">BH", op, len(b)) + b for op, b in entries)


def spread(items, n):
    step = max(1, len(items) // n)
    return items[::step][:n]


def write(out, target, blob):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(blob).hexdigest()), "wb") as f:
        f.write(blob)


def seeds(out, path):
    grams = [(t, d) for t, d in datagrams(path) if len(d) >= SENDER_FIXED + 1 + TAG]
    for _, d in spread(grams, CODEC_PER_CAPTURE):
        write(out, "codec", d)
    starts = spread(range(0, max(1, len(grams) - SCRIPT_DATAGRAMS)), SCRIPTS_PER_CAPTURE)
    for s in starts:
        window, prev = grams[s:s + SCRIPT_DATAGRAMS], grams[s][0]
        ends, frames = [], []
        for t, d in window:
            ms, prev = (t - prev) // 10**6, t
            reply = d[1] & FLAG_REPLY != 0
            ends.append(((min(ms, 127) << 1) | reply, d))
            if not reply:
                head = SENDER_FIXED + ((d[1] >> 4) & 3) + 1
                frames.append((min(ms, 63) << 2, d[head:-TAG]))
        write(out, "endpoint", script(ends))
        if frames:
            write(out, "sequence", script(frames))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    for path in sys.argv[2:]:
        seeds(sys.argv[1], path)


if __name__ == "__main__":
    main()
