#!/usr/bin/env python3
"""Writes the records of `pure-link send --generate COUNT --size SIZE` (plr_check.expected:
the same bytes) to stdout for `pure-link send --framed`, each as a 4-byte big-endian length
and its bytes: at once up to record number GATE, read from GATE_FILE (a missing or empty
file: 0), and past it TRICKLE_PER_S records a second (GATE_FILE re-read at every step).  A
sender the test means to stop mid-transfer then cannot have sent everything before the test
acts, however loaded the machine, and still has records on their way when it is stopped; a
test raises the gate to let it go on at full speed.  Exits quietly when the reader goes away.

    gen_gated.py COUNT SIZE GATE_FILE
"""
import os, struct, sys, time

TRICKLE_PER_S = 1000
STEP_S = 0.01

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plr_check import expected

def gate(path):
    try:
        with open(path) as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0

def main():
    count, size, gate_file = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    out = sys.stdout.buffer
    i, limit = 0, 0
    try:
        while i < count:
            if i >= limit:
                out.flush()
                limit = min(count, gate(gate_file))
                if i >= limit:
                    time.sleep(STEP_S)
                    limit = min(count, i + int(TRICKLE_PER_S * STEP_S))
            chunk = []
            while i < limit and len(chunk) < 1000:
                chunk.append(struct.pack(">I", size) + expected(i, size))
                i += 1
            out.write(b"".join(chunk))
        out.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # no second error at exit

if __name__ == "__main__":
    main()
