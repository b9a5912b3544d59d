#!/usr/bin/env python3
"""capture_plain.py: a real capture of pure-link traffic, opened with its key log, written
again as the simulator would write it under the null cipher, for tools/fuzz_seeds.py.

    python3 tools/capture_plain.py CAPTURE.pcap KEYLOG OUT.pcap

CAPTURE is what dumpcap saw on a real socket (Ethernet or raw IP, pcap format), KEYLOG the
PURE_LINK_EPOCH lines of the tool's --keylog.  Each UDP payload is opened as keylog.md says
(tests/interop/pcap_open.py, written from spec/ alone); OUT gets, per packet that opened,
its header and plaintext frames and a zero 16-byte tag, as LINKTYPE_RAW IPv4/UDP with the
capture's timestamps: the frames the real tool sent, in clear, as the fuzz targets take
them.  Packets that do not open are left out (and counted).
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "interop"))
import pcap_open  # noqa: E402
import pl_spec as pl  # noqa: E402

TAG_BYTES = 16


def ipv4_udp(src, dst, payload):
    """A minimal IPv4 + UDP packet (checksums zero: the readers here do not check them)."""
    def addr(text):
        host, port = text.rsplit(":", 1)
        return bytes(int(x) for x in host.split(".")), int(port)
    (sa, sp), (da, dp) = addr(src), addr(dst)
    udp = struct.pack(">HHHH", sp, dp, 8 + len(payload), 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, sa, da)
    return ip + udp


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    capture, keylog, out = sys.argv[1:]
    with open(keylog) as f:
        opener = pcap_open.Opener(pl.parse_keylog(f.read()))
    packets = []
    failed = 0
    for _, ts, linktype, frame, _ in pcap_open.read_pcap(capture):
        ip = pcap_open.ip_payload(linktype, frame)
        udp = pcap_open.udp_of(*ip) if ip else None
        if not isinstance(udp, tuple) or udp[0].startswith("["):
            continue
        src, dst, payload = udp
        try:
            header, _, _, plaintext, _ = opener.open(payload)
        except ValueError:
            failed += 1
            continue
        packets.append((ts, ipv4_udp(src, dst, payload[:header.length] + plaintext + bytes(TAG_BYTES))))
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 101))
        for ts, pkt in packets:
            sec = int(ts)
            f.write(struct.pack("<IIII", sec, int(round((ts - sec) * 1e9)), len(pkt), len(pkt)) + pkt)
    print("capture_plain: %d packets opened and written, %d did not open" % (len(packets), failed))
    return 0 if packets else 1


if __name__ == "__main__":
    sys.exit(main())
