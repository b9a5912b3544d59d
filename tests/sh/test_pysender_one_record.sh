#!/bin/sh
# The independent Python sender (tests/interop/sender.py, written from spec/ alone)
# against pure-link recv over UDP on loopback: case 'one_record' of tests/interop/against_recv.py
# (the packet of epoch 1 at the ACCEPT, spec/protocol.md §4.2 "the proof comes at once").
exec timeout 30 python3 tests/interop/against_recv.py --tool "${B:-build}/pure-link" one_record
