#!/usr/bin/env python3
"""Reads the receiver's record files (shims/store/STORE.md) of one input directory and checks
what `pure-link send --generate COUNT --size SIZE` sent: every record of the run stored
exactly once, byte for byte, and no frame cut short.  Prints one summary line; exit 1 on
the first failure.

    plr_check.py DIR COUNT SIZE [--runs N]   (N: runs expected, default 1)
    plr_check.py DIR COUNT SIZE --resumed    (any number of runs, numbered in one input:
                                              records 0..COUNT-1 over all runs, each once)
    plr_check.py DIR COUNT SIZE DIR COUNT SIZE ...   (several directories, one run each)
    pure-link cat --framed ... | plr_check.py --framed COUNT SIZE
                                             (what cat wrote out: records 0..COUNT-1 by the
                                              number each starts with, each once)
"""
import glob, os, struct, sys

def crc32c(data, crc=0):
    crc ^= 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 & -(crc & 1))
    return crc ^ 0xffffffff

CRC_FRAME_MOST = 65536

PATTERN = bytes(range(256)) * (16 * 1024 * 1024 // 256 + 2)

def expected(i, size):
    """Record i of the generator: i in 8 bytes little-endian, then byte k = i * 131 + k."""
    head = struct.pack("<Q", i)[:min(8, size)]
    start = (i * 131 + 8) & 0xff
    return head + PATTERN[start:start + max(0, size - 8)]

def check(d, count, size, runs_want, resumed=False):
    seen = {}
    files = [d] if os.path.isfile(d) else glob.glob(os.path.join(d, "*.plr"))  # DIR or one FILE
    if not files:
        sys.exit("no record file in %s" % d)
    checked_crc = 0
    for path in files:
        data = open(path, "rb").read()
        if data[:8] != b"PLRECS1\n":
            sys.exit("%s: not a record file" % path)
        at = struct.unpack_from("<I", data, 8)[0]
        while at < len(data):
            if len(data) - at < 28 or data[at:at + 4] != b"PLF1":
                sys.exit("%s: a frame cut short or broken at offset %d" % (path, at))
            n, run, rec, crc = struct.unpack_from("<IQQI", data, at + 4)
            body = data[at + 28:at + 28 + n]
            if len(body) != n:
                sys.exit("%s: a frame cut short at offset %d" % (path, at))
            # CRC of a sample of small frames (pure Python: a 16 MiB record would take a minute;
            # its bytes are compared below all the same)
            if checked_crc < 50 and n <= CRC_FRAME_MOST and crc32c(data[at:at + 24] + body) != crc:
                sys.exit("%s: CRC of the frame at %d" % (path, at))
            checked_crc += 1
            seen.setdefault(run, []).append((rec, body))
            at += 28 + n
    if resumed:
        nums = sorted(r for recs in seen.values() for r, _ in recs)
        for run, recs in seen.items():
            for rec, body in recs:
                if body != expected(rec, size):
                    sys.exit("run %016x record %d: bytes differ" % (run, rec))
        if len(nums) != len(set(nums)):
            sys.exit("%d records stored twice (over %d runs)" % (len(nums) - len(set(nums)), len(seen)))
        if nums != list(range(count)):
            missing = sorted(set(range(count)) - set(nums))
            sys.exit("%d records missing (first %s), %d stored" % (len(missing), missing[:5], len(nums)))
        print("store: %d records in %d runs, each once, bytes as sent" % (len(nums), len(seen)))
        return
    if len(seen) != runs_want:
        sys.exit("%d runs in the store, want %d" % (len(seen), runs_want))
    total = 0
    for run, recs in seen.items():
        nums = sorted(r for r, _ in recs)
        if len(nums) != len(set(nums)):
            dup = len(nums) - len(set(nums))
            sys.exit("run %016x: %d records stored twice" % (run, dup))
        for rec, body in recs:
            if body != expected(rec, size):
                sys.exit("run %016x record %d: bytes differ" % (run, rec))
        total += len(nums)
        if runs_want == 1 and nums != list(range(count)):
            missing = sorted(set(range(count)) - set(nums))
            sys.exit("run %016x: %d records missing (first %s)" % (run, len(missing), missing[:5]))
    print("store: %d records in %d runs, each once, bytes as sent" % (total, len(seen)))

def check_framed(stream, count, size):
    """cat --framed's output (a 4-byte big-endian length, then the bytes): every record the
    generator made, each once, byte for byte."""
    data = stream.read()
    seen = [0] * count
    at = 0
    while at < len(data):
        n = struct.unpack_from(">I", data, at)[0]
        body = data[at + 4:at + 4 + n]
        i = struct.unpack("<Q", body[:8])[0] if len(body) >= 8 else -1
        if not 0 <= i < count or body != expected(i, size):
            sys.exit("cat: a record that was not sent (%d B at byte %d of its output)" % (n, at))
        seen[i] += 1
        at += 4 + n
    twice, missing = sum(1 for k in seen if k > 1), seen.count(0)
    if twice or missing:
        sys.exit("cat: %d records twice, %d missing (first %s)" % (twice, missing, seen.index(0) if missing else "-"))
    print("cat: %d records, each once, bytes as sent" % count)

def main():
    args = sys.argv[1:]
    if args[0] == "--framed":
        check_framed(sys.stdin.buffer, int(args[1]), int(args[2]))
        return
    if len(args) > 3 and args[3] == "--resumed":
        check(args[0], int(args[1]), int(args[2]), 0, resumed=True)
        return
    if len(args) > 3 and args[3] == "--runs":
        check(args[0], int(args[1]), int(args[2]), int(args[4]))
        return
    while args:   # DIR COUNT SIZE, as many times as there are directories (one process)
        check(args[0], int(args[1]), int(args[2]), 1)
        args = args[3:]

if __name__ == "__main__":  # tests/sh/gen_gated.py imports expected()
    main()
