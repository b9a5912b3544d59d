#!/bin/sh
# The independent Python receiver (tests/interop/receiver.py, written from spec/ alone)
# against pure-link send --epoch-packets 32 over UDP on loopback: case 'epochs' of
# tests/interop/against_send.py (at least 16 epoch changes, every record once).
exec timeout 30 python3 tests/interop/against_send.py --tool "${B:-build}/pure-link" epochs
