#!/bin/sh
# The independent Python sender (tests/interop/sender.py, written from spec/ alone)
# against pure-link recv over UDP on loopback: case 'sizes' of tests/interop/against_recv.py
# (the datagram size search of spec/protocol.md §5.1).
exec timeout 30 python3 tests/interop/against_recv.py --tool "${B:-build}/pure-link" sizes
