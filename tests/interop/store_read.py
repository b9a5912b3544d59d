"""store_read.py -- reads the receiver's record store as shims/store/STORE.md documents it
(the `.plr` record files of an input's directory), for the interop tests.

Only the documented format is used: a 192-byte header (magic PLRECS1\\n, header bytes,
flags, the sender's public key, source and input names, CRC32C), then frames (tag PLF1,
length, run, record number, CRC32C of bytes 0..23 and the record, the record), all
little-endian.
"""

import os
import struct


def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_T = _crc32c_table()


def crc32c(data, crc=0):
    """CRC32C (Castagnoli), reflected, init and final xor 0xffffffff."""
    c = crc ^ 0xFFFFFFFF
    t = _T
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


CRC_CHECK_MOST = 64 * 1024     # frames larger than this are compared, not CRC-checked
                               # (pure-Python CRC32C runs at a few MB/s)


def read_plr(path):
    """Returns (header dict, [(run, number, bytes)]).  Raises ValueError on a bad file;
    a short or bad final frame ends the list (STORE.md recovery rule: such a tail was
    never acknowledged), reported in header['tail_cut']."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 192 or data[:8] != b"PLRECS1\n":
        raise ValueError("%s: not a record file" % path)
    hbytes, flags = struct.unpack_from("<II", data, 8)
    if hbytes != 192:
        raise ValueError("%s: header bytes %d" % (path, hbytes))
    if crc32c(data[:188]) != struct.unpack_from("<I", data, 188)[0]:
        raise ValueError("%s: header CRC" % path)
    key = data[16:48]
    sl = data[48]
    il = data[113]
    hdr = {"key": key, "source": data[49:49 + sl], "input": data[114:114 + il],
           "flags": flags, "tail_cut": 0, "crc_checked": 0}
    frames = []
    pos = 192
    while pos < len(data):
        if pos + 28 > len(data) or data[pos:pos + 4] != b"PLF1":
            hdr["tail_cut"] = len(data) - pos
            break
        ln, run, num, crc = struct.unpack_from("<IQQI", data, pos + 4)
        if pos + 28 + ln > len(data):
            hdr["tail_cut"] = len(data) - pos
            break
        rec = data[pos + 28:pos + 28 + ln]
        if ln <= CRC_CHECK_MOST:
            if crc32c(rec, crc32c(data[pos:pos + 24])) != crc:
                hdr["tail_cut"] = len(data) - pos
                break
            hdr["crc_checked"] += 1
        frames.append((run, num, rec))
        pos += 28 + ln
    return hdr, frames


def read_input_dir(d):
    """Every .plr file of an input directory: {file name: (header, frames)}."""
    out = {}
    for name in sorted(os.listdir(d)):
        if name.endswith(".plr"):
            out[name] = read_plr(os.path.join(d, name))
    return out


def store_file_name(sender_public, source):
    """STORE.md: <first 24 hex digits of the key>_<source, bytes outside A-Za-z0-9._-
    as %XX>.plr"""
    ok = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
    src = "".join(chr(b) if b in ok else "%%%02X" % b for b in source)
    return sender_public.hex()[:24] + "_" + src + ".plr"
