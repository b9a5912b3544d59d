#!/bin/sh
# The independent Python receiver (tests/interop/receiver.py, written from spec/ alone)
# against pure-link send over UDP on loopback: case 'black_hole' of tests/interop/against_send.py
# (a path that stops carrying the real sender's size mid-transfer, spec/protocol.md §5.1).
exec timeout 30 python3 tests/interop/against_send.py --tool "${B:-build}/pure-link" black_hole
