#!/bin/sh
# The independent Python receiver (tests/interop/receiver.py, written from spec/ alone)
# against pure-link send over UDP on loopback: case 'sizes' of tests/interop/against_send.py
# (every datagram size the real sender's search settles on, spec/protocol.md §5.1).
exec timeout 30 python3 tests/interop/against_send.py --tool "${B:-build}/pure-link" sizes
